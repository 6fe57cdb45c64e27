//! The driver's side of [`Action::Persist`](agentx_core::session::Action::Persist): the session
//! store of this process (PROFILE §11), created at the first persisted turn of a new session
//! (or opened by `--resume` at startup) and kept, with its lock, for the process's life.
//!
//! Owns PROFILE §11 "Disk errors": a turn whose lines cannot be stored (creating the session
//! directory or `meta.json`, the append, the fsync) keeps them; they go first into the next
//! turn's append (and are tried once more at exit), so once space returns the transcript has every turn in order and the session
//! resumes. The failure is said once on stderr (`agentx: session store: <errno text>`), and
//! again only after a success; the session, its result and `idle` go on regardless. Must
//! never: write a frame to stdout, or hold a frame back (the session decides that order).

use std::path::PathBuf;

use bytes::Bytes;

use agentx_core::registry::Selection;
use agentx_home::store::SessionStore;

use super::identity::meta;

/// The process's session store and the lines it still owes it.
pub struct Persister {
    home: PathBuf,
    store: Option<SessionStore>,
    /// Lines of turns not yet stored (a failed create, append or fsync), oldest first.
    owed: Vec<u8>,
    /// The diagnostic of the current failure streak was written.
    said: bool,
}

impl Persister {
    /// `store` is the resumed session's, or `None` for a new session.
    pub fn new(home: PathBuf, store: Option<SessionStore>) -> Persister {
        Persister {
            home,
            store,
            owed: Vec::new(),
            said: false,
        }
    }

    /// Appends and fsyncs one finished turn's lines, after whatever earlier turns still owe.
    /// Returns only when the lines are durable or the attempt failed (PROFILE §11: the
    /// session's result and `idle` wait for this call, not for its success).
    pub fn turn(&mut self, lines: &[Bytes], session_id: &str, selection: &Selection) {
        for l in lines {
            self.owed.extend_from_slice(l);
        }
        if self.owed.is_empty() {
            return;
        }
        if self.store.is_none() {
            match SessionStore::create(&self.home, &meta(session_id, selection)) {
                Ok(s) => self.store = Some(s),
                Err(e) => return self.failed(&e),
            }
        }
        let Some(store) = self.store.as_mut() else {
            return;
        };
        match store.append(&self.owed) {
            Ok(()) => {
                self.owed.clear();
                if self.owed.capacity() > 1 << 20 {
                    self.owed.shrink_to(1 << 20);
                }
                self.said = false;
            }
            Err(e) => self.failed(&e),
        }
    }

    /// At exit: one more try for what earlier turns still owe (space may have returned since
    /// the last turn).
    pub fn retry(&mut self, session_id: &str, selection: &Selection) {
        self.turn(&[], session_id, selection);
    }

    fn failed(&mut self, e: &agentx_home::store::StoreError) {
        if !self.said {
            self.said = true;
            eprintln!("{e}");
        }
    }
}
