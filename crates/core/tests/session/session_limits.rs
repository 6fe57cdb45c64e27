//! The SDK profile's turn limits, tool options and `stop_task` through the session core on a
//! virtual clock (PROFILE §15, §16 "Result subtypes"): `--max-turns` ends a turn
//! `error_max_turns` after the N-th request's tool results; `--max-budget-usd` stops the next
//! request once the known cost since the process started reaches the budget (unknown costs
//! never count, WIRE-012); `--tools` / `--allowedTools` / `--disallowedTools`; `stop_task`.

use crate::session_sim;

use agentx_core::model::{ModelEvent, TaskStatus};
use agentx_core::session::tool_rules::{offered, parse_rules, ToolRules};
use agentx_core::session::{default_tools, Action, Budget, Profile, SessionConfig, TurnLimits};
use serde_json::json;
use session_sim::*;

const READ: &str = r#"{"file_path":"a.txt"}"#;

fn with_limits(max_turns: Option<u32>, budget: Option<&str>) -> SessionConfig {
    let mut c = config();
    c.limits = TurnLimits {
        max_turns,
        max_budget: budget.map(|b| Budget::parse(b).expect("a valid budget")),
    };
    c
}

/// A tool reply whose request costs `cost`.
fn priced_tool_reply(id: &str, tool_use_id: &str, cost: Option<f64>) -> Script {
    let mut s = tool_reply(id, &[(tool_use_id, "Read", READ)]);
    if let Some(Step::Event(ModelEvent::MessageStop { cost: c, .. })) = s.last_mut() {
        *c = cost;
    }
    s
}

fn starts(sim: &Sim) -> usize {
    sim.actions
        .iter()
        .filter(|a| matches!(a, Action::StartModel(_)))
        .count()
}

// ---------------------------------------------------------------- --max-turns

/// `--max-turns 1` with a tool loop: the first request's tool runs and its `tool_result` is
/// written, the second request is never made, and the result is `error_max_turns`.
#[test]
fn max_turns_one_with_a_tool_loop() {
    let mut sim = Sim::new(with_limits(Some(1), None));
    sim.script(tool_reply("msg_1", &[("toolu_1", "Read", READ)]));
    sim.script(text_reply("msg_2", "never", None));
    sim.send(&user("loop"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:tool_use:toolu_1",
            "tool_result:toolu_1:ran Read",
            "result:error_max_turns",
            "state:idle"
        ]
    );
    assert_eq!(starts(&sim), 1, "the request beyond the first is not made");
    let r = sim.last_of("result");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["errors"], json!(["max turns reached: 1"]));
    assert_eq!(r["stop_reason"], "tool_use");
    assert!(r.get("result").is_none());
    // The limit is per turn: the next turn makes its request.
    sim.scripts.clear();
    let before = sim.out.len();
    sim.send(&user("again"));
    assert_eq!(
        sim.labels_from(before),
        [
            "state:running",
            "assistant:text:echo: again",
            "result:success",
            "state:idle"
        ]
    );
}

/// At the edge: N requests that end without tools are a success; N tool requests end with
/// `error_max_turns` and `num_turns` N.
#[test]
fn max_turns_at_its_edge() {
    let mut sim = Sim::new(with_limits(Some(2), None));
    sim.script(tool_reply("msg_1", &[("toolu_1", "Read", READ)]));
    sim.script(text_reply("msg_2", "done in two", None));
    sim.send(&user("two"));
    let r = sim.last_of("result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["num_turns"], 2);
    assert_eq!(r["result"], "done in two");

    sim.script(tool_reply("msg_3", &[("toolu_3", "Read", READ)]));
    sim.script(tool_reply(
        "msg_4",
        &[("toolu_4a", "Read", READ), ("toolu_4b", "Read", READ)],
    ));
    sim.script(text_reply("msg_5", "never", None));
    let before = sim.out.len();
    let made = starts(&sim);
    sim.send(&user("loop"));
    assert_eq!(
        sim.labels_from(before),
        [
            "state:running",
            "assistant:tool_use:toolu_3",
            "tool_result:toolu_3:ran Read",
            "assistant:tool_use:toolu_4a",
            "assistant:tool_use:toolu_4b",
            "tool_result:toolu_4a:ran Read",
            "tool_result:toolu_4b:ran Read",
            "result:error_max_turns",
            "state:idle"
        ]
    );
    assert_eq!(starts(&sim) - made, 2);
    let r = sim.last_of("result");
    assert_eq!(r["num_turns"], 2);
    assert_eq!(r["errors"], json!(["max turns reached: 2"]));
}

/// The limit's result is held for the turn's background task (WIRE-004) like any result.
#[test]
fn max_turns_result_waits_for_the_task() {
    let mut sim = Sim::new(with_limits(Some(1), None));
    let mut s = vec![ev(ModelEvent::TaskStarted {
        task_id: "t1".into(),
        description: "bg".into(),
    })];
    s.extend(tool_reply("msg_1", &[("toolu_1", "Read", READ)]));
    s.push(Step::Pause);
    s.push(ev(ModelEvent::TaskNotification {
        task_id: "t1".into(),
        status: TaskStatus::Completed,
    }));
    sim.script(s);
    sim.send(&user("go"));
    assert_eq!(sim.labels().last().unwrap(), "tool_result:toolu_1:ran Read");
    let before = sim.out.len();
    sim.resume_model();
    assert_eq!(
        sim.labels_from(before),
        ["task_notification", "result:error_max_turns", "state:idle"]
    );
}

/// A denied tool use still gets its `tool_result` before the limit's result.
#[test]
fn max_turns_after_a_denial() {
    let mut sim = Sim::new(with_limits(Some(1), None));
    sim.script(tool_reply(
        "msg_1",
        &[("toolu_1", "Bash", r#"{"command":"ls"}"#)],
    ));
    sim.send(&user("ask"));
    let (req, _) = sim.permission_requests()[0].clone();
    sim.send(&deny(&req, "no"));
    let labels = sim.labels();
    let n = labels.len();
    assert_eq!(
        labels[n - 3..],
        [
            "tool_result:toolu_1:no",
            "result:error_max_turns",
            "state:idle"
        ]
    );
    assert_eq!(
        sim.last_of("result")["permission_denials"][0]["tool_use_id"],
        "toolu_1"
    );
}

// ---------------------------------------------------------------- --max-budget-usd

/// The request that reaches the budget completes; a turn whose request asked for no tools
/// ends normally; every later turn ends `error_max_budget_usd` with no request (`num_turns`
/// 0). The budget counts across turns (from the process's start).
#[test]
fn budget_reached_by_a_text_reply_then_later_turns_make_no_request() {
    let mut sim = Sim::new(with_limits(None, Some("0.5")));
    sim.script(text_reply("msg_1", "one", Some(0.25)));
    sim.script(text_reply("msg_2", "two", Some(0.25)));
    sim.send(&user("a"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
    sim.send(&user("b"));
    let r = sim.last_of("result");
    assert_eq!(
        r["subtype"], "success",
        "the request that reaches it completes"
    );
    assert_eq!(r["total_cost_usd"], 0.25);
    let made = starts(&sim);
    assert_eq!(made, 2);
    for prompt in ["c", "d"] {
        let before = sim.out.len();
        sim.send(&user(prompt));
        assert_eq!(
            sim.labels_from(before),
            ["state:running", "result:error_max_budget_usd", "state:idle"]
        );
        let r = sim.last_of("result");
        assert_eq!(r["is_error"], true);
        assert_eq!(r["num_turns"], 0);
        assert_eq!(r["errors"], json!(["budget reached: 0.5 USD"]));
        assert_eq!(r["total_cost_usd"], 0.0, "no request: a known zero");
    }
    assert_eq!(starts(&sim), made, "no request after the budget");
}

/// Just below the budget the next turn still runs.
#[test]
fn budget_just_below_is_not_reached() {
    let mut sim = Sim::new(with_limits(None, Some("0.5")));
    sim.script(text_reply("msg_1", "one", Some(0.499_999)));
    sim.send(&user("a"));
    sim.send(&user("b"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
    assert_eq!(starts(&sim), 2);
    // The second (echo) request had no price: still below, so a third runs too.
    sim.send(&user("c"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
    assert_eq!(starts(&sim), 3);
}

/// A request that reaches the budget and asked for tools: the tools run, their results are
/// written, then `error_max_budget_usd`; the follow-up request is not made.
#[test]
fn budget_reached_by_a_tool_request() {
    let mut sim = Sim::new(with_limits(None, Some("1")));
    sim.script(priced_tool_reply("msg_1", "toolu_1", Some(1.0)));
    sim.script(text_reply("msg_2", "never", None));
    sim.send(&user("spend"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:tool_use:toolu_1",
            "tool_result:toolu_1:ran Read",
            "result:error_max_budget_usd",
            "state:idle"
        ]
    );
    assert_eq!(starts(&sim), 1);
    let r = sim.last_of("result");
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["errors"], json!(["budget reached: 1 USD"]));
    assert_eq!(r["total_cost_usd"], 1.0);
}

/// An unknown cost (`null`, WIRE-012) never counts toward the budget.
#[test]
fn unknown_cost_never_counts() {
    let mut sim = Sim::new(with_limits(None, Some("0.01")));
    for i in 0..4 {
        sim.script(priced_tool_reply(
            &format!("msg_{i}"),
            &format!("toolu_{i}"),
            None,
        ));
    }
    sim.script(text_reply("msg_end", "end", None));
    sim.send(&user("free"));
    let r = sim.last_of("result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["num_turns"], 5);
    assert_eq!(r["total_cost_usd"], json!(null));
}

/// A zero budget is reached before the first request.
#[test]
fn zero_budget_makes_no_request() {
    let mut sim = Sim::new(with_limits(None, Some("0")));
    sim.send(&user("hi"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "result:error_max_budget_usd",
            "state:idle"
        ]
    );
    assert_eq!(starts(&sim), 0);
    assert_eq!(
        sim.last_of("result")["errors"],
        json!(["budget reached: 0 USD"])
    );
}

/// With both limits, `--max-turns` is named when both stop the same request.
#[test]
fn max_turns_is_named_before_the_budget() {
    let mut sim = Sim::new(with_limits(Some(1), Some("0.1")));
    sim.script(priced_tool_reply("msg_1", "toolu_1", Some(0.2)));
    sim.send(&user("both"));
    assert_eq!(sim.last_of("result")["subtype"], "error_max_turns");
    // The next turn: the budget was reached, so no request.
    sim.send(&user("next"));
    assert_eq!(sim.last_of("result")["subtype"], "error_max_budget_usd");
    assert_eq!(starts(&sim), 1);
}

/// The budget's text grammar: finite, not negative, a plain decimal.
#[test]
fn budget_values() {
    for ok in ["0", "0.05", "1", "1e-3", "10.50"] {
        assert_eq!(Budget::parse(ok).unwrap().text, ok, "{ok}");
    }
    for bad in [
        "", "-1", "-0.5", "inf", "NaN", "+1", "1,5", "0x10", "1e400", " ",
    ] {
        assert!(Budget::parse(bad).is_none(), "{bad:?}");
    }
}

/// The limits leave the standalone profile alone: without them a long tool loop runs on.
#[test]
fn no_limits_no_limit_results() {
    let mut sim = Sim::local();
    for i in 0..6 {
        sim.script(priced_tool_reply(
            &format!("m{i}"),
            &format!("t{i}"),
            Some(5.0),
        ));
    }
    sim.script(text_reply("end", "end", Some(5.0)));
    sim.send(&user("spend"));
    let r = sim.last_of("result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["num_turns"], 7);
    assert_eq!(r["total_cost_usd"], 35.0);
}

// ---------------------------------------------------------------- tools

fn with_tools(tools: Option<&[&str]>, allowed: &str, disallowed: &str) -> SessionConfig {
    let mut c = config();
    let rules = ToolRules {
        allowed: parse_rules(allowed).unwrap(),
        disallowed: parse_rules(disallowed).unwrap(),
    };
    let list: Option<Vec<String>> = tools.map(|t| t.iter().map(|s| s.to_string()).collect());
    let (offered, _) = offered(default_tools(), list.as_deref(), &rules.disallowed);
    c.tools = offered;
    c.tool_rules = rules;
    c
}

/// `--tools Read`: system/init and the model's tool list hold only Read; a call of another
/// tool is an unknown tool (an error `tool_result`, no prompt).
#[test]
fn tools_narrow_init_and_the_model_list() {
    let mut sim = Sim::new(with_tools(Some(&["Read"]), "", ""));
    sim.script(tool_reply(
        "msg_1",
        &[("toolu_1", "Bash", r#"{"command":"ls"}"#)],
    ));
    sim.send(&user("x"));
    assert_eq!(sim.out[0]["tools"], json!(["Read"]));
    let names: Vec<&str> = sim.requests[0]
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(names, ["Read"]);
    assert!(sim.permission_requests().is_empty());
    assert!(sim
        .labels()
        .contains(&"tool_result:toolu_1:unknown tool Bash".to_string()));
}

/// `--tools ""` offers none.
#[test]
fn empty_tools_offer_none() {
    let mut sim = Sim::new(with_tools(Some(&[]), "", ""));
    sim.send(&user("x"));
    assert_eq!(sim.out[0]["tools"], json!([]));
    assert!(sim.requests[0].tools.is_empty());
}

/// `--allowedTools Bash(ls:*)`: `ls -l` runs without a prompt; `ls; rm x` is asked.
#[test]
fn allowed_tools_skip_the_prompt() {
    let mut sim = Sim::new(with_tools(None, "Bash(ls:*)", ""));
    sim.script(tool_reply(
        "msg_1",
        &[
            ("toolu_1", "Bash", r#"{"command":"ls -l"}"#),
            ("toolu_2", "Bash", r#"{"command":"ls; rm x"}"#),
        ],
    ));
    sim.send(&user("x"));
    assert_eq!(sim.run_tools(), ["toolu_1"]);
    let asked: Vec<String> = sim
        .permission_requests()
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    assert_eq!(asked, ["toolu_2"]);
}

/// `--disallowedTools Write,Bash(rm:*)`: Write leaves the tool list; `rm` is denied with a
/// `permission_denials` entry even in bypass mode.
#[test]
fn disallowed_tools_remove_and_deny() {
    let mut c = with_tools(None, "", "Write,Bash(rm:*)");
    c.permission_mode = agentx_wire::wire::permission::PermissionMode::BypassPermissions;
    let mut sim = Sim::new(c);
    sim.script(tool_reply(
        "msg_1",
        &[
            ("toolu_1", "Bash", r#"{"command":"cd x && rm -rf y"}"#),
            ("toolu_2", "Bash", r#"{"command":"ls"}"#),
        ],
    ));
    sim.send(&user("x"));
    assert_eq!(sim.out[0]["tools"], json!(["Read", "Bash"]));
    assert_eq!(sim.run_tools(), ["toolu_2"]);
    let r = sim.last_of("result");
    assert_eq!(r["permission_denials"][0]["tool_use_id"], "toolu_1");
    assert!(sim
        .labels()
        .contains(&"tool_result:toolu_1:denied by --disallowedTools".to_string()));
}

/// `--add-dir`: a Read there needs no prompt.
#[test]
fn add_dir_reads_need_no_prompt() {
    let mut c = config();
    c.add_dirs = vec!["/data/extra".into()];
    let mut sim = Sim::new(c);
    sim.script(tool_reply(
        "msg_1",
        &[
            ("toolu_1", "Read", r#"{"file_path":"/data/extra/f"}"#),
            ("toolu_2", "Read", r#"{"file_path":"/data/other/f"}"#),
        ],
    ));
    sim.send(&user("x"));
    assert_eq!(sim.run_tools(), ["toolu_1"]);
    assert_eq!(sim.permission_requests().len(), 1);
}

// ---------------------------------------------------------------- stop_task

fn task_turn(sim: &mut Sim) {
    let mut s = vec![ev(ModelEvent::TaskStarted {
        task_id: "t1".into(),
        description: "bg".into(),
    })];
    s.extend(text_reply("msg_t", "started", None));
    s.push(Step::Pause);
    s.push(ev(ModelEvent::TaskProgress {
        task_id: "t1".into(),
        step: 1,
    }));
    s.push(ev(ModelEvent::TaskNotification {
        task_id: "t1".into(),
        status: TaskStatus::Completed,
    }));
    sim.script(s);
    sim.send(&user("go"));
}

/// `stop_task` (installed in the SDK profile): the task ends `stopped` (its notification
/// before the success), the held result follows, and the task's later events are ignored.
#[test]
fn stop_task_stops_the_named_task() {
    let mut c = config();
    c.profile = Profile::Sdk;
    let mut sim = Sim::new(c);
    task_turn(&mut sim);
    let before = sim.out.len();
    sim.send(&control(
        "st1",
        json!({"subtype":"stop_task","task_id":"nope"}),
    ));
    assert_eq!(sim.labels_from(before), ["control_response:error:st1"]);
    assert_eq!(sim.last()["response"]["error"], "no task nope");
    let before = sim.out.len();
    sim.send(&control(
        "st2",
        json!({"subtype":"stop_task","task_id":"t1"}),
    ));
    assert_eq!(
        sim.labels_from(before),
        [
            "task_notification",
            "control_response:success:st2",
            "result:success",
            "state:idle"
        ]
    );
    assert_eq!(sim.out[before]["status"], "stopped");
    assert_eq!(sim.out[before]["task_id"], "t1");
    assert!(sim.out[before + 1]["response"].get("response").is_none());
    // The model's later events of the stopped task change nothing.
    let before = sim.out.len();
    sim.resume_model();
    assert_eq!(sim.out.len(), before);
    // A finished task is no task of the turn.
    sim.send(&control(
        "st3",
        json!({"subtype":"stop_task","task_id":"t1"}),
    ));
    assert_eq!(sim.last()["response"]["error"], "no task t1");
}

/// The error echoes at most 64 bytes of the id (PROFILE §5).
#[test]
fn stop_task_error_echoes_at_most_64_bytes() {
    let mut c = config();
    c.profile = Profile::Sdk;
    let mut sim = Sim::new(c);
    let long = "x".repeat(100);
    sim.send(&control(
        "st",
        json!({"subtype":"stop_task","task_id":long}),
    ));
    assert_eq!(
        sim.last()["response"]["error"],
        format!("no task {}", "x".repeat(64))
    );
}

/// In the standalone profile `stop_task` is an unsupported control request (PROFILE §8).
#[test]
fn stop_task_is_not_installed_in_the_standalone_profile() {
    let mut sim = Sim::local();
    task_turn(&mut sim);
    sim.send(&control(
        "st",
        json!({"subtype":"stop_task","task_id":"t1"}),
    ));
    assert_eq!(
        sim.last()["response"]["error"],
        "unsupported control request \"stop_task\""
    );
    sim.resume_model();
    assert_eq!(sim.last_of("result")["subtype"], "success");
    let n = sim
        .of("system")
        .iter()
        .filter(|v| v["subtype"] == "task_notification")
        .count();
    assert_eq!(n, 1);
    assert_eq!(
        sim.of("system")
            .iter()
            .find(|v| v["subtype"] == "task_notification")
            .unwrap()["status"],
        "completed"
    );
}
