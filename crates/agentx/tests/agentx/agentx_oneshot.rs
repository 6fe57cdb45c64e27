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

/// `-p '!tool Bash {"command":"echo hi"}' --output-format stream-json` in `home`: the
/// status and the records written.
fn one_bash_call(home: &TempDir) -> (Option<i32>, Vec<Value>) {
    let (status, out, _) = run_in_home(
        home.path(),
        &[
            "-p",
            "!tool Bash {\"command\":\"echo hi\"}",
            "--output-format",
            "stream-json",
        ],
    );
    let recs = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    (status, recs)
}

#[test]
fn ask_without_host_or_hook_is_denied() {
    let home = TempDir::new("p-ask");
    let (status, recs) = one_bash_call(&home);
    assert_eq!(status, Some(0));
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

/// PROFILE §10: in `-p` mode a configured hook decides an ask alone (there is no host): an
/// allow runs the tool, a deny is the call's error with the hook's message; no
/// `control_request` is written either way.
#[test]
fn a_configured_hook_decides_without_a_host() {
    for (tag, answer, want, is_error) in [
        (
            "p-hook-allow",
            r#"{"decision":"allow"}"#,
            "hi\nexit code: 0",
            false,
        ),
        (
            "p-hook-deny",
            r#"{"decision":"deny","message":"hook says no"}"#,
            "hook says no",
            true,
        ),
    ] {
        let home = TempDir::new(tag);
        write_hook(home.path(), &format!("cat >/dev/null; echo '{answer}'"));
        let (status, recs) = one_bash_call(&home);
        assert_eq!(status, Some(0), "{tag}");
        assert!(
            !recs.iter().any(|r| r["type"] == "control_request"),
            "{tag}"
        );
        let tr = recs
            .iter()
            .find(|r| label(r).starts_with("user:tool_result"))
            .unwrap();
        assert_eq!(tr["message"]["content"][0]["content"], want, "{tag}");
        assert_eq!(tr["message"]["content"][0]["is_error"], is_error, "{tag}");
        let r = recs.iter().find(|r| is_result(r)).unwrap();
        let denials = r["permission_denials"].as_array().unwrap().len();
        assert_eq!(denials, usize::from(is_error), "{tag}");
    }
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
    // Exactly that line: this home has no auth.json, and the built-in registry's notice comes
    // only with a run that starts.
    assert_eq!(err, "agentx: attachment rejected: mime_unsupported\n");
}

/// PROFILE §13 and WIRE-013 with a provider key that ends in `\n` (`tail\n`): the text path's
/// own line ending would complete it after `!say xtail`, so `text` refuses (status 1, nothing
/// on stdout, the §5 line); `json` and `stream-json` print records that never hold those bytes.
#[test]
fn a_key_completed_by_the_text_line_ending_is_refused_in_every_format() {
    let home = TempDir::new("p-key-lf");
    std::fs::write(
        home.path().join("auth.json"),
        r#"{"version":2,"providers":[{"id":"local","type":"scripted","model":"agentx-echo","default":true},{"id":"oa","type":"openai","model":"gpt-x","api_key":"tail\n"}]}"#,
    )
    .unwrap();
    let (status, out, err) = run_in_home(home.path(), &["-p", "!say xtail"]);
    assert_eq!(status, Some(1), "{err}");
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    assert_eq!(
        err.lines().last(),
        Some("agentx: output refused: record failed credential validation"),
        "{err}"
    );
    for format in ["json", "stream-json"] {
        let (status, out, err) = run_in_home(
            home.path(),
            &["-p", "!say xtail", "--output-format", format],
        );
        assert_eq!(status, Some(0), "{format}: {err}");
        assert!(!out.is_empty(), "{format}");
        assert!(
            !out.windows(5).any(|w| w == b"tail\n"),
            "{format}: {}",
            String::from_utf8_lossy(&out)
        );
    }
    // The same prompt without the key's line ending in reach: printed as usual.
    let (status, out, _) = run_in_home(home.path(), &["-p", "!say xtail and more"]);
    assert_eq!(status, Some(0));
    assert_eq!(out, b"xtail and more\n");
}
