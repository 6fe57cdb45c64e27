//! The `encode` layer's one error type and the latched [`EncoderFailure`].
//!
//! Owns: the fixed, credential-free texts of every output failure (PROFILE §5) and the sealed
//! classification of the standard I/O error kinds a host needs for its exit policy (WIRE-015).
//!
//! Must never: hold, format, `Debug`, `Display` or walk the `source()` of an error a callback
//! returned. Everything here is `Copy` and built from fixed values, so printing it can never
//! leak a secret or run foreign code.

use std::fmt;
use std::io;

/// Why an encoder stopped for good (WIRE-013, WIRE-015). Once latched, every later
/// [`FrameEncoder::encode`](super::FrameEncoder::encode) returns this same value and no callback
/// runs again.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct EncoderFailure {
    kind: FailureKind,
}

/// The classification of a latched failure. Closed: a host matches on it for its exit policy.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum FailureKind {
    /// The credential set matched the final frame, or the frame validator rejected it or panicked
    /// (WIRE-013). Display: the PROFILE §5 text.
    Validation,
    /// The record writer failed: an error, a short write or a panic (WIRE-015).
    Output(OutputFault),
    /// The caller's marshaling closure misbehaved: it panicked, produced a raw line feed (the
    /// record would not be one physical line), or produced more than the record limit.
    Record(RecordFault),
}

/// A sealed projection of what went wrong in the writer. Only standard-library leaf kinds that
/// a host's exit policy needs survive; the callback's error value itself is dropped unread.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum OutputFault {
    /// `io::ErrorKind::BrokenPipe`: the reader went away (PROFILE §2: quiet exit, status 1).
    BrokenPipe,
    /// `ConnectionReset`, `ConnectionAborted` or `NotConnected`.
    ConnectionClosed,
    /// `io::ErrorKind::StorageFull`.
    StorageFull,
    /// The writer reported fewer bytes than the frame holds (or `WriteZero`).
    ShortWrite,
    /// The writer panicked; the payload was dropped unformatted.
    Panicked,
    /// Any other error kind.
    Other,
}

/// What was wrong with the marshaled record itself (a caller bug, never peer input).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum RecordFault {
    /// The marshaled bytes held a raw `\n` before the terminator: writing it would split one
    /// record into two physical lines.
    RawLineFeed,
    /// The marshaled record was longer than the encoder's `max_record_len`.
    TooLarge,
    /// The marshaling closure panicked; the payload was dropped unformatted.
    Panicked,
}

/// The PROFILE §5 diagnostic of a credential-validation failure.
pub const VALIDATION_FAILURE_TEXT: &str =
    "agentx: output refused: record failed credential validation";
/// The fixed diagnostic of a writer failure.
pub const OUTPUT_FAILURE_TEXT: &str = "agentx: output failed: the record writer failed";
/// The fixed diagnostic of a malformed marshaled record.
pub const RECORD_FAILURE_TEXT: &str = "agentx: output refused: record could not be encoded";

impl EncoderFailure {
    /// The latched failure of a record the validator refused (WIRE-013).
    #[cold]
    pub fn validation() -> Self {
        EncoderFailure {
            kind: FailureKind::Validation,
        }
    }

    /// The latched failure of a writer (a driver's sink) that failed with `fault`.
    #[cold]
    pub fn output(fault: OutputFault) -> Self {
        EncoderFailure {
            kind: FailureKind::Output(fault),
        }
    }

    /// The failure of a record that could not be marshaled (`fault`).
    #[cold]
    pub fn record(fault: RecordFault) -> Self {
        EncoderFailure {
            kind: FailureKind::Record(fault),
        }
    }

    /// The classification of this failure.
    pub fn kind(&self) -> FailureKind {
        self.kind
    }

    /// True when the writer's reader went away (PROFILE §2: end quietly with status 1).
    pub fn is_broken_pipe(&self) -> bool {
        self.kind == FailureKind::Output(OutputFault::BrokenPipe)
    }

    /// True for a credential-validation failure (WIRE-013).
    pub fn is_validation(&self) -> bool {
        self.kind == FailureKind::Validation
    }

    /// The fixed diagnostic text (no credential material, no callback text).
    pub fn message(&self) -> &'static str {
        match self.kind {
            FailureKind::Validation => VALIDATION_FAILURE_TEXT,
            FailureKind::Output(_) => OUTPUT_FAILURE_TEXT,
            FailureKind::Record(_) => RECORD_FAILURE_TEXT,
        }
    }
}

impl fmt::Display for EncoderFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for EncoderFailure {}

/// Classifies a writer's `io::Error` by its kind only (WIRE-015). `io::Error::kind()` reads
/// the stored kind and never calls into a wrapped custom error, so this is safe to run on an
/// error whose `Display`, `Debug` or `source` would panic.
pub fn classify_io(kind: io::ErrorKind) -> OutputFault {
    match kind {
        io::ErrorKind::BrokenPipe => OutputFault::BrokenPipe,
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::NotConnected => OutputFault::ConnectionClosed,
        io::ErrorKind::StorageFull => OutputFault::StorageFull,
        io::ErrorKind::WriteZero => OutputFault::ShortWrite,
        _ => OutputFault::Other,
    }
}

/// A configuration error of the `encode` layer: small, `Copy`, classifiable without
/// formatting. (Encoding itself fails only with the latched [`EncoderFailure`].)
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum Error {
    /// Configuration (validator, credential set, limits) after the first record began: the
    /// validator is immutable once encoding begins (WIRE-013).
    AlreadyStarted,
    /// A credential set could not be built.
    Credential(CredentialError),
}

/// Why a [`CredentialSet`](super::CredentialSet) could not be built. Never carries the value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[non_exhaustive]
pub enum CredentialError {
    /// A credential of zero bytes (it would match everywhere).
    Empty,
    /// One credential longer than [`MAX_CREDENTIAL_LEN`](super::MAX_CREDENTIAL_LEN).
    TooLong,
    /// More than [`MAX_CREDENTIALS`](super::MAX_CREDENTIALS) credentials.
    TooMany,
    /// The searcher could not be built within its memory limits.
    Searcher,
}

impl From<CredentialError> for Error {
    #[cold]
    fn from(e: CredentialError) -> Self {
        Error::Credential(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::AlreadyStarted => {
                f.write_str("encoder configuration is fixed once the first record began")
            }
            Error::Credential(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl std::error::Error for Error {}

impl fmt::Display for CredentialError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CredentialError::Empty => "credential set: empty credential",
            CredentialError::TooLong => "credential set: credential too long",
            CredentialError::TooMany => "credential set: too many credentials",
            CredentialError::Searcher => "credential set: searcher could not be built",
        })
    }
}

impl std::error::Error for CredentialError {}
