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
//! With no active turn the acknowledgement is the only output. Must never: let a model, tool
//! or hook outcome of the interrupted turn change anything afterwards.

use std::time::Instant;

use crate::model::TaskStatus;
use crate::wire::ResultSubtype;

use super::records::{control_success, ResultFields};
use super::turn::{millis, UseState};
use super::{Action, Session};

/// The `tool_result` content of an accepted tool use cut short (PROFILE §8).
pub const INTERRUPTED: &str = "interrupted";

impl Session {
    /// Interrupts the active turn; `ack` is the `request_id` of an `interrupt` control.
    pub(crate) fn interrupt(&mut self, ack: Option<&str>, now: Instant) {
        if self.done.is_some() {
            return;
        }
        // 1. WIRE-011: every pending host-permission waiter is aborted through the broker
        // (one `control_cancel_request` each, oldest first) and every hook killed.
        self.permission_cancel_all(now);
        // 2. WIRE-010: the acknowledgement, payload-less.
        if let Some(id) = ack {
            let rec = control_success(id, None);
            self.out.push(&rec, false);
        }
        let Some(mut t) = self.turn.take() else {
            return;
        };
        let was_streaming = t.model_active();
        if was_streaming {
            self.actions.push_back(Action::CancelModel { turn: t.id });
        }
        // 3 and 4: settle every accepted tool use; one terminal tool_result each.
        for u in std::mem::take(&mut t.uses) {
            let (content, is_error) = match u.state {
                UseState::Done { content, is_error } => (content, is_error),
                UseState::Running => {
                    self.actions.push_back(Action::CancelTool {
                        tool_use_id: u.id.clone(),
                    });
                    (INTERRUPTED.to_string(), true)
                }
                _ => (INTERRUPTED.to_string(), true),
            };
            let rec = self.stamp.tool_result(&u.id, &content, is_error);
            self.out.push(&rec, true);
            self.prompts.mark_resolved(&u.id);
        }
        // 5. terminal task events for finite work.
        for task in t.tasks.iter_mut().filter(|k| !k.done) {
            task.done = true;
            let summary = format!("task {} stopped", task.id);
            let rec = self
                .stamp
                .task_notification(&task.id, TaskStatus::Stopped, &summary);
            self.out.push(&rec, false);
        }
        // 6..9: the result, no suggestion, the flush, idle.
        let fields = ResultFields {
            subtype: ResultSubtype::ErrorDuringExecution,
            duration_ms: millis(t.started_at(), now),
            duration_api_ms: t.api_ms_until(now),
            num_turns: t.request_count(),
            text: String::new(),
            stop_reason: was_streaming.then_some("cancelled"),
            // WIRE-012: a model call cut short reported no price, so the total is unknown.
            cost: if was_streaming { None } else { t.cost_total() },
            usage: t.usage_total(),
            model: Some(self.config.projection.init.model.clone()),
            denials: t.denials.clone(),
            errors: vec![INTERRUPTED.to_string()],
            prompt_uuid: t.prompt_uuid(),
        };
        self.close_turn(t, fields, false);
    }
}
