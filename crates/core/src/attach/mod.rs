//! Attachment admission: the media half of the `attach` layer.
//!
//! Owns strict base64 chunk admission with a running size and SHA-256 (`chunk`), type
//! admission and normalization (`media`, `png`, `jpeg`, `pdf`), the content-addressed blob
//! store and manifest ledger (`store`; its files are `agentx-home`'s), the pipeline that orders them (`admit`),
//! and the closed reason vocabulary every failure uses (`reason`, PROFILE §6).
//!
//! Works on bytes and is I/O-free: the blob store's bytes go through the `BlobBackend` trait
//! (`agentx-home` keeps them in files, `MemoryBackend` in memory). It never reads a clock or
//! spawns, except `pdf_contain`, which runs lopdf on a thread with a wall-clock budget. It never writes outside AgentX home, and never lets bytes, base64 or paths reach a
//! manifest, a reason or a `Debug` string (WIRE-022). The upload state machine
//! (begin/chunk/commit/abort, acknowledgements, timeout, prompt correlation) is `upload`,
//! `upload_lifecycle` and `upload_prompt`: sans-IO, time passed in as `now`.
//!
//! Typical flow for one stream upload:
//! `ChunkedPayload::new` at begin → `admit_chunk` per chunk → `finish` at commit →
//! `admit::normalize` → `admit::commit` into a `BlobStore` → the `AttachmentRef`.

pub mod admit;
pub mod chunk;
pub mod digest;
pub mod image;
pub mod jpeg;
pub mod limits;
pub mod media;
pub mod pdf;
mod pdf_contain;
pub mod png;
mod png_write;
pub mod reason;
pub mod store;
pub mod upload_lifecycle;
pub mod upload_prompt;
pub mod uploads;

pub use admit::{admit_file, commit, normalize, AggregateBudget, Normalized};
pub use chunk::ChunkedPayload;
pub use digest::{IncrementalDigest, Sha256Digest};
pub use limits::Limits;
pub use media::MediaType;
pub use reason::ReasonCode;
pub use store::{
    BlobBackend, BlobStore, ByteClaim, MemoryBackend, Reclaimed, Reservation, StoredBlob,
    RECLAIM_AFTER_SECS,
};
pub use upload_lifecycle::ImportAck;
pub use upload_prompt::{AttachmentRefError, PromptAdmission};
pub use uploads::Uploads;
