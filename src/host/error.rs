//! The host client's one error type: what went wrong, classifiable without formatting.

use std::fmt;
use std::io;

use crate::encode::EncoderFailure;

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
    /// An output line could not be decoded; the line number and a bounded reason.
    Decode {
        /// The physical output line, from 1.
        line: u64,
        /// Why it was rejected (bounded, no line content).
        reason: String,
    },
    /// A success response whose payload does not match its subtype's schema (WIRE-009).
    InvalidResponse {
        /// The request's subtype.
        subtype: &'static str,
        /// What does not match.
        reason: String,
    },
    /// The agent did not advertise `input_capabilities` (text only): no upload is attempted.
    AttachmentsUnavailable,
    /// An upload ended without a committed manifest: the reason code of WIRE-019 / PROFILE §6.
    Upload {
        /// The terminal status (`aborted`, `expired`, `failed`, `rejected`).
        status: String,
        /// The PROFILE §6 reason code.
        reason: String,
    },
    /// The record could not be encoded as one valid frame (the encoder's fixed text).
    Encode(&'static str),
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

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Io(e) => write!(f, "agent pipe: {e}"),
            HostError::Control { subtype, error } => write!(f, "{subtype}: {error}"),
            HostError::Timeout { subtype } => write!(f, "{subtype}: no response in time"),
            HostError::StreamClosed => f.write_str("control stream closed"),
            HostError::Decode { line, reason } => write!(f, "agent output line {line}: {reason}"),
            HostError::InvalidResponse { subtype, reason } => {
                write!(f, "{subtype}: invalid response: {reason}")
            }
            HostError::AttachmentsUnavailable => {
                f.write_str("the agent advertised no input_capabilities: attachments unavailable")
            }
            HostError::Upload { status, reason } => write!(f, "upload {status}: {reason}"),
            HostError::Encode(text) => f.write_str(text),
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
    /// use agentx_wire::host::HostError;
    /// assert!(HostError::Timeout { subtype: "interrupt" }.is_timeout());
    /// ```
    pub fn is_timeout(&self) -> bool {
        matches!(self, HostError::Timeout { .. })
    }
    /// The stream closed with the request pending.
    ///
    /// ```
    /// use agentx_wire::host::HostError;
    /// assert!(HostError::StreamClosed.is_stream_closed());
    /// ```
    pub fn is_stream_closed(&self) -> bool {
        matches!(self, HostError::StreamClosed)
    }
    /// Spawning ran out of file descriptors ([`HostError::DescriptorLimit`]).
    ///
    /// ```
    /// use agentx_wire::host::HostError;
    /// let e = HostError::DescriptorLimit { soft: 1024, hard: 1024, system: false, per_agent: 4 };
    /// assert!(e.is_descriptor_limit());
    /// assert!(e.to_string().contains("soft 1024, hard 1024; each running agent holds 4"));
    /// ```
    pub fn is_descriptor_limit(&self) -> bool {
        matches!(self, HostError::DescriptorLimit { .. })
    }
}
