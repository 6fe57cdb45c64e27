//! The values the broker hands out and takes: emissions and their emitter, outcomes and
//! payloads, settled waiters, dispatch of a response, and the broker's errors (WIRE-015's
//! fixed emission failure among them).
//!
//! Owns no state and no rule: only the shapes. Must never: carry what a callback returned or
//! panicked with (an [`EmissionFailure`] is one fixed text).

use std::fmt;

use crate::wire::{
    ControlCancelRequest, ControlRequest, ControlResponse, Error as WireError, ErrorKind,
    PermissionDecision, RawJson,
};

use super::{Broker, CONTROL_STREAM_CLOSED};

/// The fixed text of an emission failure (WIRE-015): the only thing said about a failing or
/// panicking emitter or post-cancellation callback.
pub const EMISSION_FAILURE_TEXT: &str = "control emission failed";

/// The default prefix of minted request IDs (`req_1`, `req_2`, ...). A driver that shares a
/// stream with other producers of IDs picks its own.
pub const DEFAULT_ID_PREFIX: &str = "req_";

/// An emitter's refusal. It carries nothing: a callback's own error is never kept, formatted
/// or traversed (WIRE-015).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused;

/// The one fixed emission failure (WIRE-015).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmissionFailure {
    /// The emitter or callback returned [`Refused`].
    Refused,
    /// The emitter or callback panicked (the payload was dropped unread).
    Panicked,
}

impl EmissionFailure {
    /// The fixed text (WIRE-015); nothing of the callback's own error.
    pub fn message(&self) -> &'static str {
        EMISSION_FAILURE_TEXT
    }
}

impl fmt::Display for EmissionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EMISSION_FAILURE_TEXT)
    }
}

impl std::error::Error for EmissionFailure {}

/// The session state a permission prompt publishes (PROFILE §8: `requires_action` while any
/// prompt is open, back to `running` when none is). The broker never emits it; the permission
/// race does, through the same emitter, so it takes its place in the one FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateChange {
    /// `requires_action`: the first prompt opened.
    RequiresAction,
    /// `running`: no prompt remains.
    Running,
}

impl StateChange {
    /// The `state` of `session_state_changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            StateChange::RequiresAction => "requires_action",
            StateChange::Running => "running",
        }
    }
}

/// One outbound record, in FIFO order (WIRE-003).
#[derive(Clone, Copy, Debug)]
pub enum Emission<'r> {
    /// A `control_request` envelope; its waiter is already registered (WIRE-006).
    Request(&'r ControlRequest<'static>),
    /// A `control_cancel_request` (WIRE-007, WIRE-011).
    Cancel(&'r ControlCancelRequest<'static>),
    /// Replay mode: the inbound `control_response` that resolved a waiter, echoed.
    Echo(&'r ControlResponse<'r>),
    /// The permission race's session-state publication (never from the broker itself).
    State(StateChange),
}

impl Emission<'_> {
    /// Appends the record's canonical JSON (no terminator). `State` has no wire form of its
    /// own (the session adds `session_id` and `uuid`) and writes nothing.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Emission::Request(r) => r.encode(out),
            Emission::Cancel(c) => c.encode(out),
            Emission::Echo(r) => r.encode(out),
            Emission::State(_) => {}
        }
    }
}

impl crate::wire::Encode for Emission<'_> {
    fn encode(&self, out: &mut Vec<u8>) {
        Emission::encode(self, out)
    }
}

/// Where the broker's records go: in the agent, a push into the session's outbox; in tests, a
/// recorder or a loopback peer. It gets `&mut Broker` so it may resolve re-entrantly.
pub trait Emitter {
    /// Queues one outbound record; `Err(Refused)` (or a panic) is the fixed emission failure.
    fn emit(&mut self, broker: &mut Broker, emission: Emission<'_>) -> Result<(), Refused>;
}

impl<F> Emitter for F
where
    F: FnMut(&mut Broker, Emission<'_>) -> Result<(), Refused>,
{
    fn emit(&mut self, broker: &mut Broker, emission: Emission<'_>) -> Result<(), Refused> {
        self(broker, emission)
    }
}

/// The ordered post-cancellation callback of [`Broker::abort_many`] (WIRE-011: an interrupt
/// handler pushes its acknowledgement here, after every cancellation).
pub type AfterCancellation<'f> = dyn FnMut(&mut Broker) -> Result<(), Refused> + 'f;

/// A validated success payload (WIRE-009).
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// No payload (`interrupt`'s acknowledgement, WIRE-010; or an operation without one).
    None,
    /// A payload that passed its subtype's schema, kept as received.
    Json(RawJson<'static>),
    /// A `can_use_tool` decision that passed PERM-040..048, 046 and 052.
    Decision(PermissionDecision<'static>),
}

/// How a waiter ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A success whose payload passed the waiter's schema.
    Success(Payload),
    /// The peer answered `error`.
    Error {
        /// The peer's `error` text.
        message: String,
        /// The peer's `pending_permission_requests`, when given.
        pending_permission_requests: Option<Vec<ControlRequest<'static>>>,
    },
    /// A success whose payload failed the waiter's schema (WIRE-009; for `can_use_tool` a
    /// denial, PERM-049).
    Invalid(InvalidResponse),
    /// Aborted locally (WIRE-007).
    Aborted,
    /// Input ended with the request pending: `control stream closed` (WIRE-008).
    StreamClosed,
    /// The broker was shut down with the request pending.
    Shutdown,
}

impl Outcome {
    /// The permission decision, when this is a validated `can_use_tool` success.
    pub fn decision(&self) -> Option<&PermissionDecision<'static>> {
        match self {
            Outcome::Success(Payload::Decision(d)) => Some(d),
            _ => None,
        }
    }
}

/// Why a success payload failed its waiter's schema: the wire error's classification and its
/// message (which names the path and rule and never echoes a value).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidResponse {
    /// The wire error's classification.
    pub kind: ErrorKind,
    /// The rule the payload broke (`WIRE-009`, `PERM-0xx`).
    pub rule: &'static str,
    /// The message: names the path and rule, never echoes a value.
    pub message: Box<str>,
}

impl InvalidResponse {
    pub(super) fn of(e: &WireError) -> InvalidResponse {
        InvalidResponse {
            kind: e.kind(),
            rule: e.rule(),
            message: e.to_string().into(),
        }
    }
}

impl fmt::Display for InvalidResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A settled waiter, returned to the caller as a value.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The request ID.
    pub id: Box<str>,
    /// The `tool_use_id` of a `can_use_tool` request.
    pub tool_use_id: Option<Box<str>>,
    /// How it ended.
    pub outcome: Outcome,
}

/// What [`Broker::request`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Started {
    /// Registered and emitted; the waiter is pending.
    Pending {
        /// The request ID.
        id: Box<str>,
    },
    /// Settled during its own emission (a synchronous resolution, or an abort or EOF from
    /// inside the emitter). This result stands even if the emitter then failed.
    Resolved(Resolved),
}

impl Started {
    /// The request ID.
    pub fn id(&self) -> &str {
        match self {
            Started::Pending { id } => id,
            Started::Resolved(r) => &r.id,
        }
    }
}

/// Why [`Broker::request`] registered nothing (or rolled its waiter back).
#[derive(Debug)]
pub enum RequestError {
    /// Input ended: no new request starts (WIRE-008, WIRE-EOF-001).
    StreamClosed,
    /// The ID is pending or was settled recently.
    DuplicateId,
    /// A raw outbound request failed strict decoding (duplicate members: the fixed ambiguity
    /// diagnostic, WIRE-014).
    Invalid(WireError),
    /// The emitter failed or panicked before the request settled: rolled back (WIRE-015).
    Emission(EmissionFailure),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::StreamClosed => f.write_str(CONTROL_STREAM_CLOSED),
            RequestError::DuplicateId => f.write_str("control request ID already in use"),
            RequestError::Invalid(e) => fmt::Display::fmt(e, f),
            RequestError::Emission(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for RequestError {}

/// What an inbound `control_response` did.
#[derive(Clone, Debug, PartialEq)]
pub enum Dispatch {
    /// It settled a pending waiter.
    Resolved(Resolved),
    /// It settled the waiter being emitted; that waiter's `request` call returns it.
    Selected {
        /// The request ID.
        id: Box<str>,
    },
    /// A response to a request already aborted, closed, shut down or rolled back: ignored
    /// (WIRE-007).
    KnownLate {
        /// The request ID.
        id: Box<str>,
    },
    /// A response whose tool-use ID is in the resolved set: ignored (PERM-050).
    Duplicate {
        /// The request ID.
        id: Box<str>,
        /// The resolved tool use it named.
        tool_use_id: Box<str>,
    },
    /// No pending request and no known resolved tool identity (PERM-050): for the caller's
    /// orphan handler.
    Orphan(ControlResponse<'static>),
}

/// What [`Broker::abort_many`] did.
#[derive(Debug, PartialEq)]
pub struct Cancelled {
    /// Every detached waiter, `Aborted`, in the order asked.
    pub resolved: Vec<Resolved>,
    /// The one emission failure, if a cancellation emission or the post-cancellation callback
    /// failed or panicked (the waiters above are settled regardless).
    pub failure: Option<EmissionFailure>,
}

/// The request to abort is not pending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotPending;

impl fmt::Display for NotPending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("control request is not pending")
    }
}

impl std::error::Error for NotPending {}
