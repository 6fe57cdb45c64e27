//! The user's MCP servers over the network transports through the real `agentx` binary
//! (PROFILE §18 "http and sse"): the official Python MCP SDK's server (`tests/mcp/
//! demo_server.py` run by `tests/mcp/http_server.py` with `transport="streamable-http"` or
//! `"sse"` on a free loopback port; the SDK installed pinned as for `mcp_servers.rs`), and a
//! standard-library stub (`tests/mcp/http_stub.py`) for what a real server does not do on
//! demand: answer 401, record the session headers and the DELETE, flood a stream.

#[path = "mcp/support.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agentx_test_support::harness::{self, Agentx, TempDir};
use serde_json::{json, Value};
use support::python;

/// The two network transports: the config's `type`, the server script's transport and the
/// path it serves.
const KINDS: [(&str, &str, &str); 2] =
    [("http", "streamable-http", "/mcp"), ("sse", "sse", "/sse")];

/// A server process on a free loopback port, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Server {
    fn start(program: &Path, script: &str, mode: &str, dir: &Path) -> Server {
        let log = dir.join(format!("{mode}.log"));
        let (child, port) = support::start_port_server(program, script, mode, &log);
        Server { child, port, log }
    }

    /// The Python SDK's server over `transport`.
    fn sdk(python: &Path, transport: &str, dir: &Path) -> Server {
        Server::start(python, "http_server.py", transport, dir)
    }

    /// The stub in `mode`.
    fn stub(mode: &str, dir: &Path) -> Server {
        Server::start(Path::new("python3"), "http_stub.py", mode, dir)
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(String::from)
            .collect()
    }

    /// Waits (polling the log, at most 20 s) until a line matches `pred`.
    fn wait_log(&self, pred: impl Fn(&str) -> bool) -> Vec<String> {
        let start = Instant::now();
        loop {
            let lines = self.log_lines();
            if lines.iter().any(|l| pred(l)) {
                return lines;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "log: {lines:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config(kind: &str, url: &str, extra: Value) -> Value {
    let mut c = json!({"type": kind, "url": url});
    if let (Some(c), Some(extra)) = (c.as_object_mut(), extra.as_object()) {
        c.extend(extra.clone());
    }
    json!({"mcpServers": {"w": c}})
}

fn spawn(home: &Path, config: &Value, mode: &str) -> Agentx {
    spawn_env(home, config, mode, &[])
}

fn spawn_env(home: &Path, config: &Value, mode: &str, env: &[(&str, &str)]) -> Agentx {
    let mut cmd = harness::agentx_command(home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args([
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
        "--permission-mode",
        mode,
    ])
    .arg("--mcp-config")
    .arg(config.to_string())
    .arg("--cwd")
    .arg(home);
    Agentx::start(cmd)
}

fn user(text: &str) -> Value {
    json!({"type":"user","session_id":"","message":{"role":"user","content":text},"parent_tool_use_id":null})
}

fn turn(a: &mut Agentx, prompt: &str) -> Vec<Value> {
    a.send(&user(prompt));
    a.until(harness::is_result)
}

/// The `tool_result` block and the record that carries it.
fn tool_result(records: &[Value]) -> (Value, Value) {
    records
        .iter()
        .find_map(|r| {
            (r["type"] == "user").then(|| (r["message"]["content"][0].clone(), r.clone()))
        })
        .expect("a tool_result")
}

fn mcp_status(a: &mut Agentx, id: &str) -> Value {
    a.send(&json!({"type":"control_request","request_id":id,"request":{"subtype":"mcp_status"}}));
    let r = a.until(|v| v["type"] == "control_response" && v["response"]["request_id"] == id);
    r.last().unwrap()["response"]["response"]["mcpServers"].clone()
}

/// Asks `mcp_status` until the server's status is `status` (at most 20 s).
fn wait_status(a: &mut Agentx, status: &str) -> Value {
    let start = Instant::now();
    for n in 0.. {
        let s = mcp_status(a, &format!("w{n}"));
        if s[0]["status"] == status {
            return s[0].clone();
        }
        assert!(start.elapsed() < Duration::from_secs(20), "{s}");
        std::thread::sleep(Duration::from_millis(20));
    }
    unreachable!()
}

fn finish(a: Agentx) -> (String, String) {
    let f = a.finish();
    assert_eq!(f.status, Some(0), "{}", f.stderr);
    (String::from_utf8_lossy(&f.stdout).into_owned(), f.stderr)
}

#[test]
fn the_python_sdk_server_is_connected_listed_and_called_over_http_and_sse() {
    let Some(py) = python() else { return };
    for (kind, transport, path) in KINDS {
        let home = TempDir::new("mcp-net");
        let server = Server::sdk(&py, transport, home.path());
        let url = server.url(path);
        let mut a = spawn(
            home.path(),
            &config(kind, &url, json!({})),
            "bypassPermissions",
        );
        let first = turn(&mut a, r#"!mcp w add {"a":1,"b":2}"#);
        assert_eq!(first[0]["subtype"], "init");
        let (block, record) = tool_result(&first);
        assert_eq!(
            block,
            json!({"type":"tool_result","tool_use_id":block["tool_use_id"],"content":"3","is_error":false}),
            "{kind}"
        );
        // PROFILE §18: `structuredContent` becomes the record's `tool_use_result`.
        assert_eq!(record["tool_use_result"], json!({"result":3}), "{kind}");
        let (block, _) = tool_result(&turn(&mut a, "!mcp w boom {}"));
        assert_eq!(block["is_error"], true, "{kind}");
        assert_eq!(block["content"], "Error executing tool boom", "{kind}");
        let s = mcp_status(&mut a, "s");
        assert_eq!(s[0]["status"], "connected");
        assert_eq!(s[0]["config"], json!({"type": kind, "url": url}));
        assert_eq!(s[0]["serverInfo"]["name"], "demo");
        assert_eq!(s[0]["tools"][0]["name"], "add");
        finish(a);
    }
}

#[test]
fn each_permission_mode_over_http_and_sse() {
    let Some(py) = python() else { return };
    for (kind, transport, path) in KINDS {
        let home = TempDir::new("mcp-net-modes");
        let server = Server::sdk(&py, transport, home.path());
        let url = server.url(path);
        let allow = json!({"tools":[{"name":"add","permission_policy":"always_allow"}]});
        for (mode, extra, want, is_error) in [
            ("bypassPermissions", json!({}), "3", false),
            ("default", json!({}), "no permission prompt available", true),
            (
                "acceptEdits",
                json!({}),
                "no permission prompt available",
                true,
            ),
            ("plan", json!({}), "plan mode", true),
            ("default", allow.clone(), "3", false),
        ] {
            let mut a = spawn(home.path(), &config(kind, &url, extra.clone()), mode);
            let (block, _) = tool_result(&turn(&mut a, r#"!mcp w add {"a":1,"b":2}"#));
            assert_eq!(
                block["is_error"], is_error,
                "{kind} {mode} {extra}: {block}"
            );
            assert!(
                block["content"].as_str().unwrap().contains(want),
                "{kind} {mode} {extra}: {block}"
            );
            finish(a);
        }
    }
}

#[test]
fn a_secret_header_reaches_the_server_and_never_a_record_or_the_store() {
    let Some(py) = python() else { return };
    let secret = "sekrit-header-value-1234";
    for (kind, transport, path) in KINDS {
        let home = TempDir::new("mcp-net-secret");
        let server = Server::sdk(&py, transport, home.path());
        let headers = json!({"headers":{"X-Api-Key": secret, "X-Plain": "visible"}});
        let mut a = spawn(
            home.path(),
            &config(kind, &server.url(path), headers),
            "bypassPermissions",
        );
        // The plain header reaches the server on every request.
        let (block, _) = tool_result(&turn(&mut a, r#"!mcp w header {"name":"x-plain"}"#));
        assert_eq!(block["content"], "visible", "{kind}");
        // PROFILE §18: a result carrying the secret is withheld and the session goes on.
        let (block, _) = tool_result(&turn(&mut a, r#"!mcp w header {"name":"x-api-key"}"#));
        assert_eq!(
            (block["content"].as_str().unwrap(), &block["is_error"]),
            (
                "MCP output withheld: it contains a configured secret",
                &json!(true)
            ),
            "{kind}"
        );
        let (block, _) = tool_result(&turn(&mut a, r#"!mcp w add {"a":2,"b":2}"#));
        assert_eq!(block["content"], "4", "{kind}");
        let s = mcp_status(&mut a, "s");
        assert!(!s.to_string().contains(secret));
        let (stdout, stderr) = finish(a);
        assert!(!stdout.contains(secret), "{kind}: stdout holds the secret");
        assert!(!stderr.contains(secret), "{kind}: stderr holds the secret");
        assert!(
            !walk(home.path()).contains(secret),
            "{kind}: the store holds the secret"
        );
    }
}

/// Every file under `dir` but the servers' logs, concatenated (lossily).
fn walk(dir: &Path) -> String {
    support::files_text(dir, &|p| p.extension().is_some_and(|x| x == "log"))
}

#[test]
fn a_401_is_needs_auth_and_the_session_goes_on() {
    for (kind, _, path) in KINDS {
        let home = TempDir::new("mcp-net-401");
        let server = Server::stub("401", home.path());
        let mut a = spawn(
            home.path(),
            &config(kind, &server.url(path), json!({})),
            "bypassPermissions",
        );
        let s = wait_status(&mut a, "needs-auth");
        assert_eq!(
            s["error"], "HTTP 401: the server asks for authorization",
            "{kind}"
        );
        assert!(s.get("tools").is_none() || s["tools"] == json!([]), "{s}");
        let records = turn(&mut a, "hi");
        assert_eq!(records.last().unwrap()["subtype"], "success");
        assert_eq!(
            records[0]["mcp_servers"],
            json!([{"name":"w","status":"needs-auth"}])
        );
        finish(a);
    }
}

#[test]
fn a_same_origin_redirect_is_followed_and_one_to_another_origin_is_not() {
    let Some(py) = python() else { return };
    for (kind, transport, _) in KINDS {
        let home = TempDir::new("mcp-net-redirect");
        let server = Server::sdk(&py, transport, home.path());
        let mut a = spawn(
            home.path(),
            &config(kind, &server.url("/moved"), json!({})),
            "bypassPermissions",
        );
        let (block, _) = tool_result(&turn(&mut a, r#"!mcp w add {"a":1,"b":2}"#));
        assert_eq!(block["content"], "3", "{kind}: {block}");
        finish(a);
        let mut a = spawn(
            home.path(),
            &config(kind, &server.url("/away"), json!({})),
            "bypassPermissions",
        );
        let s = wait_status(&mut a, "failed");
        assert!(
            s["error"]
                .as_str()
                .unwrap()
                .ends_with("HTTP 307: a redirect to another origin is not followed"),
            "{kind}: {s}"
        );
        finish(a);
    }
}

#[test]
fn a_server_that_dies_mid_call_gives_an_is_error_tool_result_within_1_s() {
    let Some(py) = python() else { return };
    for (kind, transport, path) in KINDS {
        let home = TempDir::new("mcp-net-die");
        let server = Server::sdk(&py, transport, home.path());
        let mut a = spawn(
            home.path(),
            &config(kind, &server.url(path), json!({})),
            "bypassPermissions",
        );
        a.send(&user("!mcp w die {}"));
        a.until(|v| v["type"] == "assistant");
        let asked = Instant::now();
        let records = a.until(harness::is_result);
        let (block, _) = tool_result(&records);
        let took = asked.elapsed();
        assert_eq!(block["is_error"], true, "{kind}: {block}");
        assert!(
            block["content"]
                .as_str()
                .unwrap()
                .starts_with("MCP error: "),
            "{kind}: {block}"
        );
        assert!(took < Duration::from_secs(1), "{kind}: {took:?}");
        let s = turn(&mut a, "hi");
        assert_eq!(s.last().unwrap()["subtype"], "success");
        finish(a);
    }
}

#[test]
fn a_call_times_out_at_the_config_timeout_and_the_server_sees_the_cancellation() {
    let Some(py) = python() else { return };
    for (kind, transport, path) in KINDS {
        let home = TempDir::new("mcp-net-timeout");
        let server = Server::sdk(&py, transport, home.path());
        let mut a = spawn(
            home.path(),
            &config(kind, &server.url(path), json!({"timeout":1000})),
            "bypassPermissions",
        );
        let (block, _) = tool_result(&turn(&mut a, "!mcp w wait {}"));
        assert_eq!(
            block["content"], "MCP tool call timed out after 1000 ms",
            "{kind}"
        );
        assert_eq!(block["is_error"], true);
        // PROFILE §18: `notifications/cancelled` reached the server, which stopped the call.
        let lines = server.wait_log(|l| l == "cancelled");
        assert_eq!(lines, ["waiting", "cancelled"], "{kind}");
        let (block, _) = tool_result(&turn(&mut a, r#"!mcp w add {"a":1,"b":1}"#));
        assert_eq!(block["content"], "2", "{kind}");
        finish(a);
    }
}

#[test]
fn list_changed_lists_the_tools_again_over_http_and_sse() {
    let Some(py) = python() else { return };
    for (kind, transport, path) in KINDS {
        let home = TempDir::new("mcp-net-changed");
        let server = Server::sdk(&py, transport, home.path());
        let mut a = spawn(
            home.path(),
            &config(kind, &server.url(path), json!({})),
            "bypassPermissions",
        );
        let (block, _) = tool_result(&turn(&mut a, "!mcp w changed {}"));
        assert_eq!(block["content"], "changed", "{kind}");
        let start = Instant::now();
        loop {
            let s = mcp_status(&mut a, "s");
            let tools = s[0]["tools"].as_array().cloned().unwrap_or_default();
            if tools.iter().any(|t| t["name"] == "late") {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "{kind}: {s}");
            std::thread::sleep(Duration::from_millis(20));
        }
        let (block, _) = tool_result(&turn(&mut a, "!mcp w late {}"));
        assert_eq!(block["content"], "late", "{kind}");
        finish(a);
    }
}

#[test]
fn the_session_id_and_version_are_sent_back_and_the_session_deleted_at_exit() {
    let home = TempDir::new("mcp-net-session");
    let server = Server::stub("record", home.path());
    let mut a = spawn(
        home.path(),
        &config("http", &server.url("/mcp"), json!({})),
        "bypassPermissions",
    );
    let (block, _) = tool_result(&turn(&mut a, "!mcp w hello {}"));
    assert_eq!(block["content"], "hi");
    finish(a);
    // PROFILE §18: the session is deleted on exit (before agentx is gone). The GET stream is
    // asked for once initialized, concurrently with what follows (this stub offers none: 405).
    let lines = server.log_lines();
    let (gets, posts): (Vec<&String>, Vec<&String>) =
        lines.iter().partition(|l| l.starts_with("GET "));
    assert_eq!(gets, ["GET /mcp"], "{lines:?}");
    assert_eq!(
        posts,
        [
            "POST initialize session=None version=None",
            "POST notifications/initialized session=s-1 version=2025-11-25",
            "POST tools/list session=s-1 version=2025-11-25",
            "POST tools/call session=s-1 version=2025-11-25",
            "DELETE session=s-1",
        ]
    );
    let get = lines.iter().position(|l| l.starts_with("GET ")).unwrap();
    assert!(
        get > 1,
        "the GET follows notifications/initialized: {lines:?}"
    );
}

/// agentx's peak resident set (VmHWM), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    agentx_test_support::proc_stat::status_kib(pid, "VmHWM").expect("VmHWM")
}

#[test]
fn a_flooding_stream_fails_the_server_and_agentx_stays_under_64_mib() {
    for (mode, error) in [
        ("flood", "a message is over 8388608 bytes"),
        ("noise", "the event stream is not JSON-RPC"),
    ] {
        let home = TempDir::new("mcp-net-flood");
        let server = Server::stub(mode, home.path());
        let mut a = spawn(
            home.path(),
            &config("http", &server.url("/mcp"), json!({})),
            "bypassPermissions",
        );
        let s = wait_status(&mut a, "failed");
        assert_eq!(s["error"], error, "{mode}");
        let rss = peak_rss_kib(a.pid());
        eprintln!("{mode}: agentx VmHWM {rss} KiB");
        assert!(rss < 64 * 1024, "{mode}: agentx peaked at {rss} KiB");
        let records = turn(&mut a, "hi");
        assert_eq!(records.last().unwrap()["subtype"], "success");
        finish(a);
    }
}

#[test]
fn an_interrupt_and_sigterm_cancel_the_call_in_flight_over_http_and_sse() {
    let Some(py) = python() else { return };
    for (kind, transport, path) in KINDS {
        for by in ["interrupt", "SIGTERM"] {
            let home = TempDir::new("mcp-net-cancel");
            let server = Server::sdk(&py, transport, home.path());
            let mut a = spawn(
                home.path(),
                &config(kind, &server.url(path), json!({})),
                "bypassPermissions",
            );
            a.send(&user("!mcp w wait {}"));
            a.until(|v| v["type"] == "assistant");
            server.wait_log(|l| l == "waiting");
            if by == "interrupt" {
                a.send(&json!({"type":"control_request","request_id":"int","request":{"subtype":"interrupt"}}));
                let records = a.until(harness::is_result);
                assert!(records.iter().any(
                    |r| r["type"] == "control_response" && r["response"]["request_id"] == "int"
                ));
                finish(a);
            } else {
                assert!(Command::new("kill")
                    .args(["-TERM", &a.pid().to_string()])
                    .status()
                    .unwrap()
                    .success());
                assert!(a.finish().status.is_some());
            }
            // PROFILE §18: `notifications/cancelled` reached the server, which stopped the
            // call.
            let lines = server.wait_log(|l| l == "cancelled");
            assert_eq!(lines, ["waiting", "cancelled"], "{kind} {by}");
        }
    }
}

#[test]
fn a_message_of_8_mib_is_taken_and_one_byte_more_fails_the_server() {
    // PROFILE §18 "Limits": one message at most 8,388,608 bytes, as a JSON body or one event.
    for kind in ["json", "event"] {
        for (n, ok) in [(8_388_608, true), (8_388_609, false)] {
            let home = TempDir::new("mcp-net-limit");
            let server = Server::stub(&format!("{kind}:{n}"), home.path());
            let mut a = spawn(
                home.path(),
                &config("http", &server.url("/mcp"), json!({})),
                "bypassPermissions",
            );
            let (block, _) = tool_result(&turn(&mut a, "!mcp w hello {}"));
            let text = block["content"].as_str().unwrap();
            if ok {
                assert_eq!(block["is_error"], false, "{kind} {n}");
                assert!(text.starts_with("aaaa"), "{kind} {n}");
                assert_eq!(wait_status(&mut a, "connected")["status"], "connected");
            } else {
                assert_eq!(
                    (text, &block["is_error"]),
                    ("MCP error: a message is over 8388608 bytes", &json!(true)),
                    "{kind} {n}"
                );
                let s = wait_status(&mut a, "failed");
                assert_eq!(s["error"], "a message is over 8388608 bytes");
            }
            finish(a);
        }
    }
}

#[test]
fn a_server_that_never_answers_delays_the_first_turn_by_the_connect_timeout_only() {
    for (kind, _, path) in KINDS {
        let home = TempDir::new("mcp-net-hang");
        let server = Server::stub("hang", home.path());
        let mut a = spawn_env(
            home.path(),
            &config(kind, &server.url(path), json!({})),
            "bypassPermissions",
            &[("MCP_TIMEOUT", "1500")],
        );
        let records = turn(&mut a, "hi");
        assert_eq!(records.last().unwrap()["subtype"], "success");
        let s = wait_status(&mut a, "failed");
        assert_eq!(s["error"], "initialize: no answer within 1500 ms", "{kind}");
        finish(a);
    }
}

#[test]
fn an_expired_session_fails_the_call_and_the_server() {
    let home = TempDir::new("mcp-net-expire");
    let server = Server::stub("expire", home.path());
    let mut a = spawn(
        home.path(),
        &config("http", &server.url("/mcp"), json!({})),
        "bypassPermissions",
    );
    let (block, _) = tool_result(&turn(&mut a, "!mcp w hello {}"));
    assert_eq!(
        (block["content"].as_str().unwrap(), &block["is_error"]),
        ("MCP error: HTTP 404: the session expired", &json!(true))
    );
    let s = wait_status(&mut a, "failed");
    assert_eq!(s["error"], "HTTP 404: the session expired");
    finish(a);
}

#[test]
fn a_server_asks_for_roots_mid_call_over_http_and_sse() {
    let Some(py) = python() else { return };
    for (kind, transport, path) in KINDS {
        let home = TempDir::new("mcp-net-roots");
        let server = Server::sdk(&py, transport, home.path());
        let mut a = spawn(
            home.path(),
            &config(kind, &server.url(path), json!({})),
            "bypassPermissions",
        );
        let (block, _) = tool_result(&turn(&mut a, "!mcp w roots {}"));
        let cwd = home.path().to_string_lossy().into_owned();
        assert_eq!(block["content"], format!("file://{cwd}"), "{kind}: {block}");
        finish(a);
    }
}

#[test]
fn an_https_server_with_a_certificate_no_root_vouches_for_is_a_tls_failure() {
    // PROFILE §18: TLS as in §14, the certificate checked; a self-signed one fails the server.
    let home = TempDir::new("mcp-net-tls");
    let log = home.path().join("tls.log");
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=127.0.0.1", "-keyout"])
        .arg(log.with_extension("log.key"))
        .arg("-out")
        .arg(log.with_extension("log.crt"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        if std::env::var_os("CI").is_some() {
            panic!("openssl is needed to make the test's certificate while CI is set");
        }
        eprintln!("SKIP: openssl could not make a certificate");
        return;
    }
    let server = Server::stub("tls", home.path());
    let url = format!("https://127.0.0.1:{}/mcp", server.port);
    let mut a = spawn(
        home.path(),
        &config("http", &url, json!({})),
        "bypassPermissions",
    );
    let s = wait_status(&mut a, "failed");
    assert_eq!(s["error"], "the server is unreachable: tls error");
    finish(a);
}

#[test]
fn an_sse_endpoint_on_another_origin_fails_the_server() {
    // PROFILE §18: the headers never leave the URL's origin, so neither does a POST.
    let home = TempDir::new("mcp-net-away");
    let server = Server::stub("sse-away", home.path());
    let mut a = spawn(
        home.path(),
        &config(
            "sse",
            &server.url("/sse"),
            json!({"headers":{"X-Api-Key":"sekrit-value-9"}}),
        ),
        "bypassPermissions",
    );
    let s = wait_status(&mut a, "failed");
    assert_eq!(s["error"], "the endpoint event names another origin");
    finish(a);
    assert_eq!(server.log_lines(), ["GET /sse"], "no POST anywhere");
}
