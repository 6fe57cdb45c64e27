//! The control broker: the correlation map of outbound control requests, usable by both
//! sides (the agent's `can_use_tool`; a host's `initialize`, `interrupt` and the rest).
//!
//! Owns: minting request IDs, registering a waiter before its envelope can reach the outbox
//! (WIRE-006), removing it exactly once on response, local abort, EOF or shutdown; the abort
//! path (one `control_cancel_request`, immediate rejection, the known-late response ignored:
//! WIRE-007); EOF rejection and refusal of new requests (WIRE-008, WIRE-EOF-001); validating
//! each response with the payload schema of its own waiter's subtype (WIRE-009, PERM-040..053);
//! routing a response with no waiter (known-late, duplicate by resolved tool-use ID, or orphan:
//! PERM-050); replay echo of resolving responses; and containment of the emitter and of the
//! ordered post-cancellation callback (WIRE-015's second half, scenario 19).
//!
//! Must never: read a clock, sleep, spawn, lock or do I/O (time is the `now` argument); call a
//! callback while its own state is inconsistent; format or `Debug` what a callback returned or
//! panicked with; turn anything but a validated success into a permission decision.
//!
//! # Waiters and emission
//! A waiter is a value moving through `Waiter` states. [`Broker::request`] registers it as
//! `Emitting`, hands the envelope to the [`Emitter`] (which gets `&mut Broker`, so a loopback
//! peer may answer re-entrantly: a *synchronous resolution*), and then:
//! - a waiter settled during its own emission (response, abort, EOF) was `Selected`: that
//!   result is returned by `request` even if the emitter then failed or panicked;
//! - an unsettled waiter whose emission failed or panicked is rolled back (removed) and
//!   `request` returns [`RequestError::Emission`];
//! - otherwise it becomes `Pending` and later settles through [`Broker::handle_response`],
//!   [`Broker::abort`], [`Broker::abort_many`], [`Broker::handle_eof`] or
//!   [`Broker::shutdown`], each of which returns the resolution as a value.
//!
//! A failing or panicking emitter or post-cancellation callback becomes one fixed
//! [`EmissionFailure`]; nothing is latched, so the broker stays usable.

use std::collections::HashMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use crate::encode::discard_foreign;
use crate::json;
use crate::wire::grammar::NonEmpty;
use crate::wire::initialize::InitializeResponse;
use crate::wire::responses::{
    decode_payload, CancelAsyncMessageResponse, ContextUsageResponse, ElicitationResponse,
    GetSettingsResponse, McpSetServersResponse, McpStatusResponse, ReloadPluginsResponse,
    RewindFilesResponse,
};
use crate::wire::{
    CanUseTool, ControlCancelRequest, ControlOutcome, ControlRequest, ControlRequestBody,
    ControlResponse, ControlSubtype, Error as WireError, ErrorKind, IntoOwned, Path,
    PermissionDecision, RawJson,
};

use super::resolved::{BoundedMap, ResolvedToolUses, RESOLVED_CAPACITY};

pub use crate::wire::responses::CONTROL_STREAM_CLOSED;

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
    fn of(e: &WireError) -> InvalidResponse {
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

/// The schema a waiter validates its response with (WIRE-009).
#[derive(Clone, Debug)]
enum Expect {
    /// `can_use_tool`: the request is kept for PERM-046.
    Permission(Box<CanUseTool<'static>>),
    /// Any other subtype (`None`: an unknown subtype, payload unchecked).
    Subtype(Option<ControlSubtype>),
}

impl Expect {
    fn tool_use_id(&self) -> Option<&str> {
        match self {
            Expect::Permission(r) => Some(r.tool_use_id.as_str()),
            Expect::Subtype(_) => None,
        }
    }
}

/// A waiter's states (STYLE #8).
#[derive(Debug)]
enum Waiter {
    /// Registered; its envelope is with the emitter.
    Emitting {
        seq: u64,
        expect: Expect,
        since: Instant,
    },
    /// Emitted; waiting for its response.
    Pending {
        seq: u64,
        expect: Expect,
        since: Instant,
    },
    /// Settled during its own emission; `request` takes the outcome.
    Selected {
        outcome: Outcome,
        tool_use_id: Option<Box<str>>,
    },
}

/// How a request left the map, for routing a later response (WIRE-007, PERM-050).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SettledBy {
    Response,
    Local,
}

#[derive(Debug)]
struct Settled {
    by: SettledBy,
    tool_use_id: Option<Box<str>>,
}

/// The correlation map (WIRE-006). See the module docs.
pub struct Broker {
    waiters: HashMap<Box<str>, Waiter>,
    next_seq: u64,
    next_id: u64,
    id_prefix: Box<str>,
    closed: bool,
    replay: bool,
    resolved: ResolvedToolUses,
    settled: BoundedMap<Settled>,
    last_failure: Option<EmissionFailure>,
    /// Success payloads of non-permission waiters kept unchecked (`set_open_payloads`).
    open_payloads: bool,
}

impl Default for Broker {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Broker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Broker")
            .field("pending", &self.waiters.len())
            .field("closed", &self.closed)
            .field("replay", &self.replay)
            .field("resolved_tool_uses", &self.resolved.len())
            .finish_non_exhaustive()
    }
}

impl Broker {
    /// A broker minting `req_1`, `req_2`, ...
    pub fn new() -> Self {
        Self::with_id_prefix(DEFAULT_ID_PREFIX)
    }

    /// A broker minting `<prefix>1`, `<prefix>2`, ...
    pub fn with_id_prefix(prefix: &str) -> Self {
        Broker {
            waiters: HashMap::new(),
            next_seq: 0,
            next_id: 1,
            id_prefix: prefix.into(),
            closed: false,
            replay: false,
            resolved: ResolvedToolUses::new(),
            settled: BoundedMap::with_capacity(RESOLVED_CAPACITY),
            last_failure: None,
            open_payloads: false,
        }
    }

    /// For a host reading a peer of the Claude Code family (`wire::PeerProfile::Lenient`):
    /// a success payload of any waiter but `can_use_tool` is kept as received instead of being
    /// checked against this profile's schema for its subtype (WIRE-009 as this profile states
    /// it), so that a peer's `initialize` without WIRE-024's catalog or an `interrupt`
    /// acknowledgement with a payload still settles; the caller decodes the payload with a
    /// lenient view. Error responses, correlation and permission decisions are unchanged.
    pub fn set_open_payloads(&mut self, open: bool) {
        self.open_payloads = open;
    }

    /// Replay mode: echo every inbound response that resolves a waiter (PROFILE §8,
    /// WIRE-EOF-001).
    pub fn set_replay(&mut self, replay: bool) {
        self.replay = replay;
    }

    /// True once input ended ([`Broker::handle_eof`]) or [`Broker::shutdown`] ran.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Waiters not yet settled (pending or being emitted).
    pub fn pending_len(&self) -> usize {
        self.waiters
            .values()
            .filter(|w| !matches!(w, Waiter::Selected { .. }))
            .count()
    }

    /// True while `id` waits for its response (or is being emitted).
    pub fn is_pending(&self, id: &str) -> bool {
        matches!(
            self.waiters.get(id),
            Some(Waiter::Pending { .. } | Waiter::Emitting { .. })
        )
    }

    /// When `id` was registered (for a driver's timeouts).
    pub fn pending_since(&self, id: &str) -> Option<Instant> {
        match self.waiters.get(id)? {
            Waiter::Pending { since, .. } | Waiter::Emitting { since, .. } => Some(*since),
            Waiter::Selected { .. } => None,
        }
    }

    /// Pending request IDs in registration order.
    pub fn pending_ids(&self) -> Vec<Box<str>> {
        self.ordered(|_| true)
    }

    /// Pending `can_use_tool` request IDs in registration order.
    pub fn pending_permission_ids(&self) -> Vec<Box<str>> {
        self.ordered(|e| matches!(e, Expect::Permission(_)))
    }

    /// The resolved tool-use set (PERM-050).
    pub fn resolved_tool_uses(&self) -> &ResolvedToolUses {
        &self.resolved
    }

    /// Records a tool-use ID settled without a host response (a hook win with no request, a
    /// denial with no host), so a late response naming it is a duplicate (PERM-050). False
    /// when it was already recorded.
    pub fn record_resolved_tool_use(&mut self, tool_use_id: &str) -> bool {
        self.resolved.insert(tool_use_id)
    }

    /// The last emission failure not yet taken (echo failures are reported only here).
    pub fn take_emission_failure(&mut self) -> Option<EmissionFailure> {
        self.last_failure.take()
    }

    fn ordered(&self, keep: impl Fn(&Expect) -> bool) -> Vec<Box<str>> {
        let mut v: Vec<(u64, &Box<str>)> = self
            .waiters
            .iter()
            .filter_map(|(id, w)| match w {
                Waiter::Pending { seq, expect, .. } if keep(expect) => Some((*seq, id)),
                _ => None,
            })
            .collect();
        v.sort_unstable_by_key(|(s, _)| *s);
        v.into_iter().map(|(_, id)| id.clone()).collect()
    }

    fn mint_id(&mut self) -> NonEmpty<'static> {
        loop {
            let mut s = String::with_capacity(self.id_prefix.len() + 8);
            s.push_str(&self.id_prefix);
            s.push_str(itoa::Buffer::new().format(self.next_id));
            self.next_id += 1;
            if !self.waiters.contains_key(s.as_str()) && !self.settled.contains(&s) {
                if let Some(id) = NonEmpty::new(s) {
                    return id;
                }
            }
        }
    }

    /// Registers a request with a minted ID, then emits it (see the module docs).
    pub fn request(
        &mut self,
        body: ControlRequestBody<'static>,
        now: Instant,
        emit: &mut dyn Emitter,
    ) -> Result<Started, RequestError> {
        if self.closed {
            return Err(RequestError::StreamClosed);
        }
        let id = self.mint_id();
        self.request_with_id(id, body, now, emit)
    }

    /// Decodes a raw outbound `request` object strictly (duplicate members at any depth,
    /// escape-equivalent spellings included, get the fixed ambiguity diagnostic: WIRE-014),
    /// then requests it like [`Broker::request`].
    pub fn request_raw(
        &mut self,
        request_object: &[u8],
        now: Instant,
        emit: &mut dyn Emitter,
    ) -> Result<Started, RequestError> {
        if self.closed {
            return Err(RequestError::StreamClosed);
        }
        let doc =
            json::parse(request_object).map_err(|e| RequestError::Invalid(WireError::json(e)))?;
        let body = ControlRequestBody::decode(doc.root(), &Path::ROOT.key("request"))
            .map_err(RequestError::Invalid)?
            .into_owned();
        self.request(body, now, emit)
    }

    /// Registers a request under the caller's ID, then emits it.
    pub fn request_with_id(
        &mut self,
        id: NonEmpty<'static>,
        body: ControlRequestBody<'static>,
        now: Instant,
        emit: &mut dyn Emitter,
    ) -> Result<Started, RequestError> {
        if self.closed {
            return Err(RequestError::StreamClosed);
        }
        if self.waiters.contains_key(id.as_str()) || self.settled.contains(id.as_str()) {
            return Err(RequestError::DuplicateId);
        }
        let expect = match &body {
            ControlRequestBody::CanUseTool(r) => Expect::Permission(Box::new(r.clone())),
            other => Expect::Subtype(other.subtype()),
        };
        let key: Box<str> = id.as_str().into();
        let seq = self.next_seq;
        self.next_seq += 1;
        // WIRE-006: registered before the envelope exists for anyone to drain.
        self.waiters.insert(
            key.clone(),
            Waiter::Emitting {
                seq,
                expect,
                since: now,
            },
        );
        let record = ControlRequest {
            request_id: id,
            request: body,
        };
        let emitted = self.call(emit, Emission::Request(&record));
        let Some(waiter) = self.waiters.remove(&key) else {
            // Unreachable: only this call removes an `Emitting` or `Selected` waiter.
            return Err(RequestError::Emission(
                emitted.err().unwrap_or(EmissionFailure::Refused),
            ));
        };
        match (waiter, emitted) {
            (
                Waiter::Emitting {
                    seq, expect, since, ..
                },
                Ok(()),
            ) => {
                self.waiters
                    .insert(key.clone(), Waiter::Pending { seq, expect, since });
                Ok(Started::Pending { id: key })
            }
            (Waiter::Emitting { expect, .. }, Err(f))
            | (Waiter::Pending { expect, .. }, Err(f)) => {
                // WIRE-015: roll back the unresolved waiter. Its envelope may have left
                // before the failure, so a later response is known-late, not an orphan.
                self.last_failure = Some(f);
                self.remember(&key, SettledBy::Local, expect.tool_use_id());
                Err(RequestError::Emission(f))
            }
            (Waiter::Pending { seq, expect, since }, Ok(())) => {
                self.waiters
                    .insert(key.clone(), Waiter::Pending { seq, expect, since });
                Ok(Started::Pending { id: key })
            }
            (
                Waiter::Selected {
                    outcome,
                    tool_use_id,
                },
                emitted,
            ) => {
                // WIRE-015: a synchronously selected result wins over a later failure.
                if let Err(f) = emitted {
                    self.last_failure = Some(f);
                }
                Ok(Started::Resolved(Resolved {
                    id: key,
                    tool_use_id,
                    outcome,
                }))
            }
        }
    }

    /// Routes an inbound `control_response` (see [`Dispatch`]). The response was decoded by
    /// the strict reader, so it has no duplicate members (WIRE-014); its payload is validated
    /// here with the schema of the waiter's own subtype (WIRE-009).
    pub fn handle_response(
        &mut self,
        response: &ControlResponse<'_>,
        _now: Instant,
        emit: &mut dyn Emitter,
    ) -> Dispatch {
        let id = response.request_id.as_str();
        let (outcome, tool_use_id, emitting) = match self.waiters.get(id) {
            None => return self.route_unmatched(response),
            // A second response for the waiter selected during its emission.
            Some(Waiter::Selected { tool_use_id, .. }) => {
                return match tool_use_id {
                    Some(t) => Dispatch::Duplicate {
                        id: id.into(),
                        tool_use_id: t.clone(),
                    },
                    None => Dispatch::Orphan(response.clone().into_owned()),
                }
            }
            Some(Waiter::Emitting { expect, .. }) => (
                validate(expect, &response.outcome, self.open_payloads),
                expect.tool_use_id().map(Box::from),
                true,
            ),
            Some(Waiter::Pending { expect, .. }) => (
                validate(expect, &response.outcome, self.open_payloads),
                expect.tool_use_id().map(Box::from),
                false,
            ),
        };
        if let Some(t) = &tool_use_id {
            self.resolved.insert(t);
        }
        self.remember(id, SettledBy::Response, tool_use_id.as_deref());
        if emitting {
            if let Some(w) = self.waiters.get_mut(id) {
                *w = Waiter::Selected {
                    outcome,
                    tool_use_id,
                };
            }
            self.echo(response, emit);
            return Dispatch::Selected { id: id.into() };
        }
        let key = match self.waiters.remove_entry(id) {
            Some((key, _)) => key,
            None => id.into(),
        };
        // Replay echo (PROFILE §8) before the caller acts on the resolution.
        self.echo(response, emit);
        Dispatch::Resolved(Resolved {
            id: key,
            tool_use_id,
            outcome,
        })
    }

    /// Settles the waiter `id` with a response the strict reader rejected (a duplicate
    /// member, WIRE-014; an invalid envelope, WIRE-009) whose `request_id` the caller
    /// recovered from the rejected line: the waiter resolves as [`Outcome::Invalid`] with
    /// `error`, exactly like a success whose payload failed its schema, so for `can_use_tool`
    /// it is a denial (PERM-049: a malformed decision is a denial, never an implicit allow,
    /// and never an answer left open). Nothing is echoed: a rejected line has no valid wire
    /// form to replay. `None` when no waiter `id` is pending (nothing changes: a late or
    /// unknown id stays as unanswered as a well-formed one would be routed, PERM-050).
    pub fn handle_rejected_response(&mut self, id: &str, error: &WireError) -> Option<Resolved> {
        let outcome = Outcome::Invalid(InvalidResponse::of(error));
        let tool_use_id = match self.waiters.get(id)? {
            Waiter::Pending { expect, .. } | Waiter::Emitting { expect, .. } => {
                expect.tool_use_id().map(Box::<str>::from)
            }
            // Already selected during its emission: the first answer stands.
            Waiter::Selected { .. } => return None,
        };
        if let Some(t) = &tool_use_id {
            self.resolved.insert(t);
        }
        self.remember(id, SettledBy::Response, tool_use_id.as_deref());
        if let Some(w @ Waiter::Emitting { .. }) = self.waiters.get_mut(id) {
            // Answered during its own emission: `request` returns it (as for a response).
            *w = Waiter::Selected {
                outcome,
                tool_use_id,
            };
            return None;
        }
        let (key, _) = self.waiters.remove_entry(id)?;
        Some(Resolved {
            id: key,
            tool_use_id,
            outcome,
        })
    }

    /// Local abort of one pending request (WIRE-007): detaches the waiter, emits one
    /// `control_cancel_request`, and returns the rejection at once. `Ok(None)` when the
    /// request is still being emitted (its `request` call returns `Aborted`). The cancel
    /// emission's failure is reported by [`Broker::take_emission_failure`]; the waiter is
    /// settled regardless.
    pub fn abort(
        &mut self,
        id: &str,
        now: Instant,
        emit: &mut dyn Emitter,
    ) -> Result<Option<Resolved>, NotPending> {
        if !self.is_pending(id) {
            return Err(NotPending);
        }
        let mut c = self.abort_many(&[id], now, emit, None);
        Ok(c.resolved.pop())
    }

    /// Aborts several pending requests in the order given (WIRE-011): every waiter is
    /// detached first; then one `control_cancel_request` per request is emitted in order; then
    /// the ordered post-cancellation callback runs (an interrupt handler enqueues its
    /// acknowledgement there, so cancellations precede it). A failing or panicking emission
    /// or callback becomes one [`EmissionFailure`] (no further cancellation is emitted after
    /// it), and every detached waiter still settles `Aborted`. IDs not pending are skipped;
    /// the callback runs even when none was (an interrupt with no pending permission still
    /// acknowledges).
    pub fn abort_many(
        &mut self,
        ids: &[&str],
        _now: Instant,
        emit: &mut dyn Emitter,
        after: Option<&mut AfterCancellation<'_>>,
    ) -> Cancelled {
        let mut detached: Vec<(Box<str>, Option<Box<str>>)> = Vec::with_capacity(ids.len());
        let mut during_emission: Vec<Box<str>> = Vec::new();
        for &id in ids {
            let emitting = match self.waiters.get(id) {
                Some(Waiter::Emitting { expect, .. }) => Some(expect.tool_use_id().map(Box::from)),
                Some(Waiter::Pending { .. }) => None,
                _ => continue,
            };
            match emitting {
                Some(tool_use_id) => {
                    if let Some(t) = &tool_use_id {
                        self.resolved.insert(t);
                    }
                    self.remember(id, SettledBy::Local, tool_use_id.as_deref());
                    if let Some(w) = self.waiters.get_mut(id) {
                        *w = Waiter::Selected {
                            outcome: Outcome::Aborted,
                            tool_use_id,
                        };
                    }
                    during_emission.push(id.into());
                }
                None => {
                    if let Some((key, Waiter::Pending { expect, .. })) =
                        self.waiters.remove_entry(id)
                    {
                        let t = expect.tool_use_id().map(Box::from);
                        if let Some(t) = &t {
                            self.resolved.insert(t);
                        }
                        self.remember(&key, SettledBy::Local, t.as_deref());
                        detached.push((key, t));
                    }
                }
            }
        }
        let mut failure = None;
        let cancel_order = ids
            .iter()
            .filter(|id| {
                detached.iter().any(|(k, _)| &**k == **id)
                    || during_emission.iter().any(|k| &**k == **id)
            })
            .copied()
            .collect::<Vec<_>>();
        for id in cancel_order {
            let Some(request_id) = NonEmpty::new(id.to_owned()) else {
                continue;
            };
            let cancel = ControlCancelRequest { request_id };
            if let Err(f) = self.call(emit, Emission::Cancel(&cancel)) {
                failure = Some(f);
                break;
            }
        }
        if let Some(after) = after {
            let r = catch_unwind(AssertUnwindSafe(|| after(self)));
            let r = match r {
                Ok(Ok(())) => Ok(()),
                Ok(Err(Refused)) => Err(EmissionFailure::Refused),
                Err(payload) => {
                    discard_foreign(payload);
                    Err(EmissionFailure::Panicked)
                }
            };
            if let (Err(f), None) = (r, failure) {
                failure = Some(f);
            }
        }
        if let Some(f) = failure {
            self.last_failure = Some(f);
        }
        Cancelled {
            resolved: detached
                .into_iter()
                .map(|(id, tool_use_id)| Resolved {
                    id,
                    tool_use_id,
                    outcome: Outcome::Aborted,
                })
                .collect(),
            failure,
        }
    }

    /// Input ended (WIRE-008, WIRE-EOF-001): call this after the final record was dispatched.
    /// Every waiter still pending is rejected with `control stream closed`, in registration
    /// order, and no new request starts. A waiter being emitted is selected `StreamClosed`
    /// for its `request` call.
    pub fn handle_eof(&mut self, _now: Instant) -> Vec<Resolved> {
        self.closed = true;
        self.settle_all(Outcome::StreamClosed)
    }

    /// Shuts the broker down: every pending waiter settles `Shutdown`; no new request starts.
    pub fn shutdown(&mut self, _now: Instant) -> Vec<Resolved> {
        self.closed = true;
        self.settle_all(Outcome::Shutdown)
    }

    fn settle_all(&mut self, outcome: Outcome) -> Vec<Resolved> {
        let ids = self.pending_ids();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some((key, Waiter::Pending { expect, .. })) = self.waiters.remove_entry(&*id) {
                let tool_use_id = expect.tool_use_id().map(Box::from);
                if let Some(t) = &tool_use_id {
                    self.resolved.insert(t);
                }
                self.remember(&key, SettledBy::Local, tool_use_id.as_deref());
                out.push(Resolved {
                    id: key,
                    tool_use_id,
                    outcome: outcome.clone(),
                });
            }
        }
        let emitting: Vec<Box<str>> = self
            .waiters
            .iter()
            .filter(|(_, w)| matches!(w, Waiter::Emitting { .. }))
            .map(|(k, _)| k.clone())
            .collect();
        for id in emitting {
            if let Some(w) = self.waiters.get_mut(&id) {
                let tool_use_id = match &*w {
                    Waiter::Emitting { expect, .. } => expect.tool_use_id().map(Box::from),
                    _ => None,
                };
                if let Some(t) = &tool_use_id {
                    self.resolved.insert(t);
                }
                *w = Waiter::Selected {
                    outcome: outcome.clone(),
                    tool_use_id: tool_use_id.clone(),
                };
                self.remember(&id, SettledBy::Local, tool_use_id.as_deref());
            }
        }
        out
    }

    /// A response with no waiter (WIRE-007, PERM-050).
    fn route_unmatched(&self, response: &ControlResponse<'_>) -> Dispatch {
        let id = response.request_id.as_str();
        if let Some(s) = self.settled.get(id) {
            if s.by == SettledBy::Local {
                return Dispatch::KnownLate { id: id.into() };
            }
            if let Some(t) = &s.tool_use_id {
                if self.resolved.contains(t) {
                    return Dispatch::Duplicate {
                        id: id.into(),
                        tool_use_id: t.clone(),
                    };
                }
            }
        }
        if let Some(t) = payload_tool_use_id(&response.outcome) {
            if self.resolved.contains(&t) {
                return Dispatch::Duplicate {
                    id: id.into(),
                    tool_use_id: t.into(),
                };
            }
        }
        Dispatch::Orphan(response.clone().into_owned())
    }

    fn remember(&mut self, id: &str, by: SettledBy, tool_use_id: Option<&str>) {
        self.settled.insert(
            id,
            Settled {
                by,
                tool_use_id: tool_use_id.map(Box::from),
            },
        );
    }

    fn echo(&mut self, response: &ControlResponse<'_>, emit: &mut dyn Emitter) {
        if self.replay {
            if let Err(f) = self.call(emit, Emission::Echo(response)) {
                self.last_failure = Some(f);
            }
        }
    }

    /// Emits one record through `emit` with the broker's containment (WIRE-015): a refusal or
    /// panic becomes the fixed [`EmissionFailure`], also kept for
    /// [`Broker::take_emission_failure`]. The permission race publishes its state this way so
    /// that it shares the FIFO with the broker's records.
    pub fn emit(
        &mut self,
        emit: &mut dyn Emitter,
        emission: Emission<'_>,
    ) -> Result<(), EmissionFailure> {
        let r = self.call(emit, emission);
        if let Err(f) = r {
            self.last_failure = Some(f);
        }
        r
    }

    /// Calls the emitter with containment (WIRE-015).
    fn call(
        &mut self,
        emit: &mut dyn Emitter,
        emission: Emission<'_>,
    ) -> Result<(), EmissionFailure> {
        match catch_unwind(AssertUnwindSafe(|| emit.emit(self, emission))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(Refused)) => Err(EmissionFailure::Refused),
            Err(payload) => {
                discard_foreign(payload);
                Err(EmissionFailure::Panicked)
            }
        }
    }
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

/// The tool identity a response carries: the decision's `toolUseID` (or its PERM-047 alias).
fn payload_tool_use_id(outcome: &ControlOutcome<'_>) -> Option<String> {
    let ControlOutcome::Success {
        response: Some(raw),
    } = outcome
    else {
        return None;
    };
    let doc = raw.document().ok()?;
    let obj = doc.root().as_object()?;
    let v = obj.get("toolUseID").or_else(|| obj.get("tool_use_id"))?;
    Some(v.as_str()?.decode().into_owned())
}

/// WIRE-009: the response validated with the schema stored with its waiter.
fn validate(expect: &Expect, outcome: &ControlOutcome<'_>, open: bool) -> Outcome {
    let response = match outcome {
        ControlOutcome::Error {
            error,
            pending_permission_requests,
        } => {
            return Outcome::Error {
                message: error.to_string(),
                pending_permission_requests: pending_permission_requests
                    .clone()
                    .map(|v| v.into_iter().map(ControlRequest::into_owned).collect()),
            }
        }
        ControlOutcome::Success { response } => response,
    };
    match expect {
        // PERM-040..048, 046, 052; never skipped for a non-error success (WIRE-009).
        Expect::Permission(request) => match PermissionDecision::from_outcome(outcome, request) {
            Ok(d) => Outcome::Success(Payload::Decision(d.into_owned())),
            Err(e) => Outcome::Invalid(InvalidResponse::of(&e)),
        },
        Expect::Subtype(_) if open => Outcome::Success(match response {
            None => Payload::None,
            Some(r) => Payload::Json(r.clone().into_owned()),
        }),
        Expect::Subtype(subtype) => match check_payload(*subtype, response.as_ref()) {
            Ok(p) => Outcome::Success(p),
            Err(e) => Outcome::Invalid(InvalidResponse::of(&e)),
        },
    }
}

fn typed<'r, T: crate::wire::WireValue<'r>>(
    raw: Option<&'r RawJson<'_>>,
) -> Result<Payload, WireError> {
    let Some(raw) = raw else {
        return Err(WireError::missing(&Path::ROOT.key("response"), "WIRE-009"));
    };
    decode_payload::<T>(raw)?;
    Ok(Payload::Json(raw.clone().into_owned()))
}

fn check_payload(
    subtype: Option<ControlSubtype>,
    raw: Option<&RawJson<'_>>,
) -> Result<Payload, WireError> {
    use ControlSubtype as S;
    match subtype {
        // WIRE-010: the acknowledgement carries no operation payload.
        Some(S::Interrupt) => match raw {
            None => Ok(Payload::None),
            Some(_) => Err(WireError::invalid(
                &Path::ROOT.key("response"),
                "no payload",
                "WIRE-010",
            )),
        },
        Some(S::Initialize) => typed::<InitializeResponse<'_>>(raw),
        Some(S::McpStatus) => typed::<McpStatusResponse<'_>>(raw),
        Some(S::GetContextUsage) => typed::<ContextUsageResponse<'_>>(raw),
        Some(S::RewindFiles) => typed::<RewindFilesResponse<'_>>(raw),
        Some(S::CancelAsyncMessage) => typed::<CancelAsyncMessageResponse>(raw),
        Some(S::McpSetServers) => typed::<McpSetServersResponse<'_>>(raw),
        Some(S::ReloadPlugins) => typed::<ReloadPluginsResponse<'_>>(raw),
        Some(S::GetSettings) => typed::<GetSettingsResponse<'_>>(raw),
        Some(S::Elicitation) => typed::<ElicitationResponse<'_>>(raw),
        // Operations whose payload the catalog leaves open, and unknown subtypes.
        _ => Ok(match raw {
            None => Payload::None,
            Some(r) => Payload::Json(r.clone().into_owned()),
        }),
    }
}
