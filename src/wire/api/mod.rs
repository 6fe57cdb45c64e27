//! The Messages-API payloads inside agentx's own output records, typed (PROFILE §8, §14): the
//! assistant `message` with its content blocks, the `stream_event` `event` shapes
//! (`message_start`, `content_block_start` / `_delta` / `_stop`, `message_delta`,
//! `message_stop`), the `tool_result` block of a `user` record and the `result` `usage`.
//!
//! Owns: their members, canonical member order and exact spelling (the bytes agentx has always
//! written), and [`ApiPayload`], the member that holds one: [`ApiPayload::Typed`] when a session
//! writes it (encoded straight into the frame, no intermediate buffer), [`ApiPayload::Raw`] when
//! it is decoded from a line (a peer's payload carries shapes and members this profile does
//! not type, and is kept whole, as validated JSON). The strict decoders
//! ([`StreamPayload::parse`], [`ApiMessage::parse`], [`ToolResultBlock::parse`],
//! [`TurnUsage::parse`]) read a raw payload as exactly one of these closed shapes: what the
//! round-trip fuzzers hold every agentx record to. The shapes live one concern to a file
//! (`message`, `stream`, `tool_result`); this file holds the wrapper, the `usage` shapes of
//! `result` and `task_progress`, and the round-trip check. Never does I/O.

use std::borrow::Cow;
use std::fmt;

use crate::json::{Object, Value};

use super::decode::{member, object, Closed, IntoOwned, Path, WireValue};
use super::error::Error;
use super::raw::RawJson;
use super::table::wire_struct;

mod message;
mod stream;
#[cfg(test)]
mod tests;
mod tool_result;

pub use message::{ApiBlock, ApiMessage, MessageUsage};
pub use stream::{BlockDelta, StreamPayload};
pub use tool_result::{ToolResultBlock, ToolResultContent};

const RULE: &str = "PROFILE §14";
const CLOSED: Closed = Closed::Yes("PROFILE §14");

/// A Messages-API object inside a record: typed when written, validated JSON when decoded.
#[derive(Clone)]
pub enum ApiPayload<'a, T> {
    /// Written by a session: encoded member by member into the frame.
    Typed(T),
    /// Decoded from a line: the object as it appeared (validated).
    Raw(RawJson<'a>),
}

impl<'a, T: WireValue<'a>> ApiPayload<'a, T> {
    /// The decoded object, `None` for a typed one.
    pub fn raw(&self) -> Option<&RawJson<'a>> {
        match self {
            ApiPayload::Raw(r) => Some(r),
            ApiPayload::Typed(_) => None,
        }
    }

    /// The JSON text: as it appeared for a decoded payload, the canonical encoding of a
    /// typed one.
    pub fn to_json(&self) -> Cow<'_, [u8]> {
        match self {
            ApiPayload::Raw(r) => Cow::Borrowed(r.as_bytes()),
            ApiPayload::Typed(t) => {
                let mut out = Vec::new();
                t.encode(&mut out);
                Cow::Owned(out)
            }
        }
    }
}

impl<'a, T: WireValue<'a>> WireValue<'a> for ApiPayload<'a, T> {
    /// Any object, kept whole (a peer's payload is not re-modelled).
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        object(v, at, "PROFILE §2a")?;
        Ok(ApiPayload::Raw(RawJson::from_value(v)))
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ApiPayload::Typed(t) => t.encode(out),
            ApiPayload::Raw(r) => r.write_canonical(out),
        }
    }
}

/// Equal when the canonical encodings are (a typed payload equals its decoded form).
impl<'a, T: WireValue<'a>> PartialEq for ApiPayload<'a, T> {
    fn eq(&self, other: &Self) -> bool {
        if let (ApiPayload::Raw(a), ApiPayload::Raw(b)) = (self, other) {
            return a == b;
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        self.encode(&mut a);
        other.encode(&mut b);
        a == b
    }
}

impl<T> fmt::Debug for ApiPayload<'_, T> {
    /// The kind only: payloads may hold credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiPayload::Typed(_) => f.write_str("ApiPayload::Typed(..)"),
            ApiPayload::Raw(r) => write!(f, "ApiPayload::Raw({r:?})"),
        }
    }
}

impl<'a, T: IntoOwned> IntoOwned for ApiPayload<'a, T> {
    type Owned = ApiPayload<'static, T::Owned>;
    fn into_owned(self) -> Self::Owned {
        match self {
            ApiPayload::Typed(t) => ApiPayload::Typed(t.into_owned()),
            ApiPayload::Raw(r) => ApiPayload::Raw(r.into_owned()),
        }
    }
}

/// The `type` member of `obj`, a string, or the error naming it.
fn tag<'d, 'a>(obj: Object<'d, 'a>, at: &Path<'_>) -> Result<crate::json::Str<'a>, Error> {
    let ty_at = at.key("type");
    match member(obj, "type") {
        None => Err(Error::missing(&ty_at, RULE)),
        Some(t) => t
            .as_str()
            .ok_or_else(|| Error::wrong_type(&ty_at, "a string", RULE)),
    }
}

/// Strictly decodes `raw` as `T` (the round-trip check of a payload agentx wrote).
fn parse_as<'r, T: WireValue<'r>>(raw: &'r RawJson<'_>) -> Result<T, Error> {
    let doc = raw.document().map_err(Error::json)?;
    T::decode(doc.root(), &Path::ROOT)
}

wire_struct! {
    /// A turn's `usage` in its `result`.
    pub struct TurnUsage {
        closed: Closed::Yes("PROFILE §8"),
        rule: "PROFILE §8",
        skip: [],
        input_tokens: u64 = "input_tokens" => req,
        output_tokens: u64 = "output_tokens" => req,
        cache_read_input_tokens: u64 = "cache_read_input_tokens" => req,
        cache_creation_input_tokens: u64 = "cache_creation_input_tokens" => req,
    }
}

impl TurnUsage {
    /// Strictly decodes a raw `usage` as this closed shape.
    pub fn parse(raw: &RawJson<'_>) -> Result<TurnUsage, Error> {
        parse_as(raw)
    }
}

wire_struct! {
    /// A `task_progress` `usage`: the step reached.
    pub struct TaskStep {
        closed: Closed::Yes("PROFILE §8"),
        rule: "PROFILE §8",
        skip: [],
        step: u64 = "step" => req,
    }
}

/// Reads every payload of `record` that agentx writes typed as exactly its closed shape, and
/// checks that re-encoding it gives the same bytes: the strict round trip the session fuzz
/// targets hold every agentx record to. A payload decoded from a line is `Raw`; a typed one
/// is checked by its own encoding.
pub fn check_agentx_payloads(record: &super::OutputRecord<'_>) -> Result<(), Error> {
    use super::system::SystemEvent;
    use super::user::{ContentBlock, UserContent, UserMessage};
    use super::OutputRecord;
    match record {
        OutputRecord::StreamEvent(e) => same(&e.event, |raw| StreamPayload::parse(raw).map(enc)),
        OutputRecord::Assistant(a) => same(&a.message, |raw| ApiMessage::parse(raw).map(enc)),
        OutputRecord::Result(r) => same(&r.usage, |raw| TurnUsage::parse(raw).map(enc)),
        OutputRecord::System(SystemEvent::TaskProgress(t)) => {
            same(&t.usage, |raw| parse_as::<TaskStep>(raw).map(enc))
        }
        OutputRecord::User(u) => match &u.message {
            UserMessage::Object {
                content: UserContent::Blocks(blocks),
                ..
            } => blocks.iter().try_for_each(|b| match b {
                ContentBlock::Other(p) => same(p, |raw| ToolResultBlock::parse(raw).map(enc)),
                _ => Ok(()),
            }),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

fn enc<'x, T: WireValue<'x>>(t: T) -> Vec<u8> {
    let mut out = Vec::new();
    t.encode(&mut out);
    out
}

/// `reencode` strictly decodes the payload's JSON and encodes it again: the bytes must not
/// change.
fn same<'a, T: WireValue<'a>>(
    p: &ApiPayload<'a, T>,
    reencode: impl for<'r> Fn(&'r RawJson<'_>) -> Result<Vec<u8>, Error>,
) -> Result<(), Error> {
    let text = p.to_json();
    let raw = RawJson::parse(&text).map_err(Error::json)?;
    if reencode(&raw)? != *text {
        return Err(Error::invalid(
            &Path::ROOT,
            "a payload whose typed re-encoding is byte-identical",
            RULE,
        ));
    }
    Ok(())
}
