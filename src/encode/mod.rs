//! The `encode` layer: the validating, single-write record encoder (WIRE-013, WIRE-015).
//!
//! Owns: marshaling one complete record into a reused buffer, the physical transformations
//! (U+2028/U+2029 escaped, one physical line, the terminating `\n`), the whole-frame credential
//! validation over those exact final bytes ([`CredentialSet`]), the one-call hand-off to the
//! writer, the latched [`EncoderFailure`], callback containment, and the `apiKeySource`
//! vocabulary (WIRE-016).
//!
//! Must never: own a socket or a thread; write part of a record; call a callback after a
//! failure latched or while holding its state lock; format, `Debug` or `Display` a credential
//! or anything a callback returned.
//!
//! The encoder knows nothing of record types: a record is a closure that appends its JSON to a
//! `Vec<u8>` (typed records provide `fn encode(&self, out: &mut Vec<u8>)`).
//!
//! ```
//! use agentx_wire::encode::{CredentialSet, Encoder};
//! use std::sync::{Arc, Mutex};
//!
//! let out = Arc::new(Mutex::new(Vec::new()));
//! let sink = Arc::clone(&out);
//! let encoder = Encoder::new(move |frame: &[u8]| -> std::io::Result<usize> {
//!     sink.lock().map_err(|_| std::io::ErrorKind::Other)?.extend_from_slice(frame);
//!     Ok(frame.len())
//! });
//! encoder.set_credentials(CredentialSet::new(["sk-secret"]).unwrap()).unwrap();
//! encoder.encode(|b| b.extend_from_slice(br#"{"type":"keep_alive"}"#)).unwrap();
//! assert!(encoder.encode(|b| b.extend_from_slice(br#"{"k":"sk-secret"}"#)).is_err());
//! assert_eq!(&*out.lock().unwrap(), b"{\"type\":\"keep_alive\"}\n");
//! ```

mod api_key_source;
mod callbacks;
mod credentials;
mod encoder;
mod error;
mod frame_encoder;
mod line;
mod scan;

pub use api_key_source::{ApiKeySource, Provenance};
pub(crate) use callbacks::discard as discard_foreign;
pub use callbacks::{FrameValidator, RecordWriter, ValidatorError, WriteAll};
pub use credentials::{escaped_spelling, CredentialSet, MAX_CREDENTIALS, MAX_CREDENTIAL_LEN};
pub(crate) use encoder::current_thread;
pub use encoder::{Encoder, State};
pub use error::{
    CredentialError, EncoderFailure, Error, FailureKind, OutputFault, RecordFault,
    OUTPUT_FAILURE_TEXT, RECORD_FAILURE_TEXT, VALIDATION_FAILURE_TEXT,
};
pub use frame_encoder::{FrameEncoder, DEFAULT_MAX_RECORD_LEN};
