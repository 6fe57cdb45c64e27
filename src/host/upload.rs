//! Uploads from the host (WIRE-018..019): begin, chunks of the advertised size, commit, and
//! the committed manifest to reference from a user message (WIRE-020).

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};

use super::client::{Client, ImportEvent};
use super::error::HostError;
use crate::wire::grammar::{AttachmentId, Sha256Hex, UploadId, Uuid};
use crate::wire::import::{ImportBegin, ImportChunk, ImportOperation, ImportStatus};
use crate::wire::{AttachmentRef, InputRecord};

/// What to upload.
#[derive(Clone, Copy, Debug)]
pub enum UploadSource<'a> {
    /// A file, read whole before `begin` (its size and digest are declared up front).
    Path(&'a Path),
    /// Bytes in memory.
    Bytes(&'a [u8]),
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex(digest: &[u8]) -> String {
    let mut s = String::with_capacity(digest.len() * 2);
    for b in digest {
        s.push(HEX[usize::from(b >> 4)] as char);
        s.push(HEX[usize::from(b & 15)] as char);
    }
    s
}

impl Client {
    /// Uploads one attachment for the prompt `prompt_uuid` and returns its committed manifest
    /// (image normalization may change size and digest: reference this manifest, WIRE-019).
    /// Refuses without advertised `input_capabilities` (call [`Client::initialize`] first).
    /// `timeout` bounds each wait for an acknowledgement.
    pub fn upload(
        &self,
        source: UploadSource<'_>,
        name: &str,
        mime_type: &str,
        prompt_uuid: &str,
        timeout: Duration,
    ) -> Result<AttachmentRef, HostError> {
        let caps = self
            .shared
            .capabilities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or(HostError::AttachmentsUnavailable)?;
        let owned;
        let bytes: &[u8] = match source {
            UploadSource::Bytes(b) => b,
            UploadSource::Path(p) => {
                owned = std::fs::read(p)?;
                &owned
            }
        };
        let chunk_size = usize::try_from(caps.limits.max_chunk_decoded_bytes)
            .unwrap_or(usize::MAX)
            .max(1);
        let n = self.shared_next_upload();
        let upload_id = format!("upl_h{n}");
        let attachment_id = format!("att_h{n}");
        let bad = |what: &str| HostError::Upload {
            status: "rejected".into(),
            reason: what.into(),
        };
        let uid = || UploadId::new(upload_id.clone()).ok_or_else(|| bad("schema_invalid"));
        let (tx, rx) = mpsc::channel();
        self.shared.pending().uploads.insert(upload_id.clone(), tx);
        let result = (|| {
            let begin = ImportBegin {
                prompt_uuid: Uuid::new(prompt_uuid.to_owned())
                    .ok_or_else(|| bad("schema_invalid"))?,
                upload_id: uid()?,
                attachment_id: AttachmentId::new(attachment_id.clone())
                    .ok_or_else(|| bad("schema_invalid"))?,
                name: name.to_owned().into(),
                size_bytes: bytes.len() as u64,
                mime_type: mime_type.to_owned().into(),
                sha256: Sha256Hex::new(hex(&Sha256::digest(bytes))).ok_or_else(|| bad("digest"))?,
            };
            self.send(&InputRecord::AttachmentImport(ImportOperation::Begin(
                begin,
            )))?;
            match wait(&rx, timeout)? {
                Ok(r) if r.status == ImportStatus::Accepted => {}
                other => return Err(ended(other)),
            }
            for (sequence, chunk) in bytes.chunks(chunk_size).enumerate() {
                // A terminal failure can arrive while chunks are in flight: stop at once.
                if let Ok(event) = rx.try_recv() {
                    return Err(ended(event));
                }
                let data = base64_simd::STANDARD.encode_to_string(chunk);
                let op = ImportOperation::Chunk(ImportChunk {
                    upload_id: uid()?,
                    sequence: sequence as u64,
                    data: data.into(),
                });
                self.send(&InputRecord::AttachmentImport(op))?;
            }
            self.send(&InputRecord::AttachmentImport(ImportOperation::Commit {
                upload_id: uid()?,
            }))?;
            match wait(&rx, timeout)? {
                Ok(r) if r.status == ImportStatus::Committed => r
                    .attachment
                    .ok_or_else(|| bad("committed without a manifest")),
                other => Err(ended(other)),
            }
        })();
        self.shared.pending().uploads.remove(&upload_id);
        result
    }

    fn shared_next_upload(&self) -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        NEXT.fetch_add(1, Ordering::Relaxed) + 1
    }
}

fn wait(rx: &mpsc::Receiver<ImportEvent>, timeout: Duration) -> Result<ImportEvent, HostError> {
    let deadline = Instant::now() + timeout;
    rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        .map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => HostError::Timeout {
                subtype: "attachment_import",
            },
            mpsc::RecvTimeoutError::Disconnected => HostError::StreamClosed,
        })
}

fn ended(event: ImportEvent) -> HostError {
    match event {
        Ok(r) => HostError::Upload {
            status: r.status.as_str().to_owned(),
            reason: r.reason.map_or("none", |c| c.as_str()).to_owned(),
        },
        Err(rej) => HostError::Upload {
            status: "rejected".into(),
            reason: rej.reason.as_str().to_owned(),
        },
    }
}
