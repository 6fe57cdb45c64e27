//! The `json` layer's one error type: a kind and the byte offset where parsing stopped.
//!
//! Errors are `Copy`, 16 bytes, and never carry input bytes: a diagnostic built from one cannot
//! echo a credential. The texts are the fixed ones of PROFILE §5; [`ErrorKind::check_kind`]
//! gives the `check --json` kind names of PROFILE §2.

use std::fmt;

/// Why a document was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The bytes are not UTF-8 (PROFILE §2a: overlong forms and encoded surrogates included).
    InvalidUtf8,
    /// The bytes break the RFC 8259 grammar or a PROFILE §2a rule.
    Malformed(Malformed),
    /// Two members of one object have equal decoded names (WIRE-014, WIRE-021).
    DuplicateMember,
    /// Arrays and objects nest deeper than the configured limit (PROFILE §2a: 128).
    TooDeep,
    /// The document is larger than this parser can index (4 GiB).
    TooLarge,
}

/// The grammar rule a malformed document broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    /// No bytes, or only whitespace.
    EmptyInput,
    /// The input ended inside a value.
    UnexpectedEnd,
    /// A byte that no rule allows here.
    UnexpectedByte,
    /// Something after the one document.
    TrailingCharacters,
    /// A UTF-8 byte order mark.
    ByteOrderMark,
    /// A raw control character (U+0000–U+001F) inside a string.
    ControlCharacterInString,
    /// An escape other than the JSON ones, or a bad `\u` hex digit.
    InvalidEscape,
    /// A `\u` surrogate escape without its pair.
    LoneSurrogate,
    /// A number outside the JSON grammar.
    InvalidNumber,
    /// A misspelled `true`, `false` or `null`.
    InvalidLiteral,
    /// An object member that does not start with a string.
    ExpectedMemberName,
    /// No `:` after a member name.
    ExpectedColon,
    /// No `,` or closing bracket after a value.
    ExpectedCommaOrEnd,
}

impl Malformed {
    /// The reason phrase used after `malformed JSON: `.
    pub fn reason(self) -> &'static str {
        match self {
            Malformed::EmptyInput => "empty input",
            Malformed::UnexpectedEnd => "unexpected end of input",
            Malformed::UnexpectedByte => "unexpected character",
            Malformed::TrailingCharacters => "trailing characters after the value",
            Malformed::ByteOrderMark => "byte order mark is not allowed",
            Malformed::ControlCharacterInString => "unescaped control character in string",
            Malformed::InvalidEscape => "invalid escape sequence",
            Malformed::LoneSurrogate => "lone surrogate in \\u escape",
            Malformed::InvalidNumber => "invalid number",
            Malformed::InvalidLiteral => "invalid literal",
            Malformed::ExpectedMemberName => "expected a member name",
            Malformed::ExpectedColon => "expected ':' after member name",
            Malformed::ExpectedCommaOrEnd => "expected ',' or a closing bracket",
        }
    }
}

impl ErrorKind {
    /// The `kind` of PROFILE §2's `check --json` summary.
    pub fn check_kind(self) -> &'static str {
        match self {
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::Malformed(_) | ErrorKind::TooLarge => "malformed_json",
            ErrorKind::DuplicateMember => "duplicate_member",
            ErrorKind::TooDeep => "too_deep",
        }
    }
}

/// A rejected document: what was wrong and at which byte offset it was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    offset: usize,
}

impl Error {
    #[cold]
    pub(crate) fn new(kind: ErrorKind, offset: usize) -> Error {
        Error { kind, offset }
    }

    #[cold]
    pub(crate) fn malformed(reason: Malformed, offset: usize) -> Error {
        Error::new(ErrorKind::Malformed(reason), offset)
    }

    /// What went wrong, as a category.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Byte offset into the parsed input where the problem was detected.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Whether the document was rejected for a duplicate or escape-equivalent member name (WIRE-014).
    pub fn is_duplicate_member(&self) -> bool {
        self.kind == ErrorKind::DuplicateMember
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ErrorKind::InvalidUtf8 => f.write_str("malformed JSON: invalid UTF-8"),
            ErrorKind::Malformed(m) => write!(f, "malformed JSON: {}", m.reason()),
            // PROFILE §5: the fixed ambiguity diagnostic.
            ErrorKind::DuplicateMember => f.write_str("ambiguous JSON: duplicate member name"),
            ErrorKind::TooDeep => f.write_str("malformed JSON: nesting exceeds the depth limit"),
            ErrorKind::TooLarge => f.write_str("malformed JSON: document exceeds 4 GiB"),
        }
    }
}

impl std::error::Error for Error {}
