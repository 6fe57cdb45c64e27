//! The `user` record in both directions, with the native user-content union of WIRE-017.
//!
//! Owns: every legacy form (a JSON string message, an object whose `content` is a string, an
//! object whose `content` is a nonempty array of `text`/`input_text` blocks), the version-1
//! union with `attachment_ref` blocks (`content_version: 1` mandatory when one appears), the
//! `input_text` → `text` alias (canonical `text` on encode), `priority` now/next/later and the
//! replay form (`uuid`, `session_id`, `isReplay: true`). The record, its message and its
//! blocks are closed (WIRE-021); a failure is record-level (an input-error result, the stream
//! goes on). On output, API content blocks the protocol does not define (`tool_result`,
//! `tool_use`, images by URL) are kept as validated [`RawJson`], except that inline media
//! bytes or `data:` URLs are rejected (WIRE-022, `privacy`); on input they are rejected.
//! Never does I/O and never resolves attachments (WIRE-020 belongs to `attach`).

use crate::json::{Object, Value};

use super::api::{ApiPayload, ToolResultBlock};
use super::attachment_ref::{AttachmentRef, BLOCK_TYPE};
use super::decode::{
    name_is, nul, object, opt, req, take, Closed, IntoOwned, Obj, Path, Text, WireValue,
};
use super::error::Error;
use super::grammar::Uuid;
use super::manifest::decode_manifest;
use super::raw::RawJson;
use super::table::wire_enum;
use super::Direction;

const RULE: &str = "WIRE-017";

wire_enum! {
    /// Queue priority of a user record.
    pub enum Priority : "\"now\", \"next\" or \"later\"", "WIRE-017" {
        Now = "now",
        Next = "next",
        Later = "later",
    }
}

/// A `user` record. Canonical member order: `type, message, parent_tool_use_id, uuid,
/// session_id, isSynthetic, tool_use_result, priority, timestamp, isReplay`.
#[derive(Clone, Debug, PartialEq)]
pub struct UserRecord<'a> {
    /// The `message` member.
    pub message: UserMessage<'a>,
    /// Required on input (PROFILE §2b), nullable; tolerated absent on output (Claude CLI
    /// replays omit it) and then written as `null`.
    pub parent_tool_use_id: Option<Text<'a>>,
    /// The record's UUID (the prompt UUID, WIRE-020).
    pub uuid: Option<Uuid<'a>>,
    /// The session the record belongs to.
    pub session_id: Option<Uuid<'a>>,
    /// `isSynthetic`.
    pub is_synthetic: Option<bool>,
    /// The tool-use result an output replay carries; any JSON value.
    pub tool_use_result: Option<RawJson<'a>>,
    /// `now`, `next` or `later` (PROFILE §8); absent is `next`.
    pub priority: Option<Priority>,
    /// Originating timestamp.
    pub timestamp: Option<Text<'a>>,
    /// `isReplay: true`; `false` is accepted and not written back.
    pub is_replay: bool,
}

/// The `message` member.
#[derive(Clone, Debug, PartialEq)]
pub enum UserMessage<'a> {
    /// Legacy: the message is a JSON string.
    Plain(Text<'a>),
    /// `{"role":"user", "content_version"?: 1, "content": ...}`.
    Object {
        /// `content_version: 1` was given (mandatory with an `attachment_ref`).
        versioned: bool,
        /// The message content.
        content: UserContent<'a>,
    },
}

/// The `content` of an object message.
#[derive(Clone, Debug, PartialEq)]
pub enum UserContent<'a> {
    /// A plain string.
    Text(Text<'a>),
    /// Nonempty, in order.
    Blocks(Vec<ContentBlock<'a>>),
}

/// One content block.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentBlock<'a> {
    /// `text`, or its compatibility spelling `input_text` (always encoded as `text`).
    Text(Text<'a>),
    /// The committed manifest (WIRE-017).
    AttachmentRef(AttachmentRef),
    /// Output only: an API block the protocol does not define; decoded, kept as validated
    /// JSON; written by agentx, its `tool_result` (PROFILE §8, §10), typed.
    Other(ApiPayload<'a, ToolResultBlock<'a>>),
}

impl<'a> UserRecord<'a> {
    /// A plain text prompt in the legacy string form.
    pub fn text(text: impl Into<Text<'a>>) -> UserRecord<'a> {
        UserRecord {
            message: UserMessage::Plain(text.into()),
            parent_tool_use_id: None,
            uuid: None,
            session_id: None,
            is_synthetic: None,
            tool_use_result: None,
            priority: None,
            timestamp: None,
            is_replay: false,
        }
    }

    /// The `attachment_ref` blocks, in order.
    pub fn attachments(&self) -> impl Iterator<Item = &AttachmentRef> {
        let blocks: &[ContentBlock<'a>] = match &self.message {
            UserMessage::Object {
                content: UserContent::Blocks(b),
                ..
            } => b,
            _ => &[],
        };
        blocks.iter().filter_map(|b| match b {
            ContentBlock::AttachmentRef(r) => Some(r),
            _ => None,
        })
    }

    pub(crate) fn decode_members(
        obj: Object<'_, 'a>,
        dir: Direction,
        at: &Path<'_>,
    ) -> Result<Self, Error> {
        Self::decode_members_with(obj, dir, at, false)
    }

    /// As [`UserRecord::decode_members`], except that `session_id` may be any string and is
    /// ignored (decoded as absent): the SDK profile (PROFILE §15; the SDKs send `""` and
    /// `"default"`). The canonical-UUID rule of PROFILE §2b holds in the standalone profile.
    pub(crate) fn decode_members_any_session_id(
        obj: Object<'_, 'a>,
        dir: Direction,
        at: &Path<'_>,
    ) -> Result<Self, Error> {
        Self::decode_members_with(obj, dir, at, true)
    }

    fn decode_members_with(
        obj: Object<'_, 'a>,
        dir: Direction,
        at: &Path<'_>,
        any_session_id: bool,
    ) -> Result<Self, Error> {
        const NAMES: &[&str] = &[
            "message",
            "parent_tool_use_id",
            "uuid",
            "session_id",
            "isSynthetic",
            "tool_use_result",
            "priority",
            "timestamp",
            "isReplay",
            "type",
        ];
        let mut s: [Option<Value<'_, 'a>>; 10] = [None; 10];
        take(obj, NAMES, &mut s, Closed::Yes("WIRE-021"), at)?;
        let [message, parent, uuid, session_id, synthetic, tool_result, priority, timestamp, replay, _] =
            s;
        let parent_at = at.key("parent_tool_use_id");
        if dir == Direction::Input && parent.is_none() {
            // PROFILE §2b: required on input, may be null.
            return Err(Error::missing(&parent_at, "PROFILE §2b"));
        }
        let msg_at = at.key("message");
        let message = match message {
            Some(v) => UserMessage::decode(v, dir, &msg_at)?,
            None => return Err(Error::missing(&msg_at, RULE)),
        };
        let session_id_given = session_id.is_some();
        let record = UserRecord {
            message,
            parent_tool_use_id: nul(parent, &parent_at)?,
            uuid: opt(uuid, &at.key("uuid"))?,
            session_id: if any_session_id {
                opt::<Text<'_>>(session_id, &at.key("session_id"))?;
                None
            } else {
                opt(session_id, &at.key("session_id"))?
            },
            is_synthetic: opt(synthetic, &at.key("isSynthetic"))?,
            tool_use_result: opt(tool_result, &at.key("tool_use_result"))?,
            priority: opt(priority, &at.key("priority"))?,
            timestamp: opt(timestamp, &at.key("timestamp"))?,
            is_replay: opt::<bool>(replay, &at.key("isReplay"))?.unwrap_or(false),
        };
        if record.is_replay {
            // Replay requires UUID, session ID and isReplay=true.
            if record.uuid.is_none() {
                return Err(Error::missing(&at.key("uuid"), "WIRE-017 replay"));
            }
            // The SDK profile's session_id is any string, decoded as absent (see above).
            if !session_id_given {
                return Err(Error::missing(&at.key("session_id"), "WIRE-017 replay"));
            }
        }
        Ok(record)
    }

    /// Writes the complete record.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"user\"");
        self.message.encode(w.key("\"message\":"));
        self.parent_tool_use_id
            .encode(w.key("\"parent_tool_use_id\":"));
        if let Some(v) = &self.uuid {
            v.encode(w.key("\"uuid\":"));
        }
        if let Some(v) = &self.session_id {
            v.encode(w.key("\"session_id\":"));
        }
        if let Some(v) = &self.is_synthetic {
            v.encode(w.key("\"isSynthetic\":"));
        }
        if let Some(v) = &self.tool_use_result {
            v.encode(w.key("\"tool_use_result\":"));
        }
        if let Some(v) = &self.priority {
            v.encode(w.key("\"priority\":"));
        }
        if let Some(v) = &self.timestamp {
            v.encode(w.key("\"timestamp\":"));
        }
        if self.is_replay {
            w.key("\"isReplay\":").extend_from_slice(b"true");
        }
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> UserRecord<'static> {
        UserRecord {
            message: self.message.into_owned(),
            parent_tool_use_id: self.parent_tool_use_id.into_owned(),
            uuid: self.uuid.into_owned(),
            session_id: self.session_id.into_owned(),
            is_synthetic: self.is_synthetic,
            tool_use_result: self.tool_use_result.into_owned(),
            priority: self.priority,
            timestamp: self.timestamp.into_owned(),
            is_replay: self.is_replay,
        }
    }
}

impl<'a> UserMessage<'a> {
    fn decode(v: Value<'_, 'a>, dir: Direction, at: &Path<'_>) -> Result<Self, Error> {
        if let Some(s) = v.as_str() {
            return Ok(UserMessage::Plain(s.decode()));
        }
        let obj = v
            .as_object()
            .ok_or_else(|| Error::wrong_type(at, "a string or an object", RULE))?;
        let mut s: [Option<Value<'_, 'a>>; 3] = [None; 3];
        take(
            obj,
            &["role", "content_version", "content"],
            &mut s,
            Closed::Yes("WIRE-021"),
            at,
        )?;
        let [role, version, content] = s;
        if let Some(role) = role {
            // "Inbound user role must be user"; role, when present, is exactly `user`.
            if !role.as_str().is_some_and(|r| r.eq_str("user")) {
                return Err(Error::invalid(&at.key("role"), "\"user\"", RULE));
            }
        }
        let versioned = match version {
            None => false,
            Some(v) => {
                let vat = at.key("content_version");
                let n: u64 = WireValue::decode(v, &vat)?;
                if n != 1 {
                    return Err(Error::invalid(&vat, "content_version 1", RULE));
                }
                true
            }
        };
        let content_at = at.key("content");
        let content = match content {
            None => return Err(Error::missing(&content_at, RULE)),
            Some(c) => UserContent::decode(c, dir, &content_at)?,
        };
        if !versioned {
            if let UserContent::Blocks(blocks) = &content {
                if let Some(i) = blocks
                    .iter()
                    .position(|b| matches!(b, ContentBlock::AttachmentRef(_)))
                {
                    // content_version:1 is mandatory when any attachment_ref appears.
                    return Err(Error::invalid(
                        &content_at.index(i),
                        "content_version 1 on a message with attachment_ref blocks",
                        RULE,
                    ));
                }
            }
        }
        Ok(UserMessage::Object { versioned, content })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            UserMessage::Plain(t) => t.encode(out),
            UserMessage::Object { versioned, content } => {
                let mut w = Obj::begin(out);
                w.constant("\"role\":\"user\"");
                if *versioned {
                    w.constant("\"content_version\":1");
                }
                let out = w.key("\"content\":");
                match content {
                    UserContent::Text(t) => t.encode(out),
                    UserContent::Blocks(blocks) => {
                        out.push(b'[');
                        for (i, b) in blocks.iter().enumerate() {
                            if i > 0 {
                                out.push(b',');
                            }
                            b.encode(out);
                        }
                        out.push(b']');
                    }
                }
                w.end();
            }
        }
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> UserMessage<'static> {
        match self {
            UserMessage::Plain(t) => UserMessage::Plain(IntoOwned::into_owned(t)),
            UserMessage::Object { versioned, content } => UserMessage::Object {
                versioned,
                content: match content {
                    UserContent::Text(t) => UserContent::Text(IntoOwned::into_owned(t)),
                    UserContent::Blocks(b) => {
                        UserContent::Blocks(b.into_iter().map(ContentBlock::into_owned).collect())
                    }
                },
            },
        }
    }
}

impl<'a> UserContent<'a> {
    fn decode(v: Value<'_, 'a>, dir: Direction, at: &Path<'_>) -> Result<Self, Error> {
        if let Some(s) = v.as_str() {
            return Ok(UserContent::Text(s.decode()));
        }
        let arr = v
            .as_array()
            .ok_or_else(|| Error::wrong_type(at, "a string or an array of blocks", RULE))?;
        if arr.is_empty() {
            return Err(Error::invalid(
                at,
                "a nonempty array of content blocks",
                RULE,
            ));
        }
        let mut blocks = Vec::with_capacity(arr.len());
        for (i, item) in arr.iter().enumerate() {
            blocks.push(ContentBlock::decode(item, dir, &at.index(i))?);
        }
        Ok(UserContent::Blocks(blocks))
    }
}

impl<'a> ContentBlock<'a> {
    fn decode(v: Value<'_, 'a>, dir: Direction, at: &Path<'_>) -> Result<Self, Error> {
        let obj = object(v, at, RULE)?;
        let ty_at = at.key("type");
        let ty = match super::decode::member(obj, "type") {
            None => return Err(Error::missing(&ty_at, RULE)),
            Some(t) => t
                .as_str()
                .ok_or_else(|| Error::wrong_type(&ty_at, "a string", RULE))?,
        };
        // `input_text` is the compatibility spelling of the same closed text variant.
        if name_is(&ty, "text") || name_is(&ty, "input_text") {
            let mut s: [Option<Value<'_, 'a>>; 2] = [None; 2];
            take(obj, &["text", "type"], &mut s, Closed::Yes("WIRE-021"), at)?;
            let text: Text<'a> = req(s[0], &at.key("text"), RULE)?;
            return Ok(ContentBlock::Text(text));
        }
        if name_is(&ty, BLOCK_TYPE) {
            return decode_manifest(obj, at).map(ContentBlock::AttachmentRef);
        }
        match dir {
            Direction::Output => {
                // WIRE-022: media leaves the agent as a manifest, never as bytes.
                super::privacy::check_block(v, at)?;
                Ok(ContentBlock::Other(ApiPayload::Raw(RawJson::from_value(v))))
            }
            Direction::Input => Err(Error::invalid(
                &ty_at,
                "\"text\", \"input_text\" or \"attachment_ref\"",
                RULE,
            )),
        }
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ContentBlock::Text(t) => {
                out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                t.encode(out);
                out.push(b'}');
            }
            ContentBlock::AttachmentRef(r) => r.encode(out),
            ContentBlock::Other(block) => block.encode(out),
        }
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> ContentBlock<'static> {
        match self {
            ContentBlock::Text(t) => ContentBlock::Text(IntoOwned::into_owned(t)),
            ContentBlock::AttachmentRef(r) => ContentBlock::AttachmentRef(r),
            ContentBlock::Other(r) => ContentBlock::Other(IntoOwned::into_owned(r)),
        }
    }
}
