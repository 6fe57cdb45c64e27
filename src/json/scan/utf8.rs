//! The text view of a document the parser accepted, without a second UTF-8 pass.
//!
//! Owns one conversion. The parser validates UTF-8 inside the string walk (PROFILE §2a): in a
//! JSON text every byte outside a string is ASCII grammar (anything else is rejected), and the
//! walk hands every string body holding a byte ≥ 0x80 to `simdutf8` from its first such byte
//! to its closing quote. An accepted document is therefore valid UTF-8 as a whole, which is
//! what this module relies on. Debug builds (the fuzz targets among them) re-check it.
#![allow(unsafe_code)]

/// The input of an accepted document as text.
///
/// Must only be called with bytes the parser's grammar accepted (see the module docs).
#[inline]
pub(crate) fn validated_text(accepted: &[u8]) -> &str {
    debug_assert!(
        std::str::from_utf8(accepted).is_ok(),
        "the parser accepted bytes that are not UTF-8"
    );
    // SAFETY: `accepted` was accepted by the parser, whose string walk validated every
    // non-ASCII byte (they can only occur inside strings of an accepted text), so the whole
    // slice is UTF-8; `tests/json_conformance.rs` and the fuzz targets check the equivalence.
    unsafe { std::str::from_utf8_unchecked(accepted) }
}
