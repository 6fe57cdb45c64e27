//! The store suite of `agentx-wire-cli` (tests/README.md): `agentx-wire attach` into the blob
//! store under AgentX home. Run one module as `cargo test -p agentx-wire-cli --test store <name>`.

mod attach_store;
