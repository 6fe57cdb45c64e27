//! Moving a turn on and ending it: the `tool_result` records of a message in block order once
//! every use is settled and no call is open, then the next request (unless `continue: false`
//! or a PROFILE §15 limit ends the model's work); once that work is over, no tool use and no
//! network prompt remains and every task finished (the held result, WIRE-004), PROFILE §16's
//! `Stop` hook, structured output (a corrective request while attempts remain), the result,
//! the surviving suggestion, the transcript flush and `idle` (PROFILE §8, §11).
//!
//! Must never: write the result while a task of the turn runs, or move on after a record of
//! the turn was refused (the session cuts the turn instead).

use std::sync::Arc;
use std::time::Instant;

use crate::model::Message;
use agentx_wire::wire::system::SessionState;
use agentx_wire::wire::{RawJson, ResultSubtype};

use super::{millis, End, Exchange, Limit, Phase, Turn, UseState};
use crate::session::records::ResultFields;
use crate::session::structured::{self, OutputSchema};
use crate::session::{Action, Session};

impl Session {
    /// Moves the turn on: all tool results in → `tool_result` records in block order and the
    /// next request; the model done and every task finished → the result (WIRE-004).
    pub(crate) fn advance(&mut self, now: Instant) {
        if self.out.turn_refused() {
            // A record of the turn did not fit one line: nothing moves on; the session ends
            // the turn after this step ([`Cut::OutputError`](crate::session::interrupt::Cut)).
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
                        true => {
                            self.push_tool_result(&u.id, &content, is_error, &u.tool_use_result)
                        }
                        // PROFILE §16: PostToolUse contexts are text blocks after the output.
                        false => self.push_tool_result_with_contexts(
                            &u.id,
                            &content,
                            &u.contexts,
                            is_error,
                            &u.tool_use_result,
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
            // PROFILE §16 `continue: false`: no next model request; a success result whose
            // text is `stopReason`.
            if matches!(t.phase, Phase::Between) && !t.take_halt() {
                match self.next_request_limit(&t) {
                    // PROFILE §15: the request beyond the limit is not made; the turn ends
                    // after these tool results (and its tasks, WIRE-004) with the limit's
                    // result.
                    Some(limit) => t.phase = Phase::Ended(End::Limit(limit)),
                    None => {
                        self.turn = Some(t);
                        self.start_request(now);
                        return;
                    }
                }
            }
        }
        let held = t.tasks.iter().any(|k| !k.done);
        let ended = matches!(t.phase, Phase::Ended(_));
        if ended && t.uses.is_empty() && t.network.is_none() && !held {
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
        schema: &OutputSchema,
    ) -> Result<RawJson<'static>, bool> {
        t.structured_attempts += 1;
        let error = match schema.check(&t.answer) {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if t.structured_attempts >= structured::MAX_ATTEMPTS {
            t.structured_error = Some(error);
            return Err(false);
        }
        if let Some(limit) = self.next_request_limit(t) {
            // PROFILE §15's limits hold for the corrective requests too.
            t.phase = Phase::Ended(End::Limit(limit));
            return Err(false);
        }
        // "asked again with the validation error": one user message, kept in the transcript
        // (not written to stdout) so a resume rebuilds the context the model saw (PROFILE §11).
        let text = structured::corrective_text(&error);
        let rec = structured::corrective_record(&text, &mut self.stamp);
        if let Some(line) = self.out.encode_prompt(&rec, false) {
            self.out.keep(line);
        }
        t.messages.push(Message::user(text));
        t.reopen();
        Err(true)
    }

    /// The result, the surviving suggestion, the transcript flush, `idle` (PROFILE §8).
    pub(crate) fn finish_turn(&mut self, mut t: Box<Turn>, now: Instant) {
        let mut structured_output = None;
        // Not for a turn that failed, hit a limit or that a hook halted (`continue: false`
        // ends it with its stop reason).
        let checked = t.answered();
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
        let subtype = match t.phase {
            Phase::Ended(End::Failed) => ResultSubtype::ErrorDuringExecution,
            Phase::Ended(End::Limit(Limit::MaxTurns)) => {
                let n = self.config.limits.max_turns.unwrap_or(t.requests);
                errors.push(format!("max turns reached: {n}"));
                ResultSubtype::ErrorMaxTurns
            }
            Phase::Ended(End::Limit(Limit::Budget)) => {
                let x = self
                    .config
                    .limits
                    .max_budget
                    .as_ref()
                    .map(|b| b.text.as_str());
                errors.push(format!("budget reached: {} USD", x.unwrap_or("?")));
                ResultSubtype::ErrorMaxBudgetUsd
            }
            _ if t.structured_error.is_some() => {
                let e = t.structured_error.as_deref().unwrap_or_default();
                errors.push(structured::exhausted_error(e));
                ResultSubtype::ErrorMaxStructuredOutputRetries
            }
            _ => ResultSubtype::Success,
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
    /// [`Output::take_turn_refusal`]: crate::session::output::Output::take_turn_refusal
    pub(crate) fn close_turn(&mut self, t: Box<Turn>, mut fields: ResultFields, suggestion: bool) {
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
        // `tool_use` without its `tool_result` (PROFILE §11; `transcript::context` extends the
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
