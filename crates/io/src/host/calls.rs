//! The host's own control calls on the shared [`Broker`]: the same correlation map the agent
//! uses (WIRE-006..009), with the waiting caller's reply slot beside each pending id.
//!
//! Owns: registering a call before its envelope is written, turning the broker's settled
//! outcomes into the caller's reply (a success payload already validated against its
//! subtype's schema, WIRE-009), abandonment (the broker's abort: one `control_cancel_request`,
//! the known-late response ignored, WIRE-007) and EOF (WIRE-008). Never does I/O: it returns
//! the records to write, and the client writes them outside its lock.

use std::collections::HashMap;
use std::time::Instant;

use super::error::{HostError, ResponseFault};
use agentx_wire::control::broker::{
    Broker, Dispatch, Emission, Emitter, Outcome, Payload, Refused, Resolved, Started,
};
use agentx_wire::wire::initialize::InitializeResponse;
use agentx_wire::wire::{
    ControlRequestBody, ControlResponse, Error as WireError, InputRecord, Path,
    PeerInitializeResponse, RawJson,
};

/// What a call's caller receives.
pub(crate) type Reply = Result<Option<RawJson<'static>>, HostError>;

/// Where a settled call's reply goes (a channel end, blocking or async).
pub(crate) trait ReplySlot {
    fn send(self, reply: Reply);
}

impl ReplySlot for std::sync::mpsc::Sender<Reply> {
    fn send(self, reply: Reply) {
        let _ = std::sync::mpsc::Sender::send(&self, reply);
    }
}

#[cfg(feature = "tokio")]
impl ReplySlot for ::tokio::sync::oneshot::Sender<Reply> {
    fn send(self, reply: Reply) {
        let _ = ::tokio::sync::oneshot::Sender::send(self, reply);
    }
}

/// The broker plus the reply slots of pending calls.
pub(crate) struct Calls<S> {
    broker: Broker,
    slots: HashMap<Box<str>, (S, &'static str)>,
}

/// Collects what the broker emits as input records for the client to write, in order.
struct Collect<'o>(&'o mut Vec<InputRecord<'static>>);

impl Emitter for Collect<'_> {
    fn emit(&mut self, _: &mut Broker, emission: Emission<'_>) -> Result<(), Refused> {
        match emission {
            Emission::Request(r) => self.0.push(InputRecord::ControlRequest(r.clone())),
            Emission::Cancel(c) => self.0.push(InputRecord::ControlCancelRequest(c.clone())),
            // A host does not echo responses or publish session state.
            Emission::Echo(_) | Emission::State(_) => {}
        }
        Ok(())
    }
}

fn collect<'o>(out: &'o mut Vec<InputRecord<'static>>) -> Collect<'o> {
    Collect(out)
}

impl<S: ReplySlot> Calls<S> {
    /// `open`: success payloads are kept unchecked for a lenient view (the lenient peer
    /// profile, `Broker::set_open_payloads`).
    pub(crate) fn new(open: bool) -> Self {
        let mut broker = Broker::with_id_prefix("host_req_");
        broker.set_open_payloads(open);
        Calls {
            broker,
            slots: HashMap::new(),
        }
    }

    /// Registers a call (WIRE-006) and returns its id and the records to write.
    pub(crate) fn start(
        &mut self,
        body: ControlRequestBody<'static>,
        slot: S,
        now: Instant,
    ) -> Result<(Box<str>, Vec<InputRecord<'static>>), HostError> {
        let subtype = body.subtype().map_or("control", |s| s.as_str());
        let mut out = Vec::with_capacity(1);
        let started = self
            .broker
            .request(body, now, &mut collect(&mut out))
            .map_err(|_| HostError::StreamClosed)?;
        match started {
            Started::Pending { id } => {
                self.slots.insert(id.clone(), (slot, subtype));
                Ok((id, out))
            }
            Started::Resolved(r) => {
                slot.send(reply(r.outcome, subtype));
                Ok((r.id, out))
            }
        }
    }

    /// Routes an inbound `control_response`: a pending call settles with its validated
    /// payload; known-late, duplicate and orphan responses are ignored (WIRE-007, PERM-050).
    pub(crate) fn on_response(&mut self, response: &ControlResponse<'_>, now: Instant) {
        let mut out = Vec::new();
        if let Dispatch::Resolved(r) =
            self.broker
                .handle_response(response, now, &mut collect(&mut out))
        {
            self.settle(r);
        }
    }

    /// Abandons a pending call (timeout or a dropped future): the cancellation to write, or
    /// nothing when it already settled.
    pub(crate) fn abandon(&mut self, id: &str, now: Instant) -> Vec<InputRecord<'static>> {
        let mut out = Vec::new();
        if let Ok(Some(r)) = self.broker.abort(id, now, &mut collect(&mut out)) {
            // The caller already gave up; drop its slot without a reply.
            self.slots.remove(&r.id);
        }
        out
    }

    /// The agent's output ended: every pending call is rejected (WIRE-008) and no new one
    /// starts.
    pub(crate) fn on_eof(&mut self, now: Instant) {
        for r in self.broker.handle_eof(now) {
            self.settle(r);
        }
    }

    fn settle(&mut self, r: Resolved) {
        if let Some((slot, subtype)) = self.slots.remove(&r.id) {
            slot.send(reply(r.outcome, subtype));
        }
    }
}

fn reply(outcome: Outcome, subtype: &'static str) -> Reply {
    match outcome {
        Outcome::Success(Payload::None) => Ok(None),
        Outcome::Success(Payload::Json(raw)) => Ok(Some(raw)),
        Outcome::Success(Payload::Decision(_)) => Ok(None),
        Outcome::Error { message, .. } => Err(HostError::Control {
            subtype,
            error: message,
        }),
        Outcome::Invalid(e) => Err(HostError::InvalidResponse {
            subtype,
            reason: ResponseFault::Schema(e),
        }),
        Outcome::Aborted => Err(HostError::Timeout { subtype }),
        Outcome::StreamClosed | Outcome::Shutdown => Err(HostError::StreamClosed),
    }
}

/// Decodes an `initialize` success payload in the lenient peer profile's view (open
/// vocabularies as strings, the whole payload kept).
pub(crate) fn peer_initialize_response(
    payload: Option<RawJson<'static>>,
) -> Result<PeerInitializeResponse<'static>, HostError> {
    let raw = payload.ok_or_else(|| initialize_invalid(ResponseFault::NoPayload))?;
    PeerInitializeResponse::decode(&raw).map_err(|e| initialize_invalid(ResponseFault::Decode(e)))
}

/// Decodes an `initialize` success payload and checks WIRE-024 (one selected descriptor,
/// agreeing flat and nested fields).
pub(crate) fn initialize_response(
    payload: Option<RawJson<'static>>,
) -> Result<InitializeResponse<'static>, HostError> {
    let invalid = |e| initialize_invalid(ResponseFault::Decode(e));
    let raw = payload.ok_or_else(|| initialize_invalid(ResponseFault::NoPayload))?;
    let doc = raw.document().map_err(|e| invalid(WireError::json(e)))?;
    Ok(InitializeResponse::decode_checked(doc.root(), &Path::ROOT)
        .map_err(invalid)?
        .into_owned())
}

#[cold]
fn initialize_invalid(reason: ResponseFault) -> HostError {
    HostError::InvalidResponse {
        subtype: "initialize",
        reason,
    }
}
