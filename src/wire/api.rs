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
//! round-trip fuzzers hold every agentx record to. Never does I/O.

use std::borrow::Cow;
use std::fmt;

use crate::json::{Object, Value};

use super::decode::{
    member, name_is, object, req, take, wire_struct, Closed, IntoOwned, Obj, Path, Text, WireValue,
};
use super::error::Error;
use super::raw::{RawJson, RawObject};

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

/// One content block of an assistant message.
#[derive(Clone, Debug, PartialEq)]
pub enum ApiBlock<'a> {
    /// `{"type":"text","text":..}`.
    Text(Text<'a>),
    /// `{"type":"tool_use","id":..,"name":..,"input":{..}}`.
    ToolUse {
        /// The tool-use ID.
        id: Text<'a>,
        /// The tool's name.
        name: Text<'a>,
        /// The tool's input object (`{}` in a `content_block_start`).
        input: RawObject<'a>,
    },
}

impl<'a> WireValue<'a> for ApiBlock<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let obj = object(v, at, RULE)?;
        let ty = tag(obj, at)?;
        if name_is(&ty, "text") {
            let mut s: [Option<Value<'_, 'a>>; 2] = [None; 2];
            take(obj, &["type", "text"], &mut s, CLOSED, at)?;
            return Ok(ApiBlock::Text(req(s[1], &at.key("text"), RULE)?));
        }
        if name_is(&ty, "tool_use") {
            let mut s: [Option<Value<'_, 'a>>; 4] = [None; 4];
            take(obj, &["type", "id", "name", "input"], &mut s, CLOSED, at)?;
            return Ok(ApiBlock::ToolUse {
                id: req(s[1], &at.key("id"), RULE)?,
                name: req(s[2], &at.key("name"), RULE)?,
                input: req(s[3], &at.key("input"), RULE)?,
            });
        }
        Err(Error::invalid(
            &at.key("type"),
            "\"text\" or \"tool_use\"",
            RULE,
        ))
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        match self {
            ApiBlock::Text(t) => {
                w.constant("\"type\":\"text\"");
                t.encode(w.key("\"text\":"));
            }
            ApiBlock::ToolUse { id, name, input } => {
                w.constant("\"type\":\"tool_use\"");
                id.encode(w.key("\"id\":"));
                name.encode(w.key("\"name\":"));
                input.encode(w.key("\"input\":"));
            }
        }
        w.end();
    }
}

impl IntoOwned for ApiBlock<'_> {
    type Owned = ApiBlock<'static>;
    fn into_owned(self) -> ApiBlock<'static> {
        match self {
            ApiBlock::Text(t) => ApiBlock::Text(IntoOwned::into_owned(t)),
            ApiBlock::ToolUse { id, name, input } => ApiBlock::ToolUse {
                id: IntoOwned::into_owned(id),
                name: IntoOwned::into_owned(name),
                input: input.into_owned(),
            },
        }
    }
}

wire_struct! {
    /// The `usage` of a `message_start`'s message.
    pub struct MessageUsage {
        closed: Closed::Yes("PROFILE §14"),
        rule: "PROFILE §14",
        skip: [],
        input_tokens: u64 = "input_tokens" => req,
        output_tokens: u64 = "output_tokens" => req,
    }
}

/// An assistant API message: `{"id","type":"message","role":"assistant","model","content",
/// "stop_reason","stop_sequence"[,"usage"]}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiMessage<'a> {
    /// The message ID.
    pub id: Text<'a>,
    /// The model that wrote it.
    pub model: Text<'a>,
    /// Its content blocks (agentx writes one per `assistant` record, none in `message_start`).
    pub content: Vec<ApiBlock<'a>>,
    /// `null` while streaming.
    pub stop_reason: Option<Text<'a>>,
    /// `null` while streaming.
    pub stop_sequence: Option<Text<'a>>,
    /// Only in `message_start`; omitted when `None`.
    pub usage: Option<MessageUsage>,
}

impl<'a> ApiMessage<'a> {
    /// Strictly decodes a raw `message` as this closed shape.
    pub fn parse<'r>(raw: &'r RawJson<'_>) -> Result<ApiMessage<'r>, Error> {
        parse_as(raw)
    }
}

impl<'a> WireValue<'a> for ApiMessage<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let obj = object(v, at, RULE)?;
        const NAMES: &[&str] = &[
            "id",
            "type",
            "role",
            "model",
            "content",
            "stop_reason",
            "stop_sequence",
            "usage",
        ];
        let mut s: [Option<Value<'_, 'a>>; 8] = [None; 8];
        take(obj, NAMES, &mut s, CLOSED, at)?;
        for (slot, name, want) in [(1, "type", "message"), (2, "role", "assistant")] {
            let v: Text<'a> = req(s[slot], &at.key(name), RULE)?;
            if v != want {
                return Err(Error::invalid(&at.key(name), want, RULE));
            }
        }
        Ok(ApiMessage {
            id: req(s[0], &at.key("id"), RULE)?,
            model: req(s[3], &at.key("model"), RULE)?,
            content: req(s[4], &at.key("content"), RULE)?,
            stop_reason: req(s[5], &at.key("stop_reason"), RULE)?,
            stop_sequence: req(s[6], &at.key("stop_sequence"), RULE)?,
            usage: super::decode::opt(s[7], &at.key("usage"))?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        self.id.encode(w.key("\"id\":"));
        w.constant("\"type\":\"message\"");
        w.constant("\"role\":\"assistant\"");
        self.model.encode(w.key("\"model\":"));
        self.content.encode(w.key("\"content\":"));
        self.stop_reason.encode(w.key("\"stop_reason\":"));
        self.stop_sequence.encode(w.key("\"stop_sequence\":"));
        if let Some(u) = &self.usage {
            u.encode(w.key("\"usage\":"));
        }
        w.end();
    }
}

impl IntoOwned for ApiMessage<'_> {
    type Owned = ApiMessage<'static>;
    fn into_owned(self) -> ApiMessage<'static> {
        ApiMessage {
            id: IntoOwned::into_owned(self.id),
            model: IntoOwned::into_owned(self.model),
            content: IntoOwned::into_owned(self.content),
            stop_reason: IntoOwned::into_owned(self.stop_reason),
            stop_sequence: IntoOwned::into_owned(self.stop_sequence),
            usage: self.usage,
        }
    }
}

/// The delta of a `content_block_delta`.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockDelta<'a> {
    /// `{"type":"text_delta","text":..}`.
    Text(Text<'a>),
    /// `{"type":"input_json_delta","partial_json":..}`.
    InputJson(Text<'a>),
}

impl<'a> WireValue<'a> for BlockDelta<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let obj = object(v, at, RULE)?;
        let ty = tag(obj, at)?;
        let mut s: [Option<Value<'_, 'a>>; 2] = [None; 2];
        if name_is(&ty, "text_delta") {
            take(obj, &["type", "text"], &mut s, CLOSED, at)?;
            return Ok(BlockDelta::Text(req(s[1], &at.key("text"), RULE)?));
        }
        if name_is(&ty, "input_json_delta") {
            take(obj, &["type", "partial_json"], &mut s, CLOSED, at)?;
            return Ok(BlockDelta::InputJson(req(
                s[1],
                &at.key("partial_json"),
                RULE,
            )?));
        }
        Err(Error::invalid(
            &at.key("type"),
            "\"text_delta\" or \"input_json_delta\"",
            RULE,
        ))
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        match self {
            BlockDelta::Text(t) => {
                w.constant("\"type\":\"text_delta\"");
                t.encode(w.key("\"text\":"));
            }
            BlockDelta::InputJson(j) => {
                w.constant("\"type\":\"input_json_delta\"");
                j.encode(w.key("\"partial_json\":"));
            }
        }
        w.end();
    }
}

impl IntoOwned for BlockDelta<'_> {
    type Owned = BlockDelta<'static>;
    fn into_owned(self) -> BlockDelta<'static> {
        match self {
            BlockDelta::Text(t) => BlockDelta::Text(IntoOwned::into_owned(t)),
            BlockDelta::InputJson(j) => BlockDelta::InputJson(IntoOwned::into_owned(j)),
        }
    }
}

/// The `event` of a `stream_event` (PROFILE §14: the Messages-API stream).
#[derive(Clone, Debug, PartialEq)]
pub enum StreamPayload<'a> {
    /// `{"type":"message_start","message":{..}}`.
    MessageStart(ApiMessage<'a>),
    /// `{"type":"content_block_start","index":..,"content_block":{..}}`.
    ContentBlockStart {
        /// The block's index in its message.
        index: u64,
        /// The empty block (`text` `""`, or `tool_use` with input `{}`).
        content_block: ApiBlock<'a>,
    },
    /// `{"type":"content_block_delta","index":..,"delta":{..}}`.
    ContentBlockDelta {
        /// The block's index in its message.
        index: u64,
        /// The streamed piece.
        delta: BlockDelta<'a>,
    },
    /// `{"type":"content_block_stop","index":..}`.
    ContentBlockStop {
        /// The block's index in its message.
        index: u64,
    },
    /// `{"type":"message_delta","delta":{"stop_reason":..,"stop_sequence":..},
    /// "usage":{"output_tokens":..}}`.
    MessageDelta {
        /// Why the message stopped.
        stop_reason: Text<'a>,
        /// `null` unless a stop sequence ended it.
        stop_sequence: Option<Text<'a>>,
        /// The message's output tokens.
        output_tokens: u64,
    },
    /// `{"type":"message_stop"}`.
    MessageStop,
}

impl<'a> StreamPayload<'a> {
    /// Strictly decodes a raw `event` as one of these closed shapes.
    pub fn parse<'r>(raw: &'r RawJson<'_>) -> Result<StreamPayload<'r>, Error> {
        parse_as(raw)
    }
}

impl<'a> WireValue<'a> for StreamPayload<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let obj = object(v, at, RULE)?;
        let ty = tag(obj, at)?;
        let index_at = at.key("index");
        let mut s: [Option<Value<'_, 'a>>; 3] = [None; 3];
        if name_is(&ty, "message_start") {
            take(obj, &["type", "message"], &mut s, CLOSED, at)?;
            return Ok(StreamPayload::MessageStart(req(
                s[1],
                &at.key("message"),
                RULE,
            )?));
        }
        if name_is(&ty, "content_block_start") {
            take(obj, &["type", "index", "content_block"], &mut s, CLOSED, at)?;
            return Ok(StreamPayload::ContentBlockStart {
                index: req(s[1], &index_at, RULE)?,
                content_block: req(s[2], &at.key("content_block"), RULE)?,
            });
        }
        if name_is(&ty, "content_block_delta") {
            take(obj, &["type", "index", "delta"], &mut s, CLOSED, at)?;
            return Ok(StreamPayload::ContentBlockDelta {
                index: req(s[1], &index_at, RULE)?,
                delta: req(s[2], &at.key("delta"), RULE)?,
            });
        }
        if name_is(&ty, "content_block_stop") {
            take(obj, &["type", "index"], &mut s, CLOSED, at)?;
            return Ok(StreamPayload::ContentBlockStop {
                index: req(s[1], &index_at, RULE)?,
            });
        }
        if name_is(&ty, "message_delta") {
            take(obj, &["type", "delta", "usage"], &mut s, CLOSED, at)?;
            let d_at = at.key("delta");
            let delta = object(
                s[1].ok_or_else(|| Error::missing(&d_at, RULE))?,
                &d_at,
                RULE,
            )?;
            let mut d: [Option<Value<'_, 'a>>; 2] = [None; 2];
            take(
                delta,
                &["stop_reason", "stop_sequence"],
                &mut d,
                CLOSED,
                &d_at,
            )?;
            let u_at = at.key("usage");
            let usage = object(
                s[2].ok_or_else(|| Error::missing(&u_at, RULE))?,
                &u_at,
                RULE,
            )?;
            let mut u: [Option<Value<'_, 'a>>; 1] = [None; 1];
            take(usage, &["output_tokens"], &mut u, CLOSED, &u_at)?;
            return Ok(StreamPayload::MessageDelta {
                stop_reason: req(d[0], &d_at.key("stop_reason"), RULE)?,
                stop_sequence: req(d[1], &d_at.key("stop_sequence"), RULE)?,
                output_tokens: req(u[0], &u_at.key("output_tokens"), RULE)?,
            });
        }
        if name_is(&ty, "message_stop") {
            take(obj, &["type"], &mut s[..1], CLOSED, at)?;
            return Ok(StreamPayload::MessageStop);
        }
        Err(Error::invalid(
            &at.key("type"),
            "a Messages-API stream event type",
            RULE,
        ))
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        match self {
            StreamPayload::MessageStart(m) => {
                w.constant("\"type\":\"message_start\"");
                m.encode(w.key("\"message\":"));
            }
            StreamPayload::ContentBlockStart {
                index,
                content_block,
            } => {
                w.constant("\"type\":\"content_block_start\"");
                index.encode(w.key("\"index\":"));
                content_block.encode(w.key("\"content_block\":"));
            }
            StreamPayload::ContentBlockDelta { index, delta } => {
                w.constant("\"type\":\"content_block_delta\"");
                index.encode(w.key("\"index\":"));
                delta.encode(w.key("\"delta\":"));
            }
            StreamPayload::ContentBlockStop { index } => {
                w.constant("\"type\":\"content_block_stop\"");
                index.encode(w.key("\"index\":"));
            }
            StreamPayload::MessageDelta {
                stop_reason,
                stop_sequence,
                output_tokens,
            } => {
                w.constant("\"type\":\"message_delta\"");
                let mut d = Obj::begin(w.key("\"delta\":"));
                stop_reason.encode(d.key("\"stop_reason\":"));
                stop_sequence.encode(d.key("\"stop_sequence\":"));
                d.end();
                let mut u = Obj::begin(w.key("\"usage\":"));
                output_tokens.encode(u.key("\"output_tokens\":"));
                u.end();
            }
            StreamPayload::MessageStop => w.constant("\"type\":\"message_stop\""),
        }
        w.end();
    }
}

impl IntoOwned for StreamPayload<'_> {
    type Owned = StreamPayload<'static>;
    fn into_owned(self) -> StreamPayload<'static> {
        match self {
            StreamPayload::MessageStart(m) => StreamPayload::MessageStart(m.into_owned()),
            StreamPayload::ContentBlockStart {
                index,
                content_block,
            } => StreamPayload::ContentBlockStart {
                index,
                content_block: content_block.into_owned(),
            },
            StreamPayload::ContentBlockDelta { index, delta } => StreamPayload::ContentBlockDelta {
                index,
                delta: delta.into_owned(),
            },
            StreamPayload::ContentBlockStop { index } => StreamPayload::ContentBlockStop { index },
            StreamPayload::MessageDelta {
                stop_reason,
                stop_sequence,
                output_tokens,
            } => StreamPayload::MessageDelta {
                stop_reason: IntoOwned::into_owned(stop_reason),
                stop_sequence: IntoOwned::into_owned(stop_sequence),
                output_tokens,
            },
            StreamPayload::MessageStop => StreamPayload::MessageStop,
        }
    }
}

/// The content of a `tool_result` block.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolResultContent<'a> {
    /// One string.
    Text(Text<'a>),
    /// Text blocks (`[{"type":"text","text":..},..]`).
    Blocks(Vec<Text<'a>>),
}

/// `{"type":"tool_result","tool_use_id":..,"content":..,"is_error":..}` (PROFILE §8, §10).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResultBlock<'a> {
    /// The tool use it answers.
    pub tool_use_id: Text<'a>,
    /// The tool's output.
    pub content: ToolResultContent<'a>,
    /// Whether the tool failed (or was denied).
    pub is_error: bool,
}

impl<'a> ToolResultBlock<'a> {
    /// Strictly decodes a raw block as this closed shape.
    pub fn parse<'r>(raw: &'r RawJson<'_>) -> Result<ToolResultBlock<'r>, Error> {
        parse_as(raw)
    }
}

impl<'a> WireValue<'a> for ToolResultBlock<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let obj = object(v, at, RULE)?;
        let ty = tag(obj, at)?;
        if !name_is(&ty, "tool_result") {
            return Err(Error::invalid(&at.key("type"), "\"tool_result\"", RULE));
        }
        let mut s: [Option<Value<'_, 'a>>; 4] = [None; 4];
        take(
            obj,
            &["type", "tool_use_id", "content", "is_error"],
            &mut s,
            CLOSED,
            at,
        )?;
        let c_at = at.key("content");
        let content = match s[2] {
            Some(c) if c.as_array().is_some() => {
                let blocks: Vec<ApiBlock<'a>> = WireValue::decode(c, &c_at)?;
                let mut texts = Vec::with_capacity(blocks.len());
                for b in blocks {
                    match b {
                        ApiBlock::Text(t) => texts.push(t),
                        ApiBlock::ToolUse { .. } => {
                            return Err(Error::invalid(&c_at, "text blocks", RULE))
                        }
                    }
                }
                ToolResultContent::Blocks(texts)
            }
            c => ToolResultContent::Text(req(c, &c_at, RULE)?),
        };
        Ok(ToolResultBlock {
            tool_use_id: req(s[1], &at.key("tool_use_id"), RULE)?,
            content,
            is_error: req(s[3], &at.key("is_error"), RULE)?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"tool_result\"");
        self.tool_use_id.encode(w.key("\"tool_use_id\":"));
        let out = w.key("\"content\":");
        match &self.content {
            ToolResultContent::Text(t) => t.encode(out),
            ToolResultContent::Blocks(texts) => {
                out.push(b'[');
                for (i, t) in texts.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    ApiBlock::Text(Cow::Borrowed(t.as_ref())).encode(out);
                }
                out.push(b']');
            }
        }
        self.is_error.encode(w.key("\"is_error\":"));
        w.end();
    }
}

impl IntoOwned for ToolResultBlock<'_> {
    type Owned = ToolResultBlock<'static>;
    fn into_owned(self) -> ToolResultBlock<'static> {
        ToolResultBlock {
            tool_use_id: IntoOwned::into_owned(self.tool_use_id),
            content: match self.content {
                ToolResultContent::Text(t) => ToolResultContent::Text(IntoOwned::into_owned(t)),
                ToolResultContent::Blocks(b) => ToolResultContent::Blocks(IntoOwned::into_owned(b)),
            },
            is_error: self.is_error,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<'a, T: WireValue<'a>>(t: &T) -> String {
        let mut out = Vec::new();
        t.encode(&mut out);
        String::from_utf8(out).expect("UTF-8")
    }

    /// The exact bytes agentx wrote by hand before these types (member order, `null`s,
    /// integers), and the strict decoder reading each back to the same value.
    #[test]
    fn stream_payloads_keep_their_bytes_and_round_trip() {
        let message = ApiMessage {
            id: "msg_1".into(),
            model: "m".into(),
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: Some(MessageUsage {
                input_tokens: 0,
                output_tokens: 0,
            }),
        };
        let cases = [
            (
                StreamPayload::MessageStart(message),
                r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}"#,
            ),
            (
                StreamPayload::ContentBlockStart {
                    index: 0,
                    content_block: ApiBlock::Text("".into()),
                },
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            (
                StreamPayload::ContentBlockStart {
                    index: 2,
                    content_block: ApiBlock::ToolUse {
                        id: "tu_1".into(),
                        name: "Read".into(),
                        input: RawObject::empty(),
                    },
                },
                r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"tu_1","name":"Read","input":{}}}"#,
            ),
            (
                StreamPayload::ContentBlockDelta {
                    index: 0,
                    delta: BlockDelta::Text("a \"q\"\u{2028}".into()),
                },
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a \"q\"\u2028"}}"#,
            ),
            (
                StreamPayload::ContentBlockDelta {
                    index: 1,
                    delta: BlockDelta::InputJson("{\"p\":".into()),
                },
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"p\":"}}"#,
            ),
            (
                StreamPayload::ContentBlockStop { index: 4294967295 },
                r#"{"type":"content_block_stop","index":4294967295}"#,
            ),
            (
                StreamPayload::MessageDelta {
                    stop_reason: "end_turn".into(),
                    stop_sequence: None,
                    output_tokens: 7,
                },
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7}}"#,
            ),
            (StreamPayload::MessageStop, r#"{"type":"message_stop"}"#),
        ];
        for (typed, want) in cases {
            assert_eq!(bytes(&typed), want);
            let raw = RawJson::parse(want.as_bytes()).expect("valid");
            assert_eq!(StreamPayload::parse(&raw).expect("strict"), typed);
            // A typed payload equals its decoded form.
            assert_eq!(ApiPayload::Typed(typed), ApiPayload::Raw(raw));
        }
    }

    #[test]
    fn assistant_message_tool_result_and_usage_keep_their_bytes() {
        let m = ApiMessage {
            id: "msg_1".into(),
            model: "m".into(),
            content: vec![ApiBlock::ToolUse {
                id: "tu".into(),
                name: "Bash".into(),
                input: RawObject(RawJson::parse(br#"{"command":"ls"}"#).unwrap()),
            }],
            stop_reason: None,
            stop_sequence: None,
            usage: None,
        };
        let want = r#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"tool_use","id":"tu","name":"Bash","input":{"command":"ls"}}],"stop_reason":null,"stop_sequence":null}"#;
        assert_eq!(bytes(&m), want);
        let raw = RawJson::parse(want.as_bytes()).unwrap();
        assert_eq!(ApiMessage::parse(&raw).unwrap(), m);

        let t = ToolResultBlock {
            tool_use_id: "tu".into(),
            content: ToolResultContent::Blocks(vec!["out".into(), "ctx".into()]),
            is_error: false,
        };
        let want = r#"{"type":"tool_result","tool_use_id":"tu","content":[{"type":"text","text":"out"},{"type":"text","text":"ctx"}],"is_error":false}"#;
        assert_eq!(bytes(&t), want);
        assert_eq!(
            ToolResultBlock::parse(&RawJson::parse(want.as_bytes()).unwrap()).unwrap(),
            t
        );
        let t = ToolResultBlock {
            tool_use_id: "tu".into(),
            content: ToolResultContent::Text("denied".into()),
            is_error: true,
        };
        assert_eq!(
            bytes(&t),
            r#"{"type":"tool_result","tool_use_id":"tu","content":"denied","is_error":true}"#
        );

        let u = TurnUsage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: u64::MAX,
        };
        let want = r#"{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":18446744073709551615}"#;
        assert_eq!(bytes(&u), want);
        assert_eq!(
            TurnUsage::parse(&RawJson::parse(want.as_bytes()).unwrap()).unwrap(),
            u
        );
        assert_eq!(bytes(&TaskStep { step: 3 }), r#"{"step":3}"#);
    }

    /// The strict decoders are closed: an unknown member, another shape, a wrong type or a
    /// missing member is an error naming where.
    #[test]
    fn strict_decoders_reject_what_agentx_never_writes() {
        for (text, at) in [
            (r#"{"type":"message_stop","x":1}"#, ""),
            (r#"{"type":"ping"}"#, "type"),
            (r#"{"type":"content_block_stop","index":1.0}"#, "index"),
            (r#"{"type":"content_block_stop","index":-1}"#, "index"),
            (r#"{"type":"content_block_stop"}"#, "index"),
            (
                r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":""}}"#,
                "delta.type",
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":1}}"#,
                "delta.stop_sequence",
            ),
            (
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1,"input_tokens":0}}"#,
                "usage",
            ),
            (r#"[]"#, ""),
        ] {
            let raw = RawJson::parse(text.as_bytes()).unwrap();
            let e = StreamPayload::parse(&raw).expect_err(text);
            assert_eq!(e.path(), at, "{text}");
        }
        let raw = RawJson::parse(
            br#"{"id":"m","type":"message","role":"user","model":"m","content":[],"stop_reason":null,"stop_sequence":null}"#,
        )
        .unwrap();
        assert_eq!(ApiMessage::parse(&raw).unwrap_err().path(), "role");
        let raw = RawJson::parse(
            br#"{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}],"is_error":false}"#,
        )
        .unwrap();
        assert!(ToolResultBlock::parse(&raw).is_err());
    }

    /// A decoded payload is kept whole (a peer's members survive); `Debug` shows no content.
    #[test]
    fn decoded_payloads_are_kept_whole_and_debug_hides_them() {
        let doc = crate::json::parse(br#"{"type":"ping","secret":"sk-1"}"#).unwrap();
        let p: ApiPayload<'_, StreamPayload<'_>> =
            WireValue::decode(doc.root(), &Path::ROOT).unwrap();
        assert_eq!(&*p.to_json(), br#"{"type":"ping","secret":"sk-1"}"#);
        assert!(!format!("{p:?}").contains("sk-1"));
        let typed: ApiPayload<'_, StreamPayload<'_>> =
            ApiPayload::Typed(StreamPayload::MessageStop);
        assert_eq!(format!("{typed:?}"), "ApiPayload::Typed(..)");
        let doc = crate::json::parse(b"[1]").unwrap();
        assert!(
            <ApiPayload<'_, StreamPayload<'_>> as WireValue<'_>>::decode(doc.root(), &Path::ROOT)
                .is_err()
        );
    }
}
