//! Duplicate suppression ("Ordering, replay, and duplicate suppression"; PERM-050, PERM-053):
//! the bounded set of the last 1,000 resolved tool-use IDs, and the bounded record of settled
//! request IDs the broker uses to recognise a known-late response (WIRE-007).
//!
//! Owns: bounded, insertion-ordered membership with oldest-first eviction. Must never: grow
//! without bound, reorder on a repeated insert, or decide what a late response means (that is
//! the broker's routing).

use std::collections::{HashMap, VecDeque};

/// The protocol's bound: "Keep a bounded set of 1,000 resolved tool-use IDs."
pub const RESOLVED_CAPACITY: usize = 1000;

/// A bounded insertion-ordered map: when full, inserting a new key evicts the oldest one.
#[derive(Clone, Debug)]
pub struct BoundedMap<V> {
    order: VecDeque<Box<str>>,
    members: HashMap<Box<str>, V>,
    capacity: usize,
}

impl<V> BoundedMap<V> {
    /// A map holding at most `capacity` keys (at least 1).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        BoundedMap {
            order: VecDeque::with_capacity(capacity.min(1024)),
            members: HashMap::with_capacity(capacity.min(1024)),
            capacity,
        }
    }

    /// Inserts `key` when absent (evicting the oldest key when full) and returns true; a key
    /// already present keeps its value and its place, and false is returned.
    pub fn insert(&mut self, key: &str, value: V) -> bool {
        if self.members.contains_key(key) {
            return false;
        }
        if self.order.len() == self.capacity {
            if let Some(old) = self.order.pop_front() {
                self.members.remove(&old);
            }
        }
        let key: Box<str> = key.into();
        self.order.push_back(key.clone());
        self.members.insert(key, value);
        true
    }

    /// The value held for `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.members.get(key)
    }

    /// True while `key` is held.
    pub fn contains(&self, key: &str) -> bool {
        self.members.contains_key(key)
    }

    /// Keys held.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The most keys held at once (the oldest is evicted beyond it).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The oldest key still held.
    pub fn oldest(&self) -> Option<&str> {
        self.order.front().map(|k| &**k)
    }
}

/// The last [`RESOLVED_CAPACITY`] resolved tool-use IDs, oldest evicted first. A late
/// duplicate response whose tool-use ID is here is ignored (PERM-050).
#[derive(Clone, Debug)]
pub struct ResolvedToolUses(BoundedMap<()>);

impl Default for ResolvedToolUses {
    fn default() -> Self {
        Self::new()
    }
}

impl ResolvedToolUses {
    /// The protocol's set of 1,000.
    pub fn new() -> Self {
        ResolvedToolUses(BoundedMap::with_capacity(RESOLVED_CAPACITY))
    }

    /// A set of another size (tests, a host with other needs).
    pub fn with_capacity(capacity: usize) -> Self {
        ResolvedToolUses(BoundedMap::with_capacity(capacity))
    }

    /// Records a resolved tool-use ID; false when it was already recorded (PERM-053: a second
    /// settlement of one ID is a bug the caller must not act on).
    pub fn insert(&mut self, tool_use_id: &str) -> bool {
        self.0.insert(tool_use_id, ())
    }

    /// True while `tool_use_id` is in the set (PERM-050).
    pub fn contains(&self, tool_use_id: &str) -> bool {
        self.0.contains(tool_use_id)
    }

    /// IDs held.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when no ID is held.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The bound (1,000 by default).
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// The oldest ID still held (the next one evicted).
    pub fn oldest(&self) -> Option<&str> {
        self.0.oldest()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousand_held_thousand_and_one_evicts_the_oldest() {
        let mut set = ResolvedToolUses::new();
        for i in 0..RESOLVED_CAPACITY {
            assert!(set.insert(&format!("toolu_{i}")));
        }
        assert_eq!(set.len(), 1000);
        assert!(set.contains("toolu_0"), "at the limit nothing is evicted");
        assert!(set.insert("toolu_1000"));
        assert_eq!(set.len(), 1000);
        assert!(!set.contains("toolu_0"), "the 1,001st evicts the oldest");
        assert!(set.contains("toolu_1"));
        assert!(set.contains("toolu_1000"));
        assert_eq!(set.oldest(), Some("toolu_1"));
    }

    #[test]
    fn repeated_insert_keeps_its_place() {
        let mut set = ResolvedToolUses::with_capacity(2);
        assert!(set.insert("a"));
        assert!(set.insert("b"));
        assert!(!set.insert("a"));
        assert!(set.insert("c"));
        assert!(!set.contains("a"), "a stayed oldest and was evicted");
        assert!(set.contains("b") && set.contains("c"));
    }
}
