//! In-process MCP tools through the real `agentx` binary in the SDK profile (PROFILE §16):
//! `--mcp-config` servers listed by `mcp_message`, a `!mcp` call answered by `tools/call`,
//! `mcp_status`, the exact interrupt order with an MCP call and a hook callback pending
//! (WIRE-011, WIRE-007), and an `openai` provider's function tools with the server's schemas
//! and a name over 64 characters mapped there and back (a real HTTP/1.1 + SSE server on
//! 127.0.0.1, tests/provider_http_support).

use crate::harness;
use crate::provider_http_support;

use agentx_core::model::ToolSpec;
use agentx_openai::names::FunctionNames;
use provider_http_support::agentx_home::*;
use provider_http_support::*;
use serde_json::{json, Value};

const SDK: [&str; 7] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
    "--permission-prompt-tool",
    "stdio",
];

const CALC: &str = r#"{"mcpServers":{"calc":{"type":"sdk","name":"calc"}}}"#;

fn spawn(home: &std::path::Path, cwd: &std::path::Path, extra: &[&str]) -> harness::Agentx {
    let mut args: Vec<String> = SDK.iter().map(|s| s.to_string()).collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--cwd".to_string(), cwd.to_string_lossy().into_owned()]);
    harness::Agentx::spawn(home, &args)
}

fn user(text: &str) -> Value {
    json!({"type":"user","session_id":"","message":{"role":"user","content":text},"parent_tool_use_id":null})
}

fn is_mcp(v: &Value) -> bool {
    v["type"] == "control_request" && v["request"]["subtype"] == "mcp_message"
}

fn answer(id: &str, response: Value) -> Value {
    json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":{"mcp_response":response}}})
}

/// The next `mcp_message` request: (request_id, JSON-RPC message).
fn next_mcp(a: &mut harness::Agentx, method: &str) -> (String, Value) {
    let seen = a.until(is_mcp);
    let r = seen.last().unwrap();
    assert_eq!(r["request"]["server_name"], "calc");
    let m = r["request"]["message"].clone();
    assert_eq!(m["method"], method, "{m}");
    (r["request_id"].as_str().unwrap().to_string(), m)
}

/// initialize (with `hooks`), then the handshake and `tools/list` of server `calc`.
fn start(a: &mut harness::Agentx, hooks: Value, tools: Value) {
    a.send(&json!({"type":"control_request","request_id":"init","request":{"subtype":"initialize","hooks":hooks}}));
    let r = a.until(|v| v["type"] == "control_response");
    assert_eq!(r.last().unwrap()["response"]["subtype"], "success");
    let (id, m) = next_mcp(a, "initialize");
    a.send(&answer(
        &id,
        json!({"jsonrpc":"2.0","id":m["id"],"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"calc","version":"1"}}}),
    ));
    let (id, _) = next_mcp(a, "notifications/initialized");
    a.send(&answer(&id, json!({"jsonrpc":"2.0","result":{}})));
    let (id, m) = next_mcp(a, "tools/list");
    a.send(&answer(
        &id,
        json!({"jsonrpc":"2.0","id":m["id"],"result":{"tools":tools}}),
    ));
}

fn calc_tools() -> Value {
    json!([
        {"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},
        {"name":"mul","description":"Multiply","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}}
    ])
}

fn label(v: &Value) -> String {
    match v["type"].as_str().unwrap_or("?") {
        "control_cancel_request" => format!("cancel:{}", v["request_id"].as_str().unwrap()),
        "control_response" => format!(
            "response:{}:{}",
            v["response"]["subtype"].as_str().unwrap(),
            v["response"]["request_id"].as_str().unwrap()
        ),
        "user" => {
            let b = &v["message"]["content"][0];
            format!(
                "tool_result:{}:{}",
                b["tool_use_id"].as_str().unwrap_or("?"),
                b["content"].as_str().unwrap_or("(blocks)")
            )
        }
        "result" => format!("result:{}", v["subtype"].as_str().unwrap()),
        "system" => format!(
            "system:{}",
            v["state"].as_str().or(v["subtype"].as_str()).unwrap_or("?")
        ),
        t => t.to_string(),
    }
}

/// PROFILE §16: `--mcp-config` (the Python SDK's delivery), listing, system/init, a `!mcp`
/// call whose result is the `tool_result`, `mcp_status`.
#[test]
fn an_mcp_tool_through_the_binary() {
    let home = harness::TempDir::new("agentx-mcp-call");
    let mut a = spawn(
        home.path(),
        home.path(),
        &[
            "--mcp-config",
            CALC,
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    start(&mut a, Value::Null, calc_tools());
    a.send(&user("!mcp calc add {\"a\": 1, \"b\": 2}\n!say after"));
    let (id, m) = next_mcp(&mut a, "tools/call");
    assert_eq!(m["params"], json!({"name":"add","arguments":{"a":1,"b":2}}));
    a.send(&answer(
        &id,
        json!({"jsonrpc":"2.0","id":m["id"],"result":{"content":[{"type":"text","text":"3"}]}}),
    ));
    let turn = a.turn();
    let init = a
        .seen
        .iter()
        .find(|v| v["subtype"] == "init")
        .expect("system/init in the first turn");
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"calc","status":"connected"}])
    );
    assert_eq!(
        init["tools"],
        json!([
            "Read",
            "Write",
            "Bash",
            "Edit",
            "Glob",
            "Grep",
            "TodoWrite",
            "mcp__calc__add",
            "mcp__calc__mul"
        ])
    );
    let tr = turn.iter().find(|v| v["type"] == "user").unwrap();
    assert_eq!(tr["message"]["content"][0]["content"], "3");
    assert_eq!(tr["message"]["content"][0]["is_error"], false);
    let r = turn.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["result"], "after");
    a.send(&json!({"type":"control_request","request_id":"st","request":{"subtype":"mcp_status"}}));
    let st = a.until(|v| v["type"] == "control_response");
    assert_eq!(
        st.last().unwrap()["response"]["response"],
        json!({"mcpServers":[{"name":"calc","status":"connected"}]})
    );
    assert_eq!(a.finish().status, Some(0));
}

/// WIRE-011 / PROFILE §16: an interrupt while an MCP call and a PreToolUse callback are
/// pending: both cancellations in the order sent, the acknowledgement, one `interrupted`
/// result per tool use, the result and `idle`; late answers change nothing.
#[test]
fn interrupt_with_an_mcp_call_and_a_hook_callback_pending() {
    let home = harness::TempDir::new("agentx-mcp-interrupt");
    let mut a = spawn(
        home.path(),
        home.path(),
        &[
            "--mcp-config",
            CALC,
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    start(
        &mut a,
        json!({"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]}]}),
        calc_tools(),
    );
    a.send(&user(
        "!mcp calc add {\"a\": 1, \"b\": 2}\n!tool Bash {\"command\":\"echo hi\"}\n!say never",
    ));
    let (call, m) = next_mcp(&mut a, "tools/call");
    let seen = a.until(|v| v["request"]["subtype"] == "hook_callback");
    let hook = seen.last().unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    a.send(
        &json!({"type":"control_request","request_id":"int_1","request":{"subtype":"interrupt"}}),
    );
    let rest = a.turn();
    let labels: Vec<String> = rest.iter().map(label).collect();
    let ids: Vec<String> = rest
        .iter()
        .filter(|v| v["type"] == "user")
        .map(|v| {
            v["message"]["content"][0]["tool_use_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids.len(), 2, "{labels:?}");
    // PROFILE §18: the host's server is told (`notifications/cancelled`) before the
    // acknowledgement, so its handler stops.
    let notice = &rest[2];
    assert_eq!(
        notice["request"],
        json!({"subtype":"mcp_message","server_name":"calc","message":{"jsonrpc":"2.0",
               "method":"notifications/cancelled","params":{"requestId":m["id"],"reason":"interrupted"}}})
    );
    assert_eq!(
        labels,
        [
            format!("cancel:{call}"),
            format!("cancel:{hook}"),
            "control_request".to_string(),
            "response:success:int_1".to_string(),
            format!("tool_result:{}:interrupted", ids[0]),
            format!("tool_result:{}:interrupted", ids[1]),
            "result:error_during_execution".to_string(),
            "system:idle".to_string(),
        ]
    );
    a.send(&answer(
        &call,
        json!({"jsonrpc":"2.0","id":m["id"],"result":{"content":[{"type":"text","text":"3"}]}}),
    ));
    a.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":hook,"response":{}}}));
    a.send(&answer(
        notice["request_id"].as_str().unwrap(),
        json!({"jsonrpc":"2.0","result":{},"id":0}),
    ));
    a.send(&user("after"));
    let turn = a.turn();
    assert!(turn.iter().all(|v| v["type"] != "user"), "{turn:#?}");
    let r = turn.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(r["result"], "echo: after");
    assert_eq!(a.finish().status, Some(0));
}

/// PROFILE §16/§18: the SDK server's own `notifications/tools/list_changed` (an inbound
/// `mcp_message`, as the TypeScript SDK sends it) is answered and lists its tools again: the
/// next turn calls the new tool.
#[test]
fn list_changed_from_an_sdk_server_lists_its_tools_again() {
    let home = harness::TempDir::new("agentx-mcp-changed");
    let mut a = spawn(
        home.path(),
        home.path(),
        &[
            "--mcp-config",
            CALC,
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    start(&mut a, Value::Null, calc_tools());
    a.send(&json!({"type":"control_request","request_id":"changed","request":{"subtype":"mcp_message",
        "server_name":"calc","message":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}}));
    let seen = a.until(is_mcp);
    assert_eq!(
        label(&seen[seen.len() - 2]),
        "response:success:changed",
        "{seen:?}"
    );
    let r = seen.last().unwrap();
    let m = r["request"]["message"].clone();
    assert_eq!(m["method"], "tools/list");
    a.send(&answer(
        r["request_id"].as_str().unwrap(),
        json!({"jsonrpc":"2.0","id":m["id"],"result":{"tools":[{"name":"div","inputSchema":{"type":"object"}}]}}),
    ));
    a.send(&user("!mcp calc div {}"));
    let (id, m) = next_mcp(&mut a, "tools/call");
    assert_eq!(m["params"]["name"], "div");
    a.send(&answer(
        &id,
        json!({"jsonrpc":"2.0","id":m["id"],"result":{"content":[{"type":"text","text":"2"}]}}),
    ));
    let turn = a.turn();
    let r = turn.iter().find(|v| v["type"] == "user").unwrap();
    assert_eq!(r["message"]["content"][0]["content"], "2");
    assert_eq!(a.finish().status, Some(0));
}

/// PROFILE §16: an interrupt while an SDK server is listed withdraws the listing request
/// before the acknowledgement; the server is `failed` and the waiting prompt's turn runs
/// without it.
#[test]
fn an_interrupt_stops_a_listing() {
    let home = harness::TempDir::new("agentx-mcp-int-listing");
    let mut a = spawn(home.path(), home.path(), &["--mcp-config", CALC]);
    a.send(
        &json!({"type":"control_request","request_id":"init","request":{"subtype":"initialize"}}),
    );
    let (id, _) = next_mcp(&mut a, "initialize");
    a.send(&user("hi"));
    a.send(
        &json!({"type":"control_request","request_id":"int_1","request":{"subtype":"interrupt"}}),
    );
    let rest = a.turn();
    let labels: Vec<String> = rest.iter().map(label).collect();
    assert_eq!(
        labels[..2],
        [format!("cancel:{id}"), "response:success:int_1".to_string()]
    );
    let init = rest.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"calc","status":"failed"}])
    );
    let r = rest.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(r["result"], "echo: hi");
    let f = a.finish();
    assert_eq!(f.status, Some(0));
    assert!(
        f.stderr
            .contains("agentx: WARN MCP server \"calc\" failed: interrupted"),
        "{}",
        f.stderr
    );
}

/// PROFILE §16: an `openai` provider gets the MCP tools as function tools with the server's
/// schemas; a name over 64 characters goes out renamed within the limit and the call comes
/// back to the right tool (`tools/call` of its own name).
#[test]
fn openai_function_tools_and_long_names_map_back() {
    let long_tool = "t".repeat(70);
    let full = format!("mcp__calc__{long_tool}");
    let function = FunctionNames::of(&[ToolSpec {
        name: full.clone(),
        description: String::new(),
        input_schema: "{}".into(),
    }])
    .function(&full);
    assert!(function.len() <= 64 && function != full);
    let call = vec![
        delta(
            &format!(
                r#"{{"role":"assistant","content":null,"tool_calls":[{{"index":0,"id":"call_M1","type":"function","function":{{"name":"{function}","arguments":""}}}}],"refusal":null}}"#
            ),
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":2}"}}]}"#,
            "null",
        ),
        delta("{}", r#""tool_calls""#),
        usage(10, 5),
        done(),
    ];
    let server = Server::start_in_thread(vec![Reply::Sse(call), Reply::Sse(text_stream())]);
    let home = Home::new(&openai_auth(&server));
    let mut a = spawn(
        &home.0,
        &home.cwd(),
        &[
            "--mcp-config",
            CALC,
            "--permission-mode",
            "bypassPermissions",
        ],
    );
    let schema = json!({"type":"object","properties":{"a":{"type":"number"}}});
    start(
        &mut a,
        Value::Null,
        json!([{"name":long_tool,"description":"Long","inputSchema":schema}]),
    );
    a.send(&user("call it"));
    let (id, m) = next_mcp(&mut a, "tools/call");
    assert_eq!(m["params"]["name"], long_tool.as_str());
    assert_eq!(m["params"]["arguments"], json!({"a":2}));
    a.send(&answer(
        &id,
        json!({"jsonrpc":"2.0","id":m["id"],"result":{"content":[{"type":"text","text":"ok"}]}}),
    ));
    let turn = a.turn();
    let tu = a
        .seen
        .iter()
        .find(|v| v["type"] == "assistant" && v["message"]["content"][0]["type"] == "tool_use")
        .unwrap();
    assert_eq!(tu["message"]["content"][0]["name"], full.as_str());
    let r = turn.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(r["subtype"], "success");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    let f = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == function.as_str())
        .unwrap_or_else(|| panic!("no renamed function tool: {body}"));
    assert_eq!(f["function"]["parameters"], schema);
    assert_eq!(f["function"]["description"], "Long");
    // The second request's history names the call by the same function name.
    let body: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    let asked = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert_eq!(
        asked["tool_calls"][0]["function"]["name"],
        function.as_str()
    );
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool["content"], "ok");
    assert_eq!(a.finish().status, Some(0));
}

/// PROFILE §18: a malformed server in `--mcp-config` is a usage error naming it, before any
/// output.
#[test]
fn a_malformed_server_is_refused_on_the_command_line() {
    let home = harness::TempDir::new("agentx-mcp-refused");
    let mut args: Vec<&str> = SDK.to_vec();
    args.extend([
        "--mcp-config",
        r#"{"mcpServers":{"files":{"type":"stdio","command":"npx","cwd":"/"}}}"#,
    ]);
    let (status, stdout, stderr) = harness::run(home.path(), &args, b"");
    assert_eq!(status, Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(
        stderr.lines().next(),
        Some("agentx: --mcp-config: MCP server \"files\": unknown member \"cwd\" (argument 9)")
    );
}
