//! PROFILE §16 structured output through the session core on a virtual clock: the final text
//! of a turn is checked as one JSON value against the schema (`--json-schema`, or initialize
//! `jsonSchema`, which wins); valid → the result carries `structured_output`; invalid → the
//! model is asked again with the validation error, at most 2 more times, then `result` subtype
//! `error_max_structured_output_retries` (`is_error` true). The corrective prompts are kept in
//! the transcript, so a resume rebuilds the context the model saw (PROFILE §11).

use crate::session_sim;

use agentx_core::model::{Message, ModelEvent};
use agentx_core::session::structured::{OutputSchema, MAX_ATTEMPTS};
use agentx_core::session::{Action, Profile, SessionConfig, TurnLimits};
use serde_json::{json, Value};
use session_sim::*;

const SCHEMA: &str =
    r#"{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}"#;

fn with_schema(schema: &str) -> SessionConfig {
    let mut c = config();
    c.profile = Profile::Sdk;
    c.output_schema = Some(OutputSchema::compile(schema).expect("a valid schema"));
    c
}

fn last_user_text(m: &[Message]) -> &str {
    match m.last() {
        Some(Message::User { text, .. }) => text,
        other => panic!("last message is not a user message: {other:?}"),
    }
}

/// The labels, an assistant text's content left out.
fn kinds(sim: &Sim) -> Vec<String> {
    sim.labels()
        .into_iter()
        .map(|l| {
            if l.starts_with("assistant:text") {
                "assistant:text".into()
            } else {
                l
            }
        })
        .collect()
}

fn result(sim: &Sim) -> &Value {
    sim.last_of("result")
}

#[test]
fn profile_16_a_valid_first_answer_is_the_structured_output() {
    let mut sim = Sim::new(with_schema(SCHEMA));
    sim.script(text_reply("msg_1", r#"{ "answer" : 42 }"#, None));
    sim.send(&user("answer"));
    assert_eq!(
        kinds(&sim),
        [
            "init",
            "state:running",
            "assistant:text",
            "result:success",
            "state:idle"
        ]
    );
    let r = result(&sim);
    assert_eq!(r["is_error"], false);
    assert_eq!(r["structured_output"], json!({"answer": 42}));
    assert_eq!(r["result"], r#"{ "answer" : 42 }"#);
    assert_eq!(r["num_turns"], 1);
    // Every request carries the schema (openai providers send it as `response_format`).
    assert_eq!(sim.requests.len(), 1);
    assert_eq!(sim.requests[0].output_schema.as_deref(), Some(SCHEMA));
}

/// The edge of "at most 2 more times": the 3rd answer is still asked for, and accepted.
#[test]
fn profile_16_valid_at_the_third_attempt_is_accepted() {
    let mut sim = Sim::new(with_schema(SCHEMA));
    sim.script(text_reply("msg_1", r#""forty-two""#, None));
    sim.script(text_reply("msg_2", "echo: not json", None));
    sim.script(text_reply("msg_3", r#"{"answer":42}"#, None));
    sim.send(&user("answer"));
    assert_eq!(
        kinds(&sim),
        [
            "init",
            "state:running",
            "assistant:text",
            "assistant:text",
            "assistant:text",
            "result:success",
            "state:idle"
        ]
    );
    assert_eq!(sim.requests.len(), 3);
    // Each retry asks again with the validation error of the answer before it.
    let second = last_user_text(&sim.requests[1].messages);
    assert!(
        second.starts_with("structured output: the answer does not match the JSON schema: at /: "),
        "{second}"
    );
    assert!(second.ends_with(
        "Answer again with only one JSON value that is valid against the required JSON schema."
    ));
    let third = last_user_text(&sim.requests[2].messages);
    assert!(
        third.starts_with("structured output: the answer is not one JSON value (malformed JSON"),
        "{third}"
    );
    // The context grows by the answer and the corrective prompt each time.
    assert_eq!(sim.requests[1].messages.len(), 3);
    assert_eq!(sim.requests[2].messages.len(), 5);
    let r = result(&sim);
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["structured_output"], json!({"answer": 42}));
    assert_eq!(r["num_turns"], 3);
    // The corrective prompts are the agent's own: never written to stdout.
    assert_eq!(sim.of("user").len(), 0);
}

#[test]
fn profile_16_still_invalid_after_three_attempts_is_rejected() {
    let mut sim = Sim::new(with_schema(SCHEMA));
    for i in 1..=MAX_ATTEMPTS {
        sim.script(text_reply(&format!("msg_{i}"), r#"{"answer":"x"}"#, None));
    }
    // A 4th script that must never be asked for.
    sim.script(text_reply("msg_4", r#"{"answer":4}"#, None));
    sim.send(&user("answer"));
    assert_eq!(sim.requests.len(), 3);
    assert_eq!(
        kinds(&sim),
        [
            "init",
            "state:running",
            "assistant:text",
            "assistant:text",
            "assistant:text",
            "result:error_max_structured_output_retries",
            "state:idle"
        ]
    );
    let r = result(&sim);
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 3);
    assert!(r.get("structured_output").is_none() || r["structured_output"].is_null());
    let errors = r["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    let e = errors[0].as_str().unwrap();
    assert!(
        e.starts_with(
            "structured output not valid after 3 attempts: the answer does not match the JSON \
             schema: at /answer: "
        ),
        "{e}"
    );
    // The session goes on: the next turn gets the script the first never asked for.
    sim.send(&user("again"));
    let r = result(&sim);
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["structured_output"], json!({"answer": 4}));
}

/// PROFILE §11: the corrective prompts are in the transcript, and a resume rebuilds exactly
/// the context of the last request plus the final answer.
#[test]
fn profile_16_corrective_prompts_are_kept_for_resume() {
    let mut sim = Sim::new(with_schema(SCHEMA));
    sim.script(text_reply("msg_1", "1", None));
    sim.script(text_reply("msg_2", r#"{"answer":2}"#, None));
    sim.send(&user("answer"));
    assert_eq!(result(&sim)["subtype"], "success");
    let lines: Vec<Vec<u8>> = sim
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Persist { lines, .. } => Some(lines.iter().map(|l| l.to_vec())),
            _ => None,
        })
        .flatten()
        .map(|mut l| {
            if l.last() == Some(&b'\n') {
                l.pop();
            }
            l
        })
        .collect();
    let context = agentx_core::transcript::context::prior_context(&lines).unwrap();
    let mut live = sim.requests[1].messages.as_ref().clone();
    live.push(Message::Assistant {
        message_id: "msg_2".into(),
        blocks: vec![agentx_core::model::Block::Text(r#"{"answer":2}"#.into())],
    });
    assert_eq!(context, live);
}

/// The answer is the final request's text: text of an earlier request (before a tool) is not
/// part of it.
#[test]
fn profile_16_the_answer_is_the_last_requests_text() {
    let mut sim = Sim::new(with_schema(SCHEMA));
    let mut first = vec![
        ev(ModelEvent::MessageStart {
            message_id: "msg_1".into(),
        }),
        ev(ModelEvent::TextStart { index: 0 }),
        ev(ModelEvent::TextDelta {
            index: 0,
            text: "let me look".into(),
        }),
        ev(ModelEvent::BlockStop { index: 0 }),
    ];
    first.extend(
        tool_reply("msg_1", &[("toolu_1", "Read", r#"{"file_path":"a"}"#)])
            .into_iter()
            .skip(1)
            .map(|s| match s {
                Step::Event(ModelEvent::ToolUseStart { id, name, .. }) => {
                    ev(ModelEvent::ToolUseStart { index: 1, id, name })
                }
                Step::Event(ModelEvent::InputJsonDelta { partial_json, .. }) => {
                    ev(ModelEvent::InputJsonDelta {
                        index: 1,
                        partial_json,
                    })
                }
                Step::Event(ModelEvent::BlockStop { .. }) => ev(ModelEvent::BlockStop { index: 1 }),
                other => other,
            }),
    );
    sim.script(first);
    sim.script(text_reply("msg_2", r#"{"answer":7}"#, None));
    sim.send(&user("look"));
    let r = result(&sim);
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["structured_output"], json!({"answer": 7}));
    assert_eq!(sim.requests.len(), 2);
}

/// PROFILE §15's limits hold for the corrective requests: `--max-turns 2` ends the turn
/// `error_max_turns` instead of a 3rd attempt.
#[test]
fn profile_16_retries_respect_max_turns() {
    let mut c = with_schema(SCHEMA);
    c.limits = TurnLimits {
        max_turns: Some(2),
        max_budget: None,
    };
    let mut sim = Sim::new(c);
    for i in 1..=3 {
        sim.script(text_reply(&format!("msg_{i}"), "null", None));
    }
    sim.send(&user("answer"));
    assert_eq!(sim.requests.len(), 2);
    let r = result(&sim);
    assert_eq!(r["subtype"], "error_max_turns");
    assert_eq!(r["errors"], json!(["max turns reached: 2"]));
}

/// A turn that failed ends as it would without a schema: no retry.
#[test]
fn profile_16_a_failed_turn_is_not_retried() {
    let mut sim = Sim::new(with_schema(SCHEMA));
    sim.script(vec![
        ev(ModelEvent::MessageStart {
            message_id: "msg_1".into(),
        }),
        ev(ModelEvent::Failed {
            category: agentx_wire::wire::output::AssistantError::RateLimit,
            message: None,
        }),
    ]);
    sim.send(&user("answer"));
    assert_eq!(sim.requests.len(), 1);
    assert_eq!(result(&sim)["subtype"], "error_during_execution");
}

/// Without a schema nothing changes: no `structured_output`, no retry, no schema sent.
#[test]
fn profile_16_without_a_schema_nothing_is_checked() {
    let mut c = config();
    c.profile = Profile::Sdk;
    let mut sim = Sim::new(c);
    sim.script(text_reply("msg_1", "not json", None));
    sim.send(&user("x"));
    assert_eq!(sim.requests.len(), 1);
    assert_eq!(sim.requests[0].output_schema, None);
    let r = result(&sim);
    assert_eq!(r["subtype"], "success");
    assert!(r.get("structured_output").is_none());
}

fn initialize(id: &str, extra: Value) -> String {
    let mut req = json!({"subtype": "initialize"});
    for (k, v) in extra.as_object().unwrap() {
        req[k] = v.clone();
    }
    control(id, req)
}

fn response<'a>(sim: &'a Sim, id: &str) -> &'a Value {
    sim.of("control_response")
        .into_iter()
        .find(|r| r["response"]["request_id"] == id)
        .unwrap_or_else(|| panic!("no response to {id}"))
}

/// PROFILE §16: initialize `jsonSchema` wins over `--json-schema` when they differ; a schema
/// that does not compile is a correlated error naming the member (and changes nothing).
#[test]
fn profile_16_initialize_json_schema_wins_and_a_bad_one_is_refused() {
    // `--json-schema` asks for an object; initialize for a string.
    let mut sim = Sim::new(with_schema(SCHEMA));
    sim.send(&initialize("init_bad", json!({"jsonSchema": {"type": 7}})));
    let r = response(&sim, "init_bad");
    assert_eq!(r["response"]["subtype"], "error");
    let e = r["response"]["error"].as_str().unwrap();
    assert!(
        e.starts_with("initialize.jsonSchema: not a valid JSON Schema ("),
        "{e}"
    );
    sim.send(&initialize(
        "init_ok",
        json!({"jsonSchema": {"type": "string"}, "hooks": null}),
    ));
    assert_eq!(response(&sim, "init_ok")["response"]["subtype"], "success");
    sim.script(text_reply("msg_1", r#""a string""#, None));
    sim.send(&user("answer"));
    let r = result(&sim);
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["structured_output"], json!("a string"));
    assert_eq!(
        sim.requests[0].output_schema.as_deref(),
        Some(r#"{"type":"string"}"#)
    );
}

/// A schema given only through initialize (the Python SDK passes `--json-schema`, TypeScript
/// both): `jsonSchema` alone turns structured output on.
#[test]
fn profile_16_initialize_json_schema_alone() {
    let mut c = config();
    c.profile = Profile::Sdk;
    let mut sim = Sim::new(c);
    sim.send(&initialize(
        "i",
        json!({"jsonSchema": serde_json::from_str::<Value>(SCHEMA).unwrap()}),
    ));
    assert_eq!(response(&sim, "i")["response"]["subtype"], "success");
    for i in 1..=3 {
        sim.script(text_reply(&format!("msg_{i}"), "[]", None));
    }
    sim.send(&user("answer"));
    assert_eq!(
        result(&sim)["subtype"],
        "error_max_structured_output_retries"
    );
}
