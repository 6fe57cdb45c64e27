//! The codec suite of `agentx-io` (tests/README.md): the encoder and the output FIFO over real
//! writers (containment, the protocol's scenarios, order). Run one module as
//! `cargo test -p agentx-io --test codec <name>`.

mod encode_containment;
mod encode_scenarios;
mod fifo_order;
