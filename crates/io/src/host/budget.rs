//! The async client's bound on records that `recv` has not taken (issue 46): the same
//! [`Bound`] as the blocking client's queue (`host::inbound`), kept beside the batch channel.
//!
//! Owns the count of records and bytes handed to the channel and not yet taken, and the
//! wake-up of the read task when `recv` makes room. The read task asks [`Budget::room`] before
//! every read; while the budget is full it waits, so the agent's stdout fills and
//! backpressure reaches the agent. A client that drains (`close`, `Drop`) reads regardless.
//! Must never: block a thread (it awaits), or lose a wake-up (the `Notified` future is
//! created before the check).

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard};

use ::tokio::sync::Notify;

use super::inbound::Bound;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Default)]
struct Held {
    records: usize,
    bytes: usize,
    /// Per hand-over, oldest first: its records not yet taken and the bytes it brought.
    batches: VecDeque<(usize, usize)>,
    draining: bool,
}

/// What the channel holds for `recv`, against the bound.
pub(crate) struct Budget {
    bound: Bound,
    held: Mutex<Held>,
    room: Notify,
}

impl Budget {
    pub(crate) fn new(bound: Bound) -> Budget {
        Budget {
            bound,
            held: Mutex::new(Held::default()),
            room: Notify::new(),
        }
    }

    fn full(&self, h: &Held) -> bool {
        !h.draining && (h.records >= self.bound.records || h.bytes >= self.bound.bytes)
    }

    /// Waits until the read task may read again.
    pub(crate) async fn room(&self) {
        loop {
            let notified = self.room.notified();
            if !self.full(&lock(&self.held)) {
                return;
            }
            notified.await;
        }
    }

    /// A batch of `records` records, bringing `bytes`, went to the channel.
    pub(crate) fn handed(&self, records: usize, bytes: usize) {
        let mut h = lock(&self.held);
        h.records += records;
        h.bytes += bytes;
        h.batches.push_back((records, bytes));
    }

    /// `recv` took one record.
    pub(crate) fn took(&self) {
        let mut h = lock(&self.held);
        let was_full = self.full(&h);
        h.records = h.records.saturating_sub(1);
        if let Some((left, bytes)) = h.batches.front_mut() {
            *left -= 1;
            if *left == 0 {
                let b = *bytes;
                h.bytes -= b;
                h.batches.pop_front();
            }
        }
        if was_full && !self.full(&h) {
            drop(h);
            self.room.notify_one();
        }
    }

    /// From now on the read task reads to the end whatever is held.
    pub(crate) fn drain(&self) {
        lock(&self.held).draining = true;
        self.room.notify_one();
    }
}
