//! The admission pipeline for one complete payload: type admission (MIME claim, magic, item
//! limit), normalization (PNG/JPEG re-encode, PDF validation), the per-message aggregate
//! budget, and the commit of the manifest and its blob.
//!
//! Owns the order of the checks and the manifest's identity rules (attachment ID grammar,
//! bounded name). Never reads files or clocks; storage goes through `BlobStore`.

use super::digest::Sha256Digest;
use super::limits::{Limits, MAX_DISPLAY_NAME_BYTES};
use super::media::MediaType;
use super::reason::ReasonCode;
use super::store::{BlobBackend, BlobStore};
use super::{jpeg, pdf, png};
use agentx_wire::wire::attachment_ref::AttachmentRef;

/// Normalized bytes ready to store: re-encoded pixels for images, the original bytes for a
/// validated PDF.
#[derive(Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The admitted media type (from the magic, which must agree with the declared type).
    pub media: MediaType,
    /// The stored bytes: normalized PNG/JPEG, or the validated PDF as sent.
    pub bytes: Vec<u8>,
    /// SHA-256 of `bytes` (the content address).
    pub sha256: Sha256Digest,
}

impl core::fmt::Debug for Normalized {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Never the bytes (WIRE-022).
        f.debug_struct("Normalized")
            .field("media", &self.media)
            .field("size_bytes", &self.bytes.len())
            .field("sha256", &self.sha256)
            .finish()
    }
}

impl Normalized {
    /// The manifest's `size_bytes`.
    pub fn size_bytes(&self) -> u64 {
        self.bytes.len() as u64
    }
}

/// Type admission and normalization of a complete raw payload (after chunk admission, or a
/// file read whole). In order: `item_too_large` (20 MiB), `mime_mismatch` (magic bytes),
/// then the format's own checks (`image_too_large` from the header before any pixel,
/// `image_decode_failed`; `pdf_invalid`, `pdf_encrypted`, `pdf_too_many_pages`), then
/// `item_too_large` again if re-encoding grew an image past the item limit.
pub fn normalize(media: MediaType, raw: &[u8], limits: &Limits) -> Result<Normalized, ReasonCode> {
    if raw.len() as u64 > limits.max_item_bytes {
        return Err(ReasonCode::ItemTooLarge);
    }
    media.check_magic(raw)?;
    let bytes = match media {
        MediaType::Png => png::normalize(raw, limits)?,
        MediaType::Jpeg => jpeg::normalize(raw, limits)?,
        MediaType::Pdf => {
            pdf::validate(raw, limits)?;
            raw.to_vec()
        }
    };
    normalized(media, bytes, None, limits)
}

/// [`normalize`] of a payload the caller gives up, with its already verified SHA-256 (the
/// upload lifecycle's commit, after the running digest matched the declaration): a PDF is
/// validated and kept without a copy or a second digest pass, and a PNG's raw bytes are freed
/// before its pixels are decoded, so the commit's peak memory holds one 20 MiB copy fewer.
/// Same checks in the same order, same result.
pub fn normalize_owned(
    media: MediaType,
    raw: Vec<u8>,
    raw_sha256: Sha256Digest,
    limits: &Limits,
) -> Result<Normalized, ReasonCode> {
    if raw.len() as u64 > limits.max_item_bytes {
        return Err(ReasonCode::ItemTooLarge);
    }
    media.check_magic(&raw)?;
    match media {
        MediaType::Png => normalized(media, png::normalize_owned(raw, limits)?, None, limits),
        MediaType::Jpeg => normalized(media, jpeg::normalize(&raw, limits)?, None, limits),
        MediaType::Pdf => {
            let (_, raw) = pdf::validate_owned(raw, limits)?;
            normalized(media, raw, Some(raw_sha256), limits)
        }
    }
}

/// The normalized bytes' item-limit check and digest (`known` when the bytes are the
/// verified raw payload).
fn normalized(
    media: MediaType,
    bytes: Vec<u8>,
    known: Option<Sha256Digest>,
    limits: &Limits,
) -> Result<Normalized, ReasonCode> {
    if bytes.len() as u64 > limits.max_item_bytes {
        return Err(ReasonCode::ItemTooLarge);
    }
    let sha256 = known.unwrap_or_else(|| Sha256Digest::of(&bytes));
    Ok(Normalized {
        media,
        bytes,
        sha256,
    })
}

/// The type of a payload: the claim when given (`mime_unsupported` unless advertised), else
/// the magic bytes (`mime_unsupported` when they match no advertised type).
pub fn media_type(claim: Option<&str>, raw: &[u8]) -> Result<MediaType, ReasonCode> {
    match claim {
        Some(mime) => MediaType::from_mime(mime),
        None => MediaType::sniff(raw).ok_or(ReasonCode::MimeUnsupported),
    }
}

/// The per-message aggregate of attachment bytes (`max_aggregate_bytes`, 40 MiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AggregateBudget {
    used: u64,
    max: u64,
}

impl AggregateBudget {
    /// An empty budget with the message limit of `limits`.
    pub fn new(limits: &Limits) -> AggregateBudget {
        AggregateBudget {
            used: 0,
            max: limits.max_aggregate_bytes,
        }
    }

    /// Counts one more item of `size_bytes`; `aggregate_too_large` (and nothing counted)
    /// when the message would pass the limit.
    pub fn admit(&mut self, size_bytes: u64) -> Result<(), ReasonCode> {
        let total = self.used.saturating_add(size_bytes);
        if total > self.max {
            return Err(ReasonCode::AggregateTooLarge);
        }
        self.used = total;
        Ok(())
    }

    /// Bytes counted so far.
    pub fn used(&self) -> u64 {
        self.used
    }
}

/// WIRE-018: `att_[A-Za-z0-9][A-Za-z0-9_-]{0,62}`.
pub fn is_attachment_id(id: &str) -> bool {
    let Some(rest) = id.strip_prefix("att_") else {
        return false;
    };
    let b = rest.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

/// A display name: nonempty, at most 255 bytes, no control characters.
pub fn is_display_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_DISPLAY_NAME_BYTES && !name.chars().any(char::is_control)
}

/// The stable attachment ID `agentx-wire attach` (and file-path imports) give a file:
/// `att_` followed by the first 32 hex digits of
/// SHA-256(`"agentx-wire attach v1\n" || <normalized sha256 hex> || "\n" || <name>`).
/// The same normalized content under the same name always gets the same ID.
pub fn derive_attachment_id(sha256: &Sha256Digest, name: &str) -> String {
    let mut seed = Vec::with_capacity(96 + name.len());
    seed.extend_from_slice(b"agentx-wire attach v1\n");
    seed.extend_from_slice(sha256.to_hex().as_bytes());
    seed.push(b'\n');
    seed.extend_from_slice(name.as_bytes());
    let hex = Sha256Digest::of(&seed).to_hex();
    format!("att_{}", &hex[..32])
}

/// The manifest of `normalized` under `attachment_id` and `name` (`schema_invalid` when
/// either breaks its grammar).
pub fn manifest(
    normalized: &Normalized,
    attachment_id: &str,
    name: &str,
) -> Result<AttachmentRef, ReasonCode> {
    if !is_attachment_id(attachment_id) || !is_display_name(name) {
        return Err(ReasonCode::SchemaInvalid);
    }
    Ok(AttachmentRef {
        attachment_id: attachment_id.to_owned(),
        kind: normalized.media.kind().to_owned(),
        name: name.to_owned(),
        mime_type: normalized.media.mime_type().to_owned(),
        size_bytes: normalized.size_bytes(),
        sha256: normalized.sha256.to_hex(),
        storage_id: normalized.sha256.storage_id(),
    })
}

/// Stores the blob and the manifest (`storage_full`, `manifest_store_full`); on failure the
/// reservation is released and nothing is left behind.
pub fn commit<B: BlobBackend>(
    store: &mut BlobStore<B>,
    normalized: &Normalized,
    attachment_id: &str,
    name: &str,
) -> Result<AttachmentRef, ReasonCode> {
    let manifest = manifest(normalized, attachment_id, name)?;
    let reservation = store.reserve(&manifest)?;
    store.commit(reservation, &normalized.bytes)?;
    Ok(manifest)
}

/// Admits one whole file's bytes the way `agentx-wire attach` and `--attach PATH` do:
/// type from the claim or the magic, normalization, then commit under the derived stable ID
/// (or `attachment_id` when given).
pub fn admit_file<B: BlobBackend>(
    store: &mut BlobStore<B>,
    raw: &[u8],
    claim: Option<&str>,
    name: &str,
    attachment_id: Option<&str>,
    limits: &Limits,
) -> Result<AttachmentRef, ReasonCode> {
    if raw.len() as u64 > limits.max_item_bytes {
        return Err(ReasonCode::ItemTooLarge);
    }
    let media = media_type(claim, raw)?;
    if !is_display_name(name) {
        return Err(ReasonCode::SchemaInvalid);
    }
    let normalized = normalize(media, raw, limits)?;
    let id = match attachment_id {
        Some(id) => id.to_owned(),
        None => derive_attachment_id(&normalized.sha256, name),
    };
    commit(store, &normalized, &id, name)
}
