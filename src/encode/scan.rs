//! The frame walker of the credential validator: finds every JSON string in a final frame that
//! holds an escape, decodes it into a reused scratch buffer and hands the decoded bytes to a
//! search (WIRE-013 (c): "inside the decoded value of any JSON string", names and values, every
//! duplicate occurrence, whatever escape spelling was used).
//!
//! Owns: string boundaries over arbitrary bytes, and a strict decoder of JSON escapes.
//! Must never: build a tree, reject duplicates (the validator must *inspect* every occurrence),
//! or trust that the frame is valid JSON (it may come from a raw outbound projection).
//!
//! Why only escaped strings: a string without a backslash decodes to exactly its raw bytes,
//! which the raw scan of the whole frame already covered. So the walker jumps from backslash to
//! backslash: between two backslashes every `"` is a string boundary, so the parity of the
//! quotes before a backslash says whether it sits inside a string, and the last quote before it
//! is where that string began.

use memchr::{memchr, memchr2, memchr_iter, memrchr};

/// The outcome of walking one frame.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Walk {
    /// No decoded string matched.
    Clean,
    /// A decoded string matched.
    Found,
    /// A string holds an escape no JSON parser may accept (unknown escape, bad `\u`, lone
    /// surrogate, trailing backslash). The validator fails closed on it: a foreign lenient
    /// decoder could turn it into anything.
    Undecodable,
}

/// Walks `frame`; for every string that contains a backslash, decodes its content into
/// `scratch` (cleared first) and calls `matches(scratch)`. Strings are delimited by unescaped
/// `"`; an unterminated string runs to the end of the frame. A backslash outside any string
/// cannot start an escape and is skipped (the raw scan covered its bytes).
pub(crate) fn walk_escaped_strings(
    frame: &[u8],
    scratch: &mut Vec<u8>,
    mut matches: impl FnMut(&[u8]) -> bool,
) -> Walk {
    let mut pos = 0usize;
    while pos < frame.len() {
        let rest = &frame[pos..];
        let bs = match memchr(b'\\', rest) {
            Some(i) => i,
            None => return Walk::Clean,
        };
        let gap = &rest[..bs];
        let quotes = memchr_iter(b'"', gap).count();
        if quotes % 2 == 0 {
            // Outside any string: not an escape.
            pos += bs + 1;
            continue;
        }
        // Inside the string opened by the last quote of the gap.
        let open = match memrchr(b'"', gap) {
            Some(i) => pos + i,
            None => return Walk::Undecodable, // unreachable: quotes is odd
        };
        let content_start = open + 1;
        let content_end = string_end(frame, pos + bs);
        let content = &frame[content_start..content_end];
        scratch.clear();
        if !decode_into(content, scratch) {
            return Walk::Undecodable;
        }
        if matches(scratch) {
            return Walk::Found;
        }
        pos = content_end.saturating_add(1);
    }
    Walk::Clean
}

/// The index of the closing quote of the string whose content contains the backslash at `bs`
/// (or `frame.len()` when unterminated).
fn string_end(frame: &[u8], bs: usize) -> usize {
    let mut i = bs;
    loop {
        // `frame[i]` is a backslash: it escapes the next byte.
        i += 2;
        if i >= frame.len() {
            return frame.len();
        }
        match memchr2(b'"', b'\\', &frame[i..]) {
            Some(j) if frame[i + j] == b'"' => return i + j,
            Some(j) => i += j,
            None => return frame.len(),
        }
    }
}

/// Decodes the content of one JSON string (the bytes between its quotes) into `out`, strictly:
/// the eight short escapes and `\uXXXX` with surrogate pairs joined. Raw bytes are copied as
/// they are (the raw scan already saw them). Returns false on any escape a strict parser would
/// reject (PROFILE §2a: a lone surrogate is rejected).
pub(crate) fn decode_into(content: &[u8], out: &mut Vec<u8>) -> bool {
    let mut i = 0usize;
    while i < content.len() {
        let bs = match memchr(b'\\', &content[i..]) {
            Some(j) => i + j,
            None => {
                out.extend_from_slice(&content[i..]);
                return true;
            }
        };
        out.extend_from_slice(&content[i..bs]);
        let esc = match content.get(bs + 1) {
            Some(&b) => b,
            None => return false,
        };
        i = bs + 2;
        let byte = match esc {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let unit = match hex4(content, i) {
                    Some(u) => u,
                    None => return false,
                };
                i += 4;
                let scalar = match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate must be followed by `\u` + a low surrogate.
                        if content.get(i) != Some(&b'\\') || content.get(i + 1) != Some(&b'u') {
                            return false;
                        }
                        let low = match hex4(content, i + 2) {
                            Some(l @ 0xDC00..=0xDFFF) => l,
                            _ => return false,
                        };
                        i += 6;
                        0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return false,
                    u => u,
                };
                match char::from_u32(scalar) {
                    Some(c) => {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    None => return false,
                }
                continue;
            }
            _ => return false,
        };
        out.push(byte);
    }
    true
}

fn hex4(s: &[u8], at: usize) -> Option<u32> {
    let digits = s.get(at..at.checked_add(4)?)?;
    let mut v = 0u32;
    for &d in digits {
        let n = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            b'A'..=b'F' => d - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u32::from(n);
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded_strings(frame: &[u8]) -> (Walk, Vec<Vec<u8>>) {
        let mut seen = Vec::new();
        let mut scratch = Vec::new();
        let w = walk_escaped_strings(frame, &mut scratch, |s| {
            seen.push(s.to_vec());
            false
        });
        (w, seen)
    }

    #[test]
    fn only_escaped_strings_are_decoded() {
        let (w, seen) = decoded_strings(br#"{"a":"plain","b\"":"x\ny","c":"\u00e9\ud83d\ude00"}"#);
        assert_eq!(w, Walk::Clean);
        assert_eq!(
            seen,
            vec![b"b\"".to_vec(), b"x\ny".to_vec(), "é😀".as_bytes().to_vec()]
        );
    }

    #[test]
    fn escaped_quote_does_not_end_string() {
        let (_, seen) = decoded_strings(br#"["a\"b\\", "c"]"#);
        assert_eq!(seen, vec![b"a\"b\\".to_vec()]);
    }

    #[test]
    fn backslash_outside_string_is_skipped() {
        let (w, seen) = decoded_strings(br#"\ "x\ty" \"#);
        assert_eq!(w, Walk::Clean);
        assert_eq!(seen, vec![b"x\ty".to_vec()]);
    }

    #[test]
    fn strict_escapes() {
        for bad in [
            &br#""\q""#[..],
            br#""\u12""#,
            br#""\ud800""#,
            br#""\udc00""#,
            br#""\ud800\u0041""#,
            br#""abc\"#,
        ] {
            assert_eq!(decoded_strings(bad).0, Walk::Undecodable, "{bad:?}");
        }
    }

    #[test]
    fn unterminated_string_runs_to_end() {
        let (_, seen) = decoded_strings(b"\"ab\\ncd");
        assert_eq!(seen, vec![b"ab\ncd".to_vec()]);
    }

    #[test]
    fn found_stops_walk() {
        let mut scratch = Vec::new();
        let w = walk_escaped_strings(br#"["\u0041", "\u0042"]"#, &mut scratch, |s| s == b"A");
        assert_eq!(w, Walk::Found);
    }
}
