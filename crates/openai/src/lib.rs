//! The `openai` and `azure_openai` providers (PROFILE §14): Chat Completions over HTTP with
//! server-sent events, behind the model interface ([`agentx_core::model`]: a [`ModelRequest`] in,
//! [`ModelEvent`]s out).
//!
//! Split by concern, the pure parts first:
//! - [`endpoint`]: URL and authentication headers from the provider's private route, and the
//!   transport rule (TLS except to loopback hosts);
//! - [`request`]: the JSON body (our own writer), attachments as media parts;
//! - [`media`]: which attachments a request carries (the PROFILE §14 limits), their base64;
//! - [`sse`]: the incremental event-stream parser;
//! - [`mapping`]: chunks to model events (our own strict parser);
//! - [`retry`]: the retry policy, the WARN lines and the failure categories;
//! - [`client`]: the I/O (reqwest + rustls on tokio), cancellation;
//! - [`blocking`]: the same for a thread-based caller, with a thread-safe [`Interrupt`].
//!
//! ```no_run
//! # async fn demo(provider: &agentx_core::registry::Provider,
//! #               request: agentx_core::model::ModelRequest) {
//! use agentx_openai::{Client, Endpoint, Report};
//!
//! let client = Client::new(Endpoint::of(provider).unwrap()).unwrap();
//! let interrupt = std::future::pending::<()>(); // the caller's cancellation
//! client.call(&request, interrupt, &mut |report| match report {
//!     Report::Event(event) => { /* hand to the session core */ }
//!     Report::Warn(line) => eprintln!("{line}"),
//! }).await;
//! # }
//! ```
//!
//! Must never: write to stdout or stderr itself, or put a key anywhere but a request header.
//!
//! [`ModelRequest`]: agentx_core::model::ModelRequest
//! [`ModelEvent`]: agentx_core::model::ModelEvent
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod blocking;
pub mod client;
pub mod endpoint;
pub mod mapping;
pub mod media;
pub mod names;
pub mod request;
pub mod retry;
pub mod sse;

pub use blocking::{startup_diagnostic, BlockingClient, Interrupt};
pub use client::{
    mint_message_id, CallEnd, Client, ClientError, Report, CONNECT_TIMEOUT, READ_TIMEOUT,
};
pub use endpoint::{Endpoint, EndpointError, OPENAI_DEFAULT_BASE_URL};
