//! The admission limits advertised in `input_capabilities` (WIRE-018, PROFILE §6a).
//!
//! Owns the numbers and nothing else: every check that uses them lives where the data is.
//! Defaults are the protocol's advertised values; tests shrink the storage and manifest bounds
//! to reach their edges cheaply.

use core::time::Duration;

/// `max_chunk_encoded_bytes` (WIRE-018).
pub const MAX_CHUNK_ENCODED_BYTES: usize = 349_528;
/// `max_chunk_decoded_bytes` (WIRE-018).
pub const MAX_CHUNK_DECODED_BYTES: usize = 262_144;
/// `max_item_bytes` / `max_bytes` of every media type (20 MiB).
pub const MAX_ITEM_BYTES: u64 = 20_971_520;
/// `max_aggregate_bytes`: per user message (40 MiB).
pub const MAX_AGGREGATE_BYTES: u64 = 41_943_040;
/// `max_storage_bytes`: the unique-blob bound (512 MiB, WIRE-018).
pub const MAX_STORAGE_BYTES: u64 = 536_870_912;
/// Durable committed manifests (`max_uploads_per_session`, WIRE-018).
pub const MAX_MANIFESTS: u64 = 100_000;
/// `max_image_dimension` (PROFILE §6a).
pub const MAX_IMAGE_DIMENSION: u32 = 8192;
/// `max_image_pixels` (PROFILE §6a).
pub const MAX_IMAGE_PIXELS: u64 = 20_000_000;
/// `max_pdf_pages` (PROFILE §6a).
pub const MAX_PDF_PAGES: usize = 100;
/// `max_display_name_bytes`.
pub const MAX_DISPLAY_NAME_BYTES: usize = 255;
/// `max_mime_type_bytes`.
pub const MAX_MIME_TYPE_BYTES: usize = 64;
/// `max_concurrent_uploads`: active upload lifecycles (WIRE-018).
pub const MAX_ACTIVE_UPLOADS: usize = 8;
/// Accepted upload lifecycle IDs the in-process ledger retains (WIRE-018).
pub const MAX_UPLOAD_LEDGER: usize = 100_000;
/// `upload_timeout_ms`: from `begin` to the terminal result (PROFILE §12).
pub const UPLOAD_TIMEOUT: Duration = Duration::from_millis(120_000);
/// `max_attachments_per_message`.
pub const MAX_ATTACHMENTS_PER_MESSAGE: usize = 8;
/// Wall-clock budget for validating one PDF with lopdf (not advertised; ours).
pub const PDF_TIME_LIMIT: Duration = Duration::from_secs(10);

/// Every admission limit in one place. `Limits::default()` is the advertised profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest base64 text of one chunk ([`MAX_CHUNK_ENCODED_BYTES`]).
    pub max_chunk_encoded_bytes: usize,
    /// Largest decoded chunk ([`MAX_CHUNK_DECODED_BYTES`]).
    pub max_chunk_decoded_bytes: usize,
    /// Largest item, declared and decoded ([`MAX_ITEM_BYTES`]).
    pub max_item_bytes: u64,
    /// Largest sum of the items of one user message ([`MAX_AGGREGATE_BYTES`]).
    pub max_aggregate_bytes: u64,
    /// Largest blob store ([`MAX_STORAGE_BYTES`]).
    pub max_storage_bytes: u64,
    /// Most manifests in the ledger ([`MAX_MANIFESTS`]).
    pub max_manifests: u64,
    /// Largest image width or height ([`MAX_IMAGE_DIMENSION`]).
    pub max_image_dimension: u32,
    /// Most pixels in one image ([`MAX_IMAGE_PIXELS`]).
    pub max_image_pixels: u64,
    /// Most pages in one PDF ([`MAX_PDF_PAGES`]).
    pub max_pdf_pages: usize,
    /// Longest PDF validation ([`PDF_TIME_LIMIT`]).
    pub pdf_time_limit: Duration,
    /// Most uploads active at once ([`MAX_ACTIVE_UPLOADS`]).
    pub max_active_uploads: usize,
    /// Most upload IDs remembered per session ([`MAX_UPLOAD_LEDGER`]).
    pub max_upload_ledger: usize,
    /// Longest idle time of an active upload ([`UPLOAD_TIMEOUT`]).
    pub upload_timeout: Duration,
    /// Most attachments in one user message ([`MAX_ATTACHMENTS_PER_MESSAGE`]).
    pub max_attachments_per_message: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_chunk_encoded_bytes: MAX_CHUNK_ENCODED_BYTES,
            max_chunk_decoded_bytes: MAX_CHUNK_DECODED_BYTES,
            max_item_bytes: MAX_ITEM_BYTES,
            max_aggregate_bytes: MAX_AGGREGATE_BYTES,
            max_storage_bytes: MAX_STORAGE_BYTES,
            max_manifests: MAX_MANIFESTS,
            max_image_dimension: MAX_IMAGE_DIMENSION,
            max_image_pixels: MAX_IMAGE_PIXELS,
            max_pdf_pages: MAX_PDF_PAGES,
            pdf_time_limit: PDF_TIME_LIMIT,
            max_active_uploads: MAX_ACTIVE_UPLOADS,
            max_upload_ledger: MAX_UPLOAD_LEDGER,
            upload_timeout: UPLOAD_TIMEOUT,
            max_attachments_per_message: MAX_ATTACHMENTS_PER_MESSAGE,
        }
    }
}
