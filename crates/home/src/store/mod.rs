//! The durable session store of PROFILE §11: `sessions/<session_id>/` under AgentX home.
//!
//! Owns: the directory layout, `meta.json` (session id, the provider binding of WIRE-025,
//! creation time), `transcript.ndjson` appended and fsynced at the end of every turn, loading
//! with a torn last line ignored (and cut off before the next append), and the resume checks
//! that must pass before any output or provider I/O: the session exists, no other process
//! holds it, and its recorded provider binding equals this process's frozen selection
//! (WIRE-025). The prior context a resumed model sees, with compaction relinking (WIRE-005),
//! is [`context`].
//!
//! PROFILE §11 guarantees kept here:
//! - **One writer.** A store holds an exclusive advisory lock (`flock`, through
//!   `std::fs::File::try_lock`) on `sessions/<id>/lock` for as long as it lives (the driver
//!   keeps it for the process's life); a second process gets [`StoreError::InUse`] before it
//!   reads or cuts anything. The kernel drops the lock of a dead process, so a stale lock file
//!   never blocks.
//! - **A cut turn is absent or whole.** Every persisted turn ends with its `result` line, so
//!   complete lines after the last `result` are a turn cut by a crash in the middle of its
//!   append: they are ignored on load and cut off with the torn tail. The store therefore never
//!   hands resume a `tool_use` whose `tool_result` was lost.
//! - **Disk errors.** A failed append or fsync cuts the file back to its last committed length
//!   (the transcript ends on a whole line); the caller keeps the bytes and retries them.
//!   `meta.json` is written to `meta.json.tmp` and renamed; a failure removes the temporary.
//!
//! This is a driver-side module: it reads and writes files (the session core never does; it
//! hands the records to persist to its driver). It must never write outside AgentX home, store
//! a key, endpoint, deployment or API version (the binding holds only an opaque route
//! fingerprint), or echo more than 64 bytes of an input value in a diagnostic.

mod meta;
mod pick;
mod refs;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use agentx_core::registry::ProviderBinding;
use agentx_wire::wire::grammar::is_canonical_uuid;
use agentx_wire::wire::responses::{cut, MAX_ECHO_BYTES};

pub use agentx_core::transcript::{context, split_transcript, Transcript};
pub use meta::SessionMeta;
pub use pick::{discard_new, exists, load, most_recent};
pub use refs::blob_references;

/// The transcript file of a session directory.
pub const TRANSCRIPT_FILE: &str = "transcript.ndjson";
/// The metadata file of a session directory.
pub const META_FILE: &str = "meta.json";
/// The folder of AgentX home that holds the sessions.
pub const SESSIONS_DIR: &str = "sessions";

/// Why a store operation failed. `Display` is the complete stderr line of PROFILE §11 without
/// the trailing newline; it never holds a private value.
#[derive(Debug)]
pub enum StoreError {
    /// `--resume ID` names no stored session (or not a canonical session UUID).
    UnknownSession {
        /// The requested session ID.
        id: String,
    },
    /// The recorded provider differs from this process's selection (WIRE-025).
    ProviderMismatch {
        /// The session ID.
        id: String,
    },
    /// `meta.json` or a complete transcript line is not what this store writes.
    Corrupt {
        /// The session ID.
        id: String,
        /// What is wrong.
        what: &'static str,
    },
    /// PROFILE §11 "One writer": another live process holds the session's lock.
    InUse {
        /// The session ID.
        id: String,
    },
    /// `--session-id` (or a fork) names a session that exists already (PROFILE §15).
    Exists {
        /// The session ID.
        id: String,
    },
    /// A file operation failed.
    Io {
        /// The operation (`open`, `write`, `fsync`, …); not part of the diagnostic.
        op: &'static str,
        /// The I/O error's kind.
        kind: io::ErrorKind,
        /// The errno text (`No space left on device`): never a path.
        text: String,
    },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::UnknownSession { id } => write!(f, "agentx: no session {id}"),
            StoreError::ProviderMismatch { id } => write!(
                f,
                "agentx: cannot resume {id}: it was recorded with another provider"
            ),
            StoreError::Corrupt { id, what } => {
                write!(f, "agentx: cannot resume {id}: {what}")
            }
            StoreError::InUse { id } => {
                write!(f, "agentx: session {id} is in use by another process")
            }
            StoreError::Exists { id } => write!(f, "agentx: session {id} already exists"),
            StoreError::Io { text, .. } => write!(f, "agentx: session store: {text}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl StoreError {
    /// The errno text of a file operation's failure (`No space left on device`), for PROFILE
    /// §11's input error; `None` for the other errors.
    pub fn errno_text(&self) -> Option<&str> {
        match self {
            StoreError::Io { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The home cannot be written at all (a read-only mount, PROFILE §11).
    pub fn is_read_only(&self) -> bool {
        matches!(self, StoreError::Io { kind, .. } if *kind == io::ErrorKind::ReadOnlyFilesystem)
    }
}

/// At most 64 bytes of an input value in a diagnostic (PROFILE §5), cut on a char boundary.
fn shown(id: &str) -> String {
    cut(id, MAX_ECHO_BYTES).escape_debug().to_string()
}

/// `sessions/<id>/` and the bytes of its `meta.json`, for a resume or a read-only load: an id
/// that is no canonical UUID (so nothing outside `sessions/` is named) or has no `meta.json`
/// is [`StoreError::UnknownSession`].
fn stored_meta(home: &Path, session_id: &str) -> Result<(PathBuf, Vec<u8>), StoreError> {
    let unknown = || StoreError::UnknownSession {
        id: shown(session_id),
    };
    if !is_canonical_uuid(session_id) {
        return Err(unknown());
    }
    let dir = home.join(SESSIONS_DIR).join(session_id);
    let mut bytes = Vec::new();
    let read = File::open(dir.join(META_FILE)).and_then(|f| {
        // docs/limits.md: a file on disk is read up to its bound, never whole.
        f.take(MAX_META_BYTES as u64 + 1).read_to_end(&mut bytes)
    });
    match read {
        Ok(n) if n > MAX_META_BYTES => Err(StoreError::Corrupt {
            id: shown(session_id),
            what: "meta.json is over 65536 bytes",
        }),
        Ok(_) => Ok((dir, bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(unknown()),
        Err(e) => Err(io_err("read meta.json")(e)),
    }
}

/// The longest `meta.json` read back (this store writes a few hundred bytes).
pub const MAX_META_BYTES: usize = 64 << 10;

/// The errno text of an I/O error (`No space left on device`), without Rust's
/// ` (os error N)` suffix; an error without an errno gives its kind's text. `io::Error`'s
/// `Display` of an OS error is the C library's message only, never a path.
pub fn errno_text(e: &io::Error) -> String {
    if e.raw_os_error().is_some() {
        let full = e.to_string();
        match full.rsplit_once(" (os error ") {
            Some((text, _)) => text.to_string(),
            None => full,
        }
    } else {
        e.kind().to_string()
    }
}

fn io_err(op: &'static str) -> impl Fn(io::Error) -> StoreError {
    move |e| StoreError::Io {
        op,
        kind: e.kind(),
        text: errno_text(&e),
    }
}

/// The lock file of a session directory (PROFILE §11 "One writer").
pub const LOCK_FILE: &str = "lock";

/// Opens `dir/lock` and takes its exclusive advisory lock without waiting.
fn lock_session(dir: &Path, id: &str) -> Result<File, StoreError> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join(LOCK_FILE))
        .map_err(io_err("open lock"))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(fs::TryLockError::WouldBlock) => Err(StoreError::InUse { id: shown(id) }),
        Err(fs::TryLockError::Error(e)) => Err(io_err("lock")(e)),
    }
}

/// One session's directory with its transcript open for appending, held exclusively.
#[derive(Debug)]
pub struct SessionStore {
    dir: PathBuf,
    transcript: File,
    /// The length of the transcript up to its last committed (written and fsynced) append.
    committed: u64,
    /// A failed append may have left bytes past `committed` that could not be cut off yet.
    dirty: bool,
    /// Holds the advisory lock on `lock` while the store lives (PROFILE §11).
    _lock: File,
}

impl SessionStore {
    /// Creates `sessions/<session_id>/` with its `meta.json` (written and fsynced whole) and an
    /// empty transcript.
    pub fn create(home: &Path, meta: &SessionMeta) -> Result<SessionStore, StoreError> {
        if !is_canonical_uuid(&meta.session_id) {
            return Err(StoreError::UnknownSession {
                id: shown(&meta.session_id),
            });
        }
        let dir = home.join(SESSIONS_DIR).join(&meta.session_id);
        fs::create_dir_all(&dir).map_err(io_err("create session directory"))?;
        let lock = lock_session(&dir, &meta.session_id)?;
        // The transcript first, `meta.json` last: a session is visible to `--resume` and
        // `--continue` only once `meta.json` is, so a creation that fails part-way (no inode
        // left for the transcript) never leaves a session another process can open while this
        // one runs, unlocked, and retries.
        let transcript = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(TRANSCRIPT_FILE))
            .map_err(io_err("open transcript"))?;
        let committed = transcript
            .metadata()
            .map_err(io_err("open transcript"))?
            .len();
        let tmp = dir.join("meta.json.tmp");
        let written = (|| {
            let mut f = File::create(&tmp)?;
            f.write_all(&meta.encode())?;
            f.sync_all()?;
            fs::rename(&tmp, dir.join(META_FILE))
        })();
        if let Err(e) = written {
            // PROFILE §11: no `meta.json.tmp` is left behind; the next turn retries.
            let _ = fs::remove_file(&tmp);
            return Err(io_err("write meta.json")(e));
        }
        sync_dir(&dir);
        Ok(SessionStore {
            dir,
            transcript,
            committed,
            dirty: false,
            _lock: lock,
        })
    }

    /// Opens a stored session for `--resume`: the id must name a stored session, and its
    /// recorded binding must equal `current` (WIRE-025), both checked before anything else
    /// is read or written. Returns the store (positioned to append after the last complete
    /// line), the metadata and the transcript.
    pub fn resume(
        home: &Path,
        session_id: &str,
        current: &ProviderBinding,
    ) -> Result<(SessionStore, SessionMeta, Transcript), StoreError> {
        let (dir, meta_bytes) = stored_meta(home, session_id)?;
        // PROFILE §11 "One writer": before anything is compared, read or cut.
        let lock = lock_session(&dir, session_id)?;
        let meta = SessionMeta::verify(&meta_bytes, session_id, current)?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(dir.join(TRANSCRIPT_FILE))
            .map_err(io_err("open transcript"))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(io_err("read transcript"))?;
        let transcript = split_transcript(&bytes);
        let keep = (bytes.len() - transcript.torn_bytes) as u64;
        if keep < bytes.len() as u64 {
            // Cut the torn tail (and a cut turn's lines) so the next append starts a fresh
            // line after the last whole turn.
            file.set_len(keep).map_err(io_err("truncate torn line"))?;
            file.seek(SeekFrom::End(0))
                .map_err(io_err("truncate torn line"))?;
            file.sync_all().map_err(io_err("sync transcript"))?;
        }
        Ok((
            SessionStore {
                dir,
                transcript: file,
                committed: keep,
                dirty: false,
                _lock: lock,
            },
            meta,
            transcript,
        ))
    }

    /// Appends complete frames (each ending in `\n`) and fsyncs: call once at the end of every
    /// turn (PROFILE §11). A frame without its LF is refused, so the store never tears a line
    /// itself. A failed write or fsync cuts the file back to its last committed length (or,
    /// if even that fails, at the start of the next append), so the transcript always ends on
    /// a whole line; the caller keeps `frames` and hands them in again with the next turn's.
    pub fn append(&mut self, frames: &[u8]) -> Result<(), StoreError> {
        if frames.is_empty() {
            return Ok(());
        }
        if frames.last() != Some(&b'\n') {
            return Err(StoreError::Io {
                op: "append an unterminated record",
                kind: io::ErrorKind::InvalidInput,
                text: "an unterminated record".into(),
            });
        }
        if self.dirty {
            self.cut_back()
                .map_err(io_err("truncate a failed append"))?;
        }
        let written = self
            .transcript
            .write_all(frames)
            .and_then(|()| self.transcript.sync_data());
        match written {
            Ok(()) => {
                self.committed += frames.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.dirty = true;
                let _ = self.cut_back();
                Err(io_err("append transcript")(e))
            }
        }
    }

    /// PROFILE §11 "Disk errors": appends owed frames one record at a time, so space that
    /// returns is used at once, then fsyncs. Returns how many leading frames are now durable,
    /// and the error that stopped the rest. A frame that fails is cut off again (the
    /// transcript ends on a whole line); a failed fsync commits nothing.
    pub fn append_records<'a>(
        &mut self,
        frames: impl IntoIterator<Item = &'a [u8]>,
    ) -> (usize, Result<(), StoreError>) {
        if self.dirty {
            if let Err(e) = self.cut_back() {
                return (0, Err(io_err("truncate a failed append")(e)));
            }
        }
        let (mut written, mut len, mut stopped) = (0usize, 0u64, None);
        for frame in frames {
            if frame.last() != Some(&b'\n') {
                stopped = Some(StoreError::Io {
                    op: "append an unterminated record",
                    kind: io::ErrorKind::InvalidInput,
                    text: "an unterminated record".into(),
                });
                break;
            }
            if let Err(e) = self.transcript.write_all(frame) {
                stopped = Some(io_err("append transcript")(e));
                break;
            }
            written += 1;
            len += frame.len() as u64;
        }
        if written == 0 {
            // Nothing whole was written: cut off what a partial write left.
            if stopped.is_some() {
                self.dirty = true;
                let _ = self.cut_back();
            }
            return (0, stopped.map_or(Ok(()), Err));
        }
        // Cut the partial frame of the failure (if any) before the whole ones are synced.
        let synced = self
            .transcript
            .set_len(self.committed + len)
            .and_then(|()| self.transcript.seek(SeekFrom::End(0)).map(drop))
            .and_then(|()| self.transcript.sync_data());
        match synced {
            Ok(()) => {
                self.committed += len;
                (written, stopped.map_or(Ok(()), Err))
            }
            Err(e) => {
                self.dirty = true;
                let _ = self.cut_back();
                (0, Err(io_err("append transcript")(e)))
            }
        }
    }

    /// Cuts the transcript back to its committed length.
    fn cut_back(&mut self) -> io::Result<()> {
        self.transcript.set_len(self.committed)?;
        self.transcript.seek(SeekFrom::End(0))?;
        self.dirty = false;
        Ok(())
    }

    /// The session's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Makes a new directory entry durable where the platform allows (best effort).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
