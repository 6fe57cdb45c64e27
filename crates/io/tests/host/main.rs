//! The host suite of `agentx-io` (tests/README.md): the host client, blocking and async, against
//! scripted peers over pipes, its limits, and the recorded Claude CLI stream. Run one module as
//! `cargo test -p agentx-io --test host <name>`.

mod host_agent_requests_bound;
mod host_async_pipes;
mod host_batch_order;
mod host_buffer_bound;
mod host_claude_cli;
mod host_client_pipes;
mod host_flood_process;
mod host_input_containment;
mod host_limits;
