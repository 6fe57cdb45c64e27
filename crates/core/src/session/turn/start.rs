//! The start of a turn and of each of its model requests: `system/init` once per session,
//! the prompt into the turn's messages (PROFILE §11 "Order is context order"), `running`,
//! PROFILE §16's `UserPromptSubmit` before the first request, and PROFILE §15's limits on
//! every request (`--max-turns`, `--max-budget-usd`).
//!
//! Must never: start a request that a limit forbids, or copy the whole context per request
//! (only the messages new since the last one are appended to the shared context).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use crate::model::{Message, ModelRequest, Usage, UserBlock};
use agentx_wire::wire::system::SessionState;
use agentx_wire::wire::system_init::{InitEvent, InputCapabilities};
use agentx_wire::wire::user::{ContentBlock, UserContent, UserMessage};
use agentx_wire::wire::{OutputRecord, SystemEvent, UserRecord};

use super::{End, Limit, Phase, Request, Turn};
use crate::session::queue::Queued;
use crate::session::{Action, Session};

/// The prompt's text blocks joined with `\n`, and its attachments (PROFILE §9).
pub(crate) fn prompt_of(user: &UserRecord<'_>) -> Message {
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
        // PROFILE §8: replayed records that waited join the context before this prompt.
        self.join_replayed();
        let id = self.next_turn;
        self.next_turn += 1;
        let prompt = prompt_of(&q.record);
        // PROFILE §19: `/compact [instructions]` is a command: not a message, not stored.
        let command = match &prompt {
            Message::User {
                text, attachments, ..
            } if attachments.is_empty() => super::autocompact::compact_command(text),
            _ => None,
        };
        let line = if command.is_some() { None } else { q.line };
        // PROFILE §11 "Order is context order": the prompt is stored where it enters the
        // model's context, at the start of its own turn.
        let kept_at = line.map(|line| {
            let at = self.out.kept();
            self.out.keep(line);
            at
        });
        let has_attachments =
            matches!(&prompt, Message::User { attachments, .. } if !attachments.is_empty());
        let prompt_uuid = has_attachments.then(|| q.record.uuid.clone()).flatten();
        self.turn = Some(Box::new(Turn {
            id,
            started: now,
            prompt_uuid,
            phase: Phase::Between,
            requests: 0,
            api_ms: 0,
            uses: Vec::new(),
            usage: Usage::default(),
            cost: Some(0.0),
            denials: Vec::new(),
            tasks: Vec::new(),
            suggestion: None,
            last_text: String::new(),
            errors: Vec::new(),
            stop_reason: None,
            network: None,
            network_count: 0,
            messages: if command.is_some() {
                Vec::new()
            } else {
                vec![prompt]
            },
            prompt_record: q.record.uuid.as_ref().map(|u| u.as_str().to_string()),
            prompt_uuid_given: q.uuid_given,
            // PROFILE §16: a UserPromptSubmit context is stored with its prompt; the record
            // is not needed otherwise, so it moves here (no copy).
            prompt_kept: kept_at
                .filter(|_| {
                    self.sdk_hooks.wants(
                        agentx_wire::wire::sdk_hooks::HookEvent::UserPromptSubmit,
                        None,
                    )
                })
                .map(|at| (Box::new(q.record), at)),
            last_assistant: None,
            compacted: false,
            hooks: Default::default(),
            answer: String::new(),
            structured_attempts: 0,
            structured_error: None,
            compact_checked: false,
            force_compact: false,
            context_retried: false,
            resend: false,
            prompt_line: kept_at,
            command: command.clone(),
        }));
        self.publish(SessionState::Running);
        if self.budget_reached() {
            // PROFILE §15: once the budget is reached, a turn ends without a model request
            // (`num_turns` 0).
            if let Some(t) = self.turn.as_mut() {
                t.end_work(End::Limit(Limit::Budget));
            }
            self.advance(now);
            return;
        }
        if let Some(c) = command {
            // PROFILE §19: the command compacts, then ends the turn with its result.
            if !self.begin_compaction(c.instructions.as_deref(), now) {
                if let Some(t) = self.turn.as_mut() {
                    t.last_text = "nothing to compact".to_string();
                    t.end_work(End::Halted);
                }
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
    pub(super) fn budget_reached(&self) -> bool {
        self.config
            .limits
            .max_budget
            .as_ref()
            .is_some_and(|b| self.spent_usd >= b.usd)
    }

    /// The limit that forbids the active turn's next model request, if any (PROFILE §15):
    /// `--max-turns` first (it counts this turn's requests), then the budget.
    pub(super) fn next_request_limit(&self, t: &Turn) -> Option<Limit> {
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
            claude_code_version: Some(if c.profile == crate::session::Profile::Sdk {
                Cow::Borrowed(crate::session::CLAUDE_CODE_VERSION)
            } else {
                Cow::Owned(c.version.clone())
            }),
            agentx_version: (c.profile == crate::session::Profile::Sdk)
                .then(|| Cow::Owned(c.version.clone())),
            cwd: Cow::Owned(c.cwd.clone()),
            tools: c.tools.iter().map(|t| Cow::Owned(t.name.clone())).collect(),
            mcp_servers: self
                .mcp
                .statuses()
                .map(
                    |(name, status)| agentx_wire::wire::system_init::McpServerStatus {
                        name: Cow::Owned(name.to_string()),
                        status: Cow::Borrowed(status),
                        config: None,
                        server_info: None,
                        error: None,
                        tools: None,
                    },
                )
                .collect(),
            model: Cow::Owned(p.model.clone()),
            provider: Some(Cow::Owned(p.provider.clone())),
            provider_type: Some(Cow::Borrowed(p.provider_type.as_str())),
            reasoning_capabilities: Some(p.reasoning_capabilities.clone()),
            permission_mode: Cow::Borrowed(c.permission_mode.as_str()),
            slash_commands: Some(vec![Cow::Borrowed("compact")]),
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

    /// PROFILE §18: the held first model request of the active turn goes once no enabled
    /// user server is pending, or their connect timeout passed.
    pub(crate) fn mcp_release_request(&mut self, now: Instant) {
        let Some(turn) = self.mcp.held_request else {
            return;
        };
        if self.mcp.connecting(now) {
            return;
        }
        self.mcp.held_request = None;
        let waiting = self
            .turn
            .as_ref()
            .is_some_and(|t| t.id == turn && t.requests == 0 && matches!(t.phase, Phase::Between));
        if waiting {
            self.start_request(now);
        }
    }

    /// Queues the next model call of the active turn; PROFILE §19: when the estimate is over
    /// the threshold (or the last answer said the context is too long), a compaction first.
    pub(crate) fn start_request(&mut self, now: Instant) {
        // PROFILE §18: the first model request of a turn waits until every enabled user
        // server settled, at most the connect timeout (`mcp_release_request`).
        if let Some(t) = self.turn.as_ref() {
            if t.requests == 0 && self.mcp.connecting(now) {
                self.mcp.held_request = Some(t.id);
                return;
            }
        }
        if self.compaction_due() && self.begin_compaction(None, now) {
            return;
        }
        let Some(t) = self.turn.as_mut() else { return };
        t.compact_checked = false;
        t.force_compact = false;
        t.phase = Phase::Streaming(Request {
            started: now,
            message_id: None,
            open_blocks: Vec::new(),
        });
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
}
