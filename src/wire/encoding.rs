//! [`Encode`]: the one way to say "append this record's JSON".
//!
//! Owns: the trait every input and output record, every payload with a canonical encoding and
//! raw pre-marshaled bytes implement, so that `encode::FrameEncoder`, the `control` outbox and
//! the drivers take any of them alike. An implementation appends exactly one complete JSON
//! value (no terminator, no whitespace required) to `out` and nothing else.
//! Must never: write a line terminator, read or write I/O, or fail: a record that exists
//! encodes (the frame encoder checks the physical line and the credentials afterwards).
//!
//! ```
//! use agentx_wire::wire::{Encode, InputRecord};
//!
//! let mut out = Vec::new();
//! InputRecord::KeepAlive.encode(&mut out);
//! assert_eq!(out, br#"{"type":"keep_alive"}"#);
//! // Pre-marshaled bytes are a record too: appended as they are.
//! br#"{"type":"keep_alive"}"#[..].encode(&mut out);
//! assert_eq!(out.len(), 2 * 21);
//! ```

use super::control::{ControlCancelRequest, ControlRequest, ControlResponse};
use super::decode::Obj;
use super::env::EnvironmentUpdate;
use super::import::{ImportOperation, ImportRejected, ImportResult};
use super::lifecycle::{
    AuthStatus, PromptSuggestion, RateLimitEvent, StreamlinedText, StreamlinedToolUseSummary,
    ToolProgress, ToolUseSummary,
};
use super::output::{AssistantRecord, ResultRecord, StreamEvent};
use super::permission::PermissionDecision;
use super::raw::{RawJson, RawObject};
use super::record::{InputRecord, OutputRecord};
use super::subtypes::ControlRequestBody;
use super::system::SystemEvent;
use super::user::UserRecord;
use super::AttachmentRef;

/// A value that appends its complete JSON text (no terminator) to a buffer.
///
/// Typed records write their canonical compact form (`type` and `subtype` first, then the
/// documented member order); raw bytes (`[u8]`, `Vec<u8>`, `bytes::Bytes`) are appended as they
/// are, for a host that marshals its records itself.
pub trait Encode {
    /// Appends the value's JSON text to `out`.
    fn encode(&self, out: &mut Vec<u8>);
}

impl Encode for [u8] {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
}

impl<const N: usize> Encode for [u8; N] {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
}

/// JSON text the host marshaled itself, appended as it is.
impl Encode for str {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
    }
}

impl Encode for Vec<u8> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
}

impl Encode for bytes::Bytes {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self);
    }
}

impl<T: Encode + ?Sized> Encode for &T {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        (**self).encode(out)
    }
}

impl<T: Encode + ?Sized> Encode for Box<T> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        (**self).encode(out)
    }
}

impl<T: Encode + ?Sized> Encode for std::sync::Arc<T> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        (**self).encode(out)
    }
}

/// A parsed JSON value re-encoded canonically (`json::write_value`).
impl Encode for crate::json::Value<'_, '_> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        crate::json::write_value(out, *self)
    }
}

impl Encode for RawJson<'_> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.write_canonical(out)
    }
}

impl Encode for RawObject<'_> {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.write_canonical(out)
    }
}

/// Types whose inherent `encode` writes the complete value.
macro_rules! encode_via_inherent {
    ($($t:ident),* $(,)?) => {$(
        impl Encode for $t<'_> {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                $t::encode(self, out)
            }
        }
    )*};
}

encode_via_inherent!(
    InputRecord,
    OutputRecord,
    UserRecord,
    ControlRequest,
    ControlResponse,
    ControlCancelRequest,
    ControlRequestBody,
    PermissionDecision,
    EnvironmentUpdate,
    SystemEvent,
    ImportOperation,
    ImportResult,
    ImportRejected,
);

impl Encode for AttachmentRef {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        AttachmentRef::encode(self, out)
    }
}

/// Output records whose members are generated: the complete record with its `type` first,
/// byte-identical to the matching [`OutputRecord`] variant's encoding.
macro_rules! encode_tagged {
    ($($t:ident = $name:literal),* $(,)?) => {$(
        impl Encode for $t<'_> {
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                let mut w = Obj::begin(out);
                w.constant(concat!("\"type\":\"", $name, "\""));
                self.encode_members(&mut w);
                w.end();
            }
        }
    )*};
}

encode_tagged!(
    AssistantRecord = "assistant",
    ResultRecord = "result",
    StreamEvent = "stream_event",
    ToolProgress = "tool_progress",
    AuthStatus = "auth_status",
    RateLimitEvent = "rate_limit_event",
    ToolUseSummary = "tool_use_summary",
    PromptSuggestion = "prompt_suggestion",
    StreamlinedText = "streamlined_text",
    StreamlinedToolUseSummary = "streamlined_tool_use_summary",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Parser;

    /// Every tagged payload encodes exactly as its `OutputRecord` variant does.
    #[test]
    fn tagged_payloads_match_their_record() {
        let stream = crate::sample::realistic_stream(3, 64 << 10);
        let mut parser = Parser::new();
        let mut tagged = 0;
        for line in stream.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let Ok(rec) = OutputRecord::decode_line(line, &mut parser) else {
                continue;
            };
            let mut via_record = Vec::new();
            Encode::encode(&rec, &mut via_record);
            let mut via_payload = Vec::new();
            match &rec {
                OutputRecord::Assistant(r) => r.encode(&mut via_payload),
                OutputRecord::Result(r) => r.encode(&mut via_payload),
                OutputRecord::StreamEvent(r) => r.encode(&mut via_payload),
                OutputRecord::ToolProgress(r) => r.encode(&mut via_payload),
                _ => continue,
            }
            tagged += 1;
            assert_eq!(via_record, via_payload);
        }
        assert!(tagged > 10, "{tagged} tagged records");
    }

    #[test]
    fn raw_bytes_and_wrappers_append_unchanged() {
        let mut out = Vec::new();
        let v = b"{\"a\":1}".to_vec();
        v.encode(&mut out);
        Encode::encode(&&v, &mut out);
        Box::new(v.clone()).encode(&mut out);
        bytes::Bytes::from(v.clone()).encode(&mut out);
        let dynamic: &dyn Encode = &&v[..];
        dynamic.encode(&mut out);
        assert_eq!(out, b"{\"a\":1}".repeat(5));
    }
}
