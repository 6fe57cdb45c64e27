//! Input records (host → agent): `user` (WIRE-017 union, replay, priority),
//! `attachment_import` (WIRE-018 with the PROFILE §2b fatal/semantic split),
//! `update_environment_variables` (PROFILE §2b), `keep_alive`, unknown types (WIRE-002) and
//! the PROFILE §2a record rule. Valid forms, canonical encodings, and each rejection with its
//! kind, path and severity; each limit at and one past its edge.

use agentx_wire::json::{self, Parser};
use agentx_wire::wire::{
    ContentBlock, Error, ErrorKind, ImportOperation, InputRecord, OutputRecord, Priority,
    UserContent, UserMessage,
};

const UUID: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

fn input(line: &str) -> Result<InputRecord<'_>, Error> {
    InputRecord::decode_line(line.as_bytes(), &mut Parser::new())
}

fn encode(r: &InputRecord<'_>) -> String {
    let mut out = Vec::new();
    r.encode(&mut out);
    String::from_utf8(out).unwrap()
}

/// Decodes, checks the round trip, and returns the canonical encoding.
fn canon(line: &str) -> String {
    let r = input(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let once = encode(&r);
    let again = input(&once).unwrap_or_else(|e| panic!("{once}: {e}"));
    assert_eq!(again, r, "decode(encode(r)) == r for {line}");
    assert_eq!(encode(&again), once, "encoding is idempotent");
    once
}

#[track_caller]
fn reject(line: &str, kind: ErrorKind, path: &str, fatal: bool) -> Error {
    match input(line) {
        Ok(r) => panic!("accepted {line}: {r:?}"),
        Err(e) => {
            assert_eq!(e.kind(), kind, "{line}: {e}");
            assert_eq!(e.path(), path, "{line}: {e}");
            assert_eq!(e.is_fatal(), fatal, "{line}: {e}");
            e
        }
    }
}

fn user(extra: &str) -> String {
    format!(r#"{{"type":"user","parent_tool_use_id":null{extra}}}"#)
}

fn manifest(fields: &[(&str, &str)]) -> String {
    let mut m: Vec<(String, String)> = vec![
        ("type".into(), r#""attachment_ref""#.into()),
        ("attachment_id".into(), r#""att_image1""#.into()),
        ("kind".into(), r#""image""#.into()),
        ("name".into(), r#""screen.png""#.into()),
        ("mime_type".into(), r#""image/png""#.into()),
        ("size_bytes".into(), "12345".into()),
        ("sha256".into(), format!("\"{SHA}\"")),
        ("storage_id".into(), format!("\"blob_sha256_{SHA}\"")),
    ];
    for (k, v) in fields {
        match m.iter_mut().find(|(n, _)| n == k) {
            Some(slot) if *v == "<absent>" => slot.1 = String::new(),
            Some(slot) => slot.1 = (*v).to_owned(),
            None => m.push(((*k).to_owned(), (*v).to_owned())),
        }
    }
    let body: Vec<String> = m
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("\"{k}\":{v}"))
        .collect();
    format!("{{{}}}", body.join(","))
}

fn v1_user(block: &str) -> String {
    user(&format!(
        r#","message":{{"role":"user","content_version":1,"content":[{{"type":"text","text":"Compare"}},{block}]}}"#
    ))
}

// ---------------------------------------------------------------- user: valid forms

#[test]
fn user_legacy_forms_decode_and_encode_canonically() {
    // A JSON string message.
    let c = canon(&user(r#","message":"hello""#));
    assert_eq!(
        c,
        r#"{"type":"user","message":"hello","parent_tool_use_id":null}"#
    );
    // An object whose content is a string.
    let c = canon(&user(r#","message":{"role":"user","content":"hi"}"#));
    assert_eq!(
        c,
        r#"{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}"#
    );
    // Role is optional; canonical encoding writes it.
    let c = canon(&user(r#","message":{"content":"hi"}"#));
    assert!(c.contains(r#"{"role":"user","content":"hi"}"#));
    // A nonempty array of text / input_text blocks; input_text encodes as text (WIRE-017).
    let line = user(
        r#","message":{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"text","text":"b"}]}"#,
    );
    let r = input(&line).unwrap();
    match &r {
        InputRecord::User(u) => match &u.message {
            UserMessage::Object {
                versioned: false,
                content: UserContent::Blocks(b),
            } => {
                assert_eq!(
                    b,
                    &[
                        ContentBlock::Text("a".into()),
                        ContentBlock::Text("b".into())
                    ]
                );
            }
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
    assert!(canon(&line).contains(r#"[{"type":"text","text":"a"},{"type":"text","text":"b"}]"#));
}

#[test]
fn user_v1_attachment_union_round_trips_with_the_complete_manifest() {
    let line = format!(
        r#"{{"type":"user","uuid":"{UUID}","priority":"next","parent_tool_use_id":null,"message":{{"role":"user","content_version":1,"content":[{{"type":"text","text":"Compare these in order."}},{}]}}}}"#,
        manifest(&[])
    );
    let r = input(&line).unwrap();
    let InputRecord::User(u) = &r else { panic!() };
    assert_eq!(u.priority, Some(Priority::Next));
    let refs: Vec<_> = u.attachments().collect();
    assert_eq!(refs.len(), 1);
    assert_eq!(refs[0].attachment_id, "att_image1");
    assert_eq!(refs[0].size_bytes, 12345);
    assert_eq!(refs[0].storage_id, format!("blob_sha256_{SHA}"));
    let c = canon(&line);
    // Replay preserves content_version:1, order, and the manifest in WIRE-017 order.
    assert!(c.contains(r#""content_version":1,"content":[{"type":"text","text":"Compare these in order."},{"type":"attachment_ref","attachment_id":"att_image1","kind":"image","name":"screen.png","mime_type":"image/png","size_bytes":12345,"sha256":""#));
    // Attachments only, in any order.
    let only = user(&format!(
        r#","message":{{"content_version":1,"content":[{},{}]}}"#,
        manifest(&[]),
        manifest(&[("attachment_id", r#""att_doc""#), ("kind", r#""document""#)])
    ));
    let InputRecord::User(u) = input(&only).unwrap() else {
        panic!()
    };
    assert_eq!(
        u.attachments()
            .map(|a| a.attachment_id.as_str())
            .collect::<Vec<_>>(),
        ["att_image1", "att_doc"]
    );
}

#[test]
fn user_priority_replay_and_optional_members() {
    for p in ["now", "next", "later"] {
        canon(&user(&format!(r#","message":"x","priority":"{p}""#)));
    }
    reject(
        &user(r#","message":"x","priority":"soon""#),
        ErrorKind::Invalid,
        "priority",
        false,
    );
    reject(
        &user(r#","message":"x","priority":1"#),
        ErrorKind::WrongType,
        "priority",
        false,
    );
    // Replay form: uuid, session_id and isReplay:true.
    let replay = user(&format!(
        r#","message":"x","uuid":"{UUID}","session_id":"{UUID}","isReplay":true"#
    ));
    assert!(canon(&replay).ends_with(r#""isReplay":true}"#));
    reject(
        &user(&format!(
            r#","message":"x","uuid":"{UUID}","isReplay":true"#
        )),
        ErrorKind::Missing,
        "session_id",
        false,
    );
    reject(
        &user(&format!(
            r#","message":"x","session_id":"{UUID}","isReplay":true"#
        )),
        ErrorKind::Missing,
        "uuid",
        false,
    );
    // Synthetic flag, timestamp, tool-use result, a non-null parent.
    canon(
        r#"{"type":"user","message":"x","parent_tool_use_id":"toolu_1","isSynthetic":true,"timestamp":"2026-09-29T06:31:37.097Z","tool_use_result":{"stdout":"ok"}}"#,
    );
    reject(
        &user(r#","message":"x","isSynthetic":"yes""#),
        ErrorKind::WrongType,
        "isSynthetic",
        false,
    );
    reject(
        &user(r#","message":"x","uuid":"3F1E7948-5C1F-4C1F-8E2C-88BC9839EC27""#),
        ErrorKind::Invalid,
        "uuid",
        false,
    );
}

// ---------------------------------------------------------------- user: rejections

#[test]
fn user_required_members_and_types() {
    // PROFILE §2b: parent_tool_use_id is required on input (may be null)...
    reject(
        r#"{"type":"user","message":"x"}"#,
        ErrorKind::Missing,
        "parent_tool_use_id",
        false,
    );
    // ...but tolerated on output (Claude-CLI replays omit it).
    assert!(
        OutputRecord::decode_line(br#"{"type":"user","message":"x"}"#, &mut Parser::new()).is_ok()
    );
    reject(&user(""), ErrorKind::Missing, "message", false);
    reject(
        &user(r#","message":5"#),
        ErrorKind::WrongType,
        "message",
        false,
    );
    reject(
        &user(r#","message":{"role":"user"}"#),
        ErrorKind::Missing,
        "message.content",
        false,
    );
    reject(
        &user(r#","message":{"content":5}"#),
        ErrorKind::WrongType,
        "message.content",
        false,
    );
    reject(
        &user(r#","message":{"content":[]}"#),
        ErrorKind::Invalid,
        "message.content",
        false,
    );
    reject(
        &user(r#","message":{"role":"assistant","content":"x"}"#),
        ErrorKind::Invalid,
        "message.role",
        false,
    );
    reject(
        &user(r#","message":"x","parent_tool_use_id2":null"#),
        ErrorKind::UnknownMember,
        "",
        false,
    );
}

#[test]
fn user_closed_decoding_at_every_level() {
    // WIRE-021: record, message, block and manifest are closed.
    reject(
        &user(r#","message":"x","extra":1"#),
        ErrorKind::UnknownMember,
        "",
        false,
    );
    reject(
        &user(r#","message":{"content":"x","name":"n"}"#),
        ErrorKind::UnknownMember,
        "message",
        false,
    );
    reject(
        &user(r#","message":{"content":[{"type":"text","text":"a","cache_control":{}}]}"#),
        ErrorKind::UnknownMember,
        "message.content[0]",
        false,
    );
    let e = reject(
        &v1_user(&manifest(&[("path", r#""/tmp/x""#)])),
        ErrorKind::UnknownMember,
        "message.content[1]",
        false,
    );
    assert!(e.to_string().contains("unknown member \"path\""), "{e}");
    // Input accepts only text/input_text/attachment_ref blocks.
    reject(
        &user(r#","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}"#),
        ErrorKind::Invalid,
        "message.content[0].type",
        false,
    );
    reject(
        &user(r#","message":{"content":[{"text":"a"}]}"#),
        ErrorKind::Missing,
        "message.content[0].type",
        false,
    );
    reject(
        &user(r#","message":{"content":[{"type":"text"}]}"#),
        ErrorKind::Missing,
        "message.content[0].text",
        false,
    );
    reject(
        &user(r#","message":{"content":["a"]}"#),
        ErrorKind::WrongType,
        "message.content[0]",
        false,
    );
}

#[test]
fn user_content_version_rules() {
    // content_version:1 is mandatory when any attachment_ref appears.
    let no_version = user(&format!(r#","message":{{"content":[{}]}}"#, manifest(&[])));
    reject(&no_version, ErrorKind::Invalid, "message.content[0]", false);
    reject(
        &user(r#","message":{"content_version":2,"content":"x"}"#),
        ErrorKind::Invalid,
        "message.content_version",
        false,
    );
    reject(
        &user(r#","message":{"content_version":0,"content":"x"}"#),
        ErrorKind::Invalid,
        "message.content_version",
        false,
    );
    // PROFILE §2a: 1.0 is not an integer.
    reject(
        &user(r#","message":{"content_version":1.0,"content":"x"}"#),
        ErrorKind::WrongType,
        "message.content_version",
        false,
    );
    reject(
        &user(r#","message":{"content_version":"1","content":"x"}"#),
        ErrorKind::WrongType,
        "message.content_version",
        false,
    );
    canon(&user(
        r#","message":{"content_version":1,"content":[{"type":"text","text":"t"}]}"#,
    ));
}

#[test]
fn manifest_members_grammars_and_limits() {
    let p = "message.content[1]";
    canon(&v1_user(&manifest(&[])));
    for field in [
        "attachment_id",
        "kind",
        "name",
        "mime_type",
        "size_bytes",
        "sha256",
        "storage_id",
    ] {
        reject(
            &v1_user(&manifest(&[(field, "<absent>")])),
            ErrorKind::Missing,
            &format!("{p}.{field}"),
            false,
        );
    }
    // att_ grammar at its edge: 63 characters after the prefix, then 64.
    let ok = format!("\"att_a{}\"", "b".repeat(62));
    canon(&v1_user(&manifest(&[("attachment_id", &ok)])));
    let long = format!("\"att_a{}\"", "b".repeat(63));
    reject(
        &v1_user(&manifest(&[("attachment_id", &long)])),
        ErrorKind::Invalid,
        &format!("{p}.attachment_id"),
        false,
    );
    reject(
        &v1_user(&manifest(&[("attachment_id", r#""upl_a""#)])),
        ErrorKind::Invalid,
        &format!("{p}.attachment_id"),
        false,
    );
    reject(
        &v1_user(&manifest(&[("attachment_id", r#""att_""#)])),
        ErrorKind::Invalid,
        &format!("{p}.attachment_id"),
        false,
    );
    reject(
        &v1_user(&manifest(&[("kind", r#""video""#)])),
        ErrorKind::Invalid,
        &format!("{p}.kind"),
        false,
    );
    // Sizes: positive, exact integers.
    canon(&v1_user(&manifest(&[("size_bytes", "1")])));
    reject(
        &v1_user(&manifest(&[("size_bytes", "0")])),
        ErrorKind::Invalid,
        &format!("{p}.size_bytes"),
        false,
    );
    reject(
        &v1_user(&manifest(&[("size_bytes", "-1")])),
        ErrorKind::Invalid,
        &format!("{p}.size_bytes"),
        false,
    );
    reject(
        &v1_user(&manifest(&[("size_bytes", "1.0")])),
        ErrorKind::WrongType,
        &format!("{p}.size_bytes"),
        false,
    );
    reject(
        &v1_user(&manifest(&[("size_bytes", "18446744073709551616")])),
        ErrorKind::Invalid,
        &format!("{p}.size_bytes"),
        false,
    );
    canon(&v1_user(&manifest(&[(
        "size_bytes",
        "18446744073709551615",
    )])));
    // sha256: 64 lowercase hex.
    let short = format!("\"{}\"", &SHA[..63]);
    reject(
        &v1_user(&manifest(&[("sha256", &short)])),
        ErrorKind::Invalid,
        &format!("{p}.sha256"),
        false,
    );
    let upper = format!("\"{}\"", SHA.to_uppercase());
    reject(
        &v1_user(&manifest(&[("sha256", &upper)])),
        ErrorKind::Invalid,
        &format!("{p}.sha256"),
        false,
    );
    // Name at most 255 bytes, MIME at most 64 bytes (WIRE-023 limits).
    let name255 = format!("\"{}\"", "n".repeat(255));
    canon(&v1_user(&manifest(&[("name", &name255)])));
    let name256 = format!("\"{}\"", "n".repeat(256));
    reject(
        &v1_user(&manifest(&[("name", &name256)])),
        ErrorKind::Invalid,
        &format!("{p}.name"),
        false,
    );
    reject(
        &v1_user(&manifest(&[("name", r#""""#)])),
        ErrorKind::Invalid,
        &format!("{p}.name"),
        false,
    );
    let mime64 = format!("\"{}\"", "m".repeat(64));
    canon(&v1_user(&manifest(&[("mime_type", &mime64)])));
    let mime65 = format!("\"{}\"", "m".repeat(65));
    reject(
        &v1_user(&manifest(&[("mime_type", &mime65)])),
        ErrorKind::Invalid,
        &format!("{p}.mime_type"),
        false,
    );
    reject(
        &v1_user(&manifest(&[("storage_id", r#""""#)])),
        ErrorKind::Invalid,
        &format!("{p}.storage_id"),
        false,
    );
}

#[test]
fn duplicates_at_every_depth_are_rejected_including_escape_equivalent_names() {
    for line in [
        r#"{"type":"user","type":"user","message":"x","parent_tool_use_id":null}"#,
        r#"{"type":"user","message":"x","parent_tool_use_id":null,"mess\u0061ge":"y"}"#,
        r#"{"type":"user","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"a","te\u0078t":"b"}]}}"#,
    ] {
        let e = input(line).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::Json(json::ErrorKind::DuplicateMember),
            "{line}"
        );
        assert_eq!(e.check_kind(), "duplicate_member");
        assert_eq!(e.to_string(), "ambiguous JSON: duplicate member name");
    }
}

// ---------------------------------------------------------------- attachment_import

const BEGIN: &str = r#"{"type":"attachment_import","version":1,"operation":"begin","prompt_uuid":"3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27","upload_id":"upl_image1","attachment_id":"att_image1","name":"screen.png","size_bytes":12345,"mime_type":"image/png","sha256":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}"#;
const CHUNK: &str = r#"{"type":"attachment_import","version":1,"operation":"chunk","upload_id":"upl_image1","sequence":0,"data":"QUJD"}"#;
const COMMIT: &str =
    r#"{"type":"attachment_import","version":1,"operation":"commit","upload_id":"upl_image1"}"#;
const ABORT: &str =
    r#"{"type":"attachment_import","version":1,"operation":"abort","upload_id":"upl_image1"}"#;

fn with(base: &str, from: &str, to: &str) -> String {
    assert!(base.contains(from), "{from}");
    base.replacen(from, to, 1)
}

#[test]
fn import_operations_wire_018_forms_are_canonical() {
    // The WIRE-018 examples are already in canonical order.
    for line in [BEGIN, CHUNK, COMMIT, ABORT] {
        assert_eq!(canon(line), line);
    }
    let InputRecord::AttachmentImport(ImportOperation::Begin(b)) = input(BEGIN).unwrap() else {
        panic!()
    };
    assert_eq!(b.size_bytes, 12345);
    assert_eq!(b.upload_id.as_str(), "upl_image1");
    // Member order on the wire is not semantic.
    let reordered =
        r#"{"upload_id":"upl_image1","operation":"commit","version":1,"type":"attachment_import"}"#;
    assert_eq!(canon(reordered), COMMIT);
}

#[test]
fn import_schema_violations_are_fatal() {
    // Unknown member, member of another operation, missing member: fatal (WIRE-021).
    let e = reject(
        &with(COMMIT, r#""upload_id""#, r#""x":1,"upload_id""#),
        ErrorKind::UnknownMember,
        "",
        true,
    );
    assert_eq!(e.check_kind(), "schema");
    reject(
        &with(COMMIT, "}", r#","sequence":0}"#),
        ErrorKind::Invalid,
        "sequence",
        true,
    );
    reject(
        &with(CHUNK, r#","data":"QUJD""#, ""),
        ErrorKind::Missing,
        "data",
        true,
    );
    for (member, value) in [
        ("prompt_uuid", r#""3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27","#),
        ("attachment_id", r#""att_image1","#),
        ("name", r#""screen.png","#),
        ("size_bytes", "12345,"),
        ("mime_type", r#""image/png","#),
    ] {
        let line = with(BEGIN, &format!("\"{member}\":{value}"), "");
        reject(&line, ErrorKind::Missing, member, true);
    }
    reject(
        &with(COMMIT, r#","upload_id":"upl_image1""#, ""),
        ErrorKind::Missing,
        "upload_id",
        true,
    );
    reject(
        &with(COMMIT, r#""version":1,"#, ""),
        ErrorKind::Missing,
        "version",
        true,
    );
    reject(
        &with(COMMIT, r#""operation":"commit","#, ""),
        ErrorKind::Missing,
        "operation",
        true,
    );
    // version and operation.
    reject(
        &with(COMMIT, r#""version":1"#, r#""version":2"#),
        ErrorKind::Invalid,
        "version",
        true,
    );
    reject(
        &with(COMMIT, r#""version":1"#, r#""version":1.0"#),
        ErrorKind::WrongType,
        "version",
        true,
    );
    reject(
        &with(COMMIT, r#""version":1"#, r#""version":"1""#),
        ErrorKind::WrongType,
        "version",
        true,
    );
    reject(
        &with(COMMIT, r#""commit""#, r#""pause""#),
        ErrorKind::Invalid,
        "operation",
        true,
    );
    // Member types.
    reject(
        &with(BEGIN, r#""name":"screen.png""#, r#""name":7"#),
        ErrorKind::WrongType,
        "name",
        true,
    );
    reject(
        &with(BEGIN, "12345", r#""12345""#),
        ErrorKind::WrongType,
        "size_bytes",
        true,
    );
    reject(
        &with(BEGIN, "12345", "12345.0"),
        ErrorKind::WrongType,
        "size_bytes",
        true,
    );
    reject(
        &with(CHUNK, r#""QUJD""#, "null"),
        ErrorKind::WrongType,
        "data",
        true,
    );
    reject(
        &with(CHUNK, r#""sequence":0"#, r#""sequence":0.5"#),
        ErrorKind::WrongType,
        "sequence",
        true,
    );
    reject(&with(BEGIN, SHA, "x"), ErrorKind::Invalid, "sha256", false);
}

#[test]
fn import_identifier_and_uuid_grammars_are_fatal_at_their_edges() {
    let ok = format!("upl_a{}", "b".repeat(62));
    canon(&with(COMMIT, "upl_image1", &ok));
    let long = format!("upl_a{}", "b".repeat(63));
    let e = reject(
        &with(COMMIT, "upl_image1", &long),
        ErrorKind::Invalid,
        "upload_id",
        true,
    );
    assert_eq!(e.correlation(), None);
    for bad in ["upl_", "upl__x", "upl_-x", "upl_a.b", "att_image1", "UPL_a"] {
        reject(
            &with(COMMIT, "upl_image1", bad),
            ErrorKind::Invalid,
            "upload_id",
            true,
        );
    }
    reject(
        &with(BEGIN, "att_image1", "att_"),
        ErrorKind::Invalid,
        "attachment_id",
        true,
    );
    let att_long = format!("att_a{}", "b".repeat(63));
    reject(
        &with(BEGIN, "att_image1", &att_long),
        ErrorKind::Invalid,
        "attachment_id",
        true,
    );
    // prompt_uuid: canonical lowercase, version 1-5, RFC 4122 variant.
    for (from, to) in [
        ("3f1e7948", "3F1E7948"),     // upper case
        ("-4c1f-8e2c", "-6c1f-8e2c"), // version 6
        ("-4c1f-8e2c", "-0c1f-8e2c"), // version 0
        ("-4c1f-8e2c", "-4c1f-ce2c"), // variant 110x
        ("-4c1f-8e2c", "-4c1f-7e2c"), // variant 0xxx
        ("ec27", "ec2"),              // length
    ] {
        let bad_uuid = UUID.replacen(from, to, 1);
        let e = reject(
            &with(BEGIN, UUID, &bad_uuid),
            ErrorKind::Invalid,
            "prompt_uuid",
            true,
        );
        assert_eq!(
            e.correlation(),
            Some("upl_image1"),
            "correlated once upload_id is known"
        );
    }
    canon(&with(BEGIN, "-4c1f-8e2c", "-1c1f-bf2c"));
    canon(&with(BEGIN, "-4c1f-8e2c", "-5c1f-9f2c"));
}

#[test]
fn import_semantic_violations_are_record_level_with_reason_and_correlation() {
    // PROFILE §2b: sizes, digests and sequence values are semantic: the upload fails with a
    // reason code, the stream goes on.
    let e = reject(
        &with(BEGIN, "12345", "0"),
        ErrorKind::Invalid,
        "size_bytes",
        false,
    );
    assert_eq!(
        (e.reason_code(), e.correlation()),
        (Some("schema_invalid"), Some("upl_image1"))
    );
    canon(&with(BEGIN, "12345", "1"));
    let e = reject(
        &with(BEGIN, "12345", "-1"),
        ErrorKind::Invalid,
        "size_bytes",
        false,
    );
    assert_eq!(e.reason_code(), Some("schema_invalid"));
    let e = reject(
        &with(BEGIN, SHA, &SHA.to_uppercase()),
        ErrorKind::Invalid,
        "sha256",
        false,
    );
    assert_eq!(
        (e.reason_code(), e.correlation()),
        (Some("schema_invalid"), Some("upl_image1"))
    );
    reject(
        &with(BEGIN, SHA, &SHA[..63]),
        ErrorKind::Invalid,
        "sha256",
        false,
    );
    let e = reject(
        &with(CHUNK, r#""sequence":0"#, r#""sequence":-1"#),
        ErrorKind::Invalid,
        "sequence",
        false,
    );
    assert_eq!(e.reason_code(), Some("sequence_gap"));
    canon(&with(
        CHUNK,
        r#""sequence":0"#,
        r#""sequence":18446744073709551615"#,
    ));
    // Base64 content and size are attach's to judge: decoding keeps them.
    canon(&with(CHUNK, "QUJD", "not base64!"));
}

// ---------------------------------------------------------------- environment, keep_alive

fn env(vars: &str) -> String {
    format!(r#"{{"type":"update_environment_variables","variables":{{{vars}}}}}"#)
}

#[test]
fn update_environment_variables_contract() {
    let c = canon(&env(r#""_A1":"x","B":null"#));
    assert_eq!(c, env(r#""_A1":"x","B":null"#));
    let InputRecord::UpdateEnvironmentVariables(u) = input(&c).unwrap() else {
        panic!()
    };
    assert_eq!(
        u.variables,
        vec![("_A1".into(), Some("x".into())), ("B".into(), None)]
    );
    for bad in ["1A", "A-B", "", "é"] {
        reject(
            &env(&format!(r#""{bad}":"x""#)),
            ErrorKind::Invalid,
            "variables.*",
            false,
        );
    }
    reject(&env(r#""A":1"#), ErrorKind::WrongType, "variables.*", false);
    reject(
        &env(r#""A":"a\u0000b""#),
        ErrorKind::Invalid,
        "variables.*",
        false,
    );
    // 32 KiB value at and past its edge.
    canon(&env(&format!(r#""A":"{}""#, "v".repeat(32 * 1024))));
    reject(
        &env(&format!(r#""A":"{}""#, "v".repeat(32 * 1024 + 1))),
        ErrorKind::Invalid,
        "variables.*",
        false,
    );
    // 1,000 entries at and past the edge.
    let entries = |n: usize| {
        (0..n)
            .map(|i| format!(r#""V{i}":"x""#))
            .collect::<Vec<_>>()
            .join(",")
    };
    canon(&env(&entries(1000)));
    reject(&env(&entries(1001)), ErrorKind::Invalid, "variables", false);
    reject(
        r#"{"type":"update_environment_variables"}"#,
        ErrorKind::Missing,
        "variables",
        false,
    );
    reject(
        r#"{"type":"update_environment_variables","variables":[]}"#,
        ErrorKind::WrongType,
        "variables",
        false,
    );
    reject(
        r#"{"type":"update_environment_variables","variables":{},"x":1}"#,
        ErrorKind::UnknownMember,
        "",
        false,
    );
}

#[test]
fn keep_alive_reads_nothing_else() {
    assert_eq!(
        canon(r#"{"type":"keep_alive"}"#),
        r#"{"type":"keep_alive"}"#
    );
    assert_eq!(
        canon(r#"{"type":"keep_alive","anything":[1,2]}"#),
        r#"{"type":"keep_alive"}"#
    );
}

// ---------------------------------------------------------------- record rule, unknown type

#[test]
fn unknown_type_is_preserved_with_a_warning() {
    let line = r#"{"type":"future_thing", "a" : [1, {"b":"\u00e9"}]}"#;
    let r = input(line).unwrap();
    assert_eq!(r.warning(), Some("unknown_type"));
    assert_eq!(r.record_type(), "future_thing");
    // Preserved whole, re-encoded canonically.
    assert_eq!(canon(line), r#"{"type":"future_thing","a":[1,{"b":"é"}]}"#);
    // Output-only types are unknown on input.
    assert_eq!(
        input(r#"{"type":"assistant"}"#).unwrap().warning(),
        Some("unknown_type")
    );
}

#[test]
fn record_rule_and_json_errors_are_classified() {
    let e = reject("[1]", ErrorKind::NotAnObject, "", true);
    assert_eq!(e.check_kind(), "not_an_object");
    reject("{}", ErrorKind::Missing, "type", false);
    reject(r#"{"type":5}"#, ErrorKind::WrongType, "type", false);
    let e = input(r#"{"type":"user""#).unwrap_err();
    assert!(e.is_fatal());
    assert_eq!(e.check_kind(), "malformed_json");
    assert!(e.to_string().starts_with("malformed JSON: "), "{e}");
    let e = InputRecord::decode_line(b"{\"type\":\"a\xff\"}", &mut Parser::new()).unwrap_err();
    assert_eq!(e.check_kind(), "invalid_utf8");
    assert!(e.is_fatal());
}

#[test]
fn diagnostics_never_echo_values() {
    let secret = "sk-live-SECRET-VALUE-1234567890";
    for line in [
        user(&format!(r#","message":"x","priority":"{secret}""#)),
        env(&format!(r#""A":"{secret}\u0000""#)),
        with(BEGIN, SHA, secret),
        with(BEGIN, UUID, secret),
    ] {
        let e = input(&line).unwrap_err();
        assert!(!e.to_string().contains("SECRET"), "{e}");
        assert!(!format!("{e:?}").contains("SECRET"), "{e:?}");
    }
    // An unknown member name is echoed, bounded to 64 bytes.
    let long = "n".repeat(100);
    let e = input(&user(&format!(r#","message":"x","{long}":1"#))).unwrap_err();
    assert!(
        e.to_string().contains(&"n".repeat(64)) && !e.to_string().contains(&"n".repeat(65)),
        "{e}"
    );
}
