//! The `session` layer: the agent side's protocol state machine (PROFILE §8).
//!
//! Owns (so far) the permission race (`permission`). Must never: read a clock, sleep, spawn,
//! lock or do I/O.

pub mod permission;
