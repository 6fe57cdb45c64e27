//! The blob store as `agentx` opens it (PROFILE §12): the filesystem backend under AgentX
//! home, then reclamation of the committed blobs that no stored transcript references and that
//! were last committed more than 24 hours ago.
//!
//! Owns the clock and the transcript scan the sans-IO `attach::BlobStore::reclaim` must not
//! touch: `now` is read here, the references come from `store::blob_references`. Must never
//! remove a blob itself (the store decides) or make a failed reclamation fatal: the store
//! still opens, with one stderr line.

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use agentx_core::attach::{BlobStore, Limits, ReasonCode};
use agentx_home::FsBackend;

/// Opens the blob store of `home` and reclaims what PROFILE §12 allows.
pub fn open_and_reclaim(home: &Path, limits: &Limits) -> Result<BlobStore<FsBackend>, ReasonCode> {
    let mut store = BlobStore::open(FsBackend::open(home)?, limits)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    if let Err(code) = store.reclaim(now, || agentx_home::store::blob_references(home).ok()) {
        eprintln!("agentx: attachment store: reclamation failed: {code}");
    }
    Ok(store)
}
