//! The SDK profile's option semantics (PROFILE §15, §16) against the real binary with
//! `agentx-echo`: `--max-turns`, `--max-budget-usd`, `--tools`/`--allowedTools`/
//! `--disallowedTools`, `--add-dir`, `--model`/`--effort`, `--session-id`, `--continue`,
//! `--fork-session`, `--setting-sources` and `stop_task`.

use crate::harness;

use harness::{check_output, is_result, is_state, run, write_hook, Agentx, TempDir};
use serde_json::{json, Value};

const SDK: [&str; 5] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
];

fn user_line(text: &str) -> String {
    json!({"type":"user","message":{"role":"user","content":text},"parent_tool_use_id":null})
        .to_string()
        + "\n"
}

/// Runs the SDK profile with `extra`, `--cwd cwd` and one user record per prompt.
fn sdk_in(
    home: &TempDir,
    cwd: &std::path::Path,
    extra: &[&str],
    prompts: &[&str],
) -> (Option<i32>, Vec<Value>, String) {
    let cwd = cwd.to_string_lossy().into_owned();
    let mut args = SDK.to_vec();
    args.extend_from_slice(extra);
    args.extend(["--cwd", cwd.as_str()]);
    let stdin: String = prompts.iter().map(|p| user_line(p)).collect();
    let (status, stdout, stderr) = run(home.path(), &args, stdin.as_bytes());
    check_output(&stdout);
    let records = stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    (status, records, stderr)
}

fn sdk(home: &TempDir, extra: &[&str], prompts: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    sdk_in(home, home.path(), extra, prompts)
}

fn results(records: &[Value]) -> Vec<&Value> {
    records.iter().filter(|v| is_result(v)).collect()
}

fn tool_results(records: &[Value]) -> Vec<(String, bool)> {
    records
        .iter()
        .filter(|v| v["type"] == "user")
        .map(|v| {
            let b = &v["message"]["content"][0];
            (
                b["content"].as_str().unwrap_or("").to_string(),
                b["is_error"] == true,
            )
        })
        .collect()
}

#[test]
fn max_turns_ends_a_tool_loop_with_error_max_turns() {
    let home = TempDir::new("sdkopt-turns");
    let (status, recs, stderr) = sdk(
        &home,
        &["--max-turns=1"],
        &["!tool Read {\"file_path\":\"a.txt\"}\n!say never"],
    );
    assert_eq!(status, Some(0), "{stderr}");
    let r = results(&recs)[0];
    assert_eq!(r["subtype"], "error_max_turns");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["errors"], json!(["max turns reached: 1"]));
    assert_eq!(tool_results(&recs).len(), 1, "the tool's result came first");
    assert!(!recs
        .iter()
        .any(|v| v["type"] == "assistant" && v["message"]["content"][0]["text"] == "never"));
}

#[test]
fn max_budget_stops_later_turns() {
    let home = TempDir::new("sdkopt-budget");
    let (status, recs, stderr) = sdk(
        &home,
        &["--max-budget-usd", "0.5"],
        &[
            "!cost 0.25\n!say one",
            "!cost 0.25\n!say two",
            "three",
            "!cost null\n!say four",
        ],
    );
    assert_eq!(status, Some(0), "{stderr}");
    let rs = results(&recs);
    assert_eq!(rs.len(), 4);
    assert_eq!(rs[0]["subtype"], "success");
    assert_eq!(
        rs[1]["subtype"], "success",
        "the request that reaches it completes"
    );
    for r in &rs[2..] {
        assert_eq!(r["subtype"], "error_max_budget_usd");
        assert_eq!(r["num_turns"], 0);
        assert_eq!(r["errors"], json!(["budget reached: 0.5 USD"]));
    }
    // Unknown costs never count: a null-priced session runs on under a tiny budget.
    let (_, recs, _) = sdk(
        &home,
        &["--max-budget-usd=0.000001"],
        &["!cost null\n!say a", "!cost null\n!say b"],
    );
    assert!(results(&recs).iter().all(|r| r["subtype"] == "success"));
}

#[test]
fn tool_options_shape_init_and_decide_uses() {
    let home = TempDir::new("sdkopt-tools");
    // --tools narrows the offered set; a plain disallowed name leaves it.
    let (_, recs, stderr) = sdk(
        &home,
        &["--tools", "Read,Bash,Fetch", "--disallowedTools=Bash"],
        &["!tool Bash {\"command\":\"echo hi\"}"],
    );
    let init = recs.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(init["tools"], json!(["Read"]));
    assert_eq!(
        tool_results(&recs),
        [("unknown tool Bash".to_string(), true)]
    );
    assert!(
        stderr.contains("agentx: WARN --tools names no tool \"Fetch\"; it is not offered"),
        "{stderr}"
    );
    // --tools= offers none.
    let (_, recs, _) = sdk(&home, &["--tools="], &["hi"]);
    let init = recs.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(init["tools"], json!([]));
    // Without a prompt tool an ask is denied; --allowedTools Bash(echo:*) runs it unasked.
    let echo = "!tool Bash {\"command\":\"echo hi\"}";
    let (_, recs, _) = sdk(&home, &[], &[echo]);
    assert_eq!(
        tool_results(&recs),
        [("no permission prompt available".to_string(), true)]
    );
    let (_, recs, _) = sdk(&home, &["--allowedTools", "Bash(echo:*)"], &[echo]);
    let tr = tool_results(&recs);
    assert!(!tr[0].1 && tr[0].0.contains("hi"), "{tr:?}");
    // A chained command is not covered by the prefix.
    let (_, recs, _) = sdk(
        &home,
        &["--allowedTools", "Bash(echo:*)"],
        &["!tool Bash {\"command\":\"echo hi; echo there\"}"],
    );
    assert_eq!(
        tool_results(&recs),
        [("no permission prompt available".to_string(), true)]
    );
    // A disallowed pattern denies even in bypass mode, with a permission_denials entry.
    let (_, recs, _) = sdk(
        &home,
        &[
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools",
            "Bash(rm:*)",
        ],
        &["!tool Bash {\"command\":\"rm -f nothing\"}"],
    );
    assert_eq!(
        tool_results(&recs),
        [("denied by --disallowedTools".to_string(), true)]
    );
    assert_eq!(
        results(&recs)[0]["permission_denials"][0]["tool_name"],
        "Bash"
    );
    // A malformed pattern is a usage error before any output.
    let (status, recs, stderr) = sdk(&home, &["--allowedTools=Read(x)"], &["hi"]);
    assert_eq!(status, Some(2));
    assert!(recs.is_empty());
    assert!(
        stderr.starts_with(
            "agentx: --allowedTools: only Bash takes a pattern (Bash(PREFIX:*) or Bash(CMD))"
        ),
        "{stderr}"
    );
}

#[test]
fn add_dir_counts_as_inside_the_cwd() {
    let home = TempDir::new("sdkopt-adddir");
    let cwd = home.path().join("cwd");
    let other = home.path().join("other");
    std::fs::create_dir_all(&cwd).unwrap();
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("f.txt"), "added\n").unwrap();
    let read = format!(
        "!tool Read {{\"file_path\":\"{}\"}}",
        other.join("f.txt").display()
    );
    let (_, recs, _) = sdk_in(&home, &cwd, &[], &[&read]);
    assert_eq!(
        tool_results(&recs),
        [("no permission prompt available".to_string(), true)]
    );
    let (_, recs, stderr) = sdk_in(&home, &cwd, &["--add-dir", "../other"], &[&read]);
    let tr = tool_results(&recs);
    assert!(!tr[0].1 && tr[0].0.contains("added"), "{tr:?} {stderr}");
    let (status, recs, stderr) = sdk_in(&home, &cwd, &["--add-dir", "../missing"], &["hi"]);
    assert_eq!(status, Some(1));
    assert!(recs.is_empty());
    assert_eq!(
        stderr.lines().last(),
        Some("agentx: --add-dir is not a directory")
    );
}

#[test]
fn model_and_effort_selection() {
    let home = TempDir::new("sdkopt-model");
    let (status, recs, stderr) = sdk(&home, &["--model", "agentx-echo"], &["hi"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(results(&recs)[0]["subtype"], "success");
    let (status, recs, stderr) = sdk(&home, &["--model=gpt-none"], &["hi"]);
    assert_eq!(status, Some(1));
    assert!(recs.is_empty());
    assert_eq!(
        stderr.lines().last(),
        Some("agentx: no provider serves model \"gpt-none\"")
    );
    std::fs::write(
        home.path().join("auth.json"),
        r#"{"version":2,"providers":[
          {"id":"a","type":"scripted","model":"m1"},
          {"id":"b","type":"scripted","model":"m1"},
          {"id":"c","type":"scripted","model":"m2","reasoning":{"efforts":["low","high"],"default_effort":"high"}}]}"#,
    )
    .unwrap();
    let (status, _, stderr) = sdk(&home, &["--model", "m1"], &["hi"]);
    assert_eq!(status, Some(1));
    assert_eq!(
        stderr.lines().last(),
        Some("agentx: model \"m1\" is served by several providers; choose one with --provider")
    );
    let (status, recs, stderr) = sdk(&home, &["--model", "m2", "--effort", "low"], &["hi"]);
    assert_eq!(status, Some(0), "{stderr}");
    let init = recs.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(init["provider"], "c");
    let (status, recs, stderr) = sdk(&home, &["--model", "m2", "--effort", "max"], &["hi"]);
    assert_eq!(status, Some(1));
    assert!(recs.is_empty());
    assert_eq!(
        stderr.lines().last(),
        Some("agentx: provider \"c\" does not declare the effort \"max\"")
    );
}

fn session_of(recs: &[Value]) -> String {
    results(recs)[0]["session_id"].as_str().unwrap().to_string()
}

fn history(recs: &[Value]) -> String {
    recs.iter()
        .filter(|v| v["type"] == "assistant")
        .filter_map(|v| v["message"]["content"][0]["text"].as_str())
        .find(|t| t.starts_with("history:"))
        .unwrap_or("")
        .to_string()
}

#[test]
fn session_id_continue_and_fork() {
    let home = TempDir::new("sdkopt-sessions");
    let sid = "7d3c1a2b-4e5f-4a6b-8c7d-0123456789ab";
    let (status, recs, stderr) = sdk(&home, &["--session-id", sid], &["one", "two"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(session_of(&recs), sid);
    let (status, recs, stderr) = sdk(&home, &[&format!("--session-id={sid}")], &["x"]);
    assert_eq!(status, Some(1));
    assert!(recs.is_empty());
    assert_eq!(
        stderr.lines().last(),
        Some(format!("agentx: session {sid} already exists").as_str())
    );
    // --continue: the session updated last, the same id, the prior context.
    let (status, recs, stderr) = sdk(&home, &["--continue"], &["!history"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(session_of(&recs), sid);
    assert_eq!(history(&recs), "history: 4 messages");
    let transcript = home
        .path()
        .join("sessions")
        .join(sid)
        .join("transcript.ndjson");
    let before = std::fs::read(&transcript).unwrap();
    // --fork-session: a new id over a copy; the original is untouched.
    let (status, recs, stderr) = sdk(&home, &["--resume", sid, "--fork-session"], &["!history"]);
    assert_eq!(status, Some(0), "{stderr}");
    let forked = session_of(&recs);
    assert_ne!(forked, sid);
    assert_eq!(history(&recs), "history: 6 messages");
    assert_eq!(std::fs::read(&transcript).unwrap(), before);
    let copy = std::fs::read(
        home.path()
            .join("sessions")
            .join(&forked)
            .join("transcript.ndjson"),
    )
    .unwrap();
    assert!(copy.starts_with(&before) && copy.len() > before.len());
    // The fork is now the session updated last.
    let (_, recs, _) = sdk(&home, &["--continue"], &["hi"]);
    assert_eq!(session_of(&recs), forked);
    // A fork with --session-id takes that id; one needs --resume or --continue.
    let named = "7d3c1a2b-4e5f-4a6b-8c7d-0123456789ac";
    let (_, recs, _) = sdk(
        &home,
        &["--continue", "--fork-session", "--session-id", named],
        &["hi"],
    );
    assert_eq!(session_of(&recs), named);
    let (status, _, stderr) = sdk(&home, &["--fork-session"], &["hi"]);
    assert_eq!(status, Some(1));
    assert_eq!(
        stderr.lines().last(),
        Some("agentx: --fork-session needs --resume or --continue")
    );
    let fresh = TempDir::new("sdkopt-sessions-empty");
    let (status, _, stderr) = sdk(&fresh, &["--continue"], &["hi"]);
    assert_eq!(status, Some(1));
    assert_eq!(
        stderr.lines().last(),
        Some("agentx: no session to continue in this home")
    );
}

#[test]
fn setting_sources_gate_settings_json() {
    let home = TempDir::new("sdkopt-settings");
    write_hook(&home.0, "read line; echo '{\"decision\":\"allow\"}'");
    let bash = "!tool Bash {\"command\":\"echo via-hook\"}";
    for (extra, allowed) in [
        (&[][..], true),
        (&["--setting-sources=user,project"][..], true),
        (&["--setting-sources="][..], false),
        (&["--setting-sources", "project,local"][..], false),
    ] {
        let (_, recs, stderr) = sdk(&home, extra, &[bash]);
        let tr = tool_results(&recs);
        assert_eq!(!tr[0].1, allowed, "{extra:?}: {tr:?} {stderr}");
    }
}

#[test]
fn stop_task_stops_a_running_task() {
    let home = TempDir::new("sdkopt-stoptask");
    let cwd = home.path().to_string_lossy().into_owned();
    let mut args: Vec<String> = SDK.iter().map(|s| s.to_string()).collect();
    args.extend(["--cwd".to_string(), cwd]);
    let mut a = Agentx::spawn(home.path(), &args);
    a.send(&serde_json::from_str(user_line("!task t1 100 1000\n!say started").trim()).unwrap());
    a.until(|v| v["subtype"] == "task_started");
    a.send(&json!({"type":"control_request","request_id":"s1","request":{"subtype":"stop_task","task_id":"nope"}}));
    let got = a.until(|v| v["type"] == "control_response");
    let resp = &got.last().unwrap()["response"];
    assert_eq!(resp["subtype"], "error");
    assert_eq!(resp["error"], "no task nope");
    a.send(&json!({"type":"control_request","request_id":"s2","request":{"subtype":"stop_task","task_id":"t1"}}));
    let got = a.until(|v| is_state(v, "idle"));
    let note = got
        .iter()
        .find(|v| v["subtype"] == "task_notification")
        .expect("a task_notification");
    assert_eq!(note["status"], "stopped");
    let pos = |p: &dyn Fn(&Value) -> bool| got.iter().position(p).unwrap();
    assert!(
        pos(&|v| v["subtype"] == "task_notification") < pos(&|v| v["type"] == "control_response")
    );
    assert!(pos(&|v| v["type"] == "control_response") < pos(&|v| is_result(v)));
    let f = a.finish();
    assert_eq!(f.status, Some(0));
}

/// PROFILE §15: `--session-id` makes a new session and only an existing id exits 1 with
/// `session <id> already exists`. A startup that fails after the session was created (here
/// `--add-dir` naming no directory, checked after the session is opened) removes it again,
/// with a fork's copy likewise: the id is free for the next try, `--continue` still picks
/// the session the host ran, and the original is untouched.
#[test]
fn a_failed_startup_leaves_no_new_session_behind() {
    let home = TempDir::new("sdkopt-failed-start");
    let ran = "7d3c1a2b-4e5f-4a6b-8c7d-0123456789ad";
    let (status, _, stderr) = sdk(&home, &["--session-id", ran], &["one"]);
    assert_eq!(status, Some(0), "{stderr}");
    let sessions = home.path().join("sessions");
    let listed = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&sessions)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    let fresh = "7d3c1a2b-4e5f-4a6b-8c7d-0123456789ae";
    let missing = home.path().join("no-such-dir");
    let missing = missing.to_str().unwrap();
    for extra in [
        &["--session-id", fresh, "--add-dir", missing][..],
        &[
            "--resume",
            ran,
            "--fork-session",
            "--session-id",
            fresh,
            "--add-dir",
            missing,
        ],
        &["--resume", ran, "--fork-session", "--add-dir", missing],
    ] {
        let (status, recs, stderr) = sdk(&home, extra, &["hi"]);
        assert_eq!(status, Some(1), "{extra:?}");
        assert!(recs.is_empty());
        assert_eq!(
            stderr, "agentx: --add-dir is not a directory\n",
            "{extra:?}"
        );
        assert_eq!(
            listed(),
            [ran],
            "{extra:?}: nothing new is left in the store"
        );
    }
    let (status, recs, stderr) = sdk(&home, &["--session-id", fresh], &["two"]);
    assert_eq!(status, Some(0), "the id is free again: {stderr}");
    assert_eq!(session_of(&recs), fresh);
    let (status, recs, _) = sdk(&home, &["--continue"], &["!history"]);
    assert_eq!(status, Some(0));
    assert_eq!(session_of(&recs), fresh);
}
