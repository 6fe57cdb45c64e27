//! SDK hook callbacks through the real `agentx` binary in the SDK profile (PROFILE §16): the
//! exact interrupt order with a pending `hook_callback` (WIRE-011, WIRE-007), and a PostToolUse
//! context that an `openai` provider's recorded request carries (a real HTTP/1.1 + SSE server
//! on 127.0.0.1, tests/provider_http_support).

use crate::harness;
use crate::provider_http_support;

use provider_http_support::agentx_home::*;
use provider_http_support::*;
use serde_json::{json, Value};

const SDK: [&str; 7] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
    "--permission-prompt-tool",
    "stdio",
];

fn spawn(home: &std::path::Path, cwd: &std::path::Path, extra: &[&str]) -> harness::Agentx {
    let mut args: Vec<String> = SDK.iter().map(|s| s.to_string()).collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--cwd".to_string(), cwd.to_string_lossy().into_owned()]);
    harness::Agentx::spawn(home, &args)
}

fn initialize(a: &mut harness::Agentx, hooks: Value) {
    a.send(&json!({"type":"control_request","request_id":"init","request":{"subtype":"initialize","hooks":hooks}}));
    let r = a.until(|v| v["type"] == "control_response");
    let r = &r.last().unwrap()["response"];
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["response"]["hooks_applied"], true);
}

fn user(text: &str) -> Value {
    json!({"type":"user","session_id":"","message":{"role":"user","content":text},"parent_tool_use_id":null})
}

fn is_hook_callback(v: &Value) -> bool {
    v["type"] == "control_request" && v["request"]["subtype"] == "hook_callback"
}

fn label(v: &Value) -> String {
    match v["type"].as_str().unwrap_or("?") {
        "control_cancel_request" => format!("cancel:{}", v["request_id"].as_str().unwrap()),
        "control_response" => format!(
            "response:{}:{}",
            v["response"]["subtype"].as_str().unwrap(),
            v["response"]["request_id"].as_str().unwrap()
        ),
        "user" => {
            let b = &v["message"]["content"][0];
            format!(
                "tool_result:{}",
                b["content"].as_str().unwrap_or("(blocks)")
            )
        }
        "result" => format!("result:{}", v["subtype"].as_str().unwrap()),
        "system" => format!(
            "system:{}",
            v["state"].as_str().or(v["subtype"].as_str()).unwrap_or("?")
        ),
        t => t.to_string(),
    }
}

/// WIRE-011 / PROFILE §16: an interrupt while a PreToolUse callback is pending: the callback's
/// `control_cancel_request`, then the acknowledgement, then the tool use's `interrupted`
/// tool_result, the result and `idle`; the late answer is ignored (WIRE-007) and the session
/// goes on.
#[test]
fn interrupt_with_a_pending_hook_callback_exact_order() {
    let home = harness::TempDir::new("sdk-hooks-interrupt");
    let mut a = spawn(home.path(), home.path(), &[]);
    initialize(
        &mut a,
        json!({"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]}]}),
    );
    a.send(&user("!tool Bash {\"command\":\"echo hi\"}\n!say never"));
    let seen = a.until(is_hook_callback);
    let cb = seen.last().unwrap();
    let id = cb["request_id"].as_str().unwrap().to_string();
    assert_eq!(cb["request"]["callback_id"], "hook_0");
    assert_eq!(cb["request"]["input"]["hook_event_name"], "PreToolUse");
    let tool_use_id = cb["request"]["tool_use_id"].as_str().unwrap().to_string();
    a.send(
        &json!({"type":"control_request","request_id":"int_1","request":{"subtype":"interrupt"}}),
    );
    let rest = a.turn();
    let labels: Vec<String> = rest.iter().map(label).collect();
    assert_eq!(
        labels,
        [
            format!("cancel:{id}"),
            "response:success:int_1".to_string(),
            "tool_result:interrupted".to_string(),
            "result:error_during_execution".to_string(),
            "system:idle".to_string(),
        ]
    );
    assert_eq!(
        rest[2]["message"]["content"][0]["tool_use_id"],
        tool_use_id.as_str()
    );
    // The late answer changes nothing; the next prompt runs.
    a.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":{"hookSpecificOutput":{"permissionDecision":"allow"}}}}));
    a.send(&user("after"));
    let turn = a.turn();
    let r = turn.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(r["result"], "echo: after");
    assert!(turn.iter().all(|v| v["type"] != "user"), "{turn:#?}");
    let done = a.finish();
    assert_eq!(done.status, Some(0));
}

/// PROFILE §16: a callback's `timeout` fires on time while the host keeps agentx's stdin full
/// (an upload's chunks, a flood of `keep_alive`): the callback's `control_cancel_request`
/// comes while the flood still runs, not once input pauses. The loop handles a passed
/// deadline after any event, not only when no input is waiting.
#[test]
fn a_hook_timeout_fires_while_stdin_stays_full() {
    use std::io::Write;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let home = harness::TempDir::new("sdk-hooks-flood");
    let mut a = spawn(home.path(), home.path(), &[]);
    initialize(
        &mut a,
        json!({"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"],"timeout":1}]}),
    );
    a.send(&user("!tool Bash {\"command\":\"echo hi\"}\n!say done"));
    let seen = a.until(is_hook_callback);
    let id = seen.last().unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut stdin = a.take_stdin();
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let flood = {
        let (stop, written) = (Arc::clone(&stop), Arc::clone(&written));
        std::thread::spawn(move || {
            // Lines agentx takes longer to read than this thread to write, so its stdin
            // never runs dry.
            let chunk = format!(
                "{{\"type\":\"keep_alive\",\"pad\":\"{}\"}}\n",
                "x".repeat(256 << 10)
            );
            while !stop.load(Ordering::Relaxed) {
                if stdin.write_all(chunk.as_bytes()).is_err() {
                    return;
                }
                written.fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
            // Dropping stdin: EOF.
        })
    };
    let cancelled = a.until(|v| v["type"] == "control_cancel_request");
    let during = written.load(Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    assert_eq!(cancelled.last().unwrap()["request_id"], id.as_str());
    assert!(during > 0, "the flood had not started");
    flood.join().unwrap();
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert!(
        done.rest.iter().any(|v| v["type"] == "result"),
        "the turn ends: {:?}",
        done.rest
    );
}

/// PROFILE §16: a PostToolUse context is a text block of the tool_result record and reaches an
/// `openai` provider: the recorded second request's `tool` message carries the output and
/// the context, joined by a newline.
#[test]
fn post_tool_use_context_reaches_the_openai_request() {
    let server = Server::start_in_thread(vec![
        Reply::Sse(one_tool_stream("call_H1", "a.txt")),
        Reply::Sse(text_stream()),
    ]);
    let home = Home::new(&openai_auth(&server));
    std::fs::write(home.cwd().join("a.txt"), "alpha\n").unwrap();
    let mut a = spawn(
        &home.0,
        &home.cwd(),
        &["--permission-mode", "bypassPermissions"],
    );
    initialize(
        &mut a,
        json!({"PostToolUse":[{"matcher":"Read","hookCallbackIds":["hook_0"]}]}),
    );
    a.send(&user("read a.txt"));
    let seen = a.until(is_hook_callback);
    let cb = seen.last().unwrap();
    assert_eq!(cb["request"]["input"]["tool_response"], "     1\talpha\n");
    let id = cb["request_id"].as_str().unwrap();
    a.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"checked by a hook"}}}}));
    let turn = a.turn();
    let tr = turn.iter().find(|v| v["type"] == "user").unwrap();
    assert_eq!(
        tr["message"]["content"][0]["content"],
        json!([{"type":"text","text":"     1\talpha\n"},{"type":"text","text":"checked by a hook"}])
    );
    let r = turn.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(r["subtype"], "success");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let body: Value = serde_json::from_slice(&reqs[1].body).unwrap();
    let tool = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool message: {body}"));
    assert_eq!(tool["tool_call_id"], "call_H1");
    assert_eq!(tool["content"], "     1\talpha\n\nchecked by a hook");
    assert_eq!(a.finish().status, Some(0));
}

/// PROFILE §15–§16: a tool output over the 1 MiB line with a PostToolUse hook. The hook's
/// `tool_response` is the output cut with the same visible marker as the `tool_result`, so the
/// `hook_callback` request fits one line; the host answers it, the `tool_result` is cut as
/// without a hook, and the turn goes on (`!say after` runs, the result is `success`). No output
/// line exceeds 1,048,576 bytes.
#[test]
fn a_post_tool_use_hook_sees_an_oversized_output_cut_and_the_turn_goes_on() {
    let home = harness::TempDir::new("sdk-hook-cut");
    std::fs::write(home.path().join("big.txt"), "a".repeat(1_500_000)).unwrap();
    let mut a = spawn(home.path(), home.path(), &[]);
    initialize(
        &mut a,
        json!({"PostToolUse":[{"hookCallbackIds":["post"]}]}),
    );
    a.send(&user("!tool Read {\"file_path\":\"big.txt\"}\n!say after"));
    let upto = a.until(is_hook_callback);
    let cb = upto.last().unwrap();
    assert_eq!(cb["request"]["callback_id"], "post");
    let response = cb["request"]["input"]["tool_response"].as_str().unwrap();
    assert!(response.len() > 800_000, "{}", response.len());
    assert!(
        response.ends_with("bytes shown, to fit the 1,048,576-byte line limit]"),
        "{}",
        &response[response.len() - 120..]
    );
    let id = cb["request_id"].as_str().unwrap().to_owned();
    a.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":{}}}));
    let turn = a.turn();
    let result = turn.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["result"], "after");
    let tr = turn.iter().find(|v| v["type"] == "user").unwrap();
    let content = tr["message"]["content"][0]["content"].as_str().unwrap();
    assert!(content.ends_with("bytes shown, to fit the 1,048,576-byte line limit]"));
    a.finish().assert_exit_0_with_lines_within(1_048_576);
}

/// PROFILE §11 with §16's Stop hook: a `block` sends the model one more request with the reason
/// as a user message, and that message is kept in the transcript, so a resumed session's
/// context is the live one: `!history` after `--resume` counts what the live `!history` counted
/// plus that turn's own prompt and answer.
#[test]
fn a_stop_block_reason_survives_resume() {
    let home = harness::TempDir::new("sdk-hooks-stop-resume");
    let answer = |a: &mut harness::Agentx, id: &str, response: Value| {
        a.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":response}}));
    };
    // One turn whose Stop hook blocks once, then a `!history` turn; every Stop call after the
    // block is answered with no decision.
    let history_after_block = |a: &mut harness::Agentx| -> String {
        a.send(&user("!history"));
        let cb = a.until(is_hook_callback);
        let id = cb.last().unwrap()["request_id"]
            .as_str()
            .unwrap()
            .to_owned();
        answer(a, &id, json!({}));
        let turn = a.turn();
        let r = turn.iter().find(|v| v["type"] == "result").unwrap();
        r["result"].as_str().unwrap().to_owned()
    };
    let mut a = spawn(home.path(), home.path(), &[]);
    initialize(&mut a, json!({"Stop":[{"hookCallbackIds":["stop"]}]}));
    a.send(&user("hello"));
    let cb = a.until(is_hook_callback);
    let first = cb.last().unwrap();
    let sid = first["request"]["input"]["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let id = first["request_id"].as_str().unwrap().to_owned();
    answer(&mut a, &id, json!({"decision":"block","reason":"say more"}));
    let cb = a.until(is_hook_callback);
    assert_eq!(
        cb.last().unwrap()["request"]["input"]["stop_hook_active"],
        true
    );
    let id = cb.last().unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    answer(&mut a, &id, json!({}));
    let turn = a.turn();
    let r = turn.iter().find(|v| v["type"] == "result").unwrap();
    assert_eq!(r["subtype"], "success");
    // The reason reaches no stdout record (it is the model's context, not the host's).
    assert!(!turn.iter().any(|v| v["type"] == "user"), "{turn:#?}");
    let live = history_after_block(&mut a);
    let done = a.finish();
    assert_eq!(done.status, Some(0));

    let mut b = spawn(home.path(), home.path(), &["--resume", &sid]);
    initialize(&mut b, json!({"Stop":[{"hookCallbackIds":["stop"]}]}));
    let resumed = history_after_block(&mut b);
    // The resumed context also holds the live `!history` turn (its prompt and answer).
    let count = |h: &str| -> usize {
        h.trim_start_matches("history: ")
            .trim_end_matches(" messages")
            .parse()
            .unwrap()
    };
    assert_eq!(
        live, "history: 4 messages",
        "hello, its answer, the reason, the answer"
    );
    assert_eq!(
        count(&resumed),
        count(&live) + 2,
        "the resumed context is the live one"
    );
    let done = b.finish();
    assert_eq!(done.status, Some(0));
}

/// PROFILE §11 with §16's UserPromptSubmit: the contexts a hook adds are appended to the
/// prompt the model sees, and the stored prompt carries them too, so the context a resume
/// rebuilds from the transcript is the live one: the prompt `hello` plus `be brief`, for a
/// string prompt and for a prompt of text blocks; the host's replay echo is its own record.
#[test]
fn a_user_prompt_submit_context_is_stored_with_its_prompt() {
    use agentx_core::model::Message;
    for (tag, content) in [
        ("string", json!("hello")),
        (
            "blocks",
            json!([{"type":"text","text":"hel"},{"type":"text","text":"lo"}]),
        ),
    ] {
        let home = harness::TempDir::new(&format!("sdk-hooks-context-{tag}"));
        let mut a = spawn(home.path(), home.path(), &["--replay-user-messages"]);
        initialize(
            &mut a,
            json!({"UserPromptSubmit":[{"hookCallbackIds":["ctx"]}]}),
        );
        a.send(&json!({"type":"user","session_id":"","message":{"role":"user","content":content},"parent_tool_use_id":null}));
        let cb = a.until(is_hook_callback);
        let cb = cb.last().unwrap();
        let sid = cb["request"]["input"]["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
        let id = cb["request_id"].as_str().unwrap().to_owned();
        a.send(&json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"be brief"}}}}));
        let turn = a.turn();
        let live = turn.iter().find(|v| v["type"] == "result").unwrap()["result"].clone();
        let echo = a.seen.iter().find(|v| v["type"] == "user").unwrap();
        assert_eq!(
            echo["message"]["content"], content,
            "{tag}: the replay echo is the host's"
        );
        assert!(a.finish().status == Some(0));

        let stored = std::fs::read(
            home.path()
                .join("sessions")
                .join(&sid)
                .join("transcript.ndjson"),
        )
        .unwrap();
        let lines = ::agentx_home::store::split_transcript(&stored).lines;
        let context = ::agentx_home::store::context::prior_context(&lines).unwrap();
        let Some(Message::User { text, .. }) = context.first() else {
            panic!("{tag}: {context:?}");
        };
        let want = if tag == "string" {
            "hello\nbe brief"
        } else {
            "hel\nlo\nbe brief"
        };
        assert_eq!(text, want, "{tag}");
        assert_eq!(
            live,
            format!("echo: {want}"),
            "{tag}: the live model saw the same"
        );
    }
}
