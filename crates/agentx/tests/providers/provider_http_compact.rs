//! PROFILE §19 compaction through the real `agentx` against the loopback Chat Completions
//! server: the summarization request (no tools; the conversation before the preserved
//! segment) and the next request (the summary first, the preserved exchange kept, the prompt
//! last); `context_length_exceeded` once (compact, retry, success) and twice (the turn ends
//! `invalid_request`); `/compact` with instructions; `--resume` after an automatic compaction
//! (the same context is sent); and the `scripted` provider with a `context_window`, compacting
//! deterministically.

use crate::provider_http_support;

use provider_http_support::agentx_home::*;
use provider_http_support::*;
use serde_json::{json, Value};

const SUMMARY: &str = "SUMMARY: the user counted one, two.";

fn windowed_auth(server: &Server, window: u32) -> String {
    format!(
        r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"gpt-x","api_key":"{KEY}","base_url":"{}","context_window":{window}}}]}}"#,
        server.base_url()
    )
}

/// A stream-json session (standalone profile) with `prompts`, stdin closed after them.
fn session(home: &Home, extra: &[&str], prompts: &[&str]) -> (i32, Vec<Value>, String) {
    stream_session(home, extra, prompts)
}

fn body(r: &Request) -> Value {
    serde_json::from_slice(&r.body).unwrap()
}

/// `(role, content)` of every message of a request but the system message.
fn messages(r: &Request) -> Vec<(String, String)> {
    body(r)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn pair(role: &str, content: &str) -> (String, String) {
    (role.to_string(), content.to_string())
}

/// The `system` records' subtypes and status values, in order.
fn system_labels(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| {
            r["type"] == "system"
                && r["subtype"] != "session_state_changed"
                && r["subtype"] != "init"
        })
        .map(|r| match r["subtype"].as_str().unwrap() {
            "status" => format!("status:{}", r["status"].as_str().unwrap_or("null")),
            s => s.to_string(),
        })
        .collect()
}

const TOO_LONG: &str = r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, your messages resulted in 4100 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;

/// Turns one and two; two reports 1,900 + 50 tokens, over 90 % of a 2,048 window.
fn two_turns_then(rest: Vec<Reply>) -> Vec<Reply> {
    let mut replies = vec![
        Reply::Sse(text_with_usage("one done", usage(10, 2))),
        Reply::Sse(text_with_usage("two done", usage(1_900, 50))),
    ];
    replies.extend(rest);
    replies
}

#[test]
fn profile_19_summary_request_has_no_tools_and_the_next_request_starts_with_the_summary() {
    let server = Server::start_in_thread(two_turns_then(vec![
        Reply::Sse(text_with_usage(SUMMARY, usage(30, 9))),
        Reply::Sse(text_with_usage("three done", usage(40, 3))),
    ]));
    let home = Home::new(&windowed_auth(&server, 2_048));
    let (status, records, stderr) = session(&home, &[], &["one", "two", "three"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(
        system_labels(&records),
        ["status:compacting", "compact_boundary", "status:null"]
    );
    let boundary = records
        .iter()
        .find(|r| r["subtype"] == "compact_boundary")
        .unwrap();
    assert_eq!(boundary["compact_metadata"]["trigger"], "auto");
    assert!(boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap() > 1_843);
    assert_eq!(boundary["compact_metadata"]["summary"], SUMMARY);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    // The summarization request: turn one, then the request for a summary; no tools.
    let summary = body(&reqs[2]);
    assert!(summary.get("tools").is_none(), "{summary}");
    let m = messages(&reqs[2]);
    assert_eq!(m[..2], [pair("user", "one"), pair("assistant", "one done")]);
    assert_eq!(m.len(), 3);
    assert!(
        m[2].1.starts_with("Summarize the conversation"),
        "{:?}",
        m[2]
    );
    // The next request: the summary, the preserved exchange (turn two), the prompt.
    assert_eq!(
        messages(&reqs[3]),
        [
            pair("user", SUMMARY),
            pair("user", "two"),
            pair("assistant", "two done"),
            pair("user", "three"),
        ]
    );
    assert!(body(&reqs[3]).get("tools").is_some());
    let results = of_type(&records, "result");
    assert_eq!(results[2]["subtype"], "success");
    assert_eq!(results[2]["num_turns"], 1);
    // The summary's usage counts toward the turn.
    assert_eq!(results[2]["usage"]["input_tokens"], 70);
}

#[test]
fn profile_19_context_length_exceeded_once_compacts_and_the_retry_succeeds() {
    let server = Server::start_in_thread(vec![
        Reply::Sse(text_with_usage("one done", usage(10, 2))),
        Reply::Sse(text_with_usage("two done", usage(12, 2))),
        status(400, &[], TOO_LONG),
        Reply::Sse(text_with_usage(SUMMARY, usage(30, 9))),
        Reply::Sse(text_with_usage("three done", usage(40, 3))),
    ]);
    // No declared window: the refusal alone compacts.
    let home = Home::new(&openai_auth(&server));
    let (status, records, stderr) = session(&home, &[], &["one", "two", "three"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(stderr, "");
    assert_eq!(
        system_labels(&records),
        ["status:compacting", "compact_boundary", "status:null"]
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    assert_eq!(messages(&reqs[4])[0], pair("user", SUMMARY));
    assert_eq!(messages(&reqs[4]).last(), Some(&pair("user", "three")));
    let r = of_type(&records, "result")[2];
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["result"], "three done");
    assert_eq!(r["num_turns"], 1);
}

#[test]
fn profile_19_context_length_exceeded_twice_ends_the_turn() {
    let server = Server::start_in_thread(vec![
        Reply::Sse(text_with_usage("one done", usage(10, 2))),
        Reply::Sse(text_with_usage("two done", usage(12, 2))),
        status(400, &[], TOO_LONG),
        Reply::Sse(text_with_usage(SUMMARY, usage(30, 9))),
        status(400, &[], TOO_LONG),
    ]);
    let home = Home::new(&openai_auth(&server));
    let (status, records, stderr) = session(&home, &[], &["one", "two", "three"]);
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(server.requests().len(), 5);
    let a = of_type(&records, "assistant");
    let last = a.last().unwrap();
    assert_eq!(last["error"], "invalid_request");
    let r = of_type(&records, "result")[2];
    assert_eq!(r["subtype"], "error_during_execution");
    assert_eq!(r["is_error"], true);
}

#[test]
fn profile_19_compact_command_with_instructions() {
    let server = Server::start_in_thread(vec![
        Reply::Sse(text_with_usage("one done", usage(10, 2))),
        Reply::Sse(text_with_usage("two done", usage(12, 2))),
        Reply::Sse(text_with_usage(SUMMARY, usage(30, 9))),
    ]);
    let home = Home::new(&windowed_auth(&server, 32_000));
    let (status, records, stderr) =
        session(&home, &[], &["one", "two", "/compact keep the numbers"]);
    assert_eq!(status, 0, "{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(body(&reqs[2]).get("tools").is_none());
    let m = messages(&reqs[2]);
    assert_eq!(m[..2], [pair("user", "one"), pair("assistant", "one done")]);
    assert!(m[2].1.ends_with("\n\nkeep the numbers"), "{:?}", m[2]);
    let boundary = records
        .iter()
        .find(|r| r["subtype"] == "compact_boundary")
        .unwrap();
    assert_eq!(boundary["compact_metadata"]["trigger"], "manual");
    let pre = boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap();
    let r = of_type(&records, "result")[2];
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["num_turns"], 0);
    let text = r["result"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("compacted: {pre} -> ")) && text.ends_with(" tokens"),
        "{text}"
    );
    // No assistant record for the command, and it is not stored as a prompt.
    assert_eq!(of_type(&records, "assistant").len(), 2);
    let store = String::from_utf8(home.store_bytes()).unwrap();
    assert!(!store.contains("/compact"));
    // system/init lists the command.
    let init = records.iter().find(|r| r["subtype"] == "init").unwrap();
    assert_eq!(init["slash_commands"], json!(["compact"]));
}

#[test]
fn profile_19_resume_after_an_automatic_compaction_sends_the_same_context() {
    let server = Server::start_in_thread(two_turns_then(vec![
        Reply::Sse(text_with_usage(SUMMARY, usage(30, 9))),
        Reply::Sse(text_with_usage("three done", usage(40, 3))),
        Reply::Sse(text_with_usage("four done", usage(50, 3))),
    ]));
    let home = Home::new(&windowed_auth(&server, 2_048));
    let (status, records, stderr) = session(&home, &[], &["one", "two", "three"]);
    assert_eq!(status, 0, "{stderr}");
    let sid = records[0]["session_id"].as_str().unwrap().to_string();
    let (status, _, stderr) = session(&home, &["--resume", &sid], &["four"]);
    assert_eq!(status, 0, "{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5);
    assert_eq!(
        messages(&reqs[4]),
        [
            pair("user", SUMMARY),
            pair("user", "two"),
            pair("assistant", "two done"),
            pair("user", "three"),
            pair("assistant", "three done"),
            pair("user", "four"),
        ]
    );
}

#[test]
fn profile_19_scripted_provider_with_a_context_window_compacts_deterministically() {
    let home = Home::new(
        r#"{"version":2,"providers":[{"id":"s","type":"scripted","model":"agentx-echo","context_window":8192}]}"#,
    );
    let run = || {
        session(
            &home,
            &[],
            &["one", "!usage 8000 10\n!say big", "three", "!history"],
        )
    };
    let (status, records, stderr) = run();
    assert_eq!(status, 0, "{stderr}");
    assert_eq!(
        system_labels(&records),
        ["status:compacting", "compact_boundary", "status:null"]
    );
    let boundary = records
        .iter()
        .find(|r| r["subtype"] == "compact_boundary")
        .unwrap();
    assert_eq!(boundary["compact_metadata"]["trigger"], "auto");
    assert_eq!(
        boundary["compact_metadata"]["summary"],
        "[compacted summary of 2 earlier messages]"
    );
    let results = of_type(&records, "result");
    assert_eq!(results[2]["result"], "echo: three");
    // After it: the summary, the kept exchange and turn three (history counts user and
    // assistant messages).
    assert_eq!(results[3]["result"], "history: 5 messages");
    // The same input compacts the same way in a new session.
    let (_, again, _) = run();
    let b2 = again
        .iter()
        .find(|r| r["subtype"] == "compact_boundary")
        .unwrap();
    assert_eq!(
        b2["compact_metadata"]["pre_tokens"],
        boundary["compact_metadata"]["pre_tokens"]
    );
    assert_eq!(
        b2["compact_metadata"]["summary"],
        boundary["compact_metadata"]["summary"]
    );
}
