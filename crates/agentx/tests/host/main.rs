//! The host suite of `agentx` (tests/README.md): the host client of `agentx-io` against the real
//! `agentx` binary, uploads included. Run one module as `cargo test -p agentx --test host <name>`.

use agentx_test_support::conformance as common;

mod host_agentx;
mod host_uploads;
