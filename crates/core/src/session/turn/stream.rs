//! One model event of the active turn, one short function per event: the `stream_event`
//! records (only with partial messages on; each delta through its block's `DeltaGuard`,
//! PROFILE §8), one `assistant` record per complete block (blocks of one message share
//! `message.id`), the end of a call (usage, cost, the tool uses to evaluate, or the final
//! answer), a failed or cancelled call, and the task events (PROFILE §9 `!task`), which come
//! in any phase.
//!
//! Must never: act on an event of a call that is not open (after its stop, or before the
//! next request: it is ignored), or write a delta that would complete a credential.

use std::borrow::Cow;
use std::time::Instant;

use crate::model::{Block, ModelEvent, StopReason, TaskStatus, Usage};
use agentx_wire::encode::DeltaGuard;
use agentx_wire::wire::api::{ApiBlock, ApiMessage, BlockDelta, StreamPayload};
use agentx_wire::wire::output::AssistantError;
use agentx_wire::wire::RawObject;

use super::{canonical_object, millis, End, OpenBlock, Phase, Task, ToolUse, Turn, UseState};
use crate::session::output::Pushed;
use crate::session::policy;
use crate::session::Session;

impl Session {
    /// One model event of the active turn.
    pub(crate) fn model_event(&mut self, event: ModelEvent, now: Instant) {
        let Some(mut t) = self.turn.take() else {
            return;
        };
        match event {
            ModelEvent::TaskStarted {
                task_id,
                description,
            } => self.task_started(&mut t, task_id, description),
            ModelEvent::TaskProgress { task_id, step } => self.task_progress(&t, &task_id, step),
            ModelEvent::TaskNotification { task_id, status } => {
                self.task_ended(&mut t, &task_id, status)
            }
            ModelEvent::Suggestion { text } => t.suggestion = Some(text),
            ModelEvent::Compact => self.compact(&mut t),
            // PROFILE §19: the summarization request's events.
            event if matches!(t.phase, Phase::Compacting(_)) => {
                self.summary_event(&mut t, event, now)
            }
            // An event of a call that is not open (after its stop): ignored.
            _ if !t.model_active() => {}
            event => self.call_event(&mut t, event, now),
        }
        let resend = std::mem::take(&mut t.resend);
        self.turn = Some(t);
        if resend {
            self.start_request(now);
        }
        self.advance(now);
    }

    /// An event of the open call.
    fn call_event(&mut self, t: &mut Turn, event: ModelEvent, now: Instant) {
        match event {
            ModelEvent::MessageStart { message_id } => self.message_start(t, message_id),
            ModelEvent::TextStart { index } => {
                self.open_block(t, index, OpenBlock::Text(String::new()))
            }
            ModelEvent::TextDelta { index, text } => {
                if let Some((_, OpenBlock::Text(s), guard)) = open_block_at(t, index) {
                    s.push_str(&text);
                    self.delta(index, Delta::Text, guard, &text);
                }
            }
            ModelEvent::ToolUseStart { index, id, name } => {
                let json = String::new();
                self.open_block(t, index, OpenBlock::Tool { id, name, json });
            }
            ModelEvent::InputJsonDelta {
                index,
                partial_json,
            } => {
                if let Some((_, OpenBlock::Tool { json, .. }, guard)) = open_block_at(t, index) {
                    json.push_str(&partial_json);
                    self.delta(index, Delta::InputJson, guard, &partial_json);
                }
            }
            ModelEvent::BlockStop { index } => self.block_stop(t, index),
            ModelEvent::MessageStop {
                stop_reason,
                usage,
                cost,
            } => self.message_stop(t, stop_reason, &usage, cost, now),
            ModelEvent::Failed { category, message } => self.call_failed(t, category, message, now),
            ModelEvent::ContextLengthExceeded { message } => {
                if t.context_retried {
                    // PROFILE §19: a second refusal ends the turn as §14 says.
                    self.call_failed(t, AssistantError::InvalidRequest, message, now);
                } else {
                    // PROFILE §19: compact once and retry that request (a retry is no new
                    // request: `num_turns` counts it once).
                    t.context_retried = true;
                    self.end_request(t, now);
                    t.requests = t.requests.saturating_sub(1);
                    t.force_compact = true;
                    t.compact_checked = false;
                    t.resend = true;
                }
            }
            ModelEvent::Cancelled => self.call_cancelled(t, now),
            ModelEvent::NetworkAccess { host, port } => self.network_access(t, &host, port, now),
            // Any phase's events: `model_event` handled them.
            ModelEvent::TaskStarted { .. }
            | ModelEvent::TaskProgress { .. }
            | ModelEvent::TaskNotification { .. }
            | ModelEvent::Suggestion { .. }
            | ModelEvent::Compact => {}
        }
    }

    fn message_start(&mut self, t: &mut Turn, message_id: String) {
        if self.config.include_partial_messages {
            let event = StreamPayload::MessageStart(ApiMessage::started(
                &message_id,
                &self.config.projection.init.model,
            ));
            let rec = self.stamp.stream_event(event);
            self.out.push_turn(&rec, false);
        }
        if let Some(r) = t.request_mut() {
            r.message_id = Some(message_id);
        }
    }

    /// A block begins (its `content_block_start`, the empty block): it streams until its stop.
    fn open_block(&mut self, t: &mut Turn, index: u32, block: OpenBlock) {
        let content_block = match &block {
            OpenBlock::Text(_) => ApiBlock::Text(Cow::Borrowed("")),
            OpenBlock::Tool { id, name, .. } => ApiBlock::ToolUse {
                id: Cow::Borrowed(id),
                name: Cow::Borrowed(name),
                input: RawObject::empty(),
            },
        };
        self.partial(StreamPayload::ContentBlockStart {
            index: u64::from(index),
            content_block,
        });
        let guard = match block {
            OpenBlock::Text(_) => DeltaGuard::text(),
            OpenBlock::Tool { .. } => DeltaGuard::json(),
        };
        if let Some(r) = t.request_mut() {
            r.open_blocks.push((index, block, guard));
        }
    }

    /// A block is complete: its held-back tail, `content_block_stop`, its `assistant` record.
    fn block_stop(&mut self, t: &mut Turn, index: u32) {
        let Some(r) = t.request_mut() else { return };
        let Some(pos) = r.open_blocks.iter().position(|(i, ..)| *i == index) else {
            return;
        };
        let (_, block, mut guard) = r.open_blocks.remove(pos);
        // The held-back tail completes nothing now that the block ended.
        if self.config.include_partial_messages {
            let tail = self.out.finish_delta(&mut guard);
            if !tail.is_empty() {
                let kind = match &block {
                    OpenBlock::Text(_) => Delta::Text,
                    OpenBlock::Tool { .. } => Delta::InputJson,
                };
                self.push_delta(index, kind, &tail);
            }
        }
        self.partial(StreamPayload::ContentBlockStop {
            index: u64::from(index),
        });
        self.block_done(t, block);
    }

    /// The call ended normally: usage and cost, then the final answer or its tool uses.
    fn message_stop(
        &mut self,
        t: &mut Turn,
        stop_reason: StopReason,
        usage: &Usage,
        cost: Option<f64>,
        now: Instant,
    ) {
        self.partial(StreamPayload::MessageDelta {
            stop_reason: Cow::Borrowed(stop_reason.as_str()),
            stop_sequence: None,
            output_tokens: usage.output_tokens,
        });
        self.partial(StreamPayload::MessageStop);
        self.end_request(t, now);
        t.context_retried = false;
        add_usage(&mut t.usage, usage);
        // PROFILE §19: the next estimate starts from what this request reported.
        let context_len = self.logical_len(&t.messages);
        self.note_usage(usage, context_len);
        match cost {
            Some(c) => {
                t.cost = t.cost.map(|total| total + c);
                // PROFILE §16: the budget counts from this process's start.
                self.spent_usd += c;
            }
            None => t.cost = None,
        }
        // The message's blocks are in `t.messages` already (one per written record).
        t.stop_reason = Some(stop_reason.as_str());
        if t.uses.is_empty() {
            t.phase = Phase::Ended(End::Answered);
        } else if stop_reason == StopReason::MaxTokens {
            // PROFILE §14: a truncated tool call is not run.
            for u in &mut t.uses {
                u.state = UseState::Done {
                    content: "tool call truncated at max_tokens".into(),
                    is_error: true,
                };
            }
        } else {
            self.evaluate_uses(t, now);
        }
    }

    /// The call observed the interrupt: the turn ends `cancelled`.
    pub(super) fn call_cancelled(&mut self, t: &mut Turn, now: Instant) {
        self.end_request(t, now);
        self.abandon_uses(t, "model call cancelled");
        t.errors.push("model call cancelled".into());
        t.phase = Phase::Ended(End::Failed);
        t.stop_reason = Some(StopReason::Cancelled.as_str());
        // PROFILE §19: with the operator's prices an unfinished request costs nothing;
        // without them its price is unknown (WIRE-012).
        if !self.config.projection.priced {
            t.cost = None;
        }
    }

    /// The call failed: one `assistant` record with the error category, and the turn's model
    /// work ends (`error_during_execution`).
    pub(super) fn call_failed(
        &mut self,
        t: &mut Turn,
        category: AssistantError,
        message: Option<String>,
        now: Instant,
    ) {
        let model = self.config.projection.init.model.clone();
        // PROFILE §14: the provider's message is quoted only when it holds no
        // credential material; otherwise it is dropped and the record written without it.
        let message = message.filter(|m| !self.out.holds_credential(m));
        let plain = format!("model error: {}", category.as_str());
        let mut text = message.unwrap_or_else(|| plain.clone());
        let message_id = t
            .request_mut()
            .and_then(|r| r.message_id.clone())
            .unwrap_or_else(|| format!("msg_error_{}_{}", t.id, t.requests));
        let failure = |s: &mut Self, text: &str| {
            let block = Block::Text(text.to_string());
            let (uuid, rec) = s
                .stamp
                .assistant(&model, &message_id, &block, Some(category));
            (uuid, s.out.push(&rec, true))
        };
        let (mut uuid, mut pushed) = failure(self, &text);
        if pushed == Pushed::TooLarge {
            // The provider's message made the record too long for one line: it is
            // written without the message (the category stays visible), and the turn
            // ends with the output error.
            self.out.refuse_turn_record();
            text = plain;
            (uuid, pushed) = failure(self, &text);
        }
        if pushed == Pushed::Written {
            t.last_assistant = Some(uuid.as_str().to_string());
            t.record_assistant(&message_id, Block::Text(text.clone()));
        }
        self.end_request(t, now);
        self.abandon_uses(t, "model call failed");
        t.errors.push(text);
        t.phase = Phase::Ended(End::Failed);
        t.stop_reason = None;
        // WIRE-012: a call that failed reported no price; with the operator's prices it costs
        // nothing (PROFILE §19).
        if !self.config.projection.priced {
            t.cost = None;
        }
    }

    /// The open call is over: its API time is counted and no call is open.
    pub(super) fn end_request(&mut self, t: &mut Turn, now: Instant) {
        let started = match &t.phase {
            Phase::Streaming(r) => r.started,
            Phase::Compacting(s) => s.started,
            _ => return,
        };
        t.api_ms += millis(started, now);
        t.phase = Phase::Between;
    }

    /// A complete block: one `assistant` record (PROFILE §8), and a tool use to evaluate.
    fn block_done(&mut self, t: &mut Turn, block: OpenBlock) {
        let model = self.config.projection.init.model.clone();
        let (turn, requests) = (t.id, t.requests);
        let Some(r) = t.request_mut() else { return };
        let message_id = r
            .message_id
            .get_or_insert_with(|| format!("msg_{turn}_{requests}"))
            .clone();
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
                tool_use_result: Vec::new(),
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

    /// `!task` started. Not written (too large for a line, or the output failed): the host
    /// never saw the task start, so it is not tracked and gets no later event; the turn ends
    /// after this step.
    fn task_started(&mut self, t: &mut Turn, task_id: String, description: String) {
        let rec = self.stamp.task_started(&task_id, &description);
        if self.out.push_turn(&rec, false) {
            t.tasks.push(Task {
                id: task_id,
                description,
                done: false,
            });
        }
    }

    fn task_progress(&mut self, t: &Turn, task_id: &str, step: u32) {
        if let Some(task) = t.tasks.iter().find(|k| k.id == task_id && !k.done) {
            let rec = self.stamp.task_progress(&task.id, &task.description, step);
            self.out.push_turn(&rec, false);
        }
    }

    fn task_ended(&mut self, t: &mut Turn, task_id: &str, status: TaskStatus) {
        if let Some(task) = t.tasks.iter_mut().find(|k| k.id == task_id && !k.done) {
            task.done = true;
            let task_id = task.id.clone();
            self.push_task_notification(&task_id, status);
        }
    }

    /// A delta through the block's delta stream (PROFILE §8): what could start a credential
    /// is held back, a delta that would complete one is never written and ends the turn with
    /// the output error (an `input_json_delta` is checked with the joined fragments' JSON
    /// strings decoded).
    fn delta(&mut self, index: u32, kind: Delta, guard: &mut DeltaGuard, piece: &str) {
        if !self.config.include_partial_messages {
            return;
        }
        match self.out.guard_delta(guard, piece) {
            // Everything held back (an empty delta is still written, as the model sent it).
            Some(now) if now.is_empty() && !piece.is_empty() => {}
            Some(now) => self.push_delta(index, kind, &now),
            None => self.out.refuse_turn_credential(),
        }
    }

    fn push_delta(&mut self, index: u32, kind: Delta, piece: &str) {
        let piece = Cow::Borrowed(piece);
        self.partial(StreamPayload::ContentBlockDelta {
            index: u64::from(index),
            delta: match kind {
                Delta::Text => BlockDelta::Text(piece),
                Delta::InputJson => BlockDelta::InputJson(piece),
            },
        });
    }

    /// One `stream_event` (partial messages on), typed: it borrows what it carries until the
    /// encoder writes it into its frame.
    fn partial(&mut self, event: StreamPayload<'_>) {
        if self.config.include_partial_messages {
            let rec = self.stamp.stream_event(event);
            self.out.push_turn(&rec, false);
        }
    }
}

/// The delta a block streams: `text_delta` or `input_json_delta`.
#[derive(Clone, Copy)]
enum Delta {
    Text,
    InputJson,
}

/// The open block at `index` of the open call.
fn open_block_at(t: &mut Turn, index: u32) -> Option<&mut (u32, OpenBlock, DeltaGuard)> {
    t.request_mut()?
        .open_blocks
        .iter_mut()
        .find(|(i, ..)| *i == index)
}

pub(super) fn add_usage(total: &mut Usage, u: &Usage) {
    total.input_tokens += u.input_tokens;
    total.output_tokens += u.output_tokens;
    total.cache_read_input_tokens += u.cache_read_input_tokens;
    total.cache_creation_input_tokens += u.cache_creation_input_tokens;
}
