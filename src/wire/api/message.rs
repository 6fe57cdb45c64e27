//! The assistant `message` (PROFILE §8, §14) and its content blocks: [`ApiMessage`],
//! [`ApiBlock`] and the `message_start` [`MessageUsage`], with their members in the order and
//! spelling agentx writes. Owns only these shapes; the payload wrapper and the round-trip check
//! are the parent's. Never does I/O.

use std::borrow::Cow;

use crate::json::Value;
use crate::wire::decode::{
    name_is, object, opt, req, take, Closed, IntoOwned, Obj, Path, Text, WireValue,
};
use crate::wire::error::Error;
use crate::wire::raw::{RawJson, RawObject};
use crate::wire::table::wire_struct;

use super::{parse_as, tag, CLOSED, RULE};

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
    /// The message a `message_start` announces: no content yet, `null` stop members, usage
    /// zero (PROFILE §14).
    pub fn started(id: &'a str, model: &'a str) -> ApiMessage<'a> {
        ApiMessage {
            id: Cow::Borrowed(id),
            model: Cow::Borrowed(model),
            content: Vec::new(),
            stop_reason: None,
            stop_sequence: None,
            usage: Some(MessageUsage {
                input_tokens: 0,
                output_tokens: 0,
            }),
        }
    }

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
            usage: opt(s[7], &at.key("usage"))?,
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
