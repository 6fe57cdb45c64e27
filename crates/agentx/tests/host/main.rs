//! The host suite (one test binary; tests/README.md): the host client, blocking and async, against
//! scripted peers over pipes, the real `agentx`, and the recorded Claude CLI stream. The fleet test
//! (`tests/host_fleet.rs`) stays its own binary: it lowers this process's RLIMIT_NOFILE and counts
//! its open descriptors. Run one module as `cargo test --test host <name>`.

use agentx_test_support::conformance as common;

mod host_agentx;
mod host_uploads;
