//! The `agentx` argument parser: every flag, its value forms, and its errors.

use super::*;

fn v(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

fn ok(a: &[&str]) -> AgentxArgs {
    parse(&v(a)).unwrap_or_else(|e| panic!("{a:?}: {e}"))
}

fn err(a: &[&str]) -> String {
    match parse(&v(a)) {
        Ok(parsed) => panic!("{a:?} parsed as {parsed:?}"),
        Err(e) => e.to_string(),
    }
}

const STREAM: [&str; 4] = [
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
];

#[test]
fn version_and_help_stand_alone() {
    assert_eq!(ok(&["--version"]), AgentxArgs::Version);
    assert_eq!(ok(&["--help"]), AgentxArgs::Help);
    assert_eq!(
        err(&["--version", "--help"]),
        "--version takes no other arguments (argument 1)"
    );
    assert_eq!(
        err(&["--provider", "x", "--help"]),
        "--help takes no other arguments (argument 3)"
    );
    assert_eq!(
        err(&["--version", "--version"]),
        "--version given more than once (argument 2)"
    );
    assert_eq!(err(&["-h"]), "unknown option (argument 1)");
    assert_eq!(
        err(&["--version", "--"]),
        "--version takes no other arguments (argument 1)"
    );
}

#[test]
fn list_providers_grammar() {
    let f = |format| AgentxArgs::ListProviders { format };
    assert_eq!(ok(&["--list-providers"]), f(Format::Text));
    assert_eq!(ok(&["--list-providers", "--"]), f(Format::Text));
    assert_eq!(
        ok(&["--list-providers", "--output-format", "json"]),
        f(Format::Json)
    );
    assert_eq!(
        ok(&["--output-format", "json", "--list-providers", "--"]),
        f(Format::Json)
    );
    assert_eq!(
        ok(&["--output-format", "text", "--list-providers"]),
        f(Format::Text)
    );
    for (bad, msg) in [
        (
            &["--list-providers", "--list-providers"][..],
            "--list-providers given more than once (argument 2)",
        ),
        (
            &["--list-providers", "--output-format"],
            "--output-format needs a value (argument 2)",
        ),
        (
            &["--list-providers", "--output-format", "stream-json"],
            "--output-format takes text or json with --list-providers (argument 3)",
        ),
        (
            &[
                "--list-providers",
                "--output-format",
                "json",
                "--output-format",
                "json",
            ],
            "--output-format given more than once (argument 4)",
        ),
        (
            &["--list-providers", "hello"],
            "unexpected operand (argument 2)",
        ),
        (
            &["--list-providers", "--", "hello"],
            "nothing may follow the final -- (argument 3)",
        ),
        (
            &["--list-providers", "--", "--"],
            "nothing may follow the final -- (argument 3)",
        ),
        (
            &["--list-providers", "--help"],
            "--help takes no other arguments (argument 2)",
        ),
        (
            &["--list-providers", "--provider", "a"],
            "--provider is not valid with --list-providers (argument 2)",
        ),
        (
            &["--list-providers", "--attach", "a"],
            "--attach is not valid with --list-providers (argument 2)",
        ),
        (
            &["--list-providers", "-p", "a"],
            "-p is not valid with --list-providers (argument 2)",
        ),
        (
            &["--list-providers", "--output-format=json"],
            "unknown option (argument 2)",
        ),
        (
            &["--", "--list-providers"],
            "nothing may follow the final -- (argument 2)",
        ),
        (
            &["--list-providers", "--version"],
            "--version takes no other arguments (argument 2)",
        ),
        (
            &["--output-format", "json"],
            "stream-json mode needs --input-format stream-json",
        ),
    ] {
        assert_eq!(err(bad), msg, "{bad:?}");
    }
}

#[test]
fn stream_json_session_with_every_option_in_any_order() {
    assert_eq!(ok(&STREAM), AgentxArgs::Session(SessionArgs::default()));
    let full = ok(&[
        "--cwd",
        "/w",
        "--no-attachments",
        "--output-format",
        "stream-json",
        "--resume",
        "0b5e0c2e-8f7a-4b1c-9d3e-2a6f4c8b1d7e",
        "--replay-user-messages",
        "--permission-mode",
        "acceptEdits",
        "--include-partial-messages",
        "--input-format",
        "stream-json",
        "--provider",
        "local",
    ]);
    assert_eq!(
        full,
        AgentxArgs::Session(SessionArgs {
            common: CommonArgs {
                provider: Some("local".into()),
                permission_mode: Some(PermissionMode::AcceptEdits),
                include_partial_messages: true,
                resume: Some("0b5e0c2e-8f7a-4b1c-9d3e-2a6f4c8b1d7e".into()),
                cwd: Some(PathBuf::from("/w")),
                no_attachments: true,
            },
            replay_user_messages: true,
            mcp_configs: Vec::new(),
        })
    );
    for mode in PermissionMode::ALL {
        let mut a = STREAM.to_vec();
        a.extend(["--permission-mode", mode.as_str()]);
        let AgentxArgs::Session(s) = ok(&a) else {
            panic!("not a session")
        };
        assert_eq!(s.common.permission_mode(), *mode);
    }
    let AgentxArgs::Session(s) = ok(&STREAM) else {
        panic!("not a session")
    };
    assert_eq!(s.common.permission_mode(), PermissionMode::Default);
}

#[test]
fn stream_json_session_usage_errors() {
    let with = |extra: &[&'static str]| {
        let mut a = STREAM.to_vec();
        a.extend_from_slice(extra);
        err(&a)
    };
    assert_eq!(
        with(&["--attach", "f"]),
        "--attach is not valid in stream-json mode (argument 5)"
    );
    assert_eq!(
        with(&["--"]),
        "-- is only valid with --list-providers (argument 5)"
    );
    assert_eq!(with(&["prompt"]), "unexpected operand (argument 5)");
    assert_eq!(with(&["--bogus"]), "unknown option (argument 5)");
    assert_eq!(
        with(&["--replay-user-messages", "--replay-user-messages"]),
        "--replay-user-messages given more than once (argument 6)"
    );
    assert_eq!(with(&["--cwd"]), "--cwd needs a value (argument 5)");
    assert_eq!(
        with(&["--permission-mode", "auto"]),
        "--permission-mode takes default, acceptEdits, plan or bypassPermissions (argument 6)"
    );
    assert_eq!(
        with(&["--permission-mode", "Plan"]),
        "--permission-mode takes default, acceptEdits, plan or bypassPermissions (argument 6)"
    );
    assert_eq!(
        err(&["--input-format", "stream-json"]),
        "stream-json mode needs --output-format stream-json"
    );
    assert_eq!(
        err(&["--output-format", "stream-json"]),
        "stream-json mode needs --input-format stream-json"
    );
    assert_eq!(
        err(&["--input-format", "text", "--output-format", "stream-json"]),
        "--input-format takes stream-json without -p (argument 2)"
    );
    assert_eq!(
        err(&["--input-format", "stream-json", "--output-format", "json"]),
        "--output-format takes stream-json without -p (argument 4)"
    );
    assert_eq!(
        err(&["--provider", "local"]),
        "no mode given: use --list-providers, --input-format stream-json --output-format \
         stream-json, -p PROMPT, --version or --help"
    );
    assert_eq!(err(&[]), err(&["--provider", "local"]));
}

#[test]
fn one_shot_with_repeated_attach_and_every_option() {
    assert_eq!(
        ok(&["-p", "hi"]),
        AgentxArgs::OneShot(OneShotArgs {
            prompt: "hi".into(),
            ..OneShotArgs::default()
        })
    );
    let full = ok(&[
        "--attach",
        "a.png",
        "--output-format",
        "stream-json",
        "-p",
        "--list-providers",
        "--attach",
        "b.pdf",
        "--provider",
        "openai",
        "--permission-mode",
        "plan",
        "--include-partial-messages",
        "--resume",
        "id",
        "--cwd",
        "/tmp",
        "--no-attachments",
        "--attach",
        "a.png",
    ]);
    assert_eq!(
        full,
        AgentxArgs::OneShot(OneShotArgs {
            common: CommonArgs {
                provider: Some("openai".into()),
                permission_mode: Some(PermissionMode::Plan),
                include_partial_messages: true,
                resume: Some("id".into()),
                cwd: Some(PathBuf::from("/tmp")),
                no_attachments: true,
            },
            // A value is taken verbatim, even when it looks like an option.
            prompt: "--list-providers".into(),
            attach: ["a.png", "b.pdf", "a.png"].map(PathBuf::from).to_vec(),
            output_format: OneShotFormat::StreamJson,
        })
    );
    for (text, format) in [
        ("text", OneShotFormat::Text),
        ("json", OneShotFormat::Json),
        ("stream-json", OneShotFormat::StreamJson),
    ] {
        let AgentxArgs::OneShot(o) = ok(&["-p", "x", "--output-format", text]) else {
            panic!("not one-shot")
        };
        assert_eq!(o.output_format, format);
    }
    let AgentxArgs::OneShot(o) = ok(&["-p", ""]) else {
        panic!("not one-shot")
    };
    assert_eq!(o.prompt, "");
}

#[test]
fn one_shot_usage_errors() {
    for (bad, msg) in [
        (&["-p"][..], "-p needs a value (argument 1)"),
        (
            &["-p", "a", "-p", "b"],
            "-p given more than once (argument 3)",
        ),
        (
            &["-p", "a", "--attach"],
            "--attach needs a value (argument 3)",
        ),
        (
            &["-p", "a", "--output-format", "yaml"],
            "--output-format takes text, json or stream-json with -p (argument 4)",
        ),
        (
            &["-p", "a", "--input-format", "stream-json"],
            "--input-format is not valid with -p (argument 3)",
        ),
        (
            &["--replay-user-messages", "-p", "a"],
            "--replay-user-messages is not valid with -p (argument 1)",
        ),
        (&["-p", "a", "extra"], "unexpected operand (argument 3)"),
        (
            &["-p", "a", "--"],
            "-- is only valid with --list-providers (argument 3)",
        ),
        (&["--prompt", "a"], "unknown option (argument 1)"),
        (&["-p=a"], "unknown option (argument 1)"),
        (&["--attach", "f"], "--attach needs -p PROMPT (argument 1)"),
        (
            &["--resume", "a", "-p", "x", "--resume", "b"],
            "--resume given more than once (argument 5)",
        ),
    ] {
        assert_eq!(err(bad), msg, "{bad:?}");
    }
}

const SDK: [&str; 5] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
];

fn sdk_ok(extra: &[&str]) -> SdkSessionArgs {
    let mut a = SDK.to_vec();
    a.extend_from_slice(extra);
    match ok(&a) {
        AgentxArgs::SdkSession(s) => *s,
        other => panic!("{a:?} parsed as {other:?}"),
    }
}

fn sdk_err(extra: &[&str]) -> String {
    let mut a = SDK.to_vec();
    a.extend_from_slice(extra);
    err(&a)
}

#[test]
fn verbose_selects_the_sdk_profile() {
    // PROFILE §15: what both SDKs always pass.
    assert_eq!(sdk_ok(&[]), SdkSessionArgs::default());
    // The Python SDK's default command line.
    let py = sdk_ok(&["--system-prompt", ""]);
    assert_eq!(py.sdk.system_prompt.as_deref(), Some(""));
    assert!(!py.sdk.permission_prompt_tool);
    // Standalone options keep their meaning in the profile.
    let s = sdk_ok(&["--replay-user-messages", "--cwd=/w", "--provider", "local"]);
    assert!(s.session.replay_user_messages);
    assert_eq!(s.session.common.cwd, Some(PathBuf::from("/w")));
    assert_eq!(s.session.common.provider.as_deref(), Some("local"));
}

#[test]
fn every_value_option_takes_the_equals_form() {
    // PROFILE §15 "Option syntax (both profiles)".
    assert_eq!(
        ok(&[
            "--input-format=stream-json",
            "--output-format=stream-json",
            "--resume=abc",
            "--permission-mode=plan",
            "--provider=local",
            "--cwd=",
        ]),
        AgentxArgs::Session(SessionArgs {
            common: CommonArgs {
                provider: Some("local".into()),
                permission_mode: Some(PermissionMode::Plan),
                resume: Some("abc".into()),
                cwd: Some(PathBuf::new()),
                ..CommonArgs::default()
            },
            replay_user_messages: false,
            mcp_configs: Vec::new(),
        })
    );
    let AgentxArgs::OneShot(o) = ok(&[
        "-p",
        "x",
        "--attach=a",
        "--attach",
        "b",
        "--output-format=json",
    ]) else {
        panic!("not one-shot")
    };
    assert_eq!(o.attach, ["a", "b"].map(PathBuf::from).to_vec());
    assert_eq!(o.output_format, OneShotFormat::Json);
    // `=` splits at the first `=`; the rest is the value, verbatim.
    let s = sdk_ok(&["--system-prompt=a=b", "--append-system-prompt="]);
    assert_eq!(s.sdk.system_prompt.as_deref(), Some("a=b"));
    assert_eq!(s.sdk.append_system_prompt.as_deref(), Some(""));
    // The value position of the equals form is the option's own.
    assert_eq!(
        sdk_err(&["--permission-mode=auto"]),
        "--permission-mode takes default, acceptEdits, plan or bypassPermissions (argument 6)"
    );
    assert_eq!(
        sdk_err(&["--permission-mode", "auto"]),
        "--permission-mode takes default, acceptEdits, plan or bypassPermissions (argument 7)"
    );
    for (bad, msg) in [
        (
            &["--verbose=1"][..],
            "--verbose takes no value (argument 6)",
        ),
        (
            &["--replay-user-messages="],
            "--replay-user-messages takes no value (argument 6)",
        ),
        (&["--debug=x"], "--debug takes no value (argument 6)"),
        (
            &["--model=a", "--model", "b"],
            "--model given more than once (argument 7)",
        ),
        (&["--bogus=1"], "unknown option (argument 6)"),
        (&["--model"], "--model needs a value (argument 6)"),
    ] {
        assert_eq!(sdk_err(bad), msg, "{bad:?}");
    }
}

#[test]
fn every_sdk_option_is_typed() {
    // The TypeScript SDK's command line for a full set of options (0.3.333).
    let s = sdk_ok(&[
        "--effort=high",
        "--max-turns=3",
        "--max-budget-usd=1.5",
        "--model=m",
        "--permission-prompt-tool=stdio",
        "--permission-prompts=none",
        "--resume=abc",
        "--allowedTools=Read,Bash(git log:*)",
        "--disallowedTools=Bash",
        "--tools=",
        "--setting-sources=",
        "--permission-mode=bypassPermissions",
        "--allow-dangerously-skip-permissions",
        "--include-partial-messages",
        "--add-dir=/tmp",
        "--add-dir",
        "/srv",
        "--fork-session",
        "--continue",
        "--session-id=0b5e0c2e-8f7a-4b1c-9d3e-2a6f4c8b1d7e",
        "--no-session-persistence",
        "--strict-mcp-config",
        "--await-initialize",
        "--system-prompt-file",
        "sp.txt",
        "--thinking=adaptive",
        "--betas",
        "x",
        "--json-schema={\"type\":\"object\"}",
    ]);
    assert_eq!(
        s.sdk,
        SdkArgs {
            json_schema: Some(
                agentx_core::session::structured::OutputSchema::compile(r#"{"type":"object"}"#)
                    .unwrap()
            ),
            system_prompt: None,
            system_prompt_file: Some(PathBuf::from("sp.txt")),
            append_system_prompt: None,
            permission_prompt_tool: true,
            permission_prompts: Some(PermissionPrompts::None),
            model: Some("m".into()),
            effort: Some("high".into()),
            max_turns: Some(3),
            max_budget_usd: agentx_core::session::Budget::parse("1.5"),
            tools: Some(sdk_args::ToolSelection::Listed(vec![])),
            allowed_tools: Some(
                agentx_core::session::tool_rules::parse_rules("Read,Bash(git log:*)").unwrap()
            ),
            disallowed_tools: Some(agentx_core::session::tool_rules::parse_rules("Bash").unwrap()),
            add_dirs: ["/tmp", "/srv"].map(PathBuf::from).to_vec(),
            continue_session: true,
            fork_session: true,
            session_id: Some("0b5e0c2e-8f7a-4b1c-9d3e-2a6f4c8b1d7e".into()),
            setting_sources: Some(vec![]),
            no_session_persistence: true,
            ignored: vec![
                "--allow-dangerously-skip-permissions",
                "--thinking",
                "--betas"
            ],
        }
    );
    assert_eq!(s.session.common.resume.as_deref(), Some("abc"));
    assert!(s.session.common.include_partial_messages);
    assert_eq!(
        s.session.common.permission_mode(),
        PermissionMode::BypassPermissions
    );
    assert_eq!(
        sdk_ok(&["--tools", "default"]).sdk.tools,
        Some(sdk_args::ToolSelection::Default)
    );
}

#[test]
fn sdk_option_values_are_checked() {
    for (bad, msg) in [
        (
            &["--permission-prompt-tool", "mcp__x__y"][..],
            "--permission-prompt-tool takes stdio (MCP permission-prompt tools are not \
             supported) (argument 7)",
        ),
        (
            &["--permission-prompts=all"],
            "--permission-prompts takes host or none (argument 6)",
        ),
        (&["--model="], "--model takes a model name (argument 6)"),
        (&["--effort="], "--effort takes an effort name (argument 6)"),
        (
            &["--max-turns=0"],
            "--max-turns takes a positive integer (argument 6)",
        ),
        (
            &["--max-turns", "-1"],
            "--max-turns takes a positive integer (argument 7)",
        ),
        (
            &["--max-budget-usd=-1"],
            "--max-budget-usd takes a decimal number of US dollars (argument 6)",
        ),
        (
            &["--max-budget-usd=inf"],
            "--max-budget-usd takes a decimal number of US dollars (argument 6)",
        ),
        (
            &["--session-id=ABC"],
            "--session-id takes a canonical UUID (argument 6)",
        ),
        (
            &["--setting-sources=user,cloud"],
            "--setting-sources takes a comma-separated list of user, project and local \
             (argument 6)",
        ),
        (
            &["--continue", "--continue"],
            "--continue given more than once (argument 7)",
        ),
        (
            &["--allowedTools=Read(x)"],
            "--allowedTools: only Bash takes a pattern (Bash(PREFIX:*) or Bash(CMD)) \
             (argument 6)",
        ),
        (
            &["--tools", "Bash("],
            "--tools: a tool pattern has unbalanced parentheses (argument 7)",
        ),
        (
            &["--betas=a", "--betas=b"],
            "--betas given more than once (argument 7)",
        ),
    ] {
        assert_eq!(sdk_err(bad), msg, "{bad:?}");
    }
}

/// PROFILE §18: `--mcp-config` in the standalone profile too.
#[test]
fn mcp_config_is_taken_without_verbose() {
    let mut a = STREAM.to_vec();
    a.extend(["--mcp-config", r#"{"mcpServers":{"fs":{"command":"srv"}}}"#]);
    let AgentxArgs::Session(s) = ok(&a) else {
        panic!("{a:?}")
    };
    assert!(
        matches!(&s.mcp_configs[..], [crate::args::sdk_args::McpConfigArg::Servers(d)] if d[0].name == "fs")
    );
}

#[test]
fn mcp_config_names_the_servers_and_repeats() {
    // PROFILE §16: Python 0.2.189's `--mcp-config` for `create_sdk_mcp_server` servers;
    // PROFILE §18: it may repeat, and a value not starting with `{` is a file path.
    use crate::args::sdk_args::McpConfigArg;
    let s = sdk_ok(&[
        "--mcp-config",
        r#"{"mcpServers":{"calc":{"type":"sdk","name":"calc"},"t":{"type":"sdk","name":"t"}}}"#,
        "--mcp-config=/etc/mcp.json",
        "--mcp-config",
        r#"{"mcpServers":{"fs":{"command":"srv"}}}"#,
    ]);
    assert_eq!(s.session.mcp_configs.len(), 3);
    let McpConfigArg::Servers(first) = &s.session.mcp_configs[0] else {
        panic!()
    };
    let names: Vec<_> = first.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["calc", "t"]);
    assert_eq!(
        s.session.mcp_configs[1],
        McpConfigArg::File("/etc/mcp.json".into(), 8)
    );
    assert!(matches!(&s.session.mcp_configs[2], McpConfigArg::Servers(d) if d[0].name == "fs"));
    assert_eq!(
        sdk_ok(&["--mcp-config={\"mcpServers\":{}}"])
            .session
            .mcp_configs,
        [McpConfigArg::Servers(vec![])]
    );
}

#[test]
fn refused_sdk_options_name_themselves_and_why() {
    for (bad, msg) in [
        (
            &[
                "--mcp-config",
                r#"{"mcpServers":{"files":{"command":"x","cwd":"/"}}}"#,
            ][..],
            "--mcp-config: MCP server \"files\": unknown member \"cwd\" (argument 7)",
        ),
        (
            &[
                "--mcp-config",
                r#"{"mcpServers":{"w":{"type":"http","url":"http://example.com/mcp"}}}"#,
            ][..],
            "--mcp-config: MCP server \"w\": a plain http:// url must be loopback (use \
             https://) (argument 7)",
        ),
        (
            &["--settings={}"],
            "--settings is not supported: Claude Code settings are not read (agentx reads \
             settings.json in AgentX home) (argument 6)",
        ),
        (
            &["--agent=reviewer"],
            "--agent is not supported: agent definitions are not supported (argument 6)",
        ),
        (
            &["--plugin-dir", "/p"],
            "--plugin-dir is not supported: plugins are not supported (argument 6)",
        ),
        (
            &["--session-mirror"],
            "--session-mirror is not supported: mirroring the transcript to an SDK session \
             store is not supported (argument 6)",
        ),
    ] {
        assert_eq!(sdk_err(bad), msg, "{bad:?}");
    }
}

#[test]
fn sdk_options_stay_out_of_the_standalone_profile() {
    // PROFILE §15: without `--verbose` nothing of the profile applies.
    let with = |extra: &[&'static str]| {
        let mut a = STREAM.to_vec();
        a.extend_from_slice(extra);
        err(&a)
    };
    for (bad, msg) in [
        (
            &["--model", "m"][..],
            "--model is only valid with --verbose (the Claude Agent SDK profile) (argument 5)",
        ),
        (
            &["--system-prompt="],
            "--system-prompt is only valid with --verbose (the Claude Agent SDK profile) \
             (argument 5)",
        ),
        (
            &["--cwd", "/", "--betas", "x", "--continue"],
            "--betas is only valid with --verbose (the Claude Agent SDK profile) (argument 7)",
        ),
    ] {
        assert_eq!(with(bad), msg, "{bad:?}");
    }
    assert_eq!(
        err(&["-p", "x", "--verbose"]),
        "--verbose is not valid with -p (argument 3)"
    );
    assert_eq!(
        err(&["-p", "x", "--betas", "y"]),
        "--betas is not valid with -p (argument 3)"
    );
    assert_eq!(
        err(&["--list-providers", "--model", "m"]),
        "--model is not valid with --list-providers (argument 2)"
    );
    assert_eq!(
        err(&["--list-providers", "--debug"]),
        "--debug is not valid with --list-providers (argument 2)"
    );
}

#[test]
fn usage_errors_echo_no_argument() {
    for bad in [
        &["sk-secret-operand"][..],
        &["--sk-secret-option"],
        &["-p", "x", "--output-format", "sk-secret-format"],
        &["--permission-mode", "sk-secret-mode", "-p", "x"],
        &["--list-providers", "sk-secret-prompt"],
    ] {
        let e = err(bad);
        assert!(!e.contains("sk-secret"), "{e}");
    }
}
