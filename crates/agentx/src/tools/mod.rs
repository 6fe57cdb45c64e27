//! Running the tools of PROFILE §10: [`file`] for `Read`/`Write`, [`bash`] for `Bash`, each
//! call in its own process group ([`process`]) so an interrupt kills everything it started.
//! Their names, input grammar and schemas are the core's catalog, re-exported here.
//!
//! This is driver territory (it reads files and spawns processes); the session core only sees
//! [`ToolCall`] values and [`ToolOutput`]s. Must never: follow a decision it was not given
//! (permission is decided before a call runs), or block the thread that reads stdin.

pub mod bash;
pub mod env;
pub mod file;
pub mod process;

pub use agentx_core::tools::*;
