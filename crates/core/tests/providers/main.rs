//! The providers suite (one test binary; tests/README.md): the `auth.json` registry and its
//! projection (PROFILE §3), and the HTTP providers (PROFILE §14) against the loopback HTTP/1.1 + SSE
//! server of `tests/provider_http_support`, at the driver level and through the real `agentx`.
//! Run one module as `cargo test --test providers <name>`.

mod provider_http_startup;
mod provider_projection;
mod provider_registry_rules;
