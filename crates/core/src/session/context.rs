//! PROFILE §19's context accounting: the estimate, in tokens, of the next model request.
//!
//! The estimate is the last completed request's reported `prompt_tokens` plus its
//! `completion_tokens`, plus every message appended to the context since (tool results,
//! prompts) at one token per 4 bytes of its UTF-8 text, rounded up per message. Before any
//! report, right after a compaction and after a resume, it is the whole request (system
//! message, tool schemas, messages) at that rate. `get_context_usage` reports it, and
//! automatic compaction compares it with `context_window` (`turn::compact`).
//!
//! Owns: [`Report`] (what the last completed request said, and where the context stood), the
//! byte rate, the estimate and its categories.
//!
//! Must never: read a clock, do I/O, or change the context (it only measures).

use crate::model::{Block, Message, ToolSpec, Usage};

use super::Session;

/// What the last completed request reported and how many messages the context held after its
/// answer (the prompt, earlier messages and the answer are in the reported count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Report {
    pub(crate) tokens: u64,
    pub(crate) context_len: usize,
}

/// One token per 4 bytes of UTF-8 text, rounded up (PROFILE §19).
pub(crate) fn tokens_of(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// The bytes of a message's text: a prompt's text, an answer's text blocks and tool calls
/// (name and input), a tool result's content.
pub(crate) fn message_bytes(m: &Message) -> usize {
    match m {
        Message::User { text, .. } => text.len(),
        Message::Assistant { blocks, .. } => blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => t.len(),
                Block::ToolUse { name, input, .. } => name.len() + input.len(),
            })
            .sum(),
        Message::ToolResult { content, .. } => content.len(),
    }
}

/// A message at the byte rate.
pub(crate) fn message_tokens(m: &Message) -> u64 {
    tokens_of(message_bytes(m))
}

/// The tool schemas at the byte rate (name, description and input schema of each).
pub(crate) fn tools_tokens(tools: &[ToolSpec]) -> u64 {
    tools
        .iter()
        .map(|t| tokens_of(t.name.len() + t.description.len() + t.input_schema.len()))
        .sum()
}

/// The estimate split as `get_context_usage` reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Estimate {
    pub(crate) system: u64,
    pub(crate) tools: u64,
    pub(crate) messages: u64,
}

impl Estimate {
    pub(crate) fn total(&self) -> u64 {
        self.system + self.tools + self.messages
    }
}

impl Session {
    /// The context the next request would send: the model's context, then the active turn's
    /// messages not sent yet (`turn_messages` is that turn's whole list).
    fn logical_context<'s>(
        &'s self,
        turn_messages: &'s [Message],
    ) -> impl Iterator<Item = &'s Message> + 's {
        let unsent = turn_messages.get(self.context_turn..).unwrap_or_default();
        self.context.iter().chain(unsent)
    }

    /// The number of messages of [`Session::logical_context`].
    pub(crate) fn logical_len(&self, turn_messages: &[Message]) -> usize {
        self.context.len() + turn_messages.len().saturating_sub(self.context_turn)
    }

    /// PROFILE §19's estimate of the next request, with the active turn's messages.
    pub(crate) fn estimate_with(&self, turn_messages: &[Message]) -> Estimate {
        let system = self.system_message().map_or(0, |s| tokens_of(s.len()));
        let tools = tools_tokens(&self.config.tools);
        let messages = match self.report {
            Some(r) if r.context_len <= self.logical_len(turn_messages) => {
                let since: u64 = self
                    .logical_context(turn_messages)
                    .skip(r.context_len)
                    .map(message_tokens)
                    .sum();
                // The reported count covers the system message and tools too.
                (r.tokens + since).saturating_sub(system + tools)
            }
            _ => self
                .logical_context(turn_messages)
                .map(message_tokens)
                .sum(),
        };
        Estimate {
            system,
            tools,
            messages,
        }
    }

    /// The estimate now (the active turn's messages included).
    pub(crate) fn estimate(&self) -> Estimate {
        let turn_messages = self.turn.as_ref().map_or(&[][..], |t| &t.messages[..]);
        self.estimate_with(turn_messages)
    }

    /// A completed request reported `usage`; the context now holds `context_len` messages
    /// (its answer included). A request that reported nothing leaves the last report.
    pub(crate) fn note_usage(&mut self, usage: &Usage, context_len: usize) {
        let tokens = usage.input_tokens + usage.output_tokens;
        if tokens > 0 {
            self.report = Some(Report {
                tokens,
                context_len,
            });
        }
    }
}
