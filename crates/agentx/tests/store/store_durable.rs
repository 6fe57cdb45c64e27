//! Black-box: the durable session store of PROFILE §11 through the real `agentx` binary:
//! durable before idle (SIGKILL right after `idle`),
//! compaction in a later turn resumes with the summary plus the preserved segment (WIRE-005),
//! a prompt queued during a tool is stored where its turn starts, one writer per session (the
//! exact diagnostic, a stale lock does not block, no turn lost), two sessions in one home, a
//! cut turn's `tool_use` never reaches a resumed model, SIGHUP ends like EOF.

use crate::harness;
use crate::store;

use harness::*;
use serde_json::Value;
use store::*;

fn sid_of(records: &[Value]) -> String {
    records[0]["session_id"].as_str().unwrap().to_string()
}

fn result_of(turn: &[Value]) -> &Value {
    turn.iter().find(|r| is_result(r)).expect("a result")
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

/// The text of the `!history` answer of a turn.
fn history_text(turn: &[Value]) -> String {
    result_of(turn)["result"].as_str().unwrap().to_string()
}

/// Item 1: the host reads `idle` and SIGKILLs at once (what the SDKs' close() does when the
/// grace period runs out); the turn is in the store, its result included. On the old order
/// (`idle` written, then the append and fsync) the kill won the race nearly every time.
#[test]
fn profile_11_idle_means_stored_even_after_an_immediate_sigkill() {
    let home = TempDir::new("idlekill");
    for i in 0..8 {
        let mut a = Agentx::session(home.path(), &[]);
        a.say(&format!("turn {i} {}", "word ".repeat(2000)));
        let turn = a.turn();
        a.child.kill().unwrap();
        let _ = a.child.wait();
        let sid = sid_of(&turn);
        let uuid = result_of(&turn)["uuid"].as_str().unwrap().to_string();
        assert_eq!(
            stored_result_uuids(home.path(), &sid),
            [uuid],
            "run {i}: the turn the host saw finish is stored"
        );
        let bytes = transcript_bytes(home.path(), &sid);
        assert!(bytes.ends_with(b"\n"));
    }
}

/// Item 2 / WIRE-005 end to end: `!compact` in turn 3, then `!history` live and after
/// `--resume`: both count the summary plus the preserved segment (the exchange of turn 2),
/// plus what followed.
#[test]
fn wire_005_compaction_in_turn_3_resumes_with_summary_and_segment() {
    let home = TempDir::new("compact3");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("hello");
    let t1 = a.turn();
    let sid = sid_of(&t1);
    a.say("again");
    a.turn();
    a.say("!compact\n!say x");
    let t3 = a.turn();
    let boundary = t3
        .iter()
        .find(|r| r["subtype"] == "compact_boundary")
        .expect("a compact_boundary");
    let seg = &boundary["compact_metadata"]["preserved_segment"];
    // The segment is turn 2's exchange: its head (the prompt) comes before its tail.
    let stored = stored_records(home.path(), &sid);
    let at = |u: &Value| stored.iter().position(|r| r["uuid"] == *u).unwrap();
    assert!(at(&seg["head_uuid"]) < at(&seg["tail_uuid"]), "{seg}");
    assert_eq!(stored[at(&seg["head_uuid"])]["message"]["content"], "again");
    // Live: summary, "again", its echo, "x".
    a.say("!history");
    assert_eq!(history_text(&a.turn()), "history: 4 messages");
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();

    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("!history");
    let t = b.turn();
    assert_eq!(
        history_text(&t),
        "history: 6 messages",
        "{}",
        b.stderr_text()
    );
    let done = b.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    done.assert_valid_output();
    let ctx = resumed_context(home.path(), &sid);
    assert_eq!(
        ctx[0],
        agentx_core::model::Message::compaction_summary(3),
        "{ctx:#?}"
    );
}

/// Item 3: a prompt that arrives while a tool waits for its permission is stored where it
/// enters the model's context (its own turn, after the first turn's result), never between
/// the `tool_use` and its `tool_result`; the resumed context is the live one.
#[test]
fn profile_11_a_queued_prompt_is_stored_where_its_turn_starts() {
    let home = TempDir::new("queued");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo ran\"}");
    let upto = a.until(is_permission_request);
    let sid = sid_of(&upto);
    let req = upto.last().unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    a.say("queued one");
    a.send(&allow(&req));
    a.turn();
    a.turn();
    a.say("!history");
    let live = history_text(&a.turn());
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();

    let stored = stored_records(home.path(), &sid);
    let queued = stored
        .iter()
        .position(|r| r["type"] == "user" && r["message"]["content"] == "queued one")
        .expect("the queued prompt is stored");
    let first_result = stored.iter().position(|r| r["type"] == "result").unwrap();
    let tool_result = stored
        .iter()
        .position(|r| r["type"] == "user" && r["message"]["content"][0]["type"] == "tool_result")
        .unwrap();
    assert!(
        tool_result < first_result && first_result < queued,
        "{stored:#?}"
    );
    let ctx = resumed_context(home.path(), &sid);
    assert_tool_uses_paired(&ctx);

    let n: usize = live
        .trim_start_matches("history: ")
        .trim_end_matches(" messages")
        .parse()
        .unwrap();
    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("!history");
    assert_eq!(
        history_text(&b.turn()),
        format!("history: {} messages", n + 2)
    );
    b.finish();
}

/// Item 4 / PROFILE §11 "One writer": a second process resuming a held session exits 1 with
/// exactly the diagnostic and no output; the holder goes on and loses no turn; once the holder
/// is SIGKILLed (its lock file stays), the session resumes.
#[test]
fn profile_11_one_writer_per_session() {
    let home = TempDir::new("onewriter");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("one");
    let t1 = a.turn();
    let sid = sid_of(&t1);
    for _ in 0..3 {
        let (status, out, err) = run_session(
            home.path(),
            &["--resume", &sid, "--cwd", &home.path().to_string_lossy()],
            b"{\"type\":\"user\",\"message\":\"intruder\",\"parent_tool_use_id\":null}\n",
        );
        assert_eq!(status, Some(1), "{err}");
        assert!(out.is_empty(), "nothing on stdout");
        let line = format!("agentx: session {sid} is in use by another process");
        assert_eq!(err.lines().last(), Some(line.as_str()), "{err}");
        assert_eq!(err.matches(&line).count(), 1);
    }
    a.say("two");
    let t2 = a.turn();
    let r2 = result_of(&t2)["uuid"].as_str().unwrap().to_string();
    a.child.kill().unwrap();
    let _ = a.child.wait();
    assert!(session_dir(home.path(), &sid).join("lock").exists());
    let stored = stored_result_uuids(home.path(), &sid);
    assert_eq!(
        stored.len(),
        2,
        "no turn lost, no intruder turn: {stored:?}"
    );
    assert_eq!(stored[1], r2);
    assert!(!stored_records(home.path(), &sid)
        .iter()
        .any(|r| r["message"]["content"] == "intruder"));
    // The dead holder's lock does not block.
    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("!history");
    assert_eq!(history_text(&b.turn()), "history: 4 messages");
    let done = b.finish();
    assert_eq!(done.status, Some(0));
}

/// Two sessions in one home at once, turns interleaved: both keep every turn.
#[test]
fn profile_11_two_sessions_in_one_home_keep_every_turn() {
    let home = TempDir::new("twosessions");
    let mut a = Agentx::session(home.path(), &[]);
    let mut b = Agentx::session(home.path(), &[]);
    let (mut ra, mut rb) = (Vec::new(), Vec::new());
    let (mut sa, mut sb) = (String::new(), String::new());
    for i in 0..6 {
        a.say(&format!("a{i}"));
        b.say(&format!("b{i}"));
        let ta = a.turn();
        let tb = b.turn();
        sa = sid_of(&ta);
        sb = sid_of(&tb);
        ra.push(result_of(&ta)["uuid"].as_str().unwrap().to_string());
        rb.push(result_of(&tb)["uuid"].as_str().unwrap().to_string());
    }
    assert_ne!(sa, sb);
    assert_eq!(a.finish().status, Some(0));
    assert_eq!(b.finish().status, Some(0));
    assert_eq!(stored_result_uuids(home.path(), &sa), ra);
    assert_eq!(stored_result_uuids(home.path(), &sb), rb);
}

/// Item 11: a crash in the middle of a turn's append leaves whole lines of it, a `tool_use`
/// among them, before the torn one. Resume drops the cut turn: the model never sees the
/// `tool_use` without its `tool_result`, and the file is cut back to the last whole turn.
#[test]
fn profile_11_a_cut_turn_never_reaches_the_resumed_model() {
    let home = TempDir::new("cutturn");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    a.say("hello");
    let sid = sid_of(&a.turn());
    a.say("!tool Bash {\"command\":\"echo ran\"}");
    a.turn();
    assert_eq!(a.finish().status, Some(0));
    let path = transcript_path(home.path(), &sid);
    let bytes = std::fs::read(&path).unwrap();
    // Cut right after the tool_use line, inside the tool_result line.
    let needle = b"\"type\":\"tool_use\"";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .unwrap();
    let eol = at + bytes[at..].iter().position(|&b| b == b'\n').unwrap() + 1;
    std::fs::write(&path, &bytes[..eol + 20]).unwrap();
    let first_turn_end = {
        let r = b"{\"type\":\"result\",";
        let at = bytes.windows(r.len()).position(|w| w == r).unwrap();
        at + bytes[at..].iter().position(|&b| b == b'\n').unwrap() + 1
    };

    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("!history");
    assert_eq!(history_text(&b.turn()), "history: 2 messages");
    let done = b.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    let after = std::fs::read(&path).unwrap();
    assert_eq!(&after[..first_turn_end], &bytes[..first_turn_end]);
    assert!(!after[first_turn_end..]
        .windows(needle.len())
        .any(|w| w == needle));
    assert_tool_uses_paired(&resumed_context(home.path(), &sid));
}

/// PROFILE §8 Signals: SIGHUP mid-turn is input EOF and interrupts the turn (no
/// acknowledgement): its result (`error_during_execution`) and `idle` are written, it is
/// stored, and the process exits 0 without waiting for the stalled model.
#[test]
fn profile_8_sighup_interrupts_the_turn_and_stores_it() {
    let home = TempDir::new("sighup");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!sleep 300\n!say done");
    let upto = a.until(|v| is_state(v, "running"));
    let sid = sid_of(&upto);
    signal(a.pid(), "HUP");
    let turn = a.turn();
    assert_eq!(result_of(&turn)["subtype"], "error_during_execution");
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    done.assert_valid_output();
    assert_eq!(stored_result_uuids(home.path(), &sid).len(), 1);
}

/// PROFILE §11 / WIRE-005 (found by `benches/crash_campaign.sh`, seed 19): a turn whose last
/// assistant message is its `tool_use` (the follow-up call had no blocks) and then `!compact`:
/// the preserved segment keeps the tool's `tool_result` with it, live and resumed, so no
/// model ever gets a `tool_use` without its result. Before, both contexts were
/// summary, prompt, `tool_use`, "x": the result was cut off with the summary.
#[test]
fn profile_11_a_compaction_keeps_the_tool_result_of_the_preserved_tool_use() {
    let home = TempDir::new("compact-tool");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    a.say("!tool Bash {\"command\":\"echo t0\"}");
    let t1 = a.turn();
    let sid = sid_of(&t1);
    assert_eq!(result_of(&t1)["subtype"], "success");
    a.say("!compact\n!say x");
    a.turn();
    // Live: the summary, the prompt, its tool_use, its tool_result, "x".
    a.say("!history");
    assert_eq!(history_text(&a.turn()), "history: 4 messages");
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    let ctx = resumed_context(home.path(), &sid);
    assert_tool_uses_paired(&ctx);
    assert!(
        matches!(ctx[3], agentx_core::model::Message::ToolResult { .. }),
        "{ctx:#?}"
    );
    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("!history");
    assert_eq!(history_text(&b.turn()), "history: 6 messages");
    let done = b.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
}
