//! The `encode` layer: the sans-IO validating frame encoder (WIRE-013, WIRE-015).
//!
//! Owns: marshaling one complete record ([`wire::Encode`](crate::wire::Encode)) into a reused
//! buffer, the physical transformations (U+2028/U+2029 escaped, one physical line, the
//! terminating `\n`), the whole-frame credential validation over those exact final bytes
//! ([`CredentialSet`]), the same union over a block's streamed deltas ([`DeltaGuard`], PROFILE
//! §8: no credential rebuilt by joining them), the latched [`EncoderFailure`], callback
//! containment, and the
//! `apiKeySource` vocabulary (WIRE-016).
//!
//! Must never: lock, write, spawn or own a thread or a socket (writing frames is the job of
//! `control::Outbox` and the drivers of `agentx-io`); hand out part of a record; call a callback
//! after a failure latched; format, `Debug` or `Display` a credential or anything a callback
//! returned.
//!
//! ```
//! use agentx_wire::encode::{CredentialSet, FrameEncoder};
//! use agentx_wire::wire::OutputRecord;
//!
//! let mut encoder = FrameEncoder::new();
//! encoder.set_credentials(CredentialSet::new(["sk-secret"]).unwrap()).unwrap();
//! let mut out = Vec::new();
//! out.extend_from_slice(encoder.encode(&OutputRecord::KeepAlive).unwrap());
//! assert!(encoder.encode(&br#"{"k":"sk-secret"}"#[..]).is_err());
//! assert_eq!(out, b"{\"type\":\"keep_alive\"}\n");
//! ```

mod callbacks;
mod credentials;
mod delta;
mod error;
mod frame_encoder;
mod frame_walk;
mod line;

/// Moved to `wire` (records carry it); kept here for compatibility.
pub use crate::wire::{ApiKeySource, Provenance};
pub use callbacks::discard as discard_foreign;
pub use callbacks::{contained, Panicked};
pub use callbacks::{FrameValidator, ValidatorError};
pub use credentials::{escaped_spelling, CredentialSet, MAX_CREDENTIALS, MAX_CREDENTIAL_LEN};
pub use delta::{CredentialCompleted, DeltaGuard};
pub use error::classify_io;
pub use error::{
    CredentialError, EncoderFailure, Error, FailureKind, OutputFault, RecordFault,
    OUTPUT_FAILURE_TEXT, RECORD_FAILURE_TEXT, VALIDATION_FAILURE_TEXT,
};
pub use frame_encoder::{FrameEncoder, DEFAULT_MAX_RECORD_LEN};
pub use frame_encoder::{KEEP_CAPACITY, SHRINK_ABOVE};
