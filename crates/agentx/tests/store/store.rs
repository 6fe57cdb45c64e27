//! What the black-box store tests read back from an AgentX home (PROFILE §11): the stored
//! transcript's lines, the records in it, and the prior context `--resume` rebuilds from it
//! (with the library's own `transcript::context`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

pub fn session_dir(home: &Path, sid: &str) -> PathBuf {
    home.join("sessions").join(sid)
}

pub fn transcript_path(home: &Path, sid: &str) -> PathBuf {
    session_dir(home, sid).join("transcript.ndjson")
}

/// The raw bytes of the stored transcript (empty when absent).
pub fn transcript_bytes(home: &Path, sid: &str) -> Vec<u8> {
    std::fs::read(transcript_path(home, sid)).unwrap_or_default()
}

/// The complete lines a resume would load (the library's `split_transcript`).
pub fn stored_lines(home: &Path, sid: &str) -> Vec<Vec<u8>> {
    agentx_home::store::split_transcript(&transcript_bytes(home, sid)).lines
}

/// The stored records, parsed.
pub fn stored_records(home: &Path, sid: &str) -> Vec<Value> {
    stored_lines(home, sid)
        .iter()
        .map(|l| serde_json::from_slice(l).expect("a stored line is JSON"))
        .collect()
}

/// The `uuid`s of the stored `result` records.
pub fn stored_result_uuids(home: &Path, sid: &str) -> Vec<String> {
    stored_records(home, sid)
        .iter()
        .filter(|r| r["type"] == "result")
        .map(|r| r["uuid"].as_str().unwrap().to_string())
        .collect()
}

/// The prior context `--resume` gives the model.
pub fn resumed_context(home: &Path, sid: &str) -> Vec<agentx_core::model::Message> {
    agentx_home::store::context::prior_context(&stored_lines(home, sid)).expect("resumable")
}

/// User and assistant messages of a context (what `!history` counts, PROFILE §9).
pub fn history_count(ctx: &[agentx_core::model::Message]) -> usize {
    use agentx_core::model::Message;
    ctx.iter()
        .filter(|m| matches!(m, Message::User { .. } | Message::Assistant { .. }))
        .count()
}

/// Every `tool_use` id of a context has a `tool_result` right after its message (in the
/// messages that follow it before the next user or assistant message).
pub fn assert_tool_uses_paired(ctx: &[agentx_core::model::Message]) {
    use agentx_core::model::{Block, Message};
    for (i, m) in ctx.iter().enumerate() {
        let Message::Assistant { blocks, .. } = m else {
            continue;
        };
        for b in blocks {
            let Block::ToolUse { id, .. } = b else {
                continue;
            };
            let paired = ctx[i + 1..]
                .iter()
                .take_while(|n| matches!(n, Message::ToolResult { .. }))
                .any(|n| matches!(n, Message::ToolResult { tool_use_id, .. } if tool_use_id == id));
            assert!(
                paired,
                "tool_use {id} has no tool_result after it: {ctx:#?}"
            );
        }
    }
}

/// Files whose names start with `prefix` anywhere under `dir`.
pub fn files_named(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_named(&p, prefix));
        } else if e.file_name().to_string_lossy().starts_with(prefix) {
            out.push(p);
        }
    }
    out
}
