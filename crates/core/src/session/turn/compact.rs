//! `!compact` (PROFILE §9, WIRE-005) inside a turn, and the exchange a compaction keeps.
//!
//! Must never: change the live context when the boundary was not written (the transcript
//! would then not rebuild it, PROFILE §11).

use std::sync::Arc;

use crate::model::{Block, Message};

use super::Turn;
use crate::session::Session;

/// The last user/assistant exchange of the finished turns that a compaction preserves
/// (PROFILE §9 `!compact`, WIRE-005): its head and tail record UUIDs and where its messages are
/// in the context.
#[derive(Clone, Debug)]
pub(crate) struct Exchange {
    pub(super) head: String,
    pub(super) tail: String,
    /// The context indexes of its first and last message (inclusive).
    pub(super) first: usize,
    pub(super) last: usize,
}

impl Session {
    /// `!compact` (WIRE-005): `status` compacting, `compact_boundary` with the preserved
    /// segment, `status` null. The segment is the last user/assistant exchange of the finished
    /// turns (head: that turn's prompt, tail: its last assistant record; both written before
    /// this turn, so the head comes before the tail, PROFILE §11 "Compaction at any turn"),
    /// anchored at the boundary itself. The live context becomes what resume rebuilds from the
    /// transcript (`transcript::context`): everything before the boundary (this turn's prompt and
    /// records so far included) collapses into one summary message, the segment follows it.
    pub(super) fn compact(&mut self, t: &mut Turn) {
        let pre_tokens: u64 = self.context[..self.history_len]
            .iter()
            .map(|m| match m {
                Message::User { text, .. } => text.split_whitespace().count() as u64,
                Message::Assistant { blocks, .. } => blocks
                    .iter()
                    .map(|b| match b {
                        Block::Text(t) => t.split_whitespace().count() as u64,
                        Block::ToolUse { .. } => 1,
                    })
                    .sum(),
                Message::ToolResult { content, .. } => content.split_whitespace().count() as u64,
            })
            .sum();
        let rec = self.stamp.status(Some("compacting"));
        self.out.push_turn(&rec, false);
        let uuid = self.stamp.uuid();
        let segment = self
            .last_exchange
            .as_ref()
            .map(|e| (e.head.clone(), uuid.as_str().to_string(), e.tail.clone()));
        let rec = self.stamp.compact_boundary(
            uuid,
            pre_tokens,
            segment,
            agentx_wire::wire::system::CompactTrigger::Manual,
            None,
        );
        let written = self.out.push_turn(&rec, true);
        let rec = self.stamp.status(None);
        self.out.push_turn(&rec, false);
        if !written {
            // No boundary in the transcript: the context stays as it is (the turn ends with
            // the output error after this step).
            return;
        }
        t.compacted = true;
        let removed = self.history_len + t.messages.len();
        let kept: Vec<Message> = match &self.last_exchange {
            Some(e) => self.context[e.first..=e.last].to_vec(),
            None => Vec::new(),
        };
        let mut context = Vec::with_capacity(1 + kept.len());
        context.push(Message::compaction_summary(removed - kept.len()));
        if let Some(e) = self.last_exchange.as_mut() {
            e.first = 1;
            e.last = kept.len();
        }
        context.extend(kept);
        self.history_len = context.len();
        self.context = Arc::new(context);
        self.context_turn = 0;
        t.messages.clear();
        // PROFILE §19: right after a compaction the estimate is the whole request again.
        self.report = None;
    }
}
