//! Fuzz entry points, shared by the cargo-fuzz targets in `fuzz/` and by `cargo test`, which
//! replays the checked-in seeds under `corpus/` through the very same functions (the agent
//! core's are `agentx_core::fuzzing`).
//!
//! Each function takes arbitrary bytes and panics only when a property of the codec is broken
//! (a round trip differs, an oracle disagrees, a credential escapes); every other outcome,
//! including a rejected input, is a normal return. Not a stable API.

pub mod encode;
pub mod frame;
pub mod json;
pub mod wire;
