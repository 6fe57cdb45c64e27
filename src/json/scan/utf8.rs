//! The text view of a document the parser accepted, without a second UTF-8 pass, and the
//! byte-at-a-time UTF-8 check of short string tails.
//!
//! Owns one conversion and one check. The parser validates UTF-8 inside the string walk (PROFILE §2a): in a
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
    // slice is UTF-8; `tests/codec/json_conformance.rs` and the fuzz targets check the equivalence.
    unsafe { std::str::from_utf8_unchecked(accepted) }
}

/// Whether `s` is UTF-8 (RFC 3629: shortest forms only, no surrogates, nothing above
/// U+10FFFF), a byte at a time: for the short non-ASCII tails of string bodies (an emoji in a
/// token delta), where a call into `simdutf8` (which hands inputs under 64 bytes to
/// `core::str::from_utf8`) costs more than the check. Tested against `core::str::from_utf8` on
/// every sequence of up to two bytes and every lead byte with boundary continuations.
#[inline]
pub(crate) fn is_utf8_short(s: &[u8]) -> bool {
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if c < 0x80 {
            i += 1;
            continue;
        }
        // The sequence length and the range of its second byte (Unicode Table 3-7).
        let (len, lo, hi) = match c {
            0xC2..=0xDF => (2, 0x80, 0xBF),
            0xE0 => (3, 0xA0, 0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
            0xED => (3, 0x80, 0x9F),
            0xF0 => (4, 0x90, 0xBF),
            0xF1..=0xF3 => (4, 0x80, 0xBF),
            0xF4 => (4, 0x80, 0x8F),
            _ => return false,
        };
        if !s.get(i + 1).is_some_and(|&d| (lo..=hi).contains(&d)) {
            return false;
        }
        for k in 2..len {
            if !s.get(i + k).is_some_and(|&d| (0x80..=0xBF).contains(&d)) {
                return false;
            }
        }
        i += len;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::is_utf8_short;

    fn agrees(s: &[u8]) {
        assert_eq!(is_utf8_short(s), std::str::from_utf8(s).is_ok(), "{s:x?}");
    }

    #[test]
    fn every_one_and_two_byte_sequence_matches_core() {
        for a in 0..=255u8 {
            agrees(&[a]);
            for b in 0..=255u8 {
                agrees(&[a, b]);
                agrees(&[b'x', a, b, b'y']);
            }
        }
    }

    #[test]
    fn every_lead_with_boundary_continuations_matches_core() {
        let edges = [
            0x00, 0x41, 0x7F, 0x80, 0x81, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xED,
            0xF0, 0xF4, 0xFF,
        ];
        for a in 0x80..=255u8 {
            for b in 0..=255u8 {
                for c in edges {
                    agrees(&[a, b, c]);
                    for d in edges {
                        agrees(&[a, b, c, d]);
                        agrees(&[b' ', a, b, c, d, b'z']);
                    }
                }
            }
        }
    }
}
