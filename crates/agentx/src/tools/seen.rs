//! Read-before-write (PROFILE §17): the files this process read with `Read` or wrote with
//! `Write`/`Edit`, each with its size, modification time and SHA-256 as last seen. `Edit`, and
//! `Write` of an existing file, need an entry that still matches the file on disk. Per
//! process: a resumed session starts empty. It keeps the last [`MAX_SEEN_FILES`] files seen;
//! an older one must be read again before it is changed (the "read first" error, never a
//! pass). Must never: read a file it was not asked about, or let a stale entry pass (all three
//! facts must match).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// The most files the ledger remembers (issue 46: it grows with the model's tool calls); the
/// one seen longest ago is forgotten first.
pub const MAX_SEEN_FILES: usize = 10_000;

/// What was last seen of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    size: u64,
    mtime: Option<SystemTime>,
    sha256: [u8; 32],
}

/// The files, and when each was last recorded (a counter).
#[derive(Debug, Default)]
struct Files {
    seen: HashMap<PathBuf, (u64, Seen)>,
    clock: u64,
}

/// The ledger of files seen by this process, shared by the tool threads.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    files: Arc<Mutex<Files>>,
    /// Held by `Write` and `Edit` from their check to their record, so two calls of one
    /// message (which run at the same time) never both pass the check of one version.
    writes: Arc<Mutex<()>>,
}

/// Why a write must not go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stale {
    /// Never read (or written) by this process.
    NotRead,
    /// Changed since.
    Changed,
}

impl Stale {
    /// The error text for `path` (absolute).
    pub fn message(&self, path: &Path) -> String {
        match self {
            Stale::NotRead => format!("read {} first", path.display()),
            Stale::Changed => format!(
                "{} changed on disk since it was read; read it again",
                path.display()
            ),
        }
    }
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Ledger {
    /// Serializes the file-changing tools (see `writes`).
    pub fn lock_writes(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records `bytes` as the content of `path` now (after a read or a write).
    pub fn record(&self, path: &Path, bytes: &[u8]) {
        self.record_digest(path, bytes.len() as u64, digest(bytes));
    }

    /// Records a content of `size` bytes with this SHA-256 as `path`'s now (a read that
    /// streamed the file).
    pub fn record_digest(&self, path: &Path, size: u64, sha256: [u8; 32]) {
        let seen = Seen {
            size,
            mtime: mtime(path),
            sha256,
        };
        if let Ok(mut files) = self.files.lock() {
            files.clock += 1;
            let at = files.clock;
            if files.seen.len() >= MAX_SEEN_FILES && !files.seen.contains_key(path) {
                // One scan per insertion past the bound, over at most MAX_SEEN_FILES entries.
                let oldest = files
                    .seen
                    .iter()
                    .min_by_key(|(_, (at, _))| *at)
                    .map(|(p, _)| p.clone());
                if let Some(oldest) = oldest {
                    files.seen.remove(&oldest);
                }
            }
            files.seen.insert(path.to_path_buf(), (at, seen));
        }
    }

    /// Whether `bytes`, just read from `path`, are what this process last saw there.
    pub fn check(&self, path: &Path, bytes: &[u8]) -> Result<(), Stale> {
        let Ok(files) = self.files.lock() else {
            return Err(Stale::NotRead);
        };
        let (_, seen) = files.seen.get(path).ok_or(Stale::NotRead)?;
        let now = Seen {
            size: bytes.len() as u64,
            mtime: mtime(path),
            sha256: seen.sha256,
        };
        if now != *seen || digest(bytes) != seen.sha256 {
            return Err(Stale::Changed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_keeps_the_last_10_000_files_and_forgets_the_oldest_first() {
        let dir = std::env::temp_dir().join(format!("agentx-seen-{}", std::process::id()));
        let ledger = Ledger::default();
        let path = |i: usize| dir.join(format!("f{i}"));
        for i in 0..MAX_SEEN_FILES {
            ledger.record(&path(i), b"x");
        }
        // Seen again: the newest now, so not the one forgotten.
        ledger.record(&path(0), b"x");
        assert_eq!(ledger.check(&path(0), b"x"), Ok(()));
        assert_eq!(ledger.check(&path(1), b"x"), Ok(()));
        ledger.record(&path(MAX_SEEN_FILES), b"x");
        assert_eq!(ledger.check(&path(1), b"x"), Err(Stale::NotRead));
        for i in [0, 2, MAX_SEEN_FILES - 1, MAX_SEEN_FILES] {
            assert_eq!(ledger.check(&path(i), b"x"), Ok(()), "file {i}");
        }
        assert_eq!(ledger.files.lock().unwrap().seen.len(), MAX_SEEN_FILES);
    }
}
