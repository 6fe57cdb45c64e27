//! The permission race and the hard interrupt through the session core, on a virtual clock:
//! acceptance scenarios 3, 4, 5, 6 (both completion orders), 7, 11, 12, 13 and 19 at the
//! session level, each asserting the exact record order and payloads.

use crate::session_sim;

use agentx_core::model::{ModelEvent, NetworkDecision};
use agentx_core::session::{Action, HookOutcome, ToolOutcome};
use serde_json::json;
use session_sim::*;

const BASH_LS: &str = r#"{"command":"ls"}"#;
const BASH_PWD: &str = r#"{"command":"pwd"}"#;

fn with_hook() -> Sim {
    let mut c = config();
    c.hook_configured = true;
    Sim::new(c)
}

/// Prompt → one Bash tool use (asks in `default` mode), then a final text answer.
fn one_tool(sim: &mut Sim) {
    sim.script(tool_reply("msg_a", &[("toolu_1", "Bash", BASH_LS)]))
        .script(text_reply("msg_b", "done", None));
}

fn two_tools(sim: &mut Sim) {
    sim.script(tool_reply(
        "msg_a",
        &[("toolu_1", "Bash", BASH_LS), ("toolu_2", "Bash", BASH_PWD)],
    ))
    .script(text_reply("msg_b", "done", None));
}

/// Scenario 3 (WIRE-003): the assistant record queued before a permission request is never
/// overtaken by it; the request is the exact PERM-020 shape with the PERM-021 description.
#[test]
fn scenario_3_permission_request_never_overtakes_the_assistant_record() {
    let mut sim = Sim::local();
    one_tool(&mut sim);
    sim.send(&user("list"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:tool_use:toolu_1",
            "state:requires_action",
            "control_request:can_use_tool:agentx-perm-1",
        ]
    );
    assert_eq!(
        sim.last()["request"],
        json!({"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},
               "tool_use_id":"toolu_1","description":"Bash: ls"})
    );
    assert_eq!(sim.s.state(), Some("requires_action"));
    // The host allows: running, the tool runs, its result, the next request, the answer.
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(
        sim.labels_from(5),
        [
            "state:running",
            "tool_result:toolu_1:ran Bash",
            "assistant:text:done",
            "result:success",
            "state:idle",
        ]
    );
    let r = sim.last_of("result");
    assert_eq!(r["num_turns"], 2, "num_turns counts model requests");
    assert_eq!(r["result"], "done");
    assert_eq!(r["permission_denials"], json!([]));
    // The follow-up request carries the assistant message and the tool result.
    assert_eq!(sim.requests.len(), 2);
    assert_eq!(sim.requests[1].index, 1);
    assert_eq!(sim.requests[1].messages.len(), 3);
}

/// A host deny: a `tool_result` error with the message and a `permission_denials` entry
/// with the effective input (PROFILE §10).
#[test]
fn host_deny_is_an_error_result_and_a_denial() {
    let mut sim = Sim::local();
    one_tool(&mut sim);
    sim.send(&user("list"));
    sim.send(&deny("agentx-perm-1", "not today"));
    assert_eq!(
        sim.labels_from(5),
        [
            "state:running",
            "tool_result:toolu_1:not today",
            "assistant:text:done",
            "result:success",
            "state:idle",
        ]
    );
    assert_eq!(sim.of("user")[0]["message"]["content"][0]["is_error"], true);
    assert_eq!(
        sim.last_of("result")["permission_denials"],
        json!([{"tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"ls"}}])
    );
    assert!(!sim
        .actions
        .iter()
        .any(|a| matches!(a, Action::RunTool { .. })));
}

/// Scenario 4 (WIRE-007) at the session level: a pending control aborted locally (the hook
/// won) gives exactly one cancel envelope, the waiter is rejected at once (the tool runs on
/// the hook's decision), and the known-late host response is ignored.
#[test]
fn scenario_4_abort_sends_one_cancel_and_ignores_the_late_response() {
    let mut sim = with_hook();
    one_tool(&mut sim);
    sim.send(&user("list"));
    assert_eq!(sim.hooks, ["toolu_1"]);
    sim.hook(
        "toolu_1",
        HookOutcome::Allow {
            updated_input: None,
        },
    );
    assert_eq!(
        sim.labels_from(5),
        [
            "control_cancel_request:agentx-perm-1",
            "state:running",
            "tool_result:toolu_1:ran Bash",
            "assistant:text:done",
            "result:success",
            "state:idle",
        ]
    );
    let before = sim.out.len();
    sim.send(&deny("agentx-perm-1", "late"));
    assert_eq!(
        sim.out.len(),
        before,
        "the known-late response changes nothing"
    );
    assert_eq!(sim.s.orphaned_responses(), 0, "known-late is not an orphan");
    assert!(sim.s.pending_requests().is_empty());
}

/// Scenario 5 (WIRE-008): EOF with two pending permissions: both reject (`control stream
/// closed`, a denial each), the session leaves `requires_action`, the turn finishes, exit 0.
#[test]
fn scenario_5_eof_with_two_pending_permissions() {
    let mut sim = Sim::local();
    two_tools(&mut sim);
    sim.send(&user("two"));
    assert_eq!(sim.s.pending_requests(), ["agentx-perm-1", "agentx-perm-2"]);
    let before = sim.out.len();
    sim.eof();
    assert_eq!(
        sim.labels_from(before),
        [
            "state:running",
            "tool_result:toolu_1:control stream closed",
            "tool_result:toolu_2:control stream closed",
            "assistant:text:done",
            "result:success",
            "state:idle",
        ]
    );
    assert!(sim.s.pending_requests().is_empty());
    assert_eq!(sim.s.state(), Some("idle"));
    assert_eq!(
        sim.last_of("result")["permission_denials"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(0));
    assert!(matches!(sim.actions.last(), Some(Action::Exit { code: 0 })));
}

/// Scenario 6 (WIRE-PERM-001), hook first: the hook's allow wins, the host request is
/// cancelled, the host's later deny changes nothing; the tool-use ID settles once.
#[test]
fn scenario_6_hook_allow_before_host_deny() {
    let mut sim = with_hook();
    one_tool(&mut sim);
    sim.send(&user("race"));
    sim.hook(
        "toolu_1",
        HookOutcome::Allow {
            updated_input: None,
        },
    );
    sim.send(&deny("agentx-perm-1", "host says no"));
    assert_eq!(
        sim.labels_from(5),
        [
            "control_cancel_request:agentx-perm-1",
            "state:running",
            "tool_result:toolu_1:ran Bash",
            "assistant:text:done",
            "result:success",
            "state:idle",
        ]
    );
    assert_eq!(sim.run_tools(), ["toolu_1"]);
    assert_eq!(sim.last_of("result")["permission_denials"], json!([]));
}

/// Scenario 6, host first: the host's deny wins, the hook is killed, its late allow changes
/// nothing; no cancel record (the request was answered).
#[test]
fn scenario_6_host_deny_before_hook_allow() {
    let mut sim = with_hook();
    one_tool(&mut sim);
    sim.send(&user("race"));
    sim.send(&deny("agentx-perm-1", "host says no"));
    assert!(sim
        .actions
        .iter()
        .any(|a| matches!(a, Action::KillHook { tool_use_id } if tool_use_id == "toolu_1")));
    sim.hook(
        "toolu_1",
        HookOutcome::Allow {
            updated_input: None,
        },
    );
    assert_eq!(
        sim.labels_from(5),
        [
            "state:running",
            "tool_result:toolu_1:host says no",
            "assistant:text:done",
            "result:success",
            "state:idle",
        ]
    );
    assert!(
        sim.run_tools().is_empty(),
        "no allow without a decisive allow"
    );
    assert_eq!(
        sim.last_of("result")["permission_denials"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// WIRE-PERM-001: `pass` is not decisive; the host decides. WIRE-PERM-002: a failed hook is
/// a decisive deny.
#[test]
fn hook_pass_waits_for_the_host_and_hook_failure_denies() {
    let mut sim = with_hook();
    one_tool(&mut sim);
    sim.send(&user("x"));
    sim.hook("toolu_1", HookOutcome::Pass);
    assert_eq!(sim.s.state(), Some("requires_action"));
    assert_eq!(sim.s.pending_requests(), ["agentx-perm-1"]);
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(sim.run_tools(), ["toolu_1"]);

    let mut sim = with_hook();
    one_tool(&mut sim);
    sim.send(&user("x"));
    sim.hook("toolu_1", HookOutcome::Failed);
    assert!(sim
        .labels()
        .contains(&"tool_result:toolu_1:permission hook failed".to_string()));
    assert!(sim.run_tools().is_empty());
}

/// PERM-049: an error response or a malformed decision is a denial, never an allow.
#[test]
fn error_and_malformed_decisions_deny() {
    for response in [
        json!({"subtype":"error","request_id":"agentx-perm-1","error":"boom"}),
        json!({"subtype":"success","request_id":"agentx-perm-1","response":{"behavior":"maybe"}}),
        json!({"subtype":"success","request_id":"agentx-perm-1"}),
        json!({"subtype":"success","request_id":"agentx-perm-1","response":{"behavior":"allow","toolUseID":"toolu_other"}}),
    ] {
        let mut sim = Sim::local();
        one_tool(&mut sim);
        sim.send(&user("x"));
        sim.send(&json!({"type":"control_response","response":response}).to_string());
        assert!(sim.run_tools().is_empty(), "{response}");
        let denials = sim.last_of("result")["permission_denials"].clone();
        assert_eq!(denials.as_array().unwrap().len(), 1, "{response}");
    }
}

/// Scenario 7 (PERM-050, PERM-053): the same late tool response twice: one tool result, no
/// duplicate identifier.
#[test]
fn scenario_7_same_late_response_twice() {
    let mut sim = Sim::local();
    one_tool(&mut sim);
    sim.send(&user("x"));
    sim.send(&allow("agentx-perm-1"));
    let frames = sim.out.len();
    sim.send(&allow("agentx-perm-1"));
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(sim.out.len(), frames);
    let results: Vec<_> = sim
        .labels()
        .into_iter()
        .filter(|l| l.starts_with("tool_result:toolu_1"))
        .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(sim.run_tools(), ["toolu_1"]);
    assert!(sim.s.is_resolved("toolu_1"));
    // A response naming a resolved tool-use ID under an unknown request ID is a duplicate,
    // not an orphan; one with nothing known is an orphan.
    sim.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":"zzz","response":{"behavior":"allow","toolUseID":"toolu_1"}}}).to_string());
    assert_eq!(sim.s.orphaned_responses(), 0);
    sim.send(&allow("unknown-request"));
    assert_eq!(sim.s.orphaned_responses(), 1);
    assert_eq!(sim.out.len(), frames);
}

/// Scenario 11 (WIRE-010): interrupt an active turn with no pending permission: an
/// immediate payload-less success, then the ordinary error_during_execution result (no
/// cancelled subtype), idle, and the input stays usable.
#[test]
fn scenario_11_interrupt_without_pending_permission() {
    let mut sim = Sim::local();
    sim.script(vec![
        ev(ModelEvent::MessageStart {
            message_id: "msg_a".into(),
        }),
        ev(ModelEvent::TextStart { index: 0 }),
        ev(ModelEvent::TextDelta {
            index: 0,
            text: "thinking".into(),
        }),
        Step::Pause,
    ]);
    sim.send(&user("slow"));
    sim.advance(250);
    let before = sim.out.len();
    sim.send(&control("int-1", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(before),
        [
            "control_response:success:int-1",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_eq!(
        sim.out[before],
        json!({"type":"control_response","response":{"subtype":"success","request_id":"int-1"}})
    );
    let r = sim.last_of("result");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["errors"], json!(["interrupted"]));
    assert_eq!(r["stop_reason"], "cancelled");
    assert_eq!(r["duration_ms"], 250);
    assert!(sim
        .actions
        .iter()
        .any(|a| matches!(a, Action::CancelModel { turn: 1 })));
    // The cancelled model's late events change nothing.
    let frames = sim.out.len();
    sim.s
        .handle_model(1, ModelEvent::BlockStop { index: 0 }, sim.now);
    sim.step();
    assert_eq!(sim.out.len(), frames);
    // Still usable.
    sim.send(&user("again"));
    assert_eq!(sim.last_of("result")["result"], "echo: again");
    // Interrupt with no active turn: the acknowledgement only.
    let before = sim.out.len();
    sim.send(&control("int-2", json!({"subtype":"interrupt"})));
    assert_eq!(sim.labels_from(before), ["control_response:success:int-2"]);
}

/// Scenario 12 (WIRE-010, WIRE-011): interrupt while two host permissions are pending and a
/// finite task runs: both cancel records precede the acknowledgement, every tool-use ID is
/// paired, the task's terminal event precedes the result, the flush precedes idle.
#[test]
fn scenario_12_interrupt_with_two_pending_permissions() {
    let mut sim = Sim::local();
    let mut script = vec![ev(ModelEvent::TaskStarted {
        task_id: "t1".into(),
        description: "background".into(),
    })];
    script.extend(tool_reply(
        "msg_a",
        &[("toolu_1", "Bash", BASH_LS), ("toolu_2", "Bash", BASH_PWD)],
    ));
    sim.script(script);
    sim.send(&user("two"));
    let before = sim.out.len();
    sim.send(&control("int-1", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(before),
        [
            "control_cancel_request:agentx-perm-1",
            "control_cancel_request:agentx-perm-2",
            "control_response:success:int-1",
            "tool_result:toolu_1:interrupted",
            "tool_result:toolu_2:interrupted",
            "task_notification",
            "result:error_during_execution",
            "state:idle",
        ]
    );
    let task = &sim.out[before + 5];
    assert_eq!(task["status"], "stopped");
    assert_eq!(task["task_id"], "t1");
    for i in [before + 3, before + 4] {
        assert_eq!(sim.out[i]["message"]["content"][0]["is_error"], true);
    }
    // The internal flush comes before idle: PROFILE §11 "durable before idle" holds the
    // result and everything after it back until the persist was taken.
    let result_index = sim.out.len() - 2;
    let (at, before) = sim
        .actions
        .iter()
        .enumerate()
        .find_map(|(i, a)| match a {
            Action::Persist { before_frame, .. } => Some((i, *before_frame)),
            _ => None,
        })
        .unwrap();
    assert_eq!(before, result_index as u64);
    assert_eq!(
        sim.action_frames[at], result_index,
        "the persist was taken before the result was transmitted"
    );
    assert!(sim.s.pending_requests().is_empty());
    assert_eq!(sim.s.state(), Some("idle"));
    // Known-late responses to the cancelled requests are ignored.
    let frames = sim.out.len();
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(sim.out.len(), frames);
    assert!(sim.run_tools().is_empty());
}

/// WIRE-015 on the interrupt path (WIRE-010/011): the acknowledgement is pushed by the
/// broker's ordered post-cancellation callback. When that push is refused (here the
/// `request_id` echoes a credential, so the encoder latches its WIRE-013 failure), both
/// cancellations were already written in order, the refusal is the broker's one fixed
/// emission failure, every waiter and prompt still settles (no pending ID stranded, hooks
/// killed), nothing more is written, and the session ends with PROFILE §5's text and status 1.
#[test]
fn wire_015_interrupt_acknowledgement_refused_by_the_callback() {
    let mut c = config();
    c.hook_configured = true;
    c.credentials = agentx_wire::encode::CredentialSet::new(["sekrit-4711"]).unwrap();
    let mut sim = Sim::new(c);
    two_tools(&mut sim);
    sim.send(&user("two"));
    assert_eq!(sim.hooks, ["toolu_1", "toolu_2"]);
    let before = sim.out.len();
    sim.send(&control("int-sekrit-4711", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(before),
        [
            "control_cancel_request:agentx-perm-1",
            "control_cancel_request:agentx-perm-2",
        ]
    );
    assert_eq!(
        sim.diagnostics,
        [agentx_wire::encode::VALIDATION_FAILURE_TEXT]
    );
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(1));
    assert!(sim.s.pending_requests().is_empty());
    assert!(sim.s.open_prompts().is_empty());
    assert!(sim.hooks.is_empty(), "every hook killed");
    assert!(sim.run_tools().is_empty());
    // Nothing after the failure: a late answer changes nothing.
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(sim.out.len(), before + 2);
}

/// The same path succeeding: with no pending permission the acknowledgement pushed by the
/// callback is the first interrupt-specific output (WIRE-011), and a second interrupt with
/// no turn is acknowledged alone.
#[test]
fn wire_010_acknowledgement_through_the_callback_without_prompts() {
    let mut sim = Sim::local();
    sim.send(&control("int-0", json!({"subtype":"interrupt"})));
    assert_eq!(sim.labels(), ["control_response:success:int-0"]);
    assert!(sim.out[0]["response"].get("response").is_none());
}

/// Interrupt with a running tool: it is cancelled and its tool_result says `interrupted`;
/// a finished sibling keeps its own result (every accepted tool use paired once).
#[test]
fn interrupt_pairs_running_and_finished_tools() {
    let mut c = config();
    c.permission_mode = agentx_wire::wire::permission::PermissionMode::BypassPermissions;
    let mut sim = Sim::new(c);
    sim.hold_tools = true;
    two_tools(&mut sim);
    sim.send(&user("two"));
    sim.finish_tool("toolu_2", ToolOutcome::ok("pwd output"));
    let before = sim.out.len();
    sim.interrupt_signal();
    assert_eq!(
        sim.labels_from(before),
        [
            "tool_result:toolu_1:interrupted",
            "tool_result:toolu_2:pwd output",
            "result:error_during_execution",
            "state:idle",
        ]
    );
    assert!(sim
        .actions
        .iter()
        .any(|a| matches!(a, Action::CancelTool { tool_use_id } if tool_use_id == "toolu_1")));
    let frames = sim.out.len();
    sim.finish_tool("toolu_1", ToolOutcome::ok("late"));
    assert_eq!(
        sim.out.len(),
        frames,
        "a cancelled tool's late outcome is ignored"
    );
}

/// PERM-045: a deny with `interrupt: true` interrupts the turn.
#[test]
fn deny_with_interrupt_interrupts_the_turn() {
    let mut sim = Sim::local();
    two_tools(&mut sim);
    sim.send(&user("x"));
    let before = sim.out.len();
    sim.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":"agentx-perm-1","response":{"behavior":"deny","message":"stop","interrupt":true}}}).to_string());
    assert_eq!(
        sim.labels_from(before),
        [
            "control_cancel_request:agentx-perm-2",
            "tool_result:toolu_1:stop",
            "tool_result:toolu_2:interrupted",
            "result:error_during_execution",
            "state:idle",
        ]
    );
}

/// Scenario 13 (WIRE-EOF-001): a valid unterminated final control_response resolves its
/// request before EOF; only the other gets the stream-closed rejection.
#[test]
fn scenario_13_final_unterminated_response_wins_over_eof() {
    let mut sim = Sim::local();
    two_tools(&mut sim);
    sim.send(&user("two"));
    // The driver hands the unterminated tail to handle_line, then handle_eof.
    sim.send(&allow("agentx-perm-2"));
    sim.eof();
    assert!(sim
        .labels()
        .contains(&"tool_result:toolu_2:ran Bash".to_string()));
    assert!(sim
        .labels()
        .contains(&"tool_result:toolu_1:control stream closed".to_string()));
    assert_eq!(sim.run_tools(), ["toolu_2"]);
    assert_eq!(
        sim.last_of("result")["permission_denials"],
        json!([{"tool_name":"Bash","tool_use_id":"toolu_1","tool_input":{"command":"ls"}}])
    );
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(0));
}

/// Replay mode echoes a control_response that resolves a waiter, as received
/// (WIRE-EOF-001, PROFILE §8), before what it causes.
#[test]
fn replay_echoes_resolving_responses() {
    let mut c = config();
    c.replay_user_messages = true;
    let mut sim = Sim::new(c);
    one_tool(&mut sim);
    sim.send(&user("x"));
    let before = sim.out.len();
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(
        sim.labels_from(before)[0],
        "control_response:success:agentx-perm-1"
    );
    assert_eq!(
        sim.out[before]["response"]["response"],
        json!({"behavior":"allow"})
    );
    // A late duplicate resolves nothing and is not echoed.
    let before = sim.out.len();
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(sim.out.len(), before);
}

/// updatedInput replaces the input the tool gets; addRules apply to the rest of the
/// process (PROFILE §10, PERM-042, PERM-043, PERM-047 alias).
#[test]
fn updated_input_and_add_rules() {
    let mut sim = Sim::local();
    one_tool(&mut sim);
    sim.script(tool_reply("msg_c", &[("toolu_3", "Bash", BASH_LS)]))
        .script(text_reply("msg_d", "again", None));
    sim.send(&user("x"));
    sim.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":"agentx-perm-1","response":{
        "behavior":"allow","updatedInput":{"command":"ls -a"},"updated_input":{"command":"ignored"},
        "updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"ls"}],"behavior":"allow","destination":"session"}]}}}).to_string());
    let run = sim.actions.iter().find_map(|a| match a {
        Action::RunTool { input_json, .. } => Some(input_json.clone()),
        _ => None,
    });
    assert_eq!(
        run.as_deref(),
        Some(r#"{"command":"ls -a"}"#),
        "canonical wins over alias"
    );
    // The next turn's `ls` is allowed by the rule: no prompt.
    let before = sim.out.len();
    sim.send(&user("y"));
    assert!(!sim
        .labels_from(before)
        .iter()
        .any(|l| l.starts_with("control_request")));
    assert_eq!(sim.run_tools(), ["toolu_1", "toolu_3"]);
}

/// Without a host (one-shot) and without a hook, ask = deny (PROFILE §10).
#[test]
fn no_host_and_no_hook_denies() {
    let mut c = config();
    c.host_permissions = false;
    let mut sim = Sim::new(c);
    one_tool(&mut sim);
    sim.send(&user("x"));
    assert!(sim
        .labels()
        .contains(&"tool_result:toolu_1:no permission prompt available".to_string()));
    assert!(!sim.labels().iter().any(|l| l.starts_with("state:requires")));
}

/// WIRE-PERM-004 / PERM-022: the sandbox network request takes the same correlated path and
/// its answer resumes the model; a protocol error denies.
#[test]
fn network_request_takes_the_permission_path() {
    let mut sim = Sim::local();
    let mut script = vec![ev(ModelEvent::NetworkAccess {
        host: "example.com".into(),
        port: Some(443),
    })];
    script.extend(text_reply("msg_a", "network example.com: allowed", None));
    sim.script(script);
    sim.send(&user("net"));
    assert_eq!(
        sim.last()["request"],
        json!({"subtype":"can_use_tool","tool_name":"SandboxNetworkAccess","input":{"host":"example.com","port":443},
               "tool_use_id":"toolu_network_1_1","description":"SandboxNetworkAccess example.com"})
    );
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(sim.network, [NetworkDecision::Allowed]);
    assert_eq!(sim.last_of("result")["subtype"], "success");

    let mut sim = Sim::local();
    sim.script(vec![ev(ModelEvent::NetworkAccess {
        host: "example.com".into(),
        port: None,
    })]);
    sim.send(&user("net"));
    sim.send(&json!({"type":"control_response","response":{"subtype":"error","request_id":"agentx-perm-1","error":"nope"}}).to_string());
    assert_eq!(sim.network, [NetworkDecision::Denied]);
}

/// PROFILE §10 / PERM-043: the rules an allow of a network prompt adds hold for the rest of
/// the process like any allow's: a later Bash runs without a prompt, and a later network
/// request to the host a rule names is allowed without one (a request to another host still
/// asks).
#[test]
fn a_network_allow_adds_its_rules_for_the_rest_of_the_process() {
    let mut sim = Sim::local();
    let network = |host: &str| {
        ev(ModelEvent::NetworkAccess {
            host: host.into(),
            port: Some(443),
        })
    };
    let mut script = vec![network("example.com")];
    script.extend(text_reply("msg_a", "first", None));
    sim.script(script);
    sim.send(&user("net"));
    assert_eq!(sim.last()["request"]["tool_name"], "SandboxNetworkAccess");
    let rules = json!([{"type":"addRules","rules":[{"toolName":"Bash"},{"toolName":"SandboxNetworkAccess","ruleContent":"example.com"}],"behavior":"allow","destination":"session"}]);
    sim.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":"agentx-perm-1","response":{"behavior":"allow","updatedPermissions":rules}}}).to_string());
    assert_eq!(sim.network, [NetworkDecision::Allowed]);
    // A later turn: Bash, then the same host, then another host.
    sim.script(tool_reply(
        "msg_b",
        &[("toolu_b", "Bash", r#"{"command":"echo hi"}"#)],
    ));
    let mut script = vec![network("example.com"), network("other.example")];
    script.extend(text_reply("msg_c", "done", None));
    sim.script(script);
    let from = sim.out.len();
    sim.send(&user("again"));
    let asked: Vec<serde_json::Value> = sim.out[from..]
        .iter()
        .filter(|v| v["type"] == "control_request")
        .cloned()
        .collect();
    assert_eq!(asked.len(), 1, "only the other host asks: {asked:?}");
    assert_eq!(asked[0]["request"]["input"]["host"], "other.example");
}

/// Scenario 19 at the session level: the emission path fails (a can_use_tool request would
/// carry a credential, WIRE-013): no partial record, one fixed diagnostic, the prompt is not
/// stranded, and the session ends with status 1 after the frames already accepted.
#[test]
fn scenario_19_refused_emission_strands_nothing() {
    let mut sim2 = {
        let mut c = config();
        c.credentials = agentx_wire::encode::CredentialSet::new(["sk-live-0123456789"]).unwrap();
        Sim::new(c)
    };
    sim2.script(tool_reply(
        "msg_a",
        &[(
            "toolu_1",
            "Bash",
            r#"{"command":"curl -H sk-live-0123456789"}"#,
        )],
    ));
    sim2.send(&user("x"));
    // The assistant record itself carries the credential: refused before any byte of it.
    assert_eq!(sim2.labels(), ["init", "state:running"]);
    assert_eq!(
        sim2.diagnostics,
        ["agentx: output refused: record failed credential validation"]
    );
    assert!(sim2.s.pending_requests().is_empty());
    assert_eq!(sim2.s.is_done().map(|e| e.code), Some(1));
    assert!(sim2.out.iter().all(|v| !v.to_string().contains("sk-live")));
}

/// PERM-049 / WIRE-PERM-002 through the broker and `PermissionRace`: a hook "allow" whose
/// `updatedInput` is not a JSON object is a malformed decision, a decisive denial (never an
/// allow): the host request is cancelled, the tool never runs.
#[test]
fn hook_allow_with_malformed_updated_input_is_a_denial() {
    let mut sim = with_hook();
    one_tool(&mut sim);
    sim.send(&user("x"));
    sim.hook(
        "toolu_1",
        HookOutcome::Allow {
            updated_input: Some("[1]".into()),
        },
    );
    assert_eq!(
        sim.labels_from(5),
        [
            "control_cancel_request:agentx-perm-1",
            "state:running",
            "tool_result:toolu_1:permission hook failed",
            "assistant:text:done",
            "result:success",
            "state:idle",
        ]
    );
    assert!(sim.run_tools().is_empty());
    assert!(sim.s.pending_requests().is_empty());
    assert!(sim.s.is_resolved("toolu_1"));
    // The host's late allow is known-late (WIRE-007): nothing written, not an orphan.
    let before = sim.out.len();
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(sim.out.len(), before);
    assert_eq!(sim.s.orphaned_responses(), 0);
}

/// PERM-042 for the hook: a winning hook's `updatedInput` is the input the tool gets, as the
/// hook runner gave it.
#[test]
fn hook_allow_updated_input_is_what_runs() {
    let mut sim = with_hook();
    one_tool(&mut sim);
    sim.send(&user("x"));
    sim.hook(
        "toolu_1",
        HookOutcome::Allow {
            updated_input: Some(r#"{"command":"ls -l"}"#.into()),
        },
    );
    let run = sim.actions.iter().find_map(|a| match a {
        Action::RunTool { input_json, .. } => Some(input_json.clone()),
        _ => None,
    });
    assert_eq!(run.as_deref(), Some(r#"{"command":"ls -l"}"#));
}

/// PERM-053: a tool-use ID settles exactly once. A model that reuses a settled ID in a later
/// turn gets no second prompt (no request, no `requires_action`): the use is denied.
#[test]
fn a_settled_tool_use_id_is_never_asked_again() {
    let mut sim = Sim::local();
    one_tool(&mut sim);
    sim.script(tool_reply("msg_c", &[("toolu_1", "Bash", BASH_PWD)]))
        .script(text_reply("msg_d", "again", None));
    sim.send(&user("x"));
    sim.send(&allow("agentx-perm-1"));
    let before = sim.out.len();
    sim.send(&user("y"));
    assert_eq!(
        sim.labels_from(before),
        [
            "state:running",
            "assistant:tool_use:toolu_1",
            "tool_result:toolu_1:this tool use already settled (PERM-053)",
            "assistant:text:again",
            "result:success",
            "state:idle",
        ]
    );
    assert_eq!(sim.run_tools(), ["toolu_1"]);
    assert!(sim.s.pending_requests().is_empty());
}

/// A fatal input error with a prompt open (PROFILE §8): the broker shuts down, the hook is
/// killed, nothing more is written (no cancel record), nothing stays pending, exit 1.
#[test]
fn fatal_input_closes_open_prompts_silently() {
    let mut sim = with_hook();
    one_tool(&mut sim);
    sim.send(&user("x"));
    assert_eq!(sim.s.pending_requests(), ["agentx-perm-1"]);
    let before = sim.out.len();
    sim.send("{");
    assert_eq!(sim.out.len(), before);
    assert!(sim
        .actions
        .iter()
        .any(|a| matches!(a, Action::KillHook { tool_use_id } if tool_use_id == "toolu_1")));
    assert!(sim.s.pending_requests().is_empty());
    assert!(sim.s.open_prompts().is_empty());
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(1));
}

/// SIGINT is a step like any input (PROFILE §8 Signals): after input EOF, a SIGINT that ends
/// the last turn ends the session (status 0) at once; without EOF, the next queued prompt
/// starts right after the interrupted turn's `idle`, not at the next input.
#[test]
fn sigint_after_eof_exits_and_sigint_starts_the_next_queued_turn() {
    let mut c = config();
    c.permission_mode = agentx_wire::wire::permission::PermissionMode::BypassPermissions;
    let mut sim = Sim::new(c.clone());
    sim.hold_tools = true;
    two_tools(&mut sim);
    sim.send(&user("two"));
    sim.eof();
    assert!(sim.s.is_done().is_none(), "the turn still runs its tools");
    sim.interrupt_signal();
    assert_eq!(sim.last_of("result")["subtype"], "error_during_execution");
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(0));

    let mut sim = Sim::new(c);
    sim.hold_tools = true;
    two_tools(&mut sim);
    sim.send(&user("two"));
    sim.send(&user("next"));
    let before = sim.out.len();
    sim.interrupt_signal();
    assert_eq!(
        sim.labels_from(before),
        [
            "tool_result:toolu_1:interrupted",
            "tool_result:toolu_2:interrupted",
            "result:error_during_execution",
            "state:idle",
            "state:running",
            "assistant:text:done",
            "result:success",
            "state:idle",
        ]
    );
    assert_eq!(sim.requests.len(), 2, "the queued prompt's model call");
}

/// WIRE-013 on the SIGINT path: a finished tool's output that holds a credential is refused
/// when the interrupt writes its `tool_result`; the output latches with PROFILE §5's text and
/// the session ends with status 1 right then, not at the next input.
#[test]
fn sigint_whose_tool_result_is_refused_ends_the_session() {
    let mut c = config();
    c.permission_mode = agentx_wire::wire::permission::PermissionMode::BypassPermissions;
    c.credentials = agentx_wire::encode::CredentialSet::new(["sekrit-4711"]).unwrap();
    let mut sim = Sim::new(c);
    sim.hold_tools = true;
    two_tools(&mut sim);
    sim.send(&user("two"));
    sim.finish_tool("toolu_2", ToolOutcome::ok("key sekrit-4711"));
    let before = sim.out.len();
    sim.interrupt_signal();
    assert_eq!(sim.labels_from(before), ["tool_result:toolu_1:interrupted"]);
    assert_eq!(
        sim.diagnostics,
        [agentx_wire::encode::VALIDATION_FAILURE_TEXT]
    );
    assert_eq!(sim.s.is_done().map(|e| e.code), Some(1));
    assert!(
        sim.running_tools.is_empty(),
        "the running tool was cancelled"
    );
    assert!(!sim.diagnostics.concat().contains("sekrit"));
}
