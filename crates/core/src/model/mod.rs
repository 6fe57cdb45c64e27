//! The model interface: what the session core asks a model for ([`ModelRequest`]) and what a
//! model answers ([`ModelEvent`]), as plain owned values.
//!
//! Owns the vocabulary shared by the session core (which consumes events), the scripted model
//! `agentx-echo` (PROFILE §9) and the HTTP providers (PROFILE §14), which produce them in a
//! driver. One request is one model call (`num_turns` counts them); its events arrive in
//! order and end with exactly one of [`ModelEvent::MessageStop`], [`ModelEvent::Failed`] or
//! [`ModelEvent::Cancelled`]. The events after that, if any, are the scripted model's finite
//! background task events (`!task`), which may outlive the message (WIRE-004 holds the
//! result for them).
//!
//! A user prompt's attachments are references (manifests); a driver that sends media reads
//! their bytes through [`BlobSource`] (PROFILE §14), so the core never touches a blob.
//!
//! Must never: do I/O, read a clock, sleep or spawn; know about HTTP, SSE or directives.

pub mod blobs;
pub mod scripted;
pub mod user;

use std::sync::Arc;

pub use blobs::{BlobSource, BlobUnavailable, NoBlobs};
pub use user::{Part, UserBlock, UserParts};

use agentx_wire::wire::output::AssistantError;
use agentx_wire::wire::AttachmentRef;

/// Identifies one turn of a session (a user record's work), unique per process.
pub type TurnId = u64;

/// One model call.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelRequest {
    /// The turn this call belongs to.
    pub turn: TurnId,
    /// 0 for the turn's first call; +1 per follow-up after tool results.
    pub index: u32,
    /// The configured model name (records and `modelUsage` use it).
    pub model: String,
    /// The provider's declared `default_effort`, sent as `reasoning_effort` (PROFILE §14).
    pub effort: Option<String>,
    /// The conversation so far, oldest first, ending with the current prompt (and, for a
    /// follow-up, the tool results). Shared with the session that made the request: cloning
    /// a request does not copy the conversation.
    pub messages: Arc<Vec<Message>>,
    /// The tools the model may call (PROFILE §10).
    pub tools: Vec<ToolSpec>,
    /// The system message of every request (PROFILE §15: `--system-prompt`,
    /// `--append-system-prompt`, initialize `systemPrompt`/`appendSystemPrompt`; the SDK
    /// profile only). `None`: no system message.
    pub system: Option<String>,
    /// PROFILE §16 structured output: the JSON Schema (canonical compact JSON) the final
    /// answer must match; `openai` providers send it as `response_format` `json_schema`.
    pub output_schema: Option<Arc<str>>,
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSpec {
    /// The tool's name as the model calls it (`Read`, `Write`, `Bash`).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the input object, as compact JSON text.
    pub input_schema: String,
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A user prompt: its text blocks joined with `\n`, its attachments in order, and the
    /// block order ([`Message::user_blocks`] builds one, [`Message::user_parts`] walks it).
    User {
        /// The text blocks joined with `\n`.
        text: String,
        /// The attachments the record referenced, in order (WIRE-017): manifests, read by a
        /// driver through a [`BlobSource`].
        attachments: Vec<AttachmentRef>,
        /// The order of the text blocks and attachments; empty means the text, then the
        /// attachments.
        layout: Vec<Part>,
    },
    /// One model message: its blocks in order.
    Assistant {
        /// The message ID shared by its `assistant` records.
        message_id: String,
        /// Its content blocks, in order.
        blocks: Vec<Block>,
    },
    /// The result of one tool call, answering a `tool_use` block of the previous assistant
    /// message.
    ToolResult {
        /// The tool-use ID this result answers.
        tool_use_id: String,
        /// The tool's output (or the denial or error text).
        content: String,
        /// Whether the call failed or was denied.
        is_error: bool,
    },
}

/// PROFILE §19: the user message that ends a summarization request (instructions of
/// `/compact` follow it after a blank line). The scripted model recognizes it.
pub const SUMMARY_REQUEST: &str = "Summarize the conversation so far for your own later use. Keep the task, the decisions made, the files touched and the open work; leave out what no longer matters. Answer with the summary only.";

impl Message {
    /// PROFILE §19: the user message asking for a summary, with `/compact`'s instructions.
    pub fn summary_request(instructions: Option<&str>) -> Message {
        match instructions {
            Some(i) => Message::user(format!("{SUMMARY_REQUEST}\n\n{i}")),
            None => Message::user(SUMMARY_REQUEST.to_string()),
        }
    }

    /// The summary that stands for the `removed` messages a compaction removed (WIRE-005):
    /// the live session and the store's rebuilt context (`transcript::context`) use this one text.
    pub fn compaction_summary(removed: usize) -> Message {
        Message::user(format!("[compacted summary of {removed} earlier messages]"))
    }
}

/// A content block of an assistant message.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A text block.
    Text(String),
    /// A tool call.
    ToolUse {
        /// The tool-use ID.
        id: String,
        /// The tool's name.
        name: String,
        /// The input object as compact JSON text.
        input: String,
    },
}

/// What a model reports while answering one [`ModelRequest`].
#[derive(Clone, Debug, PartialEq)]
pub enum ModelEvent {
    /// The message began; `message_id` is shared by its blocks' `assistant` records.
    MessageStart {
        /// The new message's ID.
        message_id: String,
    },
    /// A text block begins at `index`.
    TextStart {
        /// The block's index in the message.
        index: u32,
    },
    /// More text for the block at `index`.
    TextDelta {
        /// The block's index in the message.
        index: u32,
        /// The new text.
        text: String,
    },
    /// A `tool_use` block begins at `index` (`id` is the tool-use ID).
    ToolUseStart {
        /// The block's index in the message.
        index: u32,
        /// The tool-use ID.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of the tool input's JSON text (`input_json_delta`).
    InputJsonDelta {
        /// The block's index in the message.
        index: u32,
        /// The next piece of the input's JSON text (not valid JSON on its own).
        partial_json: String,
    },
    /// The block at `index` is complete.
    BlockStop {
        /// The block's index in the message.
        index: u32,
    },
    /// The message ended normally. `cost` is `None` when no authoritative price is known
    /// (WIRE-012): never report 0 for "unknown".
    MessageStop {
        /// Why the message ended.
        stop_reason: StopReason,
        /// Token usage of the call.
        usage: Usage,
        /// The call's cost in USD, `None` when unknown (WIRE-012).
        cost: Option<f64>,
    },
    /// The call failed; the turn ends `error_during_execution` with an assistant record whose
    /// `error` is `category`. `message` is the provider's text, quoted only when it holds no
    /// credential (the encoder refuses it otherwise).
    Failed {
        /// The assistant record's `error` category.
        category: AssistantError,
        /// The provider's message, if any.
        message: Option<String>,
    },
    /// PROFILE §19: the provider refused the request because the context is too long (HTTP
    /// 400 `context_length_exceeded`). The session compacts once and retries the request; a
    /// second one ends the turn like [`ModelEvent::Failed`] `invalid_request`.
    ContextLengthExceeded {
        /// The provider's message, if any.
        message: Option<String>,
    },
    /// The call observed the caller's cancellation while opening or streaming:
    /// `stop_reason: "cancelled"`, never `provider_error`.
    Cancelled,
    /// `!task ID …` (PROFILE §9): a finite background task started.
    TaskStarted {
        /// The task's ID.
        task_id: String,
        /// What the task does.
        description: String,
    },
    /// One step of a running task.
    TaskProgress {
        /// The task's ID.
        task_id: String,
        /// The step number, from 1.
        step: u32,
    },
    /// The task ended (`completed`, `failed` or `stopped`).
    TaskNotification {
        /// The task's ID.
        task_id: String,
        /// How it ended.
        status: TaskStatus,
    },
    /// `!suggest TEXT`: a `prompt_suggestion` after the result.
    Suggestion {
        /// The suggested next prompt.
        text: String,
    },
    /// `!network HOST PORT`: the sandbox network request (WIRE-PERM-004, PERM-022). The model
    /// waits for the session's answer ([`crate::model::NetworkDecision`]) before it goes on.
    NetworkAccess {
        /// The host the tool wants to reach.
        host: String,
        /// The port, if one was named.
        port: Option<u16>,
    },
    /// `!compact`: a manual compaction (WIRE-005).
    Compact,
}

/// The answer to a [`ModelEvent::NetworkAccess`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkDecision {
    /// A decisive allow: the model goes on.
    Allowed,
    /// Denied (also every error, cancellation or stream close: never an allow).
    Denied,
}

/// Why a message ended (the result's `stop_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// `end_turn`: the model finished.
    EndTurn,
    /// `tool_use`: the model called tools.
    ToolUse,
    /// `max_tokens`: the output limit was reached.
    MaxTokens,
    /// `refusal`: the model refused.
    Refusal,
    /// `cancelled`: an interrupt ended the call.
    Cancelled,
}

impl StopReason {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
        }
    }
}

/// Terminal status of a background task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    /// `completed`.
    Completed,
    /// `failed`.
    Failed,
    /// `stopped` (by an interrupt or `stop_task`).
    Stopped,
}

impl TaskStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Stopped => "stopped",
        }
    }
}

/// Token usage of one call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Input tokens billed.
    pub input_tokens: u64,
    /// Output tokens generated.
    pub output_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the provider's cache.
    pub cache_creation_input_tokens: u64,
}
