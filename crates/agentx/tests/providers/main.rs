//! The providers suite of `agentx` (tests/README.md): the HTTP providers (PROFILE §14) through the
//! real `agentx`, against the loopback HTTP/1.1 + SSE server of `agentx_test_support::http`. Run
//! one module as `cargo test -p agentx --test providers <name>`.

use agentx_test_support::harness;
use agentx_test_support::http as provider_http_support;

mod provider_http_agentx;
mod provider_http_attachments;
mod provider_http_compact;
mod provider_http_cost;
mod provider_http_deltas;
mod provider_http_structured;
