//! agentx-wire: a zero-copy streaming codec for the Structured SDK Wire Protocol.
//!
//! Layers, each importing only those above it (see `ARCHITECTURE.md`):
//! `frame` (bytes → lines) → `json` (one strict document) → `wire` (typed records) →
//! `encode` (one validated frame per record) → `control` (the ordered [`Outbox`], the control
//! broker) / `attach` / `provider` (protocol state) → `driver`, `host`, `cli` and `src/bin`
//! (I/O). Everything above `driver` is sans-IO: no clock, no thread, no lock, no I/O.
//!
//! # A host in a few lines
//! Read an agent's output as typed records, answer its `can_use_tool` request, write a user
//! record. Lines come from any `io::Read` ([`Pump`]); every record we write is one frame that
//! [`FrameEncoder`] validated against our credentials first (WIRE-013).
//!
//! ```
//! use agentx_wire::{CredentialSet, FrameEncoder, InputRecord, OutputRecord, Pump};
//! use agentx_wire::json::Parser;
//! use agentx_wire::wire::{
//!     ControlRequestBody, ControlResponse, PermissionDecision, UserContent, UserMessage,
//!     UserRecord,
//! };
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // What the agent printed (in a host: the child's stdout).
//! let from_agent: &[u8] = br#"{"type":"control_request","request_id":"req_1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}}
//! {"type":"keep_alive"}
//! "#;
//! // What we send back (in a host: the child's stdin).
//! let mut to_agent: Vec<u8> = Vec::new();
//! let mut encoder = FrameEncoder::new();
//! encoder.set_credentials(CredentialSet::new(["sk-my-api-key"])?)?;
//! let mut parser = Parser::new();
//! for line in Pump::new(from_agent) {
//!     let line = line?;
//!     match OutputRecord::decode_line(&line.bytes, &mut parser)? {
//!         OutputRecord::ControlRequest(request) => {
//!             if let ControlRequestBody::CanUseTool(ask) = &request.request {
//!                 let decision = PermissionDecision::Allow {
//!                     updated_input: None,
//!                     updated_permissions: None,
//!                     tool_use_id: Some(ask.tool_use_id.as_str().into()),
//!                 };
//!                 let answer = ControlResponse::success_with(request.request_id.clone(), &decision);
//!                 to_agent.extend_from_slice(encoder.encode(&InputRecord::ControlResponse(answer))?);
//!             }
//!         }
//!         OutputRecord::KeepAlive => {}
//!         other => println!("{}", other.record_type()),
//!     }
//! }
//! let prompt = InputRecord::User(UserRecord {
//!     message: UserMessage::Object { versioned: false, content: UserContent::Text("Thanks!".into()) },
//!     parent_tool_use_id: None,
//!     uuid: None,
//!     session_id: None,
//!     is_synthetic: None,
//!     tool_use_result: None,
//!     priority: None,
//!     timestamp: None,
//!     is_replay: false,
//! });
//! to_agent.extend_from_slice(encoder.encode(&prompt)?);
//! assert_eq!(
//!     String::from_utf8(to_agent)?,
//!     concat!(
//!         r#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"behavior":"allow","toolUseID":"toolu_1"}}}"#, "\n",
//!         r#"{"type":"user","message":{"role":"user","content":"Thanks!"},"parent_tool_use_id":null}"#, "\n",
//!     )
//! );
//! # Ok(())
//! # }
//! ```
//!
//! Several threads writing one output share a [`driver::OutputFifo`] (the blocking driver:
//! order of pushes is order on the wire, WIRE-003; callbacks contained, WIRE-015). With the
//! `tokio` feature, `driver::LineCodec` plugs the same framing and encoder into
//! `tokio_util::codec::{FramedRead, FramedWrite}` over a child's pipes; `host::Client` is a
//! complete client on top of all this.
//!
//! # Features
//! `default` = `cli` (everything this repository builds). Each layer is a feature that turns on
//! the layers below it only (ARCHITECTURE.md "Layers the compiler checks"): with
//! `default-features = false` a codec-only user gets `frame`, `json`, `wire`, `encode` and
//! `control`, and no I/O. `driver` (blocking I/O: [`Pump`], [`OutputFifo`]), `host`, `model`,
//! `attach` (media), `provider`, `agent` (`session`, `store`, `tools`, `hook`), `tokio`,
//! `openai` and `cli` add the rest; `sample` and `fuzzing` are for tests and fuzzing.
#![deny(unsafe_code)]
// The whole public API is documented (issue 9 item 7).
#![warn(missing_docs)]

#[cfg(feature = "attach")]
pub mod attach;
#[cfg(feature = "cli")]
pub mod cli;

pub mod control;
#[cfg(feature = "driver")]
pub mod driver;
pub mod encode;
pub mod frame;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod hex;
#[cfg(feature = "agent")]
pub mod hook;
#[cfg(feature = "host")]
pub mod host;
pub mod json;
#[cfg(feature = "model")]
pub mod model;
#[cfg(feature = "provider")]
pub mod provider;
#[cfg(feature = "sample")]
pub mod sample;
#[cfg(feature = "agent")]
pub mod session;
#[cfg(feature = "agent")]
pub mod store;
#[cfg(feature = "agent")]
pub mod tools;
pub mod wire;

pub use control::{Full, Outbox};
#[cfg(feature = "driver")]
pub use driver::{OutputFifo, Pump, RecordLine, RecordWriter, WriteAll};
pub use encode::{CredentialSet, EncoderFailure, FrameEncoder};
pub use frame::{FrameError, Line, Reader};
pub use wire::{Direction, Encode, InputRecord, OutputRecord};
