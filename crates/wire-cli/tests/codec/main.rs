//! The codec suite of `agentx-wire-cli` (tests/README.md): the `agentx-wire` tool (`check`,
//! `canon`) as a process, and the tokio codec over its pipes. Run one module as
//! `cargo test -p agentx-wire-cli --test codec <name>`.

mod cli_check;
mod encode_canon;
mod tokio_codec_pipes;
