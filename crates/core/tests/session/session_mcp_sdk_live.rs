//! The host's in-process MCP servers after their listing, on a virtual clock (PROFILE §16
//! with §18's rules): the server's own `notifications/tools/list_changed` (an inbound
//! `mcp_message`) lists its tools again for the next model request, a failed relisting keeps
//! the old list, an unknown server is a correlated error, an interrupt stops a listing
//! (withdrawn before the acknowledgement, the server `failed`), and an unanswered
//! `notifications/cancelled` is withdrawn after the listing timeout.

use crate::session_mcp::{last_mcp, listed, mcp_answer, mcp_requests, result_of, sdk_config};
use crate::session_sim;

use std::time::Duration;

use agentx_wire::wire::permission::PermissionMode;
use serde_json::{json, Value};
use session_sim::*;

fn changed(id: &str, server: &str) -> String {
    control(
        id,
        json!({"subtype":"mcp_message","server_name":server,
               "message":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}}),
    )
}

fn offered(sim: &Sim) -> Vec<String> {
    sim.requests
        .last()
        .unwrap()
        .tools
        .iter()
        .map(|t| t.name.clone())
        .filter(|n| n.starts_with("mcp__"))
        .collect()
}

/// `list_changed` is answered at once and lists the tools again; the model's next request
/// has the new list; an unknown server is `unknown MCP server <name>`.
#[test]
fn list_changed_from_an_sdk_server_lists_its_tools_again() {
    let mut c = sdk_config(&["calc"]);
    c.permission_mode = PermissionMode::BypassPermissions;
    let mut sim = listed(c);
    sim.send(&user("one"));
    assert_eq!(offered(&sim), ["mcp__calc__add", "mcp__calc__mul"]);
    let from = sim.out.len();
    sim.send(&changed("c1", "calc"));
    let (id, server, m) = last_mcp(&sim, "tools/list");
    assert_eq!(server, "calc");
    assert_eq!(
        sim.labels_from(from),
        [
            "control_response:success:c1".to_string(),
            format!("control_request:mcp_message:{id}"),
        ]
    );
    sim.send(&mcp_answer(
        &id,
        result_of(
            &m,
            json!({"tools":[{"name":"div","inputSchema":{"type":"object"}}]}),
        ),
    ));
    sim.send(&user("two"));
    assert_eq!(offered(&sim), ["mcp__calc__div"]);
    sim.send(&changed("c2", "nope"));
    assert_eq!(
        sim.last(),
        &json!({"type":"control_response","response":{"subtype":"error","request_id":"c2",
                "error":"unknown MCP server nope"}})
    );
    // A relisting that fails keeps the list the server had, with one WARN line.
    sim.send(&changed("c3", "calc"));
    let (id, _, m) = last_mcp(&sim, "tools/list");
    sim.send(&mcp_answer(
        &id,
        json!({"jsonrpc":"2.0","id":m["id"],"error":{"code":-1,"message":"x"}}),
    ));
    assert!(
        sim.diagnostics
            .iter()
            .any(|d| d.contains("listing its tools again failed")),
        "{:?}",
        sim.diagnostics
    );
    sim.send(&user("three"));
    assert_eq!(offered(&sim), ["mcp__calc__div"]);
}

/// An interrupt while an SDK server is listed withdraws the listing request before its
/// acknowledgement; the server is `failed` and the waiting prompt's turn starts without it.
#[test]
fn an_interrupt_stops_a_listing() {
    let mut sim = Sim::new(sdk_config(&["calc"]));
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":null}),
    ));
    let (id, _, _) = last_mcp(&sim, "initialize");
    sim.send(&user("hi"));
    assert!(sim.requests.is_empty(), "the prompt waits for the listing");
    let from = sim.out.len();
    sim.send(&control("int_1", json!({"subtype":"interrupt"})));
    let labels = sim.labels_from(from);
    assert_eq!(
        labels[..2],
        [
            format!("control_cancel_request:{id}"),
            "control_response:success:int_1".to_string(),
        ]
    );
    let init = sim.out.iter().find(|v| v["subtype"] == "init").unwrap();
    assert_eq!(
        init["mcp_servers"],
        json!([{"name":"calc","status":"failed"}])
    );
    assert!(sim
        .diagnostics
        .iter()
        .any(|d| d == "agentx: WARN MCP server \"calc\" failed: interrupted"));
    assert_eq!(sim.last_of("result")["result"], "echo: hi");
    // Its late answer changes nothing.
    let n = sim.out.len();
    sim.send(&mcp_answer(
        &id,
        json!({"jsonrpc":"2.0","id":0,"result":{}}),
    ));
    assert_eq!(sim.out.len(), n);
}

/// A `notifications/cancelled` the host never answers is withdrawn after the listing timeout.
#[test]
fn an_unanswered_cancellation_notice_is_withdrawn() {
    let mut c = sdk_config(&["calc"]);
    c.permission_mode = PermissionMode::BypassPermissions;
    c.mcp.call_timeout = Duration::from_secs(5);
    c.mcp.list_timeout = Duration::from_secs(60);
    let mut sim = listed(c);
    sim.script(tool_reply(
        "msg_a",
        &[("toolu_1", "mcp__calc__add", r#"{"a":1,"b":2}"#)],
    ));
    sim.send(&user("go"));
    sim.advance(5_000);
    sim.s.handle_timeout(sim.now);
    sim.step();
    let (notice, _, m): (String, String, Value) = mcp_requests(&sim).pop().unwrap();
    assert_eq!(m["method"], "notifications/cancelled");
    assert_eq!(
        sim.s.poll_timeout(),
        Some(sim.now + Duration::from_secs(60))
    );
    sim.advance(60_000);
    let from = sim.out.len();
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert_eq!(
        sim.labels_from(from),
        [format!("control_cancel_request:{notice}")]
    );
    assert_eq!(sim.s.poll_timeout(), None);
}
