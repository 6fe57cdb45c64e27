//! Turns through the session core on a virtual clock (PROFILE §8): the echo turn, the
//! record order and payloads, priorities, replay, the input-error result.

use crate::session_sim;

use agentx_core::model::{ModelEvent, TaskStatus};
use serde_json::json;
use session_sim::*;

/// PROFILE §8: system/init once right before the first turn's first record, running,
/// one assistant record per block, result, idle.
#[test]
fn echo_turn_exact_records() {
    let mut sim = Sim::local();
    sim.send(&user("hi"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:text:echo: hi",
            "result:success",
            "state:idle"
        ]
    );
    let init = &sim.out[0];
    assert_eq!(init["session_id"], SID);
    assert_eq!(init["model"], "agentx-echo");
    assert_eq!(init["provider"], "local");
    assert_eq!(init["provider_type"], "scripted");
    assert_eq!(init["apiKeySource"], "user");
    assert_eq!(init["permissionMode"], "default");
    assert_eq!(init["cwd"], CWD);
    assert_eq!(init["tools"], json!(["Read", "Write", "Bash"]));
    assert_eq!(init["mcp_servers"], json!([]));
    assert!(init["input_capabilities"]["attachments"].is_object());
    let a = &sim.out[2];
    assert_eq!(a["message"]["id"], "msg_1_0");
    assert_eq!(a["message"]["role"], "assistant");
    assert_eq!(a["message"]["model"], "agentx-echo");
    assert_eq!(a["parent_tool_use_id"], json!(null));
    let r = &sim.out[3];
    assert_eq!(r["result"], "echo: hi");
    assert_eq!(r["is_error"], false);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["stop_reason"], "end_turn");
    assert_eq!(
        r["total_cost_usd"],
        json!(null),
        "WIRE-012: unknown cost is null"
    );
    assert_eq!(r["modelUsage"]["agentx-echo"]["costUSD"], json!(null));
    assert_eq!(r["usage"]["input_tokens"], 3);
    assert_eq!(r["usage"]["output_tokens"], 4);
    assert_eq!(r["permission_denials"], json!([]));
    // Every record carries the session id and a distinct uuid.
    let uuids: std::collections::HashSet<_> = sim.out.iter().map(|v| v["uuid"].clone()).collect();
    assert_eq!(uuids.len(), sim.out.len());
    assert!(sim.out.iter().all(|v| v["session_id"] == SID));
    // A second turn: no second system/init.
    sim.send(&user("again"));
    assert_eq!(
        sim.of("system")
            .iter()
            .filter(|v| v["subtype"] == "init")
            .count(),
        1
    );
    assert_eq!(sim.last()["state"], "idle");
}

/// Acceptance scenario 9 on the virtual clock: task progress, notification, result, suggestion
/// and idle in exactly that order. The message ends while its finite background task still
/// runs, so the result is held (WIRE-004) until the task's terminal event; the suggestion
/// follows the result, and idle comes last.
#[test]
fn scenario_9_task_progress_notification_result_suggestion_idle() {
    let mut sim = Sim::local();
    let mut script = vec![
        ev(ModelEvent::TaskStarted {
            task_id: "t1".into(),
            description: "background".into(),
        }),
        ev(ModelEvent::Suggestion {
            text: "and next?".into(),
        }),
    ];
    script.extend(text_reply("msg_t", "started", None));
    script.push(Step::Pause);
    script.push(ev(ModelEvent::TaskProgress {
        task_id: "t1".into(),
        step: 1,
    }));
    script.push(ev(ModelEvent::TaskNotification {
        task_id: "t1".into(),
        status: TaskStatus::Completed,
    }));
    sim.script(script);
    sim.send(&user("go"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "task_started",
            "assistant:text:started"
        ],
        "the result is held while the task runs (WIRE-004)"
    );
    let before = sim.out.len();
    sim.resume_model();
    assert_eq!(
        sim.labels_from(before),
        [
            "task_progress",
            "task_notification",
            "result:success",
            "prompt_suggestion",
            "state:idle"
        ]
    );
    let progress = &sim.out[before];
    assert_eq!(progress["task_id"], "t1");
    let done = &sim.out[before + 1];
    assert_eq!(done["task_id"], "t1");
    assert_eq!(done["status"], "completed");
    assert_eq!(sim.out[before + 2]["result"], "started");
    assert_eq!(sim.out[before + 3]["suggestion"], "and next?");
}

/// The replay form's bound at its edge (PROFILE §8 Replay, §11): a user line whose replay form
/// (the line with `session_id` and `isReplay` added: 68 bytes here) is exactly one output line
/// of 8,388,608 bytes is accepted and echoed; one byte longer is refused with an input-error
/// result, and the session goes on.
#[test]
fn replay_form_at_the_output_line_limit() {
    const MAX: usize = 8 * 1024 * 1024;
    const STAMPED: usize = r#","session_id":""#.len() + 36 + 1 + r#","isReplay":true"#.len();
    let line = |len: usize, uuid: &str| {
        let head = r#"{"type":"user","message":""#;
        let tail = format!(r#"","parent_tool_use_id":null,"uuid":"{uuid}"}}"#);
        let mut s = String::from(head);
        s.push_str(&"a".repeat(len - head.len() - tail.len()));
        s.push_str(&tail);
        assert_eq!(s.len(), len);
        s
    };
    let mut c = config();
    c.replay_user_messages = true;
    let mut sim = Sim::new(c);
    sim.script(text_reply("msg_a", "ok", None));
    sim.script(text_reply("msg_b", "ok", None)); // for the last prompt: the refused one never runs
    let (u1, u2) = (
        "00000000-0000-4000-8000-0000000000b1",
        "00000000-0000-4000-8000-0000000000b2",
    );
    sim.send(&line(MAX - STAMPED, u1));
    assert_eq!(
        sim.labels(),
        [
            "user:replay",
            "init",
            "state:running",
            "assistant:text:ok",
            "result:success",
            "state:idle"
        ]
    );
    assert_eq!(sim.out[0]["uuid"], u1);
    let before = sim.out.len();
    sim.send(&line(MAX - STAMPED + 1, u2));
    assert_eq!(sim.labels_from(before), ["result:error_during_execution"]);
    let r = &sim.out[before];
    assert_eq!(
        r["errors"],
        json!(["input error: the record's replay form would exceed the output line limit"])
    );
    assert_eq!(r["prompt_uuid"], u2);
    let before = sim.out.len();
    sim.send(&user("still here"));
    assert_eq!(
        sim.labels_from(before),
        [
            "user:replay",
            "state:running",
            "assistant:text:ok",
            "result:success",
            "state:idle"
        ]
    );
}
