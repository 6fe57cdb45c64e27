//! A published MCP server from npm through the real `agentx` binary (PROFILE §18): the MCP
//! project's reference "everything" server (`@modelcontextprotocol/server-everything`, pinned
//! with its dependencies in tests/mcp/everything/package.json + package-lock.json), installed
//! with `npm ci` into `target/tmp/mcp-everything-<hash of the pins>` on first use; skipped
//! with a printed reason when node/npm or the registry is unavailable, failed under `CI`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use agentx_test_support::harness::{self, Agentx, TempDir};
use agentx_test_support::install;
use serde_json::{json, Value};

/// The server's entry point, or `None` (skipped).
fn everything() -> Option<PathBuf> {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/everything");
    let tmpdir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    match install::npm_tree(tmpdir, "mcp-everything", &project) {
        Ok(dir) => {
            Some(dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
        }
        Err(e) => install::unavailable("the MCP everything server", &e),
    }
}

fn user(text: &str) -> Value {
    json!({"type":"user","session_id":"","message":{"role":"user","content":text},"parent_tool_use_id":null})
}

fn turn(a: &mut Agentx, prompt: &str) -> Vec<Value> {
    a.send(&user(prompt));
    a.until(harness::is_result)
}

/// agentx in the SDK profile (bypassPermissions) with `config` as `--mcp-config`.
/// PROFILE §18: system/init lists the server as it is when written, so a test that checks
/// its tools there waits (polling `mcp_status`, at most 20 s) until the server is connected.
fn wait_connected(a: &mut Agentx) {
    let start = std::time::Instant::now();
    for n in 0.. {
        a.send(&json!({"type":"control_request","request_id":format!("w{n}"),"request":{"subtype":"mcp_status"}}));
        let r = a.until(|v| v["type"] == "control_response");
        if r.last().unwrap()["response"]["response"]["mcpServers"][0]["status"] == "connected" {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "the everything server did not connect: {r:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn spawn(home: &Path, config: &Value) -> Agentx {
    let mut cmd = harness::agentx_command(home);
    cmd.args([
        "--output-format",
        "stream-json",
        "--verbose",
        "--input-format",
        "stream-json",
        "--permission-mode",
        "bypassPermissions",
        "--mcp-config",
    ])
    .arg(config.to_string())
    .arg("--cwd")
    .arg(home);
    Agentx::start(cmd)
}

/// The `tool_result` block of a turn's records, and the record's `tool_use_result`.
fn tool_result(records: &[Value]) -> (Value, Value) {
    let user = records
        .iter()
        .find(|r| r["type"] == "user")
        .unwrap_or_else(|| panic!("no tool_result in {records:?}"));
    (
        user["message"]["content"][0].clone(),
        user["tool_use_result"].clone(),
    )
}

/// PROFILE §18 against a server others wrote: system/init lists its 16 tools as
/// `mcp__everything__*` after the built-in ones (get-roots-list and the two elicitation tools
/// only because agentx declares `roots` and, in the SDK profile, `elicitation`); `echo` and
/// `get-sum` answer as text, `get-structured-content` gives the record's `tool_use_result`, an
/// image block is `[image <mime> <N> bytes]`, the server's `roots/list` request is answered
/// with the cwd, its `elicitation/create` reaches the host as the `elicitation` control request
/// and the host's accept goes back, and `mcp_status` carries its serverInfo.
#[test]
fn the_everything_server_from_npm_is_connected_listed_and_called() {
    let Some(server) = everything() else { return };
    let home = TempDir::new("mcp-everything");
    let config = json!({"mcpServers":{"everything":{"command":"node","args":[server, "stdio"]}}});
    let mut a = spawn(home.path(), &config);
    wait_connected(&mut a);

    let first = turn(&mut a, r#"!mcp everything echo {"message":"hi"}"#);
    let init = &first[0];
    assert_eq!(init["subtype"], "init");
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"everything","status":"connected"}])
    );
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    let (builtin, mcp) = tools.split_at(7);
    assert!(builtin.iter().all(|t| !t.starts_with("mcp__")), "{tools:?}");
    assert_eq!(
        mcp,
        [
            "echo",
            "get-annotated-message",
            "get-env",
            "get-resource-links",
            "get-resource-reference",
            "get-structured-content",
            "get-sum",
            "get-tiny-image",
            "gzip-file-as-resource",
            "toggle-simulated-logging",
            "toggle-subscriber-updates",
            "trigger-long-running-operation",
            "get-roots-list",
            "trigger-elicitation-request",
            "trigger-url-elicitation",
            "simulate-research-query",
        ]
        .map(|t| format!("mcp__everything__{t}"))
    );
    let (block, _) = tool_result(&first);
    assert_eq!(block["content"], "Echo: hi", "{block}");
    assert_eq!(block["is_error"], false);
    assert_eq!(first.last().unwrap()["subtype"], "success");

    let (block, _) = tool_result(&turn(&mut a, r#"!mcp everything get-sum {"a":1,"b":2}"#));
    assert_eq!(block["content"], "The sum of 1 and 2 is 3.", "{block}");

    let (block, structured) = tool_result(&turn(
        &mut a,
        r#"!mcp everything get-structured-content {"location":"Chicago"}"#,
    ));
    let weather = json!({"temperature":36,"conditions":"Light rain / drizzle","humidity":82});
    assert_eq!(structured, weather);
    let text: Value = serde_json::from_str(block["content"].as_str().unwrap()).unwrap();
    assert_eq!(text, weather);

    let (block, _) = tool_result(&turn(&mut a, "!mcp everything get-tiny-image {}"));
    assert_eq!(
        block["content"],
        "Here's the image you requested:\n[image image/png 4033 bytes]\nThe image above is the MCP logo."
    );

    let (block, _) = tool_result(&turn(&mut a, "!mcp everything get-roots-list {}"));
    let roots = block["content"].as_str().unwrap();
    assert!(roots.starts_with("Current MCP Roots (1 total):"), "{roots}");
    let cwd = home.path().canonicalize().unwrap();
    assert!(
        roots.contains(&format!("URI: file://{}", cwd.display())),
        "{roots}"
    );

    a.send(&user("!mcp everything trigger-elicitation-request {}"));
    let asked = a.until(|v| v["type"] == "control_request");
    let request = &asked.last().unwrap();
    assert_eq!(request["request"]["subtype"], "elicitation", "{request}");
    assert_eq!(request["request"]["mcp_server_name"], "everything");
    assert_eq!(
        request["request"]["message"],
        "Please provide inputs for the following fields:"
    );
    assert_eq!(
        request["request"]["requested_schema"]["properties"]["name"]["description"],
        "Your full, legal name"
    );
    a.send(
        &json!({"type":"control_response","response":{"subtype":"success",
        "request_id":request["request_id"],
        "response":{"action":"accept","content":{"name":"Ada","check":true}}}}),
    );
    let (block, _) = tool_result(&a.until(harness::is_result));
    let text = block["content"].as_str().unwrap();
    assert!(
        text.starts_with(
            "✅ User provided the requested information!\nUser inputs:\n- Name: Ada\n- Agreed to terms: true\n"
        ),
        "{text}"
    );
    assert_eq!(block["is_error"], false);

    a.send(&json!({"type":"control_request","request_id":"s","request":{"subtype":"mcp_status"}}));
    let status = a.until(|v| v["type"] == "control_response");
    let s = &status.last().unwrap()["response"]["response"]["mcpServers"][0];
    assert_eq!(s["status"], "connected");
    assert_eq!(
        s["serverInfo"],
        json!({"name":"mcp-servers/everything","version":"2.0.0"})
    );
    assert_eq!(
        s["tools"][0],
        json!({"name":"echo","description":"Echoes back the input string"})
    );
    a.close_stdin();
    let f = a.finish();
    assert_eq!(f.status, Some(0), "{}", f.stderr);
}

/// The everything server in one of its network modes on a loopback port, killed when dropped.
struct NetworkServer {
    child: Child,
    port: u16,
}

impl NetworkServer {
    /// Starts `index.js <mode>` with `PORT` set to a port that was free a moment ago; it
    /// retries with another port when that one was taken in between (the server exits).
    fn start(index: &Path, mode: &str) -> NetworkServer {
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let mut child = Command::new("node")
                .arg(index)
                .arg(mode)
                .env("PORT", port.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("node starts");
            let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
            // "MCP Streamable HTTP Server listening on port N" / "Server is running on port N"
            let ready = lines
                .by_ref()
                .map_while(Result::ok)
                .any(|l| l.ends_with(&format!("on port {port}")));
            if ready {
                // Keep draining: the SSE mode logs every message on stderr.
                std::thread::spawn(move || lines.for_each(drop));
                return NetworkServer { child, port };
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("the everything server did not start in {mode} mode");
    }
}

impl Drop for NetworkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// PROFILE §18 "http and sse" against a server others wrote (the TypeScript MCP SDK's
/// streamable-HTTP and SSE server transports under express): connected with its 16 tools,
/// `echo` and `get-sum` called, its elicitation reaches the host and the decline goes back,
/// `mcp_status` carries the config's url and the serverInfo.
#[test]
fn the_everything_server_over_streamable_http_and_sse() {
    let Some(index) = everything() else { return };
    for (kind, mode, path) in [("http", "streamableHttp", "/mcp"), ("sse", "sse", "/sse")] {
        let server = NetworkServer::start(&index, mode);
        let url = format!("http://127.0.0.1:{}{path}", server.port);
        let home = TempDir::new("mcp-everything-net");
        let config = json!({"mcpServers":{"everything":{"type":kind,"url":url}}});
        let mut a = spawn(home.path(), &config);
        wait_connected(&mut a);
        let first = turn(&mut a, r#"!mcp everything echo {"message":"hi"}"#);
        assert_eq!(
            first[0]["mcp_servers"],
            json!([{"name":"everything","status":"connected"}]),
            "{kind}"
        );
        let tools = first[0]["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 7 + 16, "{kind}: {tools:?}");
        assert_eq!(tool_result(&first).0["content"], "Echo: hi", "{kind}");
        let (block, _) = tool_result(&turn(&mut a, r#"!mcp everything get-sum {"a":2,"b":3}"#));
        assert_eq!(block["content"], "The sum of 2 and 3 is 5.", "{kind}");
        // The server's elicitation/create arrives on its stream and reaches the host.
        a.send(&user("!mcp everything trigger-elicitation-request {}"));
        let asked = a.until(|v| v["type"] == "control_request");
        let request = asked.last().unwrap();
        assert_eq!(
            request["request"]["subtype"], "elicitation",
            "{kind}: {request}"
        );
        a.send(
            &json!({"type":"control_response","response":{"subtype":"success",
            "request_id":request["request_id"],"response":{"action":"decline"}}}),
        );
        let (block, _) = tool_result(&a.until(harness::is_result));
        assert!(
            block["content"]
                .as_str()
                .unwrap()
                .starts_with("❌ User declined to provide the requested information."),
            "{kind}: {block}"
        );
        a.send(
            &json!({"type":"control_request","request_id":"s","request":{"subtype":"mcp_status"}}),
        );
        let status = a.until(|v| v["type"] == "control_response");
        let s = &status.last().unwrap()["response"]["response"]["mcpServers"][0];
        assert_eq!(s["status"], "connected", "{kind}");
        assert_eq!(s["config"], json!({"type":kind,"url":url}), "{kind}");
        assert_eq!(
            s["serverInfo"],
            json!({"name":"mcp-servers/everything","version":"2.0.0"}),
            "{kind}"
        );
        a.close_stdin();
        let f = a.finish();
        assert_eq!(f.status, Some(0), "{kind}: {}", f.stderr);
        drop(server);
    }
}
