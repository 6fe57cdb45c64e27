//! Type admission: the advertised media types, their MIME strings and kinds, and the magic
//! bytes each must start with (PROFILE §6a "the MIME claim must match the magic bytes").
//!
//! Owns `MediaType`; never decodes a file beyond its first bytes.

use super::reason::ReasonCode;

/// One of the three types advertised in `input_capabilities.attachments.media_types`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MediaType {
    /// `image/png`.
    Png,
    /// `image/jpeg`.
    Jpeg,
    /// `application/pdf`.
    Pdf,
}

const PNG_MAGIC: &[u8] = b"\x89PNG\r\n\x1a\n";
const JPEG_MAGIC: &[u8] = &[0xFF, 0xD8, 0xFF];
const PDF_MAGIC: &[u8] = b"%PDF-";

impl MediaType {
    /// Every advertised type.
    pub const ALL: [MediaType; 3] = [MediaType::Png, MediaType::Jpeg, MediaType::Pdf];

    /// The exact MIME string (`mime_type`).
    pub const fn mime_type(self) -> &'static str {
        match self {
            MediaType::Png => "image/png",
            MediaType::Jpeg => "image/jpeg",
            MediaType::Pdf => "application/pdf",
        }
    }

    /// The manifest `kind`: `image` or `document`.
    pub const fn kind(self) -> &'static str {
        match self {
            MediaType::Png | MediaType::Jpeg => "image",
            MediaType::Pdf => "document",
        }
    }

    /// A MIME claim, compared exactly (the advertised strings are lowercase and carry no
    /// parameters): anything else is `mime_unsupported`.
    pub fn from_mime(claim: &str) -> Result<MediaType, ReasonCode> {
        MediaType::ALL
            .into_iter()
            .find(|m| m.mime_type() == claim)
            .ok_or(ReasonCode::MimeUnsupported)
    }

    /// The type whose magic bytes start `bytes`, if any. A PDF must start with `%PDF-` at
    /// offset 0 (no leading junk is tolerated).
    pub fn sniff(bytes: &[u8]) -> Option<MediaType> {
        MediaType::ALL
            .into_iter()
            .find(|m| bytes.starts_with(m.magic()))
    }

    fn magic(self) -> &'static [u8] {
        match self {
            MediaType::Png => PNG_MAGIC,
            MediaType::Jpeg => JPEG_MAGIC,
            MediaType::Pdf => PDF_MAGIC,
        }
    }

    /// The claim against the magic bytes: `mime_mismatch` when the bytes carry the magic of
    /// a *different* advertised type (a JPEG claimed as `image/png`). Bytes that carry no
    /// advertised magic at all are left to the claimed type's validator, which requires its
    /// exact signature (PNG's 8 bytes, JPEG's SOI + marker, `%PDF-` at offset 0) and rejects
    /// them as `image_decode_failed` or `pdf_invalid`: a PngSuite file with a damaged
    /// signature (`xs1n0g01.png`) is a corrupt PNG, not some other type. Either way nothing
    /// is admitted unless its magic matches its claim.
    pub fn check_magic(self, bytes: &[u8]) -> Result<(), ReasonCode> {
        match MediaType::sniff(bytes) {
            Some(found) if found != self => Err(ReasonCode::MimeMismatch),
            _ => Ok(()),
        }
    }

    /// True when `bytes` start with this type's exact magic.
    pub fn has_magic(self, bytes: &[u8]) -> bool {
        bytes.starts_with(self.magic())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_and_magic() {
        assert_eq!(MediaType::from_mime("image/png"), Ok(MediaType::Png));
        assert_eq!(
            MediaType::from_mime("image/PNG"),
            Err(ReasonCode::MimeUnsupported)
        );
        assert_eq!(
            MediaType::from_mime("image/gif"),
            Err(ReasonCode::MimeUnsupported)
        );
        assert_eq!(MediaType::sniff(b"%PDF-1.7\n"), Some(MediaType::Pdf));
        assert_eq!(MediaType::sniff(b"\xff\xd8\xff\xe0"), Some(MediaType::Jpeg));
        assert_eq!(MediaType::sniff(b"GIF89a"), None);
        assert_eq!(
            MediaType::Png.check_magic(b"\xff\xd8\xff"),
            Err(ReasonCode::MimeMismatch)
        );
        assert_eq!(MediaType::Pdf.check_magic(b"%PDF-1.4"), Ok(()));
        // No advertised magic: the claimed type's validator decides.
        assert_eq!(MediaType::Png.check_magic(b"\x09PNG\r\n\x1a\n"), Ok(()));
        assert!(!MediaType::Png.has_magic(b"\x09PNG\r\n\x1a\n"));
    }
}
