//! One accepted upload as a value moving through its states (STYLE #8): `Receiving` (after an
//! accepted `begin`, chunks arriving) → `Committed` or `Ended` (aborted, expired, failed).
//!
//! Owns the transitions and the settlement they imply: a `Receiving` upload holds the
//! `ByteClaim` of its declared size and its decoded bytes; every way out of `Receiving`
//! consumes the state by value and releases the claim exactly once (WIRE-019, scenario 23).
//! The terminal states keep nothing but what duplicate detection needs. Never reads a clock
//! (the deadline is computed from the `now` given at `begin`) and never does I/O except
//! through the `BlobStore` it is handed at commit.

use std::time::Instant;

use super::admit;
use super::chunk::ChunkedPayload;
use super::media::MediaType;
use super::reason::ReasonCode;
use super::store::{BlobBackend, BlobStore, ByteClaim};
use agentx_wire::wire::attachment_ref::AttachmentRef;
use agentx_wire::wire::grammar::{AttachmentId, UploadId, Uuid};
use agentx_wire::wire::import::{ImportRejected, ImportResult, ImportStatus};
use agentx_wire::wire::OutputRecord;

/// The state of one upload ID in the in-process ledger.
pub(crate) enum UploadLifecycle {
    /// Accepted; chunks arriving.
    Receiving(Box<Receiving>),
    /// Terminal `committed`: the manifest now lives in the prompt correlation.
    Committed,
    /// Terminal `aborted`, `expired` or `failed`.
    Ended,
}

impl UploadLifecycle {
    pub(crate) fn is_active(&self) -> bool {
        matches!(self, UploadLifecycle::Receiving(_))
    }
}

/// An accepted upload that has not ended.
pub(crate) struct Receiving {
    pub(crate) upload_id: UploadId<'static>,
    pub(crate) prompt_uuid: Uuid<'static>,
    pub(crate) attachment_id: AttachmentId<'static>,
    pub(crate) name: String,
    pub(crate) media: MediaType,
    pub(crate) payload: ChunkedPayload,
    pub(crate) claim: ByteClaim,
    /// `begin`'s `now` plus the upload timeout (PROFILE §12).
    pub(crate) deadline: Instant,
}

/// Where a step leaves a receiving upload.
pub(crate) enum Transition {
    /// Still receiving (a valid chunk: no record).
    Receiving(Box<Receiving>),
    /// Ended `aborted|expired|failed`: its one terminal result.
    Ended(Box<ImportAck>),
    /// Committed: its one terminal result and the manifest, correlated with the prompt.
    Committed(Box<(ImportAck, Uuid<'static>, AttachmentRef)>),
}

/// One acknowledgement the lifecycle emits (WIRE-019).
// An owned `Uuid` is 36 bytes inline (no allocation), which puts `Result` just past the lint's
// 200-byte gap; an acknowledgement is a short-lived return value, not worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum ImportAck {
    /// `attachment_import_result`: `accepted`, or the one terminal result of a lifecycle.
    Result(ImportResult<'static>),
    /// `attachment_import_rejected`: an operation that could not join a lifecycle.
    Rejected(ImportRejected<'static>),
}

impl ImportAck {
    /// The output record to write.
    pub fn into_record(self) -> OutputRecord<'static> {
        match self {
            ImportAck::Result(r) => OutputRecord::AttachmentImportResult(r),
            ImportAck::Rejected(r) => OutputRecord::AttachmentImportRejected(r),
        }
    }

    /// True for a terminal `attachment_import_result`.
    pub fn is_terminal(&self) -> bool {
        matches!(self, ImportAck::Result(r) if r.terminal())
    }

    pub(crate) fn rejected(upload_id: &UploadId<'_>, reason: ReasonCode) -> ImportAck {
        ImportAck::Rejected(ImportRejected {
            upload_id: upload_id.clone().into_owned(),
            reason,
        })
    }
}

/// The terminal status a reason ends an upload with (WIRE-019): the client's abort, a
/// cancellation and input EOF abort it; the timeout expires it; anything else fails it.
pub fn terminal_status(reason: ReasonCode) -> ImportStatus {
    match reason {
        ReasonCode::ClientAbort | ReasonCode::Cancelled | ReasonCode::InputEof => {
            ImportStatus::Aborted
        }
        ReasonCode::Timeout => ImportStatus::Expired,
        _ => ImportStatus::Failed,
    }
}

impl Receiving {
    fn result(
        &self,
        status: ImportStatus,
        attachment: Option<AttachmentRef>,
        reason: Option<ReasonCode>,
    ) -> ImportAck {
        ImportAck::Result(ImportResult {
            upload_id: self.upload_id.clone(),
            attachment_id: self.attachment_id.clone(),
            status,
            prompt_uuid: self.prompt_uuid.clone(),
            attachment,
            reason,
        })
    }

    /// The `accepted` result of the `begin` that created this state.
    pub(crate) fn accepted(&self) -> ImportAck {
        self.result(ImportStatus::Accepted, None, None)
    }

    /// Ends the upload without a commit: the claim is released, the bytes dropped, and the
    /// one terminal result (`aborted|expired|failed` with `reason`) returned.
    pub(crate) fn end<B: BlobBackend>(
        self,
        store: &mut BlobStore<B>,
        reason: ReasonCode,
    ) -> ImportAck {
        let ack = self.result(terminal_status(reason), None, Some(reason));
        store.release_claim(self.claim);
        ack
    }

    /// Admits chunk `sequence` (WIRE-018). A valid chunk keeps the upload receiving and emits
    /// nothing; an invalid one ends it `failed` with the chunk's reason.
    pub(crate) fn chunk<B: BlobBackend>(
        mut self: Box<Self>,
        store: &mut BlobStore<B>,
        sequence: u64,
        data: &[u8],
    ) -> Transition {
        match self.payload.admit_chunk(sequence, data) {
            Ok(()) => Transition::Receiving(self),
            Err(reason) => Transition::Ended(Box::new(self.end(store, reason))),
        }
    }

    /// Commits: declared size and digest (`size_mismatch`, `digest_mismatch`), normalization
    /// (PROFILE §6a: MIME and magic, image re-encode, PDF validation), then the blob store
    /// (`storage_full`, `manifest_store_full`). The claim of the declared size is released
    /// before the normalized blob is reserved, so the upload never competes with itself.
    pub(crate) fn commit<B: BlobBackend>(
        self,
        store: &mut BlobStore<B>,
        limits: &super::Limits,
    ) -> Transition {
        let Receiving {
            upload_id,
            prompt_uuid,
            attachment_id,
            name,
            media,
            payload,
            claim,
            deadline: _,
        } = self;
        let raw_sha256 = payload.declared_sha256();
        let outcome = payload
            .finish()
            .and_then(|raw| admit::normalize_owned(media, raw, raw_sha256, limits));
        store.release_claim(claim);
        let outcome =
            outcome.and_then(|normalized| admit::commit(store, &normalized, &attachment_id, &name));
        let (status, attachment, reason) = match &outcome {
            Ok(manifest) => (ImportStatus::Committed, Some(manifest.clone()), None),
            Err(reason) => (terminal_status(*reason), None, Some(*reason)),
        };
        let ack = ImportAck::Result(ImportResult {
            upload_id,
            attachment_id,
            status,
            prompt_uuid: prompt_uuid.clone(),
            attachment,
            reason,
        });
        match outcome {
            Ok(manifest) => Transition::Committed(Box::new((ack, prompt_uuid, manifest))),
            Err(_) => Transition::Ended(Box::new(ack)),
        }
    }
}
