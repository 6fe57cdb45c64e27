//! Attachment import records: the four closed `attachment_import` operations (WIRE-018) and
//! their acknowledgements `attachment_import_result` / `attachment_import_rejected` (WIRE-019).
//!
//! Owns the PROFILE §2b split. *Schema* violations of an operation — the member set, member
//! types, `version`, `operation`, the `upl_`/`att_` grammars and the canonical `prompt_uuid`
//! — are fatal input-stream errors (WIRE-021). *Semantic* violations this layer can see
//! (a zero `size_bytes`, a `sha256` that is not 64 lowercase hex, a negative `sequence`) are
//! record-level errors carrying the `upload_id` and a PROFILE §6 reason code, so `attach` can
//! settle the upload with a terminal `failed` result and the stream goes on. Base64, chunk
//! sizes, sequence order, digests, MIME and limits are `attach`'s. Never does I/O.

use crate::json::{Object, Value};

use super::attachment_ref::AttachmentRef;
use super::decode::{req, take, Closed, IntoOwned, Obj, Path, Text, WireValue};
use super::error::Error;
use super::grammar::{AttachmentId, Sha256Hex, UploadId, Uuid};
use super::table::wire_enum;

const RULE: &str = "WIRE-018";

wire_enum! {
    /// PROFILE §6: the reason of a terminal or rejected attachment result.
    pub enum ReasonCode : "a PROFILE §6 reason code", "PROFILE §6" {
        ClientAbort = "client_abort",
        Cancelled = "cancelled",
        Timeout = "timeout",
        InputEof = "input_eof",
        ProcessFailure = "process_failure",
        SchemaInvalid = "schema_invalid",
        UnknownUpload = "unknown_upload",
        DuplicateUpload = "duplicate_upload",
        TooManyActiveUploads = "too_many_active_uploads",
        UploadLedgerFull = "upload_ledger_full",
        ManifestStoreFull = "manifest_store_full",
        StorageFull = "storage_full",
        SequenceGap = "sequence_gap",
        ChunkTooLarge = "chunk_too_large",
        NoncanonicalBase64 = "noncanonical_base64",
        SizeMismatch = "size_mismatch",
        DigestMismatch = "digest_mismatch",
        MimeUnsupported = "mime_unsupported",
        MimeMismatch = "mime_mismatch",
        ItemTooLarge = "item_too_large",
        AggregateTooLarge = "aggregate_too_large",
        ImageTooLarge = "image_too_large",
        ImageDecodeFailed = "image_decode_failed",
        PdfInvalid = "pdf_invalid",
        PdfEncrypted = "pdf_encrypted",
        PdfTooManyPages = "pdf_too_many_pages",
        AfterTerminal = "after_terminal",
        CapabilityAbsent = "capability_absent",
    }
}

/// One `attachment_import` operation. Canonical member order: `type, version, operation`,
/// then the members in the order WIRE-018 shows them.
#[derive(Clone, Debug, PartialEq)]
pub enum ImportOperation<'a> {
    /// `operation: "begin"`: declares one upload.
    Begin(ImportBegin<'a>),
    /// `operation: "chunk"`: the next base64 piece.
    Chunk(ImportChunk<'a>),
    /// `operation: "commit"`: verify and store.
    Commit {
        /// The upload being committed.
        upload_id: UploadId<'a>,
    },
    /// `operation: "abort"`: discard the upload.
    Abort {
        /// The upload being aborted.
        upload_id: UploadId<'a>,
    },
}

/// `operation: "begin"`: the raw declaration before any byte is admitted.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportBegin<'a> {
    /// The UUID of the user record this upload belongs to (WIRE-020).
    pub prompt_uuid: Uuid<'a>,
    /// The upload ID (`upl_…`) correlating every operation of one upload.
    pub upload_id: UploadId<'a>,
    /// The attachment ID a user record references once the upload commits.
    pub attachment_id: AttachmentId<'a>,
    /// The file name (a path-free name).
    pub name: Text<'a>,
    /// Positive raw decoded size.
    pub size_bytes: u64,
    /// The declared MIME type (PROFILE §6 admits it).
    pub mime_type: Text<'a>,
    /// The declared SHA-256 of the decoded bytes, lowercase hex.
    pub sha256: Sha256Hex<'a>,
}

/// `operation: "chunk"`: base64 `data` is kept as text; `attach` validates it.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportChunk<'a> {
    /// The upload ID (`upl_…`) correlating every operation of one upload.
    pub upload_id: UploadId<'a>,
    /// The chunk's position, from 0 with no gaps or repeats.
    pub sequence: u64,
    /// Canonical padded base64 (validated by `attach`).
    pub data: Text<'a>,
}

const BEGIN: &[usize] = &[4, 5, 6, 7, 8, 9];
const CHUNK: &[usize] = &[10, 11];

impl<'a> ImportOperation<'a> {
    /// The upload this operation belongs to.
    pub fn upload_id(&self) -> &UploadId<'a> {
        match self {
            ImportOperation::Begin(b) => &b.upload_id,
            ImportOperation::Chunk(c) => &c.upload_id,
            ImportOperation::Commit { upload_id } | ImportOperation::Abort { upload_id } => {
                upload_id
            }
        }
    }

    /// The `operation` member's value.
    pub fn operation(&self) -> &'static str {
        match self {
            ImportOperation::Begin(_) => "begin",
            ImportOperation::Chunk(_) => "chunk",
            ImportOperation::Commit { .. } => "commit",
            ImportOperation::Abort { .. } => "abort",
        }
    }

    pub(crate) fn decode_members(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        const NAMES: &[&str] = &[
            "version",
            "operation",
            "upload_id",
            "type",
            "prompt_uuid",
            "attachment_id",
            "name",
            "size_bytes",
            "mime_type",
            "sha256",
            "sequence",
            "data",
        ];
        let mut s: [Option<Value<'_, 'a>>; 12] = [None; 12];
        // Every schema failure below is fatal (PROFILE §2b, WIRE-021).
        take(obj, NAMES, &mut s, Closed::Yes("WIRE-021"), at).map_err(Error::fatal)?;
        let version: u64 = req(s[0], &at.key("version"), RULE).map_err(Error::fatal)?;
        if version != 1 {
            return Err(Error::invalid(&at.key("version"), "version 1", RULE).fatal());
        }
        let op_at = at.key("operation");
        let op: Text<'a> = req(s[1], &op_at, RULE).map_err(Error::fatal)?;
        let own: &[usize] = match &*op {
            "begin" => BEGIN,
            "chunk" => CHUNK,
            "commit" | "abort" => &[],
            _ => return Err(Error::invalid(&op_at, "begin, chunk, commit or abort", RULE).fatal()),
        };
        let upload_id: UploadId<'a> =
            req(s[2], &at.key("upload_id"), RULE).map_err(Error::fatal)?;
        let corr = |e: Error| e.correlated(upload_id.as_str());
        // Members of another operation are unknown here; missing own members are errors.
        for (i, (slot, name)) in s.iter().zip(NAMES).enumerate().skip(4) {
            if slot.is_some() && !own.contains(&i) {
                let e = Error::invalid(&at.key(name), "no member of another operation", "WIRE-021");
                return Err(corr(e).fatal());
            }
        }
        let fatal = |e: Error| e.correlated(upload_id.as_str()).fatal();
        match &*op {
            "begin" => {
                let prompt_uuid: Uuid<'a> =
                    req(s[4], &at.key("prompt_uuid"), RULE).map_err(fatal)?;
                let attachment_id: AttachmentId<'a> =
                    req(s[5], &at.key("attachment_id"), RULE).map_err(fatal)?;
                let name: Text<'a> = req(s[6], &at.key("name"), RULE).map_err(fatal)?;
                let size_at = at.key("size_bytes");
                let size_bytes: u64 = req(s[7], &size_at, RULE).map_err(|e| {
                    // A negative or huge integer is a value problem (semantic); a
                    // non-integer is a member-type problem (schema).
                    if e.kind() == super::ErrorKind::Invalid {
                        corr(e).with_reason(ReasonCode::SchemaInvalid.as_str())
                    } else {
                        fatal(e)
                    }
                })?;
                if size_bytes == 0 {
                    let e = Error::invalid(&size_at, "a positive size", RULE);
                    return Err(corr(e).with_reason(ReasonCode::SchemaInvalid.as_str()));
                }
                let mime_type: Text<'a> = req(s[8], &at.key("mime_type"), RULE).map_err(fatal)?;
                let sha_at = at.key("sha256");
                let sha: Text<'a> = req(s[9], &sha_at, RULE).map_err(fatal)?;
                let Some(sha256) = Sha256Hex::new(sha) else {
                    let e = Error::invalid(&sha_at, "64 lowercase hex digits", RULE);
                    return Err(corr(e).with_reason(ReasonCode::SchemaInvalid.as_str()));
                };
                Ok(ImportOperation::Begin(ImportBegin {
                    prompt_uuid,
                    upload_id,
                    attachment_id,
                    name,
                    size_bytes,
                    mime_type,
                    sha256,
                }))
            }
            "chunk" => {
                let seq_at = at.key("sequence");
                let sequence: u64 = req(s[10], &seq_at, RULE).map_err(|e| {
                    if e.kind() == super::ErrorKind::Invalid {
                        corr(e).with_reason(ReasonCode::SequenceGap.as_str())
                    } else {
                        fatal(e)
                    }
                })?;
                let data: Text<'a> = req(s[11], &at.key("data"), RULE).map_err(fatal)?;
                Ok(ImportOperation::Chunk(ImportChunk {
                    upload_id,
                    sequence,
                    data,
                }))
            }
            "commit" => Ok(ImportOperation::Commit { upload_id }),
            _ => Ok(ImportOperation::Abort { upload_id }),
        }
    }

    /// Writes the complete record.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"attachment_import\"");
        w.constant("\"version\":1");
        match self {
            ImportOperation::Begin(b) => {
                w.constant("\"operation\":\"begin\"");
                b.prompt_uuid.encode(w.key("\"prompt_uuid\":"));
                b.upload_id.encode(w.key("\"upload_id\":"));
                b.attachment_id.encode(w.key("\"attachment_id\":"));
                b.name.encode(w.key("\"name\":"));
                b.size_bytes.encode(w.key("\"size_bytes\":"));
                b.mime_type.encode(w.key("\"mime_type\":"));
                b.sha256.encode(w.key("\"sha256\":"));
            }
            ImportOperation::Chunk(c) => {
                w.constant("\"operation\":\"chunk\"");
                c.upload_id.encode(w.key("\"upload_id\":"));
                c.sequence.encode(w.key("\"sequence\":"));
                c.data.encode(w.key("\"data\":"));
            }
            ImportOperation::Commit { upload_id } => {
                w.constant("\"operation\":\"commit\"");
                upload_id.encode(w.key("\"upload_id\":"));
            }
            ImportOperation::Abort { upload_id } => {
                w.constant("\"operation\":\"abort\"");
                upload_id.encode(w.key("\"upload_id\":"));
            }
        }
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> ImportOperation<'static> {
        match self {
            ImportOperation::Begin(b) => ImportOperation::Begin(ImportBegin {
                prompt_uuid: b.prompt_uuid.into_owned(),
                upload_id: b.upload_id.into_owned(),
                attachment_id: b.attachment_id.into_owned(),
                name: IntoOwned::into_owned(b.name),
                size_bytes: b.size_bytes,
                mime_type: IntoOwned::into_owned(b.mime_type),
                sha256: b.sha256.into_owned(),
            }),
            ImportOperation::Chunk(c) => ImportOperation::Chunk(ImportChunk {
                upload_id: c.upload_id.into_owned(),
                sequence: c.sequence,
                data: IntoOwned::into_owned(c.data),
            }),
            ImportOperation::Commit { upload_id } => ImportOperation::Commit {
                upload_id: upload_id.into_owned(),
            },
            ImportOperation::Abort { upload_id } => ImportOperation::Abort {
                upload_id: upload_id.into_owned(),
            },
        }
    }
}

wire_enum! {
    /// `status` of an `attachment_import_result` (WIRE-019).
    pub enum ImportStatus : "accepted, committed, aborted, expired or failed", "WIRE-019" {
        Accepted = "accepted",
        Committed = "committed",
        Aborted = "aborted",
        Expired = "expired",
        Failed = "failed",
    }
}

/// `attachment_import_result` (WIRE-019). Canonical order: `type, version, upload_id,
/// attachment_id, status, terminal, prompt_uuid, attachment, reason`. Invariants checked on
/// decode: `accepted` is not terminal and has neither attachment nor reason; `committed` is
/// terminal with the complete manifest, whose `attachment_id` is the record's; `aborted|expired|failed`
/// are terminal with a reason.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportResult<'a> {
    /// The upload ID (`upl_…`) correlating every operation of one upload.
    pub upload_id: UploadId<'a>,
    /// The attachment ID a user record references once the upload commits.
    pub attachment_id: AttachmentId<'a>,
    /// `accepted`, `committed`, `aborted`, `expired` or `failed`.
    pub status: ImportStatus,
    /// The UUID of the user record this upload belongs to (WIRE-020).
    pub prompt_uuid: Uuid<'a>,
    /// The committed manifest (`committed` only).
    pub attachment: Option<AttachmentRef>,
    /// `aborted`, `expired`, `failed` only.
    pub reason: Option<ReasonCode>,
}

impl<'a> ImportResult<'a> {
    /// `terminal` is derived from `status`.
    pub fn terminal(&self) -> bool {
        self.status != ImportStatus::Accepted
    }

    pub(crate) fn decode_members(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        const NAMES: &[&str] = &[
            "version",
            "upload_id",
            "attachment_id",
            "status",
            "terminal",
            "prompt_uuid",
            "attachment",
            "reason",
            "type",
        ];
        let mut s: [Option<Value<'_, 'a>>; 9] = [None; 9];
        take(obj, NAMES, &mut s, Closed::Yes("WIRE-019"), at)?;
        let version: u64 = req(s[0], &at.key("version"), "WIRE-019")?;
        if version != 1 {
            return Err(Error::invalid(&at.key("version"), "version 1", "WIRE-019"));
        }
        let r = ImportResult {
            upload_id: req(s[1], &at.key("upload_id"), "WIRE-019")?,
            attachment_id: req(s[2], &at.key("attachment_id"), "WIRE-019")?,
            status: req(s[3], &at.key("status"), "WIRE-019")?,
            prompt_uuid: req(s[5], &at.key("prompt_uuid"), "WIRE-019")?,
            attachment: super::decode::opt(s[6], &at.key("attachment"))?,
            reason: super::decode::opt(s[7], &at.key("reason"))?,
        };
        let terminal: bool = req(s[4], &at.key("terminal"), "WIRE-019")?;
        if terminal != r.terminal() {
            return Err(Error::invalid(
                &at.key("terminal"),
                "terminal false exactly for accepted",
                "WIRE-019",
            ));
        }
        let committed = r.status == ImportStatus::Committed;
        if committed != r.attachment.is_some() {
            return Err(Error::invalid(
                &at.key("attachment"),
                "a manifest exactly when committed",
                "WIRE-019",
            ));
        }
        if let Some(m) = &r.attachment {
            // WIRE-019 "the same correlations": the manifest is the record's attachment.
            if m.attachment_id != r.attachment_id.as_str() {
                return Err(Error::invalid(
                    &at.key("attachment").key("attachment_id"),
                    "the record's attachment_id",
                    "WIRE-019",
                ));
            }
        }
        let ended = matches!(
            r.status,
            ImportStatus::Aborted | ImportStatus::Expired | ImportStatus::Failed
        );
        if ended != r.reason.is_some() {
            return Err(Error::invalid(
                &at.key("reason"),
                "a reason exactly when aborted, expired or failed",
                "WIRE-019",
            ));
        }
        Ok(r)
    }

    /// Appends the canonical JSON (one object, no newline) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"attachment_import_result\"");
        w.constant("\"version\":1");
        self.upload_id.encode(w.key("\"upload_id\":"));
        self.attachment_id.encode(w.key("\"attachment_id\":"));
        self.status.encode(w.key("\"status\":"));
        self.terminal().encode(w.key("\"terminal\":"));
        self.prompt_uuid.encode(w.key("\"prompt_uuid\":"));
        if let Some(a) = &self.attachment {
            a.encode(w.key("\"attachment\":"));
        }
        if let Some(r) = &self.reason {
            r.encode(w.key("\"reason\":"));
        }
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> ImportResult<'static> {
        ImportResult {
            upload_id: self.upload_id.into_owned(),
            attachment_id: self.attachment_id.into_owned(),
            status: self.status,
            prompt_uuid: self.prompt_uuid.into_owned(),
            attachment: self.attachment,
            reason: self.reason,
        }
    }
}

/// `attachment_import_rejected` (WIRE-019): an operation that cannot join an accepted
/// lifecycle. Canonical order: `type, version, upload_id, status, terminal, reason`
/// (`status` is always `rejected`, `terminal` always `false`).
#[derive(Clone, Debug, PartialEq)]
pub struct ImportRejected<'a> {
    /// The upload ID (`upl_…`) correlating every operation of one upload.
    pub upload_id: UploadId<'a>,
    /// Why the operation was refused (PROFILE §6).
    pub reason: ReasonCode,
}

impl<'a> ImportRejected<'a> {
    pub(crate) fn decode_members(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        const NAMES: &[&str] = &[
            "version",
            "upload_id",
            "status",
            "terminal",
            "reason",
            "type",
        ];
        let mut s: [Option<Value<'_, 'a>>; 6] = [None; 6];
        take(obj, NAMES, &mut s, Closed::Yes("WIRE-019"), at)?;
        let version: u64 = req(s[0], &at.key("version"), "WIRE-019")?;
        if version != 1 {
            return Err(Error::invalid(&at.key("version"), "version 1", "WIRE-019"));
        }
        let status: Text<'_> = req(s[2], &at.key("status"), "WIRE-019")?;
        if status != "rejected" {
            return Err(Error::invalid(
                &at.key("status"),
                "\"rejected\"",
                "WIRE-019",
            ));
        }
        let terminal: bool = req(s[3], &at.key("terminal"), "WIRE-019")?;
        if terminal {
            return Err(Error::invalid(&at.key("terminal"), "false", "WIRE-019"));
        }
        Ok(ImportRejected {
            upload_id: req(s[1], &at.key("upload_id"), "WIRE-019")?,
            reason: req(s[4], &at.key("reason"), "WIRE-019")?,
        })
    }

    /// Appends the canonical JSON (one object, no newline) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"attachment_import_rejected\"");
        w.constant("\"version\":1");
        self.upload_id.encode(w.key("\"upload_id\":"));
        w.constant("\"status\":\"rejected\"");
        w.constant("\"terminal\":false");
        self.reason.encode(w.key("\"reason\":"));
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> ImportRejected<'static> {
        ImportRejected {
            upload_id: self.upload_id.into_owned(),
            reason: self.reason,
        }
    }
}

impl std::fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::error::Error for ReasonCode {}
