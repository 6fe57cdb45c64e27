//! The `event` of a `stream_event` (PROFILE §14, the Messages-API stream): [`StreamPayload`]
//! and the [`BlockDelta`] of a `content_block_delta`. Owns only these shapes; the message a
//! `message_start` carries is `message.rs`'s. Never does I/O.

use crate::json::Value;
use crate::wire::decode::{name_is, object, req, take, IntoOwned, Obj, Path, Text, WireValue};
use crate::wire::error::Error;
use crate::wire::raw::RawJson;

use super::{parse_as, tag, ApiBlock, ApiMessage, CLOSED, RULE};

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
