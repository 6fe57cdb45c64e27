//! The session's environment updates (PROFILE §8 "Environment updates").
//!
//! Owns the session-wide bound on `update_environment_variables`: at most
//! [`MAX_SESSION_VARIABLES`] distinct names and [`MAX_SESSION_BYTES`] bytes of names plus values
//! held at once. An unset frees its name; the inherited environment does not count. A record
//! that would pass either bound is invalid as a whole and changes nothing. Applying a record
//! costs time linear in its own size (one hash probe per entry), never in what the session
//! already holds. Must never: touch the process environment (the driver applies the
//! [`Action::UpdateEnvironment`](super::Action) it is handed).

use std::collections::HashMap;

/// At most this many distinct names are held at once across a session.
pub const MAX_SESSION_VARIABLES: usize = 1000;
/// At most this many bytes of names plus values are held at once across a session.
pub const MAX_SESSION_BYTES: usize = 1_048_576;

/// The names a session's updates hold, with the bytes each costs (name plus value).
#[derive(Debug, Default)]
pub(crate) struct Environment {
    held: HashMap<String, usize>,
    bytes: usize,
}

/// Why an update was refused; its `Display` is the diagnostic's reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exceeded {
    /// The update would hold this many distinct names.
    Names(usize),
    /// The update would hold this many bytes of names plus values.
    Bytes(usize),
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exceeded::Names(n) => write!(
                f,
                "update_environment_variables: the session would hold {n} variables, more than \
                 {MAX_SESSION_VARIABLES} (PROFILE §8); nothing changed"
            ),
            Exceeded::Bytes(n) => write!(
                f,
                "update_environment_variables: the session would hold {n} bytes of names and \
                 values, more than {MAX_SESSION_BYTES} (PROFILE §8); nothing changed"
            ),
        }
    }
}

impl Environment {
    /// Checks `update` against the bounds and, when it fits, applies it. Names within one
    /// record are distinct (the decoder rejects duplicate members, PROFILE §2a).
    pub(crate) fn apply(&mut self, update: &[(String, Option<String>)]) -> Result<(), Exceeded> {
        let (mut names, mut bytes) = (self.held.len(), self.bytes);
        for (name, value) in update {
            let old = self.held.get(name.as_str()).copied();
            bytes -= old.unwrap_or(0);
            match value {
                Some(v) => bytes += name.len() + v.len(),
                None if old.is_some() => names -= 1,
                None => {}
            }
            if value.is_some() && old.is_none() {
                names += 1;
            }
        }
        if names > MAX_SESSION_VARIABLES {
            return Err(Exceeded::Names(names));
        }
        if bytes > MAX_SESSION_BYTES {
            return Err(Exceeded::Bytes(bytes));
        }
        for (name, value) in update {
            match value {
                Some(v) => {
                    self.held.insert(name.clone(), name.len() + v.len());
                }
                None => {
                    self.held.remove(name.as_str());
                }
            }
        }
        self.bytes = bytes;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: std::ops::Range<usize>, value_len: usize) -> Vec<(String, Option<String>)> {
        names
            .map(|i| (format!("V{i:04}"), Some("x".repeat(value_len))))
            .collect()
    }

    #[test]
    fn names_at_the_limit_are_held_and_one_more_is_refused() {
        let mut env = Environment::default();
        assert_eq!(env.apply(&set(0..1000, 0)), Ok(()));
        assert_eq!(env.apply(&set(1000..1001, 0)), Err(Exceeded::Names(1001)));
        // Replacing a held name is not a new one; an unset frees its name.
        assert_eq!(env.apply(&set(0..1, 3)), Ok(()));
        assert_eq!(env.apply(&[("V0000".into(), None)]), Ok(()));
        assert_eq!(env.apply(&set(1000..1001, 0)), Ok(()));
        // Unsetting a name that is not held (an inherited one) costs nothing.
        assert_eq!(env.apply(&[("HOME".into(), None)]), Ok(()));
        assert_eq!(env.held.len(), 1000);
    }

    #[test]
    fn bytes_at_the_limit_are_held_and_one_more_is_refused() {
        let mut env = Environment::default();
        // One name of 5 bytes with a value filling the rest exactly.
        let exact = vec![("V0000".to_string(), Some("x".repeat(MAX_SESSION_BYTES - 5)))];
        assert_eq!(env.apply(&exact), Ok(()));
        assert_eq!(env.bytes, MAX_SESSION_BYTES);
        let more = vec![("A".to_string(), Some(String::new()))];
        assert_eq!(
            env.apply(&more),
            Err(Exceeded::Bytes(MAX_SESSION_BYTES + 1))
        );
        // A refused record changes nothing; shrinking the held value makes room.
        assert_eq!(env.held.len(), 1);
        let shrink = vec![("V0000".to_string(), Some("x".repeat(10)))];
        assert_eq!(env.apply(&shrink), Ok(()));
        assert_eq!(env.bytes, 15);
        assert_eq!(env.apply(&more), Ok(()));
    }

    #[test]
    fn a_refused_record_applies_none_of_its_entries() {
        let mut env = Environment::default();
        assert_eq!(env.apply(&set(0..999, 1)), Ok(()));
        let mut update = vec![("V0000".to_string(), None)];
        update.extend(set(2000..2002, 1));
        // 999 - 1 + 2 = 1000 fits; one more name does not.
        assert_eq!(env.apply(&update), Ok(()));
        assert_eq!(env.apply(&set(3000..3001, 1)), Err(Exceeded::Names(1001)));
        assert!(!env.held.contains_key("V3000"));
        assert_eq!(env.held.len(), 1000);
    }
}
