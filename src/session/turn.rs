//! One turn (PROFILE §8 "A turn"): `system/init` once, `running`, the model's output
//! (`stream_event` records only with partial messages on; one `assistant` record per content
//! block, blocks of one message sharing `message.id`), tool work (policy, the permission race,
//! `tool_result` records in block order, the next model request), finite background tasks
//! and the held result (WIRE-004), the suggestion, the transcript flush, `idle`.
//!
//! Owns the turn's state and accounting: `num_turns` counts model requests, `duration_ms` and
//! `duration_api_ms` come from `now` differences, usage sums, `total_cost_usd` is `null` as
//! soon as one request had no authoritative price (WIRE-012), `permission_denials` lists every
//! denied tool use with its effective input, `result` is the last text block. The SDK
//! profile's limits (PROFILE §15): with `--max-turns N` the request beyond the N-th is not
//! made and the turn ends `error_max_turns` after the N-th request's tool results; with
//! `--max-budget-usd X` no request starts once the known cost since the process started
//! reaches X (`error_max_budget_usd`; unknown costs never count). Must never: run
//! a tool or a model (it queues actions), or emit `idle` while a result is held.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use crate::encode::DeltaGuard;
use crate::json::{self, write_str, write_u64};
use crate::model::{
    Block, Message, ModelEvent, ModelRequest, NetworkDecision, StopReason, TurnId, Usage, UserBlock,
};
use crate::wire::grammar::Uuid;
use crate::wire::init::{InitEvent, InputCapabilities};
use crate::wire::system::SessionState;
use crate::wire::user::{ContentBlock, UserContent, UserMessage};
use crate::wire::{OutputRecord, RawJson, ResultSubtype, SystemEvent, UserRecord};

use super::output::Pushed;
use super::policy::{self, Verdict};
use super::prompts::{Asked, Settlement};
use super::queue::Queued;
use super::records::{Denial, ResultFields};
use super::{Action, Session, ToolOutcome};

/// Where a tool use stands.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum UseState {
    /// Its block is complete; evaluated when the message ends.
    Pending,
    /// Its block was not a valid call (input not a JSON object): settled as this error.
    Invalid(String),
    /// A permission prompt is open.
    Asking,
    /// [`Action::RunTool`] was queued.
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

/// The active turn.
#[derive(Debug)]
pub(crate) struct Turn {
    pub(crate) id: TurnId,
    started: Instant,
    /// WIRE-022: attachment-bearing turns carry their prompt UUID in the result.
    prompt_uuid: Option<Uuid<'static>>,
    pub(crate) requests: u32,
    /// `Some(start)` while a model call is open.
    request_started: Option<Instant>,
    api_ms: u64,
    /// The model gave its final answer (no tool uses), failed or was cancelled.
    pub(crate) model_done: bool,
    message_id: Option<String>,
    /// Streamed blocks, each with its delta stream (PROFILE §8: held-back tails).
    open_blocks: Vec<(u32, OpenBlock, DeltaGuard)>,
    pub(crate) uses: Vec<ToolUse>,
    usage: Usage,
    cost: f64,
    cost_unknown: bool,
    pub(crate) denials: Vec<Denial>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) suggestion: Option<String>,
    pub(crate) last_text: String,
    errors: Vec<String>,
    stop_reason: Option<&'static str>,
    pub(crate) failed: bool,
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
    /// The `uuid` of the last `assistant` record written, the exchange's tail.
    last_assistant: Option<String>,
    /// A compaction ran in this turn (its prompt is summarized: it is no exchange to keep).
    compacted: bool,
    /// The limit of PROFILE §15 that ended the turn's model work, if one did.
    pub(crate) limit: Option<Limit>,
    /// PROFILE §16 hooks of this turn (`hook_points`).
    pub(crate) hooks: super::hook_points::TurnHooks,
    /// The text blocks of the turn's latest model request, joined with `\n`: the final text
    /// that PROFILE §16's structured output checks.
    answer: String,
    /// PROFILE §16: the answers checked against the output schema so far.
    structured_attempts: u32,
    /// The last answer's validation error (the result's `errors` after the last attempt).
    structured_error: Option<String>,
}

/// The last user/assistant exchange of the finished turns that a compaction preserves
/// (PROFILE §9 `!compact`, WIRE-005): its head and tail record UUIDs and where its messages are
/// in the context.
#[derive(Clone, Debug)]
pub(crate) struct Exchange {
    head: String,
    tail: String,
    /// The context indexes of its first and last message (inclusive).
    first: usize,
    last: usize,
}

/// A limit of PROFILE §15 that stops a turn's next model request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// `--max-turns`: the turn made its N requests.
    MaxTurns,
    /// `--max-budget-usd`: the known cost since the process started reached the budget.
    Budget,
}

impl Turn {
    /// A model call is open.
    pub(crate) fn model_active(&self) -> bool {
        self.request_started.is_some()
    }

    pub(crate) fn started_at(&self) -> Instant {
        self.started
    }

    /// API time including a call still open at `now`.
    pub(crate) fn api_ms_until(&self, now: Instant) -> u64 {
        self.api_ms + self.request_started.map_or(0, |s| millis(s, now))
    }

    pub(crate) fn request_count(&self) -> u32 {
        self.requests
    }

    /// `None` (WIRE-012) once a request had no authoritative price.
    pub(crate) fn cost_total(&self) -> Option<f64> {
        (!self.cost_unknown).then_some(self.cost)
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

/// The prompt's text blocks joined with `\n`, and its attachments (PROFILE §9).
fn prompt_of(user: &UserRecord<'_>) -> Message {
    match &user.message {
        UserMessage::Plain(t) => Message::user(t.to_string()),
        UserMessage::Object { content, .. } => match content {
            UserContent::Text(t) => Message::user(t.to_string()),
            // Block order is kept for providers that send parts in order (PROFILE §14).
            UserContent::Blocks(blocks) => {
                Message::user_blocks(blocks.iter().filter_map(|b| match b {
                    ContentBlock::Text(t) => Some(UserBlock::Text(t.as_ref())),
                    ContentBlock::AttachmentRef(r) => Some(UserBlock::Attachment(r)),
                    ContentBlock::Other(_) => None,
                }))
            }
        },
    }
}

impl Session {
    /// Starts the turn of a queued user record.
    pub(crate) fn start_turn(&mut self, q: Queued, now: Instant) {
        if !self.init_written {
            self.init_written = true;
            let init = self.init_record();
            // Bounded (one provider, the tools, the cwd); were it ever too long, the turn it
            // opens would end with the output error rather than lose it silently.
            self.out.push_turn(&init, false);
        }
        let id = self.next_turn;
        self.next_turn += 1;
        // PROFILE §11 "Order is context order": the prompt is stored where it enters the
        // model's context, at the start of its own turn.
        if let Some(line) = q.line {
            self.out.keep(line);
        }
        let prompt = prompt_of(&q.record);
        let has_attachments =
            matches!(&prompt, Message::User { attachments, .. } if !attachments.is_empty());
        let prompt_uuid = has_attachments.then(|| q.record.uuid.clone()).flatten();
        self.turn = Some(Turn {
            id,
            started: now,
            prompt_uuid,
            requests: 0,
            request_started: None,
            api_ms: 0,
            model_done: false,
            message_id: None,
            open_blocks: Vec::new(),
            uses: Vec::new(),
            usage: Usage::default(),
            cost: 0.0,
            cost_unknown: false,
            denials: Vec::new(),
            tasks: Vec::new(),
            suggestion: None,
            last_text: String::new(),
            errors: Vec::new(),
            stop_reason: None,
            failed: false,
            network: None,
            network_count: 0,
            messages: vec![prompt],
            prompt_record: q.record.uuid.as_ref().map(|u| u.as_str().to_string()),
            last_assistant: None,
            compacted: false,
            limit: None,
            hooks: Default::default(),
            answer: String::new(),
            structured_attempts: 0,
            structured_error: None,
        });
        self.publish(SessionState::Running);
        if self.budget_reached() {
            // PROFILE §15: once the budget is reached, a turn ends without a model request
            // (`num_turns` 0).
            if let Some(t) = self.turn.as_mut() {
                t.limit = Some(Limit::Budget);
                t.model_done = true;
            }
            self.advance(now);
            return;
        }
        // PROFILE §16: `UserPromptSubmit` runs before the turn's first model request.
        if self.user_prompt_submit(now) {
            return;
        }
        self.start_request(now);
    }

    /// PROFILE §15 `--max-budget-usd`: the known cost since this process started (unknown
    /// costs never count, WIRE-012) has reached the budget.
    fn budget_reached(&self) -> bool {
        self.config
            .limits
            .max_budget
            .as_ref()
            .is_some_and(|b| self.spent_usd >= b.usd)
    }

    /// The limit that forbids the active turn's next model request, if any (PROFILE §15):
    /// `--max-turns` first (it counts this turn's requests), then the budget.
    fn next_request_limit(&self, t: &Turn) -> Option<Limit> {
        if self
            .config
            .limits
            .max_turns
            .is_some_and(|n| t.requests >= n)
        {
            return Some(Limit::MaxTurns);
        }
        self.budget_reached().then_some(Limit::Budget)
    }

    /// No PROFILE §15 limit forbids the active turn's next model request.
    pub(crate) fn next_request_allowed(&self, t: &Turn) -> bool {
        self.next_request_limit(t).is_none()
    }

    /// PROFILE §8 `system/init`.
    fn init_record(&mut self) -> OutputRecord<'static> {
        let c = &self.config;
        let p = &c.projection.init;
        let init = InitEvent {
            api_key_source: Some(p.api_key_source),
            // PROFILE §16: in the SDK profile, the Claude Code version the SDKs check, and
            // agentx's own beside it.
            claude_code_version: Some(if c.profile == super::Profile::Sdk {
                Cow::Borrowed(super::CLAUDE_CODE_VERSION)
            } else {
                Cow::Owned(c.version.clone())
            }),
            agentx_version: (c.profile == super::Profile::Sdk)
                .then(|| Cow::Owned(c.version.clone())),
            cwd: Cow::Owned(c.cwd.clone()),
            tools: c.tools.iter().map(|t| Cow::Owned(t.name.clone())).collect(),
            mcp_servers: self
                .mcp
                .statuses()
                .map(|(name, status)| crate::wire::init::McpServerStatus {
                    name: Cow::Owned(name.to_string()),
                    status: Cow::Borrowed(status),
                })
                .collect(),
            model: Cow::Owned(p.model.clone()),
            provider: Some(Cow::Owned(p.provider.clone())),
            provider_type: Some(Cow::Borrowed(p.provider_type.as_str())),
            reasoning_capabilities: Some(p.reasoning_capabilities.clone()),
            permission_mode: Cow::Borrowed(c.permission_mode.as_str()),
            slash_commands: Some(Vec::new()),
            output_style: Some(Cow::Borrowed("default")),
            skills: Some(Vec::new()),
            plugins: Some(Vec::new()),
            agents: None,
            betas: None,
            fast_mode_state: None,
            input_capabilities: c.attachments_enabled.then(InputCapabilities::native),
            uuid: self.stamp.uuid(),
            session_id: self.stamp.sid(),
        };
        OutputRecord::System(SystemEvent::Init(Box::new(init)))
    }

    /// Queues the next model call of the active turn.
    pub(crate) fn start_request(&mut self, now: Instant) {
        let Some(t) = self.turn.as_mut() else { return };
        t.request_started = Some(now);
        t.message_id = None;
        t.open_blocks.clear();
        t.answer.clear();
        let index = t.requests;
        t.requests += 1;
        // Only the messages new since the last request are copied; the request shares the rest
        // (`Arc::make_mut` copies the whole context only if a model still holds an old request).
        let context = Arc::make_mut(&mut self.context);
        context.extend(t.messages[self.context_turn..].iter().cloned());
        self.context_turn = t.messages.len();
        let messages = Arc::clone(&self.context);
        self.actions.push_back(Action::StartModel(ModelRequest {
            turn: t.id,
            index,
            model: self.config.projection.init.model.clone(),
            effort: self.config.projection.effort.clone(),
            messages,
            tools: self.config.tools.clone(),
            system: self.system_message(),
            output_schema: self.output_schema.as_ref().map(|s| Arc::clone(s.text())),
        }));
    }

    /// A `text_delta` through the block's delta stream (PROFILE §8): what could start a
    /// credential is held back, a delta that would complete one is never written and ends
    /// the turn with the output error.
    fn text_delta(&mut self, index: u32, guard: &mut DeltaGuard, text: &str) {
        if !self.config.include_partial_messages {
            return;
        }
        match self.out.guard_delta(guard, text) {
            // Everything held back (an empty delta is still written, as the model sent it).
            Some(now) if now.is_empty() && !text.is_empty() => {}
            Some(now) => self.push_text_delta(index, &now),
            None => self.out.refuse_turn_credential(),
        }
    }

    /// An `input_json_delta` through the block's delta stream (as [`Session::text_delta`],
    /// with the joined fragments' JSON strings decoded).
    fn json_delta(&mut self, index: u32, guard: &mut DeltaGuard, partial_json: &str) {
        if !self.config.include_partial_messages {
            return;
        }
        match self.out.guard_delta(guard, partial_json) {
            Some(now) if now.is_empty() && !partial_json.is_empty() => {}
            Some(now) => self.push_json_delta(index, &now),
            None => self.out.refuse_turn_credential(),
        }
    }

    fn push_text_delta(&mut self, index: u32, text: &str) {
        let mut e = Vec::from(&b"{\"type\":\"content_block_delta\",\"index\":"[..]);
        write_u64(&mut e, u64::from(index));
        e.extend_from_slice(b",\"delta\":{\"type\":\"text_delta\",\"text\":");
        write_str(&mut e, text);
        e.extend_from_slice(b"}}");
        self.partial(e);
    }

    fn push_json_delta(&mut self, index: u32, partial_json: &str) {
        let mut e = Vec::from(&b"{\"type\":\"content_block_delta\",\"index\":"[..]);
        write_u64(&mut e, u64::from(index));
        e.extend_from_slice(b",\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":");
        write_str(&mut e, partial_json);
        e.extend_from_slice(b"}}");
        self.partial(e);
    }

    fn partial(&mut self, event: Vec<u8>) {
        if self.config.include_partial_messages {
            let rec = self.stamp.stream_event(event);
            self.out.push_turn(&rec, false);
        }
    }

    /// One model event of the active turn.
    pub(crate) fn model_event(&mut self, event: ModelEvent, now: Instant) {
        let Some(mut t) = self.turn.take() else {
            return;
        };
        let model = self.config.projection.init.model.clone();
        let streaming = t.request_started.is_some();
        match event {
            ModelEvent::MessageStart { message_id } if streaming => {
                let mut e = Vec::from(&b"{\"type\":\"message_start\",\"message\":{\"id\":"[..]);
                write_str(&mut e, &message_id);
                e.extend_from_slice(b",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
                write_str(&mut e, &model);
                e.extend_from_slice(b",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}}");
                t.message_id = Some(message_id);
                self.partial(e);
            }
            ModelEvent::TextStart { index } if streaming => {
                t.open_blocks
                    .push((index, OpenBlock::Text(String::new()), DeltaGuard::text()));
                let mut e = Vec::from(&b"{\"type\":\"content_block_start\",\"index\":"[..]);
                write_u64(&mut e, u64::from(index));
                e.extend_from_slice(b",\"content_block\":{\"type\":\"text\",\"text\":\"\"}}");
                self.partial(e);
            }
            ModelEvent::TextDelta { index, text } if streaming => {
                if let Some((_, OpenBlock::Text(s), guard)) =
                    t.open_blocks.iter_mut().find(|(i, ..)| *i == index)
                {
                    s.push_str(&text);
                    self.text_delta(index, guard, &text);
                }
            }
            ModelEvent::ToolUseStart { index, id, name } if streaming => {
                let mut e = Vec::from(&b"{\"type\":\"content_block_start\",\"index\":"[..]);
                write_u64(&mut e, u64::from(index));
                e.extend_from_slice(b",\"content_block\":{\"type\":\"tool_use\",\"id\":");
                write_str(&mut e, &id);
                e.extend_from_slice(b",\"name\":");
                write_str(&mut e, &name);
                e.extend_from_slice(b",\"input\":{}}}");
                t.open_blocks.push((
                    index,
                    OpenBlock::Tool {
                        id,
                        name,
                        json: String::new(),
                    },
                    DeltaGuard::json(),
                ));
                self.partial(e);
            }
            ModelEvent::InputJsonDelta {
                index,
                partial_json,
            } if streaming => {
                if let Some((_, OpenBlock::Tool { json, .. }, guard)) =
                    t.open_blocks.iter_mut().find(|(i, ..)| *i == index)
                {
                    json.push_str(&partial_json);
                    self.json_delta(index, guard, &partial_json);
                }
            }
            ModelEvent::BlockStop { index } if streaming => {
                if let Some(pos) = t.open_blocks.iter().position(|(i, ..)| *i == index) {
                    let (_, block, mut guard) = t.open_blocks.remove(pos);
                    // The held-back tail completes nothing now that the block ended.
                    if self.config.include_partial_messages {
                        let tail = self.out.finish_delta(&mut guard);
                        if !tail.is_empty() {
                            match &block {
                                OpenBlock::Text(_) => self.push_text_delta(index, &tail),
                                OpenBlock::Tool { .. } => self.push_json_delta(index, &tail),
                            }
                        }
                    }
                    let mut e = Vec::from(&b"{\"type\":\"content_block_stop\",\"index\":"[..]);
                    write_u64(&mut e, u64::from(index));
                    e.push(b'}');
                    self.partial(e);
                    self.block_done(&mut t, block);
                }
            }
            ModelEvent::MessageStop {
                stop_reason,
                usage,
                cost,
            } if streaming => {
                let mut e =
                    Vec::from(&b"{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"[..]);
                write_str(&mut e, stop_reason.as_str());
                e.extend_from_slice(b",\"stop_sequence\":null},\"usage\":{\"output_tokens\":");
                write_u64(&mut e, usage.output_tokens);
                e.extend_from_slice(b"}}");
                self.partial(e);
                self.partial(b"{\"type\":\"message_stop\"}".to_vec());
                self.end_request(&mut t, now);
                add_usage(&mut t.usage, &usage);
                match cost {
                    Some(c) => {
                        t.cost += c;
                        // PROFILE §16: the budget counts from this process's start.
                        self.spent_usd += c;
                    }
                    None => t.cost_unknown = true,
                }
                // The message's blocks are in `t.messages` already (one per written record).
                t.stop_reason = Some(stop_reason.as_str());
                if t.uses.is_empty() {
                    t.model_done = true;
                } else if stop_reason == StopReason::MaxTokens {
                    // PROFILE §14: a truncated tool call is not run.
                    for u in &mut t.uses {
                        u.state = UseState::Done {
                            content: "tool call truncated at max_tokens".into(),
                            is_error: true,
                        };
                    }
                } else {
                    self.evaluate_uses(&mut t, now);
                }
            }
            ModelEvent::Failed { category, message } if streaming => {
                // PROFILE §14: the provider's message is quoted only when it holds no
                // credential material; otherwise it is dropped and the record written without it.
                let message = message.filter(|m| !self.out.holds_credential(m));
                let plain = format!("model error: {}", category.as_str());
                let mut text = message.unwrap_or_else(|| plain.clone());
                let message_id = t
                    .message_id
                    .clone()
                    .unwrap_or_else(|| format!("msg_error_{}_{}", t.id, t.requests));
                let failure = |s: &mut Self, text: &str| {
                    let block = Block::Text(text.to_string());
                    s.stamp
                        .assistant(&model, &message_id, &block, Some(category))
                };
                let (mut uuid, rec) = failure(self, &text);
                let mut pushed = self.out.push(&rec, true);
                if pushed == Pushed::TooLarge {
                    // The provider's message made the record too long for one line: it is
                    // written without the message (the category stays visible), and the turn
                    // ends with the output error.
                    self.out.refuse_turn_record();
                    text = plain;
                    let (u, rec) = failure(self, &text);
                    uuid = u;
                    pushed = self.out.push(&rec, true);
                }
                if pushed == Pushed::Written {
                    t.last_assistant = Some(uuid.as_str().to_string());
                    t.record_assistant(&message_id, Block::Text(text.clone()));
                }
                self.end_request(&mut t, now);
                self.abandon_uses(&mut t, "model call failed");
                t.errors.push(text);
                t.failed = true;
                t.model_done = true;
                t.stop_reason = None;
                // WIRE-012: a call that failed reported no price.
                t.cost_unknown = true;
            }
            ModelEvent::Cancelled if streaming => {
                self.end_request(&mut t, now);
                self.abandon_uses(&mut t, "model call cancelled");
                t.errors.push("model call cancelled".into());
                t.failed = true;
                t.model_done = true;
                t.stop_reason = Some(StopReason::Cancelled.as_str());
                t.cost_unknown = true;
            }
            ModelEvent::TaskStarted {
                task_id,
                description,
            } => {
                let rec = self.stamp.task_started(&task_id, &description);
                // Not written (too large for a line, or the output failed): the host never saw
                // the task start, so it is not tracked and gets no later event; the turn ends
                // after this step.
                if self.out.push_turn(&rec, false) {
                    t.tasks.push(Task {
                        id: task_id,
                        description,
                        done: false,
                    });
                }
            }
            ModelEvent::TaskProgress { task_id, step } => {
                if let Some(task) = t.tasks.iter().find(|k| k.id == task_id && !k.done) {
                    let rec = self.stamp.task_progress(&task.id, &task.description, step);
                    self.out.push_turn(&rec, false);
                }
            }
            ModelEvent::TaskNotification { task_id, status } => {
                if let Some(task) = t.tasks.iter_mut().find(|k| k.id == task_id && !k.done) {
                    task.done = true;
                    let task_id = task.id.clone();
                    self.push_task_notification(&task_id, status);
                }
            }
            ModelEvent::Suggestion { text } => t.suggestion = Some(text),
            ModelEvent::NetworkAccess { host, port } if streaming => {
                self.network_access(&mut t, &host, port, now);
            }
            ModelEvent::Compact => self.compact(&mut t),
            // An event of a call that is not open (after its stop): ignored.
            _ => {}
        }
        self.turn = Some(t);
        self.advance(now);
    }

    fn end_request(&mut self, t: &mut Turn, now: Instant) {
        if let Some(start) = t.request_started.take() {
            t.api_ms += millis(start, now);
        }
    }

    /// A complete block: one `assistant` record (PROFILE §8), and a tool use to evaluate.
    fn block_done(&mut self, t: &mut Turn, block: OpenBlock) {
        let model = self.config.projection.init.model.clone();
        let message_id = match &t.message_id {
            Some(m) => m.clone(),
            None => {
                let m = format!("msg_{}_{}", t.id, t.requests);
                t.message_id = Some(m.clone());
                m
            }
        };
        let (block, state) = match block {
            OpenBlock::Text(text) => {
                t.last_text = text.clone();
                if !t.answer.is_empty() {
                    t.answer.push('\n');
                }
                t.answer.push_str(&text);
                (Block::Text(text), None)
            }
            OpenBlock::Tool { id, name, json } => {
                let (input, state) = match canonical_object(&json) {
                    Some(input) => (input, UseState::Pending),
                    None => (
                        "{}".to_string(),
                        UseState::Invalid(format!(
                            "invalid input for {}: not a JSON object",
                            policy::cut(&name, 64)
                        )),
                    ),
                };
                (Block::ToolUse { id, name, input }, Some(state))
            }
        };
        let (uuid, rec) = self.stamp.assistant(&model, &message_id, &block, None);
        if !self.out.push_turn(&rec, true) {
            // Not written (too large for one line, or the output failed): the host never saw
            // this block, so it is neither context nor a tool use to run; the turn ends
            // after this step with its output error.
            return;
        }
        t.last_assistant = Some(uuid.as_str().to_string());
        if let (Block::ToolUse { id, name, input }, Some(state)) = (&block, state) {
            t.uses.push(ToolUse {
                id: id.clone(),
                name: name.clone(),
                input: input.clone(),
                state,
                contexts: Vec::new(),
            });
        }
        t.record_assistant(&message_id, block);
    }

    /// Settles every unfinished use of a message that will never run (model failure).
    fn abandon_uses(&mut self, t: &mut Turn, why: &str) {
        for u in &mut t.uses {
            if !matches!(u.state, UseState::Done { .. }) {
                u.state = UseState::Done {
                    content: why.to_string(),
                    is_error: true,
                };
            }
        }
    }

    /// PROFILE §10 for each tool use of the finished message, in block order.
    fn evaluate_uses(&mut self, t: &mut Turn, now: Instant) {
        for i in 0..t.uses.len() {
            if self.out.turn_refused() {
                // A record of the turn did not fit (a `can_use_tool` request): the turn ends
                // after this step; nothing more starts.
                break;
            }
            // PROFILE §16: `PreToolUse` runs before §10's evaluation.
            if t.uses[i].state == UseState::Pending {
                match self.pre_tool_use(t, i, now) {
                    Some(pre) => self.evaluate_use(t, i, &pre, now),
                    None => t.uses[i].state = UseState::PreHook,
                }
                continue;
            }
            self.evaluate_use(t, i, &Default::default(), now);
        }
    }

    /// PROFILE §10 for one tool use, after its `PreToolUse` hooks (PROFILE §16): a denial or
    /// block denies; `updatedInput` replaces the input; `allow` skips the ask and `ask`
    /// forces it (a §10 denial or an invalid input stands either way).
    pub(crate) fn evaluate_use(
        &mut self,
        t: &mut Turn,
        i: usize,
        pre: &super::sdk_hooks::Combined,
        now: Instant,
    ) {
        t.hooks.halt_with(pre.halt.clone());
        if let Some(message) = &pre.block {
            self.deny_use(t, i, message.clone());
            return;
        }
        if let Some(input) = pre.updated_input.as_deref().and_then(canonical_object) {
            t.uses[i].input = input;
        }
        if t.uses[i].state == UseState::PreHook {
            t.uses[i].state = UseState::Pending;
        }
        let u = t.uses[i].clone();
        let verdict = match &u.state {
            UseState::Pending => {
                let offered: Vec<String> =
                    self.config.tools.iter().map(|t| t.name.clone()).collect();
                let scope = policy::Scope {
                    mode: self.config.permission_mode,
                    cwd: &self.config.cwd,
                    add_dirs: &self.config.add_dirs,
                    tool_rules: &self.config.tool_rules,
                    offered: &offered,
                };
                policy::evaluate(&scope, &self.rules, &u.name, &u.input)
            }
            UseState::Invalid(e) => Verdict::Invalid(e.clone()),
            _ => return,
        };
        let verdict = super::hook_points::pre_verdict(pre.permission, verdict);
        match verdict {
            Verdict::Allow => self.run_tool(t, i, None, now),
            Verdict::Deny(message) => self.deny_use(t, i, message),
            Verdict::Invalid(message) => {
                t.uses[i].state = UseState::Done {
                    content: message,
                    is_error: true,
                }
            }
            Verdict::Ask => match self.ask_permission(&u.id, &u.name, &u.input, now) {
                Asked::Open => t.uses[i].state = UseState::Asking,
                // Settled at once: nobody can answer (PROFILE §10), or the request could
                // not leave (WIRE-PERM-002: a denial). The session's emitter never answers
                // re-entrantly, so an immediate allow does not occur; it would run.
                Asked::Settled(Settlement::Allow {
                    updated_input,
                    updated_permissions,
                }) => {
                    self.rules.apply(&updated_permissions);
                    self.run_tool(t, i, updated_input, now);
                }
                // The request was too large for one line: nobody was asked, so it is not
                // a denial; the tool use ends with the output error (with its turn).
                Asked::Settled(Settlement::Deny { .. }) if self.out.turn_refused() => {
                    t.uses[i].state = UseState::Done {
                        content: self.out.turn_error(),
                        is_error: true,
                    }
                }
                Asked::Settled(Settlement::Deny { message, .. }) => self.deny_use(t, i, message),
            },
        }
    }

    fn run_tool(&mut self, t: &mut Turn, i: usize, updated_input: Option<String>, now: Instant) {
        let u = &mut t.uses[i];
        if let Some(input) = updated_input {
            u.input = input;
        }
        // PROFILE §16: a tool of an SDK MCP server runs as `tools/call` on the host.
        if self.is_mcp_tool(&t.uses[i].name) {
            self.mcp_call(t, i, now);
            return;
        }
        let u = &mut t.uses[i];
        u.state = UseState::Running;
        self.actions.push_back(Action::RunTool {
            tool_use_id: u.id.clone(),
            name: u.name.clone(),
            input_json: u.input.clone(),
        });
    }

    fn deny_use(&mut self, t: &mut Turn, i: usize, message: String) {
        let u = &mut t.uses[i];
        t.denials.push(Denial {
            tool_name: u.name.clone(),
            tool_use_id: u.id.clone(),
            tool_input: RawJson::parse_owned(u.input.as_bytes().to_vec())
                .unwrap_or_else(|_| RawJson::empty_object()),
        });
        u.state = UseState::Done {
            content: message,
            is_error: true,
        };
    }

    /// A prompt settled (host, hook, EOF): apply it exactly once (PERM-053).
    pub(crate) fn settle(&mut self, tool_use_id: &str, settlement: Settlement, now: Instant) {
        let Some(mut t) = self.turn.take() else {
            return;
        };
        let mut interrupt = false;
        if t.network.as_ref().is_some_and(|(id, _)| id == tool_use_id) {
            let (id, input) = t.network.take().unwrap_or_default();
            let decision = match settlement {
                Settlement::Allow { .. } => NetworkDecision::Allowed,
                Settlement::Deny { interrupt: i, .. } => {
                    interrupt = i;
                    t.denials.push(Denial {
                        tool_name: crate::wire::permission::SANDBOX_NETWORK_ACCESS.to_string(),
                        tool_use_id: id,
                        tool_input: RawJson::parse_owned(input.into_bytes())
                            .unwrap_or_else(|_| RawJson::empty_object()),
                    });
                    NetworkDecision::Denied
                }
            };
            self.actions.push_back(Action::ResumeModel {
                turn: t.id,
                decision,
            });
        } else if let Some(i) = t
            .uses
            .iter()
            .position(|u| u.id == tool_use_id && u.state == UseState::Asking)
        {
            match settlement {
                Settlement::Allow {
                    updated_input,
                    updated_permissions,
                } => {
                    self.rules.apply(&updated_permissions);
                    self.run_tool(&mut t, i, updated_input, now);
                }
                Settlement::Deny {
                    message,
                    interrupt: i2,
                } => {
                    interrupt = i2;
                    self.deny_use(&mut t, i, message);
                }
            }
        }
        // PROFILE §8: back to `running` only when no prompt remains: the race published it.
        self.turn = Some(t);
        if interrupt {
            // PERM-045: a deny with `interrupt: true` interrupts the turn.
            self.interrupt(None, now);
            return;
        }
        self.advance(now);
    }

    /// A tool finished.
    pub(crate) fn tool_done(&mut self, tool_use_id: &str, outcome: ToolOutcome, now: Instant) {
        let Some(t) = self.turn.as_mut() else { return };
        if let Some(u) = t.uses.iter_mut().find(|u| {
            u.id == tool_use_id && matches!(u.state, UseState::Running | UseState::McpCall)
        }) {
            u.state = UseState::PostHook {
                content: outcome.content,
                is_error: outcome.is_error,
            };
            // PROFILE §16: `PostToolUse` runs after the tool, before its `tool_result`.
            self.post_tool_use(tool_use_id, now);
            self.advance(now);
        }
    }

    /// A hook answered.
    pub(crate) fn hook_done(
        &mut self,
        tool_use_id: &str,
        outcome: super::HookOutcome,
        now: Instant,
    ) {
        self.permission_hook(tool_use_id, outcome, now);
    }

    /// WIRE-PERM-004: the sandbox network request takes the permission path.
    fn network_access(&mut self, t: &mut Turn, host: &str, port: Option<u16>, now: Instant) {
        let mut input = Vec::from(&b"{\"host\":"[..]);
        write_str(&mut input, host);
        input.extend_from_slice(b",\"port\":");
        match port {
            Some(p) => write_u64(&mut input, u64::from(p)),
            None => input.extend_from_slice(b"null"),
        }
        input.push(b'}');
        let input = String::from_utf8(input).unwrap_or_default();
        t.network_count += 1;
        let id = format!("toolu_network_{}_{}", t.id, t.network_count);
        let tool = crate::wire::permission::SANDBOX_NETWORK_ACCESS;
        let verdict = match self.config.permission_mode {
            crate::wire::permission::PermissionMode::BypassPermissions => Verdict::Allow,
            crate::wire::permission::PermissionMode::Plan => {
                Verdict::Deny("plan mode: no changes".into())
            }
            _ => Verdict::Ask,
        };
        let denied = |t: &mut Turn, id: String, input: String| {
            t.denials.push(Denial {
                tool_name: tool.to_string(),
                tool_use_id: id,
                tool_input: RawJson::parse_owned(input.into_bytes())
                    .unwrap_or_else(|_| RawJson::empty_object()),
            });
        };
        match verdict {
            Verdict::Allow => self.actions.push_back(Action::ResumeModel {
                turn: t.id,
                decision: NetworkDecision::Allowed,
            }),
            Verdict::Ask => match self.ask_permission(&id, tool, &input, now) {
                Asked::Open => t.network = Some((id, input)),
                // The request was too large for one line: nobody was asked (no denial); the
                // turn ends after this step and its model call is cancelled.
                Asked::Settled(Settlement::Deny { .. }) if self.out.turn_refused() => {}
                Asked::Settled(Settlement::Allow { .. }) => {
                    self.actions.push_back(Action::ResumeModel {
                        turn: t.id,
                        decision: NetworkDecision::Allowed,
                    })
                }
                // WIRE-PERM-004: any protocol error denies.
                Asked::Settled(Settlement::Deny { .. }) => {
                    denied(t, id, input);
                    self.actions.push_back(Action::ResumeModel {
                        turn: t.id,
                        decision: NetworkDecision::Denied,
                    });
                }
            },
            _ => {
                denied(t, id, input);
                self.actions.push_back(Action::ResumeModel {
                    turn: t.id,
                    decision: NetworkDecision::Denied,
                });
            }
        }
    }

    /// `!compact` (WIRE-005): `status` compacting, `compact_boundary` with the preserved
    /// segment, `status` null. The segment is the last user/assistant exchange of the finished
    /// turns (head: that turn's prompt, tail: its last assistant record; both written before
    /// this turn, so the head comes before the tail, PROFILE §11 "Compaction at any turn"),
    /// anchored at the boundary itself. The live context becomes what resume rebuilds from the
    /// transcript (`store::context`): everything before the boundary (this turn's prompt and
    /// records so far included) collapses into one summary message, the segment follows it.
    fn compact(&mut self, t: &mut Turn) {
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
        let rec = self.stamp.compact_boundary(uuid, pre_tokens, segment);
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
    }

    /// Moves the turn on: all tool results in → `tool_result` records in block order and the
    /// next request; the model done and every task finished → the result (WIRE-004).
    pub(crate) fn advance(&mut self, now: Instant) {
        if self.out.turn_refused() {
            // A record of the turn did not fit one line: nothing moves on; the session ends
            // the turn after this step ([`Cut::OutputError`](super::interrupt::Cut)).
            return;
        }
        let Some(mut t) = self.turn.take() else {
            return;
        };
        let uses_done = !t.uses.is_empty()
            && t.uses
                .iter()
                .all(|u| matches!(u.state, UseState::Done { .. }));
        if uses_done && !t.model_active() {
            for u in std::mem::take(&mut t.uses) {
                if let UseState::Done { content, is_error } = u.state {
                    let (content, is_error) = match u.contexts.is_empty() {
                        true => self.push_tool_result(&u.id, &content, is_error),
                        // PROFILE §16: PostToolUse contexts are text blocks after the output.
                        false => self.push_tool_result_with_contexts(
                            &u.id,
                            &content,
                            &u.contexts,
                            is_error,
                        ),
                    };
                    t.record_tool_result(u.id, content, is_error);
                }
            }
            if self.out.turn_refused() {
                // A tool result did not fit: no next request; the turn ends after this step.
                self.turn = Some(t);
                return;
            }
            if !t.model_done && t.hooks.take_halt(&mut t.last_text) {
                // PROFILE §16 `continue: false`: no next model request; a success result
                // whose text is `stopReason`.
                t.model_done = true;
            }
            if !t.model_done {
                match self.next_request_limit(&t) {
                    // PROFILE §15: the request beyond the limit is not made; the turn ends
                    // after these tool results (and its tasks, WIRE-004) with the limit's
                    // result.
                    Some(limit) => {
                        t.limit = Some(limit);
                        t.model_done = true;
                    }
                    None => {
                        self.turn = Some(t);
                        self.start_request(now);
                        return;
                    }
                }
            }
        }
        let held = t.tasks.iter().any(|k| !k.done);
        if t.model_done && t.uses.is_empty() && t.network.is_none() && !held {
            // PROFILE §16: `Stop` runs after the last model request, before the result.
            if let Some(t) = self.stop_hook(t, now) {
                self.finish_turn(t, now);
            }
            return;
        }
        self.turn = Some(t);
    }

    /// PROFILE §16 structured output at the end of a turn that neither failed nor hit a
    /// limit: the final text checked against the schema. `Ok(output)` when it is valid;
    /// `Err(true)` when it is not and the corrective prompt was added (the caller starts the
    /// next request); `Err(false)` when the attempts are spent or a limit forbids another
    /// request (`t` then carries the error or the limit, and ends).
    fn structured_end(
        &mut self,
        t: &mut Turn,
        schema: &super::structured::OutputSchema,
    ) -> Result<RawJson<'static>, bool> {
        t.structured_attempts += 1;
        let error = match schema.check(&t.answer) {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if t.structured_attempts >= super::structured::MAX_ATTEMPTS {
            t.structured_error = Some(error);
            return Err(false);
        }
        if let Some(limit) = self.next_request_limit(t) {
            // PROFILE §15's limits hold for the corrective requests too.
            t.limit = Some(limit);
            return Err(false);
        }
        // "asked again with the validation error": one user message, kept in the transcript
        // (not written to stdout) so a resume rebuilds the context the model saw (PROFILE §11).
        let text = super::structured::corrective_text(&error);
        let rec = super::structured::corrective_record(&text, &mut self.stamp);
        if let Some(line) = self.out.encode_prompt(&rec, false) {
            self.out.keep(line);
        }
        t.messages.push(Message::user(text));
        t.model_done = false;
        Err(true)
    }

    /// The result, the surviving suggestion, the transcript flush, `idle` (PROFILE §8).
    pub(crate) fn finish_turn(&mut self, mut t: Turn, now: Instant) {
        let mut structured_output = None;
        // Not for a turn a hook halted (`continue: false` ends it with its stop reason).
        let checked = !t.failed && t.limit.is_none() && !t.hooks.halted();
        if let (Some(schema), true) = (self.output_schema.clone(), checked) {
            match self.structured_end(&mut t, &schema) {
                Ok(value) => structured_output = Some(value),
                Err(true) => {
                    self.turn = Some(t);
                    self.start_request(now);
                    return;
                }
                Err(false) => {}
            }
        }
        let mut errors = t.errors.clone();
        let subtype = match (t.failed, t.limit) {
            (true, _) => ResultSubtype::ErrorDuringExecution,
            (false, None) if t.structured_error.is_some() => {
                let e = t.structured_error.as_deref().unwrap_or_default();
                errors.push(super::structured::exhausted_error(e));
                ResultSubtype::ErrorMaxStructuredOutputRetries
            }
            (false, None) => ResultSubtype::Success,
            (false, Some(Limit::MaxTurns)) => {
                let n = self.config.limits.max_turns.unwrap_or(t.requests);
                errors.push(format!("max turns reached: {n}"));
                ResultSubtype::ErrorMaxTurns
            }
            (false, Some(Limit::Budget)) => {
                let x = self
                    .config
                    .limits
                    .max_budget
                    .as_ref()
                    .map(|b| b.text.as_str());
                errors.push(format!("budget reached: {} USD", x.unwrap_or("?")));
                ResultSubtype::ErrorMaxBudgetUsd
            }
        };
        let fields = ResultFields {
            subtype,
            duration_ms: millis(t.started, now),
            duration_api_ms: t.api_ms,
            num_turns: t.requests,
            text: std::mem::take(&mut t.last_text),
            stop_reason: t.stop_reason,
            cost: t.cost_total(),
            usage: t.usage,
            model: Some(self.config.projection.init.model.clone()),
            denials: t.denials.clone(),
            errors,
            prompt_uuid: t.prompt_uuid.clone(),
            structured_output,
        };
        self.close_turn(t, fields, true);
    }

    /// Writes the result and what follows it, and ends the turn.
    ///
    /// A turn that lost a record to the line limit ([`Output::take_turn_refusal`]) ends with
    /// an error result naming the output error; a suggestion that would not fit is measured
    /// first, so it too makes the result an error instead of vanishing after a success. The
    /// result itself is written in the first of these forms that fits one line: as built;
    /// the error form (no result text, `errors` only the output error); the same with
    /// each denial's `tool_input` `{}`; the same without denials; if none fits (only under a
    /// small configured limit or a model name near it), a stderr line says so.
    ///
    /// [`Output::take_turn_refusal`]: super::output::Output::take_turn_refusal
    pub(crate) fn close_turn(&mut self, t: Turn, mut fields: ResultFields, suggestion: bool) {
        let suggestion = suggestion.then_some(t.suggestion.as_deref()).flatten();
        let suggestion = match suggestion {
            Some(s) if !self.out.fits(&self.stamp.suggestion_probe(s)) => {
                self.out.refuse_turn_record();
                None
            }
            other => other,
        };
        if let Some(error) = self.out.take_turn_refusal() {
            fields.subtype = ResultSubtype::ErrorDuringExecution;
            if !fields.errors.contains(&error) {
                fields.errors.push(error);
            }
        }
        // PROFILE §11: the result and everything after it wait for the turn's persist.
        let before_frame = self.out.pushed();
        self.out.hold_from(before_frame);
        self.push_result(fields);
        if let Some(s) = suggestion {
            let rec = self.stamp.suggestion(s);
            self.out.push(&rec, false);
        }
        let context = Arc::make_mut(&mut self.context);
        context.truncate(self.history_len + self.context_turn);
        let first = self.history_len;
        // The turn's last assistant message, for the exchange a later compaction keeps, and
        // the tool results right after it (a turn that ended after its tools: interrupted, a
        // §15 limit, a follow-up call with no blocks), so the kept segment never holds a
        // `tool_use` without its `tool_result` (PROFILE §11; `store::context` extends the
        // stored segment's tail the same way).
        let tail_at = t
            .messages
            .iter()
            .rposition(|m| matches!(m, Message::Assistant { .. }))
            .map(|at| {
                at + t.messages[at + 1..]
                    .iter()
                    .take_while(|m| matches!(m, Message::ToolResult { .. }))
                    .count()
            });
        context.extend(t.messages.into_iter().skip(self.context_turn));
        self.history_len = context.len();
        self.context_turn = 0;
        if let (false, Some(head), Some(tail), Some(at)) =
            (t.compacted, t.prompt_record, t.last_assistant, tail_at)
        {
            self.last_exchange = Some(Exchange {
                head,
                tail,
                first,
                last: first + at,
            });
        }
        // The internal flush: the session store's append + fsync (PROFILE §11).
        let lines = self.out.take_transcript();
        self.actions.push_back(Action::Persist {
            lines,
            before_frame,
        });
        self.publish(SessionState::Idle);
    }
}

impl Session {
    /// Writes the result in the first form that fits one line (see [`Session::close_turn`]).
    fn push_result(&mut self, mut fields: ResultFields) {
        for fallback in 0..4 {
            match fallback {
                0 => {}
                1 => {
                    fields.subtype = ResultSubtype::ErrorDuringExecution;
                    fields.errors = vec![self.out.line_limit_error()];
                }
                2 => {
                    for d in &mut fields.denials {
                        d.tool_input = RawJson::empty_object();
                    }
                }
                _ => fields.denials.clear(),
            }
            let rec = self.stamp.result(&fields);
            if self.out.push(&rec, true) != Pushed::TooLarge {
                return;
            }
        }
        // No form fits (a small configured limit, or a model name near it: every form names
        // the model): the turn still ends with `idle`; the loss is said, never silent.
        self.out
            .diagnostic(super::prompts::too_large_diagnostic("result"));
    }

    /// Writes the terminal `task_notification` of a task the host saw start (PROFILE §8: every
    /// started task ends). One too large for a line (its summary `task <id> <status>` repeats
    /// the ID) is written with the summary `task <status>` and marks the turn, which then ends
    /// with its output error; if even that cannot fit, a stderr line says so.
    pub(crate) fn push_task_notification(
        &mut self,
        task_id: &str,
        status: crate::model::TaskStatus,
    ) {
        let summary = format!("task {task_id} {}", status.as_str());
        let rec = self.stamp.task_notification(task_id, status, &summary);
        if self.out.push(&rec, false) == Pushed::TooLarge {
            self.out.refuse_turn_record();
            let summary = format!("task {}", status.as_str());
            let rec = self.stamp.task_notification(task_id, status, &summary);
            if self.out.push(&rec, false) == Pushed::TooLarge {
                self.out
                    .diagnostic(super::prompts::too_large_diagnostic("task_notification"));
            }
        }
    }

    /// Writes the terminal `tool_result` of one accepted tool use. One too large for a line
    /// is replaced by an error `tool_result` carrying the output error (so the tool use is
    /// still paired, PERM-053) and marks the turn, which then ends with its output error.
    /// Returns what was written (the model's context keeps exactly that).
    pub(crate) fn push_tool_result(
        &mut self,
        tool_use_id: &str,
        content: &str,
        is_error: bool,
    ) -> (String, bool) {
        let rec = self.stamp.tool_result(tool_use_id, content, is_error);
        let mut pushed = self.out.push(&rec, true);
        let mut cut_content = None;
        if pushed == Pushed::TooLarge && self.config.profile == super::Profile::Sdk {
            // PROFILE §15: in the SDK profile a tool output that would not fit the 1 MiB line
            // is cut with a visible marker, and the turn goes on.
            let mut keep = content.len();
            for _ in 0..8 {
                let over = self
                    .out
                    .encoded_len(&self.stamp.tool_result(
                        tool_use_id,
                        &cut_text(content, keep),
                        is_error,
                    ))
                    .saturating_sub(self.config.max_record_len);
                if over == 0 {
                    break;
                }
                keep = keep.saturating_sub(over.max(keep / 8));
            }
            let text = cut_text(content, keep);
            let rec = self.stamp.tool_result(tool_use_id, &text, is_error);
            pushed = self.out.push(&rec, true);
            cut_content = Some(text);
        }
        if let (Some(text), false) = (cut_content, pushed == Pushed::TooLarge) {
            self.prompts.mark_resolved(tool_use_id);
            return (text, is_error);
        }
        let written = match pushed {
            Pushed::TooLarge => {
                self.out.refuse_turn_record();
                let error = self.out.line_limit_error();
                let rec = self.stamp.tool_result(tool_use_id, &error, true);
                if self.out.push(&rec, true) == Pushed::TooLarge {
                    // Only under a tiny configured limit: said, never silent.
                    self.out
                        .diagnostic(super::prompts::too_large_diagnostic("tool_result"));
                }
                (error, true)
            }
            _ => (content.to_string(), is_error),
        };
        self.prompts.mark_resolved(tool_use_id);
        written
    }
}

/// The first `keep` bytes of `content` (at a character boundary) and the marker saying how
/// much was cut (PROFILE §15); `content` itself when it all fits.
fn cut_text(content: &str, keep: usize) -> String {
    if keep >= content.len() {
        return content.to_string();
    }
    let mut end = keep;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[agentx: output cut: {} of {} bytes shown, to fit the 1,048,576-byte line limit]",
        &content[..end],
        end,
        content.len()
    )
}

fn add_usage(total: &mut Usage, u: &Usage) {
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    total.cache_read_input_tokens += u.cache_read_input_tokens;
    total.cache_creation_input_tokens += u.cache_creation_input_tokens;
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
