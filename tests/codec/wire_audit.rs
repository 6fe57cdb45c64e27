//! The audit's decode fixes, each stated as the rule it enforces:
//! WIRE-016 (closed `apiKeySource`), WIRE-023 (the selected-provider members of `system/init`),
//! the success result's `modelUsage` and `permission_denials`, WIRE-024 (one effective
//! default, a one-element `models` naming the selected provider), WIRE-022 (no inline media
//! bytes, `data:` URLs or non-content-addressed storage ids in output user records), WIRE-019
//! (a commit's manifest carries the record's own `attachment_id`), PROFILE §2b (a duplicate
//! member classified by the rejected line's top-level `type`), and PROFILE §8
//! (`set_permission_mode` accepts any payload).

use agentx_wire::json::{self, Parser};
use agentx_wire::wire::initialize::InitializeResponse;
use agentx_wire::wire::{
    classify_rejected_line, ControlRequestBody, Error, ErrorKind, InputRecord, OutputRecord,
    RejectedLineClass,
};

const U1: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
const U2: &str = "d2de22da-533a-4f64-b24b-0d87e1e527f4";
const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn output(line: &str) -> Result<OutputRecord<'_>, Error> {
    OutputRecord::decode_line(line.as_bytes(), &mut Parser::new())
}

#[track_caller]
fn accept(line: &str) {
    if let Err(e) = output(line) {
        panic!("{line}: {e}");
    }
}

#[track_caller]
fn reject(line: &str, kind: ErrorKind, path: &str, rule: &str) {
    let e = output(line)
        .err()
        .unwrap_or_else(|| panic!("accepted {line}"));
    assert_eq!(
        (e.kind(), e.path(), e.rule()),
        (kind, path, rule),
        "{line}: {e}"
    );
}

fn ids() -> String {
    format!(r#""uuid":"{U1}","session_id":"{U2}""#)
}

// ------------------------------------------------------------------ WIRE-016, WIRE-023

fn init() -> String {
    format!(
        r#"{{"type":"system","subtype":"init","apiKeySource":"user","cwd":"/w","tools":[],"mcp_servers":[],"model":"gpt-5.6-sol","provider":"sol-east","provider_type":"azure_openai","permissionMode":"default",{}}}"#,
        ids()
    )
}

#[test]
fn wire_016_api_key_source_is_the_closed_pair() {
    let line = init();
    accept(&line);
    accept(&line.replace(r#""apiKeySource":"user""#, r#""apiKeySource":"temporary""#));
    for other in ["none", "User", "", "file"] {
        reject(
            &line.replace(
                r#""apiKeySource":"user""#,
                &format!(r#""apiKeySource":"{other}""#),
            ),
            ErrorKind::Invalid,
            "apiKeySource",
            "WIRE-016",
        );
    }
    reject(
        &line.replace(r#""apiKeySource":"user""#, r#""apiKeySource":1"#),
        ErrorKind::WrongType,
        "apiKeySource",
        "WIRE-016",
    );
    // The type lives in `wire`; `encode` keeps a re-export.
    let a: agentx_wire::wire::ApiKeySource = agentx_wire::encode::ApiKeySource::Temporary;
    assert_eq!(a.as_str(), "temporary");
}

#[test]
fn wire_023_init_requires_provider_provider_type_and_model() {
    let line = init();
    for (member, path) in [
        (r#""provider":"sol-east","#, "provider"),
        (r#""provider_type":"azure_openai","#, "provider_type"),
        (r#""model":"gpt-5.6-sol","#, "model"),
    ] {
        let e = output(&line.replace(member, "")).unwrap_err();
        assert_eq!((e.kind(), e.path()), (ErrorKind::Missing, path), "{e}");
        assert!(
            e.rule().contains("WIRE-023") || path == "model",
            "{}",
            e.rule()
        );
    }
}

fn success() -> String {
    format!(
        r#"{{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"duration_api_ms":1,"num_turns":1,"result":"ok","stop_reason":"end_turn","total_cost_usd":null,"usage":{{}},"modelUsage":{{"m":{{"inputTokens":1,"outputTokens":1,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":null}}}},"permission_denials":[],{}}}"#,
        ids()
    )
}

#[test]
fn success_result_requires_model_usage_and_permission_denials() {
    let line = success();
    accept(&line);
    let no_usage = line.replace(
        r#""modelUsage":{"m":{"inputTokens":1,"outputTokens":1,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":null}},"#,
        "",
    );
    reject(
        &no_usage,
        ErrorKind::Missing,
        "modelUsage",
        "Core output records: success result",
    );
    reject(
        &line.replace(r#""permission_denials":[],"#, ""),
        ErrorKind::Missing,
        "permission_denials",
        "Core output records: success result",
    );
    // An error result still needs neither (the input-error result of PROFILE §8).
    let error = format!(
        r#"{{"type":"result","subtype":"error_during_execution","is_error":true,"duration_ms":0,"duration_api_ms":0,"num_turns":0,"total_cost_usd":null,"usage":{{}},"errors":["input error: x"],{}}}"#,
        ids()
    );
    accept(&error);
}

// ------------------------------------------------------------------ WIRE-024

fn descriptor(id: &str, default: bool, selected: bool) -> String {
    format!(
        r#"{{"value":"{id}","id":"{id}","providerType":"azure_openai","model":"gpt-5.6-sol","displayName":"{id} (gpt-5.6-sol)","description":"d","default":{default},"selected":{selected},"supportsEffort":false,"supportedReasoningEfforts":[],"defaultReasoningEffort":null,"reasoning":{{"supported":false,"efforts":[],"defaultEffort":null}}}}"#
    )
}

fn model(provider: &str) -> String {
    format!(
        r#"{{"value":"gpt-5.6-sol","displayName":"gpt-5.6-sol","description":"d","provider":"{provider}","providerType":"azure_openai"}}"#
    )
}

fn initialize(models: &str, providers: &str) -> String {
    format!(
        r#"{{"commands":[],"agents":[],"output_style":"default","available_output_styles":["default"],"models":[{models}],"providers":[{providers}],"account":{{"apiKeySource":"user"}},"pid":1}}"#
    )
}

fn decode_initialize(text: &str) -> Result<(), Error> {
    let doc = json::parse(text.as_bytes()).unwrap();
    InitializeResponse::decode_checked(doc.root(), &agentx_wire::wire::Path::ROOT).map(|_| ())
}

#[test]
fn wire_024_one_effective_default_and_one_model_naming_the_selection() {
    let two = format!(
        "{},{}",
        descriptor("a", true, false),
        descriptor("b", false, true)
    );
    decode_initialize(&initialize(&model("b"), &two)).expect("valid catalog");
    // No default at all is valid (a multi-provider registry need not declare one).
    let none = format!(
        "{},{}",
        descriptor("a", false, false),
        descriptor("b", false, true)
    );
    decode_initialize(&initialize(&model("b"), &none)).expect("no default");
    let both = format!(
        "{},{}",
        descriptor("a", true, false),
        descriptor("b", true, true)
    );
    let e = decode_initialize(&initialize(&model("b"), &both)).unwrap_err();
    assert_eq!(
        (e.kind(), e.path(), e.rule()),
        (ErrorKind::Invalid, "providers", "WIRE-024"),
        "{e}"
    );
    for models in [
        String::new(),
        format!("{},{}", model("b"), model("b")),
        model("a"),
        r#"{"value":"gpt-5.6-sol","displayName":"gpt-5.6-sol","description":"d"}"#.to_string(),
    ] {
        let e = decode_initialize(&initialize(&models, &two)).unwrap_err();
        assert_eq!(
            (e.kind(), e.path(), e.rule()),
            (ErrorKind::Invalid, "models", "WIRE-024"),
            "{models}: {e}"
        );
    }
    // WIRE-016 also holds in the account object.
    let bad_account = initialize(&model("b"), &two)
        .replace(r#""apiKeySource":"user""#, r#""apiKeySource":"none""#);
    let e = decode_initialize(&bad_account).unwrap_err();
    assert_eq!(
        (e.kind(), e.path(), e.rule()),
        (ErrorKind::Invalid, "account.apiKeySource", "WIRE-016"),
        "{e}"
    );
}

// ------------------------------------------------------------------ WIRE-022

fn user_output(blocks: &str, replay: bool) -> String {
    let replay = if replay { r#","isReplay":true"# } else { "" };
    format!(
        r#"{{"type":"user","message":{{"role":"user","content_version":1,"content":[{blocks}]}},"parent_tool_use_id":null,{}{replay}}}"#,
        ids()
    )
}

fn manifest(storage_id: &str) -> String {
    format!(
        r#"{{"type":"attachment_ref","attachment_id":"att_1","kind":"image","name":"a.png","mime_type":"image/png","size_bytes":3,"sha256":"{SHA}","storage_id":"{storage_id}"}}"#
    )
}

#[test]
fn wire_022_output_user_records_carry_no_media_bytes() {
    let good = manifest(&format!("blob_sha256_{SHA}"));
    let url_image =
        r#"{"type":"image","source":{"type":"url","url":"https://example.invalid/a.png"}}"#;
    for replay in [false, true] {
        accept(&user_output(&good, replay));
        accept(&user_output(url_image, replay));
        accept(&user_output(
            r#"{"type":"tool_result","tool_use_id":"t","content":"data: is fine in text"}"#,
            replay,
        ));
        for (block, path) in [
            (
                r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}"#,
                "message.content[0].source",
            ),
            (
                r#"{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}}"#,
                "message.content[0].source",
            ),
            (
                r#"{"type":"image","source":{"type":"url","url":"data:image/png;base64,iVBORw0KGgo="}}"#,
                "message.content[0].source.url",
            ),
            (
                r#"{"type":"image","source":{"type":"url","url":"DATA:image/png,x"}}"#,
                "message.content[0].source.url",
            ),
            // Nested inside a tool result.
            (
                r#"{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}"#,
                "message.content[0].content[0].source",
            ),
        ] {
            reject(
                &user_output(block, replay),
                ErrorKind::Invalid,
                path,
                "WIRE-022",
            );
        }
        for storage in [
            "/home/u/.agentx/blobs/x".to_string(),
            format!("blob_sha256_{}", SHA.to_uppercase()),
            format!("blob_sha256_{}", &SHA[1..]),
            format!("sha256_{SHA}"),
            "blob_sha256_".to_string() + &"f".repeat(64),
        ] {
            reject(
                &user_output(&manifest(&storage), replay),
                ErrorKind::Invalid,
                "message.content[0].storage_id",
                "WIRE-022",
            );
        }
    }
}

// ------------------------------------------------------------------ WIRE-019

#[test]
fn wire_019_commit_manifest_carries_the_records_attachment_id() {
    let committed = |inner_id: &str| {
        format!(
            r#"{{"type":"attachment_import_result","version":1,"upload_id":"upl_1","attachment_id":"att_1","status":"committed","terminal":true,"prompt_uuid":"{U1}","attachment":{{"type":"attachment_ref","attachment_id":"{inner_id}","kind":"image","name":"a.png","mime_type":"image/png","size_bytes":3,"sha256":"{SHA}","storage_id":"blob_sha256_{SHA}"}}}}"#
        )
    };
    accept(&committed("att_1"));
    reject(
        &committed("att_2"),
        ErrorKind::Invalid,
        "attachment.attachment_id",
        "WIRE-019",
    );
}

// ------------------------------------------------------------------ PROFILE §2b, §8

#[test]
fn profile_2b_a_duplicate_is_classified_by_the_lines_top_level_type() {
    use RejectedLineClass::{Import, Other, User};
    for (line, class) in [
        (
            &br#"{"type":"attachment_import","version":1,"version":1}"#[..],
            Import,
        ),
        (
            br#"{"op":{"a":1,"a":2},"type":"attachment_import"}"#,
            Import,
        ),
        // An escaped spelling of the name or the value is the same member.
        (
            br#"{"t\u0079pe":"attachment\u005fimport","x":1,"x":1}"#,
            Import,
        ),
        (
            br#"{"type":"user","message":{"content":"a","content":"b"}}"#,
            User,
        ),
        // A duplicated `type` is not trusted: either value may be the real one, and the fatal
        // reading wins.
        (br#"{"type":"user","type":"attachment_import"}"#, Import),
        (br#"{"type":"attachment_import","type":"user"}"#, Import),
        (br#"{"type":"keep_alive","a":1,"a":1}"#, Other),
        // Nested `type` members do not count.
        (
            br#"{"x":{"type":"attachment_import"},"type":"user","x":1}"#,
            User,
        ),
        (br#"{"s":"\"type\":\"attachment_import\"","s":1}"#, Other),
        (br#"["type","attachment_import"]"#, Other),
        (b"", Other),
        (br#"{"type":"attachment_import""#, Import),
        (b"{\"type\":\"user\",\"a\":\xff", User),
    ] {
        assert_eq!(
            classify_rejected_line(line),
            class,
            "{}",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn profile_8_set_permission_mode_accepts_any_payload() {
    for body in [
        r#"{"subtype":"set_permission_mode","mode":"plan"}"#,
        r#"{"subtype":"set_permission_mode"}"#,
        r#"{"subtype":"set_permission_mode","mode":42}"#,
        r#"{"subtype":"set_permission_mode","mode":{"x":[1]},"extra":null}"#,
        r#"{"subtype":"set_permission_mode","mode":"nonsense"}"#,
    ] {
        let line = format!(r#"{{"type":"control_request","request_id":"r1","request":{body}}}"#);
        match InputRecord::decode_line(line.as_bytes(), &mut Parser::new()) {
            Ok(InputRecord::ControlRequest(c)) => {
                assert!(
                    matches!(c.request, ControlRequestBody::SetPermissionMode(_)),
                    "{line}"
                )
            }
            other => panic!("{line}: {other:?}"),
        }
    }
}

// ------------------------------------------------------------------ WIRE-023 input_capabilities

/// The native capability exactly as sdk-wire-protocol.md prints it (WIRE-023, "this exact
/// capability shape"), copied verbatim: every source, media type and limit.
const PROTOCOL_INPUT_CAPABILITIES: &str = r#"{
  "input_capabilities": {
    "attachments": {
      "protocol_version": 1,
      "sources": [
        {"source":"file_path","scope":"initial_cli"},
        {"source":"stream_json_v1","scope":"per_turn"}
      ],
      "media_types": [
        {"kind":"image","mime_type":"image/png","max_bytes":20971520,"max_dimension":8192,"max_pixels":20000000,"transform_policy":"decode_reencode_strip_metadata_reject_oversize_no_resize"},
        {"kind":"image","mime_type":"image/jpeg","max_bytes":20971520,"max_dimension":8192,"max_pixels":20000000,"transform_policy":"decode_reencode_strip_metadata_reject_oversize_no_resize"},
        {"kind":"document","mime_type":"application/pdf","max_bytes":20971520,"max_pages":100,"transform_policy":"validate_structure_no_execute_no_ocr_no_conversion"}
      ],
      "limits": {
        "max_attachments_per_message": 8,
        "max_concurrent_uploads": 8,
        "max_uploads_per_session": 100000,
        "max_item_bytes": 20971520,
        "max_aggregate_bytes": 41943040,
        "max_storage_bytes": 536870912,
        "max_model_request_media_bytes": 41943040,
        "max_chunk_decoded_bytes": 262144,
        "max_chunk_encoded_bytes": 349528,
        "max_display_name_bytes": 255,
        "max_mime_type_bytes": 64,
        "max_image_dimension": 8192,
        "max_image_pixels": 20000000,
        "max_pdf_pages": 100,
        "upload_timeout_ms": 120000
      },
      "provider_limits": {
        "max_request_items": 100,
        "max_encoded_media_bytes": 55927120,
        "max_request_bytes": 67108864,
        "max_ndjson_record_bytes": 8388608
      }
    }
  }
}"#;

#[test]
fn wire_023_input_capabilities_equal_the_protocols_literal_text() {
    use agentx_wire::wire::system_init::InputCapabilities;
    use agentx_wire::wire::WireValue;
    let literal: serde_json::Value = serde_json::from_str(PROTOCOL_INPUT_CAPABILITIES).unwrap();
    let literal = &literal["input_capabilities"];
    // What we write is the protocol's object (member order is not semantic).
    let mut ours = Vec::new();
    InputCapabilities::native().encode(&mut ours);
    let ours: serde_json::Value = serde_json::from_slice(&ours).unwrap();
    assert_eq!(&ours, literal);
    // Every leaf, one by one, so a difference names the limit or the media type.
    let leaves = |v: &serde_json::Value| {
        let mut out = Vec::new();
        let mut stack = vec![(String::new(), v.clone())];
        while let Some((path, v)) = stack.pop() {
            match v {
                serde_json::Value::Object(m) => {
                    stack.extend(m.into_iter().map(|(k, v)| (format!("{path}.{k}"), v)))
                }
                serde_json::Value::Array(a) => stack.extend(
                    a.into_iter()
                        .enumerate()
                        .map(|(i, v)| (format!("{path}[{i}]"), v)),
                ),
                leaf => out.push((path, leaf)),
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    };
    let (want, got) = (leaves(literal), leaves(&ours));
    assert_eq!(
        want.len(),
        1 + 4 + 6 + 6 + 5 + 15 + 4,
        "the literal's leaf count"
    );
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(w, g);
    }
    // And the literal decodes to the native value.
    let text = serde_json::to_string(literal).unwrap();
    let doc = json::parse(text.as_bytes()).unwrap();
    let decoded = InputCapabilities::decode(doc.root(), &agentx_wire::wire::Path::ROOT).unwrap();
    assert_eq!(decoded, InputCapabilities::native());
}
