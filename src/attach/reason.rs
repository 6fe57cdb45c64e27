//! The closed vocabulary of attachment failures (PROFILE §6).
//!
//! Owns `ReasonCode`, the one error type of the `attach` layer: every failure of chunk
//! admission, type admission, normalization, PDF validation and the blob store is one of these
//! codes, classifiable without formatting. It must never carry input bytes, paths or any other
//! payload (WIRE-022): a reason is a bounded, fixed string.

use core::fmt;

macro_rules! reason_codes {
    ($($variant:ident => $text:literal,)*) => {
        /// A terminal or rejected attachment result's reason (PROFILE §6), exactly the
        /// profile's strings and nothing else.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ReasonCode {
            $(#[doc = concat!("`", $text, "`")] $variant,)*
        }

        impl ReasonCode {
            /// Every code, in PROFILE §6 order.
            pub const ALL: &'static [ReasonCode] = &[$(ReasonCode::$variant,)*];

            /// The wire string (PROFILE §6).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ReasonCode::$variant => $text,)*
                }
            }

            /// The code whose wire string is `s`, if any.
            pub fn from_wire(s: &str) -> Option<ReasonCode> {
                match s {
                    $($text => Some(ReasonCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

reason_codes! {
    ClientAbort => "client_abort",
    Cancelled => "cancelled",
    Timeout => "timeout",
    InputEof => "input_eof",
    ProcessFailure => "process_failure",
    SchemaInvalid => "schema_invalid",
    UnknownUpload => "unknown_upload",
    DuplicateUpload => "duplicate_upload",
    TooManyActiveUploads => "too_many_active_uploads",
    UploadLedgerFull => "upload_ledger_full",
    ManifestStoreFull => "manifest_store_full",
    StorageFull => "storage_full",
    SequenceGap => "sequence_gap",
    ChunkTooLarge => "chunk_too_large",
    NoncanonicalBase64 => "noncanonical_base64",
    SizeMismatch => "size_mismatch",
    DigestMismatch => "digest_mismatch",
    MimeUnsupported => "mime_unsupported",
    MimeMismatch => "mime_mismatch",
    ItemTooLarge => "item_too_large",
    AggregateTooLarge => "aggregate_too_large",
    ImageTooLarge => "image_too_large",
    ImageDecodeFailed => "image_decode_failed",
    PdfInvalid => "pdf_invalid",
    PdfEncrypted => "pdf_encrypted",
    PdfTooManyPages => "pdf_too_many_pages",
    AfterTerminal => "after_terminal",
    CapabilityAbsent => "capability_absent",
}

impl fmt::Display for ReasonCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::error::Error for ReasonCode {}

#[cfg(test)]
mod tests {
    use super::ReasonCode;

    #[test]
    fn profile_section_6_strings_round_trip() {
        // PROFILE §6 lists exactly 28 codes.
        assert_eq!(ReasonCode::ALL.len(), 28);
        for &code in ReasonCode::ALL {
            assert_eq!(ReasonCode::from_wire(code.as_str()), Some(code));
            assert_eq!(code.to_string(), code.as_str());
        }
        assert_eq!(ReasonCode::from_wire("Storage_full"), None);
    }
}
