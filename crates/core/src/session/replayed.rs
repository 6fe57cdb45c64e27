//! Replayed user records (PROFILE §8 "Replayed user records"): prior context, never a request.
//!
//! Owns the inbound `user` records with `isReplay: true`. Such a record is validated like any
//! user record, and its `session_id` must be this session's. It starts no turn, runs no tool
//! and gets no result; it is echoed only with `--replay-user-messages`. It joins the
//! conversation at the next turn's start, before that turn's prompt, and is stored there
//! (PROFILE §11 "Order is context order"). A record that arrives during a turn waits for the
//! turn's end, so it never falls between a `tool_use` and its `tool_result`.
//!
//! The live messages are built from the stored line by the same mapping resume uses
//! ([`crate::transcript::context::prior_context`]), so a resumed context equals the live one.
//! Must never: start a turn, reach the model before the next turn, or hold more than
//! [`MAX_REPLAYED_BYTES`] of records waiting for that turn.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use crate::model::Message;
use agentx_wire::wire::UserRecord;

use super::Session;

/// At most this many bytes of replayed records (their input lines) wait for the next turn;
/// one more is refused with an input-error result.
pub const MAX_REPLAYED_BYTES: usize = super::QUEUE_MAX_BYTES;

/// PROFILE §8 Signals: the input error of a user record still queued at SIGTERM or SIGHUP.
pub const SHUTTING_DOWN: &str = "agentx is shutting down";

/// The replayed records waiting for the next turn: each stored line with its messages.
#[derive(Default)]
pub(crate) struct Replayed {
    waiting: Vec<(Bytes, Vec<Message>)>,
    bytes: usize,
}

impl Replayed {
    pub(crate) fn clear(&mut self) {
        self.waiting.clear();
        self.bytes = 0;
    }
}

impl Session {
    /// An accepted `isReplay` record: checked against this session, echoed when replay is on,
    /// held for the next turn.
    pub(crate) fn accept_replayed(
        &mut self,
        user: UserRecord<'static>,
        bytes: usize,
        line_no: u64,
        now: Instant,
    ) {
        let prompt_uuid = user.uuid.clone();
        let refuse = |s: &mut Session, reason: &str| {
            s.out
                .diagnostic(format!("agentx: input line {line_no}: {reason}"));
            s.input_error(reason, prompt_uuid.clone(), now);
        };
        // The SDK profile decodes any session_id as absent (PROFILE §15): only the standalone
        // profile can compare it.
        let sdk = self.config.profile == super::Profile::Sdk;
        if !sdk && user.session_id.as_ref().map(|u| u.as_str()) != Some(self.session_id()) {
            return refuse(
                self,
                "a replayed user record must carry this session's session_id",
            );
        }
        if self.replayed.bytes.saturating_add(bytes) > MAX_REPLAYED_BYTES {
            return refuse(
                self,
                "more than 16 MiB of replayed user records wait for the next turn",
            );
        }
        let replay = self.stamp.replay(user);
        let Some(line) = self
            .out
            .encode_prompt(&replay, self.config.replay_user_messages)
        else {
            return;
        };
        let stored = line.strip_suffix(b"\n").unwrap_or(&line).to_vec();
        let messages = crate::transcript::context::prior_context(&[stored]).unwrap_or_default();
        self.replayed.bytes += bytes;
        self.replayed.waiting.push((line, messages));
    }

    /// At a turn's start, before its prompt: the waiting replayed records join the context
    /// (after the finished turns) and the turn's stored lines, in arrival order.
    pub(crate) fn join_replayed(&mut self) {
        if self.replayed.waiting.is_empty() {
            return;
        }
        let at = self.history_len;
        let context = Arc::make_mut(&mut self.context);
        let mut joined = Vec::new();
        for (line, messages) in self.replayed.waiting.drain(..) {
            self.out.keep(line);
            joined.extend(messages);
        }
        let n = joined.len();
        context.splice(at..at, joined);
        self.history_len += n;
        self.replayed.bytes = 0;
    }
}
