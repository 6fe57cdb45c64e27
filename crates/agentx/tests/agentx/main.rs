//! The agentx suite (tests/README.md): black-box tests of the real `agentx` binary through the
//! harness (`agentx_test_support::harness`): stream-json sessions, one-shot mode, permissions,
//! hostile input, backpressure, memory, providers, the SDK profile's arguments, options and hooks,
//! structured output, the tools and permission modes, uploads. Run one module as
//! `cargo test -p agentx --test agentx <name>`.

use agentx_test_support::harness;
use agentx_test_support::http as provider_http_support;

mod agentx_backpressure;
mod agentx_bash_processes;
mod agentx_coding_eval;
mod agentx_edit;
mod agentx_environment;
mod agentx_home_files;
mod agentx_hostile;
mod agentx_list_providers;
mod agentx_mcp;
mod agentx_memory;
mod agentx_network;
mod agentx_oneshot;
mod agentx_permission;
mod agentx_permission_race;
mod agentx_providers;
mod agentx_replayed;
mod agentx_sdk_args;
mod agentx_sdk_hooks;
mod agentx_sdk_options;
mod agentx_search;
mod agentx_search_rg;
mod agentx_session;
mod agentx_signals;
mod agentx_structured;
mod agentx_tools;
mod agentx_turn_write;
mod agentx_uploads;
