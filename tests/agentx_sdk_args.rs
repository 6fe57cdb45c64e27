//! The command line of the Claude Agent SDK profile (PROFILE §15) against the real binary:
//! `--verbose` selects it, an ignored option writes exactly its WARN line and the session runs,
//! a refused one is status 2 naming it before any output, and without `--verbose` every SDK
//! option is a usage error (the standalone profile stays as strict as it was).

#[path = "common/agentx.rs"]
mod harness;

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

#[test]
fn refused_options_exit_2_naming_the_option_before_any_output() {
    let home = TempDir::new("sdk-args-refused");
    for (args, line) in [
        (
            &[
                "--mcp-config",
                "{\"mcpServers\":{\"x\":{\"type\":\"stdio\"}}}",
            ][..],
            "agentx: --mcp-config is not supported: MCP servers are not supported yet (argument 6)",
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
