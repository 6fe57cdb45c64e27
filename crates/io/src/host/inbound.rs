//! The blocking client's read side: the agent's output is read by the thread that waits for
//! it when there is one, and by the client's helper thread when there is none.
//!
//! Owns: the agent's output reader and its [`Output`] (framing, decoding, routing), the
//! record queue, and who reads. A [`Client::recv`](super::Client::recv) that finds the queue
//! empty and nobody reading reads one chunk itself (its blocking `read` is the only wait: one
//! wake-up per read, as a hand-written `BufRead::lines` host has, where a read thread and a
//! channel cost two). Whatever waits with a deadline or is not a `recv` (a control call, an
//! upload, `recv_timeout`, `close` and `Drop`) registers a [`Demand`], and the helper reads
//! for it at once while nobody else does. When no `recv` is under way and none began for
//! a whole check period ([`UNATTENDED`], growing to [`UNATTENDED_MAX`] while `recv`s keep
//! coming), the helper reads too, until a `recv` comes back: the agent's requests
//! (`can_use_tool`, other control requests, cancellations) are answered and its output keeps
//! flowing whether or not the caller reads (as with a read thread). Records and routing are
//! as before: in output order, a record that resolves a waiter is routed after the records
//! before it are queued.
//!
//! The helper is never woken by a `recv`'s reads: it waits with a deadline while `recv`s come
//! and go, and without one while a single `recv` lasts a whole check period (that `recv` wakes
//! it when it returns) or while it reads.
//!
//! **Bound.** The queue holds at most [`Bound::records`] records and about [`Bound::bytes`]
//! bytes (counted per read) that `recv` has not taken. While it is full the helper does not
//! read (a [`Demand`] waits too), so the agent's stdout fills and backpressure reaches the
//! agent; a `recv` that finds the queue empty still reads itself, and a client that drains
//! (`close`, `Drop`) reads to the end. The queues of `host/`: this record queue (bounded
//! here), the agent's stderr (kept up to `ClientOptions::stderr_cap`, the rest read and
//! dropped), the input FIFO (`OutputFifo`'s own bound), and the pending calls and uploads
//! (one per call the host itself made).
//!
//! Must never: have two readers at once, lose or reorder a record, leave the reading role
//! taken after a reader returned or panicked, leave the output unread for longer than two
//! check periods (at most 80 ms) while no `recv` reads it, or format the caller's reader's error (only
//! its kind is kept, WIRE-015).

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::error::HostError;
use super::stream::{Output, RecordItem, Route};
use agentx_wire::encode::{contained, discard_foreign};

/// How long the output may wait for a `recv` before the helper reads it, at first: the
/// helper checks this often whether a `recv` came.
pub(crate) const UNATTENDED: Duration = Duration::from_millis(5);

/// While `recv`s keep coming, the helper checks half as often each time, down to once per
/// this (a wake-up of the helper costs about as much CPU as a read).
pub(crate) const UNATTENDED_MAX: Duration = Duration::from_millis(40);

/// The default of `ClientOptions::max_buffered_records`.
pub const DEFAULT_MAX_BUFFERED_RECORDS: usize = 1024;
/// The default of `ClientOptions::max_buffered_bytes`.
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 64 << 20;

/// How much of the agent's output a client holds that `recv` has not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bound {
    pub(crate) records: usize,
    pub(crate) bytes: usize,
}

impl Default for Bound {
    fn default() -> Self {
        Bound {
            records: DEFAULT_MAX_BUFFERED_RECORDS,
            bytes: DEFAULT_MAX_BUFFERED_BYTES,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Who reads, what was read, and who is waiting (under one lock).
struct Inbox {
    queue: VecDeque<RecordItem>,
    /// The reads the queue's records came from, oldest first: how many of each read's records
    /// are still queued, and the bytes that read brought (released with its last record).
    reads: VecDeque<(usize, usize)>,
    /// The bytes of the reads in `reads`.
    queued_bytes: usize,
    bound: Bound,
    /// Someone holds the reading role (and `Inbound::reading`).
    reading: bool,
    /// The output ended and its last records are queued.
    ended: bool,
    /// Waiters that are not a `recv`: the helper reads while this is above 0.
    wanted: usize,
    /// Read to the end whatever comes (after `close` began or the client was dropped).
    draining: bool,
    /// Threads waiting on `Inbound::changed`: a reader wakes them only when there are any
    /// (a `notify` is a system call even with nobody waiting).
    sleepers: usize,
    /// `recv` calls under way.
    in_recv: usize,
    /// `recv` calls begun so far (the helper compares it across its waits).
    recvs: u64,
    /// The helper waits on `Inbound::wanted` without a deadline until the `recv` under way
    /// returns (that `recv` then wakes it).
    helper_parked: bool,
}

impl Inbox {
    fn new(bound: Bound) -> Inbox {
        Inbox {
            queue: VecDeque::new(),
            reads: VecDeque::new(),
            queued_bytes: 0,
            bound,
            reading: false,
            ended: false,
            wanted: 0,
            draining: false,
            sleepers: 0,
            in_recv: 0,
            recvs: 0,
            helper_parked: false,
        }
    }

    /// Queues one hand-over of a read, `bytes` being what the read brought (the first
    /// hand-over of a read carries them, later ones 0).
    fn push(&mut self, items: Vec<RecordItem>, bytes: usize) {
        self.reads.push_back((items.len(), bytes));
        self.queued_bytes += bytes;
        if self.queue.is_empty() {
            // The batch's own buffer becomes the queue: no copy of the records.
            self.queue = VecDeque::from(items);
        } else {
            self.queue.extend(items);
        }
    }

    /// The oldest record, its read's bytes released with that read's last record.
    fn pop(&mut self) -> Option<RecordItem> {
        let item = self.queue.pop_front()?;
        if let Some((left, bytes)) = self.reads.front_mut() {
            *left -= 1;
            if *left == 0 {
                self.queued_bytes -= *bytes;
                self.reads.pop_front();
            }
        }
        Some(item)
    }

    /// The queue is at its bound: the helper does not read.
    fn full(&self) -> bool {
        self.queue.len() >= self.bound.records || self.queued_bytes >= self.bound.bytes
    }

    /// Wakes the waiters on `changed`, if any, after this guard is released.
    fn wake(inbox: MutexGuard<'_, Inbox>, changed: &Condvar) {
        let any = inbox.sleepers > 0;
        drop(inbox);
        if any {
            changed.notify_all();
        }
    }
}

/// The reader and its read side; locked only by the holder of the reading role.
struct Reading {
    source: Option<Box<dyn Read + Send>>,
    side: Output,
}

pub(crate) struct Inbound {
    inbox: Mutex<Inbox>,
    /// Records were queued, the output ended, or the reading role came free.
    changed: Condvar,
    /// Wakes the helper: a waiter registered, draining began, the output ended, or the `recv`
    /// it was parked behind returned.
    wanted: Condvar,
    reading: Mutex<Reading>,
}

/// Waits on `cv` (until `until`, if given); `true` when the deadline passed.
fn wait<'a>(
    inbox: MutexGuard<'a, Inbox>,
    cv: &Condvar,
    until: Option<Instant>,
) -> (MutexGuard<'a, Inbox>, bool) {
    match until {
        None => (cv.wait(inbox).unwrap_or_else(|p| p.into_inner()), false),
        Some(t) => {
            let (g, r) = cv
                .wait_timeout(inbox, t.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|p| p.into_inner());
            (g, r.timed_out())
        }
    }
}

/// Waits on `Inbound::changed`, counted in `sleepers` (the helper's waits on
/// `Inbound::wanted` are not: a reader never wakes it).
fn sleep<'a>(
    mut inbox: MutexGuard<'a, Inbox>,
    changed: &Condvar,
    until: Option<Instant>,
) -> MutexGuard<'a, Inbox> {
    inbox.sleepers += 1;
    let (mut inbox, _) = wait(inbox, changed, until);
    inbox.sleepers -= 1;
    inbox
}

/// A waiter that needs the output read while it waits (see the module docs).
pub(crate) struct Demand<'a>(&'a Inbound);

impl Drop for Demand<'_> {
    fn drop(&mut self) {
        lock(&self.0.inbox).wanted -= 1;
    }
}

/// Gives the reading role back (also when the reader panicked) and wakes every waiter.
struct Release<'a>(&'a Inbound);

impl Drop for Release<'_> {
    fn drop(&mut self) {
        let mut inbox = lock(&self.0.inbox);
        inbox.reading = false;
        Inbox::wake(inbox, &self.0.changed);
    }
}

/// A `recv` under way; when the last one returns (also by a panic) it wakes a parked helper.
struct InRecv<'a>(&'a Inbound);

impl<'a> InRecv<'a> {
    fn enter(me: &'a Inbound) -> InRecv<'a> {
        let mut inbox = lock(&me.inbox);
        inbox.in_recv += 1;
        inbox.recvs += 1;
        InRecv(me)
    }
}

impl Drop for InRecv<'_> {
    fn drop(&mut self) {
        let mut inbox = lock(&self.0.inbox);
        inbox.in_recv -= 1;
        if inbox.in_recv == 0 && inbox.helper_parked {
            inbox.helper_parked = false;
            drop(inbox);
            self.0.wanted.notify_all();
        }
    }
}

impl Inbound {
    pub(crate) fn new(source: Box<dyn Read + Send>, side: Output, bound: Bound) -> Inbound {
        Inbound {
            inbox: Mutex::new(Inbox::new(bound)),
            changed: Condvar::new(),
            wanted: Condvar::new(),
            reading: Mutex::new(Reading {
                source: Some(source),
                side,
            }),
        }
    }

    /// Registers a waiter the helper reads for until the guard is dropped.
    pub(crate) fn demand(&self) -> Demand<'_> {
        lock(&self.inbox).wanted += 1;
        self.wanted.notify_all();
        Demand(self)
    }

    /// From now on the helper reads to the end of the output.
    pub(crate) fn drain(&self) {
        lock(&self.inbox).draining = true;
        self.wanted.notify_all();
    }

    /// The next item, reading on this thread whenever nobody else reads.
    pub(crate) fn recv(&self, route: &impl Route) -> Option<RecordItem> {
        // Dropped after `inbox` (declared before it): its drop takes the lock.
        let _in_recv = InRecv::enter(self);
        let mut inbox = lock(&self.inbox);
        loop {
            if let Some(item) = inbox.pop() {
                return Some(item);
            }
            if inbox.ended {
                return None;
            }
            if inbox.reading {
                inbox = sleep(inbox, &self.changed, None);
                continue;
            }
            inbox.reading = true;
            drop(inbox);
            self.read_once(route);
            inbox = lock(&self.inbox);
        }
    }

    /// The next item by `deadline` (`Ok(None)`: the output ended); the helper reads for it.
    pub(crate) fn recv_until(&self, deadline: Instant) -> Result<Option<RecordItem>, HostError> {
        let _demand = self.demand();
        let mut inbox = lock(&self.inbox);
        loop {
            if let Some(item) = inbox.pop() {
                return Ok(Some(item));
            }
            if inbox.ended {
                return Ok(None);
            }
            if Instant::now() >= deadline {
                return Err(HostError::Timeout { subtype: "recv" });
            }
            inbox = sleep(inbox, &self.changed, Some(deadline));
        }
    }

    /// The helper thread: reads while someone waits (a [`Demand`], draining) or nobody attends the
    /// output (no `recv` for a whole check period), and nobody else reads; ends with the output.
    pub(crate) fn helper(&self, route: &impl Route) {
        let mut inbox = lock(&self.inbox);
        // `recvs` when the helper's last deadline wait began.
        let mut seen = inbox.recvs;
        // No `recv` has been under way since a whole deadline wait: the helper reads.
        let mut unattended = false;
        // The helper's next deadline wait.
        let mut period = UNATTENDED;
        loop {
            if inbox.ended {
                return;
            }
            if inbox.in_recv > 0 || inbox.recvs != seen {
                unattended = false;
            }
            let needed = inbox.wanted > 0 || inbox.draining || unattended;
            if needed && inbox.full() && !inbox.draining {
                // The bound: nothing is read until `recv` takes some (checked again after a
                // period; a `recv` that empties the queue reads itself).
                inbox = wait(inbox, &self.wanted, Some(Instant::now() + UNATTENDED_MAX)).0;
                continue;
            }
            if needed && !inbox.reading {
                inbox.reading = true;
                drop(inbox);
                self.read_once(route);
                inbox = lock(&self.inbox);
                continue;
            }
            if needed {
                // Someone else reads: wait for the role (its release wakes the sleepers).
                inbox = sleep(inbox, &self.changed, None);
                continue;
            }
            seen = inbox.recvs;
            let timed_out;
            (inbox, timed_out) = wait(inbox, &self.wanted, Some(Instant::now() + period));
            if !timed_out {
                continue;
            }
            if inbox.recvs != seen {
                period = (period * 2).min(UNATTENDED_MAX);
                continue;
            }
            period = UNATTENDED;
            if inbox.in_recv == 0 {
                unattended = true;
            } else {
                // One `recv` lasted the whole wait (it waits for the agent): park until it
                // returns rather than waking every period meanwhile.
                inbox.helper_parked = true;
                while inbox.helper_parked && !inbox.ended && inbox.wanted == 0 && !inbox.draining {
                    inbox = wait(inbox, &self.wanted, None).0;
                }
                inbox.helper_parked = false;
            }
        }
    }

    /// One read by the holder of the reading role: decoded, routed, queued; at the end of the
    /// output (or a failed read) the pipe is let go before the stream ends.
    fn read_once(&self, route: &impl Route) {
        let _release = Release(self);
        let mut reading = lock(&self.reading);
        let Reading { source, side } = &mut *reading;
        let Some(reader) = source.as_mut() else {
            return;
        };
        // WIRE-015 for the caller's reader too: a panic ends the output like an error, and an
        // error is kept only as its kind (the value is dropped unformatted).
        let read = contained(|| reader.read(side.buffer()));
        let mut bytes = match &read {
            Ok(Ok(n)) => *n,
            _ => 0,
        };
        let mut hand_over = |items: Vec<RecordItem>| {
            let mut inbox = lock(&self.inbox);
            inbox.push(items, std::mem::take(&mut bytes));
            Inbox::wake(inbox, &self.changed);
        };
        let ended = side.took(read, route, &mut hand_over);
        if ended {
            // The pipe is closed before the stream ends: whoever saw `recv` return `None` finds
            // the agent's stdout no longer held by this client.
            if let Some(r) = source.take() {
                discard_foreign(r);
            }
            side.finish(route, &mut hand_over);
            let mut inbox = lock(&self.inbox);
            inbox.ended = true;
            drop(inbox);
            self.changed.notify_all();
            self.wanted.notify_all();
        }
    }
}
