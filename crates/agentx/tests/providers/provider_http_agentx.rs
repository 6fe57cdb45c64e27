//! PROFILE §14 through the real `agentx` binary: a temp AgentX home whose `auth.json` points an
//! `openai` or `azure_openai` provider at a real HTTP/1.1 + SSE server on 127.0.0.1
//! (tests/provider_http_support). Records, stderr lines and exit statuses are asserted; the
//! key, endpoint, deployment and API version never appear on stdout, stderr or in the store.

use crate::harness;
use crate::provider_http_support;

use std::time::Duration;

use provider_http_support::agentx_home::*;
use provider_http_support::*;
use serde_json::Value;

#[test]
fn profile_14_openai_text_through_agentx() {
    let server = Server::start_in_thread(vec![Reply::Sse(text_stream())]);
    let home = Home::new(&openai_auth(&server));
    let run = one_shot(&home, "hello", &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        stream_events(&run.records),
        [
            "message_start",
            "content_block_start",
            "delta:text_delta",
            "delta:text_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let assistants = of_type(&run.records, "assistant");
    assert_eq!(assistants.len(), 1);
    assert_eq!(
        assistants[0]["message"]["content"][0]["text"],
        "Hello world"
    );
    assert_eq!(assistants[0]["message"]["model"], "gpt-x");
    let r = result(&run);
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["result"], "Hello world");
    assert_eq!(r["stop_reason"], "end_turn");
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["total_cost_usd"], Value::Null);
    assert_eq!(r["usage"]["input_tokens"], 12);
    assert_eq!(r["usage"]["output_tokens"], 3);
    assert_eq!(r["modelUsage"]["gpt-x"]["costUSD"], Value::Null);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].target, "/v1/chat/completions");
    assert_eq!(
        reqs[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body: Value = crate::conversation(&reqs[0].body);
    assert_eq!(body["model"], "gpt-x");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["reasoning_effort"], "high");
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(body["messages"][0]["content"], "hello");
    let tools: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            assert_eq!(t["function"]["parameters"]["type"], "object");
            t["function"]["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        tools,
        ["Read", "Write", "Bash", "Edit", "Glob", "Grep", "TodoWrite"]
    );
    assert_no_private_material(&run, &home, &server);
}

#[test]
fn profile_14_azure_tool_call_round_trip_through_agentx() {
    let server = Server::start_in_thread(vec![
        Reply::Sse(one_tool_stream("call_DdmO9", "a.txt")),
        Reply::Sse(text_stream()),
    ]);
    let home = Home::new(&azure_auth(&server));
    std::fs::write(home.cwd().join("a.txt"), "alpha\n").unwrap();
    let run = one_shot(
        &home,
        "read a.txt",
        &["--permission-mode", "bypassPermissions"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let assistants = of_type(&run.records, "assistant");
    assert_eq!(assistants[0]["message"]["content"][0]["type"], "tool_use");
    assert_eq!(assistants[0]["message"]["content"][0]["id"], "call_DdmO9");
    assert_eq!(assistants[0]["message"]["content"][0]["name"], "Read");
    assert_eq!(
        assistants[0]["message"]["content"][0]["input"],
        serde_json::json!({"file_path": "a.txt"})
    );
    assert!(stream_events(&run.records).contains(&"delta:input_json_delta".to_string()));
    let r = result(&run);
    assert_eq!(r["num_turns"], 2);
    assert_eq!(r["stop_reason"], "end_turn");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    for q in &reqs {
        assert_eq!(
            q.target,
            format!("/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={API_VERSION}")
        );
        assert_eq!(q.header("api-key"), Some(KEY));
        assert_eq!(q.header("authorization"), None);
    }
    let body: Value = crate::conversation(&reqs[1].body);
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 3, "{body}");
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["tool_calls"][0]["id"], "call_DdmO9");
    assert_eq!(
        msgs[1]["tool_calls"][0]["function"]["arguments"],
        r#"{"file_path":"a.txt"}"#
    );
    assert_eq!(msgs[2]["role"], "tool");
    assert_eq!(msgs[2]["tool_call_id"], "call_DdmO9");
    assert!(msgs[2]["content"].as_str().unwrap().contains("alpha"));
    assert!(body.get("reasoning_effort").is_none());
    assert_no_private_material(&run, &home, &server);
}

#[test]
fn profile_14_two_parallel_tool_calls_through_agentx() {
    let server = Server::start_in_thread(vec![
        Reply::Sse(parallel_stream()),
        Reply::Sse(text_stream()),
    ]);
    let home = Home::new(&openai_auth(&server));
    std::fs::write(home.cwd().join("b.txt"), "beta\n").unwrap();
    let run = one_shot(&home, "both", &["--permission-mode", "bypassPermissions"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let assistants = of_type(&run.records, "assistant");
    // Text, Bash, Read of one message, then the final text.
    assert_eq!(assistants.len(), 4, "{}", run.stdout);
    let id = &assistants[0]["message"]["id"];
    assert!(assistants[..3].iter().all(|a| a["message"]["id"] == *id));
    assert_eq!(assistants[1]["message"]["content"][0]["id"], "call_a");
    assert_eq!(assistants[2]["message"]["content"][0]["id"], "call_b");
    let body: Value = crate::conversation(&server.requests()[1].body);
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["content"], "Checking both.");
    assert_eq!(msgs[1]["tool_calls"].as_array().unwrap().len(), 2);
    assert_eq!(msgs[2]["tool_call_id"], "call_a");
    assert_eq!(msgs[3]["tool_call_id"], "call_b");
    assert!(msgs[3]["content"].as_str().unwrap().contains("beta"));
}

#[test]
fn profile_14_retry_after_429_then_success_through_agentx() {
    let server = Server::start_in_thread(vec![
        status(
            429,
            &[("retry-after", "1")],
            r#"{"error":{"message":"slow down"}}"#,
        ),
        Reply::Sse(text_stream()),
    ]);
    let home = Home::new(&openai_auth(&server));
    let run = one_shot(&home, "hello", &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "agentx: WARN provider retry 1/3: 429\n");
    assert_eq!(result(&run)["num_turns"], 1);
    let reqs = server.requests();
    assert!(reqs[1].at - reqs[0].at >= Duration::from_secs(1));
}

#[test]
fn profile_14_503_three_retries_then_server_error_through_agentx() {
    let reply = status(
        503,
        &[("retry-after", "0")],
        r#"{"error":{"message":"overloaded"}}"#,
    );
    let server = Server::start_in_thread(vec![reply.clone(), reply.clone(), reply.clone(), reply]);
    let home = Home::new(&openai_auth(&server));
    let run = one_shot(&home, "hello", &[]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        "agentx: WARN provider retry 1/3: 503\nagentx: WARN provider retry 2/3: 503\nagentx: WARN provider retry 3/3: 503\n"
    );
    let assistants = of_type(&run.records, "assistant");
    assert_eq!(assistants.len(), 1);
    assert_eq!(assistants[0]["error"], "server_error");
    assert_eq!(assistants[0]["message"]["content"][0]["text"], "overloaded");
    let r = result(&run);
    assert_eq!(r["subtype"], "error_during_execution");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 1);
    // WIRE-012: the failed call reported no price.
    assert_eq!(r["total_cost_usd"], Value::Null);
    assert_eq!(server.requests().len(), 4);
    assert_no_private_material(&run, &home, &server);
}

#[test]
fn profile_14_connection_refused_through_agentx() {
    let refused = refused_port();
    let port = refused.port;
    let auth = format!(
        r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"m","api_key":"{KEY}","base_url":"http://127.0.0.1:{port}/v1"}}]}}"#
    );
    let home = Home::new(&auth);
    let run = one_shot(&home, "hello", &[]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        "agentx: WARN provider retry 1/3: connection refused\nagentx: WARN provider retry 2/3: connection refused\nagentx: WARN provider retry 3/3: connection refused\n"
    );
    assert_eq!(of_type(&run.records, "assistant")[0]["error"], "unknown");
    assert_eq!(result(&run)["subtype"], "error_during_execution");
}

/// PROFILE §14 + WIRE-013: the 401 body quotes the key. A provider's message is quoted only
/// when it holds no credential material, so this one is dropped: the assistant record is
/// written without it (the category's fixed text instead), the turn ends with its error result,
/// and no 8-byte piece of the key is on stdout, stderr or in the session store. The encoder's
/// validation stays the enforcement point; this only decides what is quoted.
#[test]
fn profile_14_a_key_echoed_in_an_error_body_is_dropped_and_the_record_written() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let server = Server::start_in_thread(vec![status(401, &[], &body)]);
    let home = Home::new(&openai_auth(&server));
    let run = one_shot(&home, "hello", &[]);
    let types: Vec<String> = run
        .records
        .iter()
        .map(|r| format!("{}/{}", r["type"], r["subtype"]))
        .collect();
    assert_eq!(
        types,
        [
            r#""system"/"init""#,
            r#""system"/"session_state_changed""#,
            r#""assistant"/null"#,
            r#""result"/"error_during_execution""#,
            r#""system"/"session_state_changed""#,
        ]
    );
    let assistant = &run.records[2];
    assert_eq!(assistant["error"], "authentication_failed");
    assert_eq!(
        assistant["message"]["content"],
        serde_json::json!([{"type": "text", "text": "model error: authentication_failed"}])
    );
    let r = result(&run);
    assert_eq!(r["is_error"], true);
    assert_eq!(
        r["errors"],
        serde_json::json!(["model error: authentication_failed"])
    );
    // WIRE-012: the failed call reported no price.
    assert_eq!(r["total_cost_usd"], Value::Null);
    assert_eq!(run.records[4]["state"], "idle");
    // The turn failed (status 1 as for any failed one-shot turn), but nothing latched: no
    // encoder diagnostic, nothing on stderr at all.
    assert_eq!(run.status, 1);
    assert_eq!(run.stderr, "");
    assert_no_key_piece("stdout", run.stdout.as_bytes());
    assert_no_key_piece("stderr", run.stderr.as_bytes());
    assert_no_key_piece("session store", &home.store_bytes());
    // 401 is final: one request, no retry.
    assert_eq!(server.requests().len(), 1);
    assert_no_private_material(&run, &home, &server);
}

#[test]
fn profile_14_non_loopback_http_is_a_startup_error() {
    let home = Home::new(&format!(
        r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"m","api_key":"{KEY}","base_url":"http://models.example.invalid/v1"}}]}}"#
    ));
    let run = one_shot(&home, "hello", &[]);
    assert_eq!(run.status, 1);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains("providers[0].base_url"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("models.example.invalid"));
}

/// PROFILE §14 + WIRE-010/011 through agentx: an `interrupt` while the answer is streaming
/// closes the HTTP connection (the server sees it) and the turn ends with the hard-interrupt
/// order (acknowledgement, result with `stop_reason: "cancelled"`, idle); the next turn opens
/// a new connection and runs normally.
#[test]
fn profile_14_interrupt_mid_stream_closes_the_connection_through_agentx() {
    // The role chunk and "Hello", then the server holds the stream open until the client
    // closes it; the second request gets the whole text stream.
    let mut hanging = text_stream();
    hanging.truncate(2);
    let mut server =
        Server::start_in_thread(vec![Reply::SseHang(hanging), Reply::Sse(text_stream())]);
    let home = Home::new(&openai_auth(&server));
    let cwd = home.cwd();
    let mut a = harness::Agentx::session(
        &home.0,
        &["--include-partial-messages", "--cwd", cwd.to_str().unwrap()],
    );
    a.send(&harness::user("hello"));
    let upto =
        a.until(|v| v["type"] == "stream_event" && v["event"]["type"] == "content_block_delta");
    assert_eq!(
        harness::labels(&upto),
        [
            "system/init",
            "system/session_state_changed:running",
            "stream_event",
            "stream_event",
            "stream_event",
        ]
    );
    assert_eq!(
        stream_events(&upto),
        ["message_start", "content_block_start", "delta:text_delta"]
    );
    assert_eq!(upto[4]["event"]["delta"]["text"], "Hello");

    a.send(&harness::control("int-1", "interrupt"));
    let rest = a.turn();
    // WIRE-010/011, PROFILE §8: no pending permission, no tool use, no task: the
    // acknowledgement, the result, idle; no partial assistant record.
    assert_eq!(
        harness::labels(&rest),
        [
            "control_response:success",
            "result:error_during_execution",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(rest[0]["response"]["request_id"], "int-1");
    assert!(rest[0]["response"].get("response").is_none());
    let r = &rest[1];
    assert_eq!(r["stop_reason"], "cancelled", "{r}");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 1);
    // WIRE-012: the cut call reported no price: null, not 0.
    assert_eq!(r["total_cost_usd"], Value::Null);
    assert_eq!(r["modelUsage"]["gpt-x"]["costUSD"], Value::Null);

    // The server observed the connection closed (waited for, never slept on).
    server.wait_closed(harness::TIMEOUT);

    // The provider still works: a new connection, the whole answer.
    a.send(&harness::user("again"));
    let next = a.turn();
    assert_eq!(
        harness::labels(&next)
            .into_iter()
            .filter(|l| l != "stream_event")
            .collect::<Vec<_>>(),
        [
            "system/session_state_changed:running",
            "assistant:text:Hello world",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(server.requests().len(), 2);
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert_eq!(done.stderr, "");
    done.assert_valid_output();
    let run = Run {
        status: 0,
        records: Vec::new(),
        stdout: String::from_utf8(done.stdout.clone()).unwrap(),
        stderr: done.stderr.clone(),
    };
    assert_no_private_material(&run, &home, &server);
}

/// PROFILE §14: an interrupt while the request is still opening (the server has read it and not
/// answered) closes the connection and ends the turn with `stop_reason: "cancelled"`, in the
/// hard-interrupt order, with no `stream_event` and no assistant record.
#[test]
fn profile_14_interrupt_while_opening_closes_the_connection_through_agentx() {
    let mut server = Server::start_in_thread(vec![Reply::Silent, Reply::Sse(text_stream())]);
    let home = Home::new(&openai_auth(&server));
    let cwd = home.cwd();
    let mut a = harness::Agentx::session(
        &home.0,
        &["--include-partial-messages", "--cwd", cwd.to_str().unwrap()],
    );
    a.send(&harness::user("hello"));
    // The request reached the server (waited for, never slept on).
    server.wait_received(harness::TIMEOUT);
    a.send(&harness::control("int-1", "interrupt"));
    let turn = a.turn();
    assert_eq!(
        harness::labels(&turn),
        [
            "system/init",
            "system/session_state_changed:running",
            "control_response:success",
            "result:error_during_execution",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(turn[2]["response"]["request_id"], "int-1");
    let r = &turn[3];
    assert_eq!(r["stop_reason"], "cancelled", "{r}");
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["total_cost_usd"], Value::Null);
    server.wait_closed(harness::TIMEOUT);

    a.send(&harness::user("again"));
    let next = a.turn();
    assert_eq!(
        harness::labels(&next)
            .into_iter()
            .filter(|l| l != "stream_event")
            .collect::<Vec<_>>(),
        [
            "system/session_state_changed:running",
            "assistant:text:Hello world",
            "result:success",
            "system/session_state_changed:idle",
        ]
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert_eq!(done.stderr, "");
    done.assert_valid_output();
}
