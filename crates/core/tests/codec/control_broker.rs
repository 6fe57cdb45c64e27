//! The control broker on virtual time (WIRE-006..009, WIRE-015, WIRE-EOF-001, PERM-050):
//! acceptance scenarios 4, 7, 13, 19 and 20 at the broker level, asserting the exact frames
//! the emitter received, in order.

use std::time::{Duration, Instant};

use agentx_wire::control::{
    Broker, Dispatch, Emission, EmissionFailure, Outcome, Payload, Refused, RequestError, Resolved,
    Started, EMISSION_FAILURE_TEXT,
};
use agentx_wire::json::Parser;
use agentx_wire::wire::{ControlResponse, InputRecord, PermissionDecision};

/// Records every emission as its canonical JSON line (a `State` as `state:<s>`).
fn record(
    lines: &mut Vec<String>,
) -> impl FnMut(&mut Broker, Emission<'_>) -> Result<(), Refused> + '_ {
    move |_b: &mut Broker, e: Emission<'_>| {
        lines.push(line_of(&e));
        Ok(())
    }
}

fn line_of(e: &Emission<'_>) -> String {
    if let Emission::State(s) = e {
        return format!("state:{}", s.as_str());
    }
    let mut v = Vec::new();
    e.encode(&mut v);
    String::from_utf8(v).expect("UTF-8 frame")
}

/// Decodes one inbound line as a `control_response` through the strict reader.
fn response(line: &str) -> ControlResponse<'static> {
    match InputRecord::decode_line(line.as_bytes(), &mut Parser::new()) {
        Ok(InputRecord::ControlResponse(r)) => r.into_owned(),
        other => panic!("not a control_response: {other:?}"),
    }
}

fn t0() -> Instant {
    // A fixed origin; tests only add virtual durations to it.
    Instant::now()
}

const CAN_USE_TOOL_T1: &[u8] = br#"{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1","description":"Bash: ls"}"#;

fn can_use_tool(tool_use_id: &str) -> Vec<u8> {
    format!(
        r#"{{"subtype":"can_use_tool","tool_name":"Write","input":{{"file_path":"a.txt","content":"x"}},"tool_use_id":"{tool_use_id}","description":"Write a.txt"}}"#
    )
    .into_bytes()
}

fn pending_id(s: Result<Started, RequestError>) -> String {
    match s {
        Ok(Started::Pending { id }) => id.into(),
        other => panic!("expected a pending request, got {other:?}"),
    }
}

#[test]
fn wire_006_registered_before_the_envelope_reaches_the_emitter() {
    let mut b = Broker::new();
    let mut seen = Vec::new();
    let mut emit = |b: &mut Broker, e: Emission<'_>| {
        if let Emission::Request(r) = e {
            seen.push((
                r.request_id.to_string(),
                b.is_pending(r.request_id.as_str()),
            ));
        }
        Ok(())
    };
    let id = pending_id(b.request_raw(CAN_USE_TOOL_T1, t0(), &mut emit));
    assert_eq!(seen, [("req_1".to_string(), true)]);
    assert_eq!(id, "req_1");
    assert!(b.is_pending("req_1"));
}

#[test]
fn scenario_4_abort_emits_one_cancel_rejects_at_once_and_ignores_the_late_response() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines = Vec::new();
    let id = pending_id(b.request_raw(CAN_USE_TOOL_T1, now, &mut record(&mut lines)));
    assert_eq!(
        lines,
        [
            r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1","description":"Bash: ls"}}"#
        ]
    );
    lines.clear();
    // WIRE-007: one cancel, the waiter rejected immediately.
    let r = b
        .abort(&id, now + Duration::from_millis(5), &mut record(&mut lines))
        .expect("pending")
        .expect("settled now");
    assert_eq!(
        r,
        Resolved {
            id: "req_1".into(),
            tool_use_id: Some("toolu_1".into()),
            outcome: Outcome::Aborted
        }
    );
    assert_eq!(
        lines,
        [r#"{"type":"control_cancel_request","request_id":"req_1"}"#]
    );
    assert_eq!(b.pending_len(), 0);
    // The known-late response is ignored, however often it comes; nothing more is emitted.
    let late = response(
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"behavior":"allow"}}}"#,
    );
    for _ in 0..2 {
        assert_eq!(
            b.handle_response(&late, now, &mut record(&mut lines)),
            Dispatch::KnownLate { id: "req_1".into() }
        );
    }
    assert_eq!(lines.len(), 1);
    // A second abort finds nothing (removed exactly once).
    assert!(b.abort(&id, now, &mut record(&mut lines)).is_err());
}

#[test]
fn scenario_7_the_same_late_tool_response_twice_settles_once() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines = Vec::new();
    let id = pending_id(b.request_raw(&can_use_tool("toolu_7"), now, &mut record(&mut lines)));
    let answer = response(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"behavior":"allow","toolUseID":"toolu_7"}}}}}}"#
    ));
    let first = b.handle_response(&answer, now, &mut record(&mut lines));
    let Dispatch::Resolved(r) = first else {
        panic!("first response resolves: {first:?}")
    };
    assert_eq!(r.tool_use_id.as_deref(), Some("toolu_7"));
    assert!(r
        .outcome
        .decision()
        .is_some_and(PermissionDecision::is_allow));
    for _ in 0..2 {
        assert_eq!(
            b.handle_response(&answer, now, &mut record(&mut lines)),
            Dispatch::Duplicate {
                id: id.clone().into(),
                tool_use_id: "toolu_7".into()
            }
        );
    }
    // The same decision under an unknown request ID: still the resolved tool identity.
    let other = response(
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_99","response":{"behavior":"allow","tool_use_id":"toolu_7"}}}"#,
    );
    assert_eq!(
        b.handle_response(&other, now, &mut record(&mut lines)),
        Dispatch::Duplicate {
            id: "req_99".into(),
            tool_use_id: "toolu_7".into()
        }
    );
    // PERM-050: no pending request and no known tool identity: an orphan.
    let orphan = response(
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_98","response":{"behavior":"allow","toolUseID":"toolu_unknown"}}}"#,
    );
    assert_eq!(
        b.handle_response(&orphan, now, &mut record(&mut lines)),
        Dispatch::Orphan(orphan.clone())
    );
    assert_eq!(lines.len(), 1, "only the request was emitted");
}

#[test]
fn scenario_13_final_response_resolves_before_eof_and_only_the_other_is_closed() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines = Vec::new();
    let a = pending_id(b.request_raw(&can_use_tool("toolu_a"), now, &mut record(&mut lines)));
    let c = pending_id(b.request_raw(&can_use_tool("toolu_c"), now, &mut record(&mut lines)));
    // The final unterminated record is dispatched first (WIRE-EOF-001).
    let last = response(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{c}","response":{{"behavior":"deny","message":"no"}}}}}}"#
    ));
    let Dispatch::Resolved(r) = b.handle_response(&last, now, &mut record(&mut lines)) else {
        panic!("the final response resolves its waiter")
    };
    assert_eq!(r.id.as_ref(), c);
    assert_eq!(
        r.outcome,
        Outcome::Success(Payload::Decision(PermissionDecision::Deny {
            message: "no".into(),
            interrupt: None,
            tool_use_id: None
        }))
    );
    // WIRE-008: then only the other waiter is rejected with `control stream closed`.
    let closed = b.handle_eof(now);
    assert_eq!(
        closed,
        [Resolved {
            id: a.clone().into(),
            tool_use_id: Some("toolu_a".into()),
            outcome: Outcome::StreamClosed
        }]
    );
    assert_eq!(b.pending_len(), 0);
    // No new request starts after EOF.
    let refused = b.request_raw(&can_use_tool("toolu_x"), now, &mut record(&mut lines));
    let err = refused.expect_err("refused after EOF");
    assert!(matches!(err, RequestError::StreamClosed));
    assert_eq!(err.to_string(), "control stream closed");
    assert_eq!(lines.len(), 2, "nothing emitted after EOF");
}

#[test]
fn wire_009_each_waiter_validates_with_its_own_subtype_schema() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines = Vec::new();
    let cases: &[(&[u8], &str, &str)] = &[
        // A permission decision answering `initialize`: not an InitializeResponse.
        (
            br#"{"subtype":"initialize"}"#,
            r#"{"behavior":"allow"}"#,
            "initialize",
        ),
        // PERM-046: a toolUseID that is not the request's.
        (
            CAN_USE_TOOL_T1,
            r#"{"behavior":"allow","toolUseID":"toolu_2"}"#,
            "PERM-046",
        ),
        // PERM-041: behavior outside allow/deny.
        (CAN_USE_TOOL_T1, r#"{"behavior":"ask"}"#, "PERM-041"),
        // PERM-048: an unknown member.
        (
            CAN_USE_TOOL_T1,
            r#"{"behavior":"deny","extra":1}"#,
            "PERM-048",
        ),
        // PERM-052: a success with a null decision.
        (CAN_USE_TOOL_T1, "null", "PERM-052"),
        // WIRE-010: an interrupt acknowledgement carries no payload.
        (br#"{"subtype":"interrupt"}"#, r#"{"x":1}"#, "WIRE-010"),
        // A mcp_status payload without mcpServers.
        (br#"{"subtype":"mcp_status"}"#, r#"{}"#, "mcp_status"),
    ];
    for (req, payload, why) in cases {
        let mut fresh = Broker::new();
        let id = pending_id(fresh.request_raw(req, now, &mut record(&mut lines)));
        let resp = response(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{payload}}}}}"#
        ));
        let d = fresh.handle_response(&resp, now, &mut record(&mut lines));
        match d {
            Dispatch::Resolved(Resolved {
                outcome: Outcome::Invalid(e),
                ..
            }) => {
                if why.starts_with("PERM") || why.starts_with("WIRE") {
                    assert_eq!(e.rule, *why, "{e}");
                }
            }
            other => panic!("{why}: expected Invalid, got {other:?}"),
        }
    }
    // Valid payloads resolve as successes of their own kind.
    let id = pending_id(b.request_raw(br#"{"subtype":"interrupt"}"#, now, &mut record(&mut lines)));
    let ack = response(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}"}}}}"#
    ));
    assert!(matches!(
        b.handle_response(&ack, now, &mut record(&mut lines)),
        Dispatch::Resolved(Resolved {
            outcome: Outcome::Success(Payload::None),
            ..
        })
    ));
    let id =
        pending_id(b.request_raw(br#"{"subtype":"mcp_status"}"#, now, &mut record(&mut lines)));
    let ok = response(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"mcpServers":[]}}}}}}"#
    ));
    let d = b.handle_response(&ok, now, &mut record(&mut lines));
    match d {
        Dispatch::Resolved(Resolved {
            outcome: Outcome::Success(Payload::Json(raw)),
            ..
        }) => assert_eq!(raw.as_bytes(), br#"{"mcpServers":[]}"#),
        other => panic!("{other:?}"),
    }
    // An error response is an error outcome, with its message.
    let id = pending_id(b.request_raw(CAN_USE_TOOL_T1, now, &mut record(&mut lines)));
    let err = response(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"error","request_id":"{id}","error":"host failed"}}}}"#
    ));
    let d = b.handle_response(&err, now, &mut record(&mut lines));
    match d {
        Dispatch::Resolved(Resolved {
            outcome: Outcome::Error { message, .. },
            ..
        }) => assert_eq!(message, "host failed"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn replay_mode_echoes_only_resolving_responses() {
    let now = t0();
    let mut b = Broker::new();
    b.set_replay(true);
    let mut lines = Vec::new();
    let id = pending_id(b.request_raw(br#"{"subtype":"interrupt"}"#, now, &mut record(&mut lines)));
    let ack = response(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}"}}}}"#
    ));
    b.handle_response(&ack, now, &mut record(&mut lines));
    b.handle_response(&ack, now, &mut record(&mut lines)); // orphan: not echoed
    assert_eq!(
        lines,
        [
            r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"interrupt"}}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1"}}"#,
        ]
    );
}

#[test]
fn resolved_set_holds_1000_and_evicts_the_oldest_at_1001() {
    let now = t0();
    let mut b = Broker::new();
    let mut sink = |_: &mut Broker, _: Emission<'_>| Ok(());
    for i in 0..1001 {
        let id = pending_id(b.request_raw(&can_use_tool(&format!("toolu_{i}")), now, &mut sink));
        let r = response(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"behavior":"deny"}}}}}}"#
        ));
        assert!(matches!(
            b.handle_response(&r, now, &mut sink),
            Dispatch::Resolved(_)
        ));
        if i == 999 {
            assert_eq!(b.resolved_tool_uses().len(), 1000);
            assert!(b.resolved_tool_uses().contains("toolu_0"), "1,000 held");
        }
    }
    assert_eq!(b.resolved_tool_uses().len(), 1000);
    assert!(
        !b.resolved_tool_uses().contains("toolu_0"),
        "the 1,001st evicts the oldest"
    );
    let late = |t: &str| {
        response(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"late","response":{{"behavior":"allow","toolUseID":"{t}"}}}}}}"#
        ))
    };
    assert!(matches!(
        b.handle_response(&late("toolu_0"), now, &mut sink),
        Dispatch::Orphan(_)
    ));
    assert!(matches!(
        b.handle_response(&late("toolu_1"), now, &mut sink),
        Dispatch::Duplicate { .. }
    ));
}

// ---- scenario 19: emitter and post-cancellation callback containment (WIRE-015) ----

#[test]
fn scenario_19_emitter_panic_before_resolution_rolls_back_and_the_broker_stays_usable() {
    let now = t0();
    let mut b = Broker::new();
    let mut panicking =
        |_: &mut Broker, _: Emission<'_>| -> Result<(), Refused> { panic!("emitter exploded") };
    let err = b
        .request_raw(CAN_USE_TOOL_T1, now, &mut panicking)
        .expect_err("rolled back");
    assert!(matches!(
        err,
        RequestError::Emission(EmissionFailure::Panicked)
    ));
    assert_eq!(err.to_string(), EMISSION_FAILURE_TEXT);
    assert_eq!(b.pending_len(), 0, "no pending ID stranded");
    assert_eq!(b.take_emission_failure(), Some(EmissionFailure::Panicked));
    // The envelope may have left: its response is known-late, not an orphan.
    let late = response(
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"behavior":"allow"}}}"#,
    );
    let mut lines = Vec::new();
    assert_eq!(
        b.handle_response(&late, now, &mut record(&mut lines)),
        Dispatch::KnownLate { id: "req_1".into() }
    );
    // A refusing emitter: the same fixed failure.
    let mut refusing = |_: &mut Broker, _: Emission<'_>| Err(Refused);
    assert!(matches!(
        b.request_raw(CAN_USE_TOOL_T1, now, &mut refusing),
        Err(RequestError::Emission(EmissionFailure::Refused))
    ));
    // Reusable: the next request works normally.
    let id = pending_id(b.request_raw(CAN_USE_TOOL_T1, now, &mut record(&mut lines)));
    assert_eq!(id, "req_3");
    assert_eq!(b.pending_len(), 1);
}

#[test]
fn scenario_19_emitter_panic_after_synchronous_resolution_keeps_the_selected_result() {
    let now = t0();
    let mut b = Broker::new();
    let mut echoes = Vec::new();
    // A loopback peer answers while the request is being emitted, then the emitter panics.
    let mut loopback = |b: &mut Broker, e: Emission<'_>| -> Result<(), Refused> {
        if let Emission::Request(r) = e {
            let answer = response(&format!(
                r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{}","response":{{"behavior":"allow","updatedInput":{{"command":"pwd"}}}}}}}}"#,
                r.request_id
            ));
            let d = b.handle_response(&answer, now, &mut record(&mut echoes));
            assert_eq!(d, Dispatch::Selected { id: "req_1".into() });
            panic!("emitter exploded after the response was selected");
        }
        Ok(())
    };
    let started = b
        .request_raw(CAN_USE_TOOL_T1, now, &mut loopback)
        .expect("the selected result wins");
    let Started::Resolved(r) = started else {
        panic!("resolved synchronously")
    };
    assert_eq!(r.id.as_ref(), "req_1");
    assert_eq!(r.tool_use_id.as_deref(), Some("toolu_1"));
    match r.outcome.decision() {
        Some(PermissionDecision::Allow {
            updated_input: Some(input),
            ..
        }) => assert_eq!(input.0.as_bytes(), br#"{"command":"pwd"}"#),
        other => panic!("{other:?}"),
    }
    assert_eq!(b.take_emission_failure(), Some(EmissionFailure::Panicked));
    assert_eq!(b.pending_len(), 0);
    assert!(b.resolved_tool_uses().contains("toolu_1"));
}

#[test]
fn scenario_19_cancellation_emission_panic_still_settles_the_detached_waiter() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines = Vec::new();
    let id = pending_id(b.request_raw(CAN_USE_TOOL_T1, now, &mut record(&mut lines)));
    let mut panicking = |_: &mut Broker, _: Emission<'_>| -> Result<(), Refused> {
        panic!("cancel emission exploded")
    };
    let r = b
        .abort(&id, now, &mut panicking)
        .expect("pending")
        .expect("settled");
    assert_eq!(r.outcome, Outcome::Aborted);
    assert_eq!(b.take_emission_failure(), Some(EmissionFailure::Panicked));
    assert_eq!(b.pending_len(), 0);
    // Reusable.
    let next = pending_id(b.request_raw(CAN_USE_TOOL_T1, now, &mut record(&mut lines)));
    assert_eq!(next, "req_2");
}

#[test]
fn scenario_19_post_cancellation_callback_panic_settles_every_detached_waiter() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines = Vec::new();
    let a = pending_id(b.request_raw(&can_use_tool("toolu_a"), now, &mut record(&mut lines)));
    let c = pending_id(b.request_raw(&can_use_tool("toolu_c"), now, &mut record(&mut lines)));
    lines.clear();
    let mut after = |_: &mut Broker| -> Result<(), Refused> { panic!("callback exploded") };
    let cancelled = b.abort_many(&[&a, &c], now, &mut record(&mut lines), Some(&mut after));
    assert_eq!(cancelled.failure, Some(EmissionFailure::Panicked));
    assert_eq!(
        cancelled.resolved,
        [
            Resolved {
                id: a.clone().into(),
                tool_use_id: Some("toolu_a".into()),
                outcome: Outcome::Aborted
            },
            Resolved {
                id: c.clone().into(),
                tool_use_id: Some("toolu_c".into()),
                outcome: Outcome::Aborted
            },
        ]
    );
    assert_eq!(
        lines,
        [
            format!(r#"{{"type":"control_cancel_request","request_id":"{a}"}}"#),
            format!(r#"{{"type":"control_cancel_request","request_id":"{c}"}}"#),
        ]
    );
    assert_eq!(b.pending_len(), 0, "no pending ID stranded");
    let next = pending_id(b.request_raw(CAN_USE_TOOL_T1, now, &mut record(&mut lines)));
    assert_eq!(next, "req_3", "reusable");
}

#[test]
fn wire_011_cancellations_precede_the_post_cancellation_callback() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines: Vec<String> = Vec::new();
    let a = pending_id(b.request_raw(&can_use_tool("toolu_a"), now, &mut record(&mut lines)));
    let c = pending_id(b.request_raw(&can_use_tool("toolu_c"), now, &mut record(&mut lines)));
    let log = std::cell::RefCell::new(Vec::<String>::new());
    let mut emit = |_: &mut Broker, e: Emission<'_>| {
        log.borrow_mut().push(line_of(&e));
        Ok(())
    };
    let mut ack = |_: &mut Broker| {
        log.borrow_mut().push(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"int_1"}}"#
                .into(),
        );
        Ok(())
    };
    let cancelled = b.abort_many(&[&a, &c], now, &mut emit, Some(&mut ack));
    assert_eq!(cancelled.failure, None);
    assert_eq!(
        log.into_inner(),
        [
            r#"{"type":"control_cancel_request","request_id":"req_1"}"#,
            r#"{"type":"control_cancel_request","request_id":"req_2"}"#,
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"int_1"}}"#,
        ]
    );
}

// ---- scenario 20: duplicate members at every level (WIRE-014, PROFILE §5) ----

const AMBIGUOUS: &str = "ambiguous JSON: duplicate member name";

#[test]
fn scenario_20_duplicates_at_every_level_get_the_fixed_diagnostic() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines = Vec::new();
    let id = pending_id(b.request_raw(CAN_USE_TOOL_T1, now, &mut record(&mut lines)));
    assert_eq!(id, "req_1");
    let inbound = [
        // Outer envelope.
        r#"{"type":"control_response","type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"behavior":"allow"}}}"#,
        // Nested response object.
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","request_id":"req_1","response":{"behavior":"allow"}}}"#,
        // Operation payload, escape-equivalent spelling.
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"behavior":"deny","beh\u0061vior":"allow"}}}"#,
        // Pending-control level.
        r#"{"type":"control_response","response":{"subtype":"error","request_id":"req_1","error":"e","pending_permission_requests":[{"type":"control_request","request_id":"r","request":{"subtype":"interrupt","subtype":"interrupt"}}]}}"#,
    ];
    let mut parser = Parser::new();
    let mut rejected = Vec::new();
    for line in inbound {
        let e = InputRecord::decode_line(line.as_bytes(), &mut parser).expect_err(line);
        assert_eq!(e.to_string(), AMBIGUOUS, "{line}");
        rejected.push(e);
    }
    // The strict reader resolves nothing from an ambiguous record ...
    assert!(b.is_pending("req_1"));
    // ... but PERM-049 fails closed: an answer the reader rejected, whose `request_id` the
    // session recovered from the rejected line (`session::rejected_line`), settles the waiter as
    // `Invalid`, which for `can_use_tool` is a denial, never an answer left open.
    let r = b
        .handle_rejected_response("req_1", &rejected[2])
        .expect("the pending waiter settles");
    assert_eq!(&*r.id, "req_1");
    assert_eq!(r.tool_use_id.as_deref(), Some("toolu_1"));
    match &r.outcome {
        Outcome::Invalid(i) => {
            assert_eq!(
                i.kind,
                agentx_wire::wire::ErrorKind::Json(agentx_wire::json::ErrorKind::DuplicateMember)
            );
            assert_eq!(&*i.message, AMBIGUOUS);
        }
        other => panic!("{other:?}"),
    }
    assert!(r.outcome.decision().is_none(), "never an allow");
    assert!(!b.is_pending("req_1"));
    // Settled exactly once (PERM-053): a second rejected answer changes nothing, and a valid
    // one for the same tool use is now a duplicate.
    assert_eq!(b.handle_rejected_response("req_1", &rejected[0]), None);
    assert!(b.resolved_tool_uses().contains("toolu_1"));
    assert_eq!(b.handle_rejected_response("req_nope", &rejected[0]), None);
    // A fresh prompt for the PERM-047 pair below.
    let id = pending_id(b.request_raw(CAN_USE_TOOL_T1, now, &mut record(&mut lines)));
    assert_eq!(id, "req_2");
    // Raw outbound payloads: the request object and a nested payload, escape-equivalent too.
    let outbound: [&[u8]; 3] = [
        br#"{"subtype":"interrupt","subtype":"interrupt"}"#,
        br#"{"subtype":"hook_callback","callback_id":"a","input":{"k":1,"\u006b":2}}"#,
        br#"{"subtype":"can_use_tool","tool_name":"Bash","input":{},"tool_use_id":"t","tool\u005fuse_id":"t"}"#,
    ];
    for raw in outbound {
        match b.request_raw(raw, now, &mut record(&mut lines)) {
            Err(RequestError::Invalid(e)) => assert_eq!(e.to_string(), AMBIGUOUS),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(lines.len(), 2, "nothing ambiguous was emitted");
    // The documented canonical/alias pair stays valid (PERM-047): the canonical one wins.
    let pair = response(
        r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_2","response":{"behavior":"allow","toolUseID":"toolu_1","tool_use_id":"toolu_1","updatedInput":{"command":"ls -a"},"updated_input":{"command":"rm"}}}}"#,
    );
    let d = b.handle_response(&pair, now, &mut record(&mut lines));
    match d {
        Dispatch::Resolved(r) => match r.outcome.decision() {
            Some(PermissionDecision::Allow {
                updated_input: Some(i),
                ..
            }) => assert_eq!(i.0.as_bytes(), br#"{"command":"ls -a"}"#),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }
}

#[test]
fn shutdown_settles_everything_and_refuses_new_requests() {
    let now = t0();
    let mut b = Broker::new();
    let mut lines = Vec::new();
    pending_id(b.request_raw(br#"{"subtype":"initialize"}"#, now, &mut record(&mut lines)));
    pending_id(b.request_raw(br#"{"subtype":"mcp_status"}"#, now, &mut record(&mut lines)));
    let s = b.shutdown(now);
    assert_eq!(
        s.iter().map(|r| (&*r.id, &r.outcome)).collect::<Vec<_>>(),
        [("req_1", &Outcome::Shutdown), ("req_2", &Outcome::Shutdown)]
    );
    assert!(matches!(
        b.request_raw(br#"{"subtype":"interrupt"}"#, now, &mut record(&mut lines)),
        Err(RequestError::StreamClosed)
    ));
}

// ---- the fuzz target's seeds, through the same entry point ----

use crate::common;

#[test]
fn control_broker_fuzz_seeds() {
    let n = common::replay_seeds("control_broker", agentx_core::fuzzing::control::broker);
    assert!(n >= 10, "{n} seeds");
}
