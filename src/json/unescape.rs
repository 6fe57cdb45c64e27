//! Decoding of already-validated JSON string bodies (the bytes between the quotes).
//!
//! Owns the mapping from escape sequences to UTF-8. The parser validated every escape, so
//! these functions never fail; fed bytes the parser never accepted (a caller bug) they emit
//! U+FFFD instead of panicking. This module never validates or scans for string ends.

/// The character an escape at `raw[i]` (a backslash) stands for, and the escape's length.
#[inline]
pub(crate) fn escape_at(raw: &[u8], i: usize) -> (char, usize) {
    let simple = |c| (c, 2);
    match raw.get(i + 1) {
        Some(b'"') => simple('"'),
        Some(b'\\') => simple('\\'),
        Some(b'/') => simple('/'),
        Some(b'b') => simple('\u{8}'),
        Some(b'f') => simple('\u{c}'),
        Some(b'n') => simple('\n'),
        Some(b'r') => simple('\r'),
        Some(b't') => simple('\t'),
        Some(b'u') => {
            let Some(hi) = hex4(raw, i + 2) else {
                return ('\u{fffd}', 2);
            };
            if (0xD800..0xDC00).contains(&hi) {
                if raw.get(i + 6) == Some(&b'\\') && raw.get(i + 7) == Some(&b'u') {
                    if let Some(lo) = hex4(raw, i + 8).filter(|lo| (0xDC00..0xE000).contains(lo)) {
                        let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                        return (char::from_u32(cp).unwrap_or('\u{fffd}'), 12);
                    }
                }
                return ('\u{fffd}', 6);
            }
            (char::from_u32(hi).unwrap_or('\u{fffd}'), 6)
        }
        _ => ('\u{fffd}', 1),
    }
}

/// Decodes the `\uXXXX` escape (or `\uD8xx\uDCxx` surrogate pair) at the start of `s`: the
/// character and the escape's length; `None` when it is not one valid escape.
pub(crate) fn unicode_escape(s: &[u8]) -> Option<(char, usize)> {
    let first = hex4(s, 2)?;
    if (0xD800..0xDC00).contains(&first) {
        if s.get(6..8)? != b"\\u" {
            return None;
        }
        let low = hex4(s, 8).filter(|low| (0xDC00..0xE000).contains(low))?;
        let code = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00);
        return char::from_u32(code).map(|c| (c, 12));
    }
    char::from_u32(first).map(|c| (c, 6))
}

/// Four hex digits at `raw[at..at + 4]`.
#[inline]
pub(crate) fn hex4(raw: &[u8], at: usize) -> Option<u32> {
    let digits = raw.get(at..at + 4)?;
    let mut v = 0u32;
    for &d in digits {
        let x = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | x as u32;
    }
    Some(v)
}

/// Appends the decoded bytes of `raw` to `out`.
pub(crate) fn decode_into(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    while let Some(off) = raw.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        out.extend_from_slice(&raw[i..i + off]);
        let (c, len) = escape_at(raw, i + off);
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        i += off + len;
    }
    out.extend_from_slice(raw.get(i..).unwrap_or(&[]));
}

/// Appends the decoded text of `raw` to `out`.
pub(crate) fn decode_into_string(raw: &str, out: &mut String) {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while let Some(off) = bytes.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        // A backslash is ASCII, so both slice ends are character boundaries.
        out.push_str(raw.get(i..i + off).unwrap_or(""));
        let (c, len) = escape_at(bytes, i + off);
        out.push(c);
        i += off + len;
    }
    out.push_str(raw.get(i..).unwrap_or(""));
}

/// Is the decoded value of `raw` exactly `want`? Allocates nothing.
pub(crate) fn decoded_eq(raw: &[u8], want: &[u8]) -> bool {
    let mut i = 0;
    let mut w = 0;
    loop {
        let run_end = match raw.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
            Some(off) => i + off,
            None => {
                let rest = raw.get(i..).unwrap_or(&[]);
                return want.get(w..) == Some(rest);
            }
        };
        let run = &raw[i..run_end];
        if want.get(w..w + run.len()) != Some(run) {
            return false;
        }
        w += run.len();
        let (c, len) = escape_at(raw, run_end);
        let mut buf = [0u8; 4];
        let enc = c.encode_utf8(&mut buf).as_bytes();
        if want.get(w..w + enc.len()) != Some(enc) {
            return false;
        }
        w += enc.len();
        i = run_end + len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(raw: &str) -> String {
        let mut s = String::new();
        decode_into_string(raw, &mut s);
        let mut v = Vec::new();
        decode_into(raw.as_bytes(), &mut v);
        assert_eq!(v, s.as_bytes());
        assert!(decoded_eq(raw.as_bytes(), s.as_bytes()));
        s
    }

    #[test]
    fn decodes_every_escape() {
        assert_eq!(
            dec(r#"a\"b\\c\/d\be\ff\ng\rh\ti"#),
            "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti"
        );
        assert_eq!(dec(r"\u00e9\u00E9"), "éé");
        assert_eq!(dec(r"\ud83d\ude00!"), "😀!");
        assert_eq!(dec(r"\u2028\u2029"), "\u{2028}\u{2029}");
        assert_eq!(dec("plain é"), "plain é");
    }

    #[test]
    fn decoded_eq_rejects_prefixes_and_extensions() {
        assert!(!decoded_eq(br"a\u0062", b"ab!"));
        assert!(!decoded_eq(br"a\u0062c", b"ab"));
        assert!(decoded_eq(br"a\u0062c", b"abc"));
        assert!(!decoded_eq(br"\n", b"n"));
    }
}
