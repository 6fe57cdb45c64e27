//! The text view of a document the parser accepted, without a second UTF-8 pass, and the
//! byte-at-a-time UTF-8 check of short string tails.
//!
//! Owns one conversion and one check. The parser validates UTF-8 inside the string walk (PROFILE §2a): in a
//! JSON text every byte outside a string is ASCII grammar (anything else is rejected), and the
//! walk hands every string body holding a byte ≥ 0x80 to a UTF-8 check from its first such byte
//! to its closing quote. An accepted document is therefore valid UTF-8 as a whole, which is
//! what this module relies on. Debug builds (the fuzz targets among them) re-check it.
#![allow(unsafe_code)]

pub(crate) use crate::json::parse::Accepted;

/// The input of an accepted document as text.
///
/// Only for bytes the parser's grammar accepted (see the module docs): `_proof` is the
/// [`Accepted`] that `Parser::run` returned for them, which nothing outside the parser can
/// make.
#[inline]
pub(crate) fn validated_text(accepted: &[u8], _proof: Accepted) -> &str {
    debug_assert!(
        std::str::from_utf8(accepted).is_ok(),
        "the parser accepted bytes that are not UTF-8"
    );
    // SAFETY: `accepted` was accepted by the parser (the caller holds the `Accepted` that
    // `Parser::run` returned for it), whose string walk validated every
    // non-ASCII byte (they can only occur inside strings of an accepted text), so the whole
    // slice is UTF-8; `tests/codec/json_conformance.rs` and the fuzz targets check the equivalence.
    unsafe { std::str::from_utf8_unchecked(accepted) }
}

/// Whether `s` is UTF-8 (RFC 3629: shortest forms only, no surrogates, nothing above
/// U+10FFFF), for the short non-ASCII tails of string bodies (an emoji in a token delta), where
/// a call into `simdutf8` (which hands inputs under 64 bytes to `core::str::from_utf8`) costs
/// more than the check. A shift-based DFA: one table load, a shift and a mask per byte, no
/// branch per byte, so tails that mix ASCII, 2-, 3- and 4-byte characters (the agent stream's
/// deltas) cost no mispredicted branch per character. Tested against `core::str::from_utf8` on
/// every sequence of up to three bytes, the four-byte leads with the continuation ranges'
/// edges, and every lead byte with boundary continuations.
#[inline]
pub(crate) fn is_utf8_short(s: &[u8]) -> bool {
    let mut state = ACCEPT;
    for &b in s {
        state = (UTF8_DFA[b as usize] >> state) & 63;
    }
    state == ACCEPT
}

// The DFA's states, each held as its shift (6 bits per state in a table row): what the bytes
// so far still need (Unicode Table 3-7).
/// A whole number of characters.
const ACCEPT: u64 = 0;
/// One continuation byte (80..BF).
const NEED1: u64 = 6;
/// Two continuation bytes.
const NEED2: u64 = 12;
/// Three continuation bytes.
const NEED3: u64 = 18;
/// After E0: A0..BF, then one more.
const AFTER_E0: u64 = 24;
/// After ED: 80..9F (no surrogates), then one more.
const AFTER_ED: u64 = 30;
/// After F0: 90..BF (no overlong), then two more.
const AFTER_F0: u64 = 36;
/// After F4: 80..8F (nothing above U+10FFFF), then two more.
const AFTER_F4: u64 = 42;
/// Not UTF-8; stays so.
const REJECT: u64 = 48;

/// Row `b`: for each state (at its shift), the state after byte `b`.
const UTF8_DFA: [u64; 256] = utf8_dfa();

const fn utf8_dfa() -> [u64; 256] {
    // `row(pairs)`: every state goes to REJECT but those listed.
    const fn row(pairs: &[(u64, u64)]) -> u64 {
        let mut r = 0u64;
        let mut from = 0u64;
        while from <= REJECT {
            r |= REJECT << from;
            from += 6;
        }
        let mut k = 0;
        while k < pairs.len() {
            let (from, to) = pairs[k];
            r &= !(63u64 << from);
            r |= to << from;
            k += 1;
        }
        r
    }
    let mut t = [0u64; 256];
    let mut b = 0usize;
    while b < 256 {
        t[b] = match b {
            0x00..=0x7F => row(&[(ACCEPT, ACCEPT)]),
            0x80..=0x8F => row(&[
                (NEED1, ACCEPT),
                (NEED2, NEED1),
                (NEED3, NEED2),
                (AFTER_ED, NEED1),
                (AFTER_F4, NEED2),
            ]),
            0x90..=0x9F => row(&[
                (NEED1, ACCEPT),
                (NEED2, NEED1),
                (NEED3, NEED2),
                (AFTER_ED, NEED1),
                (AFTER_F0, NEED2),
            ]),
            0xA0..=0xBF => row(&[
                (NEED1, ACCEPT),
                (NEED2, NEED1),
                (NEED3, NEED2),
                (AFTER_E0, NEED1),
                (AFTER_F0, NEED2),
            ]),
            0xC2..=0xDF => row(&[(ACCEPT, NEED1)]),
            0xE0 => row(&[(ACCEPT, AFTER_E0)]),
            0xE1..=0xEC | 0xEE..=0xEF => row(&[(ACCEPT, NEED2)]),
            0xED => row(&[(ACCEPT, AFTER_ED)]),
            0xF0 => row(&[(ACCEPT, AFTER_F0)]),
            0xF1..=0xF3 => row(&[(ACCEPT, NEED3)]),
            0xF4 => row(&[(ACCEPT, AFTER_F4)]),
            // C0, C1 (overlong) and F5..FF never start a character.
            _ => row(&[]),
        };
        b += 1;
    }
    t
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

    /// Every three-byte sequence with a non-ASCII lead (the DFA's states after E0, ED and the
    /// other three-byte leads, and every ill-formed continuation), and every four-byte
    /// sequence of the leads F0..F4 with each continuation byte drawn from the range edges.
    #[test]
    fn every_three_byte_sequence_matches_core() {
        for a in 0x80..=255u8 {
            for b in 0..=255u8 {
                for c in 0..=255u8 {
                    agrees(&[a, b, c]);
                }
            }
        }
        let edges = [0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF];
        for a in 0xF0..=0xF4u8 {
            for b in 0..=255u8 {
                for c in edges {
                    for d in edges {
                        agrees(&[a, b, c, d]);
                    }
                }
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
