//! Uploads from the host (WIRE-018..019): begin, chunks of the advertised size, commit, and
//! the committed manifest to reference from a user message (WIRE-020).
//!
//! Owns the upload protocol of both clients: [`Plan`] builds one upload's records (IDs, the
//! declared size and SHA-256, chunks of the advertised `max_chunk_decoded_bytes`) and judges
//! its acknowledgements; [`Client::upload`] and [`AsyncClient::upload`] only send those
//! records and wait for the acknowledgements their read loops route here by upload ID. An
//! upload abandoned before its terminal acknowledgement (a timeout, or a dropped async
//! future) is aborted on the wire, so the agent does not hold the lifecycle until its own
//! 120 s timeout. Never blocks a read loop and never logs the bytes.

use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};

use super::client::Client;
use super::detached::{hand_over, write_by};
use super::error::{HostError, ResponseFault, UploadStatus};
use super::stream::ImportEvent;
use agentx_wire::wire::grammar::{AttachmentId, Sha256Hex, UploadId, Uuid};
use agentx_wire::wire::import::{
    ImportBegin, ImportChunk, ImportOperation, ImportStatus, ReasonCode,
};
use agentx_wire::wire::system_init::AttachmentCapabilities;
use agentx_wire::wire::{AttachmentRef, InputRecord};

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

/// An upload the client cannot send as asked (an ID or digest outside its grammar):
/// `rejected` with `schema_invalid`, as the agent would reject it.
#[cold]
fn invalid() -> HostError {
    HostError::Upload {
        status: UploadStatus::Rejected,
        reason: Some(ReasonCode::SchemaInvalid),
    }
}

/// One upload's records, numbered `n` by its client (`upl_h<n>`, `att_h<n>`).
pub(crate) struct Plan<'b> {
    upload_id: String,
    attachment_id: String,
    bytes: &'b [u8],
    chunk_size: usize,
}

impl<'b> Plan<'b> {
    pub(crate) fn new(caps: &AttachmentCapabilities<'_>, n: u64, bytes: &'b [u8]) -> Plan<'b> {
        Plan {
            upload_id: format!("upl_h{n}"),
            attachment_id: format!("att_h{n}"),
            bytes,
            chunk_size: usize::try_from(caps.limits.max_chunk_decoded_bytes)
                .unwrap_or(usize::MAX)
                .max(1),
        }
    }

    pub(crate) fn upload_id(&self) -> &str {
        &self.upload_id
    }

    fn id(&self) -> Result<UploadId<'static>, HostError> {
        UploadId::new(self.upload_id.clone()).ok_or_else(invalid)
    }

    /// `begin` with the raw size and SHA-256 declared before any byte (WIRE-018).
    pub(crate) fn begin(
        &self,
        name: &str,
        mime_type: &str,
        prompt_uuid: &str,
    ) -> Result<InputRecord<'static>, HostError> {
        let begin = ImportBegin {
            prompt_uuid: Uuid::new(prompt_uuid.to_owned()).ok_or_else(invalid)?,
            upload_id: self.id()?,
            attachment_id: AttachmentId::new(self.attachment_id.clone()).ok_or_else(invalid)?,
            name: name.to_owned().into(),
            size_bytes: self.bytes.len() as u64,
            mime_type: mime_type.to_owned().into(),
            sha256: Sha256Hex::new(hex(&Sha256::digest(self.bytes))).ok_or_else(invalid)?,
        };
        Ok(InputRecord::AttachmentImport(ImportOperation::Begin(begin)))
    }

    /// The chunks in sequence, each encoded only when it is taken.
    pub(crate) fn chunks(
        &self,
    ) -> impl Iterator<Item = Result<InputRecord<'static>, HostError>> + '_ {
        self.bytes
            .chunks(self.chunk_size)
            .enumerate()
            .map(|(sequence, chunk)| {
                Ok(InputRecord::AttachmentImport(ImportOperation::Chunk(
                    ImportChunk {
                        upload_id: self.id()?,
                        sequence: sequence as u64,
                        data: base64_simd::STANDARD.encode_to_string(chunk).into(),
                    },
                )))
            })
    }

    pub(crate) fn commit(&self) -> Result<InputRecord<'static>, HostError> {
        Ok(InputRecord::AttachmentImport(ImportOperation::Commit {
            upload_id: self.id()?,
        }))
    }

    pub(crate) fn abort(&self) -> Result<InputRecord<'static>, HostError> {
        Ok(InputRecord::AttachmentImport(ImportOperation::Abort {
            upload_id: self.id()?,
        }))
    }
}

/// The acknowledgement of `begin`: `accepted`, or why the upload cannot start.
pub(crate) fn accepted(event: ImportEvent) -> Result<(), HostError> {
    match event {
        Ok(r) if r.status == ImportStatus::Accepted => Ok(()),
        other => Err(ended(other)),
    }
}

/// The terminal acknowledgement: the committed manifest, or why the upload ended.
pub(crate) fn committed(event: ImportEvent) -> Result<AttachmentRef, HostError> {
    match event {
        Ok(r) if r.status == ImportStatus::Committed => {
            r.attachment.ok_or(HostError::InvalidResponse {
                subtype: "attachment_import",
                reason: ResponseFault::NoManifest,
            })
        }
        other => Err(ended(other)),
    }
}

/// An acknowledgement that ends the upload without a manifest.
pub(crate) fn ended(event: ImportEvent) -> HostError {
    match event {
        Ok(r) => HostError::Upload {
            status: UploadStatus::Ended(r.status),
            reason: r.reason,
        },
        Err(rej) => HostError::Upload {
            status: UploadStatus::Rejected,
            reason: Some(rej.reason),
        },
    }
}

impl Client {
    /// Uploads one attachment for the prompt `prompt_uuid` and returns its committed manifest
    /// (image normalization may change size and digest: reference this manifest, WIRE-019).
    /// Refuses without advertised `input_capabilities` (call [`Client::initialize`] first).
    /// `timeout` bounds each wait for an acknowledgement; an upload that times out is
    /// aborted on the wire.
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, Client, ClientOptions, UploadSource};
    /// use std::time::Duration;
    /// let t = Duration::from_secs(30);
    /// let client = Client::spawn(&AgentCommand::stream_json("agentx"), ClientOptions::default())?;
    /// client.initialize(t)?;
    /// let prompt = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
    /// let png = std::path::Path::new("screen.png");
    /// let manifest = client.upload(UploadSource::Path(png), "screen.png", "image/png", prompt, t)?;
    /// println!("{} {}", manifest.attachment_id, manifest.sha256);
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn upload(
        &self,
        source: UploadSource<'_>,
        name: &str,
        mime_type: &str,
        prompt_uuid: &str,
        timeout: Duration,
    ) -> Result<AttachmentRef, HostError> {
        self.shared.accepting()?;
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
        let n = self
            .shared
            .next_upload
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        let plan = Plan::new(&caps, n, bytes);
        let (tx, rx) = mpsc::sync_channel(super::pending::IMPORT_EVENTS);
        self.shared.pending().register_upload(plan.upload_id(), tx);
        // The output is read while the upload waits for its acknowledgements.
        let _reading = self.shared.inbound.demand();
        let mut live = false;
        // Each record is written by the client's writer thread within `timeout`
        // (`host::detached`): an agent that stopped reading its stdin times the upload out.
        let send = |record| {
            write_by(
                &self.shared,
                vec![record],
                Instant::now() + timeout,
                "attachment_import",
            )
        };
        let mut run = || {
            send(plan.begin(name, mime_type, prompt_uuid)?)?;
            accepted(wait(&rx, timeout)?)?;
            live = true;
            for chunk in plan.chunks() {
                // A terminal failure can arrive while chunks are in flight: stop at once.
                if let Ok(event) = rx.try_recv() {
                    live = false;
                    return Err(ended(event));
                }
                send(chunk?)?;
            }
            send(plan.commit()?)?;
            let event = wait(&rx, timeout)?;
            live = false;
            committed(event)
        };
        let result = run();
        if live {
            // Abandoned while accepted (a timeout, a failed write): end it on the wire, after
            // whatever of it is still being written.
            let _ = plan.abort().and_then(|r| hand_over(&self.shared, vec![r]));
        }
        self.shared.pending().forget_upload(plan.upload_id());
        result
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

#[cfg(feature = "tokio")]
mod tokio_upload {
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use ::tokio::sync::mpsc;

    use super::{accepted, committed, ended, Plan, UploadSource};
    use crate::host::error::HostError;
    use crate::host::stream::ImportEvent;
    use crate::host::tokio_client::{AsyncClient, Shared};
    use agentx_wire::wire::AttachmentRef;

    /// Base64 bytes of chunk records an upload lets wait for the writer (about two chunks of
    /// the profile's 349,528-byte maximum) before it awaits the writer.
    const QUEUED_CHUNK_BYTES: usize = 1 << 20;

    /// Unregisters an upload when its future ends or is dropped; aborts it on the wire if it
    /// was abandoned between `accepted` and its terminal acknowledgement.
    struct UploadGuard<'c> {
        shared: &'c Shared,
        upload_id: String,
        abort: Option<agentx_wire::wire::InputRecord<'static>>,
    }

    impl Drop for UploadGuard<'_> {
        fn drop(&mut self) {
            self.shared.forget_upload(&self.upload_id);
            if let Some(abort) = self.abort.take() {
                let _ = self.shared.send(&abort);
            }
        }
    }

    async fn wait(
        rx: &mut mpsc::Receiver<ImportEvent>,
        timeout: Duration,
    ) -> Result<ImportEvent, HostError> {
        match ::tokio::time::timeout(timeout, rx.recv()).await {
            Err(_) => Err(HostError::Timeout {
                subtype: "attachment_import",
            }),
            Ok(None) => Err(HostError::StreamClosed),
            Ok(Some(event)) => Ok(event),
        }
    }

    impl AsyncClient {
        /// Uploads one attachment for the prompt `prompt_uuid` and returns its committed
        /// manifest, as [`Client::upload`](crate::host::Client::upload) does: refuses
        /// without advertised `input_capabilities` (call [`AsyncClient::initialize`]
        /// first), chunks of the advertised size, `timeout` per acknowledgement. An upload
        /// that times out, or whose future is dropped after `accepted`, is aborted on the
        /// wire. A file is read on the blocking pool.
        ///
        /// ```no_run
        /// # async fn run() -> Result<(), agentx_io::host::HostError> {
        /// use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions, UploadSource};
        /// use std::time::Duration;
        /// let t = Duration::from_secs(30);
        /// let cmd = AgentCommand::stream_json("agentx");
        /// let client = AsyncClient::spawn(&cmd, AsyncClientOptions::default()).await?;
        /// client.initialize(t).await?;
        /// let prompt = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
        /// let bytes = std::fs::read("doc.pdf")?;
        /// let manifest = client
        ///     .upload(UploadSource::Bytes(&bytes), "doc.pdf", "application/pdf", prompt, t)
        ///     .await?;
        /// println!("{}", manifest.storage_id);
        /// # Ok(()) }
        /// ```
        pub async fn upload(
            &self,
            source: UploadSource<'_>,
            name: &str,
            mime_type: &str,
            prompt_uuid: &str,
            timeout: Duration,
        ) -> Result<AttachmentRef, HostError> {
            let caps = self
                .shared
                .capabilities()
                .ok_or(HostError::AttachmentsUnavailable)?;
            let owned;
            let bytes: &[u8] = match source {
                UploadSource::Bytes(b) => b,
                UploadSource::Path(p) => {
                    let p = p.to_path_buf();
                    owned = ::tokio::task::spawn_blocking(move || std::fs::read(p))
                        .await
                        .map_err(|_| HostError::InputClosed)??;
                    &owned
                }
            };
            let n = self.shared.next_upload.fetch_add(1, Ordering::Relaxed) + 1;
            let plan = Plan::new(&caps, n, bytes);
            let (tx, mut rx) = mpsc::channel(crate::host::pending::IMPORT_EVENTS);
            self.shared.register_upload(plan.upload_id(), tx);
            let mut guard = UploadGuard {
                shared: &self.shared,
                upload_id: plan.upload_id().to_owned(),
                abort: None,
            };
            self.shared
                .send(&plan.begin(name, mime_type, prompt_uuid)?)?;
            accepted(wait(&mut rx, timeout).await?)?;
            guard.abort = Some(plan.abort()?);
            for chunk in plan.chunks() {
                // A terminal failure can arrive while chunks are in flight: stop at once.
                if let Ok(event) = rx.try_recv() {
                    guard.abort = None;
                    return Err(ended(event));
                }
                // Backpressure: at most about two chunks wait for the writer, not the whole
                // file's base64.
                self.shared.outgoing.until_below(QUEUED_CHUNK_BYTES).await;
                self.shared.send(&chunk?)?;
            }
            self.shared.send(&plan.commit()?)?;
            let event = wait(&mut rx, timeout).await?;
            guard.abort = None;
            committed(event)
        }
    }
}
