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
//!
//! The values it hands out and takes are in `values` (re-exported here); the WIRE-009 check
//! of a response against its waiter's schema is `validate`.

use std::collections::HashMap;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

use crate::encode::discard_foreign;
use crate::json;
use crate::wire::grammar::NonEmpty;
use crate::wire::{
    ControlCancelRequest, ControlRequest, ControlRequestBody, ControlResponse, Error as WireError,
    Path,
};

use super::resolved::{BoundedMap, ResolvedToolUses, RESOLVED_CAPACITY};

pub use crate::wire::responses::CONTROL_STREAM_CLOSED;

mod validate;
mod values;

use validate::{payload_tool_use_id, validate, Expect};
pub use values::{
    AfterCancellation, Cancelled, Dispatch, Emission, EmissionFailure, Emitter, InvalidResponse,
    NotPending, Outcome, Payload, Refused, RequestError, Resolved, Started, StateChange,
    DEFAULT_ID_PREFIX, EMISSION_FAILURE_TEXT,
};

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
