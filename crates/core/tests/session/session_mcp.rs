//! In-process MCP tools through the session core on a virtual clock (PROFILE §16, WIRE-007,
//! WIRE-011): servers from `--mcp-config` and initialize, listing by `mcp_message`
//! (`initialize`, `notifications/initialized`, `tools/list` pages) before the first turn,
//! `mcp__server__tool` in system/init and the model's list, statuses, calls through
//! permissions as `tools/call`, error results, timeouts at their edge, refusals, and an
//! interrupt with an MCP call and a hook callback pending.

use crate::session_sim;

use std::time::Duration;

use agentx_core::session::{Profile, SessionConfig};
use agentx_wire::wire::permission::PermissionMode;
use serde_json::{json, Value};
use session_sim::*;

const ADD: &str = r#"{"a":1,"b":2}"#;

pub(crate) fn sdk_config(servers: &[&str]) -> SessionConfig {
    let mut c = config();
    c.profile = Profile::Sdk;
    c.mcp.servers = servers
        .iter()
        .map(|s| agentx_core::session::mcp_config::ServerDef {
            name: s.to_string(),
            kind: agentx_core::session::mcp_config::ServerKind::Sdk,
        })
        .collect();
    c
}

/// `mcp_message` requests written: (request_id, server_name, JSON-RPC message).
pub(crate) fn mcp_requests(sim: &Sim) -> Vec<(String, String, Value)> {
    sim.out
        .iter()
        .filter(|v| v["type"] == "control_request" && v["request"]["subtype"] == "mcp_message")
        .map(|v| {
            (
                v["request_id"].as_str().unwrap().to_string(),
                v["request"]["server_name"].as_str().unwrap().to_string(),
                v["request"]["message"].clone(),
            )
        })
        .collect()
}

/// The last `mcp_message` request, which must carry `method`.
pub(crate) fn last_mcp(sim: &Sim, method: &str) -> (String, String, Value) {
    let last = mcp_requests(sim).pop().expect("an mcp_message request");
    assert_eq!(last.2["method"], method, "{:?}", sim.labels());
    last
}

pub(crate) fn mcp_answer(request_id: &str, response: Value) -> String {
    json!({"type":"control_response","response":{"subtype":"success","request_id":request_id,
        "response":{"mcp_response":response}}})
    .to_string()
}

pub(crate) fn result_of(message: &Value, result: Value) -> Value {
    json!({"jsonrpc":"2.0","id":message["id"],"result":result})
}

pub(crate) fn two_tools() -> Value {
    json!([
        {"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}},
        {"name":"mul","inputSchema":{"type":"object"}}
    ])
}

/// Answers one server's handshake and `tools/list` (as the Python SDK's bridge does).
pub(crate) fn serve_listing(sim: &mut Sim, tools: Value) {
    let (id, server, m) = last_mcp(sim, "initialize");
    assert_eq!(m["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(m["params"]["clientInfo"]["name"], "agentx");
    sim.send(&mcp_answer(
        &id,
        result_of(
            &m,
            json!({"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":server,"version":"1"}}),
        ),
    ));
    let (id, _, m) = last_mcp(sim, "notifications/initialized");
    assert!(m.get("id").is_none(), "a notification has no id: {m}");
    // Python answers a notification with `{"jsonrpc":"2.0","result":{}}`.
    sim.send(&mcp_answer(&id, json!({"jsonrpc":"2.0","result":{}})));
    let (id, _, m) = last_mcp(sim, "tools/list");
    sim.send(&mcp_answer(&id, result_of(&m, json!({ "tools": tools }))));
}

/// An SDK-profile session with server `calc` listed (two tools).
pub(crate) fn listed(c: SessionConfig) -> Sim {
    let mut sim = Sim::new(c);
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":null}),
    ));
    serve_listing(&mut sim, two_tools());
    sim
}

pub(crate) fn tool_result(sim: &Sim, id: &str) -> Value {
    let hits: Vec<&Value> = sim
        .out
        .iter()
        .filter(|v| v["type"] == "user" && v["message"]["content"][0]["tool_use_id"] == id)
        .collect();
    assert_eq!(
        hits.len(),
        1,
        "exactly one tool_result for {id}: {:?}",
        sim.labels()
    );
    hits[0]["message"]["content"][0].clone()
}

/// PROFILE §16: the servers are listed after initialize's response, before any turn; the
/// tools are offered as `mcp__<server>__<tool>` with their schemas, listed in system/init
/// `tools`, and system/init `mcp_servers` says `connected`.
#[test]
fn listing_before_the_first_turn_offers_the_tools() {
    let mut sim = Sim::new(sdk_config(&["calc"]));
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":null}),
    ));
    assert_eq!(
        sim.labels()[..2],
        [
            "control_response:success:init".to_string(),
            format!("control_request:mcp_message:{}", mcp_requests(&sim)[0].0),
        ]
    );
    // Python's `--mcp-config` delivery: no `mcp_servers_applied` (initialize named no server).
    assert!(sim.out[0]["response"]["response"]
        .get("mcp_servers_applied")
        .is_none());
    assert_eq!(mcp_requests(&sim)[0].1, "calc");
    // A prompt sent while the server is listed waits for it.
    let (id, _, m) = last_mcp(&sim, "initialize");
    sim.send(&user("go"));
    assert!(sim.of("system").is_empty(), "{:?}", sim.labels());
    assert!(sim.requests.is_empty());
    sim.send(&mcp_answer(
        &id,
        result_of(&m, json!({"capabilities":{"tools":{}}})),
    ));
    let (id, _, _) = last_mcp(&sim, "notifications/initialized");
    sim.send(&mcp_answer(
        &id,
        json!({"jsonrpc":"2.0","result":{},"id":0}),
    ));
    // Two pages: the cursor is sent back.
    let (id, _, m) = last_mcp(&sim, "tools/list");
    assert!(m.get("params").is_none());
    sim.send(&mcp_answer(
        &id,
        result_of(&m, json!({"tools":[two_tools()[0]],"nextCursor":"p2"})),
    ));
    let (id, _, m) = last_mcp(&sim, "tools/list");
    assert_eq!(m["params"]["cursor"], "p2");
    assert!(sim.requests.is_empty(), "still listing");
    sim.send(&mcp_answer(
        &id,
        result_of(&m, json!({"tools":[two_tools()[1]]})),
    ));
    let init = sim
        .out
        .iter()
        .find(|v| v["subtype"] == "init")
        .expect("system/init");
    assert_eq!(
        init["tools"],
        json!(["Read", "Write", "Bash", "mcp__calc__add", "mcp__calc__mul"])
    );
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"calc","status":"connected"}])
    );
    let tools = &sim.requests[0].tools;
    let add = tools.iter().find(|t| t.name == "mcp__calc__add").unwrap();
    assert_eq!(add.description, "Add two numbers");
    let schema: Value = serde_json::from_str(&add.input_schema).unwrap();
    assert_eq!(schema, two_tools()[0]["inputSchema"]);
    // `mcp_status` says the same.
    sim.send(&control("st", json!({"subtype":"mcp_status"})));
    assert_eq!(
        sim.last()["response"]["response"],
        json!({"mcpServers":[{"name":"calc","status":"connected"}]})
    );
}

/// PROFILE §16: a call goes through §10 (an ask reaches the host as `can_use_tool`), then
/// `tools/call` with the server's own tool name and the input; the result's text is the
/// `tool_result`, and the model sees it.
#[test]
fn a_call_asks_then_runs_as_tools_call() {
    let mut sim = listed(sdk_config(&["calc"]));
    sim.script(tool_reply("msg_a", &[("toolu_1", "mcp__calc__add", ADD)]))
        .script(text_reply("msg_b", "done", None));
    sim.send(&user("go"));
    let ask = sim
        .out
        .iter()
        .rev()
        .find(|v| v["request"]["subtype"] == "can_use_tool")
        .expect("an ask")
        .clone();
    assert_eq!(ask["request"]["tool_name"], "mcp__calc__add");
    let before = mcp_requests(&sim).len();
    sim.send(&allow(ask["request_id"].as_str().unwrap()));
    assert_eq!(mcp_requests(&sim).len(), before + 1);
    let (id, server, m) = last_mcp(&sim, "tools/call");
    assert_eq!(server, "calc");
    assert_eq!(m["params"], json!({"name":"add","arguments":{"a":1,"b":2}}));
    assert!(sim.run_tools().is_empty(), "no local tool runs");
    sim.send(&mcp_answer(
        &id,
        result_of(&m, json!({"content":[{"type":"text","text":"3"}]})),
    ));
    let r = tool_result(&sim, "toolu_1");
    assert_eq!(r["content"], "3");
    assert_eq!(r["is_error"], false);
    assert_eq!(sim.last_of("result")["subtype"], "success");
    let seen = sim.requests[1].messages.iter().any(|m| {
        matches!(m, agentx_core::model::Message::ToolResult { content, is_error: false, .. } if content == "3")
    });
    assert!(seen, "the model sees the result");
}

/// PROFILE §16: an MCP error result (`isError`), a JSON-RPC error, a host error answer and a
/// malformed answer are each an `is_error` `tool_result`; the turn goes on.
#[test]
fn error_results_are_is_error_tool_results() {
    let mut c = sdk_config(&["calc"]);
    c.permission_mode = PermissionMode::BypassPermissions;
    let mut sim = listed(c);
    type Answer = Box<dyn Fn(&str, &Value) -> String>;
    let cases: [(Answer, &str); 4] = [
        (
            Box::new(|id, m| {
                mcp_answer(
                    id,
                    result_of(
                        m,
                        json!({"content":[{"type":"text","text":"division by zero"}],"isError":true}),
                    ),
                )
            }),
            "division by zero",
        ),
        (
            Box::new(|id, m| {
                mcp_answer(
                    id,
                    json!({"jsonrpc":"2.0","id":m["id"],"error":{"code":-32602,"message":"Unknown tool: add"}}),
                )
            }),
            "MCP call failed: Unknown tool: add",
        ),
        (
            Box::new(|id, _| {
                json!({"type":"control_response","response":{"subtype":"error","request_id":id,"error":"boom"}}).to_string()
            }),
            "MCP call failed: boom",
        ),
        (
            Box::new(|id, m| mcp_answer(id, json!({"jsonrpc":"2.0","id":m["id"]}))),
            "MCP call failed: the mcp_response has neither result nor error",
        ),
    ];
    for (n, (answer, text)) in cases.iter().enumerate() {
        let use_id = format!("toolu_{n}");
        sim.script(tool_reply("msg_a", &[(&use_id, "mcp__calc__add", ADD)]))
            .script(text_reply("msg_b", "done", None));
        sim.send(&user("go"));
        let (id, _, m) = last_mcp(&sim, "tools/call");
        sim.send(&answer(&id, &m));
        let r = tool_result(&sim, &use_id);
        assert_eq!(r["content"], *text, "case {n}");
        assert_eq!(r["is_error"], true, "case {n}");
        assert_eq!(sim.last_of("result")["subtype"], "success", "case {n}");
    }
}

/// A call waits `call_timeout` and not a millisecond more: then it is cancelled with
/// `control_cancel_request` (WIRE-007), the use gets an `is_error` result, and the late
/// answer changes nothing.
#[test]
fn a_call_times_out_at_its_edge() {
    let mut c = sdk_config(&["calc"]);
    c.permission_mode = PermissionMode::BypassPermissions;
    c.mcp.call_timeout = Duration::from_secs(5);
    let mut sim = listed(c);
    sim.script(tool_reply("msg_a", &[("toolu_1", "mcp__calc__add", ADD)]))
        .script(text_reply("msg_b", "done", None));
    sim.send(&user("go"));
    let t0 = sim.now;
    let (id, _, m) = last_mcp(&sim, "tools/call");
    assert_eq!(sim.s.pending_mcp_calls().len(), 1);
    assert_eq!(sim.s.pending_mcp_calls()[0], id);
    assert_eq!(sim.s.poll_timeout(), Some(t0 + Duration::from_secs(5)));
    sim.advance(4_999);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert_eq!(sim.s.pending_mcp_calls().len(), 1, "not yet");
    sim.advance(1);
    let from = sim.out.len();
    sim.s.handle_timeout(sim.now);
    sim.step();
    // PROFILE §18: the host's server gets `notifications/cancelled` for the call, so its
    // handler stops; that message's own answer is ignored.
    let (notice, server, cancelled) = mcp_requests(&sim).pop().unwrap();
    assert_eq!(server, "calc");
    assert_eq!(
        cancelled,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":m["id"],"reason":"timed out"}})
    );
    assert_eq!(
        sim.labels_from(from)[..3],
        [
            format!("control_cancel_request:{id}"),
            format!("control_request:mcp_message:{notice}"),
            "tool_result:toolu_1:MCP tool mcp__calc__add timed out after 5 s".to_string(),
        ]
    );
    assert_eq!(tool_result(&sim, "toolu_1")["is_error"], true);
    assert_eq!(sim.last_of("result")["subtype"], "success");
    let n = sim.out.len();
    sim.send(&mcp_answer(&id, result_of(&m, json!({"content":[]}))));
    sim.send(&mcp_answer(&notice, json!({"jsonrpc":"2.0","result":{}})));
    assert_eq!(sim.out.len(), n, "the late answers write nothing");
    assert_eq!(sim.s.poll_timeout(), None);
}

/// A server whose listing fails (an error answer) or times out (`list_timeout`) is `failed`,
/// with one WARN line each; its tools are not offered and the turn starts without them.
#[test]
fn failed_listing_makes_the_server_failed() {
    let mut c = sdk_config(&["bad", "slow"]);
    c.mcp.list_timeout = Duration::from_secs(2);
    let mut sim = Sim::new(c);
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":null}),
    ));
    let reqs = mcp_requests(&sim);
    assert_eq!(reqs.len(), 2, "both servers are listed side by side");
    let (bad, slow) = (&reqs[0], &reqs[1]);
    assert_eq!((bad.1.as_str(), slow.1.as_str()), ("bad", "slow"));
    sim.send(&mcp_answer(
        &bad.0,
        json!({"jsonrpc":"2.0","id":bad.2["id"],"error":{"code":-32601,"message":"Server 'bad' not found"}}),
    ));
    sim.send(&user("go"));
    assert!(sim.requests.is_empty(), "slow is still listed");
    sim.advance(1_999);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert!(sim.requests.is_empty());
    sim.advance(1);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert!(sim
        .labels()
        .contains(&format!("control_cancel_request:{}", slow.0)));
    assert_eq!(
        sim.diagnostics,
        [
            "agentx: WARN MCP server \"bad\" failed: it answered a JSON-RPC error or a malformed \
             mcp_response",
            "agentx: WARN MCP server \"slow\" failed: timed out",
        ]
    );
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"bad","status":"failed"},{"name":"slow","status":"failed"}])
    );
    assert_eq!(init["tools"], json!(["Read", "Write", "Bash"]));
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// TypeScript: initialize `sdkMcpServers` with `sdkMcpServerManifests` (the tools listed by
/// the SDK itself) needs no listing; `mcp_servers_applied` is true; a malformed server in
/// `mcpServers` (PROFILE §18) is a correlated error naming it, and nothing is registered.
#[test]
fn typescript_manifests_and_refusals() {
    let mut refused = Sim::new(sdk_config(&[]));
    refused.send(&control(
        "i1",
        json!({"subtype":"initialize","mcpServers":{"files":{"type":"stdio"}}}),
    ));
    let r = &refused.last()["response"];
    assert_eq!(r["subtype"], "error");
    assert_eq!(
        r["error"],
        "initialize.mcpServers: MCP server \"files\": it has no command"
    );
    // Not counted: a later initialize is answered.
    refused.send(&control(
        "i2",
        json!({"subtype":"initialize","mcpServers":{}}),
    ));
    let r = &refused.last()["response"];
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["response"]["mcp_servers_applied"], true);

    let mut sim = Sim::new(sdk_config(&[]));
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","sdkMcpServers":["calc"],"sdkMcpServerManifests":{"calc":{
            "initializeResult":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}}},
            "toolsListResult":{"tools":two_tools()}}}}),
    ));
    assert_eq!(
        sim.last()["response"]["response"]["mcp_servers_applied"],
        true
    );
    assert!(
        mcp_requests(&sim).is_empty(),
        "the manifest needs no listing"
    );
    sim.send(&user("hi"));
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["tools"],
        json!(["Read", "Write", "Bash", "mcp__calc__add", "mcp__calc__mul"])
    );
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"calc","status":"connected"}])
    );
}

/// PROFILE §15: `--disallowedTools mcp__calc__mul` removes that tool; `--allowedTools
/// mcp__calc__add` runs it without asking.
#[test]
fn tool_rules_cover_mcp_tools() {
    let mut c = sdk_config(&["calc"]);
    c.tool_rules.disallowed =
        agentx_core::session::tool_rules::parse_rules("mcp__calc__mul").unwrap();
    c.tool_rules.allowed = agentx_core::session::tool_rules::parse_rules("mcp__calc__add").unwrap();
    let mut sim = listed(c);
    sim.script(tool_reply("msg_a", &[("toolu_1", "mcp__calc__add", ADD)]))
        .script(text_reply("msg_b", "done", None));
    sim.send(&user("go"));
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["tools"],
        json!(["Read", "Write", "Bash", "mcp__calc__add"])
    );
    assert!(
        !sim.out
            .iter()
            .any(|v| v["request"]["subtype"] == "can_use_tool"),
        "allowed without asking"
    );
    let (id, _, m) = last_mcp(&sim, "tools/call");
    sim.send(&mcp_answer(
        &id,
        result_of(&m, json!({"content":[{"type":"text","text":"3"}]})),
    ));
    assert_eq!(tool_result(&sim, "toolu_1")["content"], "3");
}

/// WIRE-011 / PROFILE §16: an interrupt while an MCP call and a hook callback are pending
/// cancels both, in the order they were sent, before the acknowledgement; every tool use is
/// paired with one `interrupted` result; the late answers change nothing.
#[test]
fn interrupt_with_an_mcp_call_and_a_hook_callback_pending() {
    let mut c = sdk_config(&["calc"]);
    c.permission_mode = PermissionMode::BypassPermissions;
    let mut sim = Sim::new(c);
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]}]}}),
    ));
    serve_listing(&mut sim, two_tools());
    sim.script(tool_reply(
        "msg_a",
        &[
            ("toolu_1", "mcp__calc__add", ADD),
            ("toolu_2", "Bash", r#"{"command":"ls"}"#),
        ],
    ));
    sim.send(&user("go"));
    let (call, _, m) = last_mcp(&sim, "tools/call");
    let hook = sim
        .out
        .iter()
        .find(|v| v["request"]["subtype"] == "hook_callback")
        .expect("the hook callback")["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(sim.s.pending_hook_callbacks(), std::slice::from_ref(&hook));
    let from = sim.out.len();
    sim.send(&control("int_1", json!({"subtype":"interrupt"})));
    // PROFILE §18: the SDK server gets `notifications/cancelled` for the call, before the
    // acknowledgement.
    let (notice, _, cancelled) = mcp_requests(&sim).pop().unwrap();
    assert_eq!(
        cancelled,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":m["id"],"reason":"interrupted"}})
    );
    assert_eq!(
        sim.labels_from(from),
        [
            format!("control_cancel_request:{call}"),
            format!("control_cancel_request:{hook}"),
            format!("control_request:mcp_message:{notice}"),
            "control_response:success:int_1".to_string(),
            "tool_result:toolu_1:interrupted".to_string(),
            "tool_result:toolu_2:interrupted".to_string(),
            "result:error_during_execution".to_string(),
            "state:idle".to_string(),
        ]
    );
    assert!(sim.s.pending_mcp_calls().is_empty());
    assert!(sim.s.pending_hook_callbacks().is_empty());
    let n = sim.out.len();
    sim.send(&mcp_answer(&notice, json!({"jsonrpc":"2.0","result":{}})));
    assert_eq!(sim.s.poll_timeout(), None);
    sim.send(&mcp_answer(
        &call,
        result_of(&m, json!({"content":[{"type":"text","text":"3"}]})),
    ));
    sim.send(
        &json!({"type":"control_response","response":{"subtype":"success","request_id":hook,"response":{}}})
            .to_string(),
    );
    assert_eq!(sim.out.len(), n, "late answers write nothing");
    assert!(sim.run_tools().is_empty());
    tool_result(&sim, "toolu_1");
    tool_result(&sim, "toolu_2");
}

/// WIRE-008: EOF with a call pending: the call fails (`control stream closed`), the use is
/// paired with that error and the session exits 0.
#[test]
fn eof_with_a_call_pending() {
    let mut c = sdk_config(&["calc"]);
    c.permission_mode = PermissionMode::BypassPermissions;
    let mut sim = listed(c);
    sim.script(tool_reply("msg_a", &[("toolu_1", "mcp__calc__add", ADD)]))
        .script(text_reply("msg_b", "done", None));
    sim.send(&user("go"));
    last_mcp(&sim, "tools/call");
    sim.eof();
    let r = tool_result(&sim, "toolu_1");
    assert_eq!(r["content"], "MCP call failed: control stream closed");
    assert_eq!(r["is_error"], true);
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(0));
}

/// The listing limits at their edges: 256 tools of one server are offered and the 257th is
/// not (one WARN line); `tools/list` pages are followed 16 times and no 17th is asked for
/// (`session::mcp::MAX_TOOLS_PER_SERVER`, `MAX_LIST_PAGES`).
#[test]
fn listing_limits_at_their_edges() {
    use agentx_core::session::mcp::{MAX_LIST_PAGES, MAX_TOOLS_PER_SERVER};
    let tool = |i: usize| json!({"name":format!("t{i}"),"inputSchema":{"type":"object"}});
    // 257 tools on one page.
    let many: Vec<Value> = (0..=MAX_TOOLS_PER_SERVER).map(tool).collect();
    let mut sim = Sim::new(sdk_config(&["big"]));
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":null}),
    ));
    serve_listing(&mut sim, Value::Array(many));
    assert_eq!(
        sim.diagnostics,
        ["agentx: WARN MCP server \"big\" lists more than 256 tools; the rest are not offered"]
    );
    sim.send(&user("hi"));
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    let tools = init["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3 + MAX_TOOLS_PER_SERVER);
    assert_eq!(tools.last().unwrap(), "mcp__big__t255");
    // Every page names a next one: 16 are read, then the server is connected.
    let mut sim = Sim::new(sdk_config(&["paged"]));
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":null}),
    ));
    let (id, _, m) = last_mcp(&sim, "initialize");
    sim.send(&mcp_answer(
        &id,
        result_of(&m, json!({"capabilities":{"tools":{}}})),
    ));
    let (id, _, _) = last_mcp(&sim, "notifications/initialized");
    sim.send(&mcp_answer(&id, json!({"jsonrpc":"2.0","result":{}})));
    for page in 0..MAX_LIST_PAGES as usize {
        let (id, _, m) = last_mcp(&sim, "tools/list");
        sim.send(&mcp_answer(
            &id,
            result_of(
                &m,
                json!({"tools":[tool(page)],"nextCursor":format!("c{page}")}),
            ),
        ));
    }
    let lists = mcp_requests(&sim)
        .iter()
        .filter(|r| r.2["method"] == "tools/list")
        .count();
    assert_eq!(lists, MAX_LIST_PAGES as usize, "no 17th page");
    sim.send(&user("hi"));
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"paged","status":"connected"}])
    );
    assert_eq!(
        init["tools"].as_array().unwrap().len(),
        3 + MAX_LIST_PAGES as usize
    );
}

/// WIRE-008: EOF while a server is listed: the listing fails (`control stream closed`), the
/// prompt queued behind it runs without the server's tools, and the session exits 0.
#[test]
fn eof_during_listing() {
    let mut sim = Sim::new(sdk_config(&["calc"]));
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":null}),
    ));
    sim.send(&user("hi"));
    assert!(sim.requests.is_empty());
    sim.eof();
    assert_eq!(
        sim.diagnostics,
        ["agentx: WARN MCP server \"calc\" failed: control stream closed"]
    );
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"calc","status":"failed"}])
    );
    assert_eq!(sim.last_of("result")["result"], "echo: hi");
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(0));
}

/// PROFILE §16: an answer to a pending call that the strict reader rejects (a duplicate
/// member, PROFILE §2b) is a malformed answer: the use gets an `is_error` result, once.
#[test]
fn a_rejected_answer_line_fails_the_call() {
    let mut c = sdk_config(&["calc"]);
    c.permission_mode = PermissionMode::BypassPermissions;
    let mut sim = listed(c);
    sim.script(tool_reply("msg_a", &[("toolu_1", "mcp__calc__add", ADD)]))
        .script(text_reply("msg_b", "done", None));
    sim.send(&user("go"));
    let (id, _, _) = last_mcp(&sim, "tools/call");
    sim.send(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"mcp_response":{{}},"mcp_response":{{}}}}}}}}"#
    ));
    let r = tool_result(&sim, "toolu_1");
    assert_eq!(r["content"], "MCP call failed: an invalid control_response");
    assert_eq!(r["is_error"], true);
    assert!(sim.s.pending_mcp_calls().is_empty());
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// A server an initialize adds after a prompt began the listing is listed too, and the
/// queued turn waits for both servers (none is left `pending` forever).
#[test]
fn a_server_added_while_listing_is_listed_too() {
    let mut sim = Sim::new(sdk_config(&["calc"]));
    sim.send(&user("hi"));
    assert_eq!(
        mcp_requests(&sim).len(),
        1,
        "the prompt began calc's listing"
    );
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","sdkMcpServers":["more"]}),
    ));
    let reqs = mcp_requests(&sim);
    assert_eq!(reqs.len(), 2, "{:?}", sim.labels());
    assert_eq!(reqs[1].1, "more");
    // Both answer the handshake and list one tool each.
    for (id, server, m) in reqs {
        sim.send(&mcp_answer(
            &id,
            result_of(&m, json!({"capabilities":{"tools":{}}})),
        ));
        let (id, s2, _) = last_mcp(&sim, "notifications/initialized");
        assert_eq!(s2, server);
        sim.send(&mcp_answer(&id, json!({"jsonrpc":"2.0","result":{}})));
        let (id, _, m) = last_mcp(&sim, "tools/list");
        assert!(sim.requests.is_empty() || server == "more");
        sim.send(&mcp_answer(
            &id,
            result_of(
                &m,
                json!({"tools":[{"name":"x","inputSchema":{"type":"object"}}]}),
            ),
        ));
    }
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["tools"],
        json!(["Read", "Write", "Bash", "mcp__calc__x", "mcp__more__x"])
    );
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"calc","status":"connected"},{"name":"more","status":"connected"}])
    );
    assert_eq!(sim.last_of("result")["result"], "echo: hi");
}

pub(crate) fn user_server(name: &str) -> agentx_core::session::mcp_config::ServerDef {
    use agentx_core::session::mcp_config::{ServerDef, ServerKind, Transport, UserServer};
    ServerDef {
        name: name.into(),
        kind: ServerKind::User(UserServer {
            transport: Transport::Stdio {
                command: "srv".into(),
                args: vec![],
                env: vec![],
            },
            timeout_ms: None,
            tool_policies: vec![],
        }),
    }
}

/// PROFILE §18 "Connecting": a user's server connects at startup; the first model request of
/// a turn waits for it at most the connect timeout (virtual time, at its edge), and
/// system/init shows the status of that moment.
#[test]
fn a_turn_waits_for_a_user_server_at_most_the_connect_timeout() {
    use agentx_core::session::Action;
    let mut c = sdk_config(&[]);
    c.mcp.servers = vec![user_server("fs")];
    c.mcp.connect_timeout = Duration::from_millis(1500);
    let mut sim = Sim::new(c);
    sim.send(&user("hi"));
    assert!(
        matches!(&sim.actions[0], Action::McpConnect { name, epoch: 1, .. } if name == "fs"),
        "{:?}",
        sim.actions
    );
    assert!(sim.requests.is_empty(), "the turn waits");
    // PROFILE §18: the server never holds system/init: the turn starts and lists it pending.
    assert_eq!(sim.labels(), ["init", "state:running"]);
    assert_eq!(
        sim.out[0]["mcp_servers"],
        json!([{"name":"fs","status":"pending"}])
    );
    assert_eq!(
        sim.s.poll_timeout(),
        Some(sim.now + Duration::from_millis(1500))
    );
    sim.advance(1499);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert!(
        sim.requests.is_empty(),
        "1 ms before the timeout it still waits"
    );
    sim.advance(1);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert_eq!(sim.requests.len(), 1);
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"fs","status":"pending"}])
    );
}

/// A user's server that connects before the deadline: the turn starts at once with its tools,
/// a call of one is an `McpCall` for the driver (`MCP_TOOL_TIMEOUT`'s default), and its
/// outcome is the tool's; a report of an older connection is ignored.
#[test]
fn a_connected_user_server_offers_its_tools_and_calls_go_to_the_driver() {
    use agentx_core::session::mcp::ListedTool;
    use agentx_core::session::{Action, McpReport, ToolOutcome};
    let mut c = sdk_config(&[]);
    c.mcp.servers = vec![user_server("fs")];
    c.permission_mode = PermissionMode::BypassPermissions;
    let mut sim = Sim::new(c);
    sim.step();
    let ls = ListedTool {
        name: "ls".into(),
        description: "List".into(),
        input_schema: r#"{"type":"object"}"#.into(),
    };
    // A stale epoch changes nothing.
    sim.s.handle_mcp_server(
        "fs",
        0,
        McpReport::Failed {
            error: "old".into(),
        },
        sim.now,
    );
    sim.s.handle_mcp_server(
        "fs",
        1,
        McpReport::Connected {
            server_info: r#"{"name":"fs","version":"1"}"#.into(),
            tools: vec![ls],
        },
        sim.now,
    );
    sim.script(tool_reply("m1", &[("t1", "mcp__fs__ls", "{}")]));
    sim.hold_tools = true;
    sim.send(&user("list"));
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"fs","status":"connected"}])
    );
    assert!(init["tools"].as_array().unwrap().last().unwrap() == "mcp__fs__ls");
    let call = sim
        .actions
        .iter()
        .find_map(|a| match a {
            Action::McpCall {
                tool_use_id,
                server,
                tool,
                input_json,
                timeout_ms,
            } => Some((
                tool_use_id.clone(),
                server.clone(),
                tool.clone(),
                input_json.clone(),
                *timeout_ms,
            )),
            _ => None,
        })
        .expect("an McpCall");
    assert_eq!(
        call,
        ("t1".into(), "fs".into(), "ls".into(), "{}".into(), 600_000)
    );
    sim.finish_tool("t1", ToolOutcome::ok("a\nb"));
    assert_eq!(tool_result(&sim, "t1")["content"], "a\nb");
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// PROFILE §18: system/init shows the server `pending`; its report releases the held first
/// model request at once, which offers its tools; an interrupt while the request is held
/// ends the turn, and a later report starts nothing.
#[test]
fn a_settled_user_server_releases_the_held_first_request_and_an_interrupt_ends_it() {
    use agentx_core::session::mcp::ListedTool;
    use agentx_core::session::McpReport;
    let mut c = sdk_config(&[]);
    c.mcp.servers = vec![user_server("fs"), user_server("gone")];
    let mut sim = Sim::new(c);
    sim.send(&user("hi"));
    assert_eq!(
        sim.out[0]["mcp_servers"],
        json!([{"name":"fs","status":"pending"},{"name":"gone","status":"pending"}])
    );
    let ls = ListedTool {
        name: "ls".into(),
        description: "List".into(),
        input_schema: r#"{"type":"object"}"#.into(),
    };
    sim.advance(10);
    sim.s.handle_mcp_server(
        "fs",
        1,
        McpReport::Connected {
            server_info: r#"{"name":"fs","version":"1"}"#.into(),
            tools: vec![ls],
        },
        sim.now,
    );
    sim.step();
    assert!(sim.requests.is_empty(), "`gone` is still pending");
    sim.s
        .handle_mcp_server("gone", 1, McpReport::Failed { error: "no".into() }, sim.now);
    sim.step();
    assert_eq!(sim.requests.len(), 1);
    assert!(sim.requests[0]
        .tools
        .iter()
        .any(|t| t.name == "mcp__fs__ls"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
    // A turn held again is interrupted: it ends, and the later report starts no request.
    let mut c = sdk_config(&[]);
    c.mcp.servers = vec![user_server("fs")];
    let mut sim = Sim::new(c);
    sim.send(&user("hi"));
    let from = sim.out.len();
    sim.send(&control("int_1", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(from),
        [
            "control_response:success:int_1",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    sim.s
        .handle_mcp_server("fs", 1, McpReport::Failed { error: "no".into() }, sim.now);
    sim.step();
    assert!(sim.requests.is_empty());
}
