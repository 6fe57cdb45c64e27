//! Black-box: hostile input to the real binary (PROFILE §2a, §5; WIRE-001, WIRE-014): the
//! documented diagnostics and exit codes, never a panic or a hang.

#[path = "common/agentx.rs"]
mod harness;

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
