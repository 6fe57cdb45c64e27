//! A lenient look at the top level of a line the strict parser rejected for a duplicate
//! member (PROFILE §2b): its `type` classifies the error, an unambiguous `request_id`
//! correlates the error of a `control_request` (PROFILE §5), and an unambiguous `uuid` gives
//! an input-error result its `prompt_uuid`.
//!
//! Owns nothing but this scan. A member counts only when it appears exactly once at the top
//! level (names compared after unescaping, so escape-equivalent spellings collide) and its
//! value is a string. Must never: accept a record (the line stays rejected), or echo bytes.

use crate::json;

/// What the scan recovered.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TopLevel {
    pub(crate) record_type: Option<String>,
    pub(crate) request_id: Option<String>,
    pub(crate) uuid: Option<String>,
}

/// Scans the top-level object of `line`; `None` when it is not one.
pub(crate) fn top_level(line: &[u8]) -> Option<TopLevel> {
    let mut i = skip_ws(line, 0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let mut found: [(u32, Option<String>); 3] = [(0, None), (0, None), (0, None)];
    const NAMES: [&str; 3] = ["type", "request_id", "uuid"];
    loop {
        i = skip_ws(line, i);
        match line.get(i)? {
            b'}' => break,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let name_end = string_end(line, i)?;
        let name = decode_string(&line[i..name_end])?;
        i = skip_ws(line, name_end);
        if line.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(line, i + 1);
        let value_start = i;
        i = value_end(line, i)?;
        if let Some(k) = NAMES.iter().position(|n| *n == name) {
            found[k].0 += 1;
            found[k].1 = if line.get(value_start) == Some(&b'"') {
                decode_string(&line[value_start..i])
            } else {
                None
            };
        }
    }
    let once = |k: usize| match &found[k] {
        (1, Some(v)) => Some(v.clone()),
        _ => None,
    };
    Some(TopLevel {
        record_type: once(0),
        request_id: once(1),
        uuid: once(2),
    })
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
        i += 1;
    }
    i
}

/// `b[i]` is `"`: the index after the closing quote.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match b.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The index after the value starting at `i` (strings and brackets balanced; scalars up to
/// the next delimiter).
fn value_end(b: &[u8], mut i: usize) -> Option<usize> {
    match b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            loop {
                match b.get(i)? {
                    b'"' => {
                        i = string_end(b, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            while !matches!(
                b.get(i),
                None | Some(b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n')
            ) {
                i += 1;
            }
            Some(i)
        }
    }
}

/// A string token decoded by the strict parser (escapes, surrogates, UTF-8 checked).
fn decode_string(token: &[u8]) -> Option<String> {
    let doc = json::parse(token).ok()?;
    let s = doc.root().as_str()?.decode().into_owned();
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_unambiguous_members_only() {
        let t = top_level(
            br#"{"type":"control_request","request_id":"r1","request":{"subtype":"interrupt","subtype":"x"}}"#,
        )
        .unwrap();
        assert_eq!(t.record_type.as_deref(), Some("control_request"));
        assert_eq!(t.request_id.as_deref(), Some("r1"));
        // Escape-equivalent spellings collide: the id is ambiguous.
        let t = top_level(br#"{"type":"control_request","request_id":"a","request_\u0069d":"b"}"#)
            .unwrap();
        assert_eq!(t.request_id, None);
        let t = top_level(br#"{"t\u0079pe":"user","uuid":"u","x":[1,{"y":"}"}]}"#).unwrap();
        assert_eq!(t.record_type.as_deref(), Some("user"));
        assert_eq!(t.uuid.as_deref(), Some("u"));
        assert_eq!(top_level(b"[1]"), None);
        assert_eq!(top_level(br#"{"type":1}"#).unwrap().record_type, None);
    }
}
