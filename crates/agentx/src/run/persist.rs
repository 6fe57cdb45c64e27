//! The driver's side of [`Action::Persist`](agentx_core::session::Action::Persist): the session
//! store of this process (PROFILE §11), created at the first persisted turn of a new session
//! (or opened by `--resume` at startup) and kept, with its lock, for the process's life.
//!
//! Owns PROFILE §11 "Disk errors": a turn whose lines cannot be stored (creating the session
//! directory or `meta.json`, the append, the fsync) keeps them, owed; what is owed goes first
//! into the next turn's append, record by record, so space that returns is used at once and
//! once it is back the transcript has every turn in order. The failure is said once on stderr
//! (`agentx: session store: <errno text>`), and again only after a success; the session, its
//! result and `idle` go on regardless. While more than [`MAX_OWED_BYTES`] is owed the driver
//! has the session refuse new prompts ([`Persister::unavailable`]). Must never: write a frame
//! to stdout, or hold a frame back (the session decides that order).

use std::collections::VecDeque;
use std::path::PathBuf;

use bytes::Bytes;

use agentx_core::registry::Selection;
use agentx_home::store::{SessionStore, StoreError};

use super::identity::meta;

/// While more than this many bytes of record lines are owed to the store, new prompts are
/// refused (PROFILE §11).
pub const MAX_OWED_BYTES: usize = 64 << 20;

/// The process's session store and the lines it still owes it.
pub struct Persister {
    home: PathBuf,
    store: Option<SessionStore>,
    /// Lines of turns not yet stored (a failed create, append or fsync), oldest first.
    owed: VecDeque<Bytes>,
    owed_bytes: usize,
    /// The errno text of the last failure, while anything is owed.
    error: Option<String>,
    /// The diagnostic of the current failure streak was written.
    said: bool,
}

impl Persister {
    /// `store` is the resumed session's, or `None` for a new session.
    pub fn new(home: PathBuf, store: Option<SessionStore>) -> Persister {
        Persister {
            home,
            store,
            owed: VecDeque::new(),
            owed_bytes: 0,
            error: None,
            said: false,
        }
    }

    /// Appends and fsyncs one finished turn's lines, after whatever earlier turns still owe.
    /// Returns only when the lines are durable or the attempt failed (PROFILE §11: the
    /// session's result and `idle` wait for this call, not for its success).
    pub fn turn(&mut self, lines: &[Bytes], session_id: &str, selection: &Selection) {
        for l in lines {
            self.owed_bytes += l.len();
            self.owed.push_back(l.clone());
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
        let (stored, outcome) = store.append_records(self.owed.iter().map(|l| &l[..]));
        for l in self.owed.drain(..stored) {
            self.owed_bytes -= l.len();
        }
        match outcome {
            Ok(()) => {
                self.error = None;
                self.said = false;
            }
            Err(e) => self.failed(&e),
        }
    }

    /// One more try for what earlier turns still owe (space may have returned): at exit, and
    /// before a prompt while [`Persister::unavailable`].
    pub fn retry(&mut self, session_id: &str, selection: &Selection) {
        self.turn(&[], session_id, selection);
    }

    /// PROFILE §11: the errno text to refuse prompts with, while more than [`MAX_OWED_BYTES`]
    /// is owed.
    pub fn unavailable(&self) -> Option<&str> {
        (self.owed_bytes > MAX_OWED_BYTES)
            .then_some(self.error.as_deref())
            .flatten()
    }

    fn failed(&mut self, e: &StoreError) {
        self.error = Some(e.errno_text().unwrap_or("unavailable").to_string());
        if !self.said {
            self.said = true;
            eprintln!("{e}");
        }
    }
}
