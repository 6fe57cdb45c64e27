//! SDK hook callbacks through the session core on a virtual clock (PROFILE §16, WIRE-007,
//! WIRE-011): initialize registration and flags, HOOK_INPUT, PreToolUse before §10's
//! evaluation, every completion order of the three deciders (the SDK hook, the
//! `settings.json` hook, the host's `can_use_tool`), timeouts at their edge, `onFailure`,
//! the interrupt order, PostToolUse, UserPromptSubmit, Stop, `continue: false` and
//! `{"async": true}`.

use crate::session_sim;

use std::time::Duration;

use agentx_core::session::{Action, HookOutcome, Profile, SessionConfig};
use agentx_wire::wire::permission::PermissionMode;
use serde_json::{json, Value};
use session_sim::*;

const BASH_LS: &str = r#"{"command":"ls"}"#;
const READ_A: &str = r#"{"file_path":"/work/project/a.txt"}"#;

fn sdk_config() -> SessionConfig {
    let mut c = config();
    c.profile = Profile::Sdk;
    c.transcript_path = "/home/x/sessions/s/transcript.ndjson".into();
    c
}

/// An SDK-profile session whose initialize registered `hooks`.
fn with_hooks(c: SessionConfig, hooks: Value) -> Sim {
    let mut sim = Sim::new(c);
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":hooks}),
    ));
    let r = sim.last();
    assert_eq!(r["response"]["subtype"], "success", "{r}");
    sim
}

fn pre(matcher: Value, extra: Value) -> Value {
    let mut m = json!({"matcher":matcher,"hookCallbackIds":["hook_0"]});
    for (k, v) in extra.as_object().unwrap() {
        m[k] = v.clone();
    }
    json!({ "PreToolUse": [m] })
}

/// The `hook_callback` requests written: (request_id, callback_id, request).
fn callbacks(sim: &Sim) -> Vec<(String, String, Value)> {
    sim.out
        .iter()
        .filter(|v| v["type"] == "control_request" && v["request"]["subtype"] == "hook_callback")
        .map(|v| {
            (
                v["request_id"].as_str().unwrap().to_string(),
                v["request"]["callback_id"].as_str().unwrap().to_string(),
                v["request"].clone(),
            )
        })
        .collect()
}

fn can_use_tool(sim: &Sim) -> Vec<String> {
    sim.out
        .iter()
        .filter(|v| v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool")
        .map(|v| v["request_id"].as_str().unwrap().to_string())
        .collect()
}

fn answer(id: &str, payload: Value) -> String {
    json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":payload}}).to_string()
}

fn answer_error(id: &str, message: &str) -> String {
    json!({"type":"control_response","response":{"subtype":"error","request_id":id,"error":message}}).to_string()
}

fn decision(d: &str) -> Value {
    json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":d}})
}

fn started_hooks(sim: &Sim) -> usize {
    sim.actions
        .iter()
        .filter(|a| matches!(a, Action::StartHook { .. }))
        .count()
}

fn tool_result(sim: &Sim, id: &str) -> Value {
    sim.out
        .iter()
        .find(|v| v["type"] == "user" && v["message"]["content"][0]["tool_use_id"] == id)
        .map(|v| v["message"]["content"][0].clone())
        .unwrap_or_else(|| panic!("no tool_result for {id}: {:?}", sim.labels()))
}

fn bash_then_done(sim: &mut Sim) {
    sim.script(tool_reply("msg_a", &[("toolu_1", "Bash", BASH_LS)]))
        .script(text_reply("msg_b", "done", None));
}

/// PROFILE §16: the response carries `hook_on_failure_supported` always and `hooks_applied`
/// when callbacks were registered; an event agentx does not call gets one WARN line.
#[test]
fn initialize_registers_hooks_and_says_so() {
    let sim = with_hooks(
        sdk_config(),
        json!({"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]}],"Notification":[{"hookCallbackIds":["hook_1"]}]}),
    );
    let r = &sim.last()["response"]["response"];
    assert_eq!(r["hook_on_failure_supported"], true);
    assert_eq!(r["hooks_applied"], true);
    assert_eq!(
        sim.diagnostics,
        ["agentx: WARN initialize.hooks event \"Notification\" is not supported; not called"]
    );
    // Python sends `hooks: null` without hooks: no `hooks_applied`.
    let mut plain = Sim::new(sdk_config());
    plain.send(&control("i", json!({"subtype":"initialize","hooks":null})));
    let r = &plain.last()["response"]["response"];
    assert_eq!(r["hook_on_failure_supported"], true);
    assert!(r.get("hooks_applied").is_none());
    // A malformed map is a correlated error naming the member, and does not count.
    let mut bad = Sim::new(sdk_config());
    bad.send(&control(
        "b",
        json!({"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","onFailure":"maybe","hookCallbackIds":[]}]}}),
    ));
    let r = &bad.last()["response"];
    assert_eq!(r["subtype"], "error");
    assert!(r["error"].as_str().unwrap().contains("onFailure"), "{r}");
}

/// PROFILE §16: PreToolUse runs before §10's evaluation with HOOK_INPUT; `deny` denies with
/// `permissionDecisionReason` (a `permission_denials` entry, no `can_use_tool`).
#[test]
fn pre_tool_use_deny_with_hook_input() {
    let mut sim = with_hooks(sdk_config(), pre(json!("Bash"), json!({})));
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    let cbs = callbacks(&sim);
    assert_eq!(cbs.len(), 1);
    let (id, cb, req) = &cbs[0];
    assert_eq!(cb, "hook_0");
    assert_eq!(req["tool_use_id"], "toolu_1");
    assert_eq!(
        req["input"],
        json!({
            "session_id": SID,
            "transcript_path": "/home/x/sessions/s/transcript.ndjson",
            "cwd": CWD,
            "hook_event_name": "PreToolUse",
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_input": {"command":"ls"},
            "tool_use_id": "toolu_1",
        })
    );
    // Nothing else starts while the callback is pending.
    assert!(can_use_tool(&sim).is_empty());
    assert!(sim.run_tools().is_empty());
    sim.send(&answer(
        id,
        json!({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no shell"}}),
    ));
    let r = tool_result(&sim, "toolu_1");
    assert_eq!(r["content"], "no shell");
    assert_eq!(r["is_error"], true);
    assert!(can_use_tool(&sim).is_empty());
    let result = sim.last_of("result");
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");
}

/// PROFILE §16: `allow` skips the ask (with `updatedInput` replacing the input); the
/// deprecated `decision: approve` allows; `ask` forces the ask for a tool §10 allows;
/// `defer` lets the evaluation go on.
#[test]
fn pre_tool_use_allow_approve_ask_and_defer() {
    // allow + updatedInput: runs what the hook gave, no can_use_tool.
    let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({})));
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(
        &id,
        json!({"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"pwd"}}}),
    ));
    assert!(can_use_tool(&sim).is_empty());
    assert!(sim.actions.iter().any(
        |a| matches!(a, Action::RunTool { input_json, .. } if input_json == r#"{"command":"pwd"}"#)
    ));
    assert_eq!(sim.last_of("result")["subtype"], "success");

    // approve
    let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({})));
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(&id, json!({"decision":"approve"})));
    assert!(can_use_tool(&sim).is_empty());
    assert_eq!(sim.run_tools(), ["toolu_1"]);

    // ask on Read inside the cwd (which §10 allows): can_use_tool is asked.
    let mut sim = with_hooks(sdk_config(), pre(json!("Read"), json!({})));
    sim.script(tool_reply("msg_a", &[("toolu_r", "Read", READ_A)]))
        .script(text_reply("msg_b", "done", None));
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(&id, decision("ask")));
    assert_eq!(can_use_tool(&sim).len(), 1);
    assert!(sim.run_tools().is_empty());
    sim.send(&allow(&can_use_tool(&sim)[0]));
    assert_eq!(sim.run_tools(), ["toolu_r"]);

    // defer (and an empty answer): the evaluation goes on; Bash asks the host.
    for payload in [decision("defer"), json!({}), json!({"async":true})] {
        let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({})));
        bash_then_done(&mut sim);
        sim.send(&user("go"));
        let id = callbacks(&sim)[0].0.clone();
        sim.send(&answer(&id, payload.clone()));
        assert_eq!(can_use_tool(&sim).len(), 1, "{payload}");
        assert!(sim.run_tools().is_empty(), "{payload}");
    }
}

/// PROFILE §16: `allow` skips the ask, never a §10 denial (plan mode).
#[test]
fn pre_tool_use_allow_does_not_override_a_policy_denial() {
    let mut c = sdk_config();
    c.permission_mode = PermissionMode::Plan;
    let mut sim = with_hooks(c, pre(Value::Null, json!({})));
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(&id, decision("allow")));
    assert!(sim.run_tools().is_empty());
    assert_eq!(
        tool_result(&sim, "toolu_1")["content"],
        "plan mode: no changes"
    );
}

/// The matcher names the tool: a `Bash` hook is not called for `Read`; `A|B` lists tools.
#[test]
fn matchers_select_tools() {
    let mut sim = with_hooks(sdk_config(), pre(json!("Bash|Write"), json!({})));
    sim.script(tool_reply("msg_a", &[("toolu_r", "Read", READ_A)]))
        .script(text_reply("msg_b", "done", None));
    sim.send(&user("go"));
    assert!(callbacks(&sim).is_empty());
    assert_eq!(sim.run_tools(), ["toolu_r"]);
}

/// Several callbacks of one event run one after the other in the map's order.
#[test]
fn callbacks_run_in_map_order() {
    let hooks = json!({"PreToolUse":[
        {"matcher":"Bash","hookCallbackIds":["hook_0","hook_1"]},
        {"matcher":null,"hookCallbackIds":["hook_2"]}
    ]});
    let mut sim = with_hooks(sdk_config(), hooks);
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    for (n, want) in ["hook_0", "hook_1", "hook_2"].iter().enumerate() {
        let cbs = callbacks(&sim);
        assert_eq!(cbs.len(), n + 1, "one at a time");
        assert_eq!(&cbs[n].1, want);
        sim.send(&answer(&cbs[n].0, json!({})));
    }
    assert_eq!(can_use_tool(&sim).len(), 1);
    // A deny ends the run: later callbacks are not called.
    let mut sim = with_hooks(
        sdk_config(),
        json!({"PreToolUse":[{"hookCallbackIds":["hook_0","hook_1"]}]}),
    );
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(&id, json!({"decision":"block","reason":"stop"})));
    assert_eq!(callbacks(&sim).len(), 1);
    assert_eq!(tool_result(&sim, "toolu_1")["content"], "stop");
}

fn three_party() -> Sim {
    let mut c = sdk_config();
    c.hook_configured = true;
    let mut sim = with_hooks(c, pre(Value::Null, json!({})));
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    sim
}

/// The three deciders (ARCHITECTURE.md): the SDK hook finishes before §10's evaluation, so
/// neither the settings hook nor `can_use_tool` starts while it is pending. With no
/// decision, both start together; then the settings hook wins (the host request is
/// cancelled), or the host wins (the settings hook is killed).
#[test]
fn three_deciders_sdk_hook_then_settings_hook_then_host() {
    let mut sim = three_party();
    assert_eq!(started_hooks(&sim), 0);
    assert!(can_use_tool(&sim).is_empty());
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(&id, decision("defer")));
    assert_eq!(started_hooks(&sim), 1);
    let host = can_use_tool(&sim);
    assert_eq!(host.len(), 1);
    let from = sim.out.len();
    sim.hook(
        "toolu_1",
        HookOutcome::Allow {
            updated_input: None,
        },
    );
    assert_eq!(
        sim.labels_from(from)[..2],
        [
            format!("control_cancel_request:{}", host[0]),
            "state:running".to_string()
        ]
    );
    assert_eq!(sim.run_tools(), ["toolu_1"]);
    // The host's late answer changes nothing (WIRE-007).
    sim.send(&deny(&host[0], "late"));
    assert_eq!(sim.last_of("result")["permission_denials"], json!([]));
}

#[test]
fn three_deciders_sdk_hook_then_host_then_settings_hook() {
    let mut sim = three_party();
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(&id, json!({})));
    let host = can_use_tool(&sim);
    sim.send(&deny(&host[0], "host says no"));
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
    assert!(sim.run_tools().is_empty());
    assert_eq!(tool_result(&sim, "toolu_1")["content"], "host says no");
}

/// A decisive SDK hook ends it: neither the settings hook nor the host is asked.
#[test]
fn three_deciders_decisive_sdk_hook_starts_neither_other() {
    for (payload, runs) in [(decision("allow"), true), (decision("deny"), false)] {
        let mut sim = three_party();
        let id = callbacks(&sim)[0].0.clone();
        sim.send(&answer(&id, payload.clone()));
        assert_eq!(started_hooks(&sim), 0, "{payload}");
        assert!(can_use_tool(&sim).is_empty(), "{payload}");
        assert_eq!(sim.run_tools().len(), usize::from(runs), "{payload}");
        assert_eq!(sim.last_of("result")["subtype"], "success");
    }
    // `ask` forces the race: both start.
    let mut sim = three_party();
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(&id, decision("ask")));
    assert_eq!(started_hooks(&sim), 1);
    assert_eq!(can_use_tool(&sim).len(), 1);
}

/// PROFILE §16 timeouts on virtual time: the default 60 s, exactly at its edge; a timed-out
/// callback is cancelled (`control_cancel_request`), fails with `onFailure` `continue` (no
/// decision: the evaluation goes on and the host is asked), and its late answer is ignored
/// (WIRE-007).
#[test]
fn default_timeout_is_60_s_then_continue() {
    let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({})));
    bash_then_done(&mut sim);
    let t0 = sim.now;
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    assert_eq!(sim.s.poll_timeout(), Some(t0 + Duration::from_secs(60)));
    sim.now = t0 + Duration::from_secs(60) - Duration::from_nanos(1);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert_eq!(sim.s.pending_hook_callbacks(), std::slice::from_ref(&id));
    sim.now = t0 + Duration::from_secs(60);
    let from = sim.out.len();
    sim.s.handle_timeout(sim.now);
    sim.step();
    let host = can_use_tool(&sim);
    assert_eq!(
        sim.labels_from(from)[..3],
        [
            format!("control_cancel_request:{id}"),
            "state:requires_action".to_string(),
            format!("control_request:can_use_tool:{}", host[0]),
        ]
    );
    assert!(sim.diagnostics.iter().any(|d| d
        == "agentx: WARN PreToolUse hook callback hook_0 failed: timed out; onFailure continue"));
    assert_eq!(sim.s.poll_timeout(), None);
    // The late allow is ignored: the host still decides.
    sim.send(&answer(&id, decision("allow")));
    assert!(sim.run_tools().is_empty());
    sim.send(&allow(&host[0]));
    assert_eq!(sim.run_tools(), ["toolu_1"]);
}

/// A matcher `timeout` (seconds) with `onFailure: block`: at its edge the tool use is denied
/// with `hook failed`; the host is never asked.
#[test]
fn matcher_timeout_with_block_denies() {
    let mut sim = with_hooks(
        sdk_config(),
        pre(Value::Null, json!({"timeout":2.5,"onFailure":"block"})),
    );
    bash_then_done(&mut sim);
    let t0 = sim.now;
    sim.send(&user("go"));
    assert_eq!(sim.s.poll_timeout(), Some(t0 + Duration::from_millis(2500)));
    sim.now = t0 + Duration::from_millis(2500);
    sim.s.handle_timeout(sim.now);
    sim.step();
    assert!(can_use_tool(&sim).is_empty());
    assert_eq!(tool_result(&sim, "toolu_1")["content"], "hook failed");
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// PROFILE §16: an error answer or a malformed one follows `onFailure`: `continue` asks the
/// host (a failure never allows), `block` denies with `hook failed`.
#[test]
fn errors_and_malformed_answers_follow_on_failure() {
    let failing = |sim: &mut Sim, id: &str, n: usize| match n {
        0 => sim.send(&answer_error(id, "callback raised")),
        1 => sim.send(&answer(id, decision("maybe"))),
        2 => sim.send(&answer(
            id,
            json!({"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":"rm -rf"}}),
        )),
        _ => sim.send(&answer(id, json!(["not", "an", "object"]))),
    };
    for n in 0..4 {
        let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({})));
        bash_then_done(&mut sim);
        sim.send(&user("go"));
        let id = callbacks(&sim)[0].0.clone();
        failing(&mut sim, &id, n);
        assert_eq!(can_use_tool(&sim).len(), 1, "case {n}: the host is asked");
        assert!(sim.run_tools().is_empty(), "case {n}");

        let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({"onFailure":"block"})));
        bash_then_done(&mut sim);
        sim.send(&user("go"));
        let id = callbacks(&sim)[0].0.clone();
        failing(&mut sim, &id, n);
        assert!(can_use_tool(&sim).is_empty(), "case {n}");
        assert_eq!(tool_result(&sim, "toolu_1")["content"], "hook failed");
        // The session goes on.
        sim.send(&user("again"));
        assert_eq!(sim.last_of("result")["result"], "echo: again");
    }
}

/// WIRE-011 / PROFILE §16: an interrupt cancels the pending callback before its
/// acknowledgement; the tool use gets its `interrupted` tool_result; the late answer is
/// ignored (WIRE-007).
#[test]
fn interrupt_cancels_the_pending_callback_before_the_acknowledgement() {
    let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({})));
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    let from = sim.out.len();
    sim.send(&control("int_1", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(from),
        [
            format!("control_cancel_request:{id}"),
            "control_response:success:int_1".to_string(),
            "tool_result:toolu_1:interrupted".to_string(),
            "result:error_during_execution".to_string(),
            "state:idle".to_string(),
        ]
    );
    assert!(sim.s.pending_hook_callbacks().is_empty());
    assert_eq!(sim.s.poll_timeout(), None);
    let n = sim.out.len();
    sim.send(&answer(&id, decision("allow")));
    assert_eq!(sim.out.len(), n, "the late answer writes nothing");
    assert!(sim.run_tools().is_empty());
}

/// Two tool uses: one waits for its SDK hook, the other for the host. An interrupt cancels
/// both requests, oldest first, before the acknowledgement (WIRE-011); both are paired.
#[test]
fn interrupt_with_a_pending_callback_and_a_pending_permission() {
    let mut sim = with_hooks(sdk_config(), pre(json!("Bash"), json!({})));
    sim.script(tool_reply(
        "msg_a",
        &[
            ("toolu_1", "Bash", BASH_LS),
            (
                "toolu_2",
                "Write",
                r#"{"file_path":"/work/project/w","content":"x"}"#,
            ),
        ],
    ));
    sim.send(&user("go"));
    let hook = callbacks(&sim)[0].0.clone();
    let host = can_use_tool(&sim)[0].clone();
    let from = sim.out.len();
    sim.send(&control("int_1", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(from),
        [
            format!("control_cancel_request:{hook}"),
            format!("control_cancel_request:{host}"),
            "control_response:success:int_1".to_string(),
            "tool_result:toolu_1:interrupted".to_string(),
            "tool_result:toolu_2:interrupted".to_string(),
            "result:error_during_execution".to_string(),
            "state:idle".to_string(),
        ]
    );
}

/// WIRE-008: EOF with a callback pending: it fails (`control stream closed`), the evaluation
/// goes on and the ask is denied (no host any more); the session exits 0.
#[test]
fn eof_with_a_pending_callback() {
    let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({})));
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    sim.eof();
    assert_eq!(
        tool_result(&sim, "toolu_1")["content"],
        "control stream closed"
    );
    assert!(sim.s.is_done().is_some_and(|d| d.code == 0));
}

/// PROFILE §16 PostToolUse: its `additionalContext` is a text block after the output in the
/// `tool_result` record and in the model's context; `block` replaces the output with the
/// reason and marks it `is_error`; a failure with `block` is `hook failed`.
#[test]
fn post_tool_use_context_and_block() {
    let hooks = json!({"PostToolUse":[{"matcher":"Read","hookCallbackIds":["hook_0","hook_1"]}]});
    let mut sim = with_hooks(sdk_config(), hooks);
    sim.script(tool_reply("msg_a", &[("toolu_r", "Read", READ_A)]))
        .script(text_reply("msg_b", "done", None));
    sim.send(&user("go"));
    let (id, _, req) = callbacks(&sim)[0].clone();
    assert_eq!(req["input"]["hook_event_name"], "PostToolUse");
    assert_eq!(req["input"]["tool_response"], "ran Read");
    assert_eq!(
        req["input"]["tool_input"],
        json!({"file_path":"/work/project/a.txt"})
    );
    // Nothing is written for the tool before its hooks end.
    assert!(sim.out.iter().all(|v| v["type"] != "user"));
    sim.send(&answer(
        &id,
        json!({"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"first"}}),
    ));
    let id = callbacks(&sim)[1].0.clone();
    sim.send(&answer(
        &id,
        json!({"hookSpecificOutput":{"additionalContext":"second"}}),
    ));
    let r = tool_result(&sim, "toolu_r");
    assert_eq!(
        r["content"],
        json!([{"type":"text","text":"ran Read"},{"type":"text","text":"first"},{"type":"text","text":"second"}])
    );
    assert_eq!(r["is_error"], false);
    let model_saw = sim.requests[1].messages.iter().rev().find_map(|m| match m {
        agentx_core::model::Message::ToolResult { content, .. } => Some(content.clone()),
        _ => None,
    });
    assert_eq!(model_saw.as_deref(), Some("ran Read\nfirst\nsecond"));

    for (payload, on_failure, text) in [
        (
            json!({"decision":"block","reason":"redacted"}),
            "continue",
            "redacted",
        ),
        (
            json!({"hookSpecificOutput":{"additionalContext":3}}),
            "block",
            "hook failed",
        ),
    ] {
        let hooks = json!({"PostToolUse":[{"hookCallbackIds":["hook_0"],"onFailure":on_failure}]});
        let mut sim = with_hooks(sdk_config(), hooks);
        sim.script(tool_reply("msg_a", &[("toolu_r", "Read", READ_A)]))
            .script(text_reply("msg_b", "done", None));
        sim.send(&user("go"));
        let id = callbacks(&sim)[0].0.clone();
        sim.send(&answer(&id, payload));
        let r = tool_result(&sim, "toolu_r");
        assert_eq!(r["content"], text);
        assert_eq!(r["is_error"], true);
        assert_eq!(sim.last_of("result")["subtype"], "success");
    }
}

/// An interrupt while a PostToolUse callback is pending: the tool ran, but its use gets the
/// `interrupted` tool_result (PROFILE §16).
#[test]
fn interrupt_during_post_tool_use() {
    let hooks = json!({"PostToolUse":[{"hookCallbackIds":["hook_0"]}]});
    let mut sim = with_hooks(sdk_config(), hooks);
    sim.script(tool_reply("msg_a", &[("toolu_r", "Read", READ_A)]));
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    let from = sim.out.len();
    sim.send(&control("int", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(from)[..3],
        [
            format!("control_cancel_request:{id}"),
            "control_response:success:int".to_string(),
            "tool_result:toolu_r:interrupted".to_string(),
        ]
    );
}

/// PROFILE §16 UserPromptSubmit: before the first model request; `block` ends the turn with
/// the input-error result and no model request, and the session goes on; contexts are
/// appended to the prompt the model sees.
#[test]
fn user_prompt_submit_block_and_context() {
    let hooks = json!({"UserPromptSubmit":[{"hookCallbackIds":["hook_0"]}]});
    let mut sim = with_hooks(sdk_config(), hooks);
    sim.send(&user("secret plan"));
    assert!(
        sim.requests.is_empty(),
        "no model request while the hook runs"
    );
    let (id, _, req) = callbacks(&sim)[0].clone();
    assert_eq!(req["input"]["hook_event_name"], "UserPromptSubmit");
    assert_eq!(req["input"]["prompt"], "secret plan");
    // PROFILE §16: `"tool_use_id":ID|null`, written as null for an event of no tool.
    assert_eq!(req.get("tool_use_id"), Some(&Value::Null));
    sim.send(&answer(
        &id,
        json!({"decision":"block","reason":"not allowed"}),
    ));
    assert!(sim.requests.is_empty());
    let r = sim.last_of("result");
    // PROFILE §8: `prompt_uuid` only when the record had a `uuid` (this one had none; the
    // replay form's minted one is not the host's).
    assert!(r.get("prompt_uuid").is_none(), "{r}");
    assert_eq!(r["subtype"], "error_during_execution");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 0);
    assert_eq!(
        r["errors"],
        json!(["input error: blocked by UserPromptSubmit hook: not allowed"])
    );
    assert_eq!(sim.s.state(), Some("idle"));
    // A record with its own `uuid`: the blocked turn's result names it.
    let given = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
    sim.send(&user_with("blocked too", json!({ "uuid": given })));
    let id = callbacks(&sim)[1].0.clone();
    sim.send(&answer(&id, json!({"decision":"block","reason":"again"})));
    assert_eq!(sim.last_of("result")["prompt_uuid"], given);
    // The next prompt: a context this time.
    sim.send(&user("hello"));
    let id = callbacks(&sim)[2].0.clone();
    sim.send(&answer(
        &id,
        json!({"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"be brief"}}),
    ));
    assert_eq!(sim.last_of("result")["result"], "echo: hello\nbe brief");
    // onFailure block.
    let hooks = json!({"UserPromptSubmit":[{"hookCallbackIds":["hook_0"],"onFailure":"block"}]});
    let mut sim = with_hooks(sdk_config(), hooks);
    sim.send(&user("x"));
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer_error(&id, "boom"));
    assert_eq!(
        sim.last_of("result")["errors"],
        json!(["input error: blocked by UserPromptSubmit hook: hook failed"])
    );
}

/// PROFILE §16 Stop: after the last model request, before the result; `block` starts one
/// more request with the reason as a user message, at most once per turn (the second Stop
/// call says `stop_hook_active` and its block is ignored); `onFailure: block` is ignored.
#[test]
fn stop_block_runs_one_more_request_once() {
    let hooks = json!({"Stop":[{"hookCallbackIds":["hook_0"],"onFailure":"block"}]});
    let mut sim = with_hooks(sdk_config(), hooks);
    sim.send(&user("first"));
    assert_eq!(sim.requests.len(), 1);
    assert!(sim.of("result").is_empty(), "the result waits for Stop");
    let (id, _, req) = callbacks(&sim)[0].clone();
    assert_eq!(req["input"]["hook_event_name"], "Stop");
    assert_eq!(req["input"]["stop_hook_active"], false);
    assert_eq!(req["input"]["last_assistant_message"], "echo: first");
    sim.send(&answer(
        &id,
        json!({"decision":"block","reason":"keep going"}),
    ));
    assert_eq!(sim.requests.len(), 2);
    let (id, _, req) = callbacks(&sim)[1].clone();
    assert_eq!(req["input"]["stop_hook_active"], true);
    sim.send(&answer(&id, json!({"decision":"block","reason":"again"})));
    assert_eq!(sim.requests.len(), 2, "at most once per turn");
    let r = sim.last_of("result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["result"], "echo: keep going");
    assert_eq!(r["num_turns"], 2);
    // A failure with block is ignored for Stop.
    sim.send(&user("second"));
    let id = callbacks(&sim)[2].0.clone();
    sim.send(&answer_error(&id, "boom"));
    assert_eq!(sim.last_of("result")["result"], "echo: second");
}

/// PROFILE §16 `continue: false`: the turn ends before its next model request with a success
/// result whose `result` is `stopReason` (the tool use is still settled and paired).
#[test]
fn continue_false_ends_the_turn_before_the_next_request() {
    let mut sim = with_hooks(sdk_config(), pre(Value::Null, json!({})));
    bash_then_done(&mut sim);
    sim.send(&user("go"));
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(
        &id,
        json!({"continue":false,"stopReason":"halted by hook","hookSpecificOutput":{"permissionDecision":"allow"}}),
    ));
    assert_eq!(sim.run_tools(), ["toolu_1"]);
    assert_eq!(sim.requests.len(), 1);
    let r = sim.last_of("result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["result"], "halted by hook");
    assert_eq!(tool_result(&sim, "toolu_1")["content"], "ran Bash");
}

/// A Stop block's reason is stored for resume (PROFILE §11), but never a credential (the
/// store keeps none): a reason holding credential material reaches the model, is not stored,
/// and a stderr line says so without quoting it. A reason too long for one
/// record is stored cut with the output-cut marker, and the model gets that same text.
#[test]
fn a_stop_reason_is_stored_cut_to_fit_and_never_with_a_credential() {
    let hooks = json!({"Stop":[{"hookCallbackIds":["hook_0"]}]});
    let mut c = sdk_config();
    c.credentials = agentx_wire::encode::CredentialSet::new(["sk-live-0123456789"]).unwrap();
    let mut sim = with_hooks(c, hooks.clone());
    sim.send(&user("first"));
    let id = callbacks(&sim)[0].0.clone();
    sim.send(&answer(
        &id,
        json!({"decision":"block","reason":"use sk-live-0123456789"}),
    ));
    // (The echo model then repeats the reason, and the output's own check refuses that
    // reply; what matters here is the store.)
    assert!(
        sim.diagnostics
            .iter()
            .any(|d| d.contains("is not stored") && !d.contains("sk-live")),
        "{:?}",
        sim.diagnostics
    );
    assert!(sim.persisted().iter().all(|l| !l.contains("sk-live")));

    let mut c = sdk_config();
    c.max_record_len = 4096;
    let mut sim = with_hooks(c, hooks);
    sim.send(&user("first"));
    let id = callbacks(&sim)[0].0.clone();
    let long = "r".repeat(10_000);
    sim.send(&answer(&id, json!({"decision":"block","reason":long})));
    let id = callbacks(&sim)[1].0.clone();
    sim.send(&answer(&id, json!({})));
    assert_eq!(sim.last_of("result")["subtype"], "success");
    let stored: Vec<String> = sim
        .persisted()
        .into_iter()
        .filter(|l| l.starts_with("{\"type\":\"user\"") && l.contains("[agentx: output cut: "))
        .collect();
    assert_eq!(stored.len(), 1, "the cut reason is stored once");
    assert!(stored[0].len() <= 4096, "{}", stored[0].len());
}
