//! The session's upload integration: `attach::Uploads` behind the [`Attachments`] seam
//! (WIRE-018..020, PROFILE §12).
//!
//! Owns only the translation between the session's hand-off (operation records, record-level
//! import errors, user records, time, EOF, failure) and the lifecycle core, which does all
//! the work. Never reads a clock or touches storage itself: the blob store's backend (the
//! driver's `FsBackend` under AgentX home, or `MemoryBackend` in tests) is inside `Uploads`.

use std::time::Instant;

use super::Attachments;
use crate::attach::{BlobBackend, ImportAck, ReasonCode, Uploads};
use agentx_wire::wire::grammar::UploadId;
use agentx_wire::wire::{ImportOperation, OutputRecord, UserRecord};

fn records(out: Vec<ImportAck>) -> Vec<OutputRecord<'static>> {
    out.into_iter().map(ImportAck::into_record).collect()
}

impl<B: BlobBackend + Send + 'static> Attachments for Uploads<B> {
    fn import(&mut self, op: &ImportOperation<'_>, now: Instant) -> Vec<OutputRecord<'static>> {
        let mut out = Vec::new();
        self.handle(op, now, &mut out);
        records(out)
    }

    fn admit_prompt(&mut self, user: &UserRecord<'_>) -> Result<(), String> {
        match self.check_user_record(user) {
            Ok(Some(admission)) => {
                self.admit(admission);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn reject_operation(
        &mut self,
        upload_id: &str,
        reason: &'static str,
        now: Instant,
    ) -> Vec<OutputRecord<'static>> {
        let Some(upload_id) = UploadId::new(upload_id) else {
            return Vec::new();
        };
        let reason = ReasonCode::from_name(reason).unwrap_or(ReasonCode::SchemaInvalid);
        let mut out = Vec::new();
        self.handle_invalid(&upload_id, reason, now, &mut out);
        records(out)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        Uploads::poll_timeout(self)
    }

    fn handle_timeout(&mut self, now: Instant) -> Vec<OutputRecord<'static>> {
        let mut out = Vec::new();
        Uploads::handle_timeout(self, now, &mut out);
        records(out)
    }

    fn handle_eof(&mut self, now: Instant) -> Vec<OutputRecord<'static>> {
        let mut out = Vec::new();
        Uploads::handle_timeout(self, now, &mut out);
        self.end_all(ReasonCode::InputEof, &mut out);
        records(out)
    }

    fn handle_failure(&mut self) -> Vec<OutputRecord<'static>> {
        let mut out = Vec::new();
        self.end_all(ReasonCode::ProcessFailure, &mut out);
        records(out)
    }
}
