//! Black-box: one-shot mode (PROFILE §13) in the three output formats.

use crate::harness;

use harness::*;
use serde_json::Value;

#[test]
fn text_prints_the_result_text() {
    let home = TempDir::new("p-text");
    let (status, out, _) = run_in_home(home.path(), &["-p", "hello there"]);
    assert_eq!(status, Some(0));
    assert_eq!(out, b"echo: hello there\n");
}

#[test]
fn json_prints_the_result_record() {
    let home = TempDir::new("p-json");
    let (status, out, _) = run_in_home(
        home.path(),
        &["-p", "!say one\n!say two", "--output-format", "json"],
    );
    assert_eq!(status, Some(0));
    assert_eq!(out.iter().filter(|b| **b == b'\n').count(), 1);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["type"], "result");
    assert_eq!(v["result"], "two");
    check_output(&out);
}

#[test]
fn stream_json_prints_every_record() {
    let home = TempDir::new("p-stream");
    let (status, out, _) = run_in_home(
        home.path(),
        &[
            "-p",
            "hi",
            "--output-format",
            "stream-json",
            "--include-partial-messages",
        ],
    );
    assert_eq!(status, Some(0));
    check_output(&out);
    let recs: Vec<Value> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let l = labels(&recs);
    assert_eq!(l.first().unwrap(), "system/init");
    assert!(l.iter().any(|s| s == "stream_event"));
    assert_eq!(
        &l[l.len() - 2..],
        ["result:success", "system/session_state_changed:idle"]
    );
}

#[test]
fn error_result_exits_1() {
    let home = TempDir::new("p-err");
    let (status, out, _) = run_in_home(
        home.path(),
        &["-p", "!error rate_limit", "--output-format", "json"],
    );
    assert_eq!(status, Some(1));
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["subtype"], "error_during_execution");
}

#[test]
fn ask_without_host_or_hook_is_denied() {
    let home = TempDir::new("p-ask");
    let (status, out, _) = run_in_home(
        home.path(),
        &[
            "-p",
            "!tool Bash {\"command\":\"echo hi\"}",
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(status, Some(0));
    let recs: Vec<Value> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let tr = recs
        .iter()
        .find(|r| label(r) == "user:tool_result:error")
        .unwrap();
    assert_eq!(
        tr["message"]["content"][0]["content"],
        "no permission prompt available"
    );
    let r = recs.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(r["permission_denials"].as_array().unwrap().len(), 1);
    assert!(!recs.iter().any(|r| r["type"] == "control_request"));
}

#[test]
fn rejected_attachment_prints_nothing_on_stdout() {
    let home = TempDir::new("p-att");
    let f = home.path().join("notes.txt");
    std::fs::write(&f, b"plain text is not an attachment type").unwrap();
    let (status, out, err) =
        run_in_home(home.path(), &["-p", "see", "--attach", f.to_str().unwrap()]);
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(
        err.lines().last().unwrap(),
        "agentx: attachment rejected: mime_unsupported"
    );
}
