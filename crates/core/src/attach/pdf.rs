//! PDF validation (PROFILE §6a): well-formed, not encrypted, at most 100 pages; the bytes are
//! stored unchanged. Active content (JavaScript, launch actions, embedded files) is never
//! executed and is no reason to reject.
//!
//! Owns the verdict over a loaded lopdf document. lopdf itself only runs inside
//! `pdf_contain` (no panic escapes, bounded stack, bounded wall-clock time); this file never
//! spawns or reads a clock.

use lopdf::{Document, LoadOptions};

use super::limits::Limits;
use super::media::MediaType;
use super::pdf_contain;
use super::reason::ReasonCode;

/// Per-stream decompression bound handed to lopdf while loading (object and xref streams).
/// An honest 20 MiB PDF never needs more; a bomb stops here.
pub const MAX_DECOMPRESSED_STREAM: usize = 64 * 1024 * 1024;

/// The outcome of inspecting a PDF, before the page limit is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PdfVerdict {
    /// Loaded, unencrypted, with this many pages (at least one).
    Pages(usize),
    /// Carries an encryption dictionary, or could not be opened without a password.
    Encrypted,
    /// Not a well-formed PDF: no strict load, no catalog, no page tree or no page.
    Invalid,
}

/// Validates `bytes` under containment: `%PDF-` at offset 0 (else `pdf_invalid`), then
/// lopdf's verdict and the page limit.
pub fn validate(bytes: &[u8], limits: &Limits) -> Result<usize, ReasonCode> {
    if !MediaType::Pdf.has_magic(bytes) {
        return Err(ReasonCode::PdfInvalid);
    }
    validate_owned(bytes.to_vec(), limits).map(|(pages, _)| pages)
}

/// [`validate`] of bytes the caller gives up: they go to the containment thread and come
/// back with the page count, without a copy.
pub fn validate_owned(bytes: Vec<u8>, limits: &Limits) -> Result<(usize, Vec<u8>), ReasonCode> {
    if !MediaType::Pdf.has_magic(&bytes) {
        return Err(ReasonCode::PdfInvalid);
    }
    let (verdict, bytes) = pdf_contain::run(bytes, limits.pdf_time_limit, inspect)?;
    match verdict {
        PdfVerdict::Pages(n) if n <= limits.max_pdf_pages => Ok((n, bytes)),
        PdfVerdict::Pages(_) => Err(ReasonCode::PdfTooManyPages),
        PdfVerdict::Encrypted => Err(ReasonCode::PdfEncrypted),
        PdfVerdict::Invalid => Err(ReasonCode::PdfInvalid),
    }
}

/// Loads with lopdf and classifies. Well-formed means lopdf's *strict* load succeeds (no
/// cross-reference repair, no reconstruction from a damaged or truncated file). When the
/// strict load fails, a lenient load decides only whether the file is encrypted
/// (`pdf_encrypted` rather than `pdf_invalid`). May panic or run long on hostile input: call
/// it only through `pdf_contain::run`.
pub fn inspect(bytes: &[u8]) -> PdfVerdict {
    match load(bytes, true) {
        Ok(doc) => classify(&doc),
        Err(verdict) => match load(bytes, false) {
            Ok(doc) if is_encrypted(&doc) => PdfVerdict::Encrypted,
            Ok(_) => verdict,
            Err(lenient) => {
                if lenient == PdfVerdict::Encrypted {
                    lenient
                } else {
                    verdict
                }
            }
        },
    }
}

fn load(bytes: &[u8], strict: bool) -> Result<Document, PdfVerdict> {
    let options = LoadOptions {
        max_decompressed_size: Some(MAX_DECOMPRESSED_STREAM),
        strict,
        ..LoadOptions::default()
    };
    match Document::load_mem_with_options(bytes, options) {
        Ok(doc) => Ok(doc),
        Err(lopdf::Error::Decryption(_) | lopdf::Error::InvalidPassword) => {
            Err(PdfVerdict::Encrypted)
        }
        Err(_) => Err(PdfVerdict::Invalid),
    }
}

/// An encrypted file with a non-empty user password loads as Ok with nothing visible; one
/// with an empty user password is decrypted on load. Both are encrypted files.
fn is_encrypted(doc: &Document) -> bool {
    doc.is_encrypted() || doc.was_encrypted() || doc.trailer.has(b"Encrypt")
}

fn classify(doc: &Document) -> PdfVerdict {
    if is_encrypted(doc) {
        return PdfVerdict::Encrypted;
    }
    if doc.catalog().is_err() {
        return PdfVerdict::Invalid;
    }
    match doc.page_iter().count() {
        0 => PdfVerdict::Invalid,
        n => PdfVerdict::Pages(n),
    }
}
