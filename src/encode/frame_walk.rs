//! The frame walker of the credential validator: finds every JSON string in a final frame that
//! holds an escape, decodes it into a reused scratch buffer and hands the decoded bytes to a
//! search (WIRE-013 (c): "inside the decoded value of any JSON string", names and values, every
//! duplicate occurrence, whatever escape spelling was used).
//!
//! Owns: string boundaries over arbitrary bytes. The escapes themselves are decoded and judged
//! canonical by `json::escape`, the writer's own table and strict decoder.
//! Must never: build a tree, reject duplicates (the validator must *inspect* every occurrence),
//! or trust that the frame is valid JSON (it may come from a raw outbound projection).
//!
//! Why only escaped strings: a string without a backslash decodes to exactly its raw bytes,
//! which the raw scan of the whole frame already covered. So the walker jumps from backslash to
//! backslash: between two backslashes every `"` is a string boundary, so the parity of the
//! quotes before a backslash says whether it sits inside a string, and the last quote before it
//! is where that string began.

use memchr::{memchr, memchr2, memchr_iter, memrchr};

use super::line::find_separator;
use crate::json::escape;

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
        if quotes.is_multiple_of(2) {
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
        if !escape::decode_body(content, scratch) {
            return Walk::Undecodable;
        }
        if matches(scratch) {
            return Walk::Found;
        }
        pos = content_end.saturating_add(1);
    }
    Walk::Clean
}

/// True when every string escape in `frame` is spelled exactly as our JSON writer spells that
/// character (`\"` `\\` `\n` `\r` `\t` `\b` `\f`, `\u00xx` lowercase for the other
/// control characters, `\u2028` `\u2029`) and no byte the writer would escape occurs raw
/// (a control character, U+2028/U+2029; the final `\n` excepted). Then every string's raw
/// bytes are the writer's escaping of its decoded bytes, so a valid-UTF-8 credential inside a
/// decoded string shows up as its escaped spelling in the raw frame, which the raw search
/// already covers (rule b): decoding can be skipped.
pub(crate) fn canonically_escaped(frame: &[u8]) -> bool {
    let body = match frame.split_last() {
        Some((b'\n', body)) => body,
        _ => frame,
    };
    if has_control_byte(body) || find_separator(body, 0).is_some() {
        return false;
    }
    // Escapes are paired left to right with no string context: inside strings this is exactly
    // the decoder's pairing, and a backslash outside strings can only consume a byte that is
    // not inside a string's content (an opening quote, another outside backslash, or hex
    // digits), so the pairing inside every later string stays the decoder's. One streaming
    // SIMD pass over the backslashes, no quote counting.
    let mut next = 0usize;
    for at in memchr_iter(b'\\', body) {
        if at < next {
            continue; // the escaped byte of the previous escape (`\\`)
        }
        match escape::canonical_escape_len(body, at) {
            Some(n) => next = at + n,
            None => return false,
        }
    }
    true
}

/// Any byte below 0x20, in a form the compiler vectorizes (no early exit inside a chunk).
fn has_control_byte(s: &[u8]) -> bool {
    s.chunks(64)
        .any(|c| c.iter().fold(false, |acc, &b| acc | (b < 0x20)))
}

/// Copies `frame` into `out` with the content of every string that holds an escape replaced by
/// its decoded bytes (quotes and everything outside strings kept as they are). Returns false
/// on an escape no strict parser accepts.
///
/// A match found in `out` either lies inside one decoded string (a real hit) or spans a string
/// delimiter or bytes outside strings; the caller confirms a hit with
/// [`walk_escaped_strings`] when the credentials could span a delimiter. This one-pass form
/// makes the common case (no hit) one decode pass plus one search, instead of one search per
/// string.
pub(crate) fn normalize_into(frame: &[u8], out: &mut Vec<u8>) -> bool {
    out.clear();
    out.reserve(frame.len());
    let mut pos = 0usize;
    while pos < frame.len() {
        let rest = &frame[pos..];
        let bs = match memchr(b'\\', rest) {
            Some(i) => i,
            None => {
                out.extend_from_slice(rest);
                return true;
            }
        };
        let gap = &rest[..bs];
        if memchr_iter(b'"', gap).count().is_multiple_of(2) {
            // Outside any string: not an escape; keep the byte.
            out.extend_from_slice(&rest[..=bs]);
            pos += bs + 1;
            continue;
        }
        out.extend_from_slice(gap);
        // Decode the rest of this string up to and including its closing quote.
        let mut i = pos + bs;
        loop {
            // `frame[i]` is a backslash.
            let consumed = match decode_escape(frame, i, out) {
                Some(n) => n,
                None => return false,
            };
            i += consumed;
            match memchr2(b'"', b'\\', &frame[i..]) {
                Some(j) if frame[i + j] == b'"' => {
                    out.extend_from_slice(&frame[i..=i + j]);
                    pos = i + j + 1;
                    break;
                }
                Some(j) => {
                    out.extend_from_slice(&frame[i..i + j]);
                    i += j;
                }
                None => {
                    out.extend_from_slice(&frame[i..]);
                    return true;
                }
            }
        }
    }
    true
}

/// Decodes the escape starting with the backslash at `frame[at]` into `out`; returns how many
/// bytes it spans, or `None` if a strict parser would reject it.
fn decode_escape(frame: &[u8], at: usize, out: &mut Vec<u8>) -> Option<usize> {
    let (c, len) = escape::decode_escape(frame, at)?;
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
    Some(len)
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
    fn normalize_matches_per_string_decoding() {
        let cases: [&[u8]; 8] = [
            br#"{"a":"plain","b\"":"x\ny","c":"\u00e9\ud83d\ude00"}"#,
            br#"["a\"b\\", "c"]"#,
            br#"\ "x\ty" \"#,
            b"\"ab\\ncd",
            b"no escapes at all",
            br#""\u0041""\u0042""#,
            br#"{"k":"\/\b\f\r"}"#,
            br#""\\""#,
        ];
        for c in cases {
            let mut n = Vec::new();
            assert!(normalize_into(c, &mut n), "{c:?}");
            // Every decoded string occurs in the normalized frame.
            let (_, seen) = decoded_strings(c);
            for s in seen {
                assert!(
                    n.windows(s.len()).any(|w| w == &s[..]) || s.is_empty(),
                    "{c:?}"
                );
            }
        }
        let mut n = Vec::new();
        assert!(normalize_into(br#"{"a":"x\u0041y","b":1}"#, &mut n));
        assert_eq!(n, br#"{"a":"xAy","b":1}"#.to_vec());
        for bad in [&br#""\q""#[..], br#""\u12""#, br#""\ud800""#, br#""abc\"#] {
            assert!(!normalize_into(bad, &mut n), "{bad:?}");
        }
    }

    #[test]
    fn canonical_escape_detection() {
        let yes: [&[u8]; 5] = [
            br#"{"a":"x\"y\\z\n\r\t\b\f"}"#,
            br#"{"a":"\u0001\u001f\u2028\u2029"}"#,
            b"{\"a\":\"plain\"}\n",
            "{\"a\":\"é😀→\"}\n".as_bytes(),
            br#"["a\\","b\\\""]"#,
        ];
        for f in yes {
            assert!(canonically_escaped(f), "{f:?}");
        }
        let no: [&[u8]; 11] = [
            br#"{"a":"\/"}"#,
            br#"{"a":"\u0041"}"#,
            br#"{"a":"\u000a"}"#,
            br#"{"a":"\u001F"}"#,
            br#"{"a":"\ud83d\ude00"}"#,
            br#"{"a":"\u00e9"}"#,
            b"{\"a\":\"raw\ttab\"}",
            "{\"a\":\"raw\u{2028}\"}".as_bytes(),
            br#"\ {"a":"x"}"#,
            br#"{"a":"\q"}"#,
            b"{\"a\":1}\n\n",
        ];
        for f in no {
            assert!(!canonically_escaped(f), "{f:?}");
        }
    }

    #[test]
    fn found_stops_walk() {
        let mut scratch = Vec::new();
        let w = walk_escaped_strings(br#"["\u0041", "\u0042"]"#, &mut scratch, |s| s == b"A");
        assert_eq!(w, Walk::Found);
    }
}
