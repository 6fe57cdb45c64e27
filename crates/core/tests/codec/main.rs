//! The codec suite of `agentx-core` (tests/README.md): the control broker with the permission
//! race, the sans-IO source check of the core, and the replay of the core's fuzz corpora
//! (`fuzz_seeds_*`). Run one module as `cargo test -p agentx-core --test codec <name>`.

use agentx_test_support::conformance as common;

mod control_broker;
mod fuzz_seeds_attach;
mod fuzz_seeds_provider;
mod fuzz_seeds_session;
mod fuzz_seeds_upload;
mod sans_io_core;
