//! The durable session store of PROFILE §11: `sessions/<session_id>/` under AgentX home.
//!
//! Owns: the directory layout, `meta.json` (session id, the provider binding of WIRE-025,
//! creation time), `transcript.ndjson` appended and fsynced at the end of every turn, loading
//! with a torn last line ignored (and cut off before the next append), and the two resume
//! checks that must pass before any output or provider I/O: the session exists, and its
//! recorded provider binding equals this process's frozen selection (WIRE-025). The prior
//! context a resumed model sees, with compaction relinking (WIRE-005), is [`context`].
//!
//! This is a driver-side module: it reads and writes files (the session core never does; it
//! hands the records to persist to its driver). It must never write outside AgentX home, store
//! a key, endpoint, deployment or API version (the binding holds only an opaque route
//! fingerprint), or echo more than 64 bytes of an input value in a diagnostic.

pub mod context;
mod meta;
mod pick;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

use crate::provider::ProviderBinding;
use crate::wire::grammar::is_canonical_uuid;

pub use meta::SessionMeta;
pub use pick::{exists, load, most_recent};

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
    /// `--session-id` (or a fork) names a session that exists already (PROFILE §15).
    Exists {
        /// The session ID.
        id: String,
    },
    /// A file operation failed.
    Io {
        /// The operation (`open`, `write`, `fsync`, …).
        op: &'static str,
        /// The I/O error's kind (never a path or message).
        kind: io::ErrorKind,
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
            StoreError::Exists { id } => write!(f, "agentx: session {id} already exists"),
            StoreError::Io { op, kind } => write!(f, "agentx: session store: {op} failed: {kind}"),
        }
    }
}

impl std::error::Error for StoreError {}

/// At most 64 bytes of an input value in a diagnostic (PROFILE §5), cut on a char boundary.
fn shown(id: &str) -> String {
    let mut end = id.len().min(64);
    while !id.is_char_boundary(end) {
        end -= 1;
    }
    id[..end].escape_debug().to_string()
}

fn io_err(op: &'static str) -> impl Fn(io::Error) -> StoreError {
    move |e| StoreError::Io { op, kind: e.kind() }
}

/// One session's directory with its transcript open for appending.
#[derive(Debug)]
pub struct SessionStore {
    dir: PathBuf,
    transcript: File,
}

/// The complete lines of a stored transcript, in order, without their LF.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transcript {
    /// The complete lines, in order, without their LF.
    pub lines: Vec<Vec<u8>>,
    /// Bytes of a torn last line that were ignored and cut off.
    pub torn_bytes: usize,
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
        let tmp = dir.join("meta.json.tmp");
        {
            let mut f = File::create(&tmp).map_err(io_err("write meta.json"))?;
            f.write_all(&meta.encode())
                .map_err(io_err("write meta.json"))?;
            f.sync_all().map_err(io_err("sync meta.json"))?;
        }
        fs::rename(&tmp, dir.join(META_FILE)).map_err(io_err("write meta.json"))?;
        let transcript = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(TRANSCRIPT_FILE))
            .map_err(io_err("open transcript"))?;
        sync_dir(&dir);
        Ok(SessionStore { dir, transcript })
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
        let unknown = || StoreError::UnknownSession {
            id: shown(session_id),
        };
        // A canonical UUID has no path separators or dots: nothing outside sessions/ is named.
        if !is_canonical_uuid(session_id) {
            return Err(unknown());
        }
        let dir = home.join(SESSIONS_DIR).join(session_id);
        let meta_bytes = match fs::read(dir.join(META_FILE)) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(unknown()),
            Err(e) => return Err(io_err("read meta.json")(e)),
        };
        let meta = SessionMeta::decode(&meta_bytes).map_err(|what| StoreError::Corrupt {
            id: shown(session_id),
            what,
        })?;
        if meta.session_id != session_id {
            return Err(StoreError::Corrupt {
                id: shown(session_id),
                what: "meta.json names another session",
            });
        }
        if current.check_resume(&meta.binding).is_err() {
            return Err(StoreError::ProviderMismatch {
                id: shown(session_id),
            });
        }
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
        if transcript.torn_bytes > 0 {
            // Cut the torn tail so the next append starts a fresh line.
            let keep = (bytes.len() - transcript.torn_bytes) as u64;
            file.set_len(keep).map_err(io_err("truncate torn line"))?;
            file.seek(SeekFrom::End(0))
                .map_err(io_err("truncate torn line"))?;
            file.sync_all().map_err(io_err("sync transcript"))?;
        }
        Ok((
            SessionStore {
                dir,
                transcript: file,
            },
            meta,
            transcript,
        ))
    }

    /// Appends complete frames (each ending in `\n`) and fsyncs: call once at the end of every
    /// turn (PROFILE §11). A frame without its LF is refused, so the store never tears a line
    /// itself.
    pub fn append(&mut self, frames: &[u8]) -> Result<(), StoreError> {
        if frames.is_empty() {
            return Ok(());
        }
        if frames.last() != Some(&b'\n') {
            return Err(StoreError::Io {
                op: "append an unterminated record",
                kind: io::ErrorKind::InvalidInput,
            });
        }
        self.transcript
            .write_all(frames)
            .map_err(io_err("append transcript"))?;
        self.transcript
            .sync_data()
            .map_err(io_err("sync transcript"))
    }

    /// The session's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Splits stored bytes into complete lines; a last line without its LF is torn and ignored.
pub fn split_transcript(bytes: &[u8]) -> Transcript {
    let complete = match memchr::memrchr(b'\n', bytes) {
        Some(i) => i + 1,
        None => 0,
    };
    let lines = bytes[..complete]
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    Transcript {
        lines,
        torn_bytes: bytes.len() - complete,
    }
}

/// Makes a new directory entry durable where the platform allows (best effort).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
