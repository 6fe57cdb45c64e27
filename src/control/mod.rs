//! The `control` layer: protocol state on the output side.
//!
//! Owns: the session's [`Outbox`], the one ordered queue of validated frames (WIRE-003)
//! through which every outbound record (events, control requests, cancellations, keepalives)
//! leaves in order; the control
//! [`Broker`] (the correlation map of pending requests, abort, cancellation, EOF rejection,
//! response validation by the waiter's schema, orphan routing: WIRE-006..009, WIRE-015); and
//! duplicate suppression by resolved tool-use ID (`resolved`, PERM-050).
//! Must never: know what a tool does, parse bytes of its own, read a clock, or write around the
//! encoder.

pub mod broker;
mod outbox;
pub mod resolved;

pub use broker::{
    AfterCancellation, Broker, Cancelled, Dispatch, Emission, EmissionFailure, Emitter,
    InvalidResponse, NotPending, Outcome, Payload, Refused, RequestError, Resolved, Started,
    StateChange, EMISSION_FAILURE_TEXT,
};
pub use outbox::{Full, Outbox, DEFAULT_CAPACITY, DEFAULT_CAPACITY_BYTES};
pub use resolved::{ResolvedToolUses, RESOLVED_CAPACITY};
