//! agentx-core: the agent side of the protocol, sans-IO.
//!
//! Owns the session state machine ([`session`]: control dispatch, turns, the permission race,
//! interrupts, uploads, hooks, SDK MCP calls, result accounting), the model interface and the
//! deterministic scripted model ([`model`]), the provider registry and selection
//! ([`registry`], PROFILE §3), attachment admission and media normalization ([`attach`],
//! PROFILE §6), the tools' catalog ([`tools`]: names, input grammar, schemas) and the prior
//! context of a stored transcript ([`transcript`], PROFILE §11).
//!
//! Must never: read a clock, sleep, spawn, or do I/O. Time comes in as `now`, every effect
//! goes out as an [`session::Action`] for a driver (the `agentx` binary, or a simulator on
//! virtual time in tests). The one contained exception is lopdf's validation thread
//! (`attach::pdf`), which runs a hostile PDF with a bounded stack and a wall-clock budget.
//! Bytes are parsed and written by the codec (`agentx-wire`), never here.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod attach;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod model;
pub mod registry;
pub mod session;
pub mod tools;
pub mod transcript;
