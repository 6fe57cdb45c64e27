//! The providers suite of `agentx-openai` (tests/README.md): the HTTP providers (PROFILE §14) at
//! the driver level against the loopback HTTP/1.1 + SSE server of `agentx_test_support::http`.
//! Run one module as `cargo test -p agentx-openai --test providers <name>`.

use agentx_test_support::http as provider_http_support;

mod provider_http_driver;
mod provider_http_redirect;
