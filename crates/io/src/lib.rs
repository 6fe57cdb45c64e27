//! agentx-io: the protocol's I/O edge, and the host client built on it.
//!
//! Owns: the blocking output driver ([`OutputFifo`]: producer threads, one writer, the locks
//! and condition variable that WIRE-003 and WIRE-015 need when threads share an output), the
//! one frame sink of every driver ([`RecordWriter`]: the FIFO writes through it, and so do the
//! `agentx` loop's stdout sinks), the one read side: [`Deframer`] (the read buffers and the
//! framer, without I/O) under the blocking read loop from any `io::Read` ([`Pump`]: `check`,
//! `canon`, agentx's stdin), and, with the `tokio` feature, the `tokio_util::codec` line codec
//! (`LineCodec`). On top of them, [`host`]: `Client` (threads) and `AsyncClient` (tokio) for
//! Rust SDK hosts.
//! Must never: hold protocol state or rules of its own; every decision a driver acts on is
//! made by a pure component it feeds (frames come from `encode::FrameEncoder`, order from
//! `control::Outbox`, lines from `frame::Reader`; the HTTP providers in `openai` feed their
//! own pure submodules).
//!
//! The output path: a record ([`wire::Encode`](agentx_wire::wire::Encode)) → `FrameEncoder` (one
//! validated frame, WIRE-013) → `Outbox` (the ordered queue, WIRE-003) → a driver that writes
//! whole frames (here [`OutputFifo`] over a [`RecordWriter`], or `LineCodec` under a tokio
//! `FramedWrite`).

#![deny(unsafe_code)]
#![warn(missing_docs)]

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
pub use writer::{flush_writer, write_frame, RecordWriter, WriteAll};

pub mod host;
