//! The providers suite of `agentx-core` (tests/README.md): the `auth.json` registry rules, its
//! public projection and the startup checks (PROFILE §3). Run one module as
//! `cargo test -p agentx-core --test providers <name>`.

mod provider_http_startup;
mod provider_projection;
mod provider_registry_rules;
mod provider_registry_sizes;
