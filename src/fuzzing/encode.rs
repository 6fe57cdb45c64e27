//! Fuzz entry point of the encoder's credential validation (WIRE-013): arbitrary records and an
//! arbitrary credential set, checked against an independent naive reference.
//!
//! Input layout: byte 0 picks the number of credentials (0..=7); each credential is a length
//! byte (1..=16) and that many bytes (any bytes: JSON punctuation, `\n`, non-UTF-8). The rest is
//! split at `0xFF` into records; each record is encoded twice, once as raw marshaled bytes (a
//! raw outbound projection) and, when it parses, once as `json::write_value` output.
//!
//! Properties, per record:
//! - whenever the encoder hands out a frame, the frame is exactly the reference final frame, and
//!   no credential occurs in it raw, in its escaped spelling, or in any decoded string
//!   (reference: a byte-at-a-time string walker and decoder, `windows()` search);
//! - whenever the reference finds a credential (or an undecodable string), the encoder refuses
//!   the frame with the validation failure and hands out nothing (exact agreement);
//! - with no credentials, output is the marshaled bytes plus `\n` (separators aside).

use crate::encode::{escaped_spelling, CredentialSet, FailureKind, FrameEncoder};
use crate::json;

/// See the module docs.
pub fn credential_frame(data: &[u8]) {
    let Some((&count, mut rest)) = data.split_first() else {
        return;
    };
    let mut credentials: Vec<Vec<u8>> = Vec::new();
    for _ in 0..(count % 8) {
        let Some((&len, after)) = rest.split_first() else {
            break;
        };
        let len = usize::from(len % 16) + 1;
        if after.len() < len {
            break;
        }
        credentials.push(after[..len].to_vec());
        rest = &after[len..];
    }
    let Ok(set) = CredentialSet::new(&credentials) else {
        panic!("a set of 1..=16-byte credentials must build");
    };
    for c in &credentials {
        if let Ok(s) = std::str::from_utf8(c) {
            // Our escaped spelling is the JSON writer's, byte for byte.
            let mut w = Vec::new();
            json::write_str(&mut w, s);
            assert_eq!(&w[1..w.len() - 1], &escaped_spelling(c)[..]);
        }
    }
    let mut parser = json::Parser::new();
    for record in rest.split(|&b| b == 0xFF) {
        check_record(&set, &credentials, record);
        if let Ok(v) = parser.parse(record) {
            let mut canonical = Vec::new();
            json::write_value(&mut canonical, v);
            check_record(&set, &credentials, &canonical);
        }
    }
}

fn check_record(set: &CredentialSet, credentials: &[Vec<u8>], marshaled: &[u8]) {
    let mut encoder = FrameEncoder::new();
    if encoder.set_credentials(set.clone()).is_err() {
        panic!("configuration before the first record must succeed");
    }
    let result = encoder.encode(marshaled).map(<[u8]>::to_vec);
    let Some(frame) = reference_final_frame(marshaled) else {
        // A raw line feed: the encoder must refuse as a record fault and hand out nothing.
        assert!(matches!(
            result.map_err(|f| f.kind()),
            Err(FailureKind::Record(_))
        ));
        return;
    };
    let expect_reject = reference_rejects(credentials, &frame);
    match result {
        Ok(written) => {
            assert!(!expect_reject, "a frame carrying a credential was written");
            assert_eq!(written, frame);
        }
        Err(f) => {
            assert_eq!(f.kind(), FailureKind::Validation);
            assert!(expect_reject, "a clean frame was refused");
        }
    }
}

/// The final frame, computed independently: raw U+2028/U+2029 escaped, `None` on a raw LF,
/// `\n` appended.
fn reference_final_frame(marshaled: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(marshaled.len() + 1);
    let mut i = 0;
    while i < marshaled.len() {
        let b = marshaled[i];
        if b == b'\n' {
            return None;
        }
        if b == 0xE2 && marshaled.get(i + 1) == Some(&0x80) {
            match marshaled.get(i + 2) {
                Some(0xA8) => {
                    out.extend_from_slice(b"\\u2028");
                    i += 3;
                    continue;
                }
                Some(0xA9) => {
                    out.extend_from_slice(b"\\u2029");
                    i += 3;
                    continue;
                }
                _ => {}
            }
        }
        out.push(b);
        i += 1;
    }
    out.push(b'\n');
    Some(out)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A byte-wise JSON-ish escaper, independent of the library's.
fn naive_escape(c: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let s = c;
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b == 0xE2 && s.get(i + 1) == Some(&0x80) && matches!(s.get(i + 2), Some(0xA8 | 0xA9)) {
            out.extend_from_slice(if s[i + 2] == 0xA8 {
                b"\\u2028"
            } else {
                b"\\u2029"
            });
            i += 3;
            continue;
        }
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            0..=31 => out.extend_from_slice(format!("\\u{:04x}", b).as_bytes()),
            _ => out.push(b),
        }
        i += 1;
    }
    out
}

/// Walks `frame` one byte at a time; returns every string's content, or `None` when some
/// string holds an escape a strict parser rejects.
fn naive_strings(frame: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut strings = Vec::new();
    let mut i = 0;
    while i < frame.len() {
        if frame[i] != b'"' {
            i += 1;
            continue;
        }
        // Inside a string.
        let mut decoded = Vec::new();
        i += 1;
        loop {
            let Some(&b) = frame.get(i) else {
                strings.push(decoded);
                return Some(strings);
            };
            match b {
                b'"' => {
                    i += 1;
                    break;
                }
                b'\\' => {
                    let e = *frame.get(i + 1)?;
                    i += 2;
                    match e {
                        b'"' | b'\\' | b'/' => decoded.push(e),
                        b'b' => decoded.push(8),
                        b'f' => decoded.push(12),
                        b'n' => decoded.push(b'\n'),
                        b'r' => decoded.push(b'\r'),
                        b't' => decoded.push(b'\t'),
                        b'u' => {
                            let hi = hex(frame.get(i..i + 4)?)?;
                            i += 4;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if frame.get(i..i + 2)? != b"\\u" {
                                    return None;
                                }
                                let lo = hex(frame.get(i + 2..i + 6)?)?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return None;
                                }
                                i += 6;
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return None;
                            } else {
                                hi
                            };
                            let ch = char::from_u32(cp)?;
                            decoded.extend_from_slice(ch.to_string().as_bytes());
                        }
                        _ => return None,
                    }
                }
                _ => {
                    decoded.push(b);
                    i += 1;
                }
            }
        }
        strings.push(decoded);
    }
    Some(strings)
}

fn hex(d: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(d).ok()?;
    if !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

fn reference_rejects(credentials: &[Vec<u8>], frame: &[u8]) -> bool {
    if credentials.is_empty() {
        return false;
    }
    if credentials
        .iter()
        .any(|c| contains(frame, c) || contains(frame, &naive_escape(c)))
    {
        return true;
    }
    match naive_strings(frame) {
        None => true,
        Some(strings) => strings
            .iter()
            .any(|s| credentials.iter().any(|c| contains(s, c))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_walker_sees_every_string() {
        let s = naive_strings(br#"{"a\u0041":"x\ny","a":"b"}"#).unwrap();
        assert_eq!(
            s,
            vec![
                b"aA".to_vec(),
                b"x\ny".to_vec(),
                b"a".to_vec(),
                b"b".to_vec()
            ]
        );
        assert!(naive_strings(br#""\q""#).is_none());
    }

    #[test]
    fn smoke() {
        // 2 credentials: `","` and `}\n`; records separated by 0xFF.
        let mut data = vec![2u8, 2, b'"', b',', b'"', 1, b'}', b'\n'];
        data.extend_from_slice(br#"{"a":"b","c":1}"#);
        data.push(0xFF);
        data.extend_from_slice(br#"[1,2]"#);
        credential_frame(&data);
    }
}
