//! The user's MCP servers through the real `agentx` binary (PROFILE §18): a stdio server built
//! with the official Python MCP SDK (MCPServer, formerly FastMCP; `tests/mcp/demo_server.py`,
//! the SDK installed pinned into `target/tmp` from `tests/mcp/requirements.txt` on first use;
//! skipped with a printed reason when it cannot be installed, failed under `CI`), and a tiny
//! standard-library fault server (`tests/mcp/fault_server.py`) for what a real server does not
//! do on demand: hang in `initialize`, flood stdout, die mid-call, ignore SIGTERM.

#[path = "mcp/support.rs"]
mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentx_test_support::harness::{self, Agentx, TempDir};
use serde_json::{json, Value};
use support::{assets, python};

const SDK: [&str; 7] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
    "--permission-mode",
    "bypassPermissions",
];

fn user(text: &str) -> Value {
    json!({"type":"user","session_id":"","message":{"role":"user","content":text},"parent_tool_use_id":null})
}

fn control(id: &str, request: Value) -> Value {
    json!({"type":"control_request","request_id":id,"request":request})
}

fn spawn(home: &Path, config: &Value, env: &[(&str, &str)]) -> Agentx {
    let mut cmd = harness::agentx_command(home);
    cmd.args(SDK)
        .arg("--mcp-config")
        .arg(config.to_string())
        .arg("--cwd")
        .arg(home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    Agentx::start(cmd)
}

fn demo(python: &Path, env: Value) -> Value {
    json!({"mcpServers":{"demo":{"command":python,"args":[assets().join("demo_server.py")],"env":env}}})
}

fn fault(mode: &str, log: &Path, extra: Value) -> Value {
    let mut c = json!({"command":"python3","args":[assets().join("fault_server.py"), mode, log]});
    if let (Some(c), Some(extra)) = (c.as_object_mut(), extra.as_object()) {
        c.extend(extra.clone());
    }
    json!({"mcpServers":{"f":c}})
}

/// One turn: the records from the prompt's first to its result.
fn turn(a: &mut Agentx, prompt: &str) -> Vec<Value> {
    a.send(&user(prompt));
    a.until(harness::is_result)
}

fn tool_result(records: &[Value]) -> Value {
    records
        .iter()
        .find_map(|r| (r["type"] == "user").then(|| r["message"]["content"][0].clone()))
        .expect("a tool_result")
}

fn mcp_status(a: &mut Agentx, id: &str) -> Value {
    a.send(&control(id, json!({"subtype":"mcp_status"})));
    let r = a.until(|v| v["type"] == "control_response" && v["response"]["request_id"] == id);
    r.last().unwrap()["response"]["response"]["mcpServers"].clone()
}

#[test]
fn a_stdio_server_of_the_official_python_sdk_is_connected_listed_and_called() {
    let Some(py) = python() else { return };
    let home = TempDir::new("mcp-demo");
    let mut a = spawn(home.path(), &demo(&py, json!({})), &[]);
    // System/init lists the servers as they are when it is written (PROFILE §18).
    wait_status(&mut a, "connected");
    let first = turn(&mut a, r#"!mcp demo add {"a":1,"b":2}"#);
    let init = &first[0];
    assert_eq!(init["subtype"], "init");
    // PROFILE §18: the built-in tools, then the server's in its order.
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .filter(|t| t.starts_with("mcp__"))
        .collect();
    assert_eq!(
        tools,
        [
            "mcp__demo__add",
            "mcp__demo__env_names",
            "mcp__demo__echo_env",
            "mcp__demo__boom",
            "mcp__demo__cwd"
        ]
    );
    assert!(!init["tools"][0].as_str().unwrap().starts_with("mcp__"));
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"demo","status":"connected"}])
    );
    assert_eq!(
        tool_result(&first),
        json!({"type":"tool_result","tool_use_id":first[2]["message"]["content"][0]["id"],"content":"3","is_error":false})
    );
    // PROFILE §18: `structuredContent` becomes the record's `tool_use_result`.
    let record = first.iter().find(|r| r["type"] == "user").unwrap();
    assert_eq!(record["tool_use_result"], json!({"result":3}), "{record}");
    // isError: the server's own failure is an is_error tool_result.
    let r = tool_result(&turn(&mut a, "!mcp demo boom {}"));
    assert_eq!(r["is_error"], true, "{r}");
    assert_eq!(r["content"], "Error executing tool boom", "{r}");
    // The command runs in the cwd.
    let r = tool_result(&turn(&mut a, "!mcp demo cwd {}"));
    assert_eq!(
        Path::new(r["content"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        home.path().canonicalize().unwrap()
    );
    let status = mcp_status(&mut a, "s1");
    assert_eq!(status[0]["name"], "demo");
    assert_eq!(status[0]["status"], "connected");
    assert_eq!(
        status[0]["config"],
        json!({"type":"stdio","command":py,"args":[assets().join("demo_server.py")]})
    );
    assert_eq!(status[0]["serverInfo"]["name"], "demo");
    assert_eq!(
        status[0]["tools"][0],
        json!({"name":"add","description":"Add two numbers"})
    );
    a.close_stdin();
    let f = a.finish();
    assert_eq!(f.status, Some(0), "{}", f.stderr);
}

#[test]
fn a_server_sees_its_env_and_the_inherited_set_only_and_a_secret_is_withheld() {
    let Some(py) = python() else { return };
    let home = TempDir::new("mcp-env");
    let secret = "tok-0123456789-secret";
    let mut a = spawn(
        home.path(),
        &demo(&py, json!({"SERVICE_TOKEN":secret,"PLAIN":"v"})),
        &[
            ("OPENAI_API_KEY", "sk-agentx-only-variable"),
            ("AGENTX_PRIVATE", "x"),
        ],
    );
    let r = tool_result(&turn(&mut a, "!mcp demo env_names {}"));
    let names: Vec<&str> = r["content"].as_str().unwrap().split(' ').collect();
    for n in &names {
        assert!(
            [
                "HOME",
                "LOGNAME",
                "PATH",
                "SHELL",
                "TERM",
                "USER",
                "SERVICE_TOKEN",
                "PLAIN",
                "LC_CTYPE"
            ]
            .contains(n),
            "the server saw {n}: {names:?}"
        );
    }
    assert!(
        names.contains(&"SERVICE_TOKEN") && names.contains(&"PLAIN"),
        "{names:?}"
    );
    assert!(!names.contains(&"OPENAI_API_KEY") && !names.contains(&"AGENTX_PRIVATE"));
    // PROFILE §18 "Secrets": a tool result carrying one is withheld; the session goes on.
    let records = turn(&mut a, r#"!mcp demo echo_env {"name":"SERVICE_TOKEN"}"#);
    let r = tool_result(&records);
    assert_eq!(
        r["content"],
        "MCP output withheld: it contains a configured secret"
    );
    assert_eq!(r["is_error"], true);
    assert_eq!(records.last().unwrap()["subtype"], "success");
    let r = tool_result(&turn(&mut a, r#"!mcp demo echo_env {"name":"PLAIN"}"#));
    assert_eq!(r["content"], "v");
    a.close_stdin();
    let f = a.finish();
    assert_eq!(f.status, Some(0));
    assert!(!String::from_utf8_lossy(&f.stdout).contains(secret));
    assert!(!f.stderr.contains(secret));
    let store = walk(home.path());
    assert!(!store.contains(secret), "the store holds the secret");
}

/// Every file under `dir`, concatenated (lossily).
fn walk(dir: &Path) -> String {
    support::files_text(dir, &|_| false)
}

fn log_lines(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// Waits (polling the file, at most 20 s) until `log` has a line matching `pred`.
fn wait_log(log: &Path, pred: impl Fn(&str) -> bool) -> Vec<String> {
    let start = Instant::now();
    loop {
        let lines = log_lines(log);
        if lines.iter().any(|l| pred(l)) {
            return lines;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "log: {lines:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: i32) -> bool {
    Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn server_pid(log: &Path) -> i32 {
    let lines = wait_log(log, |l| l.starts_with("pid "));
    lines[0].trim_start_matches("pid ").parse().unwrap()
}

#[test]
fn a_call_times_out_at_the_config_timeout_and_the_server_is_told() {
    let home = TempDir::new("mcp-timeout");
    let log = home.path().join("server.log");
    let mut a = spawn(
        home.path(),
        &fault("slow", &log, json!({"timeout":1000})),
        &[],
    );
    let records = turn(&mut a, "!mcp f slow {}");
    let r = tool_result(&records);
    assert_eq!(r["content"], "MCP tool call timed out after 1000 ms");
    assert_eq!(r["is_error"], true);
    let lines = wait_log(&log, |l| l.contains("notifications/cancelled"));
    let call: Value =
        serde_json::from_str(lines.iter().find(|l| l.contains("tools/call")).unwrap()).unwrap();
    let cancelled: Value = serde_json::from_str(
        lines
            .iter()
            .find(|l| l.contains("notifications/cancelled"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(cancelled["params"]["requestId"], call["id"]);
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

#[test]
fn an_interrupt_cancels_the_call_in_flight() {
    let home = TempDir::new("mcp-interrupt");
    let log = home.path().join("server.log");
    let mut a = spawn(home.path(), &fault("slow", &log, json!({})), &[]);
    a.send(&user("!mcp f slow {}"));
    a.until(|v| v["type"] == "assistant");
    wait_log(&log, |l| l.contains("tools/call"));
    a.send(&control("int", json!({"subtype":"interrupt"})));
    let records = a.until(harness::is_result);
    assert!(records
        .iter()
        .any(|r| r["type"] == "control_response" && r["response"]["request_id"] == "int"));
    let lines = wait_log(&log, |l| l.contains("notifications/cancelled"));
    assert!(
        lines.iter().any(|l| l.contains("\"requestId\"")),
        "{lines:?}"
    );
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

#[test]
fn a_server_killed_mid_call_gives_an_is_error_tool_result() {
    let home = TempDir::new("mcp-die");
    let log = home.path().join("server.log");
    let mut a = spawn(home.path(), &fault("die-on-call", &log, json!({})), &[]);
    wait_status(&mut a, "connected");
    // The issue's fault bound: the `is_error` result within 1 s of the call (the server dies
    // as it receives it).
    let sent = Instant::now();
    a.send(&user("!mcp f slow {}"));
    let records = a.until(|v| v["type"] == "user");
    let took = sent.elapsed();
    eprintln!(
        "die-on-call: tool_result {} ms after the prompt",
        took.as_millis()
    );
    assert!(took < Duration::from_secs(1), "{took:?}");
    let records = [records, a.until(harness::is_result)].concat();
    let r = tool_result(&records);
    assert_eq!(r["is_error"], true, "{r}");
    assert_eq!(
        r["content"], "MCP error: the server closed its stdout",
        "{r}"
    );
    let status = mcp_status(&mut a, "s");
    assert_eq!(status[0]["status"], "failed");
    assert_eq!(
        status[0]["error"],
        "the server closed its stdout: fault: dying mid-call"
    );
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

#[test]
fn a_server_that_never_answers_initialize_delays_the_turn_by_the_connect_timeout_only() {
    let home = TempDir::new("mcp-hang");
    let log = home.path().join("server.log");
    let spawned = Instant::now();
    let mut a = spawn(
        home.path(),
        &fault("hang-init", &log, json!({})),
        &[("MCP_TIMEOUT", "1500")],
    );
    wait_log(&log, |l| l.contains("\"initialize\""));
    let sent = Instant::now();
    let records = turn(&mut a, "hi");
    // The connect timeout runs from the connection's start (after agentx started, before the
    // server read `initialize`): the turn ended no sooner than 1,500 ms after the spawn, and
    // within 1,500 ms (plus 1 s of slack for a loaded machine) of the prompt.
    let (since_spawn, since_prompt) = (spawned.elapsed(), sent.elapsed());
    eprintln!(
        "hang-init: result {} ms after the spawn, {} ms after the prompt",
        since_spawn.as_millis(),
        since_prompt.as_millis()
    );
    assert!(
        since_spawn >= Duration::from_millis(1500),
        "{since_spawn:?}"
    );
    assert!(
        since_prompt < Duration::from_millis(2500),
        "{since_prompt:?}"
    );
    assert_eq!(records.last().unwrap()["subtype"], "success");
    // PROFILE §18: system/init never waits: it lists the server `pending`.
    let init = &records[0];
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"f","status":"pending"}])
    );
    assert!(!init["tools"].to_string().contains("mcp__f__"));
    let start = Instant::now();
    loop {
        let s = mcp_status(&mut a, "s");
        if s[0]["status"] == "failed" {
            assert_eq!(s[0]["error"], "initialize: no answer within 1500 ms");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{s}");
        std::thread::sleep(Duration::from_millis(50));
    }
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

#[test]
fn a_server_flooding_stdout_with_garbage_fails_without_taking_agentx_down() {
    let home = TempDir::new("mcp-garbage");
    let log = home.path().join("server.log");
    let mut a = spawn(home.path(), &fault("garbage", &log, json!({})), &[]);
    let start = Instant::now();
    loop {
        let s = mcp_status(&mut a, "s");
        if s[0]["status"] == "failed" {
            assert_eq!(s[0]["error"], "stdout is not JSON-RPC");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{s}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let records = turn(&mut a, "hi");
    assert_eq!(records.last().unwrap()["subtype"], "success");
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

#[test]
fn no_server_process_outlives_agentx_by_7_s_even_one_that_ignores_sigterm() {
    for how in ["eof", "sigterm", "sighup"] {
        let home = TempDir::new("mcp-orphan");
        let log = home.path().join("server.log");
        let mut a = spawn(home.path(), &fault("stubborn", &log, json!({})), &[]);
        wait_status(&mut a, "connected");
        let records = turn(&mut a, "hi");
        assert_eq!(records[0]["mcp_servers"][0]["status"], "connected");
        let pid = server_pid(&log);
        match how {
            "eof" => a.close_stdin(),
            "sigterm" => assert!(Command::new("kill")
                .args(["-TERM", &a.pid().to_string()])
                .status()
                .unwrap()
                .success()),
            _ => assert!(Command::new("kill")
                .args(["-HUP", &a.pid().to_string()])
                .status()
                .unwrap()
                .success()),
        }
        let f = a.finish();
        assert!(f.status.is_some(), "{how}");
        // agentx waited for the group (SIGTERM at 2 s, SIGKILL at 5 s) before it exited.
        assert!(!alive(pid), "{how}: server {pid} outlived agentx");
        assert!(
            log_lines(&log).iter().any(|l| l == "sigterm"),
            "{how}: no SIGTERM reached it"
        );
    }
}

#[test]
fn bad_configurations_are_usage_errors_naming_the_server() {
    let home = TempDir::new("mcp-usage");
    for (config, line) in [
        (
            r#"{"mcpServers":{"w":{"type":"http","url":"http://example.com/mcp"}}}"#.to_string(),
            "agentx: --mcp-config: MCP server \"w\": a plain http:// url must be loopback (use https://) (argument 9)",
        ),
        (
            r#"{"mcpServers":{"a.b":{"command":"x"}}}"#.to_string(),
            "agentx: --mcp-config: MCP server \"a.b\": the name does not match [A-Za-z0-9_-]{1,64} (argument 9)",
        ),
    ] {
        let out = harness::agentx_command(home.path())
            .args(SDK)
            .args(["--mcp-config", &config])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().next().unwrap(), line);
        assert!(out.stdout.is_empty());
    }
    // A file path: read at startup; a bad file is a usage error too.
    let file = home.path().join("mcp.json");
    std::fs::write(&file, r#"{"mcpServers":{"x":{"type":"sse"}}}"#).unwrap();
    let out = harness::agentx_command(home.path())
        .args(SDK)
        .arg("--mcp-config")
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().next().unwrap(),
        "agentx: --mcp-config: MCP server \"x\": it has no url"
    );
}

/// Waits (sending `mcp_status`, at most 20 s) until server 0 has `status`.
fn wait_status(a: &mut Agentx, status: &str) -> Value {
    let start = Instant::now();
    for n in 0.. {
        let s = mcp_status(a, &format!("w{n}"));
        if s[0]["status"] == status {
            return s;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{s}");
        std::thread::sleep(Duration::from_millis(20));
    }
    unreachable!()
}

fn answer(a: &mut Agentx, id: &str, request: Value) -> Value {
    a.send(&control(id, request));
    let r = a.until(|v| v["type"] == "control_response" && v["response"]["request_id"] == id);
    r.last().unwrap()["response"].clone()
}

#[test]
fn mcp_set_servers_toggle_and_reconnect_in_the_sdk_profile() {
    let home = TempDir::new("mcp-live");
    let log = home.path().join("server.log");
    let mut a = spawn(home.path(), &json!({"mcpServers":{}}), &[]);
    let r = answer(&mut a, "init", json!({"subtype":"initialize"}));
    assert_eq!(r["subtype"], "success");
    let config = fault("slow", &log, json!({}))["mcpServers"]["f"].clone();
    // PROFILE §18: a bad entry is an `errors` entry, not in `added`.
    let r = answer(
        &mut a,
        "set",
        json!({"subtype":"mcp_set_servers","servers":{"f":config,"bad":{"type":"http","url":"http://example.com/"}}}),
    );
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["response"]["added"], json!(["f"]));
    assert_eq!(r["response"]["removed"], json!([]));
    assert_eq!(
        r["response"]["errors"],
        json!({"bad":"MCP server \"bad\": a plain http:// url must be loopback (use https://)"})
    );
    wait_status(&mut a, "connected");
    let first_pid = server_pid(&log);
    let records = turn(&mut a, "hi");
    assert!(records[0]["tools"].to_string().contains("mcp__f__slow"));
    // Unknown names.
    for (id, req) in [
        ("u1", json!({"subtype":"mcp_reconnect","serverName":"nope"})),
        (
            "u2",
            json!({"subtype":"mcp_toggle","serverName":"nope","enabled":false}),
        ),
    ] {
        let r = answer(&mut a, id, req);
        assert_eq!(
            r,
            json!({"subtype":"error","request_id":id,"error":"unknown MCP server nope"})
        );
    }
    // Disable: closed, `disabled`, no tools; enable: connected again (a new process).
    let r = answer(
        &mut a,
        "off",
        json!({"subtype":"mcp_toggle","serverName":"f","enabled":false}),
    );
    assert_eq!(r["subtype"], "success");
    let s = mcp_status(&mut a, "s-off");
    assert_eq!(s[0]["status"], "disabled");
    let start = Instant::now();
    while alive(first_pid) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the disabled server is still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = answer(
        &mut a,
        "on",
        json!({"subtype":"mcp_toggle","serverName":"f","enabled":true}),
    );
    assert_eq!(r["subtype"], "success");
    wait_status(&mut a, "connected");
    // Reconnect answers once the server is connected again.
    let r = answer(
        &mut a,
        "re",
        json!({"subtype":"mcp_reconnect","serverName":"f"}),
    );
    assert_eq!(r, json!({"subtype":"success","request_id":"re"}));
    assert_eq!(mcp_status(&mut a, "s-re")[0]["status"], "connected");
    let pids = log_lines(&log)
        .iter()
        .filter(|l| l.starts_with("pid "))
        .count();
    assert_eq!(pids, 3, "started, enabled again, reconnected");
    // Replacing the set with nothing removes the dynamic server.
    let r = answer(
        &mut a,
        "clear",
        json!({"subtype":"mcp_set_servers","servers":{}}),
    );
    assert_eq!(r["response"]["removed"], json!(["f"]));
    assert_eq!(mcp_status(&mut a, "s-clear"), json!([]));
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

/// agentx's peak resident set (VmHWM), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    agentx_test_support::proc_stat::status_kib(pid, "VmHWM").expect("VmHWM")
}

#[test]
fn a_100_mib_garbage_line_fails_the_server_and_agentx_stays_under_64_mib() {
    for (mode, error) in [
        ("garbage-line", "a message is over 8388608 bytes"),
        ("garbage", "stdout is not JSON-RPC"),
    ] {
        let home = TempDir::new("mcp-flood");
        let log = home.path().join("server.log");
        let mut a = spawn(home.path(), &fault(mode, &log, json!({})), &[]);
        let s = wait_status(&mut a, "failed");
        assert_eq!(s[0]["error"], error);
        let rss = peak_rss_kib(a.pid());
        eprintln!("{mode}: agentx VmHWM {rss} KiB");
        assert!(rss < 64 * 1024, "{mode}: agentx peaked at {rss} KiB");
        let records = turn(&mut a, "hi");
        assert_eq!(records.last().unwrap()["subtype"], "success");
        a.close_stdin();
        assert_eq!(a.finish().status, Some(0));
    }
}

#[test]
fn sigterm_cancels_the_call_in_flight() {
    let home = TempDir::new("mcp-sigterm");
    let log = home.path().join("server.log");
    let mut a = spawn(home.path(), &fault("slow", &log, json!({})), &[]);
    a.send(&user("!mcp f slow {}"));
    a.until(|v| v["type"] == "assistant");
    wait_log(&log, |l| l.contains("tools/call"));
    assert!(Command::new("kill")
        .args(["-TERM", &a.pid().to_string()])
        .status()
        .unwrap()
        .success());
    let f = a.finish();
    assert!(f.status.is_some());
    let lines = log_lines(&log);
    let cancelled = lines
        .iter()
        .find(|l| l.contains("notifications/cancelled"))
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(cancelled.contains("agentx is terminating"), "{cancelled}");
}

#[test]
fn list_changed_lists_the_tools_again_for_the_next_request() {
    let home = TempDir::new("mcp-changed");
    let log = home.path().join("server.log");
    let mut a = spawn(home.path(), &fault("changing", &log, json!({})), &[]);
    let first = turn(&mut a, "!mcp f slow {}");
    assert_eq!(tool_result(&first)["content"], "changed");
    let start = Instant::now();
    loop {
        let s = mcp_status(&mut a, "s");
        if s[0]["tools"].as_array().is_some_and(|t| t.len() == 2) {
            assert_eq!(s[0]["tools"][1]["name"], "added");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{s}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = tool_result(&turn(&mut a, "!mcp f added {}"));
    assert_eq!(r["content"], "changed", "the new tool is offered: {r}");
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

#[test]
fn tool_permission_policies_allow_and_deny_and_default_mode_asks() {
    // `default` mode without a host prompt: an MCP tool asks, so it is denied; an
    // `always_allow` tool runs; an `always_deny` tool is not offered.
    let home = TempDir::new("mcp-policy");
    let log = home.path().join("server.log");
    let config = |policy: Option<&str>| {
        let extra = match policy {
            Some(p) => json!({"tools":[{"name":"slow","permission_policy":p}]}),
            None => json!({}),
        };
        fault("changing", &log, extra)
    };
    for (policy, want, is_error) in [
        (None, "no permission prompt available", true),
        (Some("always_allow"), "changed", false),
        (Some("always_deny"), "unknown tool mcp__f__slow", true),
    ] {
        let mut cmd = harness::agentx_command(home.path());
        cmd.args(&SDK[..5])
            .args(["--permission-mode", "default", "--mcp-config"])
            .arg(config(policy).to_string())
            .arg("--cwd")
            .arg(home.path());
        let mut a = Agentx::start(cmd);
        let r = tool_result(&turn(&mut a, "!mcp f slow {}"));
        assert_eq!(r["is_error"], is_error, "{policy:?}: {r}");
        assert!(
            r["content"].as_str().unwrap().contains(want),
            "{policy:?}: {r}"
        );
        a.close_stdin();
        assert_eq!(a.finish().status, Some(0));
    }
}

fn elicit_server(python: &Path) -> Value {
    json!({"mcpServers":{"e":{"command":python,"args":[assets().join("elicit_server.py")]}}})
}

/// The host's answer to control request `id`.
fn respond(a: &mut Agentx, id: &str, response: Value) {
    a.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":response}}));
}

/// PROFILE §18 "Requests from a server": the server's `elicitation/create` becomes the
/// `elicitation` control request; the host's accept (with content) or decline goes back to
/// the server, which returns what it got.
#[test]
fn an_elicitation_goes_to_the_host_and_its_accept_or_decline_back_to_the_server() {
    let Some(py) = python() else { return };
    let home = TempDir::new("mcp-elicit");
    let mut a = spawn(home.path(), &elicit_server(&py), &[]);
    for (n, answer, expect) in [
        (
            1,
            json!({"action":"accept","content":{"name":"Ada"}}),
            "accept Ada",
        ),
        (2, json!({"action":"decline"}), "decline"),
    ] {
        a.send(&user("!mcp e ask {}"));
        let asked = a.until(|v| v["type"] == "control_request");
        let request = asked.last().unwrap().clone();
        let id = request["request_id"].as_str().unwrap().to_string();
        assert_eq!(
            request["request"],
            json!({"subtype":"elicitation","mcp_server_name":"e","message":"What is your name?",
                   "mode":"form","requested_schema":{"properties":{"name":{"title":"Name","type":"string"}},
                   "required":["name"],"title":"Name","type":"object"}}),
            "{request}"
        );
        respond(&mut a, &id, answer);
        let rest = a.until(|v| harness::is_state(v, "idle"));
        let mut all = asked.clone();
        all.extend(rest.iter().cloned());
        let start = usize::from(n == 1);
        assert_eq!(
            harness::labels(&all[start..]),
            [
                "system/session_state_changed:running",
                "assistant:tool_use:mcp__e__ask",
                "control_request:elicitation",
                "user:tool_result:ok",
                "result:success",
                "system/session_state_changed:idle",
            ],
            "turn {n}"
        );
        assert_eq!(tool_result(&rest)["content"], expect, "turn {n}");
    }
    // URL mode: `mode`, `url` and `elicitation_id` reach the host; the server's
    // `notifications/elicitation/complete` is `system/elicitation_complete`, before the
    // call's result.
    a.send(&user("!mcp e visit {}"));
    let asked = a.until(|v| v["type"] == "control_request");
    let request = asked.last().unwrap().clone();
    assert_eq!(
        request["request"],
        json!({"subtype":"elicitation","mcp_server_name":"e","message":"Sign in, please",
               "mode":"url","url":"https://example.com/sign-in","elicitation_id":"e-1"})
    );
    respond(
        &mut a,
        request["request_id"].as_str().unwrap(),
        json!({"action":"accept"}),
    );
    let rest = a.until(|v| harness::is_state(v, "idle"));
    assert_eq!(
        harness::labels(&rest),
        [
            "system/elicitation_complete",
            "user:tool_result:ok",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(rest[0]["mcp_server_name"], "e");
    assert_eq!(rest[0]["elicitation_id"], "e-1");
    assert_eq!(tool_result(&rest)["content"], "accept");
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

/// PROFILE §18: an elicitation the host never answers resolves as `cancel` at EOF, and the
/// turn finishes with the server's answer to that.
#[test]
fn an_elicitation_unanswered_at_eof_is_cancel() {
    let Some(py) = python() else { return };
    let home = TempDir::new("mcp-elicit-eof");
    let mut a = spawn(home.path(), &elicit_server(&py), &[]);
    a.send(&user("!mcp e ask {}"));
    let asked = a.until(|v| v["type"] == "control_request");
    assert_eq!(asked.last().unwrap()["request"]["subtype"], "elicitation");
    a.close_stdin();
    let f = a.finish();
    assert_eq!(f.status, Some(0));
    assert_eq!(
        harness::labels(&f.rest),
        [
            "user:tool_result:ok",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(tool_result(&f.rest)["content"], "cancel");
}

/// Scenario 8 (PROFILE §18 "Live changes"): the `mcp_set_servers` response is on stdout
/// before the added server's process starts. agentx writes to a file here, and the server
/// reads that file first thing: the response must already be in it; the server's startup then
/// waits at a gate the test opens only after it read the response. A reconnect of a server
/// that cannot start answers a correlated error with its `error` text.
#[test]
fn the_mcp_set_servers_response_is_written_before_the_server_starts() {
    let home = TempDir::new("mcp-scenario8");
    let log = home.path().join("server.log");
    let out = home.path().join("stdout.ndjson");
    let mut cmd = harness::agentx_command(home.path());
    cmd.args(SDK)
        .arg("--cwd")
        .arg(home.path())
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut send = |v: Value| {
        use std::io::Write;
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(control("init", json!({"subtype":"initialize"})));
    wait_log(&out, |l| l.contains(r#""request_id":"init""#));
    let gate = home.path().join("gate");
    assert!(Command::new("mkfifo")
        .arg(&gate)
        .status()
        .unwrap()
        .success());
    let mut config = fault("slow", &log, json!({}))["mcpServers"]["f"].clone();
    config["env"] = json!({"AGENTX_STDOUT": out, "EXPECT": r#""request_id":"set""#, "GATE": gate});
    send(control(
        "set",
        json!({"subtype":"mcp_set_servers","servers":{"f":config,"gone":{"command":"/nonexistent/agentx-test-server"}}}),
    ));
    let lines = wait_log(&log, |l| l.starts_with("expected output before start: "));
    assert!(
        lines.contains(&"expected output before start: yes".to_string()),
        "{lines:?}"
    );
    let response = wait_log(&out, |l| l.contains(r#""request_id":"set""#))
        .into_iter()
        .find(|l| l.contains(r#""request_id":"set""#))
        .unwrap();
    let response: Value = serde_json::from_str(&response).unwrap();
    assert_eq!(
        response["response"]["response"],
        json!({"added":["f","gone"],"removed":[],"errors":{}})
    );
    // The response came while the server's startup is held at the gate; opened, it connects.
    assert!(!log_lines(&log).contains(&"gate opened".to_string()));
    std::fs::write(&gate, b"go").unwrap();
    wait_log(&log, |l| l.contains("tools/list"));
    send(control(
        "re",
        json!({"subtype":"mcp_reconnect","serverName":"gone"}),
    ));
    let answered = wait_log(&out, |l| l.contains(r#""request_id":"re""#));
    let answered: Value = serde_json::from_str(
        answered
            .iter()
            .find(|l| l.contains(r#""request_id":"re""#))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        answered["response"],
        json!({"subtype":"error","request_id":"re","error":"the command could not start: entity not found"})
    );
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// PROFILE §18 holds in both profiles: `--mcp-config` without `--verbose` connects the server
/// and its tools are called; there agentx does not declare elicitation, so an elicitation is
/// answered `cancel` at once and nothing reaches the host.
#[test]
fn the_standalone_profile_takes_mcp_config_and_answers_an_elicitation_cancel_at_once() {
    let Some(py) = python() else { return };
    let home = TempDir::new("mcp-standalone");
    let config = elicit_server(&py).to_string();
    let mut a = Agentx::session(
        home.path(),
        &[
            "--permission-mode",
            "bypassPermissions",
            "--mcp-config",
            &config,
        ],
    );
    a.send(&harness::user("!mcp e ask {}"));
    let records = a.until(|v| harness::is_state(v, "idle"));
    assert_eq!(
        harness::labels(&records),
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant:tool_use:mcp__e__ask",
            "user:tool_result:ok",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(tool_result(&records)["content"], "cancel");
    let f = a.finish();
    assert_eq!(f.status, Some(0));
    assert!(f.rest.is_empty(), "{:?}", f.rest);
}

/// PROFILE §18 "Connecting": a server that never answers `initialize` does not hold
/// system/init (written at once, the server `pending`, with a 60 s connect timeout); the turn's
/// first model request waits for it, and disabling it settles it, so the turn goes on.
#[test]
fn system_init_does_not_wait_for_a_server_and_disabling_it_releases_the_turn() {
    let home = TempDir::new("mcp-init-wait");
    let log = home.path().join("server.log");
    let mut a = spawn(
        home.path(),
        &fault("hang-init", &log, json!({})),
        &[("MCP_TIMEOUT", "60000")],
    );
    wait_log(&log, |l| l.contains("\"initialize\""));
    a.send(&user("hi"));
    let started = a.until(|v| harness::is_state(v, "running"));
    assert_eq!(
        harness::labels(&started),
        ["system/init", "system/session_state_changed:running"]
    );
    assert_eq!(
        started[0]["mcp_servers"],
        json!([{"name":"f","status":"pending"}])
    );
    let r = answer(
        &mut a,
        "off",
        json!({"subtype":"mcp_toggle","serverName":"f","enabled":false}),
    );
    assert_eq!(r, json!({"subtype":"success","request_id":"off"}));
    let rest = a.until(|v| harness::is_state(v, "idle"));
    assert_eq!(
        harness::labels(&rest[rest.len() - 3..]),
        [
            "assistant:text:echo: hi",
            "result:success",
            "system/session_state_changed:idle"
        ]
    );
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}

/// PROFILE §18 "Secrets": an elicitation carrying a configured secret never reaches the host;
/// it is answered `cancel`, and the session goes on.
#[test]
fn an_elicitation_carrying_a_secret_is_cancel_and_never_reaches_the_host() {
    let Some(py) = python() else { return };
    let home = TempDir::new("mcp-elicit-secret");
    let mut config = elicit_server(&py);
    config["mcpServers"]["e"]["env"] = json!({"API_TOKEN": "tok-0123456789abcdef"});
    let mut a = spawn(home.path(), &config, &[]);
    a.send(&user(r#"!mcp e ask_env {"name":"API_TOKEN"}"#));
    let records = a.until(|v| harness::is_state(v, "idle"));
    assert_eq!(
        harness::labels(&records),
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant:tool_use:mcp__e__ask_env",
            "user:tool_result:ok",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(tool_result(&records)["content"], "cancel");
    let f = a.finish();
    assert_eq!(f.status, Some(0));
    let out = String::from_utf8_lossy(&f.stdout);
    assert!(!out.contains("tok-0123456789abcdef"));
    assert!(!f.stderr.contains("tok-0123456789abcdef"));
}

/// PROFILE §18: an interrupt while an elicitation waits for the host withdraws it
/// (`control_cancel_request`) before the acknowledgement and answers the server `cancel`; the
/// call in flight ends `interrupted` and the session goes on.
#[test]
fn an_interrupt_resolves_a_pending_elicitation_as_cancel() {
    let Some(py) = python() else { return };
    let home = TempDir::new("mcp-elicit-int");
    let mut a = spawn(home.path(), &elicit_server(&py), &[]);
    a.send(&user("!mcp e ask {}"));
    let asked = a.until(|v| v["type"] == "control_request");
    let id = asked.last().unwrap()["request_id"].clone();
    a.send(&control("int", json!({"subtype":"interrupt"})));
    let rest = a.until(|v| harness::is_state(v, "idle"));
    assert_eq!(
        harness::labels(&rest),
        [
            "control_cancel_request",
            "control_response:success",
            "user:tool_result:error",
            "result:error_during_execution",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(rest[0]["request_id"], id);
    assert_eq!(tool_result(&rest)["content"], "interrupted");
    // The server got `cancel` and still serves: the next elicitation reaches the host.
    a.send(&user("!mcp e ask {}"));
    let asked = a.until(|v| v["type"] == "control_request");
    let request = asked.last().unwrap().clone();
    respond(
        &mut a,
        request["request_id"].as_str().unwrap(),
        json!({"action":"decline"}),
    );
    let rest = a.until(|v| harness::is_state(v, "idle"));
    assert_eq!(tool_result(&rest)["content"], "decline");
    a.close_stdin();
    assert_eq!(a.finish().status, Some(0));
}
