//! String bodies: where a JSON string ends and whether everything before that end is legal
//! (escapes, surrogate pairs, no raw control characters, UTF-8). PROFILE §2a.
//!
//! Owns the string walk of the parser. Short strings are settled with one inline SWAR word; a
//! longer body is walked 64 bytes at a time from four bit masks (quote, backslash, control,
//! non-ASCII) produced by the scan backend, the way simdjson finds escaped characters: the
//! quote that ends the string is the first one not escaped by an odd run of backslashes, so a
//! body dense with escapes (source code in tool results) costs a few bit operations per block
//! instead of a branchy step per escape. A body with bytes ≥ 0x80 is UTF-8-validated from the
//! first such byte to its closing quote in the same walk: the parser makes no separate UTF-8
//! pass (non-ASCII bytes are only legal inside strings). This module never decodes.

use super::{is_utf8_short, Kernel, StringMasks, Window};
use crate::json::error::{Error, ErrorKind, Malformed};

/// Validates a string body starting at `b[i]` (just after the opening quote). Returns the
/// offset of the closing quote and whether the body has escapes.
#[inline(always)]
pub(crate) fn string_body<K: Kernel>(
    kernel: K,
    b: &[u8],
    i: usize,
    window: &mut Window,
) -> Result<(usize, bool), Error> {
    // Short plain strings end within one step: no call into the block walk.
    if let Some(at) = kernel.string_short(b, i, window) {
        return Ok((at, false));
    }
    kernel.string_blocks(b, i)
}

/// Bits of characters escaped by a backslash, given the block's backslash mask; `carry` says
/// whether the block's first byte is escaped by a backslash run ending the previous block, and
/// is updated for the next block.
#[inline]
fn escaped_chars(backslash: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    // A backslash that is itself escaped starts nothing.
    let backslash = backslash & !*carry;
    let follows_escape = (backslash << 1) | *carry;
    let odd_starts = backslash & !EVEN & !follows_escape;
    let (sequences_on_even, overflow) = odd_starts.overflowing_add(backslash);
    *carry = overflow as u64;
    let invert = sequences_on_even << 1;
    (EVEN ^ invert) & follows_escape
}

/// The general string walk, one 64-byte block at a time, with `masks` from one backend (each
/// backend compiles its own copy for its CPU features) and its UTF-8 check, `utf8_ok`.
/// `simple` gives the bits of the 64 bytes at a block that may follow a backslash to form a
/// complete two-byte escape (`scan::SIMPLE_ESCAPES`); it is asked only for blocks with escapes,
/// so only `\u` and invalid escapes are looked at one by one.
#[inline(always)]
pub(crate) fn walk(
    b: &[u8],
    start: usize,
    masks: impl Fn(&[u8], usize) -> StringMasks,
    simple: impl Fn(&[u8], usize) -> u64,
    utf8_ok: impl Fn(&[u8]) -> bool,
) -> Result<(usize, bool), Error> {
    let mut block = start;
    let mut carry = 0u64;
    let mut escaped_any = false;
    // Offset up to which `\u` escapes are already validated (a surrogate pair covers two).
    let mut validated_to = start;
    // The first byte >= 0x80 of the body, if any: UTF-8 is validated from there at the end.
    let mut first_high = usize::MAX;
    loop {
        if block >= b.len() {
            return Err(Error::malformed(Malformed::UnexpectedEnd, b.len()));
        }
        let m = masks(b, block);
        let escaped = escaped_chars(m.backslash, &mut carry);
        let quotes = m.quote & !escaped;
        let end_bit = quotes.trailing_zeros();
        let within = if end_bit == 64 {
            !0u64
        } else {
            (1u64 << end_bit) - 1
        };
        let control = m.control & within;
        if control != 0 {
            return Err(Error::malformed(
                Malformed::ControlCharacterInString,
                block + control.trailing_zeros() as usize,
            ));
        }
        let high = m.high & within;
        if high != 0 && first_high == usize::MAX {
            first_high = block + high.trailing_zeros() as usize;
        }
        let esc = escaped & within;
        if esc != 0 {
            escaped_any = true;
            // `\u` (or an invalid escape, or a backslash ending the input): the full check
            // from its backslash, unless an earlier `\u` escape already covered it.
            let mut full = esc & !simple(b, block);
            while full != 0 {
                let at = block + full.trailing_zeros() as usize;
                full &= full - 1;
                if at > validated_to {
                    validated_to = escape(b, at - 1)?;
                }
            }
        }
        if end_bit < 64 {
            let end = block + end_bit as usize;
            if end < validated_to {
                // The escape check consumed bytes past this quote: it was inside a `\u` escape.
                return Err(Error::malformed(Malformed::InvalidEscape, end));
            }
            if first_high != usize::MAX && !utf8_ok(b.get(first_high..end).unwrap_or(&[])) {
                return Err(Error::new(ErrorKind::InvalidUtf8, first_high));
            }
            return Ok((end, escaped_any));
        }
        block += 64;
    }
}

/// Whether a string's tail from its first non-ASCII byte is UTF-8 (the parser maps a failure
/// to the exact offset of a whole-input check), for backends without a vector check of their
/// own: a byte at a time up to 32 bytes, `simdutf8` beyond.
#[inline(never)]
pub(crate) fn utf8_portable(tail: &[u8]) -> bool {
    if tail.len() <= 32 {
        is_utf8_short(tail)
    } else {
        simdutf8::basic::from_utf8(tail).is_ok()
    }
}

/// Validates the escape at `b[i]` (a backslash); returns the offset after it. A `\u` high
/// surrogate must be followed by a `\u` low surrogate; a lone surrogate is rejected (§2a).
#[inline]
pub(crate) fn escape(b: &[u8], i: usize) -> Result<usize, Error> {
    match b.get(i + 1) {
        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(i + 2),
        Some(b'u') => {
            let Some(cp) = hex4(b, i + 2) else {
                return Err(escape_error(b, i + 2, 4));
            };
            match cp {
                0xD800..=0xDBFF => {
                    if b.get(i + 6) == Some(&b'\\') && b.get(i + 7) == Some(&b'u') {
                        match hex4(b, i + 8) {
                            Some(0xDC00..=0xDFFF) => Ok(i + 12),
                            Some(_) => Err(Error::malformed(Malformed::LoneSurrogate, i)),
                            None => Err(escape_error(b, i + 8, 4)),
                        }
                    } else if b.get(i + 6).is_none()
                        || (b.get(i + 6) == Some(&b'\\') && b.get(i + 7).is_none())
                    {
                        Err(Error::malformed(Malformed::UnexpectedEnd, b.len()))
                    } else {
                        Err(Error::malformed(Malformed::LoneSurrogate, i))
                    }
                }
                0xDC00..=0xDFFF => Err(Error::malformed(Malformed::LoneSurrogate, i)),
                _ => Ok(i + 6),
            }
        }
        Some(_) => Err(Error::malformed(Malformed::InvalidEscape, i)),
        None => Err(Error::malformed(Malformed::UnexpectedEnd, i + 1)),
    }
}

#[cold]
fn escape_error(b: &[u8], at: usize, len: usize) -> Error {
    if b.len() < at + len && b[at.min(b.len())..].iter().all(u8::is_ascii_hexdigit) {
        Error::malformed(Malformed::UnexpectedEnd, b.len())
    } else {
        Error::malformed(Malformed::InvalidEscape, at)
    }
}

/// Four hex digits (either case) at `s[at..at + 4]`.
#[inline]
pub(crate) fn hex4(s: &[u8], at: usize) -> Option<u32> {
    let digits = s.get(at..at.checked_add(4)?)?;
    let mut v = 0u32;
    for &d in digits {
        let x = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u32::from(x);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::scan;

    /// A byte-at-a-time reference for `string_body`: the end quote and whether escapes were
    /// seen, or `None` for any invalid body.
    fn reference(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
        let from = i;
        let mut escaped = false;
        loop {
            match *b.get(i)? {
                b'"' => {
                    return std::str::from_utf8(&b[from..i])
                        .is_ok()
                        .then_some((i, escaped))
                }
                b'\\' => {
                    escaped = true;
                    i = escape(b, i).ok()?;
                }
                c if c < 0x20 => return None,
                _ => i += 1,
            }
        }
    }

    /// `string_body` on one backend's kernel.
    struct Body<'a>(&'a [u8], usize);

    impl scan::WithKernel for Body<'_> {
        type Out = Result<(usize, bool), Error>;
        fn run<K: Kernel>(self, kernel: K) -> Self::Out {
            string_body(kernel, self.0, self.1, &mut Window::default())
        }
    }

    /// Every backend agrees with the reference, at several offsets from a block boundary.
    fn agree(body: &[u8]) {
        for pad in [0usize, 1, 7, 31, 60, 63, 64, 65] {
            let mut b = vec![b'x'; pad];
            b.extend_from_slice(body);
            for backend in scan::available() {
                let checked = scan::checked(backend).unwrap();
                let got = scan::dispatch(checked, Body(&b, pad)).ok();
                assert_eq!(
                    got,
                    reference(&b, pad),
                    "{backend:?} pad {pad} body {:?}",
                    String::from_utf8_lossy(body)
                );
            }
        }
    }

    /// `string_body` at each of `starts` in order with one window kept across them, as the
    /// parser calls it.
    struct Seq<'a>(&'a [u8], &'a [usize]);

    impl scan::WithKernel for Seq<'_> {
        type Out = Vec<Option<(usize, bool)>>;
        fn run<K: Kernel>(self, kernel: K) -> Self::Out {
            let mut window = Window::default();
            self.1
                .iter()
                .map(|&i| string_body(kernel, self.0, i, &mut window).ok())
                .collect()
        }
    }

    #[test]
    fn a_window_kept_across_strings_answers_like_a_fresh_one() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let pieces: &[&[u8]] = &[
            b"a",
            b"type",
            b"\\n",
            b"\"",
            b"\xc3\xa9",
            b"\x01",
            b"\\",
            b"\xf0\x9f\x8e\x89",
            b"\xc3",
            b"\xed\xa0\x80",
            // Plain runs, so bodies also start in one 64-byte window and end in the next, or
            // beyond it.
            b"abcdefghijklmnopqrstuvwxyz0123",
            b"0123456789abcdef",
        ];
        for _ in 0..3000 {
            let mut b = Vec::new();
            let mut starts = Vec::new();
            for _ in 0..(x % 40) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b.extend(std::iter::repeat_n(b' ', (x % 4) as usize));
                b.push(b'"');
                starts.push(b.len());
                for k in 0..(x >> 8) % 12 {
                    b.extend_from_slice(pieces[((x >> (16 + 3 * k)) % 12) as usize]);
                }
                if (x >> 60) != 0 {
                    b.push(b'"');
                }
            }
            let want: Vec<_> = starts.iter().map(|&i| reference(&b, i)).collect();
            for backend in scan::available() {
                let checked = scan::checked(backend).unwrap();
                assert_eq!(
                    scan::dispatch(checked, Seq(&b, &starts)),
                    want,
                    "{backend:?} {:?}",
                    String::from_utf8_lossy(&b)
                );
            }
        }
    }

    #[test]
    fn backslash_runs_across_block_boundaries() {
        for run in 0..140 {
            for tail in [
                &b"\"rest"[..],
                b"n\"",
                b"u0041\"",
                b"ud83d\\ude00\"",
                b"\"",
                b"",
            ] {
                let mut body = vec![b'a'; run % 70];
                body.extend(std::iter::repeat_n(b'\\', run));
                body.extend_from_slice(tail);
                agree(&body);
            }
        }
    }

    #[test]
    fn escapes_and_errors_match_the_reference() {
        let cases: &[&[u8]] = &[
            b"plain\"",
            b"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
            b"\\u00e9\\u00E9\"",
            b"\\ud83d\\ude00\"",
            b"\\ud83d\"",
            b"\\ude00\"",
            b"\\u12\"",
            b"\\u12\"3456\"",
            b"\\x\"",
            b"tab\there\"",
            b"unterminated",
            b"\\",
            b"\\u",
            b"\\ud83d\\",
            b"\\ud83d\\u",
            b"\\ud83d\\udBFF\"",
            b"caf\xc3\xa9\"",
            b"caf\xc3\"",
            b"\xf0\x9f\x98\x80\\n\"",
            b"\xc0\xaf\"",
        ];
        for body in cases {
            agree(body);
            let long: Vec<u8> = [&b"y"[..]; 100]
                .concat()
                .into_iter()
                .chain(body.iter().copied())
                .collect();
            agree(&long);
        }
    }

    #[test]
    fn generated_bodies_match_the_reference() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let alphabet: &[&[u8]] = &[
            b"a",
            b"\\",
            b"\"",
            b"n",
            b"u",
            b"d83d",
            b"de00",
            b"0041",
            b"\x01",
            b"\xc3\xa9",
            b"\xe2\x82\xac",
            b"\xc3",
            b"\xff",
            b"\xed\xa0\x80",
            b"\\\\",
            b"\\\"",
        ];
        for _ in 0..5000 {
            let mut body = Vec::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut y = x;
            for _ in 0..(x % 90) {
                y = y
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                body.extend_from_slice(alphabet[(y >> 59) as usize % alphabet.len()]);
            }
            agree(&body);
        }
    }
}
