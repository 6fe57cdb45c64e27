//! PROFILE §18 through the real SDKs: the server built with the official Python MCP SDK
//! (FastMCP, `tests/mcp/demo_server.py`) given in the SDK's `mcp_servers` / `mcpServers`
//! option, over stdio, and over its own streamable-HTTP and SSE transports
//! (`tests/mcp/http_server.py`, started here on loopback ports); its python from the pinned
//! venv of `tests/mcp/requirements.txt` (the one tests/mcp_servers.rs uses, installed once per
//! target directory; skipped with a printed reason when it cannot be installed, failed under
//! `CI`).

use std::process::Child;

use serde_json::{json, Value};

use super::{result, run_flow_env, tool_results, Flow, Sdk, TempDir};

#[path = "../mcp/support.rs"]
mod mcp_support;
use mcp_support::{assets, python as mcp_python};

/// `http_server.py <transport>` on a free loopback port, killed when dropped.
struct NetworkServer {
    child: Child,
    url: String,
}

impl NetworkServer {
    fn start(python: &std::path::Path, transport: &str, path: &str, log: &std::path::Path) -> Self {
        let (child, port) =
            mcp_support::start_port_server(python, "http_server.py", transport, log);
        NetworkServer {
            child,
            url: format!("http://127.0.0.1:{port}{path}"),
        }
    }
}

impl Drop for NetworkServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs flow `name` of `sdk` with `MCP_PYTHON` and `MCP_DEMO_SERVER` set, and for
/// `mcp_network` `MCP_HTTP_URL` and `MCP_SSE_URL` of servers started for it; `None` when
/// skipped.
pub fn run_flow(sdk: Sdk, name: &str) -> Option<Flow> {
    let python = mcp_python()?;
    let server = assets().join("demo_server.py");
    let logs = TempDir::new("sdk-mcp-logs");
    let network = (name == "mcp_network").then(|| {
        [("streamable-http", "/mcp"), ("sse", "/sse")].map(|(transport, path)| {
            NetworkServer::start(&python, transport, path, &logs.path().join(transport))
        })
    });
    let urls: Vec<(&str, std::path::PathBuf)> = match &network {
        Some([http, sse]) => vec![
            ("MCP_HTTP_URL", http.url.clone().into()),
            ("MCP_SSE_URL", sse.url.clone().into()),
        ],
        None => Vec::new(),
    };
    let mut env: Vec<(&str, &std::path::Path)> =
        vec![("MCP_PYTHON", &python), ("MCP_DEMO_SERVER", &server)];
    env.extend(urls.iter().map(|(k, v)| (*k, v.as_path())));
    run_flow_env(sdk, name, TempDir::new("sdk-home"), &env)
}

fn demo_status(status: &str) -> Value {
    let (server, tools) = if status == "connected" {
        (
            json!("demo"),
            json!(["add", "env_names", "echo_env", "boom", "cwd"]),
        )
    } else {
        (Value::Null, json!([]))
    };
    json!({"name": "demo", "server": server, "status": status, "tools": tools})
}

/// The `mcp_status` events, in order (name, status, serverInfo name, tool names per server).
fn statuses(f: &Flow) -> Vec<&Value> {
    f.named("mcp_status").iter().map(|e| &e["value"]).collect()
}

/// PROFILE §18: system/init lists the server as it is at that moment, never waiting for it:
/// `connected` with its tools after the built-in ones, or still `pending` without them (the
/// turn's first model request is what waits); `!tool mcp__demo__add` and two `!mcp` uses go
/// through the host's permission callback; the results are the `tool_result`s
/// (structuredContent as `tool_use_result`, isError an error), the config's `env` reached the
/// server, and the status names its tools.
pub fn check_mcp_stdio(f: &Flow) {
    let init = &f.messages("system")[0]["data"];
    let mut tools = json!(["Read", "Write", "Bash", "Edit", "Glob", "Grep", "TodoWrite"]);
    let status = init["mcp_servers"][0]["status"].clone();
    if status == "connected" {
        tools.as_array_mut().unwrap().extend(
            [
                "mcp__demo__add",
                "mcp__demo__env_names",
                "mcp__demo__echo_env",
                "mcp__demo__boom",
                "mcp__demo__cwd",
            ]
            .map(Value::from),
        );
    } else {
        assert_eq!(status, "pending", "{init}");
    }
    assert_eq!(init["tools"], tools);
    assert_eq!(
        init["mcp_servers"],
        json!([{"name": "demo", "status": status}])
    );
    let asked: Vec<(&Value, &Value)> = f
        .named("callback")
        .iter()
        .map(|c| (&c["tool"], &c["input"]))
        .collect();
    assert_eq!(
        asked,
        [
            (&json!("mcp__demo__add"), &json!({"a": 1, "b": 2})),
            (&json!("mcp__demo__echo_env"), &json!({"name": "PLAIN"})),
            (&json!("mcp__demo__boom"), &json!({})),
        ],
        "{:?}",
        f.events
    );
    assert_eq!(
        tool_results(f),
        [
            (&json!("3"), &Value::Bool(false)),
            (&json!("from the config"), &Value::Bool(false)),
            (&json!("Error executing tool boom"), &Value::Bool(true)),
        ]
    );
    let structured: Vec<&Value> = f
        .named("tool_use_result")
        .iter()
        .map(|e| &e["value"])
        .collect();
    assert_eq!(
        structured,
        [
            &json!({"result": 3}),
            &json!({"result": "from the config"}),
            &Value::Null
        ]
    );
    let r = result(f, 0);
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["result"], "last tool result: Error executing tool boom");
    assert_eq!(statuses(f), [&json!([demo_status("connected")])]);
}

/// PROFILE §18 live changes: `toggle_mcp_server` / `toggleMcpServer` off makes the server
/// `disabled` and its tool unknown to the next turn; on and `reconnect_mcp_server` /
/// `reconnectMcpServer` bring it back `connected` and callable; an unknown name raises
/// `unknown MCP server nope`. TypeScript only (the Python SDK has no such method):
/// `setMcpServers` adds a dynamic server that is callable, and an empty set removes it while
/// the `mcpServers` option's server stays.
pub fn check_mcp_stdio_live(f: &Flow) {
    let raised: Vec<&Value> = f.named("raised").iter().map(|e| &e["error"]).collect();
    assert_eq!(
        raised,
        [&json!("unknown MCP server nope")],
        "{:?}",
        f.events
    );
    let mut want_results = vec![
        (json!("unknown tool mcp__demo__add"), Value::Bool(true)),
        (json!("7"), Value::Bool(false)),
    ];
    let mut want_statuses = vec![
        json!([demo_status("disabled")]),
        json!([demo_status("connected")]),
    ];
    let mut want_set = vec![];
    if f.sdk == Sdk::TypeScript {
        want_results.push((json!("11"), Value::Bool(false)));
        let mut more = demo_status("connected");
        more["name"] = json!("more");
        want_statuses.push(json!([demo_status("connected"), more]));
        want_statuses.push(json!([demo_status("connected")]));
        want_set = vec![
            json!({"added": ["more"], "errors": {}, "removed": []}),
            json!({"added": [], "errors": {}, "removed": ["more"]}),
        ];
    }
    let results: Vec<(Value, Value)> = tool_results(f)
        .into_iter()
        .map(|(c, e)| (c.clone(), e.clone()))
        .collect();
    assert_eq!(results, want_results, "{:?}", f.events);
    let got: Vec<Value> = statuses(f).into_iter().cloned().collect();
    assert_eq!(got, want_statuses);
    let set: Vec<Value> = f
        .named("set_servers")
        .iter()
        .map(|e| e["value"].clone())
        .collect();
    assert_eq!(set, want_set);
    let subtypes: Vec<&Value> = f.messages("result").iter().map(|r| &r["subtype"]).collect();
    assert_eq!(subtypes.len(), if f.sdk == Sdk::TypeScript { 4 } else { 3 });
    assert!(subtypes.iter().all(|s| *s == "success"), "{subtypes:?}");
}

/// PROFILE §18 "http and sse" through the SDKs: an http and an sse server in the option are
/// listed in system/init as they are at that moment (`connected` with its tools, or still
/// `pending` without them: system/init never waits), are connected in the status list, and
/// one call to each returns its result.
pub fn check_mcp_network(f: &Flow) {
    let init = &f.messages("system")[0]["data"];
    let tools = init["tools"].as_array().unwrap();
    for (i, name) in ["web", "old"].into_iter().enumerate() {
        let s = &init["mcp_servers"][i];
        assert_eq!(s["name"], name, "{init}");
        let offered = tools.contains(&json!(format!("mcp__{name}__add")));
        match s["status"].as_str() {
            Some("connected") => assert!(offered, "{tools:?}"),
            Some("pending") => assert!(!offered, "{tools:?}"),
            _ => panic!("{init}"),
        }
    }
    assert_eq!(
        tool_results(f),
        [
            (&json!("3"), &Value::Bool(false)),
            (&json!("7"), &Value::Bool(false)),
        ]
    );
    assert_eq!(result(f, 0)["result"], "last tool result: 7");
    let status = statuses(f);
    assert_eq!(status.len(), 1);
    let names: Vec<(&Value, &Value, &Value)> = status[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (&s["name"], &s["status"], &s["server"]))
        .collect();
    assert_eq!(
        names,
        [
            (&json!("web"), &json!("connected"), &json!("demo")),
            (&json!("old"), &json!("connected"), &json!("demo")),
        ]
    );
}
