//! PROFILE §16 structured output with an `openai` provider, through the real `agentx` (SDK
//! profile) against the local HTTP/1.1 + SSE server (tests/provider_http_support): every
//! request carries the schema as `response_format` `json_schema`; an answer that fails the
//! schema is followed by a second request whose last message is the corrective user message;
//! the valid answer is the result's `structured_output`.

use crate::provider_http_support;

use provider_http_support::agentx_home::*;
use provider_http_support::*;
use serde_json::{json, Value};

const SCHEMA: &str =
    r#"{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}"#;

/// One streamed text answer, `stop`.
fn answer(text: &str) -> Vec<Vec<u8>> {
    vec![
        delta(r#"{"role":"assistant","content":""}"#, "null"),
        delta(&json!({ "content": text }).to_string(), "null"),
        delta("{}", r#""stop""#),
        usage(5, 2),
        done(),
    ]
}

fn sdk_run(home: &Home, extra: &[&str], prompt: &str) -> (i32, Vec<Value>, String) {
    stream_session(home, &[&["--verbose"], extra].concat(), &[prompt])
}

#[test]
fn profile_16_openai_sends_response_format_and_retries_with_the_validation_error() {
    let server = Server::start_in_thread(vec![
        Reply::Sse(answer(r#"{"answer":"forty-two"}"#)),
        Reply::Sse(answer(r#"{"answer":42}"#)),
    ]);
    let home = Home::new(&openai_auth(&server));
    let schema = format!("--json-schema={SCHEMA}");
    let (status, records, stderr) = sdk_run(&home, &[&schema], "what is the answer?");
    assert_eq!(status, 0, "{stderr}");
    let results: Vec<&Value> = records.iter().filter(|r| r["type"] == "result").collect();
    assert_eq!(results.len(), 1, "{records:?}");
    let r = results[0];
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["structured_output"], json!({"answer": 42}));
    assert_eq!(r["num_turns"], 2);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let expected_format = json!({
        "type": "json_schema",
        "json_schema": {
            "name": "structured_output",
            "strict": false,
            "schema": serde_json::from_str::<Value>(SCHEMA).unwrap(),
        }
    });
    for req in &reqs {
        let body: Value = crate::conversation(&req.body);
        assert_eq!(body["response_format"], expected_format);
    }
    let second: Value = crate::conversation(&reqs[1].body);
    let messages = second["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[0]["content"], "what is the answer?");
    assert_eq!(messages[1]["role"], "assistant");
    assert_eq!(messages[1]["content"], r#"{"answer":"forty-two"}"#);
    assert_eq!(messages[2]["role"], "user");
    let corrective = messages[2]["content"].as_str().unwrap();
    assert!(
        corrective.starts_with(
            "structured output: the answer does not match the JSON schema: at /answer: "
        ),
        "{corrective}"
    );
}

#[test]
fn profile_16_without_a_schema_no_response_format_is_sent() {
    let server = Server::start_in_thread(vec![Reply::Sse(answer("plain"))]);
    let home = Home::new(&openai_auth(&server));
    let (status, records, stderr) = sdk_run(&home, &[], "hi");
    assert_eq!(status, 0, "{stderr}");
    let r = records.iter().find(|r| r["type"] == "result").unwrap();
    assert_eq!(r["subtype"], "success");
    assert!(r.get("structured_output").is_none());
    let body: Value = crate::conversation(&server.requests()[0].body);
    assert!(body.get("response_format").is_none());
}
