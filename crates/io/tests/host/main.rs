//! The host suite (one test binary; tests/README.md): the host client, blocking and async, against
//! scripted peers over pipes, the real `agentx`, and the recorded Claude CLI stream. The fleet test
//! (`tests/host_fleet.rs`) stays its own binary: it lowers this process's RLIMIT_NOFILE and counts
//! its open descriptors. Run one module as `cargo test --test host <name>`.

mod host_async_pipes;
mod host_batch_order;
mod host_claude_cli;
mod host_client_pipes;
mod host_input_containment;
mod host_limits;
