//! One turn (PROFILE §8 "A turn"): `system/init` once, `running`, the model's output
//! (`stream_event` records only with partial messages on; one `assistant` record per content
//! block, blocks of one message sharing `message.id`), tool work (policy, the permission race,
//! `tool_result` records in block order, the next model request), finite background tasks
//! and the held result (WIRE-004), the suggestion, the transcript flush, `idle`.
//!
//! This file owns the turn's state as values: [`Phase`] says where its model work stands (no
//! call open with work to come, one [`Request`] streaming, or ended and [`End`] says how), each
//! tool use is a [`UseState`], so "a call open after the model failed" or "halted but still
//! asking" cannot be written. The steps live beside it, one concern a file:
//! - `start`: the turn's start, `system/init`, each model request and PROFILE §15's limits on it;
//! - `stream`: one model event at a time (a short function per event) and its `stream_event`,
//!   `assistant` and task records;
//! - `tools`: PROFILE §10 for each tool use, the permission prompts' settlements, tool
//!   completions, the sandbox network prompt (WIRE-PERM-004);
//! - `compact`: `!compact` (WIRE-005) and the exchange a compaction keeps;
//! - `end`: moving the turn on (tool results, the next request, the held result) and its end
//!   (PROFILE §16 structured output, the result, the suggestion, the flush, `idle`);
//! - `terminal`: the result, `task_notification` and `tool_result` records in the first form
//!   that fits one line.
//!
//! The accounting: `num_turns` counts model requests, `duration_ms` and `duration_api_ms` come
//! from `now` differences, usage sums, `total_cost_usd` is `null` as soon as one request had no
//! authoritative price (WIRE-012), `permission_denials` lists every denied tool use with its
//! effective input, `result` is the last text block. The SDK profile's limits (PROFILE §15):
//! with `--max-turns N` the request beyond the N-th is not made and the turn ends
//! `error_max_turns` after the N-th request's tool results; with `--max-budget-usd X` no request
//! starts once the known cost since the process started reaches X (`error_max_budget_usd`;
//! unknown costs never count).
//!
//! Must never: run a tool or a model (it queues actions), read a clock (time is the `now`
//! argument), or emit `idle` while a result is held.

pub(crate) mod autocompact;
mod compact;
mod end;
pub(crate) mod hooks;
mod start;
pub(crate) use start::prompt_of;
mod stream;
mod terminal;
mod tools;

use std::time::Instant;

use crate::model::{Block, Message, TurnId, Usage};
use agentx_wire::encode::DeltaGuard;
use agentx_wire::json;
use agentx_wire::wire::grammar::Uuid;

use super::records::Denial;

pub(crate) use compact::Exchange;

/// Where a tool use stands.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum UseState {
    /// Its block is complete; evaluated when the message ends.
    Pending,
    /// Its block was not a valid call (input not a JSON object): settled as this error.
    Invalid(String),
    /// A permission prompt is open.
    Asking,
    /// [`Action::RunTool`](super::Action::RunTool) was queued.
    Running,
    /// Its `tool_result` content is known.
    Done { content: String, is_error: bool },
    /// PROFILE §16: its `PreToolUse` hook callbacks run; §10's evaluation waits for them.
    PreHook,
    /// PROFILE §16: the tool ran; its `PostToolUse` hook callbacks run before the record.
    PostHook { content: String, is_error: bool },
    /// PROFILE §16: its `tools/call` went to the host's in-process MCP server
    /// (`session::mcp_calls`).
    McpCall,
}

/// One accepted tool use (an `assistant` record with its `tool_use` block was written).
#[derive(Clone, Debug)]
pub(crate) struct ToolUse {
    pub(crate) id: String,
    pub(crate) name: String,
    /// Validated compact JSON of the input object as the model gave it.
    pub(crate) input: String,
    pub(crate) state: UseState,
    /// PROFILE §16 `PostToolUse` `additionalContext`s: text blocks after the tool's output.
    pub(crate) contexts: Vec<String>,
    /// PROFILE §17: the built-in tool's `tool_use_result` forms, fullest first
    /// ([`ToolOutcome::tool_use_result`](crate::session::ToolOutcome)).
    pub(crate) tool_use_result: Vec<agentx_wire::wire::RawJson<'static>>,
}

/// A content block being streamed.
#[derive(Clone, Debug)]
enum OpenBlock {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
    },
}

/// A finite background task (PROFILE §9 `!task`).
#[derive(Clone, Debug)]
pub(crate) struct Task {
    pub(crate) id: String,
    pub(crate) description: String,
    pub(crate) done: bool,
}

/// Where the turn's model work stands.
#[derive(Debug)]
pub(crate) enum Phase {
    /// No model call is open and the model's work goes on: before the first request (while
    /// `UserPromptSubmit` runs), or while the last message's tool uses, their hooks and
    /// prompts run; the next request follows their `tool_result` records.
    Between,
    /// A model call is open.
    Streaming(Request),
    /// PROFILE §19: the summarization request of a compaction is open; the request it
    /// precedes (or the `/compact` command's result) follows it.
    Compacting(autocompact::Summary),
    /// PROFILE §19: a compaction waits for its `PreCompact` hook callbacks (§16).
    PreCompact(autocompact::Pending),
    /// The model's work is over; the turn ends once its tool results are written, its tasks
    /// have finished (the held result, WIRE-004) and its `Stop` hook has run.
    Ended(End),
}

/// The open model call of a turn.
#[derive(Debug)]
pub(crate) struct Request {
    started: Instant,
    /// The `message.id` its blocks share: the model's, or made at its first complete block.
    message_id: Option<String>,
    /// Streamed blocks, each with its delta stream (PROFILE §8: held-back tails).
    open_blocks: Vec<(u32, OpenBlock, DeltaGuard)>,
}

/// How the model's work of a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum End {
    /// The final answer: a message with no tool use.
    Answered,
    /// The call failed or was cancelled (`error_during_execution`).
    Failed,
    /// A limit of PROFILE §15 forbade the next request.
    Limit(Limit),
    /// PROFILE §16 `continue: false`: no next request; the result text is its `stopReason`.
    Halted,
}

/// A limit of PROFILE §15 that stops a turn's next model request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// `--max-turns`: the turn made its N requests.
    MaxTurns,
    /// `--max-budget-usd`: the known cost since the process started reached the budget.
    Budget,
}

/// The active turn.
#[derive(Debug)]
pub(crate) struct Turn {
    pub(crate) id: TurnId,
    started: Instant,
    /// WIRE-022: attachment-bearing turns carry their prompt UUID in the result.
    prompt_uuid: Option<Uuid<'static>>,
    phase: Phase,
    pub(crate) requests: u32,
    /// API time of the calls that ended.
    api_ms: u64,
    pub(crate) uses: Vec<ToolUse>,
    usage: Usage,
    /// The calls' summed cost; `None` (WIRE-012) once one had no authoritative price.
    cost: Option<f64>,
    pub(crate) denials: Vec<Denial>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) suggestion: Option<String>,
    pub(crate) last_text: String,
    errors: Vec<String>,
    stop_reason: Option<&'static str>,
    /// The open sandbox-network prompt's tool-use ID and input (WIRE-PERM-004).
    network: Option<(String, String)>,
    network_count: u32,
    /// This turn's messages, the prompt first, exactly as the store will rebuild them from
    /// the records written (PROFILE §11: a resumed context is exactly the live one): each
    /// written `assistant` record's block joins the last message when that is an assistant
    /// message with the same `message.id` (else it starts one), each written `tool_result`
    /// is one message. Emptied by a compaction (its messages are summarized).
    pub(crate) messages: Vec<Message>,
    /// The `uuid` of the prompt's record (its replay form), the head of the exchange a later
    /// compaction preserves.
    pub(crate) prompt_record: Option<String>,
    /// The host's record carried that `uuid` (it was not minted, [`Queued::uuid_given`]).
    pub(crate) prompt_uuid_given: bool,
    /// With a `UserPromptSubmit` hook registered: the prompt's replay record and the index of
    /// its kept transcript line, so the contexts the hook appends are stored with the prompt
    /// (PROFILE §11: a resumed context is exactly the live one).
    pub(crate) prompt_kept: Option<(Box<agentx_wire::wire::UserRecord<'static>>, usize)>,
    /// The `uuid` of the last `assistant` record written, the exchange's tail.
    last_assistant: Option<String>,
    /// A compaction ran in this turn (its prompt is summarized: it is no exchange to keep).
    compacted: bool,
    /// PROFILE §16 hooks of this turn (`turn::hooks`).
    pub(crate) hooks: hooks::TurnHooks,
    /// The text blocks of the turn's latest model request, joined with `\n`: the final text
    /// that PROFILE §16's structured output checks.
    answer: String,
    /// PROFILE §16: the answers checked against the output schema so far.
    structured_attempts: u32,
    /// PROFILE §19: the next request was checked against the threshold (and compacted when
    /// over it): at most one compaction per request.
    compact_checked: bool,
    /// PROFILE §19: the next request compacts first whatever the estimate (a
    /// `context_length_exceeded` answer).
    force_compact: bool,
    /// PROFILE §19: this request was refused for its length once already (a second refusal
    /// ends the turn).
    context_retried: bool,
    /// The next request is to be started once the step that set this is done (after a
    /// summary, or to retry a refused request).
    resend: bool,
    /// Where the prompt's line is in the turn's transcript (a compaction at the turn's start
    /// moves it after the boundary, PROFILE §19).
    prompt_line: Option<usize>,
    /// PROFILE §19 `/compact`: this turn is the command, not a prompt.
    pub(crate) command: Option<autocompact::Command>,
    /// The last answer's validation error (the result's `errors` after the last attempt).
    structured_error: Option<String>,
}

impl Turn {
    /// A model call is open (an answer's or a compaction's summary).
    pub(crate) fn model_active(&self) -> bool {
        matches!(self.phase, Phase::Streaming(_) | Phase::Compacting(_))
    }

    /// PROFILE §19: a compaction's summarization request is open.
    pub(crate) fn compacting(&self) -> bool {
        matches!(self.phase, Phase::Compacting(_) | Phase::PreCompact(_))
    }

    /// The model's work ended with its final answer (no failure, limit or `continue: false`):
    /// the turn's `Stop` hook and PROFILE §16 structured output apply to it.
    pub(crate) fn answered(&self) -> bool {
        matches!(self.phase, Phase::Ended(End::Answered))
    }

    /// The model's work goes on after it ended with an answer (a `Stop` hook's block or a
    /// corrective structured-output request follows).
    pub(crate) fn reopen(&mut self) {
        self.phase = Phase::Between;
    }

    /// A pending PROFILE §16 `continue: false` ends the model's work: its `stopReason`
    /// becomes the result text. `false` when none is pending.
    pub(crate) fn take_halt(&mut self) -> bool {
        match self.hooks.take_halt() {
            Some(text) => {
                self.last_text = text;
                self.phase = Phase::Ended(End::Halted);
                true
            }
            None => false,
        }
    }

    /// The model's work ends before its first request (UserPromptSubmit's `continue: false`
    /// or the budget, PROFILE §15).
    fn end_work(&mut self, end: End) {
        self.phase = Phase::Ended(end);
    }

    fn request_mut(&mut self) -> Option<&mut Request> {
        match &mut self.phase {
            Phase::Streaming(r) => Some(r),
            _ => None,
        }
    }

    pub(crate) fn started_at(&self) -> Instant {
        self.started
    }

    /// API time including a call still open at `now`.
    pub(crate) fn api_ms_until(&self, now: Instant) -> u64 {
        let open = match &self.phase {
            Phase::Streaming(r) => millis(r.started, now),
            Phase::Compacting(s) => millis(s.started, now),
            _ => 0,
        };
        self.api_ms + open
    }

    pub(crate) fn request_count(&self) -> u32 {
        self.requests
    }

    /// `None` (WIRE-012) once a request had no authoritative price.
    pub(crate) fn cost_total(&self) -> Option<f64> {
        self.cost
    }

    pub(crate) fn usage_total(&self) -> Usage {
        self.usage
    }

    pub(crate) fn prompt_uuid(&self) -> Option<Uuid<'static>> {
        self.prompt_uuid.clone()
    }

    /// The errors gathered so far (model failures).
    pub(crate) fn errors(&self) -> &[String] {
        &self.errors
    }

    /// The last model stop reason, if a call ended.
    pub(crate) fn stop_reason(&self) -> Option<&'static str> {
        self.stop_reason
    }

    /// Records a written `assistant` record's block in the turn's messages (the store's
    /// merge rule: consecutive records sharing a non-empty `message.id` are one message).
    fn record_assistant(&mut self, message_id: &str, block: Block) {
        if let Some(Message::Assistant {
            message_id: m,
            blocks,
        }) = self.messages.last_mut()
        {
            if !message_id.is_empty() && m == message_id {
                blocks.push(block);
                return;
            }
        }
        self.messages.push(Message::Assistant {
            message_id: message_id.to_string(),
            blocks: vec![block],
        });
    }

    /// Records a written `tool_result` in the turn's messages.
    pub(crate) fn record_tool_result(
        &mut self,
        tool_use_id: String,
        content: String,
        is_error: bool,
    ) {
        self.messages.push(Message::ToolResult {
            tool_use_id,
            content,
            is_error,
        });
    }

    /// Tool uses whose tool runs.
    pub(crate) fn running_tools(&self) -> Vec<String> {
        self.uses
            .iter()
            .filter(|u| u.state == UseState::Running)
            .map(|u| u.id.clone())
            .collect()
    }
}

/// Whole milliseconds from `from` to `to` (0 if the clock did not advance).
pub(crate) fn millis(from: Instant, to: Instant) -> u64 {
    u64::try_from(to.saturating_duration_since(from).as_millis()).unwrap_or(u64::MAX)
}

/// The canonical compact form of a JSON object text, or `None` if it is not one.
fn canonical_object(text: &str) -> Option<String> {
    let doc = json::parse(text.as_bytes()).ok()?;
    let root = doc.root();
    root.as_object()?;
    let mut out = Vec::with_capacity(text.len());
    json::write_value(&mut out, root);
    String::from_utf8(out).ok()
}
