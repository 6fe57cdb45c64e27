//! The realistic-stream generator (`agentx_wire::sample`): every record is valid, compact,
//! duplicate-free JSON on its own line (WIRE-014, framing rule for U+2028/U+2029), the same seed
//! gives the same bytes, and the byte mix documented in `src/sample/mod.rs` holds loosely.

use std::collections::{HashMap, HashSet};
use std::fmt;

use agentx_wire::sample::{realistic_stream, stream_events};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value that refuses duplicate member names at any depth (names compared after
/// unescaping, so escape-equivalent spellings collide too).
struct NoDuplicates;

impl<'de> Deserialize<'de> for NoDuplicates {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicatesVisitor)
    }
}

struct NoDuplicatesVisitor;

impl<'de> Visitor<'de> for NoDuplicatesVisitor {
    type Value = NoDuplicates;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoDuplicates, A::Error> {
        while seq.next_element::<NoDuplicates>()?.is_some() {}
        Ok(NoDuplicates)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoDuplicates, A::Error> {
        let mut names = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if !names.insert(name.clone()) {
                return Err(de::Error::custom(format!("duplicate member {name:?}")));
            }
            map.next_value::<NoDuplicates>()?;
        }
        Ok(NoDuplicates)
    }
}

/// No JSON whitespace outside strings: the records are compact.
fn assert_compact(line: &[u8], no: usize) {
    let mut in_string = false;
    let mut escaped = false;
    for &b in line {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else {
            assert!(
                !matches!(b, b' ' | b'\t' | b'\r' | b'\n'),
                "line {no}: whitespace outside strings"
            );
        }
    }
    assert!(!in_string, "line {no}: unterminated string");
}

/// Checks every record and returns (bytes, records) per top-level `type`.
fn check_stream(bytes: &[u8]) -> HashMap<String, (usize, usize)> {
    assert_eq!(bytes.last(), Some(&b'\n'), "the stream ends with LF");
    let raw_separator = bytes
        .windows(3)
        .any(|w| w == "\u{2028}".as_bytes() || w == "\u{2029}".as_bytes());
    assert!(
        !raw_separator,
        "a raw U+2028/U+2029 would let a line splitter break a record"
    );
    let mut mix: HashMap<String, (usize, usize)> = HashMap::new();
    let mut records = 0;
    for (i, line) in bytes[..bytes.len() - 1].split(|&b| b == b'\n').enumerate() {
        let no = i + 1;
        assert!(!line.is_empty(), "line {no} is blank");
        assert_compact(line, no);
        if let Err(e) = serde_json::from_slice::<NoDuplicates>(line) {
            panic!(
                "line {no}: {e}: {}",
                String::from_utf8_lossy(&line[..line.len().min(300)])
            );
        }
        let value: serde_json::Value = serde_json::from_slice(line).unwrap();
        assert!(
            line.starts_with(b"{\"type\":\""),
            "line {no}: `type` is the first member"
        );
        let kind = value["type"].as_str().unwrap().to_owned();
        let entry = mix.entry(kind).or_default();
        entry.0 += line.len() + 1;
        entry.1 += 1;
        records += 1;
    }
    eprintln!("checked {records} records, {} bytes", bytes.len());
    mix
}

fn share(mix: &HashMap<String, (usize, usize)>, kinds: &[&str], total: usize) -> f64 {
    let bytes: usize = kinds.iter().filter_map(|k| mix.get(*k)).map(|e| e.0).sum();
    bytes as f64 / total as f64
}

#[test]
fn realistic_records_are_valid_compact_and_duplicate_free() {
    let bytes = realistic_stream(1, 4 << 20);
    let mix = check_stream(&bytes);
    for kind in [
        "system",
        "stream_event",
        "assistant",
        "user",
        "control_request",
        "result",
    ] {
        assert!(mix.contains_key(kind), "no `{kind}` record in 4 MiB");
    }
}

#[test]
fn byte_mix_matches_the_module_docs() {
    let bytes = realistic_stream(1, 16 << 20);
    let mix = check_stream(&bytes);
    let total = bytes.len();
    let user = share(&mix, &["user"], total);
    let events = share(&mix, &["stream_event"], total);
    let assistant = share(&mix, &["assistant"], total);
    let system = share(
        &mix,
        &["system", "tool_progress", "rate_limit_event"],
        total,
    );
    let control = share(&mix, &["control_request"], total);
    let result = share(&mix, &["result"], total);
    eprintln!(
        "mix: user {user:.3} stream_event {events:.3} assistant {assistant:.3} system {system:.3} \
         control_request {control:.3} result {result:.3}"
    );
    assert!(
        (0.50..0.75).contains(&user),
        "tool results are most of the bytes: {user}"
    );
    assert!(
        (0.18..0.40).contains(&events),
        "stream_event share {events}"
    );
    assert!(
        (0.03..0.12).contains(&assistant),
        "assistant share {assistant}"
    );
    assert!((0.003..0.05).contains(&system), "system share {system}");
    assert!(
        (0.001..0.03).contains(&control),
        "control_request share {control}"
    );
    assert!((0.001..0.03).contains(&result), "result share {result}");
    let records: usize = mix.values().map(|e| e.1).sum();
    let event_records = mix.get("stream_event").map_or(0, |e| e.1);
    assert!(
        event_records * 10 > records * 7,
        "most records are stream_event deltas"
    );
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = realistic_stream(42, 1 << 20);
    let b = realistic_stream(42, 1 << 20);
    assert_eq!(a, b);
    assert_ne!(a, realistic_stream(43, 1 << 20));
    assert_eq!(stream_events(42, 1 << 18), stream_events(42, 1 << 18));
    assert_ne!(stream_events(42, 1 << 18), stream_events(43, 1 << 18));
    // A shorter target is a prefix of a longer one: the target only decides where to stop.
    let long = realistic_stream(42, 3 << 20);
    assert!(long.starts_with(&a));
}

#[test]
fn stream_ends_with_the_record_that_reaches_the_target() {
    for target in [1, 100, 4096, 100_000, 1 << 20] {
        for bytes in [realistic_stream(7, target), stream_events(7, target)] {
            assert!(
                bytes.len() >= target,
                "target {target}: got {}",
                bytes.len()
            );
            let body = &bytes[..bytes.len() - 1];
            let last_start = body.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
            assert!(
                last_start < target,
                "target {target}: a whole record past the target"
            );
        }
    }
    assert!(realistic_stream(1, 0).is_empty());
    assert!(stream_events(1, 0).is_empty());
}

#[test]
fn strings_are_dense_in_escapes_and_non_ascii() {
    let bytes = realistic_stream(3, 8 << 20);
    let count = |pat: &[u8]| bytes.windows(pat.len()).filter(|w| *w == pat).count();
    for pat in [&b"\\n"[..], b"\\\"", b"\\\\", b"\\t"] {
        assert!(
            count(pat) > 1000,
            "{:?} appears {} times",
            String::from_utf8_lossy(pat),
            count(pat)
        );
    }
    // Non-ASCII as raw UTF-8: accents, CJK, emoji.
    for text in ["é", "世", "😀", "→"] {
        assert!(
            count(text.as_bytes()) > 10,
            "raw {text} appears {} times",
            count(text.as_bytes())
        );
    }
    // The same as escapes, surrogate pairs in both cases, and an escaped line separator.
    for pat in ["\\u00e9", "\\ud83d\\ude", "\\uD83D\\uDE", "\\u2028"] {
        assert!(
            count(pat.as_bytes()) > 10,
            "{pat} appears {} times",
            count(pat.as_bytes())
        );
    }
    let decoded: serde_json::Value = bytes
        .split(|&b| b == b'\n')
        .find(|l| {
            l.windows(12)
                .any(|w| w == b"\\ud83d\\ude00" || w == b"\\uD83D\\uDE00")
        })
        .map(|l| serde_json::from_slice(l).unwrap())
        .expect("a record with an escaped 😀");
    assert!(
        decoded.to_string().contains('😀'),
        "the surrogate pair decodes to one scalar"
    );
}

#[test]
fn stream_events_holds_only_small_stream_events() {
    let bytes = stream_events(5, 2 << 20);
    let mix = check_stream(&bytes);
    assert_eq!(mix.keys().collect::<Vec<_>>(), vec!["stream_event"]);
    let longest = bytes
        .split(|&b| b == b'\n')
        .map(<[u8]>::len)
        .max()
        .unwrap_or(0);
    assert!(longest < 2048, "longest stream_event is {longest} bytes");
    let text = std::str::from_utf8(&bytes).unwrap();
    for event in [
        "message_start",
        "content_block_start",
        "text_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ] {
        assert!(text.contains(event), "no {event}");
    }
    let deltas = text.matches("\"type\":\"content_block_delta\"").count();
    let records = mix["stream_event"].1;
    assert!(
        deltas * 10 > records * 7,
        "{deltas} of {records} are deltas"
    );
}
