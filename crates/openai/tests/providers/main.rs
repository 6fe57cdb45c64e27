//! The providers suite (one test binary; tests/README.md): the `auth.json` registry and its
//! projection (PROFILE §3), and the HTTP providers (PROFILE §14) against the loopback HTTP/1.1 + SSE
//! server of `tests/provider_http_support`, at the driver level and through the real `agentx`.
//! Run one module as `cargo test --test providers <name>`.

use agentx_test_support::http as provider_http_support;

mod provider_http_driver;
mod provider_http_redirect;
