//! The codec suite (one test binary; tests/README.md): the sans-IO codec layers `frame`, `json`,
//! `wire`, `encode`, `control` and the blocking/tokio `driver` pieces over them, the
//! `agentx-wire` CLI (`check`, `canon`), the sample generator, the sans-IO source check, and the
//! replay of every checked-in fuzz corpus (`fuzz_seeds_*`, `cargo test --test codec fuzz_seeds`).
//! Each module is one former `tests/<name>.rs` binary; run one as `cargo test --test codec <name>`.

use agentx_test_support::conformance as common;

mod control_broker;
mod fuzz_seeds_attach;
mod fuzz_seeds_provider;
mod fuzz_seeds_session;
mod fuzz_seeds_upload;
mod sans_io_core;
