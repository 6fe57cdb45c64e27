//! A lenient look at the top level of a line the strict parser rejected for a duplicate
//! member (PROFILE §2b): its `type` classifies the error, an unambiguous `request_id`
//! correlates the error of a `control_request` (PROFILE §5), an unambiguous `uuid` gives
//! an input-error result its `prompt_uuid`, and the `request_id`s inside a
//! `control_response`'s `response` object name the prompts a malformed answer denies
//! (PERM-049).
//!
//! Owns nothing but this scan. A member counts only when it appears exactly once at the top
//! level (names compared after unescaping, so escape-equivalent spellings collide) and its
//! value is a string; `agreed_type` also accepts a `type` repeated with one value, and
//! `response_request_ids` collects every distinct string `request_id` of every top-level
//! `response` object (a denial is the safe reading of an ambiguous answer). Must never:
//! accept a record (the line stays rejected), or echo bytes.

use agentx_wire::json;

/// At most this many distinct response `request_id`s are recovered from one line.
const MAX_RESPONSE_IDS: usize = 8;

/// What the scan recovered.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TopLevel {
    pub(crate) record_type: Option<String>,
    pub(crate) request_id: Option<String>,
    pub(crate) uuid: Option<String>,
    /// `type` when every occurrence is the same string.
    pub(crate) agreed_type: Option<String>,
    /// The distinct string `request_id`s of the top-level `response` objects.
    pub(crate) response_request_ids: Vec<String>,
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
    // Every `type` value (`None` for a non-string), and the `response` objects' ids.
    let mut types: Vec<Option<String>> = Vec::new();
    let mut response_ids: Vec<String> = Vec::new();
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
            if k == 0 && types.len() < MAX_RESPONSE_IDS {
                types.push(found[0].1.clone());
            }
        } else if name == "response" && line.get(value_start) == Some(&b'{') {
            // One level down: the inner object of a `control_response`.
            for id in inner_request_ids(&line[value_start..i]) {
                if response_ids.len() < MAX_RESPONSE_IDS && !response_ids.contains(&id) {
                    response_ids.push(id);
                }
            }
        }
    }
    let once = |k: usize| match &found[k] {
        (1, Some(v)) => Some(v.clone()),
        _ => None,
    };
    let agreed_type = match types.split_first() {
        Some((Some(first), rest)) if rest.iter().all(|t| t.as_ref() == Some(first)) => {
            Some(first.clone())
        }
        _ => None,
    };
    Some(TopLevel {
        record_type: once(0),
        request_id: once(1),
        uuid: once(2),
        agreed_type,
        response_request_ids: response_ids,
    })
}

/// Every string `request_id` member of the object `obj` (its own top level only).
fn inner_request_ids(obj: &[u8]) -> Vec<String> {
    let mut ids = Vec::new();
    let mut i = skip_ws(obj, 0) + 1;
    loop {
        i = skip_ws(obj, i);
        match obj.get(i) {
            Some(b',') => {
                i += 1;
                continue;
            }
            Some(b'"') => {}
            _ => return ids,
        }
        let Some(name_end) = string_end(obj, i) else {
            return ids;
        };
        let name = decode_string(&obj[i..name_end]);
        i = skip_ws(obj, name_end);
        if obj.get(i) != Some(&b':') {
            return ids;
        }
        i = skip_ws(obj, i + 1);
        let value_start = i;
        let Some(end) = value_end(obj, i) else {
            return ids;
        };
        i = end;
        if name.as_deref() == Some("request_id") && obj.get(value_start) == Some(&b'"') {
            if let Some(id) = decode_string(&obj[value_start..end]) {
                if !id.is_empty() && ids.len() < MAX_RESPONSE_IDS {
                    ids.push(id);
                }
            }
        }
    }
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

    /// PERM-049: the ids a malformed `control_response` names, one level down, whatever was
    /// duplicated; a repeated `type` with one value still reads as that type.
    #[test]
    fn recovers_the_request_ids_of_a_rejected_response() {
        let t = top_level(
            br#"{"type":"control_response","type":"control_response","response":{"subtype":"success","request_id":"req_1","response":{"behavior":"allow"}}}"#,
        )
        .unwrap();
        assert_eq!(t.record_type, None);
        assert_eq!(t.agreed_type.as_deref(), Some("control_response"));
        assert_eq!(t.response_request_ids, ["req_1"]);
        let t = top_level(
            br#"{"type":"control_response","response":{"subtype":"success","request_id":"req_1","request_\u0069d":"req_1"}}"#,
        )
        .unwrap();
        assert_eq!(t.response_request_ids, ["req_1"]);
        let t = top_level(
            br#"{"type":"control_response","response":{"request_id":"a","x":{"request_id":"inner"}},"response":{"request_id":"b"}}"#,
        )
        .unwrap();
        assert_eq!(t.response_request_ids, ["a", "b"]);
        let t = top_level(br#"{"type":"control_response","type":"user","response":{}}"#).unwrap();
        assert_eq!(t.agreed_type, None);
        assert!(t.response_request_ids.is_empty());
        assert_eq!(
            top_level(br#"{"type":"x","response":{"request_id":1}}"#)
                .unwrap()
                .response_request_ids,
            Vec::<String>::new()
        );
    }
}
