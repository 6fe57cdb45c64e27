//! agentx, the headless agent endpoint (PROFILE §2), and everything that does the agent's I/O:
//! the command line ([`args`]), startup and the run loop ([`run`]), the tools ([`tools`]) and
//! the `settings.json` permission hook ([`hook`]). The protocol rules are the core's
//! (`agentx-core`), the files under AgentX home `agentx-home`'s, the HTTP providers
//! `agentx-openai`'s.
//!
//! The library exists for the `agentx` binary, its tests and its benches; it is not a stable
//! API. Must never decide a protocol rule the core owns.
#![deny(unsafe_code)]

pub mod args;
pub mod hook;
pub mod mcp;
pub mod run;
pub mod tools;
