//! The durable session store (PROFILE §11) and resume rules (WIRE-025, WIRE-005): exact
//! diagnostics, the torn last line, no private value on disk, and the relinked prior context.

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

use agentx_core::model::{Block, Message};
use agentx_core::registry::{parse_auth_json, ProviderBinding, Selection};
use agentx_home::store::{context, split_transcript, SessionMeta, SessionStore, StoreError};

const SID: &str = "5b0c6f0e-3b1a-4c2d-9e8f-0123456789ab";

const AUTH: &str = r#"{"version":2,"providers":[
 {"id":"sol-east","type":"azure_openai","model":"gpt-5.6-sol",
  "endpoint":"https://SENTINEL-endpoint.example.invalid/","deployment":"SENTINEL-deployment",
  "api_version":"SENTINEL-apiversion","api_key":"SENTINEL-key"},
 {"id":"local","type":"scripted","model":"agentx-echo","default":true}]}"#;

fn no_env(_: &str) -> Option<OsString> {
    None
}

fn binding(id: &str) -> ProviderBinding {
    let reg = parse_auth_json(AUTH.as_bytes(), &no_env).expect("registry");
    Selection::select(reg, Some(id))
        .expect("selection")
        .binding()
        .clone()
}

fn home(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentx-store-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn meta(id: &str) -> SessionMeta {
    SessionMeta {
        session_id: SID.into(),
        binding: binding(id),
        created_unix_ms: 1_764_500_000_000,
    }
}

/// A stored turn ends with its `result` line (PROFILE §11); these stand for whole turns.
const R1: &[u8] = b"{\"type\":\"result\",\"n\":1}";
const R2: &[u8] = b"{\"type\":\"result\",\"n\":2}";
const R3: &[u8] = b"{\"type\":\"result\",\"n\":3}";

fn lines(ls: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in ls {
        out.extend_from_slice(l);
        out.push(b'\n');
    }
    out
}

#[test]
fn create_append_resume_round_trip() {
    let home = home("rt");
    let mut s = SessionStore::create(&home, &meta("local")).unwrap();
    s.append(&lines(&[b"{\"a\":1}", R1])).unwrap();
    s.append(&lines(&[R2])).unwrap();
    drop(s);
    let (_, m, t) = SessionStore::resume(&home, SID, &binding("local")).unwrap();
    assert_eq!(m, meta("local"));
    assert_eq!(
        t.lines,
        vec![b"{\"a\":1}".to_vec(), R1.to_vec(), R2.to_vec()]
    );
    assert_eq!(t.torn_bytes, 0);
}

#[test]
fn torn_last_line_is_ignored_and_cut_before_the_next_append() {
    let home = home("torn");
    let mut s = SessionStore::create(&home, &meta("local")).unwrap();
    s.append(&lines(&[R1])).unwrap();
    drop(s);
    let path = home.join("sessions").join(SID).join("transcript.ndjson");
    let mut bytes = fs::read(&path).unwrap();
    bytes.extend_from_slice(b"{\"torn\":");
    fs::write(&path, &bytes).unwrap();
    let (mut s, _, t) = SessionStore::resume(&home, SID, &binding("local")).unwrap();
    assert_eq!(t.lines, vec![R1.to_vec()]);
    assert_eq!(t.torn_bytes, 8);
    s.append(&lines(&[R2])).unwrap();
    assert_eq!(fs::read(&path).unwrap(), lines(&[R1, R2]));
}

/// PROFILE §11: a crash in the middle of a turn's append can leave whole
/// lines of that turn (a `tool_use` whose `tool_result` never made it) before the torn one.
/// Every stored turn ends with its result, so those lines are a cut turn: ignored on load and
/// cut off, and resume never sees the `tool_use` without its result.
#[test]
fn a_cut_turn_after_the_last_result_is_absent_and_cut_off() {
    let home = home("cut");
    let mut s = SessionStore::create(&home, &meta("local")).unwrap();
    s.append(&lines(&[R1])).unwrap();
    drop(s);
    let path = home.join("sessions").join(SID).join("transcript.ndjson");
    let mut bytes = fs::read(&path).unwrap();
    let cut = format!(
        "{}\n{}\n{{\"type\":\"user\",\"mess",
        String::from_utf8(user(U2, "run")).unwrap(),
        String::from_utf8(assistant(
            A2B,
            "msg_2",
            r#"{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}"#
        ))
        .unwrap()
    );
    bytes.extend_from_slice(cut.as_bytes());
    fs::write(&path, &bytes).unwrap();
    resumes_at_r1_with_tail_cut(&home, cut.len());
}

/// A session stored as `R1` plus a tail of `tail` bytes resumes with `R1` alone, the tail
/// ignored and cut off on disk, and the next append follows `R1`.
fn resumes_at_r1_with_tail_cut(home: &std::path::Path, tail: usize) {
    let path = home.join("sessions").join(SID).join("transcript.ndjson");
    let (mut s, _, t) = SessionStore::resume(home, SID, &binding("local")).unwrap();
    assert_eq!(t.lines, vec![R1.to_vec()]);
    assert_eq!(t.torn_bytes, tail);
    assert_eq!(
        fs::read(&path).unwrap(),
        lines(&[R1]),
        "cut off on disk too"
    );
    s.append(&lines(&[R3])).unwrap();
    assert_eq!(fs::read(&path).unwrap(), lines(&[R1, R3]));
}

/// PROFILE §11 "One writer": a held session refuses a second store with the exact text,
/// before anything is read or cut; once the holder is gone (its lock file stays behind),
/// the session opens again.
#[test]
fn a_held_session_is_in_use_and_a_stale_lock_file_does_not_block() {
    let home = home("lock");
    let mut s = SessionStore::create(&home, &meta("local")).unwrap();
    s.append(&lines(&[R1])).unwrap();
    // A torn tail the second opener must not cut while the first holds the session.
    let path = home.join("sessions").join(SID).join("transcript.ndjson");
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    std::io::Write::write_all(&mut f, b"{\"torn").unwrap();
    let e = SessionStore::resume(&home, SID, &binding("local")).unwrap_err();
    assert!(matches!(e, StoreError::InUse { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!("agentx: session {SID} is in use by another process")
    );
    assert!(
        fs::read(&path).unwrap().ends_with(b"{\"torn"),
        "nothing was cut"
    );
    drop(s);
    assert!(home.join("sessions").join(SID).join("lock").exists());
    let (_, _, t) = SessionStore::resume(&home, SID, &binding("local")).unwrap();
    assert_eq!(t.lines, vec![R1.to_vec()]);
}

#[test]
fn append_refuses_an_unterminated_frame() {
    let home = home("unterm");
    let mut s = SessionStore::create(&home, &meta("local")).unwrap();
    assert!(s.append(b"{\"a\":1}").is_err());
    s.append(b"").unwrap();
    let path = home.join("sessions").join(SID).join("transcript.ndjson");
    assert_eq!(fs::read(&path).unwrap(), b"");
}

/// PROFILE §11 "Disk errors": the diagnostic is the errno text, never a path or an operation.
#[test]
fn a_store_io_error_reads_as_its_errno_text() {
    let e = std::io::Error::from_raw_os_error(28);
    assert_eq!(
        agentx_home::store::errno_text(&e),
        "No space left on device"
    );
    let e = std::io::Error::from(std::io::ErrorKind::StorageFull);
    assert_eq!(agentx_home::store::errno_text(&e), "no storage space");
}

#[test]
fn unknown_session_diagnostic_is_exact() {
    let home = home("unknown");
    let e = SessionStore::resume(&home, SID, &binding("local")).unwrap_err();
    assert_eq!(e.to_string(), format!("agentx: no session {SID}"));
    // Not a canonical UUID: never a path, so no traversal out of sessions/.
    let e = SessionStore::resume(&home, "../../etc", &binding("local")).unwrap_err();
    assert!(matches!(e, StoreError::UnknownSession { .. }));
    assert_eq!(e.to_string(), "agentx: no session ../../etc");
    // PROFILE §5: at most 64 bytes of an input value.
    let long = "x".repeat(200);
    let e = SessionStore::resume(&home, &long, &binding("local")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("agentx: no session {}", "x".repeat(64))
    );
}

#[test]
fn another_provider_fails_closed_before_reading_the_transcript() {
    // WIRE-025 / scenario 28: a resume with another provider is refused.
    let home = home("mismatch");
    let mut s = SessionStore::create(&home, &meta("local")).unwrap();
    s.append(b"{\"a\":1}\n").unwrap();
    drop(s);
    let e = SessionStore::resume(&home, SID, &binding("sol-east")).unwrap_err();
    assert!(matches!(e, StoreError::ProviderMismatch { .. }));
    assert_eq!(
        e.to_string(),
        format!("agentx: cannot resume {SID}: it was recorded with another provider")
    );
}

/// docs/limits.md: `meta.json` is read up to 65,536 bytes; at the bound it resumes, one byte
/// more is a corrupt session (never read whole).
#[test]
fn meta_json_is_read_up_to_its_bound() {
    let home = home("meta-bound");
    drop(SessionStore::create(&home, &meta("local")).unwrap());
    let path = home.join("sessions").join(SID).join("meta.json");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.resize(agentx_home::store::MAX_META_BYTES, b' ');
    std::fs::write(&path, &bytes).unwrap();
    SessionStore::resume(&home, SID, &binding("local")).unwrap();
    bytes.push(b' ');
    std::fs::write(&path, &bytes).unwrap();
    let e = SessionStore::resume(&home, SID, &binding("local")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("agentx: cannot resume {SID}: meta.json is over 65536 bytes")
    );
}

#[test]
fn meta_json_holds_no_private_value() {
    let home = home("private");
    SessionStore::create(&home, &meta("sol-east")).unwrap();
    let bytes = fs::read(home.join("sessions").join(SID).join("meta.json")).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(!text.contains("SENTINEL"), "{text}");
    assert!(text.contains("\"provider\":\"sol-east\""));
    assert!(text.ends_with("}\n"));
    // It decodes back exactly, and a tampered record fails closed.
    assert_eq!(
        SessionMeta::decode(text.as_bytes()).unwrap(),
        meta("sol-east")
    );
    let tampered = text.replace("\"version\":1", "\"version\":1,\"extra\":0");
    assert!(SessionMeta::decode(tampered.as_bytes()).is_err());
}

#[test]
fn split_transcript_tolerates_only_a_torn_last_line() {
    let t = split_transcript(b"{\"a\":1}\n\n{\"type\":\"result\",\"b\":2}\n{\"c\"");
    assert_eq!(t.lines.len(), 2);
    assert_eq!(t.torn_bytes, 4);
    assert_eq!(split_transcript(b"").lines.len(), 0);
    // Whole lines after the last result are a cut turn: ignored with the torn tail.
    let t = split_transcript(b"{\"type\":\"result\"}\n{\"a\":1}\n{\"c\"");
    assert_eq!(
        t.lines.len(),
        0,
        "a result line needs the comma of a real record"
    );
    let t = split_transcript(b"{\"type\":\"result\",\"x\":0}\n{\"a\":1}\n{\"c\"");
    assert_eq!(t.lines.len(), 1);
    assert_eq!(t.torn_bytes, 8 + 4);
}

/// PROFILE §11 "resumes once space returns": a failed append that the file system zero-filled
/// and could not cut off (btrfs over its quota) left a line starting with NUL bytes, then
/// whole records of the same failed append, a result among them. The NUL line and all after
/// it are ignored and cut like a torn tail: the session resumes at its last whole turn (it
/// exited 1 with `transcript line 4: not a valid output record`, on every try).
#[test]
fn a_zero_filled_failed_append_is_cut_like_a_torn_tail() {
    let home = home("nul");
    let mut s = SessionStore::create(&home, &meta("local")).unwrap();
    s.append(&lines(&[R1])).unwrap();
    drop(s);
    let path = home.join("sessions").join(SID).join("transcript.ndjson");
    let mut bytes = fs::read(&path).unwrap();
    let mut failed = vec![0u8; 3139];
    failed.extend_from_slice(b"\"ent\",\"x\":1}\n");
    failed.extend_from_slice(&lines(&[R2]));
    failed.extend_from_slice(b"{\"type\":\"user\",\"mess");
    bytes.extend_from_slice(&failed);
    fs::write(&path, &bytes).unwrap();
    resumes_at_r1_with_tail_cut(&home, failed.len());
    // A NUL byte anywhere in a line, not only at its start.
    let t = split_transcript(
        b"{\"type\":\"result\",\"n\":1}\n{\"a\":\"\0\"}\n{\"type\":\"result\",\"n\":2}\n",
    );
    assert_eq!(t.lines.len(), 1);
}

const U1: &str = "11111111-1111-4111-8111-111111111111";
const A1: &str = "22222222-2222-4222-8222-222222222222";
const U2: &str = "33333333-3333-4333-8333-333333333333";
const A2: &str = "44444444-4444-4444-8444-444444444444";
const A2B: &str = "55555555-5555-4555-8555-555555555555";
const T2: &str = "66666666-6666-4666-8666-666666666666";
const A3: &str = "77777777-7777-4777-8777-777777777777";
const CB: &str = "88888888-8888-4888-8888-888888888888";
const U4: &str = "99999999-9999-4999-8999-999999999999";

fn user(uuid: &str, text: &str) -> Vec<u8> {
    format!(
        r#"{{"type":"user","message":{{"role":"user","content":"{text}"}},"parent_tool_use_id":null,"uuid":"{uuid}","session_id":"{SID}","isReplay":true}}"#
    )
    .into_bytes()
}

fn assistant(uuid: &str, id: &str, block: &str) -> Vec<u8> {
    format!(
        r#"{{"type":"assistant","message":{{"id":"{id}","role":"assistant","content":[{block}]}},"parent_tool_use_id":null,"uuid":"{uuid}","session_id":"{SID}"}}"#
    )
    .into_bytes()
}

fn transcript() -> Vec<Vec<u8>> {
    vec![
        user(U1, "hello"),
        assistant(A1, "msg_1", r#"{"type":"text","text":"echo: hello"}"#),
        user(U2, "run"),
        assistant(A2, "msg_2", r#"{"type":"text","text":"ok"}"#),
        assistant(
            A2B,
            "msg_2",
            r#"{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}"#,
        ),
        format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"a\nb","is_error":false}}]}},"parent_tool_use_id":null,"uuid":"{T2}","session_id":"{SID}"}}"#
        )
        .into_bytes(),
        assistant(A3, "msg_3", r#"{"type":"text","text":"done"}"#),
        format!(r#"{{"type":"result","subtype":"success","is_error":false,"duration_ms":1,"duration_api_ms":1,"num_turns":2,"result":"done","stop_reason":"end_turn","total_cost_usd":null,"usage":{{}},"modelUsage":{{}},"permission_denials":[],"uuid":"{A1}","session_id":"{SID}"}}"#).into_bytes(),
    ]
}

#[test]
fn prior_context_maps_records_to_messages() {
    let ctx = context::prior_context(&transcript()).unwrap();
    assert_eq!(
        ctx,
        vec![
            Message::user("hello"),
            Message::Assistant {
                message_id: "msg_1".into(),
                blocks: vec![Block::Text("echo: hello".into())]
            },
            Message::user("run"),
            Message::Assistant {
                message_id: "msg_2".into(),
                blocks: vec![
                    Block::Text("ok".into()),
                    Block::ToolUse {
                        id: "toolu_1".into(),
                        name: "Bash".into(),
                        input: r#"{"command":"ls"}"#.into()
                    }
                ]
            },
            Message::ToolResult {
                tool_use_id: "toolu_1".into(),
                content: "a\nb".into(),
                is_error: false
            },
            Message::Assistant {
                message_id: "msg_3".into(),
                blocks: vec![Block::Text("done".into())]
            },
        ]
    );
}

fn boundary(anchor: &str, head: &str, tail: &str) -> Vec<u8> {
    format!(
        r#"{{"type":"system","subtype":"compact_boundary","compact_metadata":{{"trigger":"manual","pre_tokens":10,"preserved_segment":{{"head_uuid":"{head}","anchor_uuid":"{anchor}","tail_uuid":"{tail}"}}}},"uuid":"{CB}","session_id":"{SID}"}}"#
    )
    .into_bytes()
}

#[test]
fn compaction_relinks_the_preserved_segment_at_its_anchor() {
    // WIRE-005: the summary plus the exact preserved segment (U2 … A3), spliced after the
    // anchor (here the boundary itself), then what came after the boundary.
    let mut lines = transcript();
    lines.push(boundary(CB, U2, A3));
    lines.push(user(U4, "after"));
    let ctx = context::prior_context(&lines).unwrap();
    assert_eq!(ctx.len(), 1 + 4 + 1, "{ctx:#?}");
    assert_eq!(ctx[0], context::compaction_summary(2));
    assert_eq!(ctx[1], Message::user("run"));
    assert!(matches!(&ctx[4], Message::Assistant { message_id, .. } if message_id == "msg_3"));
    assert_eq!(ctx[5], Message::user("after"));
}

#[test]
fn compaction_anchor_after_the_boundary_splices_there() {
    let mut lines = transcript();
    lines.push(boundary(U4, U1, A1));
    lines.push(user(U4, "after"));
    let ctx = context::prior_context(&lines).unwrap();
    // summary (4 removed), then U4, then the preserved first exchange.
    assert_eq!(ctx[0], context::compaction_summary(4));
    assert_eq!(ctx[1], Message::user("after"));
    assert_eq!(ctx[2], Message::user("hello"));
    assert_eq!(ctx.len(), 4);
}

#[test]
fn a_segment_that_names_unknown_records_fails_closed() {
    let mut lines = transcript();
    lines.push(boundary(CB, U4, A3));
    let e = context::prior_context(&lines).unwrap_err();
    assert_eq!(e.line, lines.len());
    let mut bad = transcript();
    bad.insert(1, b"{not json".to_vec());
    assert_eq!(context::prior_context(&bad).unwrap_err().line, 2);
}
