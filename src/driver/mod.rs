//! Drivers: the I/O side around the sans-IO core (sockets, processes, clocks, threads).
//!
//! Must never: hold protocol state of its own; every decision a driver acts on is made by a
//! pure component it feeds (the core, or a driver's own pure submodules).

#[cfg(feature = "openai")]
pub mod openai;
