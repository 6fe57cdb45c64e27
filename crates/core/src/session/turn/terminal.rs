//! The turn's terminal records, each written in the first form that fits one output line:
//! the result (as built; its error form; denials' `tool_input` `{}`; no denials), a task's
//! `task_notification` (a shorter summary), a tool use's `tool_result` (in the SDK profile cut
//! with a visible marker, PROFILE §15; else an error `tool_result` with the output error, so
//! the use stays paired, PERM-053).
//!
//! Must never: lose one of these records silently (one that fits no form is a stderr line),
//! or leave a tool use without its `tool_result`.

use crate::session::fit::cut_to_fit;
use agentx_wire::wire::{RawJson, ResultSubtype};

use crate::session::output::Pushed;
use crate::session::records::ResultFields;
use crate::session::{prompts, Profile, Session};

impl Session {
    /// Writes the result in the first form that fits one line (see [`Session::close_turn`]).
    pub(super) fn push_result(&mut self, mut fields: ResultFields) {
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
        self.out.diagnostic(prompts::too_large_diagnostic("result"));
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
                    .diagnostic(prompts::too_large_diagnostic("task_notification"));
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
        results: &[RawJson<'static>],
    ) -> (String, bool) {
        // PROFILE §17: the fullest `tool_use_result` form that fits the line; none fitting,
        // the member is dropped before the `tool_result` itself is cut.
        for form in results {
            let rec = self
                .stamp
                .tool_result_with(tool_use_id, content, is_error, Some(form));
            if self.out.push(&rec, true) != Pushed::TooLarge {
                self.prompts.mark_resolved(tool_use_id);
                return (content.to_string(), is_error);
            }
        }
        let rec = self.stamp.tool_result(tool_use_id, content, is_error);
        let mut pushed = self.out.push(&rec, true);
        let mut cut_content = None;
        if pushed == Pushed::TooLarge && self.config.profile == Profile::Sdk {
            // PROFILE §15: in the SDK profile a tool output that would not fit the 1 MiB line
            // is cut with a visible marker, and the turn goes on.
            let limit = self.config.max_record_len;
            let (out, stamp) = (&mut self.out, &mut self.stamp);
            let text = cut_to_fit(content, |t| {
                out.encoded_len(&stamp.tool_result(tool_use_id, t, is_error))
                    .saturating_sub(limit)
            });
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
                        .diagnostic(prompts::too_large_diagnostic("tool_result"));
                }
                (error, true)
            }
            _ => (content.to_string(), is_error),
        };
        self.prompts.mark_resolved(tool_use_id);
        written
    }
}
