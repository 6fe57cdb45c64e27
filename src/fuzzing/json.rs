//! Fuzz properties of the `json` layer: the parser against serde_json as a differential
//! oracle, and the writer's round trip.

use crate::json::{self, Kind, Value};

/// Parser differential: whatever we accept serde_json accepts, with an equal value; whatever
/// duplicate-free document serde_json accepts, we accept; a duplicate we report is real.
/// Without the `oracle` feature only the oracle-free properties run.
pub fn decode(data: &[u8]) {
    let mut parser = json::Parser::new();
    // Every navigation path must work on whatever we accepted.
    let ours = parser.parse(data).inspect(|&v| walk(v));
    #[cfg(feature = "oracle")]
    oracle::compare(data, ours);
    #[cfg(not(feature = "oracle"))]
    let _ = ours;
}

/// Backend differential: every scan backend this CPU can run (AVX-512BW, AVX2, SSE2, scalar)
/// gives the same verdict (error kind and offset) and the same document, and the fused UTF-8
/// check agrees with a whole-input check: accepted input is UTF-8, and input that is not
/// UTF-8 is rejected as such at its first bad byte.
pub fn backends(data: &[u8]) {
    let limits = json::Limits::default();
    let mut scalar = json::Parser::with_backend(limits, json::ScanBackend::Scalar)
        .expect("the scalar backend runs everywhere");
    let want = scalar.parse(data);
    match (&want, std::str::from_utf8(data)) {
        (Ok(_), Err(_)) => panic!("accepted input that is not UTF-8"),
        (Err(e), Err(bad)) => {
            assert_eq!(
                e.kind(),
                json::ErrorKind::InvalidUtf8,
                "not-UTF-8 reported as {e}"
            );
            assert_eq!(
                e.offset(),
                bad.valid_up_to(),
                "not-UTF-8 reported at another offset"
            );
        }
        _ => {}
    }
    for backend in json::scan_backends() {
        let mut parser = json::Parser::with_backend(limits, backend).expect("listed as available");
        let got = parser.parse(data);
        match (&want, &got) {
            (Ok(a), Ok(b)) => {
                assert!(same(*a, *b), "{backend:?} built another document");
                assert_eq!(a.raw(), b.raw(), "{backend:?} spans differ");
                let (mut x, mut y) = (Vec::new(), Vec::new());
                json::write_value_from_tape(&mut x, *a);
                json::write_value_from_tape(&mut y, *b);
                assert_eq!(x, y, "{backend:?} tape differs");
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{backend:?} rejected differently"),
            _ => panic!("{backend:?} disagrees with scalar on acceptance"),
        }
    }
    reused(data);
}

/// Parsers keep state across documents (the predicted gap of each depth, the key lists proved
/// distinct): one parser per backend, given `data`, then each of its first 64 LF-separated
/// parts, then `data` again, answers each document exactly as a fresh scalar parser does.
fn reused(data: &[u8]) {
    let limits = json::Limits::default();
    let docs: Vec<&[u8]> = std::iter::once(data)
        .chain(data.split(|&c| c == b'\n').take(64))
        .chain(std::iter::once(data))
        .collect();
    let answer = |parser: &mut json::Parser, doc: &[u8]| {
        parser.parse(doc).map(|v| {
            let mut out = Vec::new();
            json::write_value_from_tape(&mut out, v);
            (out, v.raw().len())
        })
    };
    let wants: Vec<_> = docs
        .iter()
        .map(|doc| {
            let mut fresh = json::Parser::with_backend(limits, json::ScanBackend::Scalar)
                .expect("the scalar backend runs everywhere");
            answer(&mut fresh, doc)
        })
        .collect();
    for backend in json::scan_backends() {
        let mut parser = json::Parser::with_backend(limits, backend).expect("listed as available");
        for (k, (doc, want)) in docs.iter().zip(&wants).enumerate() {
            let got = answer(&mut parser, doc);
            assert_eq!(
                &got, want,
                "{backend:?} reused for document {k} answered differently"
            );
        }
    }
}

/// Writer round trip: `parse(write(doc)) == doc`, the one-pass copy equals the tape walk, writing
/// is idempotent, and the output is one
/// physical line whatever the strings hold. Also writes the input as a string and reads it back.
pub fn write_round_trip(data: &[u8]) {
    if let Ok(doc) = json::parse(data) {
        let mut canon = Vec::new();
        json::write_value(&mut canon, doc.root());
        let mut walked = Vec::new();
        json::write_value_from_tape(&mut walked, doc.root());
        assert_eq!(
            canon, walked,
            "one-pass canonical copy differs from the tape walk"
        );
        assert_one_line(&canon);
        let again = json::parse(&canon).expect("the writer produced JSON its parser rejects");
        assert!(
            same(doc.root(), again.root()),
            "round trip changed the document"
        );
        let mut twice = Vec::new();
        json::write_value(&mut twice, again.root());
        assert_eq!(canon, twice, "canonical writing is not idempotent");
    }
    let text = String::from_utf8_lossy(data);
    let mut out = Vec::new();
    json::write_str(&mut out, &text);
    assert_one_line(&out);
    let doc = json::parse(&out).expect("write_str produced an invalid string");
    let decoded = doc
        .root()
        .as_str()
        .expect("write_str did not produce a string")
        .decode();
    assert_eq!(decoded, text, "write_str round trip changed the text");
}

fn assert_one_line(bytes: &[u8]) {
    assert!(!bytes.contains(&b'\n'), "writer emitted a raw newline");
    let separators = bytes
        .windows(3)
        .any(|w| w == "\u{2028}".as_bytes() || w == "\u{2029}".as_bytes());
    assert!(!separators, "writer emitted a raw U+2028/U+2029");
}

/// Structural equality: decoded strings and names, number lexemes, member order.
pub fn same(a: Value<'_, '_>, b: Value<'_, '_>) -> bool {
    match (a.kind(), b.kind()) {
        (Kind::Null, Kind::Null) => true,
        (Kind::Bool, Kind::Bool) => a.as_bool() == b.as_bool(),
        (Kind::Number, Kind::Number) => {
            a.as_number().map(|n| n.lexeme()) == b.as_number().map(|n| n.lexeme())
        }
        (Kind::String, Kind::String) => {
            a.as_str().map(|s| s.decode()) == b.as_str().map(|s| s.decode())
        }
        (Kind::Array, Kind::Array) => match (a.as_array(), b.as_array()) {
            (Some(x), Some(y)) => {
                x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(p, q))
            }
            _ => false,
        },
        (Kind::Object, Kind::Object) => match (a.as_object(), b.as_object()) {
            (Some(x), Some(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y.iter())
                        .all(|((kx, vx), (ky, vy))| kx.decode() == ky.decode() && same(vx, vy))
            }
            _ => false,
        },
        _ => false,
    }
}

/// Touches every accessor of every node; `get` must find each member by its decoded name.
fn walk(v: Value<'_, '_>) {
    let _ = (v.kind(), v.raw(), v.is_null(), v.as_bool());
    if let Some(n) = v.as_number() {
        let _ = (n.as_u64(), n.as_i64(), n.as_f64(), n.is_integer());
    }
    if let Some(s) = v.as_str() {
        let decoded = s.decode();
        assert!(s.eq_str(&decoded), "eq_str disagrees with decode");
    }
    if let Some(a) = v.as_array() {
        assert_eq!(a.iter().count(), a.len());
        a.iter().for_each(walk);
    }
    if let Some(o) = v.as_object() {
        assert_eq!(o.iter().count(), o.len());
        for (k, value) in o.iter() {
            let found = o
                .get(&k.decode())
                .expect("get cannot find a member by its own name");
            assert_eq!(
                found.raw().as_ptr(),
                value.raw().as_ptr(),
                "get found another member"
            );
            walk(value);
        }
    }
}

#[cfg(feature = "oracle")]
mod oracle {
    use super::*;
    use crate::json::ErrorKind;
    use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
    use std::collections::HashSet;

    /// serde_json with a visitor that rejects duplicate names (after serde_json decodes them).
    pub(super) enum Verdict {
        Accept(serde_json::Value),
        Duplicate,
        /// Rejected for a reason our profile may legitimately see differently (number out of
        /// f64 range, serde_json's own depth limit).
        Incomparable,
        Reject,
    }

    pub(super) fn compare(data: &[u8], ours: Result<Value<'_, '_>, json::Error>) {
        let verdict = judge(data);
        match (ours, verdict) {
            (_, Verdict::Incomparable) => {}
            (Err(e), _) if e.kind() == ErrorKind::TooDeep => {}
            (Ok(v), Verdict::Accept(theirs)) => {
                if let Some(mine) = to_serde(v) {
                    assert_eq!(mine, theirs, "accepted value differs from serde_json's");
                }
            }
            (Ok(_), _) => panic!("we accepted what serde_json rejects"),
            (Err(e), Verdict::Accept(_)) => {
                panic!("we rejected a duplicate-free document serde_json accepts: {e}")
            }
            (Err(e), Verdict::Reject) if e.is_duplicate_member() => {
                panic!("we reported a duplicate member serde_json's visitor did not find")
            }
            (Err(_), _) => {}
        }
    }

    fn judge(data: &[u8]) -> Verdict {
        let mut de = serde_json::Deserializer::from_slice(data);
        let result = Strict
            .deserialize(&mut de)
            .and_then(|v| de.end().map(|()| v));
        match result {
            Ok(v) => Verdict::Accept(v),
            Err(e) => {
                let msg = e.to_string();
                if msg.starts_with(DUPLICATE) {
                    Verdict::Duplicate
                } else if msg.contains("number out of range") || msg.contains("recursion limit") {
                    Verdict::Incomparable
                } else {
                    Verdict::Reject
                }
            }
        }
    }

    const DUPLICATE: &str = "oracle: duplicate member";

    /// Our value as serde_json's, numbers through serde_json's own number parser.
    fn to_serde(v: Value<'_, '_>) -> Option<serde_json::Value> {
        Some(match v.kind() {
            Kind::Null => serde_json::Value::Null,
            Kind::Bool => serde_json::Value::Bool(v.as_bool()?),
            Kind::Number => serde_json::from_str(v.as_number()?.lexeme()).ok()?,
            Kind::String => serde_json::Value::String(v.as_str()?.decode().into_owned()),
            Kind::Array => {
                serde_json::Value::Array(v.as_array()?.iter().map(to_serde).collect::<Option<_>>()?)
            }
            Kind::Object => {
                let mut map = serde_json::Map::new();
                for (k, value) in v.as_object()?.iter() {
                    map.insert(k.decode().into_owned(), to_serde(value)?);
                }
                serde_json::Value::Object(map)
            }
        })
    }

    struct Strict;

    impl<'de> DeserializeSeed<'de> for Strict {
        type Value = serde_json::Value;
        fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(StrictVisitor)
        }
    }

    struct StrictVisitor;

    impl<'de> Visitor<'de> for StrictVisitor {
        type Value = serde_json::Value;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
            Ok(v.into())
        }
        fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
            Ok(v.into())
        }
        fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
            Ok(v.into())
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            serde_json::Number::from_f64(v)
                .map(Into::into)
                .ok_or_else(|| E::custom("number out of range"))
        }
        fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
            Ok(v.into())
        }
        fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
            Ok(v.into())
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(serde_json::Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(v) = seq.next_element_seed(Strict)? {
                out.push(v);
            }
            Ok(serde_json::Value::Array(out))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut seen = HashSet::new();
            let mut out = serde_json::Map::new();
            while let Some(k) = map.next_key::<String>()? {
                if !seen.insert(k.clone()) {
                    return Err(de::Error::custom(DUPLICATE));
                }
                let v = map.next_value_seed(Strict)?;
                out.insert(k, v);
            }
            Ok(serde_json::Value::Object(out))
        }
    }
}
