//! Fuzz entry point for the control broker and the permission race (`fuzz/control_broker`).
//!
//! The bytes are a script of interleaved events on one broker and race: asks, host responses
//! (valid allow/deny, malformed, error, duplicate, late, orphan), hook results (allow, deny,
//! pass, failure; for open, settled and unknown tool uses), host-side requests and their local
//! aborts, interrupts, EOF, a refusing emitter and a synchronous (loopback) host. After every
//! step it checks the invariants and panics when one breaks:
//! - every pending request is removed exactly once, and nothing is stranded (after the final
//!   EOF and interrupt, no waiter and no prompt remains);
//! - each tool-use ID settles exactly once (PERM-053);
//! - no allow without a decisive allow from the host (a valid decision this script sent for
//!   that request) or the hook (WIRE-PERM-001/002, PERM-049);
//! - cancellations precede the interrupt acknowledgement (WIRE-011);
//! - `requires_action` / `running` alternate, `running` only when no prompt is open.
//!
//! Emitter panics are covered by `tests/codec/control_broker.rs` (libFuzzer aborts on any panic).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::session::permission::{
    Ask, Contenders, Decider, HookOutcome, PermissionRace, RaceAction, Routed, Verdict,
};
use agentx_wire::control::{Broker, Dispatch, Emission, Outcome, Refused, Started, StateChange};
use agentx_wire::json::Parser;
use agentx_wire::wire::{ControlRequestBody, ControlResponse, InputRecord, RawJson, RawObject};

/// What the emitter saw, shared with the model.
#[derive(Default)]
struct Seen {
    /// request ID → tool-use ID (`None` for host-side requests).
    requests: Vec<(String, Option<String>)>,
    cancels: Vec<String>,
    states: Vec<StateChange>,
    /// An interrupt acknowledgement was pushed, and how many cancels preceded it.
    acks: Vec<usize>,
}

struct Model {
    /// Tool-use IDs asked (accepted asks).
    asked: Vec<String>,
    /// Settlements per tool-use ID.
    settled: HashMap<String, u32>,
    /// Tool uses for which this script sent a valid host allow / a hook allow.
    host_allow: HashSet<String>,
    hook_allow: HashSet<String>,
    /// Host-side (non-permission) requests: removals observed per ID.
    direct: HashMap<String, u32>,
    /// Responses sent, for duplicates and late replays.
    sent: Vec<ControlResponse<'static>>,
}

/// Byte cursor: 0 when exhausted.
struct Script<'a> {
    data: &'a [u8],
    at: usize,
}

impl Script<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
}

fn response(line: &str) -> Option<ControlResponse<'static>> {
    match InputRecord::decode_line(line.as_bytes(), &mut Parser::new()) {
        Ok(InputRecord::ControlResponse(r)) => Some(r.into_owned()),
        _ => None,
    }
}

fn decision_json(kind: u8, tool_use_id: &str) -> (String, bool) {
    match kind % 8 {
        0 => (r#"{"behavior":"allow"}"#.into(), true),
        1 => (
            format!(
                r#"{{"behavior":"allow","toolUseID":"{tool_use_id}","updatedInput":{{"file_path":"x"}}}}"#
            ),
            true,
        ),
        2 => (r#"{"behavior":"deny","message":"no"}"#.into(), false),
        3 => (r#"{"behavior":"deny","interrupt":true}"#.into(), false),
        // Malformed decisions: must deny (PERM-041, 046, 048, 052, 042).
        4 => (r#"{"behavior":"ask"}"#.into(), false),
        5 => (
            r#"{"behavior":"allow","toolUseID":"toolu_wrong"}"#.into(),
            false,
        ),
        6 => (r#"{"behavior":"allow","extra":1}"#.into(), false),
        _ => (r#"{"behavior":"allow","updatedInput":[1]}"#.into(), false),
    }
}

/// Runs one script (see the module docs).
pub fn broker(data: &[u8]) {
    let mut s = Script { data, at: 0 };
    let cfg = s.byte();
    let contenders = Contenders {
        host: cfg & 1 == 0,
        hook: cfg & 2 != 0,
    };
    let mut broker = Broker::new();
    broker.set_replay(cfg & 4 != 0);
    let mut race = PermissionRace::new(contenders);
    let seen = RefCell::new(Seen::default());
    let mut m = Model {
        asked: Vec::new(),
        settled: HashMap::new(),
        host_allow: HashSet::new(),
        hook_allow: HashSet::new(),
        direct: HashMap::new(),
        sent: Vec::new(),
    };
    let mut now = Instant::now();
    let mut refusing = false;
    // A synchronous host: answers a permission request during its emission with this
    // decision kind.
    let mut loopback: Option<u8> = None;
    let mut next_tool = 0u32;
    let mut steps = 0;

    while !s.done() && steps < 256 {
        steps += 1;
        now += Duration::from_millis(u64::from(s.byte() % 16));
        let op = s.byte();
        let arg = s.byte();
        let refuse = refusing;
        let lb = loopback;
        let host_allow = RefCell::new(Vec::<String>::new());
        let mut emit = |b: &mut Broker, e: Emission<'_>| -> Result<(), Refused> {
            match e {
                Emission::Request(r) => {
                    let tool = match &r.request {
                        ControlRequestBody::CanUseTool(c) => Some(c.tool_use_id.to_string()),
                        _ => None,
                    };
                    seen.borrow_mut()
                        .requests
                        .push((r.request_id.to_string(), tool.clone()));
                    if refuse {
                        return Err(Refused);
                    }
                    if let (Some(kind), Some(t)) = (lb, tool) {
                        let (d, allow) = decision_json(kind, &t);
                        if allow {
                            host_allow.borrow_mut().push(t);
                        }
                        let line = format!(
                            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{}","response":{d}}}}}"#,
                            r.request_id
                        );
                        if let Some(resp) = response(&line) {
                            let d = b.handle_response(
                                &resp,
                                now,
                                &mut |_: &mut Broker, _: Emission<'_>| Ok(()),
                            );
                            assert!(
                                matches!(d, Dispatch::Selected { .. }),
                                "a response during emission selects its waiter: {d:?}"
                            );
                        }
                    }
                }
                Emission::Cancel(c) => seen.borrow_mut().cancels.push(c.request_id.to_string()),
                Emission::Echo(_) => {}
                Emission::State(st) => seen.borrow_mut().states.push(st),
            }
            if refuse {
                Err(Refused)
            } else {
                Ok(())
            }
        };
        let mut actions: Vec<RaceAction> = Vec::new();
        match op % 12 {
            // Ask.
            0 | 1 => {
                next_tool += 1;
                let t = format!("toolu_{next_tool}");
                let ask = match arg % 3 {
                    0 => Ask::sandbox_network(&t, "example.com", Some(u16::from(arg))),
                    1 => Ask::new(
                        &t,
                        "Bash",
                        RawObject(
                            RawJson::parse_owned(br#"{"command":"ls"}"#.to_vec())
                                .unwrap_or_else(|_| RawJson::empty_object()),
                        ),
                    ),
                    _ => Ask::new(&t, "Write", RawObject::empty()),
                };
                if let Ok(a) = race.ask(ask, &mut broker, &mut emit, now) {
                    m.asked.push(t);
                    actions = a;
                }
            }
            // A host response to a pending permission request (valid or malformed).
            2 | 3 => {
                let pending = broker.pending_permission_ids();
                if let Some(id) = pending.get(usize::from(arg) % pending.len().max(1)) {
                    let tool = seen
                        .borrow()
                        .requests
                        .iter()
                        .find(|(r, _)| **r == **id)
                        .and_then(|(_, t)| t.clone())
                        .unwrap_or_default();
                    let (d, allow) = decision_json(s.byte(), &tool);
                    let line = format!(
                        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{d}}}}}"#
                    );
                    if let Some(resp) = response(&line) {
                        if allow {
                            m.host_allow.insert(tool);
                        }
                        m.sent.push(resp.clone());
                        actions = route(&mut race, &mut broker, &resp, &mut emit, now, &mut m);
                    }
                }
            }
            // A host error response.
            4 => {
                let pending = broker.pending_ids();
                if let Some(id) = pending.get(usize::from(arg) % pending.len().max(1)) {
                    let line = format!(
                        r#"{{"type":"control_response","response":{{"subtype":"error","request_id":"{id}","error":"e"}}}}"#
                    );
                    if let Some(resp) = response(&line) {
                        m.sent.push(resp.clone());
                        actions = route(&mut race, &mut broker, &resp, &mut emit, now, &mut m);
                    }
                }
            }
            // A duplicate or late replay of a response already sent, or an orphan.
            5 => {
                let resp = match m.sent.get(usize::from(arg) % m.sent.len().max(1)) {
                    Some(r) if arg & 0x80 == 0 => r.clone(),
                    _ => response(
                        r#"{"type":"control_response","response":{"subtype":"success","request_id":"nobody","response":{"behavior":"allow","toolUseID":"toolu_1"}}}"#,
                    )
                    .unwrap_or_else(orphan_response),
                };
                let before = broker.pending_len();
                actions = route(&mut race, &mut broker, &resp, &mut emit, now, &mut m);
                if !actions.is_empty() {
                    // A replay can only resolve a request still pending.
                    assert!(
                        before > broker.pending_len(),
                        "a replay resolved nothing pending"
                    );
                }
            }
            // A hook result (for an open, settled or unknown tool use).
            6 | 7 => {
                let t = format!("toolu_{}", u32::from(arg) % (next_tool + 2));
                let outcome = match s.byte() % 5 {
                    0 => HookOutcome::Allow {
                        updated_input: None,
                    },
                    1 => HookOutcome::Deny { message: None },
                    2 | 3 => HookOutcome::Pass,
                    _ => HookOutcome::Failed,
                };
                if matches!(outcome, HookOutcome::Allow { .. }) {
                    m.hook_allow.insert(t.clone());
                }
                actions = race.handle_hook(&t, outcome, &mut broker, &mut emit, now);
            }
            // Interrupt: cancellations, then the acknowledgement (WIRE-011).
            8 => {
                let pending_perms = broker.pending_permission_ids().len();
                let cancels_before = seen.borrow().cancels.len();
                let mut ack = |_: &mut Broker| -> Result<(), Refused> {
                    let n = seen.borrow().cancels.len();
                    seen.borrow_mut().acks.push(n);
                    Ok(())
                };
                let (a, _failure) = race.cancel_all(&mut broker, &mut emit, now, Some(&mut ack));
                actions = a;
                let cancels = seen.borrow().cancels.len() - cancels_before;
                let ack_at = seen.borrow().acks.last().copied().unwrap_or(0);
                assert_eq!(
                    ack_at,
                    seen.borrow().cancels.len(),
                    "WIRE-011: the acknowledgement follows every cancel"
                );
                if !refuse {
                    assert_eq!(cancels, pending_perms, "one cancel per pending permission");
                }
                assert_eq!(race.open_prompts(), 0);
                // The session publishes what follows an interrupt (its hard-interrupt order
                // ends in idle); model that so the alternation check below holds.
                let mut sb = seen.borrow_mut();
                if sb.states.last() == Some(&StateChange::RequiresAction) {
                    sb.states.push(StateChange::Running);
                }
            }
            // EOF (idempotent; later asks are denied or hook-only).
            9 => {
                let (a, others) = race.handle_eof(&mut broker, &mut emit, now);
                actions = a;
                for r in others {
                    observe_direct(&mut m, &r.id, &r.outcome);
                }
                assert_eq!(
                    broker.pending_len(),
                    0,
                    "WIRE-008: nothing pending after EOF"
                );
            }
            // Host-side requests on the same broker, and their local aborts.
            10 => {
                if arg & 1 == 0 {
                    let raw: &[u8] = match arg % 6 {
                        0 => br#"{"subtype":"interrupt"}"#,
                        2 => br#"{"subtype":"mcp_status"}"#,
                        _ => br#"{"subtype":"initialize"}"#,
                    };
                    match broker.request_raw(raw, now, &mut emit) {
                        Ok(Started::Pending { id }) => {
                            m.direct.insert(id.into(), 0);
                        }
                        Ok(Started::Resolved(r)) => {
                            m.direct.insert(r.id.to_string(), 0);
                            observe_direct(&mut m, &r.id, &r.outcome);
                        }
                        Err(_) => {}
                    }
                } else {
                    let ids: Vec<String> = broker
                        .pending_ids()
                        .into_iter()
                        .map(String::from)
                        .filter(|id| m.direct.contains_key(id))
                        .collect();
                    if let Some(id) = ids.get(usize::from(arg >> 1) % ids.len().max(1)) {
                        let r = broker.abort(id, now, &mut emit);
                        match r {
                            Ok(Some(r)) => observe_direct(&mut m, &r.id, &r.outcome),
                            other => panic!("a pending request aborts: {other:?}"),
                        }
                    }
                }
            }
            // Emitter modes.
            _ => match arg % 4 {
                0 => refusing = !refusing,
                1 => loopback = Some(s.byte()),
                _ => loopback = None,
            },
        }
        for t in host_allow.into_inner() {
            m.host_allow.insert(t);
        }
        check_actions(&actions, &mut m);
        check_consistency(&broker, &race, &seen.borrow());
    }

    // Settle everything: an interrupt, then EOF; then hooks of hook-only prompts fail.
    let mut sink = |_: &mut Broker, _: Emission<'_>| -> Result<(), Refused> { Ok(()) };
    let (a, _) = race.cancel_all(&mut broker, &mut sink, now, None);
    check_actions(&a, &mut m);
    let (a, others) = race.handle_eof(&mut broker, &mut sink, now);
    check_actions(&a, &mut m);
    for r in others {
        observe_direct(&mut m, &r.id, &r.outcome);
    }
    assert_eq!(broker.pending_len(), 0, "no pending ID stranded");
    assert_eq!(race.open_prompts(), 0, "no prompt stranded");
    for t in &m.asked {
        assert_eq!(
            m.settled.get(t).copied(),
            Some(1),
            "PERM-053: {t} settles exactly once"
        );
    }
    for (id, n) in &m.direct {
        assert_eq!(*n, 1, "WIRE-006: {id} removed exactly once");
    }
}

fn orphan_response() -> ControlResponse<'static> {
    ControlResponse {
        request_id: agentx_wire::wire::grammar::NonEmpty::new(String::from("nobody"))
            .unwrap_or_else(|| panic!("nonempty")),
        outcome: agentx_wire::wire::ControlOutcome::Success { response: None },
    }
}

fn route(
    race: &mut PermissionRace,
    broker: &mut Broker,
    resp: &ControlResponse<'_>,
    emit: &mut dyn agentx_wire::control::Emitter,
    now: Instant,
    m: &mut Model,
) -> Vec<RaceAction> {
    match race.handle_response(resp, broker, emit, now) {
        Routed::Race(a) => a,
        Routed::Other(Dispatch::Resolved(r)) => {
            assert!(
                r.tool_use_id.is_none(),
                "a permission resolution reached the race"
            );
            observe_direct(m, &r.id, &r.outcome);
            Vec::new()
        }
        Routed::Other(_) => Vec::new(),
    }
}

fn observe_direct(m: &mut Model, id: &str, _outcome: &Outcome) {
    let n = m
        .direct
        .get_mut(id)
        .unwrap_or_else(|| panic!("resolution of an unknown request {id}"));
    *n += 1;
    assert_eq!(*n, 1, "WIRE-006: {id} removed twice");
}

fn check_actions(actions: &[RaceAction], m: &mut Model) {
    for a in actions {
        let RaceAction::Settled(s) = a else { continue };
        let n = m.settled.entry(s.tool_use_id.clone()).or_insert(0);
        *n += 1;
        assert_eq!(*n, 1, "PERM-053: {} settled twice", s.tool_use_id);
        if let Verdict::Allow { .. } = s.verdict {
            let ok = match s.decider {
                Decider::Host => m.host_allow.contains(&s.tool_use_id),
                Decider::Hook => m.hook_allow.contains(&s.tool_use_id),
                _ => false,
            };
            assert!(ok, "an allow without a decisive allow: {s:?}");
        }
    }
}

fn check_consistency(broker: &Broker, race: &PermissionRace, seen: &Seen) {
    // Every pending permission waiter belongs to an open prompt (nothing stranded).
    for id in broker.pending_permission_ids() {
        let tool = seen
            .requests
            .iter()
            .find(|(r, _)| **r == *id)
            .and_then(|(_, t)| t.as_deref());
        let tool = tool.unwrap_or_else(|| panic!("pending {id} was never emitted"));
        assert!(race.is_open(tool), "pending {id} for settled {tool}");
    }
    // State changes alternate, starting with requires_action.
    for (i, st) in seen.states.iter().enumerate() {
        let want = if i % 2 == 0 {
            StateChange::RequiresAction
        } else {
            StateChange::Running
        };
        assert_eq!(*st, want, "states alternate: {:?}", seen.states);
    }
}
