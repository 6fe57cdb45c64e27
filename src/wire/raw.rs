//! Validated JSON the protocol carries but does not define.
//!
//! Owns [`RawJson`]: a model-API payload (an assistant `message`, a `stream_event` `event`,
//! a tool `input`, usage objects, hook inputs) kept as the exact bytes of an already-validated
//! value of the line (strict grammar, no duplicates at any depth: WIRE-014), never
//! re-modelled. Encoding writes the canonical compact form of `json::write_value`: a fast path
//! copies the bytes without insignificant whitespace when every escape is already canonical,
//! and anything else is re-parsed and re-written. It never accepts bytes that were not
//! validated, and never does I/O.

use std::borrow::Cow;
use std::fmt;

use crate::json::{self, Kind, Value};

use super::decode::{IntoOwned, Path, WireValue};
use super::error::Error;

/// A validated JSON value kept as bytes. Equality is equality of the canonical forms, so
/// `decode(encode(r)) == r` holds for records decoded from non-canonical lines.
#[derive(Clone)]
pub struct RawJson<'a>(Cow<'a, [u8]>);

impl<'a> RawJson<'a> {
    /// The bytes of a value of a parsed document (validated by construction).
    #[inline]
    pub fn from_value(v: Value<'_, 'a>) -> RawJson<'a> {
        RawJson(Cow::Borrowed(v.raw()))
    }

    /// Validates `bytes` as one strict JSON document and keeps them.
    pub fn parse(bytes: &'a [u8]) -> Result<RawJson<'a>, json::Error> {
        json::parse(bytes)?;
        Ok(RawJson(Cow::Borrowed(trim(bytes))))
    }

    /// Validates owned bytes.
    pub fn parse_owned(bytes: Vec<u8>) -> Result<RawJson<'static>, json::Error> {
        json::parse(&bytes)?;
        Ok(RawJson(Cow::Owned(trim(&bytes).to_vec())))
    }

    /// Canonical bytes written by an encoder (the caller wrote one JSON value).
    pub(crate) fn from_encoded(bytes: Vec<u8>) -> RawJson<'static> {
        RawJson(Cow::Owned(bytes))
    }

    /// The same validated bytes, borrowed.
    pub fn borrowed(&self) -> RawJson<'_> {
        RawJson(Cow::Borrowed(&self.0))
    }

    /// The empty array `[]`.
    pub fn empty_array() -> RawJson<'static> {
        RawJson(Cow::Borrowed(b"[]"))
    }

    /// The empty object `{}`.
    pub fn empty_object() -> RawJson<'static> {
        RawJson(Cow::Borrowed(b"{}"))
    }

    /// The value's bytes as they appeared in the line (not necessarily canonical).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The first byte tells the kind (the bytes are one validated value without leading space).
    pub fn is_object(&self) -> bool {
        self.0.first() == Some(&b'{')
    }

    /// Parses the bytes again to look inside (e.g. to decode a typed control payload).
    /// Cannot fail for bytes this type holds; the `Result` is the parser's.
    pub fn document(&self) -> Result<json::Document<'_>, json::Error> {
        json::parse(&self.0)
    }

    /// Writes the canonical compact form (`json::write_value`'s).
    pub fn write_canonical(&self, out: &mut Vec<u8>) {
        if !json::copy_canonical(&self.0, out) {
            match json::parse(&self.0) {
                Ok(doc) => json::write_value(out, doc.root()),
                Err(_) => out.extend_from_slice(b"null"),
            }
        }
    }

    /// The canonical compact bytes of this value.
    pub fn to_canonical(&self) -> RawJson<'static> {
        let mut out = Vec::with_capacity(self.0.len());
        self.write_canonical(&mut out);
        RawJson(Cow::Owned(out))
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |e| e + 1);
    b.get(start..end).unwrap_or(&[])
}

impl PartialEq for RawJson<'_> {
    fn eq(&self, other: &Self) -> bool {
        if self.0 == other.0 {
            return true;
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        self.write_canonical(&mut a);
        other.write_canonical(&mut b);
        a == b
    }
}

impl Eq for RawJson<'_> {}

impl fmt::Debug for RawJson<'_> {
    /// Length only: payloads may hold credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawJson")
            .field("len", &self.0.len())
            .finish_non_exhaustive()
    }
}

impl<'a> WireValue<'a> for RawJson<'a> {
    #[inline]
    fn decode(v: Value<'_, 'a>, _at: &Path<'_>) -> Result<Self, Error> {
        Ok(RawJson::from_value(v))
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.write_canonical(out);
    }
}

impl IntoOwned for RawJson<'_> {
    type Owned = RawJson<'static>;
    fn into_owned(self) -> RawJson<'static> {
        RawJson(Cow::Owned(self.0.into_owned()))
    }
}

/// A [`RawJson`] that must be a JSON object (tool inputs, usage, settings maps).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawObject<'a>(pub RawJson<'a>);

impl<'a> RawObject<'a> {
    /// `{}`.
    pub fn empty() -> RawObject<'static> {
        RawObject(RawJson::empty_object())
    }
}

impl<'a> WireValue<'a> for RawObject<'a> {
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        if v.kind() != Kind::Object {
            return Err(Error::wrong_type(at, "an object", "PROFILE §2a"));
        }
        Ok(RawObject(RawJson::from_value(v)))
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.write_canonical(out);
    }
}

impl IntoOwned for RawObject<'_> {
    type Owned = RawObject<'static>;
    fn into_owned(self) -> RawObject<'static> {
        RawObject(self.0.into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path agrees with `json::write_value` whenever it takes the input.
    fn same_as_writer(text: &str) {
        let doc = json::parse(text.as_bytes()).expect("test input parses");
        let mut slow = Vec::new();
        json::write_value(&mut slow, doc.root());
        let raw = RawJson::from_value(doc.root());
        let mut fast = Vec::new();
        raw.write_canonical(&mut fast);
        assert_eq!(
            String::from_utf8_lossy(&fast),
            String::from_utf8_lossy(&slow),
            "{text}"
        );
    }

    #[test]
    fn canonical_copy_matches_the_writer() {
        for text in [
            r#"{"a":1}"#,
            r#" { "a" : [ 1 , 2 ] , "b" : "x y" } "#,
            r#"{"s":"q\"b\\n\nt\tr\rb\bf\f"}"#,
            r#"{"s":"\/"}"#,
            r#"{"s":"\u0041\u00e9\u2028"}"#,
            "{\"s\":\"raw\u{2028}sep\u{2029}\"}",
            "{\"s\":\"é€😀\"}",
            r#"{"s":"\u001f\u007f"}"#,
            r#"[1.0e+2, -0, true, false, null, "", {}, []]"#,
            r#""just a string""#,
            "\n\t{\"x\":\r\n\"y\"}\n",
        ] {
            same_as_writer(text);
        }
    }

    proptest::proptest! {
        #[test]
        fn canonical_copy_matches_the_writer_on_generated_strings(chars in proptest::collection::vec(proptest::char::any(), 0..40), ws in "[ \t\r\n]{0,3}") {
            let s: String = chars.into_iter().collect();
            let mut text = String::new();
            text.push_str(&ws);
            text.push_str("{\"k\":");
            text.push_str(&ws);
            let mut quoted = Vec::new();
            json::write_str(&mut quoted, &s);
            text.push_str(std::str::from_utf8(&quoted).unwrap_or("\"\""));
            text.push('}');
            same_as_writer(&text);
            // And with every character escaped as \uXXXX (non-canonical input).
            let escaped: String = s.chars().map(|c| {
                let mut b = [0u16; 2];
                c.encode_utf16(&mut b).iter().map(|u| format!("\\u{u:04x}")).collect::<String>()
            }).collect();
            same_as_writer(&format!("[\"{escaped}\"]"));
        }
    }
}
