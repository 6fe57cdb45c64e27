//! Identifier grammars of the protocol, as validated text newtypes.
//!
//! Owns: canonical RFC 4122 UUIDs (`uuid`, `session_id`, `prompt_uuid`: lowercase
//! `8-4-4-4-12` hex, version 1–5, RFC 4122 variant; PROFILE §2b — checked by hand on the
//! 36-character form because `uuid::Uuid::try_parse` accepts braces, URNs, upper case and any
//! version, see CRATE-FACTS), upload and attachment identifiers
//! (`upl_[A-Za-z0-9][A-Za-z0-9_-]{0,62}`, `att_` likewise; WIRE-018) and SHA-256 digests (64
//! lowercase hex). A value of these types always satisfies its grammar. Never does I/O.

use std::borrow::Cow;
use std::fmt;

use crate::json::{self, Value};

use super::decode::{IntoOwned, Path, Text, WireValue};
use super::error::Error;

/// Lowercase hex digits.
const fn hex_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = b'0';
    while c <= b'9' {
        t[c as usize] = true;
        c += 1;
    }
    let mut c = b'a';
    while c <= b'f' {
        t[c as usize] = true;
        c += 1;
    }
    t
}
static LOWER_HEX: [bool; 256] = hex_table();

/// All bytes lowercase hex; branch-free over the slice.
#[inline]
fn all_lower_hex(b: &[u8]) -> bool {
    b.iter().fold(true, |ok, &c| ok & LOWER_HEX[c as usize])
}

/// Canonical lowercase RFC 4122 UUID, version 1–5, RFC variant (PROFILE §2b).
pub fn is_canonical_uuid(s: &str) -> bool {
    let Ok(b) = <&[u8; 36]>::try_from(s.as_bytes()) else {
        return false;
    };
    b[8] == b'-'
        && b[13] == b'-'
        && b[18] == b'-'
        && b[23] == b'-'
        // Version nibble 1-5; variant nibble 10xx.
        && (b'1'..=b'5').contains(&b[14])
        && matches!(b[19], b'8' | b'9' | b'a' | b'b')
        && all_lower_hex(&b[0..8])
        && all_lower_hex(&b[9..13])
        && all_lower_hex(&b[14..18])
        && all_lower_hex(&b[19..23])
        && all_lower_hex(&b[24..36])
}

/// `<prefix>[A-Za-z0-9][A-Za-z0-9_-]{0,62}` (WIRE-018).
fn is_prefixed_id(s: &str, prefix: &str) -> bool {
    let Some(rest) = s.strip_prefix(prefix) else {
        return false;
    };
    let b = rest.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphanumeric() => {}
        _ => return false,
    }
    b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-')
}

/// An upload identifier: `upl_[A-Za-z0-9][A-Za-z0-9_-]{0,62}`.
pub fn is_upload_id(s: &str) -> bool {
    is_prefixed_id(s, "upl_")
}

/// An attachment identifier: `att_[A-Za-z0-9][A-Za-z0-9_-]{0,62}`.
pub fn is_attachment_id(s: &str) -> bool {
    is_prefixed_id(s, "att_")
}

/// 64 lowercase hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

macro_rules! grammar_text {
    ($(#[$m:meta])* $name:ident, $check:path, $expected:literal, $rule:literal) => {
        $(#[$m])*
        #[derive(Clone, PartialEq, Eq, Hash)]
        pub struct $name<'a>(Text<'a>);

        impl<'a> $name<'a> {
            /// The value when it satisfies the grammar.
            pub fn new(s: impl Into<Text<'a>>) -> Option<$name<'a>> {
                let s = s.into();
                $check(&s).then_some($name(s))
            }

            /// The validated text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The owned form, for a value that must outlive its input line.
            pub fn into_owned(self) -> $name<'static> {
                $name(Cow::Owned(self.0.into_owned()))
            }
        }

        impl fmt::Debug for $name<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&*self.0, f)
            }
        }

        impl fmt::Display for $name<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl std::ops::Deref for $name<'_> {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl<'a> WireValue<'a> for $name<'a> {
            #[inline]
            fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
                let s = v.as_str().ok_or_else(|| Error::wrong_type(at, "a string", $rule))?;
                let text = super::decode::text(s);
                if $check(&text) {
                    Ok($name(text))
                } else {
                    Err(Error::invalid(at, $expected, $rule))
                }
            }
            #[inline]
            fn encode(&self, out: &mut Vec<u8>) {
                json::write_str(out, &self.0);
            }
        }

        impl IntoOwned for $name<'_> {
            type Owned = $name<'static>;
            fn into_owned(self) -> $name<'static> {
                $name::into_owned(self)
            }
        }
    };
}

/// A canonical RFC 4122 UUID (PROFILE §2b).
///
/// Borrowed from its line when decoded; its owned form keeps the 36 ASCII bytes inline, so a
/// record made owned ([`IntoOwned`]) allocates nothing for its `uuid` and `session_id`.
#[derive(Clone)]
pub struct Uuid<'a>(UuidText<'a>);

#[derive(Clone, Copy)]
enum UuidText<'a> {
    Borrowed(&'a str),
    /// The canonical form: 36 ASCII bytes (checked by [`is_canonical_uuid`] before).
    Inline([u8; 36]),
}

impl<'a> Uuid<'a> {
    /// The value when it satisfies the grammar.
    pub fn new(s: impl Into<Text<'a>>) -> Option<Uuid<'a>> {
        let s = s.into();
        if !is_canonical_uuid(&s) {
            return None;
        }
        Some(match s {
            Cow::Borrowed(b) => Uuid(UuidText::Borrowed(b)),
            Cow::Owned(o) => Uuid::inline(&o),
        })
    }

    /// `s` passed [`is_canonical_uuid`]: exactly 36 bytes.
    fn inline(s: &str) -> Uuid<'static> {
        let mut b = [b'0'; 36];
        b.copy_from_slice(s.as_bytes().get(..36).unwrap_or(&[b'0'; 36]));
        Uuid(UuidText::Inline(b))
    }

    /// The version-4 UUID (RFC 4122 variant) whose 122 free bits are taken from `hi` and `lo`,
    /// spelled in lowercase hex straight into the inline form: canonical by construction, so
    /// nothing is checked, allocated or formatted (agentx mints one for every record it writes).
    pub fn v4_from_bits(hi: u64, lo: u64) -> Uuid<'static> {
        let mut text = *b"00000000-0000-4000-8000-000000000000";
        for (at, digits, value) in [
            (0, 8, hi >> 32),
            (9, 4, (hi >> 16) & 0xffff),
            (15, 3, hi & 0xfff),
            (19, 1, 8 | ((lo >> 62) & 0x3)),
            (20, 3, (lo >> 48) & 0xfff),
            (24, 12, lo & 0xffff_ffff_ffff),
        ] {
            crate::hex::spell(&mut text[at..at + digits], value);
        }
        debug_assert!(std::str::from_utf8(&text).is_ok_and(is_canonical_uuid));
        Uuid(UuidText::Inline(text))
    }

    /// The validated text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            UuidText::Borrowed(s) => s,
            // ASCII by construction; `from_utf8` only re-checks 36 bytes (no unsafe here).
            UuidText::Inline(b) => std::str::from_utf8(b).unwrap_or_default(),
        }
    }

    /// The owned form, for a value that must outlive its input line (no allocation).
    pub fn into_owned(self) -> Uuid<'static> {
        match self.0 {
            UuidText::Borrowed(s) => Uuid::inline(s),
            UuidText::Inline(b) => Uuid(UuidText::Inline(b)),
        }
    }
}

impl PartialEq for Uuid<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Uuid<'_> {}

impl std::hash::Hash for Uuid<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for Uuid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Uuid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::ops::Deref for Uuid<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl<'a> WireValue<'a> for Uuid<'a> {
    #[inline]
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let s = v
            .as_str()
            .ok_or_else(|| Error::wrong_type(at, "a string", "PROFILE §2b"))?;
        Uuid::new(super::decode::text(s)).ok_or_else(|| {
            Error::invalid(
                at,
                "a canonical lowercase RFC 4122 version 1-5 UUID",
                "PROFILE §2b",
            )
        })
    }
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        json::write_str(out, self.as_str());
    }
}

impl IntoOwned for Uuid<'_> {
    type Owned = Uuid<'static>;
    fn into_owned(self) -> Uuid<'static> {
        Uuid::into_owned(self)
    }
}
grammar_text!(
    /// `upl_[A-Za-z0-9][A-Za-z0-9_-]{0,62}` (WIRE-018).
    UploadId,
    is_upload_id,
    "an upload id upl_[A-Za-z0-9][A-Za-z0-9_-]{0,62}",
    "WIRE-018"
);
grammar_text!(
    /// `att_[A-Za-z0-9][A-Za-z0-9_-]{0,62}` (WIRE-018).
    AttachmentId,
    is_attachment_id,
    "an attachment id att_[A-Za-z0-9][A-Za-z0-9_-]{0,62}",
    "WIRE-018"
);
grammar_text!(
    /// A SHA-256 digest as 64 lowercase hex digits (WIRE-017, WIRE-018).
    Sha256Hex,
    is_sha256_hex,
    "64 lowercase hex digits",
    "WIRE-018"
);

/// A nonempty string (`request_id`, `tool_name`, `tool_use_id`).
fn is_nonempty(s: &str) -> bool {
    !s.is_empty()
}

grammar_text!(
    /// A nonempty string (PERM-020 `tool_name`/`tool_use_id`, control `request_id`).
    NonEmpty,
    is_nonempty,
    "a nonempty string",
    "PERM-020"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_edges() {
        assert!(is_canonical_uuid("3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"));
        assert!(is_canonical_uuid("00000000-0000-1000-8000-000000000000"));
        assert!(is_canonical_uuid("ffffffff-ffff-5fff-bfff-ffffffffffff"));
        // Version 0 and 6, variant 0xxx / 110x, upper case, braces, simple form, length.
        assert!(!is_canonical_uuid("3f1e7948-5c1f-0c1f-8e2c-88bc9839ec27"));
        assert!(!is_canonical_uuid("3f1e7948-5c1f-6c1f-8e2c-88bc9839ec27"));
        assert!(!is_canonical_uuid("3f1e7948-5c1f-4c1f-7e2c-88bc9839ec27"));
        assert!(!is_canonical_uuid("3f1e7948-5c1f-4c1f-ce2c-88bc9839ec27"));
        assert!(!is_canonical_uuid("3F1E7948-5C1F-4C1F-8E2C-88BC9839EC27"));
        assert!(!is_canonical_uuid("{3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27}"));
        assert!(!is_canonical_uuid("3f1e79485c1f4c1f8e2c88bc9839ec27"));
        assert!(!is_canonical_uuid("3f1e7948-5c1f-4c1f-8e2c-88bc9839ec2"));
        assert!(!is_canonical_uuid("3f1e7948-5c1f-4c1f-8e2c-88bc9839ec277"));
        assert!(!is_canonical_uuid("3f1e7948_5c1f-4c1f-8e2c-88bc9839ec27"));
    }

    #[test]
    fn uuid_owned_form_is_inline_and_equal_to_the_borrowed_one() {
        use std::collections::HashSet;
        let text = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
        let borrowed = Uuid::new(text).unwrap();
        let owned = borrowed.clone().into_owned();
        assert!(matches!(owned.0, UuidText::Inline(_)));
        assert_eq!(owned.as_str(), text);
        assert_eq!(owned, borrowed);
        assert_eq!(format!("{owned} {owned:?}"), format!("{text} \"{text}\""));
        let from_string = Uuid::new(text.to_owned()).unwrap();
        assert!(matches!(from_string.0, UuidText::Inline(_)));
        let set: HashSet<Uuid<'_>> = [borrowed, owned, from_string].into_iter().collect();
        assert_eq!(
            set.len(),
            1,
            "hash and eq follow the text, not the representation"
        );
        assert!(Uuid::new("3F1E7948-5C1F-4C1F-8E2C-88BC9839EC27".to_owned()).is_none());
        let mut out = Vec::new();
        WireValue::encode(&Uuid::new(text.to_owned()).unwrap(), &mut out);
        assert_eq!(out, format!("\"{text}\"").into_bytes());
    }

    #[test]
    fn prefixed_id_edges() {
        let max = format!("upl_a{}", "b".repeat(62));
        assert_eq!(max.len(), 4 + 63);
        assert!(is_upload_id(&max));
        assert!(!is_upload_id(&format!("{max}c")));
        assert!(is_upload_id("upl_0"));
        assert!(is_upload_id("upl_a-_"));
        assert!(!is_upload_id("upl_"));
        assert!(!is_upload_id("upl__a"));
        assert!(!is_upload_id("upl_-a"));
        assert!(!is_upload_id("upl_a.b"));
        assert!(!is_upload_id("UPL_a"));
        assert!(!is_upload_id("att_a"));
        assert!(is_attachment_id("att_image1"));
        assert!(!is_attachment_id("upl_image1"));
        assert!(!is_attachment_id("att_é"));
    }

    #[test]
    fn sha256_edges() {
        let ok = "0123456789abcdef".repeat(4);
        assert!(is_sha256_hex(&ok));
        assert!(!is_sha256_hex(&ok[..63]));
        assert!(!is_sha256_hex(&format!("{ok}0")));
        assert!(!is_sha256_hex(&ok.to_uppercase()));
        assert!(!is_sha256_hex(&format!("{}g", &ok[..63])));
    }
}
