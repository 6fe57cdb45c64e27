//! Black-box: hostile input to the real binary (PROFILE §2a, §5; WIRE-001, WIRE-014): the
//! documented diagnostics and exit codes, never a panic or a hang.

use crate::harness;

use harness::*;

fn last_line(s: &str) -> &str {
    s.lines().last().unwrap_or("")
}

#[test]
fn invalid_utf8_is_fatal() {
    let home = TempDir::new("h-utf8");
    let (status, out, err) = run_session(home.path(), &[], b"\xff\n");
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(
        last_line(&err),
        "agentx: input line 1: malformed JSON: invalid UTF-8"
    );
}

#[test]
fn deep_nesting_is_fatal() {
    let home = TempDir::new("h-deep");
    let mut line = "[".repeat(200);
    line.push_str(&"]".repeat(200));
    line.push('\n');
    let (status, _, err) = run_session(home.path(), &[], line.as_bytes());
    assert_eq!(status, Some(1));
    assert_eq!(
        last_line(&err),
        "agentx: input line 1: malformed JSON: nesting exceeds the depth limit"
    );
}

#[test]
fn duplicate_member_in_a_user_record_is_a_record_error() {
    let home = TempDir::new("h-dup");
    let (status, out, err) = run_session(
        home.path(),
        &[],
        b"{\"type\":\"user\",\"message\":\"a\",\"message\":\"b\",\"parent_tool_use_id\":null}\n{\"type\":\"user\",\"message\":\"ok\",\"parent_tool_use_id\":null}\n",
    );
    assert_eq!(status, Some(0));
    assert!(err.contains("agentx: input line 1: ambiguous JSON: duplicate member name"));
    check_output(&out);
    assert!(String::from_utf8_lossy(&out).contains("echo: ok"));
}

#[test]
fn line_limit_edge_8_mib_accepted_one_past_rejected() {
    let home = TempDir::new("h-8mib");
    let rec = "{\"type\":\"keep_alive\"}";
    let mut input = Vec::new();
    input.extend_from_slice(rec.as_bytes());
    input.resize(8_388_608, b' ');
    input.push(b'\n');
    input.extend_from_slice(rec.as_bytes());
    input.resize(input.len() + 8_388_609 - rec.len(), b' ');
    input.push(b'\n');
    let (status, out, err) = run_session(home.path(), &[], &input);
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert!(!err.contains("input line 1:"), "{err}");
    assert_eq!(
        last_line(&err),
        "agentx: input line 2: line too long (limit 8388608 bytes)"
    );
}

/// PROFILE §2b: `agentx-wire check` and `agentx` classify every line rejected for a duplicate
/// member alike, by the one classifier (`wire::classify_rejected_line`). For each line the
/// library verdict `check` reports is compared with what the real binary does with the same
/// line followed by a probe prompt: fatal (WIRE-021) ⇔ status 1 and the probe never runs;
/// record-level ⇔ status 0 and the probe's turn runs; a `user` reading ⇔ an input-error result.
#[test]
fn profile_2b_check_and_agentx_classify_a_duplicate_alike() {
    use agentx_wire::json::Parser;
    use agentx_wire::wire::check::{check_record, RecordCheck};
    use agentx_wire::wire::{classify_rejected_line, Direction, RejectedLineClass};

    let probe = b"{\"type\":\"user\",\"message\":\"probe\",\"parent_tool_use_id\":null}\n";
    let lines: [&[u8]; 10] = [
        br#"{"type":"attachment_import","version":1,"version":1}"#,
        br#"{"t\u0079pe":"attachment\u005fimport","x":1,"x":1}"#,
        br#"{"type":"user","message":"a","message":"b","parent_tool_use_id":null}"#,
        // A duplicated `type` is not trusted: the fatal reading wins in both programs.
        br#"{"type":"user","type":"attachment_import"}"#,
        br#"{"type":"attachment_import","type":"user"}"#,
        br#"{"type":"user","type":"user","message":"x","parent_tool_use_id":null}"#,
        br#"{"type":"keep_alive","a":1,"a":1}"#,
        br#"{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt","x":1,"x":2}}"#,
        br#"{"x":{"type":"attachment_import"},"type":"user","x":1}"#,
        br#"{"s":"\"type\":\"attachment_import\"","s":1}"#,
    ];
    let mut parser = Parser::new();
    for line in lines {
        let shown = String::from_utf8_lossy(line).into_owned();
        let RecordCheck::Error { kind, fatal, .. } =
            check_record(line, Direction::Input, &mut parser)
        else {
            panic!("check accepted {shown}");
        };
        assert_eq!(kind, "duplicate_member", "{shown}");
        let home = TempDir::new("h-2b");
        let mut input = line.to_vec();
        input.push(b'\n');
        input.extend_from_slice(probe);
        let (status, out, err) = run_session(home.path(), &[], &input);
        check_output(&out);
        let out = String::from_utf8_lossy(&out).into_owned();
        assert!(
            err.contains("agentx: input line 1: ambiguous JSON: duplicate member name"),
            "{shown}: {err}"
        );
        if fatal {
            assert_eq!(status, Some(1), "{shown}: check calls it fatal");
            assert!(!out.contains("echo: probe"), "{shown}: {out}");
        } else {
            assert_eq!(status, Some(0), "{shown}: check calls it record-level");
            assert!(out.contains("echo: probe"), "{shown}: {out}");
            let input_error = out.contains("\"errors\":[\"input error: ");
            let user = classify_rejected_line(line) == RejectedLineClass::User;
            assert_eq!(input_error, user, "{shown}: {out}");
        }
    }
}
