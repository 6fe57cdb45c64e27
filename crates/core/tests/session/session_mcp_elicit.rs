//! Elicitation from the user's MCP servers through the session core on a virtual clock
//! (PROFILE §18 "Requests from a server", the spec's `elicitation` and
//! `system/elicitation_complete`): the control request's members, the answers mapped back
//! (accept with content, decline, and `cancel` for an error, a malformed answer, the 600 s
//! timeout at its edge, an interrupt and EOF), a report of a closed connection, and the
//! standalone profile answering `cancel` at once.

use crate::session_mcp::user_server;
use crate::session_sim;

use std::time::Duration;

use agentx_core::session::{Action, McpReport, Profile, ELICITATION_TIMEOUT};
use agentx_wire::wire::permission::PermissionMode;
use serde_json::{json, Value};
use session_sim::*;

/// A session with user server `fs` connected (epoch 1, no tools).
fn connected(profile: Profile) -> Sim {
    let mut c = config();
    c.profile = profile;
    c.permission_mode = PermissionMode::BypassPermissions;
    c.mcp.servers = vec![user_server("fs")];
    let mut sim = Sim::new(c);
    sim.step();
    sim.s.handle_mcp_server(
        "fs",
        1,
        McpReport::Connected {
            server_info: r#"{"name":"fs","version":"1"}"#.into(),
            tools: vec![],
        },
        sim.now,
    );
    sim.step();
    sim
}

fn elicit(sim: &mut Sim, epoch: u64, key: u64, params: Value) {
    sim.s.handle_mcp_server(
        "fs",
        epoch,
        McpReport::Elicitation {
            key,
            params: params.to_string(),
        },
        sim.now,
    );
    sim.step();
}

/// The answers given to the server so far: (epoch, key, ElicitResult).
fn answers(sim: &Sim) -> Vec<(u64, u64, Value)> {
    sim.actions
        .iter()
        .filter_map(|a| match a {
            Action::McpElicitationAnswer {
                name,
                epoch,
                key,
                result,
            } => {
                assert_eq!(name, "fs");
                Some((*epoch, *key, serde_json::from_str(result).unwrap()))
            }
            _ => None,
        })
        .collect()
}

fn last_request_id(sim: &Sim) -> String {
    let r = sim.last_of("control_request");
    assert_eq!(r["request"]["subtype"], "elicitation", "{r}");
    r["request_id"].as_str().unwrap().to_string()
}

fn answer(request_id: &str, response: Value) -> String {
    json!({"type":"control_response","response":{"subtype":"success","request_id":request_id,
        "response":response}})
    .to_string()
}

/// The request carries the members the server sent; accept (with its content) and decline
/// go back as they are; an error response and a malformed answer are `cancel`.
#[test]
fn the_host_answers_map_back_to_the_server() {
    let mut sim = connected(Profile::Sdk);
    elicit(
        &mut sim,
        1,
        7,
        json!({"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"n":{"type":"string"}}},"_meta":{"x":1}}),
    );
    assert_eq!(
        sim.last_of("control_request")["request"],
        json!({"subtype":"elicitation","mcp_server_name":"fs","message":"Name?","mode":"form",
               "requested_schema":{"type":"object","properties":{"n":{"type":"string"}}}})
    );
    let id = last_request_id(&sim);
    sim.send(&answer(
        &id,
        json!({"action":"accept","content":{"n":"Ada"}}),
    ));
    elicit(
        &mut sim,
        1,
        8,
        json!({"mode":"url","message":"Sign in","url":"https://x.test/a","elicitationId":"e-1"}),
    );
    assert_eq!(
        sim.last_of("control_request")["request"],
        json!({"subtype":"elicitation","mcp_server_name":"fs","message":"Sign in","mode":"url",
               "url":"https://x.test/a","elicitation_id":"e-1"})
    );
    let id = last_request_id(&sim);
    sim.send(&answer(&id, json!({"action":"decline"})));
    elicit(&mut sim, 1, 9, json!({"message":"?"}));
    let id = last_request_id(&sim);
    sim.send(
        &json!({"type":"control_response","response":{"subtype":"error","request_id":id,"error":"no"}})
            .to_string(),
    );
    elicit(&mut sim, 1, 10, json!({"message":"?"}));
    let id = last_request_id(&sim);
    sim.send(&answer(&id, json!({"action":"maybe"})));
    // No `message`: not asked at all.
    let asked = sim.of("control_request").len();
    elicit(&mut sim, 1, 11, json!({"mode":"form"}));
    assert_eq!(sim.of("control_request").len(), asked);
    assert_eq!(
        answers(&sim),
        [
            (1, 7, json!({"action":"accept","content":{"n":"Ada"}})),
            (1, 8, json!({"action":"decline"})),
            (1, 9, json!({"action":"cancel"})),
            (1, 10, json!({"action":"cancel"})),
            (1, 11, json!({"action":"cancel"})),
        ]
    );
    // `notifications/elicitation/complete`.
    sim.s.handle_mcp_server(
        "fs",
        1,
        McpReport::ElicitationComplete {
            elicitation_id: "e-1".into(),
        },
        sim.now,
    );
    sim.step();
    let done = sim.last();
    assert_eq!(done["type"], "system");
    assert_eq!(done["subtype"], "elicitation_complete");
    assert_eq!(done["mcp_server_name"], "fs");
    assert_eq!(done["elicitation_id"], "e-1");
}

/// No answer within 600 s: withdrawn with `control_cancel_request` and answered `cancel`,
/// not 1 ms before.
#[test]
fn an_unanswered_elicitation_is_cancel_after_600_s() {
    assert_eq!(ELICITATION_TIMEOUT, Duration::from_secs(600));
    let mut sim = connected(Profile::Sdk);
    elicit(&mut sim, 1, 1, json!({"message":"?"}));
    let id = last_request_id(&sim);
    assert_eq!(sim.s.poll_timeout(), Some(sim.now + ELICITATION_TIMEOUT));
    sim.advance(599_999);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert!(answers(&sim).is_empty());
    let from = sim.out.len();
    sim.advance(1);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert_eq!(
        sim.labels_from(from),
        [format!("control_cancel_request:{id}")]
    );
    assert_eq!(answers(&sim), [(1, 1, json!({"action":"cancel"}))]);
    // A late answer changes nothing (WIRE-007).
    let n = sim.actions.len();
    sim.send(&answer(&id, json!({"action":"accept"})));
    assert_eq!(sim.actions.len(), n);
    assert_eq!(sim.s.poll_timeout(), None);
}

/// An interrupt withdraws a pending elicitation before its acknowledgement (WIRE-011) and
/// answers it `cancel`; EOF answers one `cancel` too.
#[test]
fn an_interrupt_and_eof_resolve_an_elicitation_as_cancel() {
    let mut sim = connected(Profile::Sdk);
    elicit(&mut sim, 1, 1, json!({"message":"?"}));
    let id = last_request_id(&sim);
    let from = sim.out.len();
    sim.send(&control("int_1", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(from),
        [
            format!("control_cancel_request:{id}"),
            "control_response:success:int_1".to_string(),
        ]
    );
    assert_eq!(answers(&sim), [(1, 1, json!({"action":"cancel"}))]);
    elicit(&mut sim, 1, 2, json!({"message":"?"}));
    sim.eof();
    assert_eq!(
        answers(&sim),
        [
            (1, 1, json!({"action":"cancel"})),
            (1, 2, json!({"action":"cancel"}))
        ]
    );
}

/// The standalone profile does not declare the capability: `cancel` at once, nothing written;
/// a report of an older connection is answered `cancel` too.
#[test]
fn without_the_sdk_profile_or_from_a_stale_connection_an_elicitation_is_cancel_at_once() {
    let mut sim = connected(Profile::default());
    let n = sim.out.len();
    elicit(&mut sim, 1, 1, json!({"message":"?"}));
    assert_eq!(sim.out.len(), n);
    assert_eq!(answers(&sim), [(1, 1, json!({"action":"cancel"}))]);
    let mut sim = connected(Profile::Sdk);
    let n = sim.out.len();
    elicit(&mut sim, 0, 1, json!({"message":"?"}));
    assert_eq!(sim.out.len(), n);
    assert_eq!(answers(&sim), [(0, 1, json!({"action":"cancel"}))]);
}
