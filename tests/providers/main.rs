//! The providers suite (one test binary; tests/README.md): the `auth.json` registry and its
//! projection (PROFILE §3), and the HTTP providers (PROFILE §14) against the loopback HTTP/1.1 + SSE
//! server of `tests/provider_http_support`, at the driver level and through the real `agentx`.
//! Run one module as `cargo test --test providers <name>`.

#[path = "../common/agentx.rs"]
mod harness;
#[path = "../provider_http_support/mod.rs"]
mod provider_http_support;

mod provider_http_agentx;
mod provider_http_attachments;
mod provider_http_deltas;
mod provider_http_driver;
mod provider_http_redirect;
mod provider_http_startup;
mod provider_http_structured;
mod provider_projection;
mod provider_registry_rules;
