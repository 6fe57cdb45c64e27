//! Black-box: the real `agentx` binary in stream-json mode on the built-in model
//! (PROFILE §8, §9, §10, §11). Every test checks all of its output with
//! `agentx-wire check --direction output`.

use crate::harness;

use harness::*;
use serde_json::json;

#[test]
fn echo_turn_exact_records() {
    let home = TempDir::new("echo");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("hello world");
    let turn = a.turn();
    assert_eq!(
        labels(&turn),
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant:text:echo: hello world",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    let init = &turn[0];
    assert_eq!(init["provider"], "local");
    assert_eq!(init["model"], "agentx-echo");
    // PROFILE §17's order.
    assert_eq!(
        init["tools"],
        json!(["Read", "Write", "Bash", "Edit", "Glob", "Grep", "TodoWrite"])
    );
    let sid = init["session_id"].clone();
    assert!(turn.iter().all(|r| r["session_id"] == sid));
    let result = &turn[3];
    assert_eq!(result["result"], "echo: hello world");
    assert_eq!(result["num_turns"], 1);
    assert_eq!(result["stop_reason"], "end_turn");
    assert_eq!(result["total_cost_usd"], json!(null));
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert!(done.rest.is_empty());
    done.assert_valid_output();
}

#[test]
fn tool_allowed_by_host_runs_and_denied_is_an_error_result() {
    let home = TempDir::new("hostperm");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo ran-it\"}\n!say after");
    let upto = a.until(is_permission_request);
    assert_eq!(
        labels(&upto),
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant:tool_use:Bash",
            "system/session_state_changed:requires_action",
            "control_request:can_use_tool",
        ]
    );
    let req = upto.last().unwrap();
    assert_eq!(req["request"]["tool_name"], "Bash");
    assert_eq!(req["request"]["description"], "Bash: echo ran-it");
    a.send(&allow(req["request_id"].as_str().unwrap()));
    let rest = a.turn();
    assert_eq!(
        labels(&rest),
        [
            "system/session_state_changed:running",
            "user:tool_result:ok",
            "assistant:text:after",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(
        rest[1]["message"]["content"][0]["content"],
        "ran-it\nexit code: 0"
    );

    // Denied: a tool_result error with the message and a permission_denials entry.
    a.say("!tool Write {\"file_path\":\"x.txt\",\"content\":\"no\"}");
    let upto = a.until(is_permission_request);
    let req = upto.last().unwrap().clone();
    a.send(&deny(req["request_id"].as_str().unwrap(), "not today"));
    let rest = a.turn();
    let tr = rest
        .iter()
        .find(|r| label(r) == "user:tool_result:error")
        .unwrap();
    assert_eq!(tr["message"]["content"][0]["content"], "not today");
    let result = rest.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(
        result["permission_denials"],
        json!([{"tool_name":"Write","tool_use_id":req["request"]["tool_use_id"],"tool_input":{"file_path":"x.txt","content":"no"}}])
    );
    assert!(!home.path().join("x.txt").exists());
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

#[test]
fn scenario_11_interrupt_active_turn_then_input_stays_usable() {
    let home = TempDir::new("s11");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!say started\n!sleep 600000\n!say never");
    a.until(|v| label(v) == "assistant:text:started");
    a.send(&control("int-1", "interrupt"));
    let rest = a.turn();
    assert_eq!(
        labels(&rest),
        [
            "control_response:success",
            "result:error_during_execution",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(rest[0]["response"]["request_id"], "int-1");
    assert!(rest[0]["response"].get("response").is_none());
    assert_eq!(rest[1]["is_error"], true);
    a.say("still here");
    let t = a.turn();
    assert_eq!(labels(&t)[1], "assistant:text:echo: still here");
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

#[test]
fn sigint_interrupts_like_the_control() {
    let home = TempDir::new("sigint");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!say started\n!sleep 600000");
    a.until(|v| label(v) == "assistant:text:started");
    let pid = a.pid();
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let rest = a.turn();
    assert_eq!(
        labels(&rest),
        [
            "result:error_during_execution",
            "system/session_state_changed:idle"
        ]
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

#[test]
fn sigterm_is_input_eof() {
    let home = TempDir::new("sigterm");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("first");
    a.turn();
    std::process::Command::new("kill")
        .args(["-TERM", &a.pid().to_string()])
        .status()
        .unwrap();
    let status = a.child.wait().unwrap().code();
    assert_eq!(status, Some(0));
}

#[test]
fn scenario_16_cost_null_and_zero() {
    let home = TempDir::new("s16");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!cost null\n!say priced?");
    let t = a.turn();
    let r = t.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(r["total_cost_usd"], json!(null));
    assert_eq!(r["modelUsage"]["agentx-echo"]["costUSD"], json!(null));
    a.say("!cost 0\n!say free");
    let t = a.turn();
    let r = t.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(r["total_cost_usd"].as_f64(), Some(0.0));
    assert_eq!(
        r["modelUsage"]["agentx-echo"]["costUSD"].as_f64(),
        Some(0.0)
    );
    let done = a.finish();
    done.assert_valid_output();
}

#[test]
fn scenario_9_task_progress_notification_result_suggestion_idle() {
    let home = TempDir::new("s9");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!task t1 2 20\n!say working\n!suggest next step");
    let t = a.turn();
    let l: Vec<String> = labels(&t)
        .into_iter()
        .filter(|s| s != "system/init" && s != "system/session_state_changed:running")
        .collect();
    assert_eq!(
        l,
        [
            "system/task_started",
            "assistant:text:working",
            "system/task_progress",
            "system/task_progress",
            "system/task_notification",
            "result:success",
            "prompt_suggestion",
            "system/session_state_changed:idle",
        ]
    );
    let done = a.finish();
    done.assert_valid_output();
}

#[test]
fn priorities_now_next_later() {
    let home = TempDir::new("prio");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!say busy\n!sleep 600000");
    a.until(|v| label(v) == "assistant:text:busy");
    let mut later = user("later-1");
    later["priority"] = json!("later");
    let mut next = user("next-1");
    next["priority"] = json!("next");
    let mut now = user("now-1");
    now["priority"] = json!("now");
    a.send(&later);
    a.send(&next);
    a.send(&now);
    // `now` interrupts the sleeping turn and runs first, then next, then later.
    let mut texts = Vec::new();
    let mut results = 0;
    while results < 4 {
        let v = a.next().unwrap();
        if is_result(&v) {
            results += 1;
        }
        if v["type"] == "assistant" {
            texts.push(
                v["message"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
    }
    assert_eq!(texts, ["echo: now-1", "echo: next-1", "echo: later-1"]);
    let done = a.finish();
    done.assert_valid_output();
}

#[test]
fn replay_echoes_user_records_before_their_effects() {
    let home = TempDir::new("replay");
    let mut a = Agentx::session(home.path(), &["--replay-user-messages"]);
    let mut u = user("hi");
    u["uuid"] = json!("3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27");
    a.send(&u);
    let t = a.turn();
    assert_eq!(labels(&t)[0], "user");
    assert_eq!(t[0]["isReplay"], true);
    assert_eq!(t[0]["uuid"], "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27");
    assert_eq!(labels(&t)[1], "system/init");
    let done = a.finish();
    done.assert_valid_output();
}

#[test]
fn input_error_result_leaves_the_queue_usable() {
    let home = TempDir::new("inerr");
    let mut a = Agentx::session(home.path(), &[]);
    a.send_raw(b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"bogus\":1},\"parent_tool_use_id\":null,\"uuid\":\"3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27\"}\n");
    let r = a.until(is_result);
    let r = r.last().unwrap();
    assert_eq!(r["subtype"], "error_during_execution");
    assert_eq!(r["num_turns"], 0);
    assert_eq!(r["prompt_uuid"], "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27");
    assert!(r["errors"][0]
        .as_str()
        .unwrap()
        .starts_with("input error: "));
    a.say("fine");
    let t = a.turn();
    assert!(labels(&t).contains(&"assistant:text:echo: fine".to_string()));
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

#[test]
fn resume_after_restart_keeps_the_session_and_context() {
    let home = TempDir::new("resume");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("remember me");
    let t = a.turn();
    let sid = t[0]["session_id"].as_str().unwrap().to_string();
    let done = a.finish();
    assert_eq!(done.status, Some(0));

    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("!history");
    let t = b.turn();
    assert!(t.iter().all(|r| r["session_id"] == sid.as_str()));
    let r = t.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(r["result"], "history: 2 messages");
    let done = b.finish();
    done.assert_valid_output();

    // An unknown id: one line, status 1, stdout empty.
    let (status, out, err) = run_session(
        home.path(),
        &["--resume", "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"],
        b"",
    );
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    // Exactly that line (PROFILE §8): this home has no auth.json, and the built-in registry's
    // notice (PROFILE §3) is written only by a startup that succeeds.
    assert_eq!(
        err, "agentx: no session 3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27\n",
        "{err}"
    );
}

#[test]
fn read_and_write_tools_in_bypass_mode() {
    let home = TempDir::new("rw");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    a.say("!tool Write {\"file_path\":\"notes.txt\",\"content\":\"a\\nb\\n\"}\n!say wrote\n!tool Read {\"file_path\":\"notes.txt\"}\n!tool Grep {}");
    let t = a.turn();
    let results: Vec<&serde_json::Value> = t
        .iter()
        .filter(|r| label(r).starts_with("user:tool_result"))
        .collect();
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[0]["message"]["content"][0]["content"],
        format!(
            "wrote 4 bytes to {}",
            std::fs::canonicalize(home.path())
                .unwrap()
                .join("notes.txt")
                .display()
        )
    );
    assert_eq!(
        results[1]["message"]["content"][0]["content"],
        "     1\ta\n     2\tb\n"
    );
    assert_eq!(results[2]["message"]["content"][0]["is_error"], true);
    assert_eq!(
        std::fs::read_to_string(home.path().join("notes.txt")).unwrap(),
        "a\nb\n"
    );
    let done = a.finish();
    done.assert_valid_output();
}

/// A `user` line of exactly `len` bytes (LF excluded) with prompt UUID `uuid`: a legacy string
/// message padded with `a`.
fn user_line_of(len: usize, uuid: &str) -> Vec<u8> {
    let head = br#"{"type":"user","message":""#;
    let tail = format!(r#"","parent_tool_use_id":null,"uuid":"{uuid}"}}"#);
    let pad = len - head.len() - tail.len();
    let mut line = Vec::with_capacity(len + 1);
    line.extend_from_slice(head);
    line.resize(head.len() + pad, b'a');
    line.extend_from_slice(tail.as_bytes());
    assert_eq!(line.len(), len);
    line.push(b'\n');
    line
}

/// WIRE-020's byte bound through the binary, at its edge: while a turn runs, queued user
/// records may add up to 16 MiB of line bytes (LF excluded). One byte past is refused with an
/// input-error result naming the prompt; exactly at the bound is accepted (no result); the
/// active turn is not disturbed. A record at the 8 MiB line limit is valid input, but its replay
/// form (kept in the transcript, PROFILE §11) cannot fit one output line: it is refused as a
/// record error and the session goes on (before, it latched the encoder and ended the session).
#[test]
fn wire_020_queue_byte_bound_at_its_edge() {
    const MIB: usize = 1024 * 1024;
    const QUEUE_MAX: usize = 16 * MIB;
    let uuid = |n: u32| format!("00000000-0000-4000-8000-0000000000{n:02x}");
    let home = TempDir::new("qbytes");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!say started\n!sleep 600000");
    a.until(|v| label(v) == "assistant:text:started");
    // The line limit: a valid line whose replay form would not fit is refused, nothing else.
    a.send_raw(&user_line_of(8 * MIB, &uuid(0xa0)));
    let r = a.next().unwrap();
    assert_eq!(label(&r), "result:error_during_execution");
    assert_eq!(
        r["errors"],
        json!(["input error: the record's replay form would exceed the output line limit"])
    );
    assert_eq!(r["prompt_uuid"], uuid(0xa0));
    // 6 + 6 + (4 MiB - 101) queued: 101 bytes of room left.
    a.send_raw(&user_line_of(6 * MIB, &uuid(0xa1)));
    a.send_raw(&user_line_of(6 * MIB, &uuid(0xa2)));
    a.send_raw(&user_line_of(QUEUE_MAX - 12 * MIB - 101, &uuid(0xa3)));
    // 102 bytes: one byte past the bound, refused.
    a.send_raw(&user_line_of(102, &uuid(0xa4)));
    // 101 bytes: exactly at the bound, accepted.
    a.send_raw(&user_line_of(101, &uuid(0xa5)));
    // The queue is at its bound: any further record is refused.
    a.send_raw(&user_line_of(100, &uuid(0xa6)));
    for id in [0xa4, 0xa6] {
        let r = a.next().unwrap();
        assert_eq!(label(&r), "result:error_during_execution");
        assert_eq!(
            r["errors"],
            json!(["input error: the user-record queue is full (WIRE-020)"])
        );
        assert_eq!(r["prompt_uuid"], uuid(id));
    }
    // The sleeping turn was not disturbed: the interrupt acknowledges it and its own result
    // follows, nothing else in between.
    a.send(
        &json!({"type":"control_request","request_id":"int-1","request":{"subtype":"interrupt"}}),
    );
    let rest = a.until(is_result);
    let labels: Vec<String> = rest.iter().map(label).collect();
    assert_eq!(
        labels,
        ["control_response:success", "result:error_during_execution"]
    );
    // The queued records are multi-megabyte prompts; their echoes are not this test's subject.
    let _ = a.child.kill();
}

/// The output line limit through the binary (PROFILE §2a, §9): `agentx-echo` answers
/// `echo: <prompt>`. An `assistant` record of exactly 8,388,608 bytes is written (its result,
/// which repeats the text, falls back to the error form); one byte more is not written and
/// that turn ends with the output error. The session goes on, the next turn works, nothing is
/// said on stderr, and the process exits 0.
#[test]
fn oversized_agent_record_is_a_per_turn_error() {
    const MAX: usize = 8 * 1024 * 1024;
    const LIMIT_ERROR: &str = "output error: record exceeds the 8388608-byte line limit";
    let home = TempDir::new("linelimit");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("x");
    a.turn();
    // init, running, assistant: the assistant record's bytes besides the reply text.
    let overhead = a.line_len(2) - "echo: x".len();
    let prompt_for = |record_len: usize| "p".repeat(record_len - overhead - "echo: ".len());

    a.say(&prompt_for(MAX));
    let turn = a.turn();
    let from = a.seen.len() - turn.len();
    assert_eq!(turn.len(), 4, "{:?}", labels(&turn));
    assert_eq!(turn[1]["type"], "assistant");
    assert_eq!(a.line_len(from + 1), MAX);
    assert_eq!(
        [label(&turn[2]), label(&turn[3])],
        [
            "result:error_during_execution",
            "system/session_state_changed:idle"
        ]
    );
    assert_eq!(turn[2]["errors"], json!([LIMIT_ERROR]));
    assert_eq!(turn[2]["is_error"], true);

    a.say(&prompt_for(MAX + 1));
    let turn = a.turn();
    assert_eq!(
        labels(&turn),
        [
            "system/session_state_changed:running",
            "result:error_during_execution",
            "system/session_state_changed:idle",
        ]
    );
    let r = &turn[1];
    assert_eq!(r["errors"], json!([LIMIT_ERROR]));
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["total_cost_usd"], json!(null));
    assert!(r.get("result").is_none());

    a.say("again");
    assert_eq!(
        labels(&a.turn()),
        [
            "system/session_state_changed:running",
            "assistant:text:echo: again",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert!(done.rest.is_empty());
    assert_eq!(
        done.stderr.lines().filter(|l| l.contains("output")).count(),
        0,
        "{}",
        done.stderr
    );
    done.assert_valid_output();
}

/// A tool's output too large for one line, through the binary: `Read` of a one-line file whose
/// numbered form is exactly `Read`'s 8,388,608-byte bound, so the `tool_result` record around
/// it passes the line limit (PROFILE §10). Its `tool_result` is replaced by an error
/// `tool_result` with the output error for the same tool use (still paired), no further model
/// request runs, the turn ends with the error result, and the session goes on (exit 0).
#[test]
fn oversized_tool_result_is_replaced_and_the_turn_ends() {
    const LIMIT_ERROR: &str = "output error: record exceeds the 8388608-byte line limit";
    let home = TempDir::new("bigread");
    // `     1\t` + the line + `\n` is 8,388,608 bytes.
    std::fs::write(home.path().join("big.txt"), "r".repeat((8 << 20) - 8)).unwrap();
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Read {\"file_path\":\"big.txt\"}\n!say after");
    let turn = a.turn();
    assert_eq!(
        labels(&turn),
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant:tool_use:Read",
            "user:tool_result:error",
            "result:error_during_execution",
            "system/session_state_changed:idle",
        ]
    );
    let tool_use_id = &turn[2]["message"]["content"][0]["id"];
    let block = &turn[3]["message"]["content"][0];
    assert_eq!(&block["tool_use_id"], tool_use_id);
    assert_eq!(block["content"], LIMIT_ERROR);
    assert_eq!(turn[4]["errors"], json!([LIMIT_ERROR]));
    assert_eq!(turn[4]["num_turns"], 1);
    a.say("next");
    assert_eq!(labels(&a.turn())[1], "assistant:text:echo: next");
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}
