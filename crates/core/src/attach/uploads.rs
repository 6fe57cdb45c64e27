//! The upload lifecycles of one session (WIRE-018..020, PROFILE §12): `Uploads` dispatches the
//! four `attachment_import` operations to the in-process ledger of upload IDs, enforces the
//! 8 active lifecycles, the 100,000-ID ledger, the upload timeout and the one-terminal rule,
//! and holds the prompt correlation that user records are checked against.
//!
//! Sans-IO: time is the `now` each call is given (`poll_timeout` / `handle_timeout` drive
//! expiry); bytes reach storage only through the `BlobStore` it owns, whose backend is the
//! one place with file I/O. Acknowledgements are appended to the caller's `out` in the order
//! they must be written. Never emits bytes, base64 or a path (WIRE-022).
//!
//! Which operation gets which record:
//! - `begin` → `accepted` (with a claim of its declared size on storage), or
//!   `attachment_import_rejected` when it cannot start a lifecycle: `capability_absent`,
//!   `duplicate_upload` (the ID, or the attachment ID of a live upload, is taken),
//!   `upload_ledger_full`, `too_many_active_uploads`, `schema_invalid` (name),
//!   `mime_unsupported`, `item_too_large`, `storage_full`. A rejected `begin` changes nothing.
//! - `chunk` → nothing when valid; the one terminal `failed` result when not.
//! - `commit` → the one terminal `committed` (with the manifest) or `failed` result.
//! - `abort` → the one terminal `aborted` / `client_abort` result.
//! - `chunk`, `commit`, `abort` of an ID never accepted → rejected `unknown_upload`; of an ID
//!   already terminal → rejected `after_terminal` (never a second terminal result).
//! - timeout → `expired` / `timeout`; input EOF → `aborted` / `input_eof`; process failure →
//!   `failed` / `process_failure`; cancellation → `aborted` / `cancelled` (`end_all`).

use std::collections::HashMap;
use std::time::Instant;

use super::chunk::ChunkedPayload;
use super::digest::Sha256Digest;
use super::limits::{Limits, MAX_MIME_TYPE_BYTES};
use super::media::MediaType;
use super::reason::ReasonCode;
use super::store::{BlobBackend, BlobStore};
use super::upload_lifecycle::{ImportAck, Receiving, Transition, UploadLifecycle};
use super::upload_prompt::{AttachmentRefError, PromptAdmission, PromptCorrelation};
use super::{admit, ByteClaim};
use agentx_wire::wire::grammar::UploadId;
use agentx_wire::wire::import::{ImportBegin, ImportOperation};
use agentx_wire::wire::user::UserRecord;

/// Every upload lifecycle of one session, and the committed attachments awaiting their user
/// record.
pub struct Uploads<B: BlobBackend> {
    /// `None` when the session runs without the attachment capability (`--no-attachments`).
    store: Option<BlobStore<B>>,
    limits: Limits,
    /// Every accepted upload ID, active or terminal (the in-process ledger, WIRE-018).
    ledger: HashMap<Box<str>, UploadLifecycle>,
    active: usize,
    prompts: PromptCorrelation,
}

impl<B: BlobBackend> core::fmt::Debug for Uploads<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Uploads")
            .field("capability", &self.store.is_some())
            .field("active", &self.active)
            .field("ledger", &self.ledger.len())
            .finish_non_exhaustive()
    }
}

impl<B: BlobBackend> Uploads<B> {
    /// Uploads over `store` with `limits` (the advertised `input_capabilities`).
    pub fn new(store: BlobStore<B>, limits: Limits) -> Uploads<B> {
        Uploads {
            store: Some(store),
            limits,
            ledger: HashMap::new(),
            active: 0,
            prompts: PromptCorrelation::default(),
        }
    }

    /// A session without the attachment capability (PROFILE §12): every operation is
    /// rejected `capability_absent`, every `attachment_ref` is an input error.
    pub fn disabled() -> Uploads<B> {
        Uploads {
            store: None,
            limits: Limits::default(),
            ledger: HashMap::new(),
            active: 0,
            prompts: PromptCorrelation::default(),
        }
    }

    /// Whether `input_capabilities` are advertised.
    pub fn capability(&self) -> bool {
        self.store.is_some()
    }

    /// Lifecycles receiving chunks.
    pub fn active(&self) -> usize {
        self.active
    }

    /// Accepted upload IDs in the ledger (active and terminal).
    pub fn ledger_len(&self) -> usize {
        self.ledger.len()
    }

    /// The blob store (accounting is inspected by tests and the fuzz target).
    pub fn store(&self) -> Option<&BlobStore<B>> {
        self.store.as_ref()
    }

    /// Mutable store access (tests inject backend faults through it).
    pub fn store_mut(&mut self) -> Option<&mut BlobStore<B>> {
        self.store.as_mut()
    }

    /// The earliest deadline of an active upload: when `handle_timeout` must next run.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.ledger
            .values()
            .filter_map(|l| match l {
                UploadLifecycle::Receiving(r) => Some(r.deadline),
                _ => None,
            })
            .min()
    }

    /// Expires every active upload whose deadline is at or before `now` (PROFILE §12: 120 s
    /// from `begin`): one terminal `expired` / `timeout` result each, in upload-ID order.
    pub fn handle_timeout(&mut self, now: Instant, out: &mut Vec<ImportAck>) {
        if self.active == 0 {
            return;
        }
        let mut due: Vec<Box<str>> = self
            .ledger
            .iter()
            .filter(|(_, l)| matches!(l, UploadLifecycle::Receiving(r) if r.deadline <= now))
            .map(|(id, _)| id.clone())
            .collect();
        due.sort_unstable();
        for id in due {
            self.end(&id, ReasonCode::Timeout, out);
        }
    }

    /// Ends every active upload with `reason`: `input_eof` at input EOF, `process_failure`
    /// when the session fails, `cancelled` on cancellation. One terminal result each, in
    /// upload-ID order.
    pub fn end_all(&mut self, reason: ReasonCode, out: &mut Vec<ImportAck>) {
        let mut live: Vec<Box<str>> = self
            .ledger
            .iter()
            .filter(|(_, l)| l.is_active())
            .map(|(id, _)| id.clone())
            .collect();
        live.sort_unstable();
        for id in live {
            self.end(&id, reason, out);
        }
    }

    /// Dispatches one decoded `attachment_import` operation.
    pub fn handle(&mut self, op: &ImportOperation<'_>, now: Instant, out: &mut Vec<ImportAck>) {
        self.handle_timeout(now, out);
        let upload_id = op.upload_id();
        if self.store.is_none() {
            out.push(ImportAck::rejected(upload_id, ReasonCode::CapabilityAbsent));
            return;
        }
        match op {
            ImportOperation::Begin(begin) => self.begin(begin, now, out),
            ImportOperation::Chunk(chunk) => {
                self.with_receiving(upload_id, out, |r, store, _| {
                    r.chunk(store, chunk.sequence, chunk.data.as_bytes())
                });
            }
            ImportOperation::Commit { .. } => {
                self.with_receiving(upload_id, out, |r, store, limits| r.commit(store, limits));
            }
            ImportOperation::Abort { .. } => {
                self.with_receiving(upload_id, out, |r, store, _| {
                    Transition::Ended(Box::new(r.end(store, ReasonCode::ClientAbort)))
                });
            }
        }
    }

    /// An `attachment_import` record that `wire` rejected as a *semantic* error (PROFILE §2b)
    /// with its `upload_id` and reason code: `schema_invalid` comes only from a `begin` (a
    /// zero size, a malformed digest), which cannot start a lifecycle (rejected, and
    /// `duplicate_upload` when the ID is taken); any other reason comes from a `chunk` and
    /// ends that upload `failed`.
    pub fn handle_invalid(
        &mut self,
        upload_id: &UploadId<'_>,
        reason: ReasonCode,
        now: Instant,
        out: &mut Vec<ImportAck>,
    ) {
        self.handle_timeout(now, out);
        if self.store.is_none() {
            out.push(ImportAck::rejected(upload_id, ReasonCode::CapabilityAbsent));
            return;
        }
        if reason == ReasonCode::SchemaInvalid {
            let reason = if self.ledger.contains_key(upload_id.as_str()) {
                ReasonCode::DuplicateUpload
            } else {
                ReasonCode::SchemaInvalid
            };
            out.push(ImportAck::rejected(upload_id, reason));
            return;
        }
        self.with_receiving(upload_id, out, |r, store, _| {
            Transition::Ended(Box::new(r.end(store, reason)))
        });
    }

    /// Checks a user record's `attachment_ref` blocks against the committed attachments of
    /// its `prompt_uuid` (WIRE-020) without changing anything. `Ok(Some(admission))` must be
    /// given to [`Uploads::admit`] once the record is queued; `Ok(None)` means the record has
    /// nothing to correlate.
    pub fn check_user_record(
        &self,
        record: &UserRecord<'_>,
    ) -> Result<Option<PromptAdmission>, AttachmentRefError> {
        self.prompts
            .check(record, self.store.is_some(), &self.limits)
    }

    /// Marks the prompt's committed attachments as submitted: they cannot be referenced again.
    pub fn admit(&mut self, admission: PromptAdmission) {
        self.prompts.admit(admission);
    }

    fn begin(&mut self, begin: &ImportBegin<'_>, now: Instant, out: &mut Vec<ImportAck>) {
        let upload_id = &begin.upload_id;
        match self.try_begin(begin, now) {
            Ok(receiving) => {
                out.push(receiving.accepted());
                self.prompts
                    .begin(&receiving.prompt_uuid, &receiving.attachment_id);
                self.active += 1;
                self.ledger.insert(
                    upload_id.as_str().into(),
                    UploadLifecycle::Receiving(receiving),
                );
            }
            Err(reason) => out.push(ImportAck::rejected(upload_id, reason)),
        }
    }

    fn try_begin(
        &mut self,
        begin: &ImportBegin<'_>,
        now: Instant,
    ) -> Result<Box<Receiving>, ReasonCode> {
        // WIRE-019: a later duplicate operation never creates a second lifecycle.
        if self.ledger.contains_key(begin.upload_id.as_str())
            || self.prompts.attachment_in_use(&begin.attachment_id)
        {
            return Err(ReasonCode::DuplicateUpload);
        }
        // WIRE-018: 100,000 accepted upload IDs, then 8 active lifecycles.
        if self.ledger.len() >= self.limits.max_upload_ledger {
            return Err(ReasonCode::UploadLedgerFull);
        }
        if self.active >= self.limits.max_active_uploads {
            return Err(ReasonCode::TooManyActiveUploads);
        }
        if !admit::is_display_name(&begin.name) {
            return Err(ReasonCode::SchemaInvalid);
        }
        if begin.mime_type.len() > MAX_MIME_TYPE_BYTES {
            return Err(ReasonCode::MimeUnsupported);
        }
        let media = MediaType::from_mime(&begin.mime_type)?;
        let sha256 =
            Sha256Digest::from_hex(begin.sha256.as_str()).ok_or(ReasonCode::SchemaInvalid)?;
        let payload = ChunkedPayload::new(begin.size_bytes, sha256, &self.limits)?;
        let store = self.store.as_mut().ok_or(ReasonCode::CapabilityAbsent)?;
        let claim: ByteClaim = store.claim(begin.size_bytes)?;
        Ok(Box::new(Receiving {
            upload_id: begin.upload_id.clone().into_owned(),
            prompt_uuid: begin.prompt_uuid.clone().into_owned(),
            attachment_id: begin.attachment_id.clone().into_owned(),
            name: begin.name.to_string(),
            media,
            payload,
            claim,
            deadline: now + self.limits.upload_timeout,
        }))
    }

    /// Runs `step` on the receiving upload `upload_id`, consuming its state by value, and
    /// stores the state it transitions to. Unknown and terminal IDs are rejected.
    fn with_receiving(
        &mut self,
        upload_id: &UploadId<'_>,
        out: &mut Vec<ImportAck>,
        step: impl FnOnce(Box<Receiving>, &mut BlobStore<B>, &Limits) -> Transition,
    ) {
        let Some(store) = self.store.as_mut() else {
            out.push(ImportAck::rejected(upload_id, ReasonCode::CapabilityAbsent));
            return;
        };
        let Some(slot) = self.ledger.get_mut(upload_id.as_str()) else {
            out.push(ImportAck::rejected(upload_id, ReasonCode::UnknownUpload));
            return;
        };
        let state = std::mem::replace(slot, UploadLifecycle::Ended);
        let UploadLifecycle::Receiving(receiving) = state else {
            *slot = state;
            out.push(ImportAck::rejected(upload_id, ReasonCode::AfterTerminal));
            return;
        };
        let attachment_id = receiving.attachment_id.clone();
        let prompt_uuid = receiving.prompt_uuid.clone();
        match step(receiving, store, &self.limits) {
            Transition::Receiving(still) => *slot = UploadLifecycle::Receiving(still),
            Transition::Ended(ack) => {
                self.active -= 1;
                *slot = UploadLifecycle::Ended;
                self.prompts.ended(&prompt_uuid, &attachment_id);
                out.push(*ack);
            }
            Transition::Committed(committed) => {
                let (ack, prompt, manifest) = *committed;
                self.active -= 1;
                *slot = UploadLifecycle::Committed;
                self.prompts.committed(&prompt, manifest);
                out.push(ack);
            }
        }
    }

    fn end(&mut self, upload_id: &str, reason: ReasonCode, out: &mut Vec<ImportAck>) {
        let Some(id) = UploadId::new(upload_id) else {
            return;
        };
        self.with_receiving(&id, out, |r, store, _| {
            Transition::Ended(Box::new(r.end(store, reason)))
        });
    }
}
