//! The standalone control dispatcher and input classification of PROFILE §8 and §5 through
//! the session core: initialize once, the fixed-error setters and the generic unsupported
//! error (scenario 28's set_model/set_provider half, WIRE-025), the installed reference
//! profile (scenarios 8 and 10), duplicate members (scenario 20), unknown types (WIRE-002),
//! malformed input (WIRE-001, scenario 14) and scenario 15.

use crate::session_sim;

use agentx_core::session::{Action, ReferenceProfile, SettingSource};
use agentx_wire::control::{Broker, Dispatch, Emission, Outcome, Started};
use agentx_wire::json::Parser;
use agentx_wire::wire::{OutputRecord, RawJson};
use serde_json::json;
use session_sim::*;

fn error_of(sim: &Sim) -> (String, String) {
    let r = &sim.last()["response"];
    assert_eq!(r["subtype"], "error", "{}", sim.last());
    (
        r["request_id"].as_str().unwrap().to_string(),
        r["error"].as_str().unwrap().to_string(),
    )
}

/// PROFILE §8: initialize succeeds once with the exact payload; a second gets `already
/// initialized`; a rejected one (extra field) does not count.
#[test]
fn initialize_at_most_once() {
    let mut c = config();
    c.pid = 4242;
    let mut sim = Sim::new(c);
    sim.send(&control("i0", json!({"subtype":"initialize","hooks":{}})));
    assert_eq!(error_of(&sim).0, "i0");
    sim.send(&control("i1", json!({"subtype":"initialize"})));
    let p = &sim.last()["response"]["response"];
    assert_eq!(sim.last()["response"]["subtype"], "success");
    // PROFILE §19: `/compact` is the one command.
    assert_eq!(
        p["commands"],
        json!([{"name":"compact","description":"Summarize the conversation to free context","argumentHint":"[instructions]"}])
    );
    assert_eq!(p["agents"], json!([]));
    assert_eq!(p["output_style"], "default");
    assert_eq!(p["available_output_styles"], json!(["default"]));
    assert_eq!(p["models"].as_array().unwrap().len(), 1);
    assert_eq!(p["models"][0]["value"], "agentx-echo");
    assert_eq!(p["providers"][0]["id"], "local");
    assert_eq!(p["providers"][0]["selected"], true);
    assert_eq!(
        p["account"],
        json!({"apiKeySource":"user","provider":"local"})
    );
    assert_eq!(p["pid"], 4242);
    assert!(p["input_capabilities"]["attachments"].is_object());
    sim.send(&control("i2", json!({"subtype":"initialize"})));
    assert_eq!(error_of(&sim), ("i2".into(), "already initialized".into()));
    // Controls write no system/init and start no turn.
    assert!(sim.of("system").is_empty());
}

/// PROFILE §12: `--no-attachments` removes input_capabilities from both initialization
/// forms.
#[test]
fn no_attachments_omits_capabilities() {
    let mut c = config();
    c.attachments_enabled = false;
    let mut sim = Sim::new(c);
    sim.send(&control("i1", json!({"subtype":"initialize"})));
    assert!(sim.last()["response"]["response"]
        .get("input_capabilities")
        .is_none());
    sim.send(&user("hi"));
    assert!(sim.out[1].get("input_capabilities").is_none());
    assert_eq!(sim.out[1]["subtype"], "init");
}

/// Scenario 28 (WIRE-025), set_model/set_provider half: set_model with a logical model and
/// with providers[0].value gets the subtype-specific restart instruction; set_provider gets
/// the generic unsupported error; neither changes the live selection.
#[test]
fn scenario_28_set_model_and_set_provider() {
    let mut sim = Sim::local();
    sim.send(&control(
        "m1",
        json!({"subtype":"set_model","model":"agentx-echo"}),
    ));
    assert_eq!(
        error_of(&sim),
        (
            "m1".into(),
            "provider and model are fixed for this process; restart with --provider <id>".into()
        )
    );
    sim.send(&control(
        "m2",
        json!({"subtype":"set_model","model":"local"}),
    ));
    assert_eq!(
        error_of(&sim).1,
        "provider and model are fixed for this process; restart with --provider <id>"
    );
    sim.send(&control("m3", json!({"subtype":"set_model"})));
    assert_eq!(error_of(&sim).0, "m3");
    sim.send(&control(
        "p1",
        json!({"subtype":"set_provider","provider":"other"}),
    ));
    assert_eq!(
        error_of(&sim),
        (
            "p1".into(),
            r#"unsupported control request "set_provider""#.into()
        )
    );
    // The live selection is unchanged.
    sim.send(&user("hi"));
    let init = sim.of("system")[0].clone();
    assert_eq!(init["provider"], "local");
    assert_eq!(init["model"], "agentx-echo");
    assert_eq!(sim.requests[0].model, "agentx-echo");
}

/// PROFILE §5: the other fixed errors; set_permission_mode with any payload.
#[test]
fn fixed_errors_and_generic_unsupported() {
    let mut sim = Sim::local();
    for (payload, text) in [
        (json!({"subtype":"set_permission_mode","mode":"plan"}), "live permission-mode changes are unavailable; start a new session with --permission-mode"),
        (json!({"subtype":"set_permission_mode","anything":[1,2]}), "live permission-mode changes are unavailable; start a new session with --permission-mode"),
        (json!({"subtype":"set_max_thinking_tokens","max_thinking_tokens":null}), "reasoning effort is declared by the provider; it is not a thinking-token budget"),
        (json!({"subtype":"get_settings"}), r#"unsupported control request "get_settings""#),
        (json!({"subtype":"mcp_set_servers","servers":{}}), r#"unsupported control request "mcp_set_servers""#),
        (json!({"subtype":"rewind_files","user_message_id":"u"}), r#"unsupported control request "rewind_files""#),
        (json!({"subtype":"end_session"}), r#"unsupported control request "end_session""#),
    ] {
        sim.send(&control("c", payload.clone()));
        assert_eq!(error_of(&sim), ("c".into(), text.into()), "{payload}");
    }
    assert!(sim.diagnostics.is_empty());
}

/// get_context_usage and mcp_status succeed (PROFILE §8).
#[test]
fn context_usage_and_mcp_status() {
    let mut sim = Sim::local();
    sim.send(&control("s", json!({"subtype":"mcp_status"})));
    assert_eq!(
        sim.last(),
        &json!({"type":"control_response","response":{"subtype":"success","request_id":"s","response":{"mcpServers":[]}}})
    );
    sim.send(&user("one two three"));
    sim.send(&control("u", json!({"subtype":"get_context_usage"})));
    let p = &sim.last()["response"]["response"];
    // PROFILE §19: no declared window; the estimate is the last report (3 prompt words +
    // 4 reply words) or at least the tool schemas the request carries.
    assert_eq!(p["maxTokens"], serde_json::Value::Null);
    assert_eq!(p["percentage"], serde_json::Value::Null);
    assert_eq!(p["model"], "agentx-echo");
    let tools = p["categories"][1]["tokens"].as_u64().unwrap();
    assert!(tools > 7);
    assert_eq!(p["totalTokens"], tools);
    assert_eq!(p["categories"][2]["name"], "Messages");
}

/// A control whose request_id is recoverable but whose payload is invalid gets a
/// correlated error; one without a recoverable id is a diagnostic only (PROFILE §8).
#[test]
fn invalid_payload_correlated_missing_id_diagnostic() {
    let mut sim = Sim::local();
    sim.send(&control("x1", json!({"subtype":"interrupt","now":true})));
    let (id, msg) = error_of(&sim);
    assert_eq!(id, "x1");
    assert!(msg.contains("unknown member"), "{msg}");
    let frames = sim.out.len();
    sim.send(&json!({"type":"control_request","request":{"subtype":"interrupt"}}).to_string());
    assert_eq!(sim.out.len(), frames);
    assert_eq!(sim.diagnostics.len(), 1);
    assert!(
        sim.diagnostics[0].starts_with("agentx: input line 2: "),
        "{}",
        sim.diagnostics[0]
    );
    assert_eq!(sim.s.is_done(), None);
}

/// Scenario 20 (WIRE-014, PROFILE §2b/§5): duplicate members at the outer envelope, in the
/// nested request, in the operation payload and in a pending nested control record,
/// escape-equivalent spellings included, are all rejected with the fixed diagnostic; a
/// control_request with an unambiguous request_id also gets it as its correlated error;
/// the documented canonical/alias pair stays valid.
#[test]
fn scenario_20_duplicate_members_rejected_with_the_fixed_diagnostic() {
    const AMBIGUOUS: &str = "ambiguous JSON: duplicate member name";
    let mut sim = Sim::local();
    let lines = [
        // outer envelope
        r#"{"type":"control_request","request_id":"d1","request":{"subtype":"mcp_status"},"request":{"subtype":"interrupt"}}"#,
        // nested request, escape-equivalent spelling
        r#"{"type":"control_request","request_id":"d2","request":{"subtype":"set_model","model":"a","mod\u0065l":"b"}}"#,
        // operation payload
        r#"{"type":"control_request","request_id":"d3","request":{"subtype":"mcp_set_servers","servers":{"a":{"x":1,"x":2}}}}"#,
    ];
    for (i, line) in lines.iter().enumerate() {
        sim.send(line);
        assert_eq!(error_of(&sim), (format!("d{}", i + 1), AMBIGUOUS.into()));
        assert_eq!(
            sim.diagnostics[i],
            format!("agentx: input line {}: {AMBIGUOUS}", i + 1)
        );
    }
    // An ambiguous request_id: no correlated error, a diagnostic only.
    let frames = sim.out.len();
    sim.send(r#"{"type":"control_request","request_id":"a","request_\u0069d":"b","request":{"subtype":"interrupt"}}"#);
    assert_eq!(sim.out.len(), frames);
    assert_eq!(
        sim.diagnostics[3],
        format!("agentx: input line 4: {AMBIGUOUS}")
    );
    // A pending nested control record inside a response, and a plain response duplicate:
    // diagnostics, nothing resolved, nothing written.
    sim.send(r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":"e","pending_permission_requests":[{"type":"control_request","request_id":"p","request_id":"q","request":{"subtype":"interrupt"}}]}}"#);
    sim.send(r#"{"type":"control_response","response":{"subtype":"success","request_id":"r","request_id":"r"}}"#);
    assert_eq!(sim.out.len(), frames);
    assert_eq!(sim.diagnostics.len(), 6);
    assert!(sim.diagnostics[4..].iter().all(|d| d.ends_with(AMBIGUOUS)));
    // A duplicate in a user record: record-level, an input-error result.
    sim.send(r#"{"type":"user","message":"a","message":"b","parent_tool_use_id":null,"uuid":"3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"}"#);
    let r = sim.last();
    assert_eq!(r["type"], "result");
    assert_eq!(r["errors"], json!([format!("input error: {AMBIGUOUS}")]));
    assert_eq!(r["prompt_uuid"], "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27");
    // In an attachment_import: fatal (WIRE-021), status 1.
    assert_eq!(sim.s.is_done(), None);
    // The canonical/alias pair is valid (PERM-047): exercised through a permission answer.
    let mut sim = Sim::local();
    sim.script(tool_reply(
        "m",
        &[("toolu_1", "Bash", r#"{"command":"ls"}"#)],
    ))
    .script(text_reply("n", "ok", None));
    sim.send(&user("x"));
    sim.send(r#"{"type":"control_response","response":{"subtype":"success","request_id":"agentx-perm-1","response":{"behavior":"allow","toolUseID":"toolu_1","tool_use_id":"toolu_1"}}}"#);
    assert_eq!(sim.run_tools(), ["toolu_1"]);
    assert!(sim.diagnostics.is_empty());
}

/// PROFILE §2b: a duplicate member in an attachment_import line is an import-schema error,
/// fatal like any other: diagnostic, status 1, no further record.
#[test]
fn duplicate_in_attachment_import_is_fatal() {
    let mut sim = Sim::local();
    sim.send(&user("hi"));
    let frames = sim.out.len();
    sim.send(r#"{"type":"attachment_import","version":1,"operation":"abort","upload_id":"upl_a","upload_id":"upl_b"}"#);
    assert_eq!(
        sim.diagnostics,
        ["agentx: input line 2: ambiguous JSON: duplicate member name"]
    );
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(1));
    sim.send(&user("after"));
    assert_eq!(sim.out.len(), frames, "nothing after a fatal error");
}

/// WIRE-002: an unknown type warns and is ignored; keep_alive and a valid environment update
/// are quiet; an invalid environment update is a diagnostic only.
#[test]
fn unknown_type_keep_alive_and_environment() {
    let mut sim = Sim::local();
    sim.send(r#"{"type":"future_record","x":1}"#);
    sim.send(r#"{"type":"keep_alive"}"#);
    sim.send(r#"{"type":"update_environment_variables","variables":{"A_1":"x","B":null}}"#);
    sim.send(r#"{"type":"update_environment_variables","variables":{"1BAD":"x"}}"#);
    assert!(sim.out.is_empty());
    assert_eq!(sim.diagnostics.len(), 2);
    assert_eq!(
        sim.diagnostics[0],
        "agentx: warning: input line 1: ignored record of unknown type"
    );
    assert!(sim.diagnostics[1].starts_with("agentx: input line 4: "));
    assert_eq!(
        sim.actions,
        [Action::UpdateEnvironment {
            variables: vec![("A_1".into(), Some("x".into())), ("B".into(), None)]
        }]
    );
    // Blank lines are ignored (PROFILE §2a).
    sim.send("  \r");
    assert_eq!(sim.diagnostics.len(), 2);
}

/// WIRE-001 / scenario 14: malformed JSON is fatal: the §5 diagnostic, status 1 after the
/// output already accepted, no partial control resolution.
#[test]
fn scenario_14_malformed_final_record_is_fatal() {
    let mut sim = Sim::local();
    sim.script(tool_reply(
        "m",
        &[("toolu_1", "Bash", r#"{"command":"ls"}"#)],
    ));
    sim.send(&user("x"));
    let frames = sim.out.len();
    // An unterminated, malformed tail handed over at EOF.
    sim.send(r#"{"type":"control_response","response":{"subtype":"success","request_id":"agentx-perm-1","response":{"behavior":"allow"}"#);
    sim.eof();
    assert_eq!(
        sim.diagnostics,
        ["agentx: input line 2: malformed JSON: unexpected end of input"]
    );
    assert_eq!(sim.out.len(), frames, "no partial resolution");
    assert!(sim.run_tools().is_empty());
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(1));
    assert!(sim.actions.iter().any(|a| matches!(
        a,
        Action::CancelModel { .. } | Action::KillHook { .. } | Action::Exit { code: 1 }
    )));
}

/// A top-level value that is not an object and a framing error (a line over the limit) are
/// fatal too (PROFILE §2a).
#[test]
fn not_an_object_and_framing_errors_are_fatal() {
    let mut sim = Sim::local();
    sim.send("[1,2]");
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(1));
    assert_eq!(sim.diagnostics.len(), 1);
    assert!(sim.diagnostics[0].starts_with("agentx: input line 1: "));

    let mut reader = agentx_wire::frame::Reader::with_max_line(4);
    reader.push_slice(b"{\"type\":1}\n");
    let err = match reader.next_line() {
        Some(Err(e)) => e,
        _ => panic!("a framing error"),
    };
    let mut sim = Sim::local();
    sim.s.handle_frame_error(&err, sim.now);
    sim.step();
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(1));
    assert_eq!(sim.diagnostics.len(), 1);
    assert!(
        sim.diagnostics[0].starts_with("agentx: input line 1: "),
        "{}",
        sim.diagnostics[0]
    );
}

fn reference() -> ReferenceProfile {
    let raw = |s: &str| RawJson::parse_owned(s.as_bytes().to_vec()).unwrap();
    ReferenceProfile {
        settings: vec![
            (
                SettingSource::Policy,
                raw(r#"{"model":"policy-model","x":5}"#),
            ),
            (
                SettingSource::User,
                raw(r#"{"model":"user-model","theme":"dark","x":1}"#),
            ),
            (SettingSource::Project, raw(r#"{"x":2}"#)),
            (SettingSource::Local, raw(r#"{"theme":"light"}"#)),
            (SettingSource::Flag, raw(r#"{"x":4}"#)),
        ],
        mcp_servers: vec![
            ("keep".into(), raw(r#"{"command":"k"}"#)),
            ("gone".into(), raw(r#"{"command":"g"}"#)),
        ],
    }
}

/// Scenario 8: dynamic MCP replacement: the response reports added, removed and per-server
/// errors, and is queued before any connection begins.
#[test]
fn scenario_8_mcp_set_servers_responds_before_connecting() {
    let mut c = config();
    c.reference = Some(reference());
    let mut sim = Sim::new(c);
    sim.send(&control(
        "s1",
        json!({"subtype":"mcp_set_servers","servers":{"keep":{"command":"k"},"new":{"command":"n"},"bad":7}}),
    ));
    assert_eq!(
        sim.out,
        [
            json!({"type":"control_response","response":{"subtype":"success","request_id":"s1",
            "response":{"added":["new"],"removed":["gone"],"errors":{"bad":"server configuration must be an object"}}}})
        ]
    );
    assert_eq!(
        sim.actions,
        [Action::ConnectMcpServer {
            name: "new".into(),
            config_json: r#"{"command":"n"}"#.into()
        }]
    );
    // The response frame was queued when the connect action was: the driver drains frames
    // first, so the host sees the response before the connection can call back.
    sim.send(&control("s2", json!({"subtype":"mcp_status"})));
    assert_eq!(
        sim.last()["response"]["response"],
        json!({"mcpServers":[{"name":"keep","status":"pending"},{"name":"new","status":"pending"}]})
    );
}

/// Scenario 10: get_settings: sources in low-to-high order (user, project, local, flag,
/// policy), the effective merge (later wins), and the runtime-applied model/effort apart from
/// the disk merge.
#[test]
fn scenario_10_get_settings() {
    let mut c = config();
    c.reference = Some(reference());
    let mut sim = Sim::new(c);
    sim.send(&control("g", json!({"subtype":"get_settings"})));
    let p = &sim.last()["response"]["response"];
    let order: Vec<&str> = p["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["source"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["user", "project", "local", "flag", "policy"]);
    assert_eq!(
        p["sources"][0]["settings"],
        json!({"model":"user-model","theme":"dark","x":1})
    );
    assert_eq!(
        p["effective"],
        json!({"model":"policy-model","theme":"light","x":5})
    );
    // No declared effort: `effort` is omitted (the schema's optional string), never `null`.
    assert_eq!(p["applied"], json!({"model":"agentx-echo"}));
    assert_ne!(p["applied"]["model"], p["effective"]["model"]);
}

/// The host's side of every control the reference profile answers: each request goes out
/// through a host [`Broker`] (the one `host::Client` uses), the session's answer is decoded as
/// an output record and resolved by that broker, which validates the payload with the crate's
/// own response schema of the request's subtype (WIRE-009: `InitializeResponse`,
/// `ContextUsageResponse`, `McpStatusResponse`, `McpSetServersResponse`,
/// `GetSettingsResponse`, the payload-less interrupt acknowledgement). Every one is a
/// success, with and without a declared effort (`"effort": null` once failed
/// `GetSettingsResponse`).
#[test]
fn reference_profile_responses_decode_with_the_crates_own_schemas() {
    for effort in [None, Some("high")] {
        let mut c = config();
        c.reference = Some(reference());
        c.projection.effort = effort.map(str::to_string);
        let mut sim = Sim::new(c);
        let mut host = Broker::new();
        let requests = [
            json!({"subtype":"initialize"}),
            json!({"subtype":"get_context_usage"}),
            json!({"subtype":"mcp_status"}),
            json!({"subtype":"mcp_set_servers","servers":{"keep":{"command":"k"},"new":{"command":"n"},"bad":7}}),
            json!({"subtype":"mcp_status"}),
            json!({"subtype":"get_settings"}),
            json!({"subtype":"interrupt"}),
        ];
        for request in requests {
            let mut sent = Vec::new();
            let started = host.request_raw(
                request.to_string().as_bytes(),
                sim.now,
                &mut |_: &mut Broker, e: Emission<'_>| {
                    let mut line = Vec::new();
                    e.encode(&mut line);
                    sent.push(String::from_utf8(line).unwrap());
                    Ok(())
                },
            );
            assert!(matches!(started, Ok(Started::Pending { .. })), "{request}");
            assert_eq!(sent.len(), 1, "{request}");
            sim.send(&sent[0]);
            let line = serde_json::to_string(sim.last()).unwrap();
            let response = match OutputRecord::decode_line(line.as_bytes(), &mut Parser::new()) {
                Ok(OutputRecord::ControlResponse(r)) => r.into_owned(),
                other => panic!("{request}: not a control_response: {other:?}"),
            };
            let mut echoes = |_: &mut Broker, _: Emission<'_>| Ok(());
            match host.handle_response(&response, sim.now, &mut echoes) {
                Dispatch::Resolved(r) => assert!(
                    matches!(r.outcome, Outcome::Success(_)),
                    "{request} (effort {effort:?}): {line} -> {:?}",
                    r.outcome
                ),
                other => panic!("{request}: {other:?}"),
            }
            if request["subtype"] == "get_settings" {
                let applied = &sim.last()["response"]["response"]["applied"];
                match effort {
                    Some(e) => assert_eq!(applied["effort"], e),
                    None => assert!(applied.get("effort").is_none(), "{applied}"),
                }
            }
        }
        assert_eq!(host.pending_len(), 0);
    }
}

/// Scenario 15: nothing claims durable delivery: the flush action after a result is not an
/// acknowledgement, and no record says anything was delivered.
#[test]
fn scenario_15_nothing_claims_durable_delivery() {
    let mut sim = Sim::local();
    sim.send(&user("hi"));
    sim.eof();
    assert_eq!(
        sim.labels_from(sim.out.len() - 2),
        ["result:success", "state:idle"]
    );
    for v in &sim.out {
        let s = v.to_string();
        assert!(
            !s.contains("acknowledged") && !s.contains("delivered") && !s.contains("durable"),
            "{s}"
        );
    }
    // The only flush is the session store's transcript append, carrying the result and
    // nothing that reached the host afterwards (the idle record is not in it).
    let lines = sim.persisted();
    assert!(lines.iter().any(|l| l.contains("\"type\":\"result\"")));
    assert!(!lines.iter().any(|l| l.contains("session_state_changed")));
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(0));
}
