//! Compact JSON text for the generator: member names, escaped strings, numbers, identifiers.
//!
//! Owns: appending already-valid compact JSON to a byte buffer, with the two string spellings
//! real producers use — raw UTF-8 (Node/Go/Rust emitters) and ASCII-only `\uXXXX` escapes with
//! surrogate pairs for astral characters (Python's `ensure_ascii`). U+2028 and U+2029 are always
//! written as `\u2028`/`\u2029` (framing rule: a line splitter must not break a record).
//! Never: checks member-name uniqueness (the record builders use fixed member sets), allocates
//! per value beyond the output buffer, or depends on the library's own JSON writer (so the
//! benchmark input does not share code with the code under test).

use super::rng::SplitMix64;

/// How non-ASCII characters of a string are spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spelling {
    /// Raw UTF-8; only `"`, `\`, control characters and U+2028/U+2029 are escaped.
    Raw,
    /// Every non-ASCII scalar as `\uXXXX` (surrogate pairs above U+FFFF), lower-case hex.
    AsciiLower,
    /// Same, upper-case hex (`\uD83D\uDE00`).
    AsciiUpper,
}

/// The output buffer of one stream and the spelling used for the strings being written.
pub(crate) struct JsonOut {
    pub(crate) buf: Vec<u8>,
    pub(crate) spelling: Spelling,
}

use crate::hex::LOWER as HEX_LOWER;
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// Bytes that always need an escape inside a JSON string: controls, quote, backslash; plus 0xE2,
/// the lead byte of U+2028/U+2029, which is checked further when seen.
const fn special_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = true;
        i += 1;
    }
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[0xE2] = true;
    t
}
static SPECIAL: [bool; 256] = special_table();

impl JsonOut {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Self {
            buf: Vec::with_capacity(n),
            spelling: Spelling::Raw,
        }
    }

    #[inline]
    pub(crate) fn raw(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    #[inline]
    pub(crate) fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    /// `"name":` — names are ASCII constants without characters that need escaping.
    #[inline]
    pub(crate) fn key(&mut self, name: &str) {
        self.buf.push(b'"');
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// `,"name":` — a member that is not the first of its object.
    #[inline]
    pub(crate) fn next_key(&mut self, name: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// A complete quoted string.
    #[inline]
    pub(crate) fn string(&mut self, s: &str) {
        self.buf.push(b'"');
        self.string_body(s);
        self.buf.push(b'"');
    }

    /// String contents without the quotes, so a long value can be assembled from pieces.
    pub(crate) fn string_body(&mut self, s: &str) {
        match self.spelling {
            Spelling::Raw => self.body_raw(s),
            Spelling::AsciiLower => self.body_ascii(s, HEX_LOWER),
            Spelling::AsciiUpper => self.body_ascii(s, HEX_UPPER),
        }
    }

    fn body_raw(&mut self, s: &str) {
        let bytes = s.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if !SPECIAL[b as usize] {
                i += 1;
                continue;
            }
            if b == 0xE2 {
                // U+2028 is E2 80 A8, U+2029 is E2 80 A9; any other E2.. sequence stays raw.
                let sep = bytes.get(i + 1) == Some(&0x80)
                    && matches!(bytes.get(i + 2), Some(0xA8) | Some(0xA9));
                if !sep {
                    i += 1;
                    continue;
                }
                self.buf.extend_from_slice(&bytes[start..i]);
                let last = if bytes.get(i + 2) == Some(&0xA8) {
                    b'8'
                } else {
                    b'9'
                };
                self.buf.extend_from_slice(b"\\u202");
                self.buf.push(last);
                i += 3;
                start = i;
                continue;
            }
            self.buf.extend_from_slice(&bytes[start..i]);
            self.escape_ascii(b, HEX_LOWER);
            i += 1;
            start = i;
        }
        self.buf.extend_from_slice(&bytes[start..]);
    }

    fn body_ascii(&mut self, s: &str, hex: &[u8; 16]) {
        for c in s.chars() {
            let v = c as u32;
            if v < 0x80 {
                let b = v as u8;
                if SPECIAL[b as usize] {
                    self.escape_ascii(b, hex);
                } else {
                    self.buf.push(b);
                }
            } else {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    self.u_escape(*unit, hex);
                }
            }
        }
    }

    #[inline]
    fn escape_ascii(&mut self, b: u8, hex: &[u8; 16]) {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\t' => b't',
            b'\r' => b'r',
            0x08 => b'b',
            0x0C => b'f',
            _ => 0,
        };
        if short != 0 {
            self.buf.push(b'\\');
            self.buf.push(short);
        } else {
            self.u_escape(u16::from(b), hex);
        }
    }

    #[inline]
    fn u_escape(&mut self, unit: u16, hex: &[u8; 16]) {
        self.buf.extend_from_slice(&[
            b'\\',
            b'u',
            hex[usize::from(unit >> 12)],
            hex[usize::from((unit >> 8) & 0xF)],
            hex[usize::from((unit >> 4) & 0xF)],
            hex[usize::from(unit & 0xF)],
        ]);
    }

    #[inline]
    pub(crate) fn u64(&mut self, v: u64) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    /// A finite float, shortest round-trip form (`0.0856259`, `1.096e-5`); non-finite as `null`.
    #[inline]
    pub(crate) fn f64(&mut self, v: f64) {
        if v.is_finite() {
            self.buf
                .extend_from_slice(ryu::Buffer::new().format_finite(v).as_bytes());
        } else {
            self.buf.extend_from_slice(b"null");
        }
    }

    #[inline]
    pub(crate) fn bool(&mut self, v: bool) {
        self.buf
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    /// A quoted random version-4 UUID in canonical lower-case form.
    pub(crate) fn uuid(&mut self, rng: &mut SplitMix64) {
        let (a, b) = (rng.next_u64(), rng.next_u64());
        let a = (a & !0xF000) | 0x4000; // version 4 in bits 12..16 of the third group
        let b = (b & !(0b11 << 62)) | (0b10 << 62); // RFC 4122 variant
        self.quoted_uuid(a, b);
    }

    /// A quoted UUID from two fixed words (the session ID is fixed for a whole session).
    pub(crate) fn quoted_uuid(&mut self, a: u64, b: u64) {
        let mut hex = [0u8; 32];
        for (i, h) in hex.iter_mut().enumerate() {
            let word = if i < 16 { a } else { b };
            let shift = 60 - 4 * (i % 16);
            *h = HEX_LOWER[((word >> shift) & 0xF) as usize];
        }
        self.buf.push(b'"');
        for (i, h) in hex.iter().enumerate() {
            if matches!(i, 8 | 12 | 16 | 20) {
                self.buf.push(b'-');
            }
            self.buf.push(*h);
        }
        self.buf.push(b'"');
    }

    /// A quoted Anthropic-style identifier: `prefix` then `n` base62 characters.
    pub(crate) fn base62_id(&mut self, rng: &mut SplitMix64, prefix: &str, n: usize) {
        self.buf.push(b'"');
        self.buf.extend_from_slice(prefix.as_bytes());
        for _ in 0..n {
            self.buf.push(*rng.pick(BASE62));
        }
        self.buf.push(b'"');
    }
}

/// A random UUID as two words (for identifiers that must be repeated verbatim later).
pub(crate) fn uuid_words(rng: &mut SplitMix64) -> (u64, u64) {
    let (a, b) = (rng.next_u64(), rng.next_u64());
    ((a & !0xF000) | 0x4000, (b & !(0b11 << 62)) | (0b10 << 62))
}

#[cfg(test)]
mod tests {
    use super::{JsonOut, Spelling};

    fn spelled(s: &str, spelling: Spelling) -> String {
        let mut out = JsonOut::with_capacity(16);
        out.spelling = spelling;
        out.string(s);
        String::from_utf8(out.buf).unwrap_or_default()
    }

    #[test]
    fn raw_escapes_only_what_json_and_framing_require() {
        assert_eq!(
            spelled("a\"b\\c\n\t\u{1}", Spelling::Raw),
            r#""a\"b\\c\n\t\u0001""#
        );
        assert_eq!(spelled("é→😀", Spelling::Raw), "\"é→😀\"");
        assert_eq!(
            spelled("x\u{2028}y\u{2029}z", Spelling::Raw),
            r#""x\u2028y\u2029z""#
        );
    }

    #[test]
    fn ascii_spelling_uses_surrogate_pairs() {
        assert_eq!(
            spelled("é😀", Spelling::AsciiLower),
            r#""\u00e9\ud83d\ude00""#
        );
        assert_eq!(
            spelled("é😀", Spelling::AsciiUpper),
            r#""\u00E9\uD83D\uDE00""#
        );
        assert_eq!(spelled("\u{2028}", Spelling::AsciiUpper), r#""\u2028""#);
    }
}
