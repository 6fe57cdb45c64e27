//! Running the built-in tools: [`read`], [`write`] and [`bash`] (PROFILE §10), and the coding
//! tools of PROFILE §17, [`edit`], [`glob`], [`grep`] and [`todo`], one file each; the
//! read-before-write ledger ([`seen`]), the `structuredPatch` hunks ([`patch`]) and the
//! `tool_use_result` JSON ([`result_json`]) they share. `Bash` runs each call in its own
//! process group ([`process`]) so an interrupt kills everything it started. Their names, input
//! grammar and schemas are the core's catalog, re-exported here.
//!
//! This is driver territory (it reads files and spawns processes); the session core only sees
//! [`ToolCall`] values and outcomes. Must never: follow a decision it was not given
//! (permission is decided before a call runs), or block the thread that reads stdin.

pub mod bash;
pub mod dispatch;
pub mod edit;
pub mod env;
pub mod fsx;
pub mod glob;
pub mod grep;
pub mod grep_hits;
pub mod patch;
pub mod process;
pub mod read;
pub mod result_json;
pub mod seen;
pub mod todo;
pub mod walk;
pub mod write;

pub use agentx_core::tools::*;
