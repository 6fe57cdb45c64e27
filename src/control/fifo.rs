//! The shared output FIFO (WIRE-003): ordinary SDK events, outbound control requests,
//! cancellation records and keepalives enter one queue and leave it, whole and in order,
//! through one validating [`Encoder`].
//!
//! Owns: the queue, the single-drain rule, the order guarantee and the capacity policy.
//! Must never: run two drains at once; reorder; write around the encoder; format a record.
//!
//! # Guarantees
//! - **Order.** Records are written in the order their `push` calls entered the queue (the
//!   order they took the queue lock). A record pushed after another on the same thread, or
//!   after another push returned on any thread, is written after it (scenario 3: a permission
//!   request never overtakes the assistant event queued before it).
//! - **One drain.** At most one thread drains at a time. A `push` that finds the queue idle
//!   becomes the drainer: it writes its own record and every record other producers add
//!   meanwhile, until the queue is empty, then returns [`Pushed::Written`]. A `push` that
//!   finds a drain running only enqueues and returns [`Pushed::Queued`]: the running drain is
//!   guaranteed to write it (the drainer re-checks the queue under the lock before it stops).
//!   A drainer may therefore write other producers' records for as long as they keep coming.
//! - **Re-entrancy.** A push from inside an encoder callback or a record's own `encode` on the
//!   draining thread enqueues behind the running record and returns `Queued`; it never
//!   deadlocks.
//! - **Failure.** When the encoder latches a failure the queue is emptied (the records are
//!   dropped unwritten) and every later push returns [`PushError::Failed`] with that failure.
//!
//! # Capacity
//! The queue holds at most `capacity` records ([`DEFAULT_CAPACITY`] unless set). A producer
//! that finds it full while another thread drains waits for space (backpressure: memory stays
//! bounded and nothing is dropped). The draining thread itself cannot wait for itself: a push
//! from its callbacks into a full queue gets its record back in [`PushError::Full`].

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::ThreadId;

use crate::encode::{current_thread, discard_foreign, Encoder, EncoderFailure};
use crate::wire::Encode;

use super::DEFAULT_CAPACITY;

/// What a successful push did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pushed {
    /// This call drained the queue: its record, and any queued before or during the drain, are
    /// written.
    Written,
    /// A drain was running on another thread (or this thread, re-entrantly): the record is
    /// queued and that drain will write it.
    Queued,
}

/// Why a push did not enter the queue or its drain stopped.
pub enum PushError<R> {
    /// The encoder latched this failure (now or earlier); the record was not written.
    Failed(EncoderFailure),
    /// The queue is full and this thread is the one draining it; the record is handed back.
    Full(R),
    /// The FIFO was pushed from inside a callback of its encoder that was running outside the
    /// FIFO (a direct `Encoder::encode`); the record stays queued for the next drain.
    Reentrant,
}

impl<R> fmt::Debug for PushError<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PushError::Failed(e) => f.debug_tuple("Failed").field(e).finish(),
            PushError::Full(_) => f.write_str("Full(..)"),
            PushError::Reentrant => f.write_str("Reentrant"),
        }
    }
}

/// The one output queue of a session. `Send + Sync` when `R: Send`.
pub struct OutputFifo<R> {
    encoder: Encoder,
    queue: Mutex<Queue<R>>,
    space: Condvar,
    capacity: usize,
}

struct Queue<R> {
    items: VecDeque<R>,
    /// Producers blocked on a full queue; the drainer only notifies when there is one (a
    /// futex `notify_all` is a syscall even with no waiter).
    waiting: usize,
    drainer: Option<ThreadId>,
    failure: Option<EncoderFailure>,
}

impl<R: Encode + Send> OutputFifo<R> {
    /// A FIFO writing through `encoder`, with [`DEFAULT_CAPACITY`].
    pub fn new(encoder: Encoder) -> Self {
        Self::with_capacity(encoder, DEFAULT_CAPACITY)
    }

    /// A FIFO holding at most `capacity` queued records (at least 1).
    pub fn with_capacity(encoder: Encoder, capacity: usize) -> Self {
        OutputFifo {
            encoder,
            queue: Mutex::new(Queue {
                items: VecDeque::new(),
                waiting: 0,
                drainer: None,
                failure: None,
            }),
            space: Condvar::new(),
            capacity: capacity.max(1),
        }
    }

    /// The encoder (to inspect its state; write only through [`OutputFifo::push`], or order is
    /// no longer the FIFO's).
    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// Records waiting to be written.
    pub fn len(&self) -> usize {
        self.lock().items.len()
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Enters `record` into the queue; drains it if no drain is running (see module docs).
    pub fn push(&self, record: R) -> Result<Pushed, PushError<R>> {
        let me = current_thread();
        let mut q = self.lock();
        loop {
            if let Some(f) = q.failure {
                drop(q);
                discard_foreign(record);
                return Err(PushError::Failed(f));
            }
            if q.items.len() < self.capacity {
                break;
            }
            match q.drainer {
                Some(t) if t == me => return Err(PushError::Full(record)),
                Some(_) => {
                    q.waiting += 1;
                    q = self.space.wait(q).unwrap_or_else(|p| p.into_inner());
                    q.waiting -= 1;
                }
                // Unreachable (records are only left queued under a running drain); accept.
                None => break,
            }
        }
        q.items.push_back(record);
        if q.drainer.is_some() {
            return Ok(Pushed::Queued);
        }
        q.drainer = Some(me);
        drop(q);
        self.drain()
    }

    /// Writes queued records until the queue is empty. The caller is the drainer.
    fn drain(&self) -> Result<Pushed, PushError<R>> {
        let mut guard = DrainGuard {
            fifo: self,
            armed: true,
        };
        loop {
            let (record, wake) = {
                let mut q = self.lock();
                match q.items.pop_front() {
                    Some(r) => (r, q.waiting > 0),
                    None => {
                        q.drainer = None;
                        guard.armed = false;
                        return Ok(Pushed::Written);
                    }
                }
            };
            if wake {
                self.space.notify_all();
            }
            let result = self.encoder.encode(|out| record.encode(out));
            let failure = match result {
                Ok(()) => {
                    discard_foreign(record);
                    continue;
                }
                Err(e) => e.failure(),
            };
            guard.armed = false;
            let Some(failure) = failure else {
                // `Error::Reentrant`: this thread is inside a callback of a direct encode.
                let mut q = self.lock();
                q.items.push_front(record);
                q.drainer = None;
                return Err(PushError::Reentrant);
            };
            let dropped = {
                let mut q = self.lock();
                q.failure = Some(failure);
                q.drainer = None;
                std::mem::take(&mut q.items)
            };
            self.space.notify_all();
            discard_foreign(record);
            discard_foreign(dropped);
            return Err(PushError::Failed(failure));
        }
    }

    fn lock(&self) -> MutexGuard<'_, Queue<R>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Releases the drain if a drain unwinds through a bug of ours, so the FIFO never stays
/// "draining" with no drainer.
struct DrainGuard<'f, R> {
    fifo: &'f OutputFifo<R>,
    armed: bool,
}

impl<R> Drop for DrainGuard<'_, R> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let mut q = self.fifo.queue.lock().unwrap_or_else(|p| p.into_inner());
        q.drainer = None;
        drop(q);
        self.fifo.space.notify_all();
    }
}

impl<R> fmt::Debug for OutputFifo<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        f.debug_struct("OutputFifo")
            .field("queued", &q.items.len())
            .field("draining", &q.drainer.is_some())
            .field("failure", &q.failure)
            .field("capacity", &self.capacity)
            .field("encoder", &self.encoder)
            .finish()
    }
}
