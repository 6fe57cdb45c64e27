//! Input dispatch (PROFILE §8): one complete line in, classified and routed.
//!
//! Owns the error classification of PROFILE §2b and §5: malformed JSON, a non-object and an
//! import-schema violation are fatal (WIRE-001, WIRE-021: `agentx: input line N: …`, exit 1
//! after the accepted output); a duplicate member rejects only its record, classified by its
//! top-level `type` (a `control_request` with an unambiguous `request_id` also gets the
//! ambiguity text as its correlated error; a `user` record gets an input-error result; a
//! `control_response` denies the pending prompt it names, PERM-049); an
//! unknown type is a warning (WIRE-002); a schema-invalid user record is an input-error
//! result; an invalid `control_response` also denies the prompt it names (PERM-049); an
//! invalid environment update is a diagnostic only. Must never: start a turn from
//! an invalid record, or answer a control without a recoverable `request_id`.

use std::borrow::Cow;
use std::time::Instant;

use crate::model::Usage;
use agentx_wire::wire::grammar::Uuid;
use agentx_wire::wire::import::{ImportRejected, ReasonCode};
use agentx_wire::wire::{
    self, ControlResponse, Error, ErrorKind, ImportOperation, InputRecord, IntoOwned, OutputRecord,
    RejectedLineClass, ResultSubtype, UserRecord,
};

use super::queue::Queued;
use super::records::ResultFields;
use super::rejected_line;
use super::{Action, Session};

/// PROFILE §5: the unknown-type warning.
fn unknown_type_warning(line_no: u64) -> String {
    format!("agentx: warning: input line {line_no}: ignored record of unknown type")
}

impl Session {
    pub(crate) fn dispatch_line(&mut self, line: &[u8], line_no: u64, now: Instant) {
        if self.done.is_some() {
            return;
        }
        // PROFILE §2a: a blank line (only JSON whitespace) is ignored.
        if line
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return;
        }
        if self.config.profile == super::Profile::Sdk {
            return self.dispatch_sdk_line(line, line_no, now);
        }
        let mut parser = std::mem::take(&mut self.parser);
        let decoded = InputRecord::decode_line(line, &mut parser).map(InputRecord::into_owned);
        self.parser = parser;
        match decoded {
            Ok(record) => self.dispatch(record, line.len(), line_no, now),
            Err(e) => self.decode_error(&e, line, line_no, now),
        }
        self.after_step(now);
    }

    pub(crate) fn dispatch(
        &mut self,
        record: InputRecord<'static>,
        bytes: usize,
        line_no: u64,
        now: Instant,
    ) {
        match record {
            InputRecord::User(user) => self.accept_user(user, bytes, line_no, now),
            InputRecord::ControlRequest(req) => self.control_request(req, now),
            InputRecord::ControlResponse(resp) => self.control_response(resp, now),
            InputRecord::ControlCancelRequest(_) => {
                // The standalone dispatcher answers synchronously: nothing inbound is ever
                // pending, so a host cancellation has nothing to cancel.
            }
            InputRecord::KeepAlive => {}
            InputRecord::UpdateEnvironmentVariables(update) => {
                let variables: Vec<(String, Option<String>)> = update
                    .variables
                    .into_iter()
                    .map(|(k, v)| (k.into_owned(), v.map(Cow::into_owned)))
                    .collect();
                // PROFILE §8: the session-wide bound; a record past it changes nothing.
                match self.environment.apply(&variables) {
                    Ok(()) => self
                        .actions
                        .push_back(Action::UpdateEnvironment { variables }),
                    Err(e) => self
                        .out
                        .diagnostic(format!("agentx: input line {line_no}: {e}")),
                }
            }
            InputRecord::AttachmentImport(op) => self.attachment_import(&op, now),
            InputRecord::Unknown(_) => {
                // WIRE-002: warn and ignore.
                self.out.diagnostic(unknown_type_warning(line_no));
            }
        }
    }

    fn attachment_import(&mut self, op: &ImportOperation<'_>, now: Instant) {
        let records = match self.attachments.as_mut() {
            Some(a) if self.config.attachments_enabled => a.import(op, now),
            // PROFILE §12: without the capability every import is rejected.
            _ => vec![capability_absent(op.upload_id().as_str())],
        };
        for r in records {
            super::push_other(&mut self.out, &r, "attachment_import_result");
        }
    }

    pub(crate) fn decode_error(&mut self, e: &Error, line: &[u8], line_no: u64, now: Instant) {
        let prefix = format!("agentx: input line {line_no}: ");
        let duplicate = e.kind() == ErrorKind::Json(agentx_wire::json::ErrorKind::DuplicateMember);
        if duplicate {
            // PROFILE §2b: classified by the rejected line's top-level `type`, by the one
            // classifier `agentx-wire check` uses too (a duplicated `type` is not trusted: an
            // `attachment_import` reading of it wins, WIRE-021).
            let top = rejected_line::top_level(line).unwrap_or_default();
            if top.agreed_type.as_deref() == Some("control_response") {
                // PERM-049: a malformed answer to a pending prompt is a denial (every `type`
                // of the line reads `control_response`, so no import reading exists).
                self.out.diagnostic(format!("{prefix}{e}"));
                return self.permission_rejected(&top.response_request_ids, e, now);
            }
            match wire::classify_rejected_line(line) {
                RejectedLineClass::Import => {
                    return self.fatal(format!("{prefix}{e}"), now);
                }
                RejectedLineClass::User => {
                    self.out.diagnostic(format!("{prefix}{e}"));
                    let uuid = top.uuid.and_then(Uuid::new);
                    return self.input_error(&e.to_string(), uuid, now);
                }
                RejectedLineClass::Other
                    if top.record_type.as_deref() == Some("control_request") =>
                {
                    self.out.diagnostic(format!("{prefix}{e}"));
                    if let Some(id) = top.request_id.filter(|r| !r.is_empty()) {
                        let rec = super::records::control_error(&id, &e.to_string());
                        super::respond(&mut self.out, &id, &rec);
                    }
                    return;
                }
                _ => return self.out.diagnostic(format!("{prefix}{e}")),
            }
        }
        if e.is_fatal() {
            return self.fatal(format!("{prefix}{e}"), now);
        }
        // Record-level: classify by type (the strict parse succeeded, so a fresh parse reads it).
        let ty = rejected_line::top_level(line).and_then(|t| t.record_type);
        match ty.as_deref() {
            Some("user") => {
                self.out.diagnostic(format!("{prefix}{e}"));
                let uuid = rejected_line::top_level(line)
                    .and_then(|t| t.uuid)
                    .and_then(Uuid::new);
                self.input_error(&e.to_string(), uuid, now);
            }
            Some("control_request") => {
                // "A control whose request_id is recoverable but whose payload is invalid gets
                // a correlated error; one without a recoverable id is a stderr diagnostic."
                match e.correlation() {
                    Some(id) => {
                        let rec = super::records::control_error(id, &e.to_string());
                        super::respond(&mut self.out, id, &rec);
                    }
                    None => self.out.diagnostic(format!("{prefix}{e}")),
                }
            }
            Some("control_response") => {
                // PERM-049: an answer whose envelope or outcome is invalid settles the prompt
                // it names as a denial (its `request_id` as decoded before the failure, else
                // as read from the rejected line).
                self.out.diagnostic(format!("{prefix}{e}"));
                let ids = match e.correlation() {
                    Some(id) => vec![id.to_string()],
                    None => rejected_line::top_level(line)
                        .map(|t| t.response_request_ids)
                        .unwrap_or_default(),
                };
                self.permission_rejected(&ids, e, now);
            }
            Some("attachment_import") => {
                self.out.diagnostic(format!("{prefix}{e}"));
                if let Some(upload_id) = e.correlation() {
                    let reason = e
                        .reason_code()
                        .unwrap_or(ReasonCode::SchemaInvalid.as_str());
                    let records = match self.attachments.as_mut() {
                        Some(a) if self.config.attachments_enabled => {
                            a.reject_operation(upload_id, reason, now)
                        }
                        _ => vec![capability_absent(upload_id)],
                    };
                    for r in records {
                        super::push_other(&mut self.out, &r, "attachment_import_result");
                    }
                }
            }
            _ => self.out.diagnostic(format!("{prefix}{e}")),
        }
    }

    /// An accepted `user` record: WIRE-020 admission, replay echo, then the queue (a `now`
    /// record first interrupts the active turn without an acknowledgement).
    fn accept_user(&mut self, user: UserRecord<'static>, bytes: usize, line_no: u64, now: Instant) {
        let has_refs = user.attachments().next().is_some();
        let prompt_uuid = user.uuid.clone();
        // PROFILE §8 Replay / §11: the record's replay form (written when replay is on, kept in
        // the transcript always) must fit one output line. A record whose replay form does not
        // (an input line near the 8 MiB limit grows by its session_id, uuid and isReplay) is
        // refused as a record error here, before anything changes; encoding it later would
        // latch the encoder and end the whole session. Only a line that could grow past the
        // limit is measured (re-encoding it costs a copy of the record).
        if self.out.may_outgrow(bytes) && !self.out.fits(&self.stamp.replay_probe(&user)) {
            let reason = "the record's replay form would exceed the output line limit";
            self.out
                .diagnostic(format!("agentx: input line {line_no}: {reason}"));
            return self.input_error(reason, prompt_uuid, now);
        }
        if let Some(text) = &self.store_unavailable {
            // PROFILE §11: the store owes too much; this record would only add to it.
            let reason = format!("session store unavailable: {text}");
            self.out
                .diagnostic(format!("agentx: input line {line_no}: {reason}"));
            return self.input_error(&reason, prompt_uuid, now);
        }
        if user.is_replay {
            // PROFILE §8: prior context, never a request (validated like any user record).
            if let Err(reason) = self.admit_attachments(&user, has_refs) {
                self.out
                    .diagnostic(format!("agentx: input line {line_no}: {reason}"));
                return self.input_error(&reason, prompt_uuid, now);
            }
            return self.accept_replayed(user, bytes, line_no, now);
        }
        if !self.queue.has_room(bytes) {
            let reason = "the user-record queue is full (WIRE-020)";
            self.out
                .diagnostic(format!("agentx: input line {line_no}: {reason}"));
            return self.input_error(reason, prompt_uuid, now);
        }
        // WIRE-020 / PROFILE §12: validated (after the queue's room, so an admitted prompt
        // is always queued) before a `now` record interrupts anything.
        if let Err(reason) = self.admit_attachments(&user, has_refs) {
            self.out
                .diagnostic(format!("agentx: input line {line_no}: {reason}"));
            return self.input_error(&reason, prompt_uuid, now);
        }
        // PROFILE §8 Replay: echoed before anything it causes. PROFILE §11: stored where it
        // enters the model's context, when its own turn starts (not here, where it may fall
        // between a running tool's `tool_use` and its `tool_result`).
        let uuid_given = user.uuid.is_some();
        let replay = self.stamp.replay(user.clone());
        let line = self
            .out
            .encode_prompt(&replay, self.config.replay_user_messages);
        let is_now = user.priority == Some(agentx_wire::wire::Priority::Now);
        let record = match replay {
            OutputRecord::User(r) => r,
            _ => user,
        };
        self.queue.push(Queued {
            record,
            bytes,
            line,
            uuid_given,
        });
        if is_now && self.turn.is_some() {
            // PROFILE §8: `now` interrupts the active turn like an interrupt, without an
            // acknowledgement.
            self.interrupt(None, now);
        }
    }

    /// PROFILE §12: a prompt's attachment references, checked against the store.
    fn admit_attachments(
        &mut self,
        user: &UserRecord<'static>,
        has_refs: bool,
    ) -> Result<(), String> {
        match self.attachments.as_mut() {
            Some(a) if self.config.attachments_enabled => a.admit_prompt(user),
            _ if has_refs => Err("attachments are not available in this session".to_string()),
            _ => Ok(()),
        }
    }

    /// The input-error result of PROFILE §8: no turn starts, queued work is untouched.
    pub(crate) fn input_error(
        &mut self,
        reason: &str,
        prompt_uuid: Option<Uuid<'static>>,
        now: Instant,
    ) {
        let _ = now;
        let fields = input_error_fields(reason, prompt_uuid.map(IntoOwned::into_owned));
        let rec = self.stamp.result(&fields);
        super::push_other(&mut self.out, &rec, "result (input error)");
    }

    /// An inbound `control_response`: the permission race's (WIRE-009, PERM-050), through
    /// the broker.
    fn control_response(&mut self, resp: ControlResponse<'static>, now: Instant) {
        self.permission_response(&resp, now);
    }

    /// WIRE-EOF-001, WIRE-008: input closed.
    pub(crate) fn input_closed(&mut self, now: Instant) {
        if self.done.is_some() || self.eof {
            return;
        }
        self.eof = true;
        if let Some(a) = self.attachments.as_mut() {
            for r in a.handle_eof(now) {
                super::push_other(&mut self.out, &r, "attachment_import_result");
            }
        }
        // WIRE-008: every pending control is rejected; each prompt waiting on the host
        // settles as a denial (PERM-049), its hook killed, no cancel record sent.
        self.permission_eof(now);
        self.after_step(now);
    }
}

/// PROFILE §12: `attachment_import_rejected` with `capability_absent`.
fn capability_absent(upload_id: &str) -> OutputRecord<'static> {
    let upload_id = agentx_wire::wire::grammar::UploadId::new(upload_id.to_string())
        .or_else(|| agentx_wire::wire::grammar::UploadId::new("upl_unknown".to_string()))
        .expect("a valid upload id");
    OutputRecord::AttachmentImportRejected(ImportRejected {
        upload_id,
        reason: ReasonCode::CapabilityAbsent,
    })
}

/// The fields of PROFILE §8's input-error result (`input error: <reason>`), for a line
/// rejected before its turn and for a turn a `UserPromptSubmit` hook blocked (PROFILE §16).
pub(crate) fn input_error_fields(reason: &str, prompt_uuid: Option<Uuid<'static>>) -> ResultFields {
    ResultFields {
        subtype: ResultSubtype::ErrorDuringExecution,
        duration_ms: 0,
        duration_api_ms: 0,
        num_turns: 0,
        text: String::new(),
        stop_reason: None,
        cost: None,
        usage: Usage::default(),
        model: None,
        denials: Vec::new(),
        errors: vec![format!("input error: {reason}")],
        prompt_uuid,
        structured_output: None,
    }
}
