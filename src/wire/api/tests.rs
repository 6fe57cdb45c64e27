//! The payloads' bytes, round trips and strict decoders, against the bytes agentx writes.

use super::*;
use crate::wire::raw::RawObject;

fn bytes<'a, T: WireValue<'a>>(t: &T) -> String {
    let mut out = Vec::new();
    t.encode(&mut out);
    String::from_utf8(out).expect("UTF-8")
}

/// The exact bytes agentx wrote by hand before these types (member order, `null`s,
/// integers), and the strict decoder reading each back to the same value.
#[test]
fn stream_payloads_keep_their_bytes_and_round_trip() {
    let message = ApiMessage::started("msg_1", "m");
    let cases = [
        (
            StreamPayload::MessageStart(message),
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}"#,
        ),
        (
            StreamPayload::ContentBlockStart {
                index: 0,
                content_block: ApiBlock::Text("".into()),
            },
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
        (
            StreamPayload::ContentBlockStart {
                index: 2,
                content_block: ApiBlock::ToolUse {
                    id: "tu_1".into(),
                    name: "Read".into(),
                    input: RawObject::empty(),
                },
            },
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"tu_1","name":"Read","input":{}}}"#,
        ),
        (
            StreamPayload::ContentBlockDelta {
                index: 0,
                delta: BlockDelta::Text("a \"q\"\u{2028}".into()),
            },
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a \"q\"\u2028"}}"#,
        ),
        (
            StreamPayload::ContentBlockDelta {
                index: 1,
                delta: BlockDelta::InputJson("{\"p\":".into()),
            },
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"p\":"}}"#,
        ),
        (
            StreamPayload::ContentBlockStop { index: 4294967295 },
            r#"{"type":"content_block_stop","index":4294967295}"#,
        ),
        (
            StreamPayload::MessageDelta {
                stop_reason: "end_turn".into(),
                stop_sequence: None,
                output_tokens: 7,
            },
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}"#,
        ),
        (StreamPayload::MessageStop, r#"{"type":"message_stop"}"#),
    ];
    for (typed, want) in cases {
        assert_eq!(bytes(&typed), want);
        let raw = RawJson::parse(want.as_bytes()).expect("valid");
        assert_eq!(StreamPayload::parse(&raw).expect("strict"), typed);
        // A typed payload equals its decoded form.
        assert_eq!(ApiPayload::Typed(typed), ApiPayload::Raw(raw));
    }
}

#[test]
fn assistant_message_tool_result_and_usage_keep_their_bytes() {
    let m = ApiMessage {
        id: "msg_1".into(),
        model: "m".into(),
        content: vec![ApiBlock::ToolUse {
            id: "tu".into(),
            name: "Bash".into(),
            input: RawObject(RawJson::parse(br#"{"command":"ls"}"#).unwrap()),
        }],
        stop_reason: None,
        stop_sequence: None,
        usage: None,
    };
    let want = r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"tu","name":"Bash","input":{"command":"ls"}}],"stop_reason":null,"stop_sequence":null}"#;
    assert_eq!(bytes(&m), want);
    let raw = RawJson::parse(want.as_bytes()).unwrap();
    assert_eq!(ApiMessage::parse(&raw).unwrap(), m);

    let t = ToolResultBlock {
        tool_use_id: "tu".into(),
        content: ToolResultContent::Blocks(vec!["out".into(), "ctx".into()]),
        is_error: false,
    };
    let want = r#"{"type":"tool_result","tool_use_id":"tu","content":[{"type":"text","text":"out"},{"type":"text","text":"ctx"}],"is_error":false}"#;
    assert_eq!(bytes(&t), want);
    assert_eq!(
        ToolResultBlock::parse(&RawJson::parse(want.as_bytes()).unwrap()).unwrap(),
        t
    );
    let t = ToolResultBlock {
        tool_use_id: "tu".into(),
        content: ToolResultContent::Text("denied".into()),
        is_error: true,
    };
    assert_eq!(
        bytes(&t),
        r#"{"type":"tool_result","tool_use_id":"tu","content":"denied","is_error":true}"#
    );

    let u = TurnUsage {
        input_tokens: 1,
        output_tokens: 2,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: u64::MAX,
    };
    let want = r#"{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":18446744073709551615}"#;
    assert_eq!(bytes(&u), want);
    assert_eq!(
        TurnUsage::parse(&RawJson::parse(want.as_bytes()).unwrap()).unwrap(),
        u
    );
    assert_eq!(bytes(&TaskStep { step: 3 }), r#"{"step":3}"#);
}

/// The strict decoders are closed: an unknown member, another shape, a wrong type or a
/// missing member is an error naming where.
#[test]
fn strict_decoders_reject_what_agentx_never_writes() {
    for (text, at) in [
        (r#"{"type":"message_stop","x":1}"#, ""),
        (r#"{"type":"ping"}"#, "type"),
        (r#"{"type":"content_block_stop","index":1.0}"#, "index"),
        (r#"{"type":"content_block_stop","index":-1}"#, "index"),
        (r#"{"type":"content_block_stop"}"#, "index"),
        (
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":""}}"#,
            "delta.type",
        ),
        (
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}"#,
            "delta.stop_sequence",
        ),
        (
            r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1,"input_tokens":0}}"#,
            "usage",
        ),
        (r#"[]"#, ""),
    ] {
        let raw = RawJson::parse(text.as_bytes()).unwrap();
        let e = StreamPayload::parse(&raw).expect_err(text);
        assert_eq!(e.path(), at, "{text}");
    }
    let raw = RawJson::parse(
        br#"{"id":"m","type":"message","role":"user","model":"m","content":[],"stop_reason":null,"stop_sequence":null}"#,
    )
    .unwrap();
    assert_eq!(ApiMessage::parse(&raw).unwrap_err().path(), "role");
    let raw = RawJson::parse(
        br#"{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}],"is_error":false}"#,
    )
    .unwrap();
    assert!(ToolResultBlock::parse(&raw).is_err());
}

/// A decoded payload is kept whole (a peer's members survive); `Debug` shows no content.
#[test]
fn decoded_payloads_are_kept_whole_and_debug_hides_them() {
    let doc = crate::json::parse(br#"{"type":"ping","secret":"sk-1"}"#).unwrap();
    let p: ApiPayload<'_, StreamPayload<'_>> = WireValue::decode(doc.root(), &Path::ROOT).unwrap();
    assert_eq!(&*p.to_json(), br#"{"type":"ping","secret":"sk-1"}"#);
    assert!(!format!("{p:?}").contains("sk-1"));
    let typed: ApiPayload<'_, StreamPayload<'_>> = ApiPayload::Typed(StreamPayload::MessageStop);
    assert_eq!(format!("{typed:?}"), "ApiPayload::Typed(..)");
    let doc = crate::json::parse(b"[1]").unwrap();
    assert!(
        <ApiPayload<'_, StreamPayload<'_>> as WireValue<'_>>::decode(doc.root(), &Path::ROOT)
            .is_err()
    );
}
