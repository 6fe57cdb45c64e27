//! agentx-wire: a zero-copy streaming codec for the Structured SDK Wire Protocol.
//!
//! Layers, each importing only those above it (see `ARCHITECTURE.md`):
//! `frame` (bytes → lines) → `json` (one strict document) → `wire` (typed records) →
//! `encode` (validated single-write output) → `control` / `attach` / `provider` (protocol
//! state) → `cli` and `src/bin` (I/O).
#![deny(unsafe_code)]

pub mod attach;
pub mod cli;
pub mod control;
pub mod driver;
pub mod encode;
pub mod frame;
pub mod hook;
pub mod host;
pub mod json;
pub mod model;
pub mod provider;
pub mod sample;
pub mod session;
pub mod store;
pub mod tools;
pub mod wire;

#[doc(hidden)]
pub mod fuzzing;
