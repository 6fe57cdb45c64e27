//! PROFILE §14 at the driver level: `driver::openai::Client` against a real HTTP/1.1 + SSE
//! server on 127.0.0.1 (tests/provider_http_support), for both provider types: the requests
//! the server receives, the model events of recorded-shaped streams, retries with their exact
//! WARN lines, `Retry-After`, connection refused, cancellation the server observes, and a key
//! echoed in an error body refused by the encoder (WIRE-013).

use crate::provider_http_support;

use std::time::Duration;

use agentx_core::model::{
    Block, Message, ModelEvent as E, ModelRequest, StopReason, ToolSpec, Usage,
};
use agentx_core::registry::{credential_union, parse_auth_json, Provider};
use agentx_openai::{Client, Endpoint, Report};
use agentx_wire::encode::{FailureKind, FrameEncoder};
use agentx_wire::wire::output::AssistantError;
use provider_http_support::*;

const KEY: &str = "sk-test-9f8e7d6c5b4a";

fn provider(json: &str) -> Provider {
    let doc = format!(r#"{{"version":2,"providers":[{json}]}}"#);
    parse_auth_json(doc.as_bytes(), &|_| None)
        .unwrap()
        .providers()[0]
        .clone()
}

fn openai(server: &Server) -> Provider {
    provider(&format!(
        r#"{{"id":"oa","type":"openai","model":"gpt-x","api_key":"{KEY}","organization":"org-test","base_url":"{}","reasoning":{{"efforts":["low","high"],"default_effort":"high"}}}}"#,
        server.base_url()
    ))
}

fn azure(server: &Server) -> Provider {
    provider(&format!(
        r#"{{"id":"az","type":"azure_openai","model":"gpt-5.6-sol","endpoint":"http://127.0.0.1:{}/","deployment":"sol-prod-7","api_version":"2026-10-01-preview","api_key":"{KEY}"}}"#,
        server.port
    ))
}

fn request(effort: Option<&str>, messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        turn: 1,
        index: 0,
        model: "gpt-x".into(),
        effort: effort.map(Into::into),
        messages: messages.into(),
        tools: vec![ToolSpec {
            name: "Read".into(),
            description: "Read a UTF-8 text file".into(),
            input_schema: r#"{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}"#.into(),
        }],
        system: None,
        output_schema: None,
    }
}

fn prompt(text: &str) -> Vec<Message> {
    vec![Message::user(text)]
}

/// Runs one call with a deadline; returns its reports.
async fn call(client: &Client, req: &ModelRequest) -> Vec<Report> {
    let mut reports = Vec::new();
    tokio::time::timeout(
        Duration::from_secs(60),
        client.call(req, std::future::pending::<()>(), &mut |r| reports.push(r)),
    )
    .await
    .expect("the call ends");
    reports
}

fn events(reports: &[Report]) -> Vec<E> {
    reports
        .iter()
        .filter_map(|r| match r {
            Report::Event(e) => Some(e.clone()),
            Report::Warn(_) => None,
        })
        .collect()
}

fn warns(reports: &[Report]) -> Vec<String> {
    reports
        .iter()
        .filter_map(|r| match r {
            Report::Warn(w) => Some(w.clone()),
            Report::Event(_) => None,
        })
        .collect()
}

/// The minted message id of a stream (checked for shape), to build the expected events.
fn message_id(events: &[E]) -> String {
    let Some(E::MessageStart { message_id }) = events.first() else {
        panic!("no MessageStart first: {events:?}");
    };
    assert!(
        message_id.starts_with("msg_") && message_id.len() == 28,
        "{message_id}"
    );
    message_id.clone()
}

fn usage(input: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    }
}

fn client(p: &Provider) -> Client {
    Client::new(Endpoint::of(p).unwrap()).unwrap()
}

#[tokio::test]
async fn profile_14_openai_text_stream_and_the_request_it_sends() {
    let server = Server::start(vec![Reply::Sse(text_stream())]).await;
    let history = vec![
        Message::user("read a"),
        Message::Assistant {
            message_id: "msg_prev".into(),
            blocks: vec![
                Block::Text("Sure.".into()),
                Block::ToolUse {
                    id: "call_1".into(),
                    name: "Read".into(),
                    input: r#"{"file_path":"a"}"#.into(),
                },
            ],
        },
        Message::ToolResult {
            tool_use_id: "call_1".into(),
            content: "1\thello".into(),
            is_error: false,
        },
    ];
    let reports = call(&client(&openai(&server)), &request(Some("high"), history)).await;
    let ev = events(&reports);
    let id = message_id(&ev);
    assert_eq!(
        ev,
        vec![
            E::MessageStart { message_id: id },
            E::TextStart { index: 0 },
            E::TextDelta {
                index: 0,
                text: "Hello".into()
            },
            E::TextDelta {
                index: 0,
                text: " world".into()
            },
            E::BlockStop { index: 0 },
            E::MessageStop {
                stop_reason: StopReason::EndTurn,
                usage: usage(12, 3),
                cost: None
            },
        ]
    );
    assert!(warns(&reports).is_empty());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.target, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("openai-organization"), Some("org-test"));
    assert_eq!(r.header("api-key"), None);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("accept"), Some("text/event-stream"));
    assert_eq!(
        r.body_str(),
        concat!(
            r#"{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"reasoning_effort":"high","#,
            r#""messages":[{"role":"user","content":"read a"},"#,
            r#"{"role":"assistant","content":"Sure.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}}]},"#,
            r#"{"role":"tool","tool_call_id":"call_1","content":"1\thello"}],"#,
            r#""tools":[{"type":"function","function":{"name":"Read","description":"Read a UTF-8 text file","#,
            r#""parameters":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}}]}"#
        )
    );
}

#[tokio::test]
async fn profile_14_azure_one_tool_call_and_the_request_it_sends() {
    let server = Server::start(vec![Reply::Sse(one_tool_stream("call_DdmO9", "a.txt"))]).await;
    let reports = call(
        &client(&azure(&server)),
        &request(None, prompt("read a.txt")),
    )
    .await;
    let ev = events(&reports);
    let id = message_id(&ev);
    assert_eq!(
        ev,
        vec![
            E::MessageStart { message_id: id },
            E::ToolUseStart {
                index: 0,
                id: "call_DdmO9".into(),
                name: "Read".into()
            },
            E::InputJsonDelta {
                index: 0,
                partial_json: "{\"".into()
            },
            E::InputJsonDelta {
                index: 0,
                partial_json: "file_path\":".into()
            },
            E::InputJsonDelta {
                index: 0,
                partial_json: "\"a.txt\"}".into()
            },
            E::BlockStop { index: 0 },
            E::MessageStop {
                stop_reason: StopReason::ToolUse,
                usage: usage(80, 17),
                cost: None
            },
        ]
    );
    let r = &server.requests()[0];
    assert_eq!(
        r.target,
        "/openai/deployments/sol-prod-7/chat/completions?api-version=2026-10-01-preview"
    );
    assert_eq!(r.header("api-key"), Some(KEY));
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.header("openai-organization"), None);
    assert!(r.body_str().starts_with(
        r#"{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"read a.txt"}],"tools":["#
    ));
}

#[tokio::test]
async fn profile_14_two_parallel_tool_calls_with_split_arguments() {
    let server = Server::start(vec![Reply::Sse(parallel_stream())]).await;
    let ev = events(&call(&client(&openai(&server)), &request(None, prompt("both"))).await);
    let id = message_id(&ev);
    assert_eq!(
        ev,
        vec![
            E::MessageStart { message_id: id },
            E::TextStart { index: 0 },
            E::TextDelta {
                index: 0,
                text: "Checking both.".into()
            },
            E::BlockStop { index: 0 },
            E::ToolUseStart {
                index: 1,
                id: "call_a".into(),
                name: "Bash".into()
            },
            E::InputJsonDelta {
                index: 1,
                partial_json: "{\"comm".into()
            },
            E::InputJsonDelta {
                index: 1,
                partial_json: "and\":\"ls\"}".into()
            },
            E::BlockStop { index: 1 },
            E::ToolUseStart {
                index: 2,
                id: "call_b".into(),
                name: "Read".into()
            },
            E::InputJsonDelta {
                index: 2,
                partial_json: "{\"file_".into()
            },
            E::InputJsonDelta {
                index: 2,
                partial_json: "path\":\"b.txt\"}".into()
            },
            E::BlockStop { index: 2 },
            E::MessageStop {
                stop_reason: StopReason::ToolUse,
                usage: usage(100, 40),
                cost: None
            },
        ]
    );
}

#[tokio::test]
async fn profile_14_429_then_success_one_warn_line() {
    let server = Server::start(vec![
        status(
            429,
            &[("retry-after", "0")],
            r#"{"error":{"message":"slow down"}}"#,
        ),
        Reply::Sse(text_stream()),
    ])
    .await;
    let reports = call(&client(&openai(&server)), &request(None, prompt("x"))).await;
    assert_eq!(
        warns(&reports),
        vec!["agentx: WARN provider retry 1/3: 429"]
    );
    // The WARN comes before any event of the successful attempt.
    assert!(matches!(reports[0], Report::Warn(_)));
    assert!(matches!(
        events(&reports).last(),
        Some(E::MessageStop {
            stop_reason: StopReason::EndTurn,
            ..
        })
    ));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0].body, server.requests()[1].body);
}

#[tokio::test]
async fn profile_14_503_on_every_attempt_three_retries_then_server_error() {
    let reply = status(
        503,
        &[("retry-after", "0")],
        r#"{"error":{"message":"The engine is currently overloaded","type":"server_error"}}"#,
    );
    let server = Server::start(vec![reply.clone(), reply.clone(), reply.clone(), reply]).await;
    let reports = call(&client(&openai(&server)), &request(None, prompt("x"))).await;
    assert_eq!(
        reports,
        vec![
            Report::Warn("agentx: WARN provider retry 1/3: 503".into()),
            Report::Warn("agentx: WARN provider retry 2/3: 503".into()),
            Report::Warn("agentx: WARN provider retry 3/3: 503".into()),
            Report::Event(E::Failed {
                category: AssistantError::ServerError,
                message: Some("The engine is currently overloaded".into()),
            }),
        ]
    );
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test]
async fn profile_14_retry_after_seconds_and_backoff_are_honoured() {
    let server = Server::start(vec![
        status(429, &[("retry-after", "1")], "{}"),
        status(503, &[], "{}"),
        Reply::Sse(text_stream()),
    ])
    .await;
    let reports = call(&client(&openai(&server)), &request(None, prompt("x"))).await;
    assert_eq!(
        warns(&reports),
        vec![
            "agentx: WARN provider retry 1/3: 429",
            "agentx: WARN provider retry 2/3: 503"
        ]
    );
    let reqs = server.requests();
    let gap1 = reqs[1].at - reqs[0].at;
    let gap2 = reqs[2].at - reqs[1].at;
    // Retry-After: 1 → one second; no header on retry 2 → 500 ms × 2^(2−1).
    assert!(
        gap1 >= Duration::from_millis(1000) && gap1 < Duration::from_secs(5),
        "{gap1:?}"
    );
    assert!(
        gap2 >= Duration::from_millis(1000) && gap2 < Duration::from_secs(5),
        "{gap2:?}"
    );
}

#[tokio::test]
async fn profile_14_non_retryable_statuses_end_at_once_with_their_category() {
    for (code, category) in [
        (400, AssistantError::InvalidRequest),
        (401, AssistantError::AuthenticationFailed),
        (402, AssistantError::BillingError),
        (403, AssistantError::AuthenticationFailed),
        (404, AssistantError::InvalidRequest),
        (413, AssistantError::InvalidRequest),
        (422, AssistantError::InvalidRequest),
        (409, AssistantError::Unknown),
    ] {
        let server = Server::start(vec![status(code, &[], "not json")]).await;
        let reports = call(&client(&openai(&server)), &request(None, prompt("x"))).await;
        assert_eq!(
            reports,
            vec![Report::Event(E::Failed {
                category,
                message: None
            })],
            "{code}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn profile_14_connection_refused_three_retries_then_unknown() {
    let refused = refused_port();
    let port = refused.port;
    let p = provider(&format!(
        r#"{{"id":"oa","type":"openai","model":"m","api_key":"{KEY}","base_url":"http://127.0.0.1:{port}/v1"}}"#
    ));
    let reports = call(&client(&p), &request(None, prompt("x"))).await;
    assert_eq!(
        reports,
        vec![
            Report::Warn("agentx: WARN provider retry 1/3: connection refused".into()),
            Report::Warn("agentx: WARN provider retry 2/3: connection refused".into()),
            Report::Warn("agentx: WARN provider retry 3/3: connection refused".into()),
            Report::Event(E::Failed {
                category: AssistantError::Unknown,
                message: None
            }),
        ]
    );
}

#[tokio::test]
async fn profile_14_interrupt_mid_stream_closes_the_connection_and_cancels() {
    let mut chunks = text_stream();
    chunks.truncate(2); // role chunk, "Hello"; then the server waits
    let mut server = Server::start(vec![Reply::SseHang(chunks)]).await;
    let c = client(&openai(&server));
    let req = request(None, prompt("x"));
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let mut reports = Vec::new();
    let cancel = async move {
        let _ = rx.wait_for(|v| *v).await;
    };
    tokio::time::timeout(
        Duration::from_secs(30),
        c.call(&req, cancel, &mut |r| {
            if matches!(r, Report::Event(E::TextDelta { .. })) {
                let _ = tx.send(true);
            }
            reports.push(r);
        }),
    )
    .await
    .expect("the call ends after the interrupt");
    let ev = events(&reports);
    let id = message_id(&ev);
    assert_eq!(
        ev,
        vec![
            E::MessageStart { message_id: id },
            E::TextStart { index: 0 },
            E::TextDelta {
                index: 0,
                text: "Hello".into()
            },
            E::Cancelled,
        ]
    );
    // The server sees the connection closed.
    tokio::time::timeout(Duration::from_secs(10), server.closed.recv())
        .await
        .expect("the server observed the close")
        .unwrap();
}

/// The `agentx` path: `BlockingClient` (a current-thread runtime that runs only inside a
/// call). A cancelled call shuts its runtime down before reporting `Cancelled`, so the socket
/// is closed although no call drives the runtime afterwards; the next call builds a fresh one.
#[test]
fn profile_14_blocking_client_interrupt_closes_the_connection_and_the_next_call_works() {
    use agentx_openai::{BlockingClient, Interrupt};
    let mut chunks = text_stream();
    chunks.truncate(2);
    let mut server =
        Server::start_in_thread(vec![Reply::SseHang(chunks), Reply::Sse(text_stream())]);
    let c = BlockingClient::new(Endpoint::of(&openai(&server)).unwrap()).unwrap();
    let req = request(None, prompt("x"));
    let interrupt = Interrupt::new();
    let mut reports = Vec::new();
    c.call(&req, &interrupt, &mut |r| {
        if matches!(r, Report::Event(E::TextDelta { .. })) {
            interrupt.trigger();
        }
        reports.push(r);
    });
    let ev = events(&reports);
    assert_eq!(ev.len(), 4, "{ev:?}");
    assert_eq!(ev[3], E::Cancelled);
    // Nothing drives a runtime now: the close happened inside the cancelled call.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(30), server.closed.recv()).await
    })
    .expect("the server observed the close")
    .unwrap();

    interrupt.reset();
    let mut reports = Vec::new();
    c.call(&req, &interrupt, &mut |r| reports.push(r));
    let ev = events(&reports);
    let id = message_id(&ev);
    assert_eq!(
        ev.last(),
        Some(&E::MessageStop {
            stop_reason: StopReason::EndTurn,
            usage: usage(12, 3),
            cost: None
        }),
        "{ev:?} {id}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn profile_14_interrupt_during_a_retry_wait_cancels() {
    let server = Server::start(vec![status(429, &[("retry-after", "30")], "{}")]).await;
    let c = client(&openai(&server));
    let req = request(None, prompt("x"));
    let (tx, mut rx) = tokio::sync::watch::channel(false);
    let mut reports = Vec::new();
    let started = std::time::Instant::now();
    c.call(
        &req,
        async move {
            let _ = rx.wait_for(|v| *v).await;
        },
        &mut |r| {
            if matches!(r, Report::Warn(_)) {
                let _ = tx.send(true);
            }
            reports.push(r);
        },
    )
    .await;
    assert_eq!(
        reports,
        vec![
            Report::Warn("agentx: WARN provider retry 1/3: 429".into()),
            Report::Event(E::Cancelled)
        ]
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn profile_14_after_the_first_body_byte_failures_end_the_call_without_retry() {
    // A dropped stream: unknown.
    let mut chunks = text_stream();
    chunks.truncate(3);
    let server = Server::start(vec![Reply::Sse(chunks)]).await;
    let reports = call(&client(&openai(&server)), &request(None, prompt("x"))).await;
    assert_eq!(
        events(&reports).last(),
        Some(&E::Failed {
            category: AssistantError::Unknown,
            message: None
        })
    );
    assert!(warns(&reports).is_empty());
    assert_eq!(server.requests().len(), 1);
    // An error event in the stream: server_error with its message.
    let server = Server::start(vec![Reply::Sse(vec![
        delta(r#"{"content":"Hi"}"#, "null"),
        b"data: {\"error\":{\"message\":\"stream broke\",\"type\":\"server_error\"}}\n\n".to_vec(),
    ])])
    .await;
    let reports = call(&client(&openai(&server)), &request(None, prompt("x"))).await;
    assert_eq!(
        events(&reports).last(),
        Some(&E::Failed {
            category: AssistantError::ServerError,
            message: Some("stream broke".into())
        })
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn wire_013_a_key_echoed_in_an_error_body_is_refused_by_the_encoder() {
    let body = format!(
        r#"{{"error":{{"message":"Incorrect API key provided: {KEY}.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
    );
    let server = Server::start(vec![status(401, &[], &body)]).await;
    let p = openai(&server);
    let reports = call(&client(&p), &request(None, prompt("x"))).await;
    let [Report::Event(E::Failed {
        category,
        message: Some(message),
    })] = &reports[..]
    else {
        panic!("{reports:?}");
    };
    assert_eq!(*category, AssistantError::AuthenticationFailed);
    // The driver forwards the provider's text; the session drops a message holding a key
    // (PROFILE §14, `tests/providers/provider_http_agentx.rs`). Should a record carry it anyway, the
    // encoder holding the registry's credential union refuses it, writes nothing, and latches.
    let mut encoder = FrameEncoder::new();
    let doc = format!(
        r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"m","api_key":"{KEY}"}}]}}"#
    );
    let registry = parse_auth_json(doc.as_bytes(), &|_| None).unwrap();
    encoder
        .set_credentials(credential_union(&registry).unwrap())
        .unwrap();
    let result = encoder.encode_with(|out| {
        out.extend_from_slice(
            br#"{"type":"assistant","message":{"content":[{"type":"text","text":"#,
        );
        agentx_wire::json::write_str(out, message);
        out.extend_from_slice(br#"}]},"error":"authentication_failed"}"#);
    });
    // No frame is handed out, so nothing can be written.
    assert!(result.is_err());
    assert_eq!(
        encoder.failure().map(|f| f.kind()),
        Some(FailureKind::Validation)
    );
}
