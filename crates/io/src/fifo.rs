//! The blocking output driver: [`OutputFifo`], the shared output FIFO of WIRE-003 for threads,
//! on top of the sans-IO [`FrameEncoder`] and [`Outbox`].
//!
//! Owns: the locks. Producer threads share one `OutputFifo`; each record is encoded (and
//! validated) by the thread that pushes it, outside the lock, then either written by that
//! thread at once or queued in the [`Outbox`] behind a drain that is running, and written
//! whole, one at a time, through one [`RecordWriter`] called outside the lock (WIRE-015).
//! Must never: call the validator or the writer while holding its lock, run two drains at
//! once, reorder, write after a failure latched, format a record or a callback's error.
//!
//! # Guarantees
//! - **Order.** Records are written in the order their pushes took the encoder (which is
//!   serialized): a record pushed after another on the same thread, or after another push
//!   returned on any thread, is written after it (scenario 3: a permission request never
//!   overtakes the assistant event pushed before it).
//! - **One drain.** A push that finds no drain running becomes the drainer: it writes its own
//!   frame, then every frame other producers queue meanwhile, until the outbox is empty, and
//!   returns [`Pushed::Written`]. A push that finds a drain running queues its validated frame
//!   and returns [`Pushed::Queued`]: the running drain writes it (the drainer re-checks the
//!   outbox under the lock before it stops). When it finds the outbox empty the drainer calls
//!   [`RecordWriter::flush`] (outside the lock) before that last look, so a writer that holds
//!   frames back for one system call never keeps one past its drain.
//! - **Re-entrancy.** From the writer callback on the draining thread, `push` queues behind the
//!   running record ([`Pushed::Queued`]); configuration gets [`Error::AlreadyStarted`];
//!   [`OutputFifo::state`] says [`State::Writing`]. From the validator or a record's own
//!   `encode` (the encoder is busy on this very thread), `push` returns
//!   [`PushError::Reentrant`] at once: nothing written, nothing latched.
//! - **Failure.** The first failure (validation, record, writer) latches: queued frames are
//!   dropped unwritten, no callback runs again, and every later push returns
//!   [`PushError::Failed`] with that same value.
//!
//! # Capacity
//! At most `capacity` frames wait ([`DEFAULT_CAPACITY`] unless set). A producer that finds the
//! outbox full while another thread drains waits for space (backpressure: bounded memory,
//! nothing dropped); the draining thread itself cannot wait for itself, so a push from its
//! writer into a full outbox gets [`PushError::Full`].
//!
//! A callback that blocks on *another* thread which pushes into the same FIFO may deadlock
//! (that thread waits for the encoder or for space, as every producer must); it cannot be told
//! apart from a slow writer, so it is documented rather than detected.

use std::fmt;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};

use agentx_wire::control::{Outbox, DEFAULT_CAPACITY};
use agentx_wire::encode::{
    CredentialSet, EncoderFailure, Error, FailureKind, FrameEncoder, FrameValidator, RecordFault,
    KEEP_CAPACITY, SHRINK_ABOVE,
};
use agentx_wire::wire::Encode;

use super::writer::{flush_writer, write_frame, RecordWriter};

/// Where a FIFO is in its life.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    /// No record began yet: validator, credentials and limits may still change.
    Configuring,
    /// At least one record began; configuration is fixed; nothing is encoded or written now.
    Open,
    /// A record is being encoded, validated or written right now.
    Writing,
    /// Latched: every later push returns this failure.
    Failed(EncoderFailure),
}

/// What a successful push did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pushed {
    /// This call drained the outbox: its record, and any queued during the drain, are written.
    Written,
    /// A drain was running (on another thread, or on this one re-entrantly): the validated
    /// frame is queued and that drain writes it.
    Queued,
}

/// Why a push did not enter the FIFO.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PushError {
    /// A failure latched (this record's or an earlier one); nothing more is written.
    Failed(EncoderFailure),
    /// The outbox is full and this thread is the one draining it.
    Full,
    /// Pushed from inside this FIFO's validator or a record's own `encode`, on the thread that
    /// is encoding: nothing queued, nothing latched.
    Reentrant,
    /// [`OutputFifo::push_bounded`] only: the record is longer than the encoder's
    /// `max_record_len`. It was refused before any byte of it was validated or queued; nothing
    /// latched, and the next push is encoded as usual.
    TooLarge,
}

impl PushError {
    /// The latched failure, if this is one.
    pub fn failure(&self) -> Option<EncoderFailure> {
        match self {
            PushError::Failed(f) => Some(*f),
            _ => None,
        }
    }
}

impl fmt::Display for PushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushError::Failed(failure) => fmt::Display::fmt(failure, f),
            PushError::Full => f.write_str("output queue full"),
            PushError::Reentrant => f.write_str("output pushed from inside its own callback"),
            PushError::TooLarge => f.write_str("record longer than the line limit: not written"),
        }
    }
}

impl std::error::Error for PushError {}

/// Frame buffers kept for reuse; more are dropped.
const SPARE_FRAMES: usize = 2;

/// The blocking, thread-shared output of a session. `Send + Sync`.
pub struct OutputFifo {
    shared: Mutex<Shared>,
    /// Signalled when the encoder comes home, space frees up, or a failure latches.
    changed: Condvar,
    capacity: usize,
}

struct Shared {
    /// `None` while a producer encodes with it.
    encoder: Option<Box<FrameEncoder>>,
    encoding: Option<ThreadId>,
    /// `None` while the drainer writes with it.
    writer: Option<Box<dyn RecordWriter>>,
    drainer: Option<ThreadId>,
    /// Frames validated while a drain runs; empty whenever no drain runs.
    outbox: Outbox,
    spare: Vec<Vec<u8>>,
    started: bool,
    failure: Option<EncoderFailure>,
    /// Threads blocked in `wait`; notify only when there is one (a futex `notify_all` is a
    /// syscall even with no waiter).
    waiting: usize,
    records: u64,
}

impl OutputFifo {
    /// A FIFO writing through `writer`, with no credentials, no validator and
    /// [`DEFAULT_CAPACITY`]: its output is each record's JSON plus `\n`.
    pub fn new(writer: impl RecordWriter + 'static) -> Self {
        Self::with_encoder(FrameEncoder::new(), writer, DEFAULT_CAPACITY)
    }

    /// A FIFO holding at most `capacity` queued frames (at least 1).
    pub fn with_capacity(writer: impl RecordWriter + 'static, capacity: usize) -> Self {
        Self::with_encoder(FrameEncoder::new(), writer, capacity)
    }

    /// A FIFO over an already configured `encoder`.
    pub fn with_encoder(
        encoder: FrameEncoder,
        writer: impl RecordWriter + 'static,
        capacity: usize,
    ) -> Self {
        let capacity = capacity.max(1);
        OutputFifo {
            shared: Mutex::new(Shared {
                started: encoder.is_started(),
                failure: encoder.failure(),
                encoder: Some(Box::new(encoder)),
                encoding: None,
                writer: Some(Box::new(writer)),
                drainer: None,
                outbox: Outbox::with_capacity(capacity, usize::MAX),
                spare: Vec::new(),
                waiting: 0,
                records: 0,
            }),
            changed: Condvar::new(),
            capacity,
        }
    }

    /// Installs the credential union (WIRE-013). Only before the first record.
    pub fn set_credentials(&self, credentials: CredentialSet) -> Result<(), Error> {
        self.configure(|e| e.set_credentials(credentials))
    }

    /// Installs an additional whole-frame validator. Only before the first record.
    pub fn set_validator(&self, validator: impl FrameValidator + 'static) -> Result<(), Error> {
        self.configure(|e| e.set_validator(validator))
    }

    /// Sets the longest marshaled record (terminator excluded). Only before the first record.
    pub fn set_max_record_len(&self, max: usize) -> Result<(), Error> {
        self.configure(|e| e.set_max_record_len(max))
    }

    fn configure(
        &self,
        f: impl FnOnce(&mut FrameEncoder) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut s = self.lock();
        match (s.started, s.encoder.as_deref_mut()) {
            (false, Some(e)) => f(e),
            // Not started implies nobody encodes, so the encoder is home; fail closed anyway.
            _ => Err(Error::AlreadyStarted),
        }
    }

    /// Where the FIFO is in its life.
    pub fn state(&self) -> State {
        let s = self.lock();
        match s.failure {
            Some(f) => State::Failed(f),
            None if s.encoding.is_some() || s.drainer.is_some() => State::Writing,
            None if s.started => State::Open,
            None => State::Configuring,
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

    /// Frames validated and waiting to be written.
    pub fn len(&self) -> usize {
        self.lock().outbox.len()
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Encodes and validates `record` on this thread, then writes it (and whatever others
    /// queue meanwhile) or queues it behind the running drain. See the module docs.
    pub fn push<R: Encode + ?Sized>(&self, record: &R) -> Result<Pushed, PushError> {
        self.push_inner(record, true)
    }

    /// [`push`](Self::push), except that a record longer than the encoder's `max_record_len`
    /// is refused with [`PushError::TooLarge`] instead of latching a failure
    /// ([`FrameEncoder::encode_bounded`]): a host uses it so that one oversized input record
    /// is that call's error, not the end of its input.
    pub fn push_bounded<R: Encode + ?Sized>(&self, record: &R) -> Result<Pushed, PushError> {
        self.push_inner(record, false)
    }

    fn push_inner<R: Encode + ?Sized>(
        &self,
        record: &R,
        latch_oversize: bool,
    ) -> Result<Pushed, PushError> {
        let me = current_thread();
        let mut s = self.lock();
        loop {
            if let Some(f) = s.failure {
                return Err(PushError::Failed(f));
            }
            if s.encoding == Some(me) {
                return Err(PushError::Reentrant);
            }
            let full = s.outbox.len() >= self.capacity;
            if full && s.drainer == Some(me) {
                return Err(PushError::Full);
            }
            if s.encoding.is_some() || (full && s.drainer.is_some()) {
                s = self.wait(s);
                continue;
            }
            break;
        }
        let Some(encoder) = s.encoder.take() else {
            // Unreachable: nobody encodes, so the encoder is home. Fail closed.
            return Err(PushError::Reentrant);
        };
        s.encoding = Some(me);
        s.started = true;
        let mut frame = s.spare.pop().unwrap_or_default();
        drop(s);

        let mut turn = EncodeTurn {
            fifo: self,
            encoder: Some(encoder),
        };
        let result = match turn.encoder.as_deref_mut() {
            Some(e) if latch_oversize => e.encode_into(record, &mut frame),
            Some(e) => e.encode_into_bounded(record, &mut frame),
            None => Ok(()),
        };
        let mut s = self.lock();
        let refused = !latch_oversize
            && matches!(&result, Err(f) if f.kind() == FailureKind::Record(RecordFault::TooLarge));
        if refused && s.failure.is_none() {
            // Not latched by the encoder (`encode_bounded`), so not latched here either.
            let _ = turn.give_back(&mut s, Ok(())); // Ok: no failure is latched
            recycle(&mut s, frame);
            return Err(PushError::TooLarge);
        }
        let outcome = turn.give_back(&mut s, result);
        if let Err(f) = outcome {
            recycle(&mut s, frame);
            return Err(PushError::Failed(f));
        }
        if s.drainer.is_some() {
            // Behind every frame queued before it; capacity was checked while this thread
            // held the encoder, and only the encoder's holder pushes.
            let queued = s.outbox.push(&frame).is_ok();
            recycle(&mut s, frame);
            return if queued {
                Ok(Pushed::Queued)
            } else {
                Err(PushError::Full)
            };
        }
        // No drain runs, so the outbox is empty: this thread writes its own frame first.
        s.drainer = Some(me);
        let writer = s.writer.take();
        drop(s);
        self.drain(frame, writer)
    }

    /// Writes `first`, then queued frames until the outbox is empty, then flushes the writer
    /// (and writes what was queued meanwhile, and flushes again). The caller is the drainer.
    fn drain(
        &self,
        first: Vec<u8>,
        writer: Option<Box<dyn RecordWriter>>,
    ) -> Result<Pushed, PushError> {
        let mut turn = DrainTurn { fifo: self, writer };
        let mut result = match turn.writer.as_deref_mut() {
            Some(w) => write_frame(w, &first),
            None => Ok(()),
        };
        let mut s = self.lock();
        recycle(&mut s, first);
        // `result` is a frame's write (counted), not the flush.
        let mut wrote = true;
        loop {
            let failure = match result {
                Ok(()) if wrote => {
                    s.records += 1;
                    s.failure
                }
                Ok(()) => s.failure,
                Err(f) => Some(fail(&mut s, f)),
            };
            if let Some(f) = failure {
                turn.give_back(&mut s);
                self.wake(&s);
                return Err(PushError::Failed(f));
            }
            let Some(frame) = s.outbox.pop() else {
                if wrote {
                    // Nothing more to hand over for now: a writer that holds frames back
                    // writes them out (outside the lock), then the outbox is looked at again.
                    wrote = false;
                    drop(s);
                    result = match turn.writer.as_deref_mut() {
                        Some(w) => flush_writer(w),
                        None => Ok(()),
                    };
                    s = self.lock();
                    continue;
                }
                turn.give_back(&mut s);
                self.wake(&s);
                return Ok(Pushed::Written);
            };
            wrote = true;
            // Space freed: wake a producer waiting for it.
            self.wake(&s);
            drop(s);
            result = match turn.writer.as_deref_mut() {
                Some(w) => write_frame(w, &frame),
                None => Ok(()),
            };
            drop(frame);
            s = self.lock();
        }
    }

    fn wait<'g>(&self, mut s: MutexGuard<'g, Shared>) -> MutexGuard<'g, Shared> {
        s.waiting += 1;
        let mut s = self.changed.wait(s).unwrap_or_else(|p| p.into_inner());
        s.waiting -= 1;
        s
    }

    fn wake(&self, s: &Shared) {
        if s.waiting > 0 {
            self.changed.notify_all();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // No code of ours panics while holding this lock, and callbacks never run under it;
        // a poisoned lock still holds consistent state.
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Latches `f` unless a failure latched already; drops every queued frame unwritten.
fn fail(s: &mut Shared, f: EncoderFailure) -> EncoderFailure {
    let f = *s.failure.get_or_insert(f);
    if let Some(e) = s.encoder.as_deref_mut() {
        e.latch(f);
    }
    s.outbox.clear();
    f
}

/// Keeps a frame buffer for the next record; one an unusually large record grew is shrunk
/// first, so its memory is given back.
fn recycle(s: &mut Shared, mut frame: Vec<u8>) {
    if s.spare.len() < SPARE_FRAMES {
        frame.clear();
        if frame.capacity() > SHRINK_ABOVE {
            frame.shrink_to(KEEP_CAPACITY);
        }
        s.spare.push(frame);
    }
}

/// One producer's use of the encoder. Dropping it while unwinding from a bug of ours puts the
/// encoder back, so the FIFO never stays "encoding" with no encoder.
struct EncodeTurn<'f> {
    fifo: &'f OutputFifo,
    encoder: Option<Box<FrameEncoder>>,
}

impl EncodeTurn<'_> {
    /// Puts the encoder back and settles the outcome against a failure latched meanwhile.
    fn give_back(
        &mut self,
        s: &mut Shared,
        result: Result<(), EncoderFailure>,
    ) -> Result<(), EncoderFailure> {
        s.encoder = self.encoder.take();
        s.encoding = None;
        let outcome = match (result, s.failure) {
            // A writer failed while this record was encoded: it is not written.
            (_, Some(f)) => Err(fail(s, f)),
            (Err(f), None) => Err(fail(s, f)),
            (Ok(()), None) => Ok(()),
        };
        self.fifo.wake(s);
        outcome
    }
}

impl Drop for EncodeTurn<'_> {
    fn drop(&mut self) {
        if let Some(e) = self.encoder.take() {
            let mut s = self.fifo.lock();
            s.encoder = Some(e);
            s.encoding = None;
            self.fifo.wake(&s);
        }
    }
}

/// The drainer's use of the writer; puts it back on drop (normally or while unwinding).
struct DrainTurn<'f> {
    fifo: &'f OutputFifo,
    writer: Option<Box<dyn RecordWriter>>,
}

impl DrainTurn<'_> {
    fn give_back(&mut self, s: &mut Shared) {
        s.writer = self.writer.take();
        s.drainer = None;
    }
}

impl Drop for DrainTurn<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            let mut s = self.fifo.lock();
            s.writer = Some(w);
            s.drainer = None;
            self.fifo.wake(&s);
        }
    }
}

/// This thread's id, cached: `thread::current()` clones a handle on every call.
fn current_thread() -> ThreadId {
    thread_local! {
        static ID: ThreadId = thread::current().id();
    }
    ID.with(|id| *id)
}

impl fmt::Debug for OutputFifo {
    /// Counts and states only: never a frame, a credential or a callback's value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.lock();
        f.debug_struct("OutputFifo")
            .field("started", &s.started)
            .field("failure", &s.failure)
            .field("encoding", &s.encoding.is_some())
            .field("draining", &s.drainer.is_some())
            .field("queued", &s.outbox.len())
            .field("capacity", &self.capacity)
            .field("records", &s.records)
            .field("encoder", &s.encoder)
            .finish()
    }
}
