//! The `control` layer: protocol state on the output side.
//!
//! Owns: the shared output FIFO (WIRE-003) through which every outbound record (events,
//! control requests, cancellations, keepalives) reaches the encoder in order. The correlation
//! map of pending requests, abort, cancellation and EOF rejection will live here too.
//! Must never: know what a tool is, parse bytes, or write around the encoder.

mod outbox;

pub use outbox::{Full, Outbox, DEFAULT_CAPACITY, DEFAULT_CAPACITY_BYTES};
