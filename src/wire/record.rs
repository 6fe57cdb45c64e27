//! Whole records: [`InputRecord`] (host → agent) and [`OutputRecord`] (agent → host), the
//! top-level `type` dispatch of each direction (one table each, STYLE #4), and the preserved
//! [`UnknownRecord`].
//!
//! Owns PROFILE §2a's record rule (the top-level value is an object with a string `type`)
//! and WIRE-002: an unknown top-level `type` is not an error but a preserved
//! [`UnknownRecord`] that the caller warns about ([`InputRecord::warning`]) and ignores.
//! Every record encodes to canonical compact JSON with `type` (and `subtype`) first and the
//! other members in each record's documented order. Never does I/O.

use crate::json::{self, Object, Parser, Value};

use super::control::{ControlCancelRequest, ControlRequest, ControlResponse};
use super::decode::{name_is, IntoOwned, Obj, Path, Text};
use super::env::EnvironmentUpdate;
use super::error::Error;
use super::import::{ImportOperation, ImportRejected, ImportResult};
use super::lifecycle::{
    AuthStatus, PromptSuggestion, RateLimitEvent, StreamlinedText, StreamlinedToolUseSummary,
    ToolProgress, ToolUseSummary,
};
use super::output::{AssistantRecord, ResultRecord, StreamEvent};
use super::raw::{RawJson, RawObject};
use super::system::SystemEvent;
use super::user::UserRecord;
use super::Direction;

/// A record of a `type` this profile does not define, kept whole (WIRE-002).
#[derive(Clone, Debug, PartialEq)]
pub struct UnknownRecord<'a> {
    /// The `type` member as written.
    pub record_type: Text<'a>,
    /// The complete record, validated JSON.
    pub record: RawObject<'a>,
}

/// The `check` warning kind for a preserved unknown record or system subtype (PROFILE §2).
pub const UNKNOWN_TYPE_WARNING: &str = "unknown_type";

/// Splits a parsed line into its object and `type` (PROFILE §2a).
fn envelope<'d, 'a>(v: Value<'d, 'a>) -> Result<(Object<'d, 'a>, json::Str<'a>), Error> {
    let obj = v.as_object().ok_or_else(Error::not_an_object)?;
    let at = Path::ROOT;
    let ty_at = at.key("type");
    match super::decode::member(obj, "type") {
        None => Err(Error::missing(&ty_at, "PROFILE §2a")),
        Some(t) => {
            let t = t
                .as_str()
                .ok_or_else(|| Error::wrong_type(&ty_at, "a string", "PROFILE §2a"))?;
            Ok((obj, t))
        }
    }
}

fn unknown<'a>(v: Value<'_, 'a>, ty: json::Str<'a>) -> UnknownRecord<'a> {
    UnknownRecord {
        record_type: ty.decode(),
        record: RawObject(RawJson::from_value(v)),
    }
}

/// Writes `{"type":"<t>", <members>}` for a record whose members are generated.
#[inline]
fn tagged(out: &mut Vec<u8>, type_member: &'static str, members: impl FnOnce(&mut Obj<'_>)) {
    let mut w = Obj::begin(out);
    w.constant(type_member);
    members(&mut w);
    w.end();
}

macro_rules! record_table {
    (
        $(#[$m:meta])*
        pub enum $enum:ident, $dir:expr;
        $( $variant:ident($ty:ty) = $name:literal,
           decode: |$o:ident, $v:ident, $a:ident| $dec:expr,
           encode: |$r:ident, $out:ident| $enc:expr; )*
    ) => {
        $(#[$m])*
        #[derive(Clone, Debug, PartialEq)]
        pub enum $enum<'a> {
            $( #[doc = concat!("A `", $name, "` record.")] $variant($ty), )*
            /// `keep_alive`: nothing else is read (PROFILE §2b).
            KeepAlive,
            /// An unknown top-level `type` (WIRE-002): warn and ignore.
            Unknown(UnknownRecord<'a>),
        }

        impl<'a> $enum<'a> {
            /// Decodes a parsed line.
            pub fn decode(v: Value<'_, 'a>) -> Result<Self, Error> {
                let (obj, ty) = envelope(v)?;
                let root = Path::ROOT;
                $(
                    if name_is(&ty, $name) {
                        let ($o, $v, $a) = (obj, v, &root);
                        let _ = $v;
                        return $dec.map($enum::$variant);
                    }
                )*
                if name_is(&ty, "keep_alive") {
                    return Ok($enum::KeepAlive);
                }
                Ok($enum::Unknown(unknown(v, ty)))
            }

            /// Parses and decodes one line with a reused parser.
            pub fn decode_line(line: &'a [u8], parser: &mut Parser) -> Result<Self, Error> {
                let v = parser.parse(line).map_err(Error::json)?;
                Self::decode(v)
            }

            /// Writes the canonical compact record (no newline).
            pub fn encode(&self, out: &mut Vec<u8>) {
                match self {
                    $( $enum::$variant($r) => { let $out = out; $enc } )*
                    $enum::KeepAlive => out.extend_from_slice(b"{\"type\":\"keep_alive\"}"),
                    $enum::Unknown(u) => u.record.0.write_canonical(out),
                }
            }

            /// The record's `type` as written.
            pub fn record_type(&self) -> &str {
                match self {
                    $( $enum::$variant(_) => $name, )*
                    $enum::KeepAlive => "keep_alive",
                    $enum::Unknown(u) => &u.record_type,
                }
            }

            /// `Some("unknown_type")` for a preserved unknown record (WIRE-002) or unknown
            /// `system` subtype: the caller warns and ignores it.
            pub fn warning(&self) -> Option<&'static str> {
                match self {
                    $enum::Unknown(_) => Some(UNKNOWN_TYPE_WARNING),
                    _ => self.system_warning(),
                }
            }

            /// The direction this enum decodes.
            pub const DIRECTION: Direction = $dir;

            /// The owned form, for a value that must outlive its input line.
            pub fn into_owned(self) -> $enum<'static> {
                match self {
                    $( $enum::$variant(r) => $enum::$variant(IntoOwned::into_owned(r)), )*
                    $enum::KeepAlive => $enum::KeepAlive,
                    $enum::Unknown(u) => $enum::Unknown(UnknownRecord {
                        record_type: IntoOwned::into_owned(u.record_type),
                        record: IntoOwned::into_owned(u.record),
                    }),
                }
            }
        }
    };
}

record_table! {
    /// A host → agent record.
    pub enum InputRecord, Direction::Input;
    User(UserRecord<'a>) = "user",
        decode: |o, v, at| UserRecord::decode_members(o, Direction::Input, at),
        encode: |r, out| r.encode(out);
    AttachmentImport(ImportOperation<'a>) = "attachment_import",
        decode: |o, v, at| ImportOperation::decode_members(o, at),
        encode: |r, out| r.encode(out);
    ControlRequest(ControlRequest<'a>) = "control_request",
        decode: |o, v, at| ControlRequest::decode_members(o, at),
        encode: |r, out| r.encode(out);
    ControlResponse(ControlResponse<'a>) = "control_response",
        decode: |o, v, at| ControlResponse::decode_members(o, at),
        encode: |r, out| r.encode(out);
    ControlCancelRequest(ControlCancelRequest<'a>) = "control_cancel_request",
        decode: |o, v, at| ControlCancelRequest::decode_members(o, at),
        encode: |r, out| r.encode(out);
    UpdateEnvironmentVariables(EnvironmentUpdate<'a>) = "update_environment_variables",
        decode: |o, v, at| EnvironmentUpdate::decode_members(o, at),
        encode: |r, out| r.encode(out);
}

record_table! {
    /// An agent → host record.
    pub enum OutputRecord, Direction::Output;
    User(UserRecord<'a>) = "user",
        decode: |o, v, at| UserRecord::decode_members(o, Direction::Output, at),
        encode: |r, out| r.encode(out);
    Assistant(AssistantRecord<'a>) = "assistant",
        decode: |o, v, at| AssistantRecord::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"assistant\"", |w| r.encode_members(w));
    Result(ResultRecord<'a>) = "result",
        decode: |o, v, at| ResultRecord::decode_checked(o, at),
        encode: |r, out| tagged(out, "\"type\":\"result\"", |w| r.encode_members(w));
    StreamEvent(StreamEvent<'a>) = "stream_event",
        decode: |o, v, at| StreamEvent::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"stream_event\"", |w| r.encode_members(w));
    System(SystemEvent<'a>) = "system",
        decode: |o, v, at| SystemEvent::decode_members(o, v, at),
        encode: |r, out| r.encode(out);
    ControlRequest(ControlRequest<'a>) = "control_request",
        decode: |o, v, at| ControlRequest::decode_members(o, at),
        encode: |r, out| r.encode(out);
    ControlResponse(ControlResponse<'a>) = "control_response",
        decode: |o, v, at| ControlResponse::decode_members(o, at),
        encode: |r, out| r.encode(out);
    ControlCancelRequest(ControlCancelRequest<'a>) = "control_cancel_request",
        decode: |o, v, at| ControlCancelRequest::decode_members(o, at),
        encode: |r, out| r.encode(out);
    AttachmentImportResult(ImportResult<'a>) = "attachment_import_result",
        decode: |o, v, at| ImportResult::decode_members(o, at),
        encode: |r, out| r.encode(out);
    AttachmentImportRejected(ImportRejected<'a>) = "attachment_import_rejected",
        decode: |o, v, at| ImportRejected::decode_members(o, at),
        encode: |r, out| r.encode(out);
    ToolProgress(ToolProgress<'a>) = "tool_progress",
        decode: |o, v, at| ToolProgress::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"tool_progress\"", |w| r.encode_members(w));
    AuthStatus(AuthStatus<'a>) = "auth_status",
        decode: |o, v, at| AuthStatus::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"auth_status\"", |w| r.encode_members(w));
    RateLimitEvent(RateLimitEvent<'a>) = "rate_limit_event",
        decode: |o, v, at| RateLimitEvent::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"rate_limit_event\"", |w| r.encode_members(w));
    ToolUseSummary(ToolUseSummary<'a>) = "tool_use_summary",
        decode: |o, v, at| ToolUseSummary::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"tool_use_summary\"", |w| r.encode_members(w));
    PromptSuggestion(PromptSuggestion<'a>) = "prompt_suggestion",
        decode: |o, v, at| PromptSuggestion::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"prompt_suggestion\"", |w| r.encode_members(w));
    StreamlinedText(StreamlinedText<'a>) = "streamlined_text",
        decode: |o, v, at| StreamlinedText::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"streamlined_text\"", |w| r.encode_members(w));
    StreamlinedToolUseSummary(StreamlinedToolUseSummary<'a>) = "streamlined_tool_use_summary",
        decode: |o, v, at| StreamlinedToolUseSummary::decode_members(o, at),
        encode: |r, out| tagged(out, "\"type\":\"streamlined_tool_use_summary\"", |w| r.encode_members(w));
}

impl InputRecord<'_> {
    fn system_warning(&self) -> Option<&'static str> {
        None
    }
}

impl OutputRecord<'_> {
    fn system_warning(&self) -> Option<&'static str> {
        match self {
            OutputRecord::System(SystemEvent::Unknown(_)) => Some(UNKNOWN_TYPE_WARNING),
            _ => None,
        }
    }
}

macro_rules! owned_via_method {
    ($($t:ident),*) => {$(
        impl IntoOwned for $t<'_> {
            type Owned = $t<'static>;
            fn into_owned(self) -> $t<'static> {
                $t::into_owned(self)
            }
        }
    )*};
}

owned_via_method!(
    UserRecord,
    ImportOperation,
    ControlResponse,
    ControlCancelRequest,
    EnvironmentUpdate,
    SystemEvent,
    ImportResult,
    ImportRejected
);
