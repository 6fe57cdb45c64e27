//! Decoding of already-validated JSON string bodies (the bytes between the quotes).
//!
//! Owns the decoded value of a validated string (bytes, `String`, comparison); the escape rules
//! themselves are `escape`'s. The parser validated every escape, so these functions never fail; fed bytes the parser never accepted (a caller bug) they emit
//! U+FFFD instead of panicking. This module never validates or scans for string ends.

use super::escape::decode_escape_lossy as escape_at;

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
