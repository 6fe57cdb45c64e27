//! The codec suite of `agentx-wire` (tests/README.md): `frame`, `json`, `wire`, `encode`,
//! `control`, the sample generator, and the replay of the codec's fuzz corpora (`fuzz_seeds_*`).
//! Run one module as `cargo test --test codec <name>`.

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
