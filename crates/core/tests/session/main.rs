//! The session suite (tests/README.md): the sans-IO session core, the permission race and the
//! upload lifecycle on virtual time (`session_sim`), PROFILE §5's fixed strings and PROFILE §11's
//! context rebuild as properties of the core. No process is spawned here. Run one module as
//! `cargo test -p agentx-core --test session <name>`.

use agentx_test_support::conformance as common;
mod session_sim;

mod permission_race;
mod profile_strings;
mod session_compaction;
mod session_controls;
mod session_hooks;
mod session_limits;
mod session_line_limit;
mod session_mcp;
mod session_mcp_elicit;
mod session_mcp_sdk_live;
mod session_permissions;
mod session_structured;
mod session_turns;
mod store_context_prop;
mod upload_core;
mod upload_session;
