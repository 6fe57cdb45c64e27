//! Fuzz entry points of the agent core, shared by the cargo-fuzz targets in `fuzz/` and by
//! `cargo test`, which replays the checked-in seeds under `corpus/` through the very same
//! functions (the codec's own are `agentx_wire::fuzzing`).
//!
//! Each function takes arbitrary bytes and panics only when a property is broken; every other
//! outcome, including a rejected input, is a normal return. Not a stable API.

pub mod attach;
pub mod control;
pub mod provider;
pub mod session;
pub mod upload;
