//! The `wire` layer's one error type.
//!
//! Owns the classification WIRE-021 asks for: a *fatal* input-stream error (malformed JSON,
//! a top-level value that is not an object, an import-operation schema violation of PROFILE
//! §2b) versus a *record-level* error (a semantically invalid user record, a schema-invalid
//! control payload, an invalid environment update) that rejects one record and leaves the
//! stream usable. Errors are one boxed allocation, built only by `#[cold]` constructors, and
//! classifiable without formatting ([`Error::kind`], [`Error::is_fatal`],
//! [`Error::check_kind`]). Messages name the JSON path and the rule; they never echo a member
//! value, and a member *name* at most 64 bytes, escaped to printable ASCII.

use std::fmt;

use crate::json;

use super::path::Path;

/// What went wrong, without formatting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The line is not one strict JSON document (PROFILE §2a, WIRE-001, WIRE-014).
    Json(json::ErrorKind),
    /// The top-level value is not an object (PROFILE §2a).
    NotAnObject,
    /// A required member is absent.
    Missing,
    /// A member has the wrong JSON type.
    WrongType,
    /// A closed object has a member it does not define (WIRE-021, PERM-048).
    UnknownMember,
    /// A value breaks its grammar, enumeration or limit.
    Invalid,
}

/// How a failure affects the input stream (WIRE-021).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// Fatal input-stream error: the reader reports it and stops with status 1.
    Fatal,
    /// Only this record is rejected; other accepted work stays usable.
    Record,
}

/// A record that could not be decoded.
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    severity: Severity,
    /// Rendered JSON path, e.g. `message.content[1].sha256`; empty for the record itself.
    path: String,
    /// What the value should have been ("a string", "64 lowercase hex digits").
    expected: &'static str,
    /// The rule enforced (WIRE-021, PERM-041, PROFILE §2b).
    rule: &'static str,
    /// The offending member name for [`ErrorKind::UnknownMember`], escaped, ≤ 64 bytes.
    name: Option<Box<str>>,
    /// The recoverable correlation: a control `request_id` or an import `upload_id`.
    correlation: Option<Box<str>>,
    /// PROFILE §6 reason code for a semantic import failure.
    reason: Option<&'static str>,
    json_offset: Option<usize>,
}

impl Error {
    #[cold]
    fn new(kind: ErrorKind, at: &Path<'_>, expected: &'static str, rule: &'static str) -> Error {
        Error(Box::new(Inner {
            kind,
            severity: Severity::Record,
            path: at.render(),
            expected,
            rule,
            name: None,
            correlation: None,
            reason: None,
            json_offset: None,
        }))
    }

    /// The record-level error of a line that is not one valid JSON document (WIRE-001).
    #[cold]
    pub fn json(e: json::Error) -> Error {
        let mut err = Error::new(ErrorKind::Json(e.kind()), &Path::ROOT, "", "PROFILE §2a");
        // Malformed JSON is fatal (WIRE-001); an ambiguous (duplicate-member) record is
        // rejected alone (WIRE-014, PROFILE §5's separate diagnostic).
        if e.kind() != json::ErrorKind::DuplicateMember {
            err.0.severity = Severity::Fatal;
        }
        err.0.json_offset = Some(e.offset());
        err
    }

    #[cold]
    pub(crate) fn not_an_object() -> Error {
        let mut err = Error::new(
            ErrorKind::NotAnObject,
            &Path::ROOT,
            "an object",
            "PROFILE §2a",
        );
        err.0.severity = Severity::Fatal;
        err
    }

    #[cold]
    pub(crate) fn missing(at: &Path<'_>, rule: &'static str) -> Error {
        Error::new(ErrorKind::Missing, at, "", rule)
    }

    #[cold]
    pub(crate) fn wrong_type(at: &Path<'_>, expected: &'static str, rule: &'static str) -> Error {
        Error::new(ErrorKind::WrongType, at, expected, rule)
    }

    #[cold]
    pub(crate) fn invalid(at: &Path<'_>, expected: &'static str, rule: &'static str) -> Error {
        Error::new(ErrorKind::Invalid, at, expected, rule)
    }

    #[cold]
    pub(crate) fn unknown_member(at: &Path<'_>, name: json::Str<'_>, rule: &'static str) -> Error {
        let mut err = Error::new(ErrorKind::UnknownMember, at, "", rule);
        err.0.name = Some(printable(&name.decode()).into_boxed_str());
        err
    }

    /// Marks the error fatal to the input stream (import schema, PROFILE §2b).
    #[cold]
    pub(crate) fn fatal(mut self) -> Error {
        self.0.severity = Severity::Fatal;
        self
    }

    /// Attaches a recoverable correlation id (`request_id`, `upload_id`), at most 128 bytes
    /// kept. The outermost record's id wins (it is attached last), so an error inside a
    /// nested pending request still correlates with the enclosing response.
    #[cold]
    pub(crate) fn correlated(mut self, id: &str) -> Error {
        // 128, not 64: a full `upl_` ID is 67 bytes and must correlate exactly.
        self.0.correlation = Some(truncate(id, 128).into());
        self
    }

    /// Attaches a PROFILE §6 reason code (semantic import failure: record-level).
    #[cold]
    pub(crate) fn with_reason(mut self, reason: &'static str) -> Error {
        self.0.reason = Some(reason);
        self
    }

    /// What went wrong, as a category.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// Whether the error is fatal to the stream or rejects one record.
    pub fn severity(&self) -> Severity {
        self.0.severity
    }

    /// A fatal input-stream error (WIRE-021): malformed JSON, not an object, import schema.
    pub fn is_fatal(&self) -> bool {
        self.0.severity == Severity::Fatal
    }

    /// The rule the record broke (`WIRE-021`, `PERM-041`, `PROFILE §2b`, ...).
    pub fn rule(&self) -> &'static str {
        self.0.rule
    }

    /// The JSON path of the offending member (`""` for the record itself).
    pub fn path(&self) -> &str {
        &self.0.path
    }

    /// The correlation recovered before the failure: a control request's `request_id` (so
    /// the dispatcher can answer with a correlated error) or an import `upload_id`.
    pub fn correlation(&self) -> Option<&str> {
        self.0.correlation.as_deref()
    }

    /// The PROFILE §6 reason code for a semantic import failure.
    pub fn reason_code(&self) -> Option<&'static str> {
        self.0.reason
    }

    /// Byte offset of a JSON error within the line.
    pub fn json_offset(&self) -> Option<usize> {
        self.0.json_offset
    }

    /// The `kind` of PROFILE §2's `check --json` summary.
    pub fn check_kind(&self) -> &'static str {
        match self.0.kind {
            ErrorKind::Json(k) => k.check_kind(),
            ErrorKind::NotAnObject => "not_an_object",
            _ => "schema",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = &self.0;
        let at = if e.path.is_empty() {
            "record"
        } else {
            e.path.as_str()
        };
        match e.kind {
            ErrorKind::Json(k) => match k {
                // PROFILE §5: the fixed ambiguity diagnostic.
                json::ErrorKind::DuplicateMember => {
                    f.write_str("ambiguous JSON: duplicate member name")
                }
                json::ErrorKind::InvalidUtf8 => f.write_str("malformed JSON: invalid UTF-8"),
                json::ErrorKind::Malformed(m) => write!(f, "malformed JSON: {}", m.reason()),
                json::ErrorKind::TooDeep => {
                    f.write_str("malformed JSON: nesting exceeds the depth limit")
                }
                _ => f.write_str("malformed JSON"),
            },
            ErrorKind::NotAnObject => f.write_str("record is not a JSON object (PROFILE §2a)"),
            ErrorKind::Missing => write!(f, "{at}: required member is missing ({})", e.rule),
            ErrorKind::WrongType => write!(f, "{at}: expected {} ({})", e.expected, e.rule),
            ErrorKind::UnknownMember => {
                let name = e.name.as_deref().unwrap_or("");
                write!(f, "{at}: unknown member \"{name}\" ({})", e.rule)
            }
            ErrorKind::Invalid => write!(f, "{at}: expected {} ({})", e.expected, e.rule),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("wire::Error")
            .field("kind", &self.0.kind)
            .field("severity", &self.0.severity)
            .field("path", &self.0.path)
            .field("rule", &self.0.rule)
            .finish_non_exhaustive()
    }
}

impl std::error::Error for Error {}

/// The first `max` bytes of `s`, cut at a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// At most 64 bytes of `s` as printable ASCII (other characters as `\u{..}`).
fn printable(s: &str) -> String {
    let mut out = String::new();
    for c in truncate(s, 64).chars() {
        if c.is_ascii_graphic() || c == ' ' {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    out
}
