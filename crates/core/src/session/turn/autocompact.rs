//! PROFILE §19's compaction as a step of the turn: before a model request whose estimate is
//! over the threshold (or that the provider refused as too long), and for the `/compact`
//! command. The step is `system/status` `compacting`, a summarization request to the same
//! provider (asked of the driver like any model output: [`Action::StartModel`] with no tools,
//! the conversation before the preserved segment and [`Message::summary_request`]), then
//! `system/compact_boundary` with the model's summary, `system/status` null, and the request
//! goes on.
//!
//! The preserved segment is the last assistant message with its tool results and the user
//! prompt it answered (contiguous from that prompt, so every `tool_use` keeps its
//! `tool_result`). The new context is the summary, the segment, then a prompt that started
//! the turn and triggered the compaction, whose transcript line moves after the boundary so
//! that a resume rebuilds the same context (PROFILE §11, `transcript::context`).
//!
//! Must never: change the context before the boundary is written (a failed or interrupted
//! summarization leaves it as it was), compact twice for one request, or count the
//! summarization request in `num_turns` or `--max-turns`.

use std::sync::Arc;
use std::time::Instant;

use agentx_wire::wire::output::AssistantError;
use agentx_wire::wire::sdk_hooks::HookEvent;
use agentx_wire::wire::system::CompactTrigger;

use super::stream::add_usage;
use super::{End, Exchange, Limit, Phase, Turn};
use crate::model::{Message, ModelEvent, ModelRequest};
use crate::session::sdk_hooks::{member_raw, member_str, Combined, Target};
use crate::session::{Action, Session};

/// The default threshold: compact when the estimate is over 90 % of the window.
pub const DEFAULT_AUTOCOMPACT_PCT: u8 = 90;

/// `AGENTX_AUTOCOMPACT_PCT` (PROFILE §19): an integer from 50 to 98; unset is the default.
/// The error is the startup diagnostic (it names the variable, never its value).
pub fn autocompact_pct(value: Option<&str>) -> Result<u8, String> {
    match value {
        None => Ok(DEFAULT_AUTOCOMPACT_PCT),
        Some(v) => match v.parse::<u8>() {
            Ok(p) if (50..=98).contains(&p) && !v.starts_with('+') => Ok(p),
            _ => Err("AGENTX_AUTOCOMPACT_PCT must be an integer from 50 to 98".to_string()),
        },
    }
}

/// PROFILE §19 `/compact`: the command's instructions (`None`: none given).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Command {
    pub(crate) instructions: Option<String>,
}

/// `/compact` or `/compact INSTRUCTIONS` with surrounding whitespace removed.
pub(crate) fn compact_command(text: &str) -> Option<Command> {
    let t = text.trim();
    let rest = t.strip_prefix("/compact")?;
    if rest.is_empty() {
        return Some(Command { instructions: None });
    }
    let instructions = rest.strip_prefix(|c: char| c.is_whitespace())?.trim();
    Some(Command {
        instructions: (!instructions.is_empty()).then(|| instructions.to_string()),
    })
}

/// A compaction waiting for its `PreCompact` hooks.
#[derive(Debug)]
pub(crate) struct Pending {
    trigger: CompactTrigger,
    pre_tokens: u64,
    segment: Segment,
    instructions: Option<String>,
}

/// The open summarization request of a compaction.
#[derive(Debug)]
pub(crate) struct Summary {
    pub(super) started: Instant,
    trigger: CompactTrigger,
    pre_tokens: u64,
    segment: Segment,
    /// The model's text so far.
    text: String,
}

/// Where the preserved segment is in the context the next request would send, and the UUIDs
/// of its head (a prompt record) and tail (the last assistant record).
#[derive(Clone, Debug)]
struct Segment {
    head: usize,
    end: usize,
    head_uuid: String,
    tail_uuid: String,
    /// The segment is this turn's own exchange (a compaction in the middle of a tool loop);
    /// otherwise it is the last exchange of the finished turns and this turn's prompt follows.
    in_turn: bool,
}

impl Session {
    /// PROFILE §19: the active turn's next request compacts first (once per request).
    pub(super) fn compaction_due(&mut self) -> bool {
        let Some(t) = self.turn.as_ref() else {
            return false;
        };
        if t.compact_checked {
            return false;
        }
        if t.force_compact {
            return true;
        }
        let Some(window) = self.config.projection.context_window else {
            return false;
        };
        let total = self.estimate_with(&t.messages).total();
        // Greater than PCT % of the window: `total / window > pct / 100`.
        u128::from(total) * 100 > u128::from(window) * u128::from(self.config.autocompact_pct)
    }

    /// The preserved segment for a compaction now, if anything precedes it.
    fn segment(&self, t: &Turn) -> Option<Segment> {
        let base = self.history_len;
        let in_turn = (!t.compacted)
            .then_some(())
            .and_then(|()| {
                t.messages
                    .iter()
                    .rposition(|m| matches!(m, Message::Assistant { .. }))
            })
            .and_then(|a| {
                Some((
                    a,
                    t.prompt_record.clone()?,
                    t.last_assistant.clone()?,
                    matches!(t.messages.first(), Some(Message::User { .. })),
                ))
            });
        let segment = match in_turn {
            Some((a, head_uuid, tail_uuid, true)) => {
                let results = t.messages[a + 1..]
                    .iter()
                    .take_while(|m| matches!(m, Message::ToolResult { .. }))
                    .count();
                Segment {
                    head: base,
                    end: base + a + 1 + results,
                    head_uuid,
                    tail_uuid,
                    in_turn: true,
                }
            }
            Some((_, _, _, false)) => return None,
            None if t
                .messages
                .iter()
                .any(|m| matches!(m, Message::Assistant { .. })) =>
            {
                return None
            }
            None => {
                let e = self.last_exchange.as_ref()?;
                Segment {
                    head: e.first,
                    end: e.last + 1,
                    head_uuid: e.head.clone(),
                    tail_uuid: e.tail.clone(),
                    in_turn: false,
                }
            }
        };
        (segment.head > 0 && segment.end <= self.logical_len(&t.messages)).then_some(segment)
    }

    /// Starts a compaction of the active turn: `status` compacting, the `PreCompact` hooks
    /// (SDK profile), then the summarization request. `false` when there is nothing to
    /// compact (nothing precedes the segment); then nothing was written and the caller goes on.
    pub(super) fn begin_compaction(&mut self, instructions: Option<&str>, now: Instant) -> bool {
        let Some(mut t) = self.turn.take() else {
            return false;
        };
        t.compact_checked = true;
        let trigger = match t.command {
            Some(_) => CompactTrigger::Manual,
            None => CompactTrigger::Auto,
        };
        let Some(segment) = self.segment(&t) else {
            self.turn = Some(t);
            return false;
        };
        let pre_tokens = self.estimate_with(&t.messages).total();
        let rec = self.stamp.status(Some("compacting"));
        self.out.push_turn(&rec, false);
        let pending = Pending {
            trigger,
            pre_tokens,
            segment,
            instructions: instructions.map(str::to_string),
        };
        let trigger_name = trigger.as_str();
        if self
            .sdk_hooks
            .wants(HookEvent::PreCompact, Some(trigger_name))
        {
            // PROFILE §19 step 2: the SDK's PreCompact hooks, awaited as §16 awaits hooks.
            let mut extra = Vec::with_capacity(64);
            member_str(&mut extra, "trigger", trigger_name);
            match instructions {
                Some(i) => member_str(&mut extra, "custom_instructions", i),
                None => member_raw(&mut extra, "custom_instructions", "null"),
            }
            let turn = t.id;
            t.phase = Phase::PreCompact(pending);
            self.turn = Some(t);
            let started = self.start_hook_run(
                turn,
                Target::Compact,
                HookEvent::PreCompact,
                Some(trigger_name),
                &extra,
                now,
            );
            if let Some(c) = started {
                self.pre_compact_applied(c, now);
            }
            return true;
        }
        self.send_summary(&mut t, pending, now);
        self.turn = Some(t);
        true
    }

    /// PROFILE §19: the `PreCompact` callbacks answered. `continue: false` ends the turn as
    /// §16 says; anything else (a failure included) is no decision: the summary is asked for.
    pub(crate) fn pre_compact_applied(&mut self, c: Combined, now: Instant) {
        let Some(mut t) = self.turn.take() else {
            return;
        };
        let Phase::PreCompact(pending) = std::mem::replace(&mut t.phase, Phase::Between) else {
            self.turn = Some(t);
            return;
        };
        t.hooks.halt_with(c.halt);
        if t.take_halt() {
            self.status_done();
            self.turn = Some(t);
            self.advance(now);
            return;
        }
        self.send_summary(&mut t, pending, now);
        self.turn = Some(t);
    }

    /// Step 3: the summarization request, asked of the driver like any model output.
    fn send_summary(&mut self, t: &mut Turn, p: Pending, now: Instant) {
        // The conversation before the segment, then the request for a summary; no tools.
        let unsent = t.messages.get(self.context_turn..).unwrap_or_default();
        let mut messages: Vec<Message> = self
            .context
            .iter()
            .chain(unsent)
            .take(p.segment.head)
            .cloned()
            .collect();
        messages.push(Message::summary_request(p.instructions.as_deref()));
        self.actions.push_back(Action::StartModel(ModelRequest {
            turn: t.id,
            index: t.requests,
            model: self.config.projection.init.model.clone(),
            effort: self.config.projection.effort.clone(),
            messages: Arc::new(messages),
            tools: Vec::new(),
            system: self.system_message(),
            output_schema: None,
        }));
        t.phase = Phase::Compacting(Summary {
            started: now,
            trigger: p.trigger,
            pre_tokens: p.pre_tokens,
            segment: p.segment,
            text: String::new(),
        });
    }

    /// One event of the summarization request.
    pub(super) fn summary_event(&mut self, t: &mut Turn, event: ModelEvent, now: Instant) {
        match event {
            ModelEvent::TextDelta { text, .. } => {
                if let Phase::Compacting(s) = &mut t.phase {
                    s.text.push_str(&text);
                }
            }
            ModelEvent::MessageStop { usage, cost, .. } => {
                // Its cost counts toward the turn and the budget (PROFILE §19).
                add_usage(&mut t.usage, &usage);
                match cost {
                    Some(c) => {
                        t.cost = t.cost.map(|total| total + c);
                        self.spent_usd += c;
                    }
                    None => t.cost = None,
                }
                let Phase::Compacting(s) = std::mem::replace(&mut t.phase, Phase::Between) else {
                    return;
                };
                t.api_ms += super::millis(s.started, now);
                self.finish_compaction(t, s);
            }
            ModelEvent::Failed { category, message } => {
                self.status_done();
                self.call_failed(t, category, message, now);
            }
            ModelEvent::ContextLengthExceeded { message } => {
                self.status_done();
                self.call_failed(t, AssistantError::InvalidRequest, message, now);
            }
            ModelEvent::Cancelled => {
                self.status_done();
                self.call_cancelled(t, now);
            }
            _ => {}
        }
    }

    /// `system/status` null: the compaction is over.
    pub(crate) fn status_done(&mut self) {
        let rec = self.stamp.status(None);
        self.out.push_turn(&rec, false);
    }

    /// The summary is in: the boundary, the new context, `status` null, and what follows (the
    /// request, or `/compact`'s result).
    fn finish_compaction(&mut self, t: &mut Turn, s: Summary) {
        let uuid = self.stamp.uuid();
        let seg = s.segment.clone();
        let rec = self.stamp.compact_boundary(
            uuid.clone(),
            s.pre_tokens,
            Some((
                seg.head_uuid.clone(),
                uuid.as_str().to_string(),
                seg.tail_uuid.clone(),
            )),
            s.trigger,
            Some(s.text.clone()),
        );
        let written = self.out.push_turn(&rec, true);
        if written {
            let unsent = t.messages.get(self.context_turn..).unwrap_or_default();
            let kept: Vec<Message> = self
                .context
                .iter()
                .chain(unsent)
                .skip(seg.head)
                .take(seg.end - seg.head)
                .cloned()
                .collect();
            let mut context = Vec::with_capacity(1 + kept.len());
            context.push(Message::user(s.text.clone()));
            let last = kept.len();
            context.extend(kept);
            self.history_len = context.len();
            self.context = Arc::new(context);
            self.context_turn = 0;
            self.last_exchange = Some(Exchange {
                head: seg.head_uuid,
                tail: seg.tail_uuid,
                first: 1,
                last,
            });
            if seg.in_turn {
                // The turn's messages are in the segment (or summarized).
                t.messages.clear();
                t.compacted = true;
            } else if let Some(at) = t.prompt_line {
                // The prompt comes after the boundary, in the context and in the store.
                self.out.move_kept_to_end(at);
                t.prompt_line = self.out.kept().checked_sub(1);
            }
            // The estimate restarts from the whole request.
            self.report = None;
        }
        self.status_done();
        if t.command.is_some() {
            // PROFILE §19: `/compact`'s result (post: the estimate after).
            let post = self.estimate_with(&t.messages).total();
            t.last_text = format!("compacted: {} -> {post} tokens", s.pre_tokens);
            t.phase = Phase::Ended(End::Halted);
            return;
        }
        if self.budget_reached() {
            // The summary's cost reached the budget: no further request starts.
            t.phase = Phase::Ended(End::Limit(Limit::Budget));
            return;
        }
        t.resend = true;
    }
}
