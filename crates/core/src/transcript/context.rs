//! The prior context a resumed session's model sees (PROFILE §11), rebuilt from the stored
//! transcript, with compaction relinking (WIRE-005).
//!
//! Owns: the mapping of transcript records to [`Message`]s — a replayed user prompt is a user
//! message (text blocks joined with `\n`, attachments in order), an output `user` record's
//! `tool_result` blocks are tool results, consecutive `assistant` records sharing `message.id`
//! are one assistant message — and the splice at a `compact_boundary`: the messages before it
//! collapse into one summary message, and when the boundary names a `preserved_segment`, the
//! exact messages from its head to its tail are spliced back right after the record named by
//! its anchor (WIRE-005), instead of treating the summary as the whole prior context.
//!
//! Pure: no I/O, no clock. Records it does not use (`result`, `system/init`, stream events)
//! are skipped; a line that is not a valid output record is an error (only a torn *last* line
//! is tolerated, and [`super::split_transcript`] has already removed it).

use crate::model::{Block, Message, UserBlock};
use agentx_wire::json::{Parser, Value};
use agentx_wire::wire::system::SystemEvent;
use agentx_wire::wire::user::{ContentBlock, UserContent, UserMessage};
use agentx_wire::wire::{OutputRecord, UserRecord};

/// The summary that stands for the messages a compaction removed.
pub fn compaction_summary(removed: usize) -> Message {
    Message::compaction_summary(removed)
}

/// A message with the record UUIDs it came from (several for a merged assistant message).
struct Entry {
    uuids: Vec<String>,
    message: Message,
}

/// Why a transcript could not be turned into a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextError {
    /// 1-based transcript line.
    pub line: usize,
    /// What is wrong with it.
    pub what: &'static str,
}

/// Rebuilds the model's prior context from complete transcript lines.
pub fn prior_context(lines: &[Vec<u8>]) -> Result<Vec<Message>, ContextError> {
    let mut parser = Parser::new();
    let mut entries: Vec<Entry> = Vec::new();
    // A preserved segment waiting for its anchor record.
    let mut pending: Option<(String, Vec<Entry>)> = None;
    for (i, line) in lines.iter().enumerate() {
        let err = |what| ContextError { line: i + 1, what };
        let record = OutputRecord::decode_line(line, &mut parser)
            .map_err(|_| err("not a valid output record"))?;
        let uuid = record_uuid(&record);
        match record {
            OutputRecord::User(u) => push_user(&mut entries, &u, uuid),
            OutputRecord::Assistant(a) => {
                let doc = a
                    .message
                    .raw()
                    .and_then(|raw| raw.document().ok())
                    .ok_or_else(|| err("assistant message"))?;
                push_assistant(&mut entries, doc.root(), uuid).map_err(err)?;
            }
            OutputRecord::System(SystemEvent::CompactBoundary(b)) => {
                let removed = std::mem::take(&mut entries);
                let segment = match &b.compact_metadata.preserved_segment {
                    Some(seg) => {
                        let at =
                            |u: &str| removed.iter().position(|e| e.uuids.iter().any(|x| x == u));
                        match (at(&seg.head_uuid), at(&seg.tail_uuid)) {
                            (Some(h), Some(t)) if h <= t => {
                                // The tool results right after the tail belong to its
                                // exchange: a kept `tool_use` keeps its `tool_result` (PROFILE
                                // §11; the live compaction keeps the same messages).
                                let t = t + removed[t + 1..]
                                    .iter()
                                    .take_while(|e| matches!(e.message, Message::ToolResult { .. }))
                                    .count();
                                Some((seg.anchor_uuid.to_string(), removed_range(&removed, h, t)))
                            }
                            _ => {
                                return Err(err("preserved segment not found before its boundary"))
                            }
                        }
                    }
                    None => None,
                };
                let kept = segment.as_ref().map_or(0, |(_, s)| s.len());
                // PROFILE §19: a model-written summary is stored in the boundary.
                let summary = match &b.compact_metadata.summary {
                    Some(text) => Message::user(text.to_string()),
                    None => compaction_summary(removed.len() - kept),
                };
                entries.push(Entry {
                    uuids: uuid.into_iter().collect(),
                    message: summary,
                });
                pending = segment;
                // The anchor may be the boundary itself (splice right after the summary).
                if let Some((anchor, _)) = &pending {
                    if b.uuid.as_str() == anchor {
                        let (_, seg) = pending.take().unwrap_or_default();
                        entries.extend(seg);
                    }
                }
                continue;
            }
            _ => continue,
        }
        if let Some((anchor, _)) = &pending {
            if entries
                .last()
                .is_some_and(|e| e.uuids.iter().any(|u| u == anchor))
            {
                let (_, seg) = pending.take().unwrap_or_default();
                entries.extend(seg);
            }
        }
    }
    // An anchor that never appeared: keep the segment rather than lose context.
    if let Some((_, seg)) = pending {
        entries.extend(seg);
    }
    Ok(entries.into_iter().map(|e| e.message).collect())
}

fn removed_range(removed: &[Entry], h: usize, t: usize) -> Vec<Entry> {
    removed[h..=t]
        .iter()
        .map(|e| Entry {
            uuids: e.uuids.clone(),
            message: e.message.clone(),
        })
        .collect()
}

fn record_uuid(r: &OutputRecord<'_>) -> Option<String> {
    match r {
        OutputRecord::User(u) => u.uuid.as_ref().map(|u| u.as_str().to_owned()),
        OutputRecord::Assistant(a) => Some(a.uuid.as_str().to_owned()),
        OutputRecord::System(SystemEvent::CompactBoundary(b)) => Some(b.uuid.as_str().to_owned()),
        _ => None,
    }
}

fn push_user(entries: &mut Vec<Entry>, u: &UserRecord<'_>, uuid: Option<String>) {
    let uuids: Vec<String> = uuid.into_iter().collect();
    let blocks: &[ContentBlock<'_>] = match &u.message {
        UserMessage::Plain(t)
        | UserMessage::Object {
            content: UserContent::Text(t),
            ..
        } => {
            entries.push(Entry {
                uuids,
                message: Message::user(t.to_string()),
            });
            return;
        }
        UserMessage::Object {
            content: UserContent::Blocks(b),
            ..
        } => b,
    };
    // The prompt's text and attachments in block order (PROFILE §14: a resumed conversation
    // sends the same parts again).
    let mut prompt: Vec<UserBlock<'_>> = Vec::new();
    let mut results = Vec::new();
    for b in blocks {
        match b {
            ContentBlock::Text(t) => prompt.push(UserBlock::Text(t)),
            ContentBlock::AttachmentRef(r) => prompt.push(UserBlock::Attachment(r)),
            ContentBlock::Other(block) => {
                if let Some(Ok(doc)) = block.raw().map(|raw| raw.document()) {
                    if let Some(m) = tool_result(doc.root()) {
                        results.push(m);
                    }
                }
            }
        }
    }
    // A prompt is one user message even when it holds no text (the live session's prompt
    // message is then empty too): only a record of tool results alone adds none.
    if !prompt.is_empty() || results.is_empty() {
        entries.push(Entry {
            uuids: uuids.clone(),
            message: Message::user_blocks(prompt),
        });
    }
    for message in results {
        entries.push(Entry {
            uuids: uuids.clone(),
            message,
        });
    }
}

/// `{"type":"tool_result","tool_use_id":…,"content":string|[text blocks],"is_error"?:bool}`.
fn tool_result(v: Value<'_, '_>) -> Option<Message> {
    let o = v.as_object()?;
    if !o.get("type")?.as_str()?.eq_str("tool_result") {
        return None;
    }
    let tool_use_id = o.get("tool_use_id")?.as_str()?.decode().into_owned();
    let content = match o.get("content") {
        None => String::new(),
        Some(c) => match (c.as_str(), c.as_array()) {
            (Some(s), _) => s.decode().into_owned(),
            (None, Some(a)) => a
                .iter()
                .filter_map(|b| b.as_object()?.get("text")?.as_str())
                .map(|s| s.decode().into_owned())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => return None,
        },
    };
    let is_error = o.get("is_error").and_then(|b| b.as_bool()).unwrap_or(false);
    Some(Message::ToolResult {
        tool_use_id,
        content,
        is_error,
    })
}

fn push_assistant(
    entries: &mut Vec<Entry>,
    message: Value<'_, '_>,
    uuid: Option<String>,
) -> Result<(), &'static str> {
    let o = message.as_object().ok_or("assistant message")?;
    let id = o
        .get("id")
        .and_then(|v| v.as_str())
        .map(|s| s.decode().into_owned())
        .unwrap_or_default();
    let mut blocks = Vec::new();
    if let Some(content) = o.get("content").and_then(|c| c.as_array()) {
        for b in content.iter() {
            let Some(b) = b.as_object() else { continue };
            let kind = b.get("type").and_then(|t| t.as_str());
            match kind {
                Some(k) if k.eq_str("text") => {
                    if let Some(t) = b.get("text").and_then(|t| t.as_str()) {
                        blocks.push(Block::Text(t.decode().into_owned()));
                    }
                }
                Some(k) if k.eq_str("tool_use") => {
                    let text = |n| {
                        b.get(n)
                            .and_then(|v| v.as_str())
                            .map(|s| s.decode().into_owned())
                    };
                    let (Some(tid), Some(name)) = (text("id"), text("name")) else {
                        return Err("tool_use block without id or name");
                    };
                    let mut input = Vec::new();
                    match b.get("input") {
                        Some(i) => agentx_wire::json::write_value(&mut input, i),
                        None => input.extend_from_slice(b"{}"),
                    }
                    blocks.push(Block::ToolUse {
                        id: tid,
                        name,
                        input: String::from_utf8(input).map_err(|_| "tool input")?,
                    });
                }
                _ => {}
            }
        }
    }
    if let Some(Entry {
        uuids,
        message: Message::Assistant {
            message_id,
            blocks: prev,
        },
    }) = entries.last_mut()
    {
        if !id.is_empty() && *message_id == id {
            prev.extend(blocks);
            uuids.extend(uuid);
            return Ok(());
        }
    }
    entries.push(Entry {
        uuids: uuid.into_iter().collect(),
        message: Message::Assistant {
            message_id: id,
            blocks,
        },
    });
    Ok(())
}
