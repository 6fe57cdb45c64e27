//! The command line of the Claude Agent SDK profile (PROFILE §15) against the real binary:
//! `--verbose` selects it, an ignored option writes exactly its WARN line and the session runs,
//! a refused one is status 2 naming it before any output, and without `--verbose` every SDK
//! option is a usage error (the standalone profile stays as strict as it was).

use crate::harness;

use harness::{run, TempDir, SESSION_ARGS};

const SDK: [&str; 5] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
];

fn sdk_run(home: &TempDir, extra: &[&str], stdin: &[u8]) -> (Option<i32>, Vec<u8>, String) {
    let cwd = home.path().to_string_lossy().into_owned();
    let mut args = SDK.to_vec();
    args.extend_from_slice(extra);
    args.extend(["--cwd", cwd.as_str()]);
    run(home.path(), &args, stdin)
}

#[test]
fn ignored_options_get_exactly_their_warn_line_and_the_session_runs() {
    let home = TempDir::new("sdk-args-warn");
    let (status, stdout, stderr) = sdk_run(
        &home,
        &[
            "--betas=b1",
            "--fallback-model",
            "m2",
            "--debug",
            "--thinking=adaptive",
        ],
        b"",
    );
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.is_empty());
    let warns: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN")).collect();
    assert_eq!(
        warns,
        [
            "agentx: WARN --betas is not supported; ignored",
            "agentx: WARN --fallback-model is not supported; ignored",
            "agentx: WARN --debug is not supported; ignored",
            "agentx: WARN --thinking is not supported; ignored",
        ]
    );
    // Nothing of a value reaches stderr.
    assert!(!stderr.contains("b1") && !stderr.contains("m2"), "{stderr}");
}

/// PROFILE §8: a startup that fails writes one stderr line, status 1, nothing on stdout; the
/// WARN lines of ignored options and of an unknown `--tools` name (and the built-in
/// registry's notice) come only with a startup that succeeds.
#[test]
fn a_failed_startup_writes_its_one_line_without_the_warn_lines() {
    let home = TempDir::new("sdk-args-warn-fail");
    let missing = home.path().join("no-such-dir");
    let (status, stdout, stderr) = sdk_run(
        &home,
        &[
            "--betas=b1",
            "--debug",
            "--tools",
            "Read,Nope",
            "--add-dir",
            missing.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(status, Some(1));
    assert!(stdout.is_empty());
    assert_eq!(stderr, "agentx: --add-dir is not a directory\n");
}

#[test]
fn refused_options_exit_2_naming_the_option_before_any_output() {
    let home = TempDir::new("sdk-args-refused");
    for (args, line) in [
        (
            &[
                "--mcp-config",
                "{\"mcpServers\":{\"x\":{\"type\":\"stdio\"}}}",
            ][..],
            "agentx: --mcp-config: MCP server \"x\": it has no command (argument 7)",
        ),
        (
            &["--permission-prompt-tool=mcp__perm__ask"],
            "agentx: --permission-prompt-tool takes stdio (MCP permission-prompt tools are not \
             supported) (argument 6)",
        ),
        (
            &["--settings", "/etc/claude/settings.json"],
            "agentx: --settings is not supported: Claude Code settings are not read (agentx \
             reads settings.json in AgentX home) (argument 6)",
        ),
    ] {
        let (status, stdout, stderr) = sdk_run(&home, args, b"");
        assert_eq!(status, Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        assert_eq!(stderr.lines().next(), Some(line), "{args:?}");
    }
}

#[test]
fn sdk_options_are_usage_errors_without_verbose() {
    let home = TempDir::new("sdk-args-standalone");
    for (args, line) in [
        (
            &["--model", "agentx-echo"][..],
            "agentx: --model is only valid with --verbose (the Claude Agent SDK profile) \
             (argument 5)",
        ),
        (
            &["--betas=x"],
            "agentx: --betas is only valid with --verbose (the Claude Agent SDK profile) \
             (argument 5)",
        ),
    ] {
        let mut all = SESSION_ARGS.to_vec();
        all.extend_from_slice(args);
        let (status, stdout, stderr) = run(home.path(), &all, b"");
        assert_eq!(status, Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        assert_eq!(stderr.lines().next(), Some(line), "{args:?}");
    }
}

fn sdk_session(home: &TempDir, extra: &[&str]) -> harness::Agentx {
    let cwd = home.path().to_string_lossy().into_owned();
    let mut args: Vec<String> = SDK.iter().map(|s| s.to_string()).collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--cwd".to_string(), cwd]);
    harness::Agentx::spawn(home.path(), &args)
}

#[test]
fn the_sdks_initialize_and_user_records_are_accepted_only_with_verbose() {
    use serde_json::json;
    let py_init = json!({"type":"control_request","request_id":"req_1","request":{"subtype":"initialize","hooks":null}});
    let ts_init = json!({"type":"control_request","request_id":"r2","request":{"subtype":"initialize","systemPrompt":["Be terse."],"mcpServers":{}}});
    let user = |sid: &str, text: &str| json!({"type":"user","session_id":sid,"message":{"role":"user","content":text},"parent_tool_use_id":null});
    for (init, mcp_applied) in [(py_init.clone(), false), (ts_init, true)] {
        let home = TempDir::new("sdk-init");
        let mut a = sdk_session(&home, &[]);
        a.send(&init);
        let resp = a.until(|v| v["type"] == "control_response");
        let resp = &resp.last().unwrap()["response"];
        assert_eq!(resp["subtype"], "success", "{resp}");
        assert_eq!(
            resp["response"].get("mcp_servers_applied").is_some(),
            mcp_applied
        );
        a.send(&user("", "!system"));
        let turn = a.turn();
        let init = turn.iter().find(|v| v["subtype"] == "init").unwrap();
        assert_eq!(init["claude_code_version"], "2.1.333");
        assert_eq!(init["agentx_version"], env!("CARGO_PKG_VERSION"));
        let states: Vec<_> = turn
            .iter()
            .filter(|v| v["subtype"] == "session_state_changed")
            .collect();
        assert_eq!(states.len(), 2);
        assert!(states.iter().all(|s| s["sdk_host_only"] == true));
        let result = turn.iter().find(|v| v["type"] == "result").unwrap();
        let text = result["result"].as_str().unwrap();
        if mcp_applied {
            assert_eq!(text, "system: Be terse.");
        } else {
            // PROFILE §17: no system prompt set, agentx's default coding-agent message.
            assert!(
                text.starts_with("system: You are agentx, a coding agent"),
                "{text}"
            );
        }
        a.send(&user("default", "again"));
        let turn = a.turn();
        let result = turn.iter().find(|v| v["type"] == "result").unwrap();
        assert_eq!(result["result"], "echo: again");
        let done = a.finish();
        assert_eq!(done.status, Some(0));
    }
    // PROFILE §16: a malformed hook matcher is a correlated error naming the member, and does
    // not count as the initialize; a valid map is registered (`hooks_applied`), and the
    // response says `onFailure` is honoured.
    let home = TempDir::new("sdk-init-hooks");
    let mut a = sdk_session(&home, &[]);
    a.send(&json!({"type":"control_request","request_id":"h","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":null,"hookCallbackIds":["hook_0"],"onFailure":"sometimes"}]}}}));
    let resp = a.until(|v| v["type"] == "control_response");
    let resp = &resp.last().unwrap()["response"];
    assert_eq!(resp["subtype"], "error");
    assert!(
        resp["error"].as_str().unwrap().contains("onFailure"),
        "{resp}"
    );
    a.send(&json!({"type":"control_request","request_id":"h2","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":null,"hookCallbackIds":["hook_0"]}]}}}));
    let resp = a.until(|v| v["type"] == "control_response");
    let resp = &resp.last().unwrap()["response"];
    assert_eq!(resp["subtype"], "success");
    assert_eq!(resp["response"]["hooks_applied"], true);
    assert_eq!(resp["response"]["hook_on_failure_supported"], true);
    assert_eq!(a.finish().status, Some(0));
    // The standalone profile stays as strict: the same records are rejected there.
    let home = TempDir::new("sdk-init-standalone");
    let mut a = harness::Agentx::session(home.path(), &[]);
    a.send(&py_init);
    let resp = a.until(|v| v["type"] == "control_response");
    assert_eq!(resp.last().unwrap()["response"]["subtype"], "error");
    a.send(&user("", "hi"));
    let r = a.until(|v| v["type"] == "result");
    assert_eq!(r.last().unwrap()["subtype"], "error_during_execution");
    let done = a.finish();
    assert!(done.stdout.windows(13).all(|w| w != b"sdk_host_only"));
}

#[test]
fn a_tool_output_over_the_1_mib_line_is_cut_with_a_marker_and_the_turn_goes_on() {
    use serde_json::json;
    // PROFILE §15: no output line over 1,048,576 bytes in the SDK profile.
    let home = TempDir::new("sdk-cut");
    std::fs::write(home.path().join("big.txt"), "a".repeat(1_500_000)).unwrap();
    let mut a = sdk_session(&home, &[]);
    a.send(&json!({"type":"user","session_id":"","message":{"role":"user","content":"!tool Read {\"file_path\":\"big.txt\"}\n!say after"},"parent_tool_use_id":null}));
    let turn = a.turn();
    let i = a
        .seen
        .iter()
        .position(|v| v["type"] == "user")
        .expect("the tool_result record");
    let len = a.line_len(i);
    assert!(len <= 1_048_576, "{len}");
    assert!(len > 800_000, "{len}");
    let content = a.seen[i]["message"]["content"][0]["content"]
        .as_str()
        .unwrap();
    assert!(
        content.ends_with("bytes shown, to fit the 1,048,576-byte line limit]"),
        "{}",
        &content[content.len() - 120..]
    );
    assert_eq!(a.seen[i]["message"]["content"][0]["is_error"], false);
    let result = turn.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "after");
    a.finish().assert_exit_0_with_lines_within(1_048_576);
}
