//! The `tool_result` block of a `user` record (PROFILE §8, §10): [`ToolResultBlock`] and its
//! [`ToolResultContent`]. Owns only this shape. Never does I/O.

use std::borrow::Cow;

use crate::json::Value;
use crate::wire::decode::{name_is, object, req, take, IntoOwned, Obj, Path, Text, WireValue};
use crate::wire::error::Error;
use crate::wire::raw::RawJson;

use super::{parse_as, tag, ApiBlock, CLOSED, RULE};

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
