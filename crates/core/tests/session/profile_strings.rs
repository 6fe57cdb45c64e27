//! PROFILE §5's fixed strings, asserted verbatim (the text below is copied from PROFILE.md, not
//! from our constants), both as `wire::responses` declares them and as the session answers
//! with them over the wire (PROFILE §8: `set_permission_mode` gets its error whatever its
//! payload holds).

use crate::session_sim;

use agentx_wire::wire::responses;
use serde_json::{json, Value};
use session_sim::*;

const SET_MODEL: &str =
    "provider and model are fixed for this process; restart with --provider <id>";
const SET_PERMISSION_MODE: &str =
    "live permission-mode changes are unavailable; start a new session with --permission-mode";
const SET_MAX_THINKING_TOKENS: &str =
    "reasoning effort is declared by the provider; it is not a thinking-token budget";
const CONTROL_STREAM_CLOSED: &str = "control stream closed";

#[test]
fn wire_declares_the_profile_5_strings_verbatim() {
    assert_eq!(responses::SET_MODEL_ERROR, SET_MODEL);
    assert_eq!(responses::SET_PERMISSION_MODE_ERROR, SET_PERMISSION_MODE);
    assert_eq!(
        responses::SET_MAX_THINKING_TOKENS_ERROR,
        SET_MAX_THINKING_TOKENS
    );
    assert_eq!(responses::CONTROL_STREAM_CLOSED, CONTROL_STREAM_CLOSED);
    assert_eq!(
        responses::unsupported_control_request("set_provider"),
        r#"unsupported control request "set_provider""#
    );
    // At most 64 bytes of the subtype are echoed.
    assert_eq!(
        responses::unsupported_control_request(&"x".repeat(65)),
        format!(r#"unsupported control request "{}""#, "x".repeat(64))
    );
    assert_eq!(
        responses::unsupported_control_request(&"x".repeat(64)),
        format!(r#"unsupported control request "{}""#, "x".repeat(64))
    );
    // The subtype is spelled as a JSON string, as agentx has always answered (one text for the
    // session and the host).
    assert_eq!(
        responses::unsupported_control_request("a\"b\n"),
        r#"unsupported control request "a\"b\n""#
    );
}

/// The correlated error the session wrote for `request_id`.
fn error_for<'a>(sim: &'a Sim, request_id: &str) -> &'a Value {
    let matching: Vec<&Value> = sim
        .of("control_response")
        .into_iter()
        .filter(|r| r["response"]["request_id"] == request_id)
        .collect();
    assert_eq!(matching.len(), 1, "{request_id}: {:?}", sim.out);
    assert_eq!(matching[0]["response"]["subtype"], "error", "{request_id}");
    &matching[0]["response"]["error"]
}

#[test]
fn the_session_answers_with_the_profile_5_strings() {
    let mut sim = Sim::local();
    let cases = [
        (
            "m1",
            json!({"subtype":"set_model","model":"gpt-5.6-sol"}),
            SET_MODEL.to_string(),
        ),
        ("m2", json!({"subtype":"set_model"}), SET_MODEL.to_string()),
        (
            "p1",
            json!({"subtype":"set_permission_mode","mode":"plan"}),
            SET_PERMISSION_MODE.to_string(),
        ),
        (
            "p2",
            json!({"subtype":"set_permission_mode"}),
            SET_PERMISSION_MODE.to_string(),
        ),
        (
            "p3",
            json!({"subtype":"set_permission_mode","mode":42}),
            SET_PERMISSION_MODE.to_string(),
        ),
        (
            "p4",
            json!({"subtype":"set_permission_mode","mode":{"x":[1]},"extra":null}),
            SET_PERMISSION_MODE.to_string(),
        ),
        (
            "t1",
            json!({"subtype":"set_max_thinking_tokens","max_thinking_tokens":1024}),
            SET_MAX_THINKING_TOKENS.to_string(),
        ),
        (
            "u1",
            json!({"subtype":"set_provider","provider":"x"}),
            r#"unsupported control request "set_provider""#.to_string(),
        ),
    ];
    for (id, request, _) in &cases {
        sim.send(&control(id, request.clone()));
    }
    for (id, _, text) in &cases {
        assert_eq!(error_for(&sim, id), &json!(text), "{id}");
    }
}
