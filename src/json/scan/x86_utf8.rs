//! UTF-8 validation of string tails with AVX-512BW, 64 bytes at a time.
//!
//! Owns one check, [`is_utf8_avx512`]: whether a byte slice is UTF-8 (RFC 3629: shortest forms,
//! no surrogates, nothing above U+10FFFF), answered with three nibble lookups per 64 bytes and
//! no branch per character: the lookup method of Keiser and Lemire ("Validating UTF-8 in less
//! than one instruction per byte", 2021), written here for one chunk and the chunk before it.
//! The parser hands it the tail of a string body from its first non-ASCII byte, which is
//! usually under 64 bytes and never crosses a call, so there is no streaming state to keep
//! between calls. Its scalar twin is `super::utf8::is_utf8_short`, and both are tested against
//! `core::str::from_utf8`. This module never decides what an invalid byte means for the
//! document: the string walk does.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

// The error bits of the lookups (each names the pair of bytes it rejects; from the paper).
/// A lead byte followed by too few continuations.
const TOO_SHORT: u8 = 1 << 0;
/// A continuation byte with no lead before it.
const TOO_LONG: u8 = 1 << 1;
/// E0 followed by 80..9F (an overlong three-byte form).
const OVERLONG_3: u8 = 1 << 2;
/// F4 followed by 90..BF, or F5..FF (above U+10FFFF).
const TOO_LARGE: u8 = 1 << 3;
/// ED followed by A0..BF (a surrogate).
const SURROGATE: u8 = 1 << 4;
/// C0 or C1 (an overlong two-byte form).
const OVERLONG_2: u8 = 1 << 5;
/// F5..FF followed by 80..8F.
const TOO_LARGE_1000: u8 = 1 << 6;
/// F0 followed by 80..8F (an overlong four-byte form).
const OVERLONG_4: u8 = 1 << 6;
/// A continuation after a continuation: legal only as the third or fourth byte of a character,
/// which the check of the bytes two and three back cancels.
const TWO_CONTS: u8 = 1 << 7;
/// Every byte-1 row with this low nibble carries these bits, so the first table decides.
const CARRY: u8 = TOO_SHORT | TOO_LONG | TWO_CONTS;

/// By the high nibble of the first byte of a pair.
const BYTE_1_HIGH: [u8; 16] = [
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TOO_LONG,
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    TWO_CONTS,
    TOO_SHORT | OVERLONG_2,
    TOO_SHORT,
    TOO_SHORT | OVERLONG_3 | SURROGATE,
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
];

/// By the low nibble of the first byte of a pair.
const BYTE_1_LOW: [u8; 16] = [
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
    CARRY | OVERLONG_2,
    CARRY,
    CARRY,
    CARRY | TOO_LARGE,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
];

/// By the high nibble of the second byte of a pair.
const BYTE_2_HIGH: [u8; 16] = [
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
    TOO_SHORT,
];

/// A 16-byte table in every 128-bit lane, for `vpshufb`.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn table(t: &[u8; 16]) -> __m512i {
    // SAFETY: reads the 16 bytes of `t`.
    _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(t.as_ptr() as *const __m128i) })
}

/// `v` moved up by `N` bytes across the whole vector, the last `N` bytes of `prev` coming in
/// at the bottom (`N` is 1, 2 or 3; `SHIFT` is `16 - N`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn prev<const SHIFT: i32>(v: __m512i, prev: __m512i) -> __m512i {
    // Qwords 6 and 7 of `prev`, then qwords 0 to 5 of `v`: each 128-bit lane of `v` beside
    // the lane below it, for the in-lane byte alignment.
    let below = _mm512_permutex2var_epi64(prev, _mm512_set_epi64(13, 12, 11, 10, 9, 8, 7, 6), v);
    _mm512_alignr_epi8::<SHIFT>(v, below)
}

/// The error bits of the 64 bytes `v` after the 64 bytes `before` (zero: nothing before).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn errors(v: __m512i, before: __m512i) -> __m512i {
    let low = _mm512_set1_epi8(0x0F);
    let prev1 = prev::<15>(v, before);
    let high_nibble = |x: __m512i| _mm512_and_si512(_mm512_srli_epi16::<4>(x), low);
    let special = _mm512_and_si512(
        _mm512_and_si512(
            _mm512_shuffle_epi8(table(&BYTE_1_HIGH), high_nibble(prev1)),
            _mm512_shuffle_epi8(table(&BYTE_1_LOW), _mm512_and_si512(prev1, low)),
        ),
        _mm512_shuffle_epi8(table(&BYTE_2_HIGH), high_nibble(v)),
    );
    // The third and fourth bytes of a character: only 111_____ two back and 1111____ three
    // back keep their high bit after these subtractions.
    let third = _mm512_subs_epu8(
        prev::<14>(v, before),
        _mm512_set1_epi8((0xE0u8 - 0x80) as i8),
    );
    let fourth = _mm512_subs_epu8(
        prev::<13>(v, before),
        _mm512_set1_epi8((0xF0u8 - 0x80) as i8),
    );
    let must_continue = _mm512_and_si512(
        _mm512_or_si512(third, fourth),
        _mm512_set1_epi8(0x80u8 as i8),
    );
    _mm512_xor_si512(must_continue, special)
}

/// Whether `s` is UTF-8. Each 64-byte chunk is checked with the chunk before it; a last
/// chunk shorter than 64 bytes is loaded with zeros (ASCII) after it, so a character cut at
/// the end meets an ASCII byte and is an error, and a full last chunk is followed by one
/// chunk of zeros for the same reason.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(super) fn is_utf8_avx512(s: &[u8]) -> bool {
    let mut before = _mm512_setzero_si512();
    let mut error = _mm512_setzero_si512();
    let mut at = 0;
    while at < s.len() {
        let rest = s.len() - at;
        let v = if rest >= 64 {
            // SAFETY: `at + 64 <= s.len()`: the 64-byte unaligned load stays inside `s`.
            unsafe { _mm512_loadu_si512(s.as_ptr().add(at) as *const __m512i) }
        } else {
            // SAFETY: `at < s.len()`, so the pointer is in bounds; the mask enables only the
            // `rest` bytes left in `s`, and masked-off bytes are neither read nor able to fault.
            unsafe { _mm512_maskz_loadu_epi8((1u64 << rest) - 1, s.as_ptr().add(at) as *const i8) }
        };
        error = _mm512_or_si512(error, errors(v, before));
        before = v;
        at += 64;
    }
    if s.len().is_multiple_of(64) && !s.is_empty() {
        error = _mm512_or_si512(error, errors(_mm512_setzero_si512(), before));
    }
    _mm512_test_epi8_mask(error, error) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this CPU runs the check; says why a test is skipped when it does not.
    fn avx512() -> bool {
        let here = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw");
        if !here {
            eprintln!("skipped: this CPU has no AVX-512BW");
        }
        here
    }

    /// The vector check and `core::str::from_utf8` agree on `seq` placed at `at` in ASCII of
    /// length `len` (and at the very end, so nothing follows it).
    fn agree(seq: &[u8], at: usize, len: usize) {
        let mut s = vec![b'a'; len.max(at + seq.len())];
        s[at..at + seq.len()].copy_from_slice(seq);
        for s in [&s[..], &s[..at + seq.len()]] {
            let want = std::str::from_utf8(s).is_ok();
            // SAFETY: the caller checked AVX-512BW (`avx512()`).
            let got = unsafe { is_utf8_avx512(s) };
            assert_eq!(got, want, "{seq:x?} at {at} of {}", s.len());
        }
    }

    /// Every two-byte sequence, every three-byte sequence with a non-ASCII lead and boundary
    /// third bytes, and the four-byte leads with boundary continuations, at the start, across
    /// the first chunk's end and after it, followed by ASCII or by nothing.
    #[test]
    fn short_sequences_match_core_at_chunk_edges() {
        if !avx512() {
            return;
        }
        let edges = [
            0x00u8, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xE0, 0xF0, 0xFF,
        ];
        for at in [0usize, 62, 63, 64] {
            for x in 0..=0xFFFFu16 {
                agree(&x.to_le_bytes(), at, 70);
            }
            for lead in 0x80..=0xFFu8 {
                for b2 in 0..=0xFFu8 {
                    for b3 in edges {
                        agree(&[lead, b2, b3], at, 130);
                    }
                }
            }
            for lead in 0xF0..=0xF7u8 {
                for b2 in 0..=0xFFu8 {
                    for b3 in [0x41, 0x80, 0xBF] {
                        for b4 in [0x41, 0x80, 0xBF, 0xC2] {
                            agree(&[lead, b2, b3, b4], at, 70);
                        }
                    }
                }
            }
        }
    }

    /// Generated text of 1- to 4-byte characters of every length to 300 bytes agrees with
    /// `core`, whole, cut at every byte, and with one byte replaced at every position.
    #[test]
    fn generated_text_and_its_mutations_match_core() {
        if !avx512() {
            return;
        }
        let chars = [
            'a',
            'é',
            'ß',
            '€',
            '名',
            '😋',
            '\u{10FFFF}',
            '\u{FFFF}',
            '\u{80}',
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..60 {
            let mut text = String::new();
            let target = (next() % 300) as usize;
            while text.len() < target {
                text.push(chars[(next() % chars.len() as u64) as usize]);
            }
            let bytes = text.as_bytes();
            for cut in 0..=bytes.len() {
                let s = &bytes[..cut];
                // SAFETY: checked AVX-512BW above.
                assert_eq!(unsafe { is_utf8_avx512(s) }, std::str::from_utf8(s).is_ok());
            }
            for at in 0..bytes.len() {
                for with in [0x80u8, 0xBF, 0xC0, 0xED, 0xF4, 0xFF, b'a'] {
                    let mut s = bytes.to_vec();
                    s[at] = with;
                    let want = std::str::from_utf8(&s).is_ok();
                    // SAFETY: checked AVX-512BW above.
                    assert_eq!(unsafe { is_utf8_avx512(&s) }, want, "{s:x?}");
                }
            }
        }
    }
}
