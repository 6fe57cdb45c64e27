//! The host side: a client that spawns (or attaches to) an agent speaking the protocol and
//! drives it, as the official SDKs' `query()` and client objects do, on our codec.
//!
//! Owns: the child process (any command that speaks the protocol; `agentx` by default), the
//! read loop that decodes every output record once into an owned value, correlation of the
//! host's own control requests (`initialize`, `interrupt` and the rest, WIRE-006..009) with
//! timeouts and `control_cancel_request` on abandonment (WIRE-007), the `can_use_tool`
//! callback whose errors and panics deny (WIRE-PERM-002), the upload protocol
//! (WIRE-018..019) from the host's end, and a one-call [`query`].
//!
//! Must never: hold protocol rules the codec already owns (records are decoded and encoded by
//! `wire`; lines are framed by `frame`), swallow a record (an undecodable line is surfaced as
//! an error item, an unknown type as `OutputRecord::Unknown`), or block the read loop on a
//! callback (each permission request runs on its own thread).
//!
//! **Queues and their bounds** (issue 46; `docs/limits.md` has the whole workspace's). A host
//! that stops calling `recv` stalls its agent: the client stops reading the agent's stdout, and
//! the agent's own output bound does the rest.
//! - Records `recv` has not taken: [`DEFAULT_MAX_BUFFERED_RECORDS`] (1,024) and
//!   [`DEFAULT_MAX_BUFFERED_BYTES`] (64 MiB), `ClientOptions::max_buffered_*`; when either is
//!   full the client does not read (`inbound::Inbox`, the async `budget::Budget`).
//! - One output line being framed: the line limit (8,388,608 bytes) and one 256 KiB read.
//! - The agent's stderr: 1 MiB kept, the rest read and dropped (`command::KeptStderr`).
//! - Permission requests with the callback: [`MAX_PENDING_PERMISSIONS`] (256), one more is
//!   denied at once (`pending::Pending`).
//! - What the host sends: the blocking client's `OutputFifo` holds 4,096 frames and its
//!   producers wait (the read side's answers too, so it stops reading); the async client's
//!   queue (`outgoing::Outgoing`) takes the host's own sends, uploads wait below 1 MiB, and
//!   at most `MAX_QUEUED_ANSWERS` (1,024) unread answers to the agent's requests stop the read
//!   side until the agent reads them.
//! - The host's own control calls and uploads: one entry each, removed when settled.
//!
//! ```no_run
//! use agentx_io::host::{AgentCommand, Client, ClientOptions, PermissionAnswer};
//! use std::time::Duration;
//!
//! let options = ClientOptions::default().can_use_tool(|req: &agentx_io::host::ToolPermissionRequest| {
//!     Ok(if req.tool_name == "Read" { PermissionAnswer::allow() } else { PermissionAnswer::deny("not here") })
//! });
//! let client = Client::spawn(&AgentCommand::stream_json("agentx"), options)?;
//! let init = client.initialize(Duration::from_secs(10))?;
//! println!("{} providers", init.providers.len());
//! client.send_text("hello")?;
//! while let Some(record) = client.recv() {
//!     let record = record?;
//!     if record.record_type() == "result" { break; }
//! }
//! let exit = client.close(Duration::from_secs(10))?;
//! assert!(exit.success());
//! # Ok::<(), agentx_io::host::HostError>(())
//! ```

#[cfg(feature = "tokio")]
mod budget;
mod calls;
mod client;
mod command;
mod detached;
mod error;
mod import;
mod inbound;
mod limits;
#[cfg(feature = "tokio")]
mod outgoing;
mod pending;
mod permission;
mod query;
mod stream;
#[cfg(feature = "tokio")]
mod tokio_client;

pub use agentx_wire::wire::PeerProfile;
pub use client::{Client, ClientOptions, ExitReport};
pub use command::AgentCommand;
pub use error::{DecodeError, HostError, ResponseFault, UploadStatus, INPUT_FAILURE_TEXT};
pub use import::UploadSource;
pub use inbound::{DEFAULT_MAX_BUFFERED_BYTES, DEFAULT_MAX_BUFFERED_RECORDS};
pub use limits::{
    descriptor_limit, raise_descriptor_limit, DescriptorLimit, DESCRIPTORS_PER_AGENT,
    DESCRIPTORS_PER_ASYNC_AGENT,
};
#[cfg(feature = "tokio")]
pub use outgoing::MAX_QUEUED_ANSWERS;
pub use pending::MAX_PENDING_PERMISSIONS;
pub use permission::{
    CallbackError, CanUseToolHandler, PermissionAnswer, ToolPermissionRequest,
    TOO_MANY_PERMISSION_REQUESTS,
};
pub use query::{query, Query};
#[cfg(feature = "tokio")]
pub use tokio_client::{AnswerFuture, AsyncCanUseTool, AsyncClient, AsyncClientOptions};
