//! The `driver` layer: the I/O side around the sans-IO core (sockets, processes, clocks,
//! threads).
//!
//! Owns: the blocking output driver ([`OutputFifo`]: producer threads, one writer, the locks
//! and condition variable that WIRE-003 and WIRE-015 need when threads share an output), the
//! one frame sink of every driver ([`RecordWriter`]: the FIFO writes through it, and so do the
//! `agentx` loop's stdout sinks), the one read side: [`Deframer`] (the read buffers and the
//! framer, without I/O) under the blocking read loop from any `io::Read` ([`Pump`]: `check`,
//! `canon`, agentx's stdin), the host's read sides and, with the `tokio` feature, the
//! `tokio_util::codec` line codec (`LineCodec`).
//! Must never: hold protocol state or rules of its own; every decision a driver acts on is
//! made by a pure component it feeds (frames come from `encode::FrameEncoder`, order from
//! `control::Outbox`, lines from `frame::Reader`; the HTTP providers in `openai` feed their
//! own pure submodules).
//!
//! The output path: a record ([`wire::Encode`](crate::wire::Encode)) → `FrameEncoder` (one
//! validated frame, WIRE-013) → `Outbox` (the ordered queue, WIRE-003) → a driver that writes
//! whole frames (here [`OutputFifo`] over a [`RecordWriter`], or `LineCodec` under a tokio
//! `FramedWrite`).

#[cfg(feature = "tokio")]
mod codec;
mod deframer;
mod fifo;
mod pump;
mod writer;

#[cfg(feature = "tokio")]
pub use codec::{CodecError, LineCodec};

pub use deframer::{Deframer, DEFAULT_CHUNK};
pub use fifo::{OutputFifo, PushError, Pushed, State};
pub use pump::{Pump, PumpError, RecordLine};
pub use writer::{RecordWriter, WriteAll};

// The endpoint driver uses the `cli` argument types, so it comes with the binaries.
#[cfg(feature = "cli")]
pub mod agentx;
#[cfg(feature = "openai")]
pub mod openai;
