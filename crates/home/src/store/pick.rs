//! Choosing and copying stored sessions for the SDK profile's session options (PROFILE §15):
//! `--continue` (the most recently updated session of this home), `--fork-session` (a new
//! session id whose transcript starts as a copy of the original, which stays untouched) and
//! `--session-id UUID` (a new session with that id; an existing one is refused).
//!
//! Must never: write to the original of a fork (not even to cut its torn last line), name a
//! path outside `sessions/`, or print more than 64 bytes of an id.

use std::fs;
use std::io;
use std::path::Path;

use agentx_core::registry::ProviderBinding;
use agentx_wire::wire::grammar::is_canonical_uuid;

use super::{
    io_err, shown, split_transcript, stored_meta, SessionMeta, SessionStore, StoreError,
    Transcript, META_FILE, SESSIONS_DIR, TRANSCRIPT_FILE,
};

/// True when `sessions/<id>/` holds a session (its directory exists). A non-canonical id
/// names none.
pub fn exists(home: &Path, id: &str) -> bool {
    is_canonical_uuid(id) && home.join(SESSIONS_DIR).join(id).exists()
}

/// Removes the session `id` this process created (`--session-id`, `--fork-session`) when its
/// startup failed after the creation: the id stays free and `--continue` does not pick an
/// empty or copied session nobody ran. Best effort (a failure leaves what `exists` reports);
/// a non-canonical id names no directory and nothing is removed.
pub fn discard_new(home: &Path, id: &str) {
    if is_canonical_uuid(id) {
        let _ = fs::remove_dir_all(home.join(SESSIONS_DIR).join(id));
    }
}

/// `--continue`: the stored session updated last (its transcript's, else its `meta.json`'s,
/// modification time; the greater id breaks a tie), or `None` when the home has none.
/// Entries that are not canonical session ids or lack `meta.json` are skipped.
pub fn most_recent(home: &Path) -> Result<Option<String>, StoreError> {
    let dir = home.join(SESSIONS_DIR);
    let entries = match fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("list sessions")(e)),
    };
    let mut best: Option<(std::time::SystemTime, String)> = None;
    for entry in entries {
        let entry = entry.map_err(io_err("list sessions"))?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if !is_canonical_uuid(&name) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = fs::metadata(path.join(META_FILE)) else {
            continue;
        };
        let updated = fs::metadata(path.join(TRANSCRIPT_FILE))
            .and_then(|m| m.modified())
            .or_else(|_| meta.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        if best.as_ref().is_none_or(|b| (updated, &name) > (b.0, &b.1)) {
            best = Some((updated, name));
        }
    }
    Ok(best.map(|(_, name)| name))
}

/// Reads a stored session without changing it: the same checks as
/// [`SessionStore::resume`] (the id names a session; its binding equals `current`,
/// WIRE-025), and its complete transcript lines (a torn last line is ignored, not cut).
pub fn load(
    home: &Path,
    session_id: &str,
    current: &ProviderBinding,
) -> Result<(SessionMeta, Transcript), StoreError> {
    let (dir, meta_bytes) = stored_meta(home, session_id)?;
    let meta = SessionMeta::verify(&meta_bytes, session_id, current)?;
    let bytes = match fs::read(dir.join(TRANSCRIPT_FILE)) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err("read transcript")(e)),
    };
    Ok((meta, split_transcript(&bytes)))
}

impl SessionStore {
    /// `--fork-session`: the original `from` is read (and checked like a resume) but never
    /// written; a new session `new.session_id` is created whose transcript starts as a copy
    /// of the original's complete lines (written and fsynced before anything else happens).
    /// Returns the new store and the copied transcript (the model's prior context).
    pub fn fork(
        home: &Path,
        from: &str,
        new: &SessionMeta,
    ) -> Result<(SessionStore, Transcript), StoreError> {
        let (_, transcript) = load(home, from, &new.binding)?;
        let mut store = SessionStore::create_new(home, new)?;
        let mut copy = Vec::with_capacity(transcript.lines.iter().map(|l| l.len() + 1).sum());
        for line in &transcript.lines {
            copy.extend_from_slice(line);
            copy.push(b'\n');
        }
        if let Err(e) = store.append(&copy) {
            // A fork without its copy is no session: `--continue` would pick it (it is the
            // newest) and find an empty conversation. The directory is this call's own.
            let dir = store.dir().to_path_buf();
            drop(store);
            let _ = fs::remove_dir_all(dir);
            return Err(e);
        }
        Ok((store, transcript))
    }

    /// `--session-id UUID`: creates the new session `meta.session_id`, refused when it
    /// exists already (PROFILE §15), so a host cannot overwrite a stored conversation.
    /// The directory is claimed with one exclusive `mkdir`, so two processes given the same
    /// id cannot both create it.
    pub fn create_new(home: &Path, meta: &SessionMeta) -> Result<SessionStore, StoreError> {
        if !is_canonical_uuid(&meta.session_id) {
            return Err(StoreError::UnknownSession {
                id: shown(&meta.session_id),
            });
        }
        let sessions = home.join(SESSIONS_DIR);
        fs::create_dir_all(&sessions).map_err(io_err("create session directory"))?;
        match fs::create_dir(sessions.join(&meta.session_id)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(StoreError::Exists {
                    id: shown(&meta.session_id),
                })
            }
            Err(e) => return Err(io_err("create session directory")(e)),
        }
        SessionStore::create(home, meta).inspect_err(|_| {
            // The claim is undone (the directory is this call's own, and `meta.json` was
            // never written, so no other process opened it): the id stays free for a later
            // try once space returns, instead of being refused as existing.
            let _ = fs::remove_dir_all(sessions.join(&meta.session_id));
        })
    }
}
