//! The hard interrupt (WIRE-010, WIRE-011, PROFILE §8), in the protocol's order after any
//! earlier FIFO records:
//! 1. `control_cancel_request` for each pending host permission (oldest first);
//! 2. the payload-less `control_response` success for the `interrupt` (none for SIGINT or a
//!    priority-`now` record);
//! 3. the denials and cancellations settle internally (nothing written);
//! 4. one terminal `tool_result` per accepted tool use of the current message, in block
//!    order (`interrupted`, `is_error` true, for the unfinished ones);
//! 5. `task_notification` `stopped` for every unfinished finite task;
//! 6. the `result` `error_during_execution` (no cancelled subtype);
//! 7. no `prompt_suggestion` (the suggestion work was aborted with the turn);
//! 8. the internal flush ([`Action::Persist`]);
//! 9. `idle`.
//!
//! With no active turn the acknowledgement is the only output. The same order, without an
//! acknowledgement, ends a turn one of whose records could not fit one output line or whose
//! streamed delta would have completed a credential ([`Cut::OutputError`]): that record is
//! not written, cancellations and terminal `tool_result`s
//! follow, and the result is `error_during_execution` with the output error; the session goes
//! on. Must never: let a model, tool or hook outcome of the interrupted turn change anything
//! afterwards.

use std::time::Instant;

use crate::model::TaskStatus;
use agentx_wire::wire::ResultSubtype;

use super::records::ResultFields;
use super::turn::{millis, UseState};
use super::{Action, Session};

/// The `tool_result` content of an accepted tool use cut short (PROFILE §8).
pub const INTERRUPTED: &str = "interrupted";

/// Why a turn is cut short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// An `interrupt`, SIGINT, a priority-`now` record or a deny with `interrupt` (PERM-045).
    Interrupt,
    /// A record of the turn was not written (too large for one output line, or a streamed
    /// delta that would have completed a credential, PROFILE §8): the turn ends here with the
    /// output error (never the whole session).
    OutputError,
}

impl Session {
    /// Interrupts the active turn; `ack` is the `request_id` of an `interrupt` control.
    pub(crate) fn interrupt(&mut self, ack: Option<&str>, now: Instant) {
        if self.done.is_some() {
            return;
        }
        // 1 and 2. WIRE-011: every pending host-permission waiter is aborted through the
        // broker (one `control_cancel_request` each, oldest first) and every hook killed; then
        // the payload-less acknowledgement (WIRE-010) is pushed into the same output FIFO, so
        // it follows every cancellation.
        self.permission_cancel_all(ack, now);
        self.cut_turn(Cut::Interrupt, now);
    }

    /// Ends the active turn in the hard-interrupt order (steps 3 to 9 of the module docs)
    /// with `cut`'s `tool_result` content and `errors`; the caller did steps 1 and 2.
    pub(crate) fn cut_turn(&mut self, cut: Cut, now: Instant) {
        if self.done.is_some() {
            return;
        }
        let Some(mut t) = self.turn.take() else {
            return;
        };
        let reason = match cut {
            Cut::Interrupt => INTERRUPTED.to_string(),
            Cut::OutputError => self.out.turn_error(),
        };
        let was_streaming = t.model_active();
        if was_streaming {
            self.actions.push_back(Action::CancelModel { turn: t.id });
        }
        if t.compacting() {
            // PROFILE §19: the summarization ends `cancelled`; the context stays as it was.
            self.status_done();
        }
        // 3 and 4: settle every accepted tool use; one terminal tool_result each.
        for u in std::mem::take(&mut t.uses) {
            let mut results = Vec::new();
            let (content, is_error) = match u.state {
                UseState::Done { content, is_error } => {
                    results = u.tool_use_result;
                    (content, is_error)
                }
                UseState::Running => {
                    self.actions.push_back(Action::CancelTool {
                        tool_use_id: u.id.clone(),
                    });
                    (reason.clone(), true)
                }
                _ => (reason.clone(), true),
            };
            // The model's context gets exactly the result written (PROFILE §11: resumed
            // context = live context; no `tool_use` without its `tool_result`).
            let (content, is_error) = self.push_tool_result(&u.id, &content, is_error, &results);
            t.record_tool_result(u.id, content, is_error);
        }
        // 5. terminal task events for finite work.
        for task in t.tasks.iter_mut().filter(|k| !k.done) {
            task.done = true;
            self.push_task_notification(&task.id, TaskStatus::Stopped);
        }
        // 6..9: the result, no suggestion, the flush, idle.
        let (stop_reason, errors) = match cut {
            Cut::Interrupt => (was_streaming.then_some("cancelled"), vec![reason]),
            Cut::OutputError => {
                let mut errors = t.errors().to_vec();
                errors.push(reason);
                ((!was_streaming).then(|| t.stop_reason()).flatten(), errors)
            }
        };
        let fields = ResultFields {
            subtype: ResultSubtype::ErrorDuringExecution,
            duration_ms: millis(t.started_at(), now),
            duration_api_ms: t.api_ms_until(now),
            num_turns: t.request_count(),
            text: String::new(),
            stop_reason,
            // WIRE-012: a model call cut short reported no price, so the total is unknown.
            cost: if was_streaming { None } else { t.cost_total() },
            usage: t.usage_total(),
            model: Some(self.config.projection.init.model.clone()),
            denials: t.denials.clone(),
            errors,
            prompt_uuid: t.prompt_uuid(),
            structured_output: None,
        };
        self.close_turn(t, fields, false);
    }
}
