//! The blocking client's writes that a call waits for at most its deadline: the records of a
//! control request (`initialize`, `interrupt`, any `control`), its `control_cancel_request`,
//! and an upload's records. They are written, in the order they were handed over, by one
//! writer thread of the client's own (started at the first such write), so a call whose
//! agent stopped reading its stdin returns [`HostError::Timeout`] by its deadline instead of
//! blocking in the pipe's `write` for ever.
//!
//! Owns: that thread, its queue of jobs, and the count of jobs handed over and not yet
//! written. Order with what the caller sends itself (WIRE-003 from the host's end): a send
//! ([`Shared::write_in_order`]) waits until every job handed over before it was written (or
//! failed), so a `send_text` after an `interrupt` that timed out never overtakes it; a cancel
//! handed over after its request is written after it. Answers to the agent (permission
//! decisions, the generic unsupported-control error) do not wait: they answer what the agent
//! asked, and the read side that writes some of them must never block on a stuck job.
//!
//! Must never: reorder two jobs, write a job after a job before it failed (the FIFO latched
//! it: the later job reports the same failure), or keep the client alive (the thread holds
//! the client only while it writes a job).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::thread;
use std::time::Instant;

use super::error::HostError;
use agentx_wire::wire::InputRecord;

/// One hand-over: records written in order, and where the outcome goes.
struct Job {
    records: Vec<InputRecord<'static>>,
    outcome: Sender<Result<(), HostError>>,
    /// Ends the agent's input after the records (`end_input` while jobs were queued).
    end_input: bool,
}

/// The writer thread's queue and the count of jobs not yet written.
#[derive(Default)]
pub(crate) struct Detached {
    queue: Mutex<Option<Sender<Job>>>,
    /// Jobs handed over and not yet settled (read without a lock on every send).
    in_flight: AtomicUsize,
    /// With `idle`: where a send waits for `in_flight` to reach 0.
    settled: Mutex<()>,
    idle: Condvar,
}

/// A job handed over; [`Written::by`] waits for its outcome.
pub(crate) struct Written(Receiver<Result<(), HostError>>);

impl Written {
    /// The job's outcome, or `None` if it is still being written at `deadline`.
    pub(crate) fn by(&self, deadline: Instant) -> Option<Result<(), HostError>> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.0.recv_timeout(left) {
            Ok(outcome) => Some(outcome),
            Err(RecvTimeoutError::Timeout) => None,
            // The writer thread ended without an outcome: nothing more is written.
            Err(RecvTimeoutError::Disconnected) => Some(Err(HostError::InputClosed)),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Counts one job out when it was written, failed, or its thread unwound.
struct Settled<'d>(&'d Detached);

impl Drop for Settled<'_> {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Under the lock a waiter holds between its check and its wait: no lost wake-up.
            let _g = lock(&self.0.settled);
            self.0.idle.notify_all();
        }
    }
}

impl Detached {
    /// Waits until every job handed over so far was written or failed.
    pub(crate) fn wait_idle(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut g = lock(&self.settled);
        while self.in_flight.load(Ordering::Acquire) > 0 {
            g = self.idle.wait(g).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// True while a job is queued or being written.
    pub(crate) fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }
}

/// What the writer thread needs of its client: the detached-write state, the one write path
/// (WIRE-003: every record through the client's output FIFO) and the end of input.
pub(crate) trait Writer: Send + Sync + 'static {
    /// The client's detached-write state.
    fn detached(&self) -> &Detached;
    /// Writes one record as the client writes every record.
    fn write(&self, record: &InputRecord<'_>) -> Result<(), HostError>;
    /// Closes the agent's input.
    fn close_input(&self);
}

/// Hands `records` to the client's writer thread, behind every job handed over before.
pub(crate) fn hand_over<S: Writer>(
    shared: &Arc<S>,
    records: Vec<InputRecord<'static>>,
) -> Result<Written, HostError> {
    queue(shared, records, false)
}

/// Hands `records` over and waits for them until `deadline`: still being written then is
/// [`HostError::Timeout`] for `subtype` (they are written later, in order).
pub(crate) fn write_by<S: Writer>(
    shared: &Arc<S>,
    records: Vec<InputRecord<'static>>,
    deadline: Instant,
    subtype: &'static str,
) -> Result<(), HostError> {
    hand_over(shared, records)?
        .by(deadline)
        .unwrap_or(Err(HostError::Timeout { subtype }))
}

/// Ends the agent's input: now when no job is queued, else once every job handed over so
/// far was written, so records a caller saw accepted (a call's cancel, an upload's abort)
/// reach the agent before its EOF.
pub(crate) fn end_input<S: Writer>(shared: &Arc<S>) {
    if !shared.detached().busy() || queue(shared, Vec::new(), true).is_err() {
        shared.close_input();
    }
}

fn queue<S: Writer>(
    shared: &Arc<S>,
    records: Vec<InputRecord<'static>>,
    end_input: bool,
) -> Result<Written, HostError> {
    let detached = shared.detached();
    let (outcome, written) = mpsc::channel();
    detached.in_flight.fetch_add(1, Ordering::AcqRel);
    let job = Job {
        records,
        outcome,
        end_input,
    };
    let sent = {
        let mut queue = lock(&detached.queue);
        let tx = match queue.take() {
            Some(tx) => Ok(tx),
            None => start(Arc::downgrade(shared)),
        };
        tx.map_err(HostError::Io).and_then(|tx| {
            // A send fails only if the thread is gone (a bug of ours unwound it): the job
            // is refused as if input were closed, and the next hand-over starts a new thread.
            let sent = tx.send(job).map_err(|_| HostError::InputClosed);
            if sent.is_ok() {
                *queue = Some(tx);
            }
            sent
        })
    };
    match sent {
        Ok(()) => Ok(Written(written)),
        Err(e) => {
            drop(Settled(detached)); // never handed over: counted out again
            Err(e)
        }
    }
}

/// Starts the writer thread; it ends when the client is gone and its queue is empty.
fn start<S: Writer>(shared: Weak<S>) -> std::io::Result<Sender<Job>> {
    let (tx, rx) = mpsc::channel::<Job>();
    thread::Builder::new()
        .name("agentx-host-writer".into())
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                let Some(shared) = shared.upgrade() else {
                    return;
                };
                let _settled = Settled(shared.detached());
                let outcome = job.records.iter().try_for_each(|r| shared.write(r));
                if job.end_input {
                    shared.close_input();
                }
                let _ = job.outcome.send(outcome);
            }
        })?;
    Ok(tx)
}
