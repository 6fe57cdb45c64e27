//! The host client's one error type: what went wrong, classifiable without formatting.
//!
//! Owns [`HostError`] and the typed parts it keeps instead of text: why an output line was
//! not a record ([`DecodeError`]: the framer's or the record decoder's error), why a success
//! response was refused ([`ResponseFault`]) and how an upload ended ([`UploadStatus`] with the
//! PROFILE §6 [`ReasonCode`]). Must never hold or show line content or a writer's error: every
//! kept error is bounded (a path, a rule, a member name of at most 64 escaped bytes).

use std::fmt;
use std::io;

use agentx_wire::control::InvalidResponse;
use agentx_wire::encode::{EncoderFailure, FailureKind, RecordFault, DEFAULT_MAX_RECORD_LEN};
use agentx_wire::frame::FrameError;
use agentx_wire::wire::{self, ImportStatus, ReasonCode};

/// The fixed text of [`HostError::InputFailed`] (the writer's error is never shown, WIRE-015).
pub const INPUT_FAILURE_TEXT: &str = "agent input failed: the record writer failed";

/// Why a host operation failed. `Display` never shows record payloads beyond the agent's own
/// control error string (already credential-validated by the agent's encoder).
#[derive(Debug)]
pub enum HostError {
    /// Spawning the agent or reading its output failed (only the error kind is kept for a
    /// reader the caller supplied, WIRE-015).
    Io(io::Error),
    /// The agent answered a control request with an error response.
    Control {
        /// The request's subtype.
        subtype: &'static str,
        /// The agent's error message.
        error: String,
    },
    /// No response within the call's timeout; a `control_cancel_request` was sent (WIRE-007).
    Timeout {
        /// The request's subtype.
        subtype: &'static str,
    },
    /// The agent's output ended (or the client was closed) with the request pending
    /// (WIRE-008: `control stream closed`).
    StreamClosed,
    /// An output line could not be decoded: the line number and the typed error (bounded, no
    /// line content).
    Decode {
        /// The physical output line, from 1.
        line: u64,
        /// Why it was rejected: framing or record decoding, with its classification.
        error: DecodeError,
    },
    /// A success response whose payload does not match its subtype's schema (WIRE-009).
    InvalidResponse {
        /// The request's subtype (`attachment_import` for an upload's acknowledgement).
        subtype: &'static str,
        /// What does not match.
        reason: ResponseFault,
    },
    /// The agent did not advertise `input_capabilities` (text only): no upload is attempted.
    AttachmentsUnavailable,
    /// An upload ended without a committed manifest: the reason code of WIRE-019 / PROFILE §6.
    Upload {
        /// The terminal status (`aborted`, `expired`, `failed`, or `rejected`).
        status: UploadStatus,
        /// The PROFILE §6 reason code (`None`: the acknowledgement named none).
        reason: Option<ReasonCode>,
    },
    /// The record could not be encoded as one valid frame (a fixed text).
    Encode(&'static str),
    /// The record is longer than the agent's input line limit (PROFILE §2a): it was not sent,
    /// and nothing latched (the next send goes out as usual).
    RecordTooLarge {
        /// The longest record accepted, in bytes, its line feed excluded.
        max: usize,
    },
    /// The input side is closed (after `end_input()` or `close()` began).
    InputClosed,
    /// Writing to the agent's input failed: the writer returned an error, accepted less than
    /// the record, or panicked (WIRE-015). Latched: every later send returns the same value
    /// and the writer is not called again. Only the sealed classification is kept
    /// ([`EncoderFailure::kind`]); the writer's own error was dropped unformatted.
    InputFailed(EncoderFailure),
    /// Spawning an agent ran out of file descriptors: the soft `RLIMIT_NOFILE` was raised to
    /// the hard limit (where that was allowed) and the spawn retried once, in vain. Each agent
    /// holds `per_agent` descriptors in the host while it runs
    /// ([`DESCRIPTORS_PER_AGENT`](super::DESCRIPTORS_PER_AGENT),
    /// [`DESCRIPTORS_PER_ASYNC_AGENT`](super::DESCRIPTORS_PER_ASYNC_AGENT)).
    DescriptorLimit {
        /// The soft limit now in force (`u64::MAX`: unlimited).
        soft: u64,
        /// The hard limit (`u64::MAX`: unlimited).
        hard: u64,
        /// The system-wide table is full (`ENFILE`), not this process's limit.
        system: bool,
        /// Descriptors each running agent of the client that failed holds in the host.
        per_agent: u32,
    },
}

impl HostError {
    /// Why the host's encoder refused a record, in the host's words (the encoder's own texts
    /// speak for agentx's output). An oversized record is [`HostError::RecordTooLarge`].
    pub(crate) fn refused(f: EncoderFailure) -> HostError {
        match f.kind() {
            FailureKind::Record(RecordFault::TooLarge) => HostError::RecordTooLarge {
                max: DEFAULT_MAX_RECORD_LEN,
            },
            FailureKind::Output(_) => HostError::InputFailed(f),
            FailureKind::Validation => {
                HostError::Encode("agent input refused: the record failed credential validation")
            }
            FailureKind::Record(_) => {
                HostError::Encode("agent input refused: the record could not be encoded")
            }
        }
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Io(e) => write!(f, "agent pipe: {e}"),
            HostError::Control { subtype, error } => write!(f, "{subtype}: {error}"),
            HostError::Timeout { subtype } => write!(f, "{subtype}: no response in time"),
            HostError::StreamClosed => f.write_str("control stream closed"),
            HostError::Decode { line, error } => write!(f, "agent output line {line}: {error}"),
            HostError::InvalidResponse { subtype, reason } => {
                write!(f, "{subtype}: invalid response: {reason}")
            }
            HostError::AttachmentsUnavailable => {
                f.write_str("the agent advertised no input_capabilities: attachments unavailable")
            }
            HostError::Upload { status, reason } => write!(
                f,
                "upload {}: {}",
                status.as_str(),
                reason.map_or("none", ReasonCode::as_str)
            ),
            HostError::Encode(text) => f.write_str(text),
            HostError::RecordTooLarge { max } => write!(
                f,
                "record not sent: longer than the agent's input line limit ({max} bytes)"
            ),
            HostError::InputClosed => f.write_str("agent input is closed"),
            HostError::InputFailed(_) => f.write_str(INPUT_FAILURE_TEXT),
            HostError::DescriptorLimit { system: true, .. } => {
                f.write_str("cannot start the agent: the system's open-file table is full (ENFILE)")
            }
            HostError::DescriptorLimit {
                soft,
                hard,
                per_agent,
                ..
            } => write!(
                f,
                "cannot start the agent: no file descriptor left (RLIMIT_NOFILE soft {}, hard \
                 {}; each running agent holds {per_agent}); raise the hard limit or run fewer \
                 agents",
                Limit(*soft),
                Limit(*hard)
            ),
        }
    }
}

/// Why an output line is not a record. `Display` is the framer's or the decoder's own text,
/// which names a limit, a JSON path and a rule, never a value.
#[derive(Debug)]
pub enum DecodeError {
    /// The line broke the framing: longer than the line limit (PROFILE §2a).
    Frame(FrameError),
    /// The line is not one record of the peer profile (WIRE-021's classification kept).
    Record(wire::Error),
}

impl DecodeError {
    /// A fatal input-stream error in WIRE-021's sense (malformed JSON, not an object, a line
    /// past the limit), as opposed to one rejected record (a schema error, a duplicate member).
    /// The host reads on after either; this says what the agent side would have done.
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions, DecodeError, HostError};
    /// let output = std::io::Cursor::new(b"{not json\n".to_vec());
    /// let client = Client::attach(output, std::io::sink(), ClientOptions::default());
    /// match client.recv() {
    ///     Some(Err(HostError::Decode { line: 1, error })) => {
    ///         assert!(error.is_fatal());
    ///         assert_eq!(error.check_kind(), "malformed_json");
    ///         assert!(matches!(error, DecodeError::Record(_)));
    ///     }
    ///     other => panic!("{other:?}"),
    /// }
    /// ```
    pub fn is_fatal(&self) -> bool {
        match self {
            DecodeError::Frame(_) => true,
            DecodeError::Record(e) => e.is_fatal(),
        }
    }

    /// The record decoder's classification (`None` for a framing error).
    pub fn wire_kind(&self) -> Option<wire::ErrorKind> {
        match self {
            DecodeError::Frame(_) => None,
            DecodeError::Record(e) => Some(e.kind()),
        }
    }

    /// The `kind` of PROFILE §2's `check --json` summary (`line_too_long`, `malformed_json`,
    /// `schema`, ...).
    pub fn check_kind(&self) -> &'static str {
        match self {
            DecodeError::Frame(e) => e.kind().as_str(),
            DecodeError::Record(e) => e.check_kind(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Frame(e) => fmt::Display::fmt(e, f),
            DecodeError::Record(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl From<FrameError> for DecodeError {
    #[cold]
    fn from(e: FrameError) -> Self {
        DecodeError::Frame(e)
    }
}

impl From<wire::Error> for DecodeError {
    #[cold]
    fn from(e: wire::Error) -> Self {
        DecodeError::Record(e)
    }
}

/// What is wrong with a success response ([`HostError::InvalidResponse`]).
#[derive(Debug)]
pub enum ResponseFault {
    /// The subtype's success carries a payload and this one has none.
    NoPayload,
    /// A `committed` acknowledgement without its manifest (WIRE-019).
    NoManifest,
    /// The payload broke the waiter's schema in the broker (WIRE-009): kind, rule, message.
    Schema(InvalidResponse),
    /// The payload broke a check the host decodes it with (`initialize`'s WIRE-024).
    Decode(wire::Error),
}

impl ResponseFault {
    /// The wire error's classification, when a schema or decode check failed.
    pub fn kind(&self) -> Option<wire::ErrorKind> {
        match self {
            ResponseFault::NoPayload | ResponseFault::NoManifest => None,
            ResponseFault::Schema(e) => Some(e.kind),
            ResponseFault::Decode(e) => Some(e.kind()),
        }
    }
}

impl fmt::Display for ResponseFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResponseFault::NoPayload => f.write_str("no payload"),
            ResponseFault::NoManifest => f.write_str("committed without a manifest"),
            ResponseFault::Schema(e) => fmt::Display::fmt(e, f),
            ResponseFault::Decode(e) => fmt::Display::fmt(e, f),
        }
    }
}

/// How an upload ended without a manifest ([`HostError::Upload`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadStatus {
    /// The agent's `attachment_import_result` ended it with this status (WIRE-019).
    Ended(ImportStatus),
    /// Refused: the agent's `attachment_import_rejected`, or arguments the client could not
    /// send (a prompt UUID of the wrong grammar).
    Rejected,
}

impl UploadStatus {
    /// The wire spelling (`aborted`, `expired`, `failed`, `rejected`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            UploadStatus::Ended(s) => s.as_str(),
            UploadStatus::Rejected => "rejected",
        }
    }
}

/// A resource limit as `ulimit` prints it.
struct Limit(u64);

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            u64::MAX => f.write_str("unlimited"),
            n => write!(f, "{n}"),
        }
    }
}

impl std::error::Error for HostError {}

impl From<io::Error> for HostError {
    fn from(e: io::Error) -> Self {
        HostError::Io(e)
    }
}

impl HostError {
    /// A timeout (the request was cancelled on the wire).
    ///
    /// ```
    /// use agentx_io::host::HostError;
    /// assert!(HostError::Timeout { subtype: "interrupt" }.is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(self, HostError::Timeout { .. })
    }
    /// The stream closed with the request pending.
    ///
    /// ```
    /// use agentx_io::host::HostError;
    /// assert!(HostError::StreamClosed.is_stream_closed());
    /// ```
    pub fn is_stream_closed(&self) -> bool {
        matches!(self, HostError::StreamClosed)
    }
    /// Spawning ran out of file descriptors ([`HostError::DescriptorLimit`]).
    ///
    /// ```
    /// use agentx_io::host::HostError;
    /// let e = HostError::DescriptorLimit { soft: 1024, hard: 1024, system: false, per_agent: 4 };
    /// assert!(e.is_descriptor_limit());
    /// assert!(e.to_string().contains("soft 1024, hard 1024; each running agent holds 4"));
    /// ```
    pub fn is_descriptor_limit(&self) -> bool {
        matches!(self, HostError::DescriptorLimit { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts kept from the string fields these variants replaced.
    #[test]
    fn typed_parts_keep_the_texts() {
        let cases = [
            (
                HostError::Upload {
                    status: UploadStatus::Ended(ImportStatus::Failed),
                    reason: Some(ReasonCode::MimeMismatch),
                },
                "upload failed: mime_mismatch",
            ),
            (
                HostError::Upload {
                    status: UploadStatus::Rejected,
                    reason: Some(ReasonCode::SchemaInvalid),
                },
                "upload rejected: schema_invalid",
            ),
            (
                HostError::Upload {
                    status: UploadStatus::Ended(ImportStatus::Aborted),
                    reason: None,
                },
                "upload aborted: none",
            ),
            (
                HostError::InvalidResponse {
                    subtype: "initialize",
                    reason: ResponseFault::NoPayload,
                },
                "initialize: invalid response: no payload",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), text);
        }
    }

    /// The typed parts never make a record item (`Result<OutputRecord, HostError>`) larger:
    /// every record of the stream pays for the item's size, not only error lines.
    #[test]
    fn the_error_is_smaller_than_a_record() {
        use std::mem::size_of;
        assert!(size_of::<HostError>() <= size_of::<agentx_wire::wire::OutputRecord<'static>>());
        assert_eq!(
            size_of::<crate::host::stream::RecordItem>(),
            size_of::<agentx_wire::wire::OutputRecord<'static>>()
        );
    }
}
