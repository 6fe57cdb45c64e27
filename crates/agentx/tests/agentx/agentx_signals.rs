//! Black-box: PROFILE §8 Signals. SIGTERM (and SIGHUP) during a turn: the turn is interrupted
//! as an `interrupt` would (no acknowledgement; the running tool gets `interrupted`), its
//! result is written and stored, each queued user record gets the input-error result
//! `input error: agentx is shutting down` (neither stored), and agentx exits 0 within 2 s.

use std::time::{Duration, Instant};

use crate::harness::*;
use rustix::process::{kill_process, Pid, Signal};
use serde_json::{json, Value};

fn signal_during_a_tool(sig: Signal, tag: &str) {
    let home = TempDir::new(tag);
    let mut a = Agentx::session(
        home.path(),
        &[
            "--permission-mode",
            "bypassPermissions",
            "--replay-user-messages",
        ],
    );
    a.say("!tool Bash {\"command\":\"sleep 30\"}");
    a.until(|v| label(v) == "assistant:tool_use:Bash");
    let queued = "7d0c4a52-0c55-4f7e-9d0a-3f1e0b7c9a11";
    a.send(
        &json!({"type":"user","uuid":queued,"parent_tool_use_id":null,
        "message":{"role":"user","content":"!say never"}}),
    );
    // The queued record was accepted (its replay echo), so the signal finds it queued.
    a.until(|v| v["type"] == "user" && v["uuid"] == queued);
    let sid = a.seen[0]["session_id"].as_str().unwrap().to_owned();

    let sent = Instant::now();
    kill_process(Pid::from_raw(a.pid() as i32).unwrap(), sig).unwrap();
    let done = a.finish();
    let took = sent.elapsed();
    assert_eq!(done.status, Some(0), "stderr: {}", done.stderr);
    assert!(took < Duration::from_secs(2), "exit took {took:?}");
    assert_eq!(
        labels(&done.rest),
        [
            "user:tool_result:error",
            "result:error_during_execution",
            "system/session_state_changed:idle",
            "result:error_during_execution",
        ]
    );
    assert_eq!(
        done.rest[0]["message"]["content"][0]["content"],
        "interrupted"
    );
    let refused: &Value = &done.rest[3];
    assert_eq!(
        refused["errors"],
        json!(["input error: agentx is shutting down"])
    );
    assert_eq!(refused["prompt_uuid"], queued);
    assert_eq!(refused["num_turns"], 0);
    done.assert_valid_output();

    // The interrupted turn is stored; the refused record and its result are not.
    let stored = std::fs::read_to_string(
        home.path()
            .join("sessions")
            .join(&sid)
            .join("transcript.ndjson"),
    )
    .unwrap();
    assert!(stored.contains("\"content\":\"interrupted\""), "{stored}");
    assert_eq!(stored.matches("\"type\":\"result\"").count(), 1, "{stored}");
    assert!(!stored.contains(queued), "{stored}");
    assert!(!stored.contains("shutting down"), "{stored}");
}

#[test]
fn sigterm_during_a_tool_ends_the_turn_refuses_the_queue_and_exits_within_2_s() {
    signal_during_a_tool(Signal::TERM, "sigterm-tool");
}

#[test]
fn sighup_acts_as_sigterm() {
    signal_during_a_tool(Signal::HUP, "sighup-tool");
}
