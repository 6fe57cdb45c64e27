//! Every record of the protocol as typed Rust values: closed decoding and canonical
//! encoding, both directions (host → agent input, agent → host output).
//!
//! Owns the `wire` layer of ARCHITECTURE.md. A line parsed by `json` is decoded into an
//! [`InputRecord`] or [`OutputRecord`] whose strings borrow the line ([`Text`] is
//! `Cow<str>`, copied only when escapes force it) and whose model-API payloads stay
//! validated [`RawJson`]; `into_owned()` gives the `'static` form for records that outlive
//! their buffer. Closed where the protocol says so (user messages, content blocks, import
//! operations, the permission catalog, control payloads: WIRE-021, PERM-048); duplicate
//! members never get here (json::parse rejects them at every depth, WIRE-014). Unknown
//! top-level types and `system` subtypes are preserved with a warning (WIRE-002); unknown
//! control subtypes decode so the dispatcher can answer them (PROFILE §5). Errors
//! distinguish fatal stream errors from record-level ones (WIRE-021, [`Error::is_fatal`]).
//! Every record encodes to canonical compact JSON (`type` and `subtype` first, then the
//! documented member order) and `decode(encode(r)) == r`.
//!
//! This module does no I/O and imports only `json`: never `encode`, `control`, `attach`,
//! `provider` or `cli`.
//!
//! ```
//! use agentx_wire::json::Parser;
//! use agentx_wire::wire::{Encode, InputRecord, UserContent, UserMessage};
//!
//! let line = br#"{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}"#;
//! let mut parser = Parser::new();
//! let record = InputRecord::decode_line(line, &mut parser).unwrap();
//! let InputRecord::User(user) = &record else { panic!("a user record") };
//! assert!(matches!(
//!     &user.message,
//!     UserMessage::Object { content: UserContent::Text(t), .. } if t == "hi"
//! ));
//! // decode(encode(r)) == r, and the encoding is canonical.
//! let mut out = Vec::new();
//! record.encode(&mut out);
//! assert_eq!(out, line);
//! // Unknown top-level types are preserved with a warning (WIRE-002), not errors.
//! let other = InputRecord::decode_line(br#"{"type":"future_thing"}"#, &mut parser).unwrap();
//! assert_eq!(other.warning(), Some("unknown_type"));
//! ```

pub mod api;
mod api_key_source;
pub mod attachment_ref;
pub mod check;
pub mod control;
pub(crate) mod decode;
mod encoding;
pub mod env;
mod error;
pub mod grammar;
pub mod import;
pub mod initialize;
pub mod lifecycle;
mod manifest;
pub mod output;
pub mod path;
pub mod peer;
pub mod permission;
mod privacy;
mod raw;
pub mod record;
mod rejected;
pub mod responses;
pub mod sdk_hooks;
pub mod sdk_input;
pub mod subtypes;
pub mod system;
pub mod system_init;
mod table;
pub mod user;

pub use api_key_source::{ApiKeySource, Provenance};
pub use attachment_ref::AttachmentRef;
pub use control::{ControlCancelRequest, ControlOutcome, ControlRequest, ControlResponse};
pub use decode::{IntoOwned, Path, Text, WireValue};
pub use encoding::Encode;
pub use env::EnvironmentUpdate;
pub use error::{Error, ErrorKind, Severity};
pub use import::{ImportOperation, ImportRejected, ImportResult, ImportStatus, ReasonCode};
pub use output::{AssistantRecord, ResultRecord, ResultSubtype, StreamEvent};
pub use peer::{PeerInit, PeerInitializeResponse, PeerProfile};
pub use permission::{CanUseTool, PermissionDecision, PermissionUpdate};
pub use raw::{RawJson, RawObject};
pub use record::{InputRecord, OutputRecord, UnknownRecord, UNKNOWN_TYPE_WARNING};
pub use rejected::{classify_rejected_line, RejectedLineClass};
pub use subtypes::{ControlRequestBody, ControlSubtype};
pub use system::{SystemEvent, SystemSubtype};
pub use user::{ContentBlock, Priority, UserContent, UserMessage, UserRecord};

/// Which way a record flows (PROFILE §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Host → agent.
    Input,
    /// Agent → host.
    Output,
}
