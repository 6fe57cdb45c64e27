//! Where a turn calls the SDK hooks (PROFILE §16) and what their combined answers do to it:
//! `UserPromptSubmit` before the first model request (block: the input-error result;
//! `additionalContext` appended to the prompt the model sees), `PreToolUse` before §10's
//! evaluation (deny/block denies, `updatedInput` replaces the input, allow skips the ask,
//! ask forces it, defer or nothing lets the evaluation go on), `PostToolUse` after the tool and
//! before its `tool_result` (contexts as text blocks after the output, block replaces the
//! output and marks it `is_error`), `Stop` after the last model request and before the result
//! (block: one more model request with the reason as a user message, at most once per turn),
//! and `continue: false` for any of them (no next model request; a success result whose text
//! is `stopReason`).
//!
//! The three deciders of a tool use, in order (ARCHITECTURE.md "The permission race"): the SDK
//! `PreToolUse` callbacks finish first; only then §10's evaluation runs, and an ask starts the
//! race of the `settings.json` hook and the host's `can_use_tool` together.
//!
//! Must never: start a model request, a tool or a permission prompt while a hook of that step
//! is pending; let a failed callback allow anything.

use std::time::Instant;

use crate::model::Message;
use agentx_wire::wire::grammar::Uuid;
use agentx_wire::wire::sdk_hooks::HookEvent;
use agentx_wire::wire::RawJson;

use super::{Turn, UseState};
use crate::session::output::Pushed;
use crate::session::policy::Verdict;
use crate::session::sdk_hooks::{
    member_raw, member_str, post_tool_response, Combined, PrePermission, Target,
};
use crate::session::Session;

/// The hook state of one turn.
#[derive(Debug, Default)]
pub(crate) struct TurnHooks {
    /// `continue: false` seen: the `stopReason` the turn ends with before its next request
    /// (taken, it ends the turn's model work: [`Turn::take_halt`]).
    halt: Option<String>,
    /// The model request count when `Stop` last ran (it runs once per last request).
    stop_checked_at: Option<u32>,
    /// `Stop` blocked once in this turn (a second block is ignored).
    stop_blocked: bool,
}

impl TurnHooks {
    /// Keeps the first `continue: false` of the turn.
    pub(crate) fn halt_with(&mut self, halt: Option<String>) {
        if self.halt.is_none() {
            self.halt = halt;
        }
    }

    /// A pending `continue: false`: its `stopReason`, the result text.
    pub(crate) fn take_halt(&mut self) -> Option<String> {
        self.halt.take()
    }
}

/// PROFILE §16: a `PreToolUse` `allow` skips §10's ask and `ask` forces it; a §10 denial or
/// invalid input stands either way.
pub(crate) fn pre_verdict(permission: Option<PrePermission>, verdict: Verdict) -> Verdict {
    match (permission, verdict) {
        (Some(PrePermission::Allow), Verdict::Ask) => Verdict::Allow,
        (Some(PrePermission::Ask), Verdict::Allow) => Verdict::Ask,
        (_, v) => v,
    }
}

/// The event fields of a tool use: `tool_name`, `tool_input`, `tool_use_id`.
fn tool_fields(name: &str, input: &str, id: &str) -> Vec<u8> {
    let mut extra = Vec::with_capacity(64 + input.len());
    member_str(&mut extra, "tool_name", name);
    member_raw(&mut extra, "tool_input", input);
    member_str(&mut extra, "tool_use_id", id);
    extra
}

/// The stderr line for hook text the store must not keep (it holds credential material).
const NOT_STORED_CREDENTIAL: &str =
    "agentx: a hook's text for the model holds credential material and is not stored: a resume will not see it";

/// A prompt record with UserPromptSubmit contexts appended as the model sees them: a string
/// prompt gets `\n` and each context; a prompt of blocks gets one text block per context
/// (joined with `\n` like its other text blocks, `Message::user_blocks`).
fn with_contexts(rec: &mut agentx_wire::wire::UserRecord<'static>, contexts: &[String]) {
    use agentx_wire::wire::user::{ContentBlock, UserContent, UserMessage};
    use agentx_wire::wire::Text;
    let append = |t: &mut Text<'static>| {
        let mut s = t.to_string();
        for ctx in contexts {
            s.push('\n');
            s.push_str(ctx);
        }
        *t = Text::Owned(s);
    };
    match &mut rec.message {
        UserMessage::Plain(t)
        | UserMessage::Object {
            content: UserContent::Text(t),
            ..
        } => append(t),
        UserMessage::Object {
            content: UserContent::Blocks(blocks),
            ..
        } => blocks.extend(
            contexts
                .iter()
                .map(|c| ContentBlock::Text(Text::Owned(c.clone()))),
        ),
    }
}

impl Session {
    /// Keeps `text`, a hook's words the model gets as a user message (a Stop block's
    /// reason), in the transcript as a plain user record that stdout never sees; cut with the
    /// output-cut marker when that record would not fit one line. Returns what the model gets:
    /// the text stored. A text holding credential material is never stored (the store keeps
    /// no credential): the model gets it whole and a stderr line says a resume will not.
    fn keep_hook_text(&mut self, text: String) -> String {
        if self.out.holds_credential(&text) {
            self.out.diagnostic(NOT_STORED_CREDENTIAL.into());
            return text;
        }
        let limit = self.config.max_record_len;
        let (out, stamp) = (&mut self.out, &mut self.stamp);
        let text = crate::session::fit::cut_to_fit(&text, |t| {
            out.encoded_len(&crate::session::structured::corrective_record(t, stamp))
                .saturating_sub(limit)
        });
        let rec = crate::session::structured::corrective_record(&text, &mut self.stamp);
        if let Some(line) = self.out.encode_prompt(&rec, false) {
            self.out.keep(line);
        }
        text
    }

    /// PROFILE §16 `PreToolUse` for use `i` of the turn: `Some` when it is decided already
    /// (no callback, or all failed at once), `None` while a callback is pending.
    pub(crate) fn pre_tool_use(&mut self, t: &Turn, i: usize, now: Instant) -> Option<Combined> {
        let u = &t.uses[i];
        if !self.sdk_hooks.wants(HookEvent::PreToolUse, Some(&u.name)) {
            return Some(Combined::default());
        }
        let extra = tool_fields(&u.name, &u.input, &u.id);
        let (turn, id, name) = (t.id, u.id.clone(), u.name.clone());
        self.start_hook_run(
            turn,
            Target::Pre(id),
            HookEvent::PreToolUse,
            Some(&name),
            &extra,
            now,
        )
    }

    /// PROFILE §16 `PostToolUse` for a use whose tool just finished (its state `PostHook`).
    pub(crate) fn post_tool_use(&mut self, tool_use_id: &str, now: Instant) {
        let Some(t) = self.turn.as_ref() else { return };
        let Some(u) = t.uses.iter().find(|u| u.id == tool_use_id) else {
            return;
        };
        let UseState::PostHook { content, .. } = &u.state else {
            return;
        };
        let combined = if self.sdk_hooks.wants(HookEvent::PostToolUse, Some(&u.name)) {
            let mut extra = tool_fields(&u.name, &u.input, &u.id);
            // PROFILE §15: an output too large for the callback's line reaches the hook cut
            // with the tool_result's marker, so the request is written and the turn goes on.
            let response = post_tool_response(self, &u.name, &u.id, &extra, content);
            member_str(&mut extra, "tool_response", &response);
            let (turn, name) = (t.id, u.name.clone());
            self.start_hook_run(
                turn,
                Target::Post(tool_use_id.to_string()),
                HookEvent::PostToolUse,
                Some(&name),
                &extra,
                now,
            )
        } else {
            Some(Combined::default())
        };
        if let Some(c) = combined {
            self.post_applied(tool_use_id, c);
        }
    }

    fn post_applied(&mut self, tool_use_id: &str, c: Combined) {
        let Some(t) = self.turn.as_mut() else { return };
        t.hooks.halt_with(c.halt);
        let Some(u) = t.uses.iter_mut().find(|u| u.id == tool_use_id) else {
            return;
        };
        let UseState::PostHook { content, is_error } =
            std::mem::replace(&mut u.state, UseState::Pending)
        else {
            return;
        };
        u.state = match c.block {
            // PROFILE §16: `decision: block` replaces the output with the reason, `is_error`;
            // the tool's structured result no longer describes it.
            Some(reason) => {
                u.tool_use_result.clear();
                UseState::Done {
                    content: reason,
                    is_error: true,
                }
            }
            None => {
                u.contexts = c.contexts;
                UseState::Done { content, is_error }
            }
        };
    }

    /// PROFILE §16 `UserPromptSubmit` at the start of the active turn: `true` when the turn
    /// waits for it or it already ended the turn; `false`: make the first model request.
    pub(crate) fn user_prompt_submit(&mut self, now: Instant) -> bool {
        if !self.sdk_hooks.wants(HookEvent::UserPromptSubmit, None) {
            return false;
        }
        let Some(t) = self.turn.as_ref() else {
            return false;
        };
        let prompt = match t.messages.first() {
            Some(Message::User { text, .. }) => text.clone(),
            _ => String::new(),
        };
        let mut extra = Vec::with_capacity(16 + prompt.len());
        member_str(&mut extra, "prompt", &prompt);
        let turn = t.id;
        let started = self.start_hook_run(
            turn,
            Target::Prompt,
            HookEvent::UserPromptSubmit,
            None,
            &extra,
            now,
        );
        if let Some(c) = started {
            self.prompt_applied(c, now);
        }
        true
    }

    fn prompt_applied(&mut self, c: Combined, now: Instant) {
        let Some(mut t) = self.turn.take() else {
            return;
        };
        if let Some(reason) = c.block {
            // PROFILE §16: the input-error result (§8's shape: `prompt_uuid` only when the
            // host's record had a `uuid`), and the turn ends.
            let reason = if reason.is_empty() {
                "no reason given".to_string()
            } else {
                reason
            };
            let fields = crate::session::input::input_error_fields(
                &format!("blocked by UserPromptSubmit hook: {reason}"),
                t.prompt_record
                    .clone()
                    .filter(|_| t.prompt_uuid_given)
                    .and_then(Uuid::new),
            );
            self.close_turn(t, fields, false);
            return;
        }
        // PROFILE §16: each context appended to the prompt the model sees, in order; the
        // stored prompt gets them too (PROFILE §11: a resumed context is exactly the live
        // one), and the model's message is built from that record as a resume builds it.
        let credential = c.contexts.iter().any(|ctx| self.out.holds_credential(ctx));
        if credential {
            // Never stored (the store keeps no credential); the model still gets it.
            self.out.diagnostic(NOT_STORED_CREDENTIAL.into());
        }
        let stored = match t.prompt_kept.take() {
            Some((mut rec, at)) if !c.contexts.is_empty() && !credential => {
                with_contexts(&mut rec, &c.contexts);
                let message = super::prompt_of(&rec);
                match self
                    .out
                    .encode_prompt(&agentx_wire::wire::OutputRecord::User(*rec), false)
                {
                    Some(line) => {
                        self.out.rekeep(at, line);
                        if let Some(first) = t.messages.first_mut() {
                            *first = message;
                        }
                        true
                    }
                    None => {
                        // Said, never silent (over the output line limit with its prompt).
                        self.out.diagnostic(
                            "agentx: a UserPromptSubmit context could not be stored with its \
                             prompt (over the output line limit): a resume will not see it"
                                .into(),
                        );
                        false
                    }
                }
            }
            _ => false,
        };
        if !stored {
            if let Some(Message::User { text, layout, .. }) = t.messages.first_mut() {
                for ctx in &c.contexts {
                    text.push('\n');
                    text.push_str(ctx);
                    if !layout.is_empty() {
                        layout.push(crate::model::Part::Text(ctx.len()));
                    }
                }
            }
        }
        t.hooks.halt_with(c.halt);
        if t.take_halt() {
            self.turn = Some(t);
            self.advance(now);
            return;
        }
        self.turn = Some(t);
        self.start_request(now);
    }

    /// PROFILE §16 `Stop`, when the turn would end: `Some(turn)` to finish it now, `None`
    /// when it waits for the callbacks or a new model request started (the turn is back in
    /// the session).
    pub(crate) fn stop_hook(&mut self, mut t: Box<Turn>, now: Instant) -> Option<Box<Turn>> {
        if self.sdk_hooks.is_running(t.id, &Target::Stop) {
            self.turn = Some(t);
            return None;
        }
        let due = self.sdk_hooks.wants(HookEvent::Stop, None)
            && t.answered()
            && t.hooks.stop_checked_at != Some(t.requests)
            && !self.out.turn_refused();
        if !due {
            return Some(t);
        }
        t.hooks.stop_checked_at = Some(t.requests);
        let mut extra = Vec::with_capacity(48 + t.last_text.len());
        extra.extend_from_slice(b",\"stop_hook_active\":");
        extra.extend_from_slice(if t.hooks.stop_blocked {
            b"true"
        } else {
            b"false"
        });
        member_str(&mut extra, "last_assistant_message", &t.last_text);
        let turn = t.id;
        self.turn = Some(t);
        let c = self.start_hook_run(turn, Target::Stop, HookEvent::Stop, None, &extra, now)?;
        let t = self.turn.take()?;
        self.stop_applied(t, c, now)
    }

    fn stop_applied(&mut self, mut t: Box<Turn>, c: Combined, now: Instant) -> Option<Box<Turn>> {
        t.hooks.halt_with(c.halt);
        if t.take_halt() {
            return Some(t);
        }
        match c.block {
            // PROFILE §16: one more model request with the reason as a user message, at most
            // once per turn (and never beyond a §15 limit).
            Some(reason) if !t.hooks.stop_blocked && self.next_request_allowed(&t) => {
                t.hooks.stop_blocked = true;
                t.reopen();
                // Kept in the transcript as a plain user record (not written to stdout), as
                // the structured-output retry is, so a resume rebuilds the context the model
                // saw (PROFILE §11: a resumed context is exactly the live one).
                let reason = self.keep_hook_text(reason);
                t.messages.push(Message::user(reason));
                self.turn = Some(t);
                self.start_request(now);
                None
            }
            _ => Some(t),
        }
    }

    /// A run ended: its result lands on its target, if that is still waiting.
    pub(crate) fn hook_run_done(
        &mut self,
        turn: crate::model::TurnId,
        target: Target,
        c: Combined,
        now: Instant,
    ) {
        if self.turn.as_ref().is_none_or(|t| t.id != turn) {
            return;
        }
        match target {
            Target::Pre(id) => {
                let Some(mut t) = self.turn.take() else {
                    return;
                };
                if let Some(i) = t
                    .uses
                    .iter()
                    .position(|u| u.id == id && u.state == UseState::PreHook)
                {
                    self.evaluate_use(&mut t, i, &c, now);
                }
                self.turn = Some(t);
                self.advance(now);
            }
            Target::Post(id) => {
                self.post_applied(&id, c);
                self.advance(now);
            }
            Target::Prompt => self.prompt_applied(c, now),
            Target::Compact => self.pre_compact_applied(c, now),
            Target::Stop => {
                let Some(t) = self.turn.take() else { return };
                if let Some(t) = self.stop_applied(t, c, now) {
                    self.finish_turn(t, now);
                }
            }
        }
    }

    /// Writes a `tool_result` whose content is the tool's output then one text block per
    /// PostToolUse context (PROFILE §16), so the store and a resume see what the model saw
    /// (the store joins text blocks with `\n`). One too large for a line falls back to the
    /// plain record of the joined text, cut as any output is.
    pub(crate) fn push_tool_result_with_contexts(
        &mut self,
        tool_use_id: &str,
        content: &str,
        contexts: &[String],
        is_error: bool,
        results: &[RawJson<'static>],
    ) -> (String, bool) {
        let mut joined = content.to_string();
        for c in contexts {
            joined.push('\n');
            joined.push_str(c);
        }
        // PROFILE §17: the fullest `tool_use_result` form that fits, else none; only then the
        // fallback of the joined text.
        let forms = results.iter().map(Some).chain(std::iter::once(None));
        let mut written = false;
        for form in forms {
            let rec = self
                .stamp
                .tool_result_blocks(tool_use_id, content, contexts, is_error, form);
            if self.out.push(&rec, true) != Pushed::TooLarge {
                written = true;
                break;
            }
        }
        if !written {
            return self.push_tool_result(tool_use_id, &joined, is_error, &[]);
        }
        self.prompts.mark_resolved(tool_use_id);
        (joined, is_error)
    }
}
