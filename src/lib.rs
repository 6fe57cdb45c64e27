//! agentx-wire: a zero-copy streaming codec for the Structured SDK Wire Protocol.
//!
//! This crate is the codec alone (ARCHITECTURE.md): `frame` (bytes → lines) → `json` (one
//! strict document) → `wire` (typed records) → `encode` (one validated frame per record) →
//! `control` (the ordered [`Outbox`], the control broker). It reads no clock, spawns nothing,
//! takes no lock and does no I/O: bytes and `now` come in as arguments, bytes and records go
//! out. The I/O edge and the host client are `agentx-io`; the agent is `agentx-core` and the
//! `agentx` binary.
//!
//! # Both directions in a few lines
//! Read an agent's output as typed records, answer its `can_use_tool` request, write a user
//! record. Every record we write is one frame that [`FrameEncoder`] validated against our
//! credentials first (WIRE-013).
//!
//! ```
//! use agentx_wire::{CredentialSet, FrameEncoder, InputRecord, OutputRecord, Reader};
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
//! let mut reader = Reader::new();
//! reader.push_slice(from_agent);
//! reader.finish();
//! while let Some(line) = reader.next_line() {
//!     let line = line?;
//!     match OutputRecord::decode_line(line.as_bytes(), &mut parser)? {
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
//! # Features
//! None selects a layer. `sample` (the deterministic stream generator), `fuzzing` (the fuzz
//! entry points) and `oracle` (serde_json as their differential oracle) are for tests,
//! benches and fuzzing.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod control;
pub mod encode;
pub mod frame;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod hex;
pub mod json;
#[cfg(feature = "sample")]
pub mod sample;
pub mod wire;

pub use control::{Full, Outbox};
pub use encode::{CredentialSet, EncoderFailure, FrameEncoder};
pub use frame::{FrameError, Line, Reader};
pub use wire::{Direction, Encode, InputRecord, OutputRecord};
