//! The providers suite of `agentx` (tests/README.md): the HTTP providers (PROFILE §14) through the
//! real `agentx`, against the loopback HTTP/1.1 + SSE server of `agentx_test_support::http`. Run
//! one module as `cargo test -p agentx --test providers <name>`.

use agentx_test_support::harness;
use agentx_test_support::http as provider_http_support;

mod provider_http_agentx;
mod provider_http_attachments;
mod provider_http_bounds;
mod provider_http_coding;
mod provider_http_compact;
mod provider_http_cost;
mod provider_http_deltas;
mod provider_http_structured;

/// A request body with its leading system message removed: the standalone profile sends the
/// default coding-agent system message (PROFILE §17, asserted by `provider_http_coding`), and
/// these tests look at the conversation after it.
pub(crate) fn conversation(body: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(body).expect("the body is JSON");
    if let Some(msgs) = v["messages"].as_array_mut() {
        if msgs.first().is_some_and(|m| m["role"] == "system") {
            msgs.remove(0);
        }
    }
    v
}
