//! The user-record queue (PROFILE §8 Queue, WIRE-020): records received while a turn runs
//! wait here; `now` first, then `next` (the default), then `later`, arrival order within a
//! class; at most 128 records and 16 MiB of admission accounting (the records' line bytes).
//!
//! Owns admission and order. Must never: decide when a turn starts (the session does).

use std::collections::VecDeque;

use agentx_wire::wire::{Priority, UserRecord};

/// WIRE-020: queue capacity in records.
pub const QUEUE_MAX_RECORDS: usize = 128;
/// WIRE-020: aggregate admission accounting, in bytes (16 MiB).
pub const QUEUE_MAX_BYTES: usize = 16 * 1024 * 1024;

/// An accepted user record waiting for its turn.
#[derive(Debug)]
pub(crate) struct Queued {
    pub(crate) record: UserRecord<'static>,
    /// Its accounted size (the input line's length).
    pub(crate) bytes: usize,
    /// Its replay form as a transcript line, kept when its turn starts (PROFILE §11).
    pub(crate) line: Option<bytes::Bytes>,
    /// The host's record carried its `uuid` (else `record.uuid` was minted for the replay
    /// form): an input-error result of its turn names it as `prompt_uuid` only then (§8).
    pub(crate) uuid_given: bool,
}

/// The queue, one lane per priority.
#[derive(Debug, Default)]
pub(crate) struct UserQueue {
    lanes: [VecDeque<Queued>; 3],
    bytes: usize,
}

fn lane(p: Option<Priority>) -> usize {
    match p.unwrap_or(Priority::Next) {
        Priority::Now => 0,
        Priority::Next => 1,
        Priority::Later => 2,
    }
}

impl UserQueue {
    /// Records waiting.
    pub(crate) fn len(&self) -> usize {
        self.lanes.iter().map(VecDeque::len).sum()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// WIRE-020: room for one more record of `bytes`?
    pub(crate) fn has_room(&self, bytes: usize) -> bool {
        self.len() < QUEUE_MAX_RECORDS && self.bytes.saturating_add(bytes) <= QUEUE_MAX_BYTES
    }

    /// Appends to its priority lane (the caller checked [`UserQueue::has_room`]).
    pub(crate) fn push(&mut self, q: Queued) {
        self.bytes += q.bytes;
        self.lanes[lane(q.record.priority)].push_back(q);
    }

    /// The next record to run.
    pub(crate) fn pop(&mut self) -> Option<Queued> {
        let q = self.lanes.iter_mut().find_map(VecDeque::pop_front)?;
        self.bytes -= q.bytes;
        Some(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(p: Option<Priority>, text: &'static str) -> Queued {
        let mut record = UserRecord::text(text);
        record.priority = p;
        Queued {
            record,
            bytes: 10,
            line: None,
            uuid_given: false,
        }
    }

    fn text(q: &Queued) -> String {
        match &q.record.message {
            agentx_wire::wire::UserMessage::Plain(t) => t.to_string(),
            _ => String::new(),
        }
    }

    #[test]
    fn now_then_next_then_later_arrival_order_within_a_class() {
        let mut q = UserQueue::default();
        q.push(rec(Some(Priority::Later), "l1"));
        q.push(rec(None, "n1"));
        q.push(rec(Some(Priority::Now), "w1"));
        q.push(rec(Some(Priority::Next), "n2"));
        q.push(rec(Some(Priority::Now), "w2"));
        let order: Vec<String> = std::iter::from_fn(|| q.pop()).map(|x| text(&x)).collect();
        assert_eq!(order, ["w1", "w2", "n1", "n2", "l1"]);
        assert_eq!(q.bytes, 0);
    }

    #[test]
    fn wire_020_limits_at_the_edge() {
        let mut q = UserQueue::default();
        for _ in 0..QUEUE_MAX_RECORDS - 1 {
            q.push(rec(None, "x"));
        }
        assert!(q.has_room(1));
        q.push(rec(None, "x"));
        assert!(!q.has_room(1), "record 129 is refused");
        let mut q = UserQueue::default();
        assert!(q.has_room(QUEUE_MAX_BYTES));
        assert!(!q.has_room(QUEUE_MAX_BYTES + 1));
        q.push(Queued {
            record: UserRecord::text("a"),
            bytes: QUEUE_MAX_BYTES - 5,
            line: None,
            uuid_given: false,
        });
        assert!(q.has_room(5));
        assert!(!q.has_room(6));
    }
}
