//! The codec suite (one test binary; tests/README.md): the sans-IO codec layers `frame`, `json`,
//! `wire`, `encode`, `control` and the blocking/tokio `driver` pieces over them, the
//! `agentx-wire` CLI (`check`, `canon`), the sample generator, the sans-IO source check, and the
//! replay of every checked-in fuzz corpus (`fuzz_seeds_*`, `cargo test --test codec fuzz_seeds`).
//! Each module is one former `tests/<name>.rs` binary; run one as `cargo test --test codec <name>`.

use agentx_test_support::conformance as common;

mod encode_deltas;
mod frame_limits;
mod frame_reader;
mod frame_split;
mod fuzz_seeds_encode;
mod fuzz_seeds_frame;
mod fuzz_seeds_json;
mod fuzz_seeds_wire;
mod json_conformance;
mod json_parse;
mod json_write;
mod sample_seeds;
mod sample_stream;
mod wire_audit;
mod wire_conformance;
mod wire_control;
mod wire_input;
mod wire_output;
mod wire_roundtrip;
