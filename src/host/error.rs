//! The host client's one error type: what went wrong, classifiable without formatting.

use std::fmt;
use std::io;

/// Why a host operation failed. `Display` never shows record payloads beyond the agent's own
/// control error string (already credential-validated by the agent's encoder).
#[derive(Debug)]
pub enum HostError {
    /// Spawning, reading or writing the agent's pipes failed.
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
    /// The input side is closed (after `close()` began or a write failed).
    InputClosed,
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
}
