//! The record encoder: one complete record marshaled into a reused buffer, made one physical
//! line, validated as exact final bytes, handed to the writer in one call (WIRE-013), with one
//! latched failure and contained callbacks (WIRE-015).
//!
//! Owns: the encoder's state machine (configuring → open → failed), write serialization, and
//! the reused buffers.
//! Must never: write part of a record; call a callback while holding its state mutex; call a
//! callback after a failure latched; format or inspect what a callback returned; own a socket
//! or a thread.
//!
//! # Locking and re-entrancy
//! One mutex guards a small state record; a condition variable serializes writers. A writing
//! thread marks itself as *the* writer and takes the buffers, validator and writer out of the
//! state, releases the mutex, does all the work (marshal, scan, validator, writer) unlocked,
//! then relocks to put everything back. So complete records are written one at a time, in the
//! order their threads won the mutex, and callbacks run unlocked. What a callback gets when it
//! calls back into the same encoder on the writing thread:
//! - [`Encoder::state`], [`Encoder::failure`], [`Encoder::records_written`]: answered at once
//!   (`state` reports [`State::Writing`]);
//! - `set_credentials`, `set_validator`, `set_max_record_len`: [`Error::AlreadyStarted`], the
//!   normal post-start rejection;
//! - [`Encoder::encode`]: [`Error::Reentrant`] at once. Nothing is written and nothing is
//!   latched; the outer record goes on normally.
//!
//! A callback that blocks on *another* thread which encodes through the same encoder
//! deadlocks: that thread waits for the running record, as every writer must. This cannot be
//! told apart from an ordinary slow writer, so it is documented rather than detected.

use std::fmt;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};

use super::callbacks::{contained, discard, FrameValidator, RecordWriter};
use super::credentials::CredentialSet;
use super::error::{classify_io, EncoderFailure, Error, OutputFault, RecordFault};
use super::frame_encoder::FrameEncoder;

/// Where an encoder is in its life.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    /// No record began yet: validator, credentials and limits may still change.
    Configuring,
    /// At least one record began; configuration is fixed; no record is being written now.
    Open,
    /// A record is being marshaled, validated or written right now.
    Writing,
    /// Latched: every later `encode` returns this failure.
    Failed(EncoderFailure),
}

/// The validating, single-write record encoder. `Send + Sync`: share it (e.g. in an `Arc`)
/// between producer threads; records are written whole, one at a time.
pub struct Encoder {
    shared: Mutex<Shared>,
    writer_done: Condvar,
}

struct Shared {
    started: bool,
    failure: Option<EncoderFailure>,
    writing: Option<ThreadId>,
    /// Threads blocked in `encode` waiting for the running record. The writer only notifies
    /// when there is one: std's futex condvar makes a wake syscall on every `notify_all`,
    /// which measured as the largest per-record cost of an uncontended encoder.
    waiting: usize,
    /// `None` while a writing thread holds it.
    output: Option<Box<Output>>,
    records: u64,
}

/// Everything the writing thread works with, unlocked.
struct Output {
    frame: FrameEncoder,
    writer: Box<dyn RecordWriter>,
}

impl Encoder {
    /// An encoder writing through `writer`, with no credentials and no validator: its output is
    /// byte-identical to plain JSON encoding plus `\n` per record.
    pub fn new(writer: impl RecordWriter + 'static) -> Self {
        Encoder {
            shared: Mutex::new(Shared {
                started: false,
                failure: None,
                writing: None,
                waiting: 0,
                output: Some(Box::new(Output {
                    frame: FrameEncoder::new(),
                    writer: Box::new(writer),
                })),
                records: 0,
            }),
            writer_done: Condvar::new(),
        }
    }

    /// Installs the credential union (WIRE-013). Only before the first record.
    pub fn set_credentials(&self, credentials: CredentialSet) -> Result<(), Error> {
        self.configure(|o| o.frame.set_credentials(credentials))
    }

    /// Installs an additional whole-frame validator, run after the credential scan on its own
    /// copy of the frame. Only before the first record.
    pub fn set_validator(&self, validator: impl FrameValidator + 'static) -> Result<(), Error> {
        self.configure(move |o| o.frame.set_validator(validator))
    }

    /// Sets the longest marshaled record (terminator excluded). Only before the first record.
    pub fn set_max_record_len(&self, max: usize) -> Result<(), Error> {
        self.configure(|o| o.frame.set_max_record_len(max))
    }

    fn configure(&self, f: impl FnOnce(&mut Output) -> Result<(), Error>) -> Result<(), Error> {
        let mut shared = self.lock();
        if shared.started {
            return Err(already_started());
        }
        match shared.output.as_deref_mut() {
            Some(o) => f(o),
            // Not started implies nobody writes, so the output is home; be safe anyway.
            None => Err(already_started()),
        }
    }

    /// Where the encoder is in its life.
    pub fn state(&self) -> State {
        let shared = self.lock();
        match (shared.failure, shared.writing, shared.started) {
            (Some(f), _, _) => State::Failed(f),
            (None, Some(_), _) => State::Writing,
            (None, None, true) => State::Open,
            (None, None, false) => State::Configuring,
        }
    }

    /// The latched failure, if any.
    pub fn failure(&self) -> Option<EncoderFailure> {
        self.lock().failure
    }

    /// How many complete records the writer accepted.
    pub fn records_written(&self) -> u64 {
        self.lock().records
    }

    /// Encodes one complete record: `marshal` appends the record's JSON (no terminator) to an
    /// empty reused buffer; the encoder escapes raw U+2028/U+2029, checks that the record is one
    /// physical line, appends `\n`, validates those exact bytes, and hands them to the writer
    /// in one call. Blocks while another thread's record is being written.
    ///
    /// Errors: [`Error::Failed`] with the latched failure (this record or an earlier one);
    /// [`Error::Reentrant`] when called from inside this encoder's own callback.
    pub fn encode(&self, marshal: impl FnOnce(&mut Vec<u8>)) -> Result<(), Error> {
        let me = current_thread();
        let output = {
            let mut shared = self.lock();
            loop {
                if let Some(f) = shared.failure {
                    return Err(Error::failed(f));
                }
                match shared.writing {
                    Some(t) if t == me => return Err(reentrant()),
                    Some(_) => {
                        shared.waiting += 1;
                        shared = self
                            .writer_done
                            .wait(shared)
                            .unwrap_or_else(|p| p.into_inner());
                        shared.waiting -= 1;
                    }
                    None => break,
                }
            }
            match shared.output.take() {
                Some(o) => {
                    shared.started = true;
                    shared.writing = Some(me);
                    o
                }
                // Unreachable: nobody writes, so the output is home. Fail closed.
                None => return Err(reentrant()),
            }
        };
        let mut turn = Turn {
            encoder: self,
            output: Some(output),
            outcome: Err(EncoderFailure::record(RecordFault::Panicked)),
        };
        if let Some(out) = turn.output.as_deref_mut() {
            turn.outcome = out.write_one(marshal);
        }
        let outcome = turn.outcome;
        drop(turn);
        outcome.map_err(Error::failed)
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // No code of ours panics while holding this lock, and callbacks never run under it;
        // a poisoned lock still holds consistent state.
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One thread's turn at writing. Dropping it (normally, or while unwinding from a bug of ours)
/// puts the output back, records the outcome and wakes the next writer.
struct Turn<'e> {
    encoder: &'e Encoder,
    output: Option<Box<Output>>,
    outcome: Result<(), EncoderFailure>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let mut shared = self.encoder.lock();
        shared.output = self.output.take();
        shared.writing = None;
        match self.outcome {
            Ok(()) => shared.records += 1,
            Err(f) => {
                if shared.failure.is_none() {
                    shared.failure = Some(f);
                }
            }
        }
        let wake = shared.waiting > 0;
        drop(shared);
        if wake {
            self.encoder.writer_done.notify_all();
        }
    }
}

impl Output {
    fn write_one(&mut self, marshal: impl FnOnce(&mut Vec<u8>)) -> Result<(), EncoderFailure> {
        let frame = self.frame.encode_with(marshal)?;
        let outcome = write(&mut *self.writer, frame);
        match outcome {
            Ok(()) => {
                self.frame.shrink();
                Ok(())
            }
            Err(f) => Err(self.frame.latch(f)),
        }
    }
}

/// Hands one frame to the writer, contained (WIRE-015).
fn write(writer: &mut dyn RecordWriter, frame: &[u8]) -> Result<(), EncoderFailure> {
    match contained(|| writer.write_record(frame)) {
        Ok(Ok(n)) if n == frame.len() => Ok(()),
        Ok(Ok(_)) => Err(EncoderFailure::output(OutputFault::ShortWrite)),
        Ok(Err(e)) => {
            // `kind()` reads the stored kind; it never calls into a wrapped error.
            let fault = classify_io(e.kind());
            discard(e);
            Err(EncoderFailure::output(fault))
        }
        Err(()) => Err(EncoderFailure::output(OutputFault::Panicked)),
    }
}

/// This thread's id, cached: `thread::current()` clones a handle on every call.
pub(crate) fn current_thread() -> ThreadId {
    thread_local! {
        static ID: ThreadId = thread::current().id();
    }
    ID.with(|id| *id)
}

#[cold]
fn already_started() -> Error {
    Error::AlreadyStarted
}

#[cold]
fn reentrant() -> Error {
    Error::Reentrant
}

impl fmt::Debug for Encoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = self.lock();
        let credentials = shared.output.as_ref().map(|o| o.frame.credential_count());
        f.debug_struct("Encoder")
            .field("started", &shared.started)
            .field("failure", &shared.failure)
            .field("writing", &shared.writing.is_some())
            .field("records", &shared.records)
            .field("credentials", &credentials)
            .finish_non_exhaustive()
    }
}
