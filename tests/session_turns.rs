//! Turns through the session core on a virtual clock (PROFILE §8): the echo turn, the
//! record order and payloads, priorities, replay, the input-error result.

mod session_sim;

use agentx_wire::model::{ModelEvent, TaskStatus};
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
