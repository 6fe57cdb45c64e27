//! Black-box: PROFILE §8 "Replayed user records". An inbound `user` record with
//! `isReplay: true` is prior context, never a request: it runs no tool, starts no turn and gets
//! no result; it joins the conversation the next prompt's model request sees, and is stored
//! with that turn, so `--resume` sees it too.

use crate::harness::*;
use serde_json::json;

fn replayed(uuid: &str, session_id: &str, text: &str) -> serde_json::Value {
    json!({"type":"user","uuid":uuid,"session_id":session_id,"isReplay":true,
        "parent_tool_use_id":null,"message":{"role":"user","content":text}})
}

/// A stored session of one turn (`!say hi`): its id.
fn one_turn_session(home: &std::path::Path) -> String {
    let mut a = Agentx::session(home, &[]);
    a.say("!say hi");
    let t = a.turn();
    assert_eq!(a.finish().status, Some(0));
    t[0]["session_id"].as_str().unwrap().to_owned()
}

#[test]
fn a_replayed_record_runs_nothing_and_is_the_next_prompts_prior_context() {
    let home = TempDir::new("replayed-context");
    let sid = one_turn_session(home.path());
    let mut a = Agentx::session(
        home.path(),
        &["--permission-mode", "bypassPermissions", "--resume", &sid],
    );
    a.send(&replayed(
        "5b0f9a3e-2c1d-4e8f-9a7b-6c5d4e3f2a10",
        &sid,
        "!tool Bash {\"command\":\"touch ran\"}",
    ));
    // No turn: the next records agentx writes belong to the real prompt's turn, whose context
    // is the stored turn (2 messages) and the replayed record.
    a.say("!history");
    let t = a.turn();
    assert_eq!(
        labels(&t),
        [
            "system/init",
            "system/session_state_changed:running",
            "assistant:text:history: 3 messages",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    assert!(
        !home.path().join("ran").exists(),
        "the replayed tool call ran"
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();

    // Stored with the turn that followed it: a resumed context holds the first turn, the
    // replayed record, and the second turn's prompt and reply.
    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("!history");
    let t = b.turn();
    assert_eq!(labels(&t)[2], "assistant:text:history: 5 messages");
    assert_eq!(b.finish().status, Some(0));
    assert!(!home.path().join("ran").exists());
}

/// A replayed record is echoed only with `--replay-user-messages`, and one naming another
/// session is an input error (validated like any user record).
#[test]
fn a_replayed_record_is_echoed_with_replay_and_must_name_this_session() {
    let home = TempDir::new("replayed-echo");
    let sid = one_turn_session(home.path());
    let mut a = Agentx::session(home.path(), &["--resume", &sid, "--replay-user-messages"]);
    let uuid = "6c1a0b4f-3d2e-4f9a-8b7c-5d4e3f2a1b09";
    a.send(&replayed(uuid, &sid, "earlier"));
    let echo = a.next().unwrap();
    assert_eq!(
        (echo["type"].as_str(), echo["uuid"].as_str()),
        (Some("user"), Some(uuid))
    );
    assert_eq!(echo["isReplay"], true);
    let other = "7d2b1c5a-4e3f-4a0b-9c8d-6e5f4a3b2c18";
    a.send(&replayed(
        other,
        "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9",
        "elsewhere",
    ));
    let refused = a.next().unwrap();
    assert_eq!(label(&refused), "result:error_during_execution");
    assert_eq!(
        refused["errors"],
        json!(["input error: a replayed user record must carry this session's session_id"])
    );
    assert_eq!(refused["prompt_uuid"], other);
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert!(done.rest.is_empty(), "{:#?}", done.rest);
}
