//! The host client (both flavours) driving the real `agentx` binary on its built-in model:
//! an echo turn, tool permissions through the callback (allow, deny, a panicking callback),
//! interrupt during `!sleep`, two uploads referenced by one user message, a call that times
//! out and is cancelled, EOF, and 16 concurrent async sessions. Every record goes through the
//! typed decoder; the transcript of each session is also checked by `agentx-wire check
//! --direction output` (interop).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agentx_io::host::{
    AgentCommand, AsyncClient, AsyncClientOptions, Client, ClientOptions, HostError,
    PermissionAnswer, ToolPermissionRequest,
};
use agentx_wire::wire::{OutputRecord, SystemEvent};

const T: Duration = Duration::from_secs(60);

fn home(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentx-host-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("work")).unwrap();
    dir
}

fn command(home: &Path) -> AgentCommand {
    AgentCommand::stream_json(env!("CARGO_BIN_EXE_agentx"))
        .arg("--cwd")
        .arg(home.join("work"))
        .env("AGENTX_HOME", home)
}

/// A record's kind: `type`, or `system/<subtype>` plus the state of session_state_changed.
fn kind(r: &OutputRecord<'_>) -> String {
    let mut bytes = Vec::new();
    r.encode(&mut bytes);
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let mut k = v["type"].as_str().unwrap_or("?").to_owned();
    if let Some(s) = v["subtype"].as_str() {
        k = format!("{k}/{s}");
    }
    if let Some(s) = v["state"].as_str() {
        k = format!("{k}:{s}");
    }
    k
}

/// Receives records until the turn's `result` and the idle that follows it.
fn turn(client: &Client) -> Vec<OutputRecord<'static>> {
    let mut out = Vec::new();
    let mut seen_result = false;
    loop {
        let r = client
            .recv_timeout(T)
            .expect("a record in time")
            .expect("stream open")
            .expect("decodes");
        let idle = kind(&r) == "system/session_state_changed:idle";
        seen_result |= matches!(r, OutputRecord::Result(_));
        out.push(r);
        if seen_result && idle {
            return out;
        }
    }
}

fn result_of<'r>(
    records: &'r [OutputRecord<'static>],
) -> &'r agentx_wire::wire::ResultRecord<'static> {
    records
        .iter()
        .find_map(|r| match r {
            OutputRecord::Result(r) => Some(r),
            _ => None,
        })
        .expect("a result")
}

/// Interop: what the client decoded re-encodes to records `agentx-wire check --direction
/// output` accepts.
fn check_output(records: &[OutputRecord<'static>]) {
    let mut bytes = Vec::new();
    for r in records {
        r.encode(&mut bytes);
        bytes.push(b'\n');
    }
    let mut child = std::process::Command::new(agentx_test_support::bin("agentx-wire"))
        .args(["check", "--direction", "output", "-"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(&bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn echo_turn_initialize_and_close() {
    let h = home("echo");
    let client = Client::spawn(&command(&h), ClientOptions::default()).unwrap();
    let init = client.initialize(T).unwrap();
    assert_eq!(init.providers.len(), 1);
    assert!(init.providers[0].selected);
    assert_eq!(
        init.account.api_key_source.map(|s| s.as_str()),
        Some("user")
    );
    assert!(init.input_capabilities.is_some());
    client.send_text("hello").unwrap();
    let records = turn(&client);
    let kinds: Vec<String> = records.iter().map(kind).collect();
    assert_eq!(
        kinds,
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant",
            "result/success",
            "system/session_state_changed:idle"
        ]
    );
    let result = result_of(&records);
    assert_eq!(result.result.as_deref(), Some("echo: hello"));
    assert_eq!(result.total_cost_usd, None);
    check_output(&records);
    let exit = client.close(T).unwrap();
    assert!(
        exit.status.unwrap().success(),
        "{}",
        String::from_utf8_lossy(&exit.stderr)
    );
}

fn write_prompt(file: &str) -> String {
    format!("!tool Write {{\"file_path\":\"{file}\",\"content\":\"x\"}}")
}

#[test]
fn tool_permissions_through_the_callback() {
    let h = home("perm");
    let options = ClientOptions::default().can_use_tool(|r: &ToolPermissionRequest| {
        assert_eq!(r.tool_name, "Write");
        if r.input.contains("boom") {
            panic!("callback panic");
        }
        Ok(if r.input.contains("yes.txt") {
            PermissionAnswer::allow()
        } else {
            PermissionAnswer::deny("host says no")
        })
    });
    let client = Client::spawn(&command(&h), options).unwrap();
    client.send_text(&write_prompt("yes.txt")).unwrap();
    let allowed = turn(&client);
    assert!(h.join("work/yes.txt").exists());
    assert!(result_of(&allowed).permission_denials.is_empty());
    assert!(allowed
        .iter()
        .any(|r| kind(r) == "system/session_state_changed:requires_action"));

    client.send_text(&write_prompt("no.txt")).unwrap();
    let denied = turn(&client);
    assert!(!h.join("work/no.txt").exists());
    let d = &result_of(&denied).permission_denials;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].tool_name, "Write");

    // WIRE-PERM-002: a panicking callback denies; the session goes on.
    client.send_text(&write_prompt("boom.txt")).unwrap();
    let boom = turn(&client);
    assert!(!h.join("work/boom.txt").exists());
    assert_eq!(result_of(&boom).permission_denials.len(), 1);
    client.send_text("still here").unwrap();
    assert_eq!(
        result_of(&turn(&client)).result.as_deref(),
        Some("echo: still here")
    );
    check_output(&[allowed, denied, boom].concat());
    assert!(client.close(T).unwrap().success());
}

#[test]
fn interrupt_during_sleep_then_the_session_goes_on() {
    let h = home("interrupt");
    let client = Client::spawn(&command(&h), ClientOptions::default()).unwrap();
    client.send_text("!sleep 600000\n!say late").unwrap();
    // Wait for the turn to be running before interrupting (records, not durations).
    loop {
        let r = client.recv_timeout(T).unwrap().unwrap().unwrap();
        if kind(&r) == "system/session_state_changed:running" {
            break;
        }
    }
    client.interrupt(T).unwrap();
    let rest = turn(&client);
    let result = result_of(&rest);
    assert_eq!(result.subtype.as_str(), "error_during_execution");
    assert!(result.is_error);
    client.send_text("after").unwrap();
    assert_eq!(
        result_of(&turn(&client)).result.as_deref(),
        Some("echo: after")
    );
    assert!(client.close(T).unwrap().success());
}

#[test]
fn a_timed_out_call_is_cancelled_and_the_client_stays_usable() {
    let h = home("timeout");
    let client = Client::spawn(&command(&h), ClientOptions::default()).unwrap();
    // A zero timeout abandons the call at once: one control_cancel_request follows it.
    let r = client.interrupt(Duration::ZERO);
    assert!(
        r.is_ok() || r.as_ref().is_err_and(HostError::is_timeout),
        "{r:?}"
    );
    client.interrupt(T).unwrap();
    client.send_text("ok").unwrap();
    assert_eq!(
        result_of(&turn(&client)).result.as_deref(),
        Some("echo: ok")
    );
    assert!(client.close(T).unwrap().success());
}

#[test]
fn eof_finishes_the_turn_and_exits_zero() {
    let h = home("eof");
    let client = Client::spawn(&command(&h), ClientOptions::default()).unwrap();
    client.send_text("one").unwrap();
    client.send_text("two").unwrap();
    client.end_input();
    let mut results = Vec::new();
    while let Some(r) = client.recv_timeout(T).unwrap() {
        if let OutputRecord::Result(r) = r.unwrap() {
            results.push(r.result.unwrap().into_owned());
        }
    }
    assert_eq!(results, ["echo: one", "echo: two"]);
    let exit = client.close(T).unwrap();
    assert!(exit.status.unwrap().success());
}

#[test]
fn sixteen_concurrent_async_sessions() {
    let h = home("async");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let results: Vec<String> = rt.block_on(async {
        let mut tasks = Vec::new();
        for i in 0..16 {
            let cmd = command(&h);
            tasks.push(tokio::spawn(async move {
                let options =
                    AsyncClientOptions::default().can_use_tool(|_r: ToolPermissionRequest| async {
                        Ok(PermissionAnswer::allow())
                    });
                let client = AsyncClient::spawn(&cmd, options).await.unwrap();
                client.initialize(T).await.unwrap();
                client.send_text(&format!("hello {i}")).unwrap();
                let mut text = String::new();
                while let Some(r) = client.recv().await {
                    if let OutputRecord::Result(r) = r.unwrap() {
                        text = r.result.unwrap().into_owned();
                        break;
                    }
                }
                let exit = client.close(T).await.unwrap();
                assert!(exit.success());
                text
            }));
        }
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.unwrap());
        }
        out
    });
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r, &format!("echo: hello {i}"));
    }
}

#[test]
fn system_init_keeps_the_sdk_member_names() {
    // Compatibility: the members the official SDKs' parsers read from system/init, result,
    // assistant and stream_event records are present under their exact names.
    let h = home("compat");
    let client = Client::spawn(
        &command(&h).arg("--include-partial-messages"),
        ClientOptions::default(),
    )
    .unwrap();
    client.send_text("hi").unwrap();
    let records = turn(&client);
    let json: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            let mut b = Vec::new();
            r.encode(&mut b);
            serde_json::from_slice(&b).unwrap()
        })
        .collect();
    let init = json.iter().find(|v| v["subtype"] == "init").unwrap();
    for m in [
        "session_id",
        "uuid",
        "cwd",
        "tools",
        "model",
        "permissionMode",
        "apiKeySource",
        "mcp_servers",
        "slash_commands",
    ] {
        assert!(init.get(m).is_some(), "system/init lacks {m}: {init}");
    }
    let result = json.iter().find(|v| v["type"] == "result").unwrap();
    for m in [
        "subtype",
        "is_error",
        "duration_ms",
        "duration_api_ms",
        "num_turns",
        "result",
        "session_id",
        "total_cost_usd",
        "usage",
        "modelUsage",
        "permission_denials",
        "uuid",
    ] {
        assert!(result.get(m).is_some(), "result lacks {m}: {result}");
    }
    let assistant = json.iter().find(|v| v["type"] == "assistant").unwrap();
    for m in ["message", "parent_tool_use_id", "session_id", "uuid"] {
        assert!(assistant.get(m).is_some(), "assistant lacks {m}");
    }
    assert_eq!(assistant["message"]["role"], "assistant");
    assert!(assistant["message"]["content"].is_array());
    let se = json
        .iter()
        .find(|v| v["type"] == "stream_event")
        .expect("stream_event");
    for m in ["event", "parent_tool_use_id", "session_id", "uuid"] {
        assert!(se.get(m).is_some(), "stream_event lacks {m}");
    }
    assert!(matches!(
        records[0],
        OutputRecord::System(SystemEvent::Init(_))
    ));
    assert!(client.close(T).unwrap().success());
}

/// A host that writes its whole input before it reads any output (`recv`'s docs): 40 prompts
/// of 512 KiB, 20 MiB in all, more than agentx reads ahead while its stdout waits
/// (`MAX_LINES_IN_FLIGHT`, 16 MiB), so it stops reading its stdin unless its output is read.
/// The blocking client's helper reads it although the caller does not (`host::inbound`), so
/// every send returns; the records then come in order, each turn's result the echo of its
/// prompt. The async client's read task does the same. The sends run on a thread watched by
/// a deadline, so a deadlock fails the test instead of hanging it.
#[test]
fn a_host_that_writes_all_its_input_before_reading_does_not_deadlock() {
    const PROMPTS: usize = 40;
    let prompt = |i: usize| format!("{i} {}", "x".repeat(512 << 10));
    let results_of = |records: Vec<OutputRecord<'static>>| -> Vec<String> {
        records
            .into_iter()
            .filter_map(|r| match r {
                OutputRecord::Result(r) => Some(r.result.unwrap().into_owned()),
                _ => None,
            })
            .collect()
    };
    let want: Vec<String> = (0..PROMPTS)
        .map(|i| format!("echo: {}", prompt(i)))
        .collect();

    let h = home("write-all");
    let client =
        std::sync::Arc::new(Client::spawn(&command(&h), ClientOptions::default()).unwrap());
    let (done, sent) = std::sync::mpsc::channel();
    let sender = std::sync::Arc::clone(&client);
    std::thread::spawn(move || {
        for i in 0..PROMPTS {
            sender.send_text(&prompt(i)).unwrap();
        }
        sender.end_input();
        let _ = done.send(());
    });
    sent.recv_timeout(T)
        .expect("every send returned while the caller did not read");
    let mut records = Vec::new();
    while let Some(r) = client.recv_timeout(T).unwrap() {
        records.push(r.unwrap());
    }
    assert!(
        results_of(records) == want,
        "40 results, each its prompt's echo, in order"
    );
    let client = std::sync::Arc::into_inner(client).unwrap();
    assert!(client.close(T).unwrap().status.unwrap().success());

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let got = rt.block_on(async {
        let client = AsyncClient::spawn(&command(&h), AsyncClientOptions::default())
            .await
            .unwrap();
        for i in 0..PROMPTS {
            client.send_text(&prompt(i)).unwrap();
        }
        client.end_input();
        let mut records = Vec::new();
        let read_all = async {
            while let Some(r) = client.recv().await {
                records.push(r.unwrap());
            }
        };
        tokio::time::timeout(T, read_all)
            .await
            .expect("the async client's output ended in time");
        assert!(client.close(T).await.unwrap().success());
        results_of(records)
    });
    assert!(got == want, "the async client: 40 results, in order");
}
