//! The encoder's foreign callback, the frame validator, and the containment every foreign
//! callback gets (WIRE-015; the drivers' record writers use the same [`contained`] and
//! [`discard`]).
//!
//! Owns: the validator trait and the rules for touching what a callback hands back: a returned error is classified by its `io::ErrorKind` only and
//! then dropped; a panic payload is dropped unformatted.
//!
//! Must never: format, `Debug`, `Display`, compare or walk the `source()` of a callback's error
//! or panic payload. Dropping one runs foreign `Drop` code, which may itself panic: every such
//! drop happens inside `catch_unwind`, and a payload of *that* panic is leaked with
//! `mem::forget` rather than dropped (dropping it could panic again, without end). The leak is
//! bounded: it can happen at most once per encoder, because the first callback failure latches
//! the encoder and no callback runs after it.
//!
//! The process panic hook still runs when a callback panics (it belongs to the host): a
//! callback that puts a secret in its own panic message leaks it through the host's hook, not
//! through us.

use std::any::Any;
use std::error::Error as StdError;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Any error a validator may return. The encoder never looks inside it.
pub type ValidatorError = Box<dyn StdError + Send + Sync>;

/// A whole-frame validator (WIRE-013). It receives its own copy of the exact final bytes
/// (terminating `\n` included) and may do anything with that copy, mutating it included: what
/// is written is the encoder's original. `Err` or a panic latches the validation failure.
pub trait FrameValidator: Send {
    /// Inspects one final frame.
    fn validate(&mut self, frame: &mut [u8]) -> Result<(), ValidatorError>;
}

impl<F> FrameValidator for F
where
    F: FnMut(&mut [u8]) -> Result<(), ValidatorError> + Send,
{
    fn validate(&mut self, frame: &mut [u8]) -> Result<(), ValidatorError> {
        self(frame)
    }
}

/// A callback panicked; its payload was dropped unformatted (WIRE-015).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Panicked;

/// Runs `f`, turning a panic into `Err(Panicked)`. The payload is disposed of with [`discard`].
pub fn contained<T>(f: impl FnOnce() -> T) -> Result<T, Panicked> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => Ok(v),
        Err(payload) => {
            discard_payload(payload);
            Err(Panicked)
        }
    }
}

/// Drops a foreign value (an error a callback returned) without ever formatting it. If its
/// `Drop` panics, that panic is caught and its payload leaked.
pub fn discard<T>(value: T) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(value))) {
        std::mem::forget(payload);
    }
}

/// Drops a panic payload without formatting it; a payload whose own `Drop` panics is leaked.
fn discard_payload(payload: Box<dyn Any + Send>) {
    if let Err(second) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(second);
    }
}
