//! The content-addressed blob store and the durable manifest ledger (WIRE-018): unique blobs
//! keyed by the SHA-256 of the normalized bytes (`storage_id` = `blob_sha256_<hex>`),
//! deduplicated, bounded at 512 MiB (`storage_full`); committed manifests bounded at 100,000
//! (`manifest_store_full`); both counted again from the backend when reopened (restart).
//!
//! Owns the accounting and the reservation protocol: `reserve` claims a manifest slot and
//! the blob's bytes, and the returned `Reservation` is consumed by value by exactly one of
//! `commit` or `release`, so what was reserved is settled exactly once (scenario 23).
//! The bytes themselves go through the small `BlobBackend` trait: `FsBackend` under AgentX
//! home, `MemoryBackend` here for tests. Never exposes a path (WIRE-022).
//!
//! Reclamation (PROFILE §12): [`BlobStore::reclaim`] removes the committed blobs that were
//! last committed more than [`RECLAIM_AFTER_SECS`] before `now` and that no stored transcript
//! references. The store never reads a clock: `now` (Unix seconds) comes from the driver, and
//! the references from a callback the driver passes (it reads the transcripts). A commit that
//! reuses a stored blob (deduplication) checks under the lock that the blob is still there
//! (another process may have reclaimed it) and marks it committed again.

use std::collections::{HashMap, HashSet};

use super::digest::Sha256Digest;
use super::limits::Limits;
use super::reason::ReasonCode;
use crate::model::{BlobSource, BlobUnavailable};
use agentx_wire::wire::attachment_ref::AttachmentRef;

/// PROFILE §12: an unreferenced committed blob is kept this long after its last commit
/// (24 hours, in seconds); one second more and a start reclaims it.
pub const RECLAIM_AFTER_SECS: u64 = 24 * 60 * 60;

/// One stored blob as `BlobBackend::blob_times` lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredBlob {
    /// Its digest.
    pub digest: Sha256Digest,
    /// Its size in bytes.
    pub size: u64,
    /// The Unix second it was last committed.
    pub committed_at: u64,
}

/// What one [`BlobStore::reclaim`] removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reclaimed {
    /// Blobs removed.
    pub blobs: u64,
    /// Their bytes.
    pub bytes: u64,
}

/// What a backend holds when it is opened.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inventory {
    /// Every stored blob and its size.
    pub blobs: Vec<(Sha256Digest, u64)>,
    /// The SHA-256 of every committed manifest line.
    pub manifests: Vec<Sha256Digest>,
}

/// Where blobs and manifest lines live. Errors are reason codes (`storage_full` when the
/// medium is full, `process_failure` otherwise) and leave nothing half-written behind.
pub trait BlobBackend {
    /// Everything committed so far (called once, when the store opens).
    fn inventory(&mut self) -> Result<Inventory, ReasonCode>;
    /// Stores `bytes` under `digest` atomically: the blob is either absent or complete.
    fn write_blob(&mut self, digest: &Sha256Digest, bytes: &[u8]) -> Result<(), ReasonCode>;
    /// Removes a blob written by a commit that then failed.
    fn remove_blob(&mut self, digest: &Sha256Digest) -> Result<(), ReasonCode>;
    /// Durably appends one manifest line (canonical JSON, no newline).
    fn append_manifest(&mut self, line: &[u8]) -> Result<(), ReasonCode>;
    /// Takes the backend's inter-process lock for one commit and reports what other
    /// processes committed since `inventory` or the last `lock` (the default: a backend no
    /// other process shares, nothing new). Every write happens between `lock` and `unlock`.
    fn lock(&mut self) -> Result<Inventory, ReasonCode> {
        Ok(Inventory::default())
    }
    /// Releases the lock `lock` took.
    fn unlock(&mut self) {}
    /// Every stored blob with its size and the Unix second it was last committed (called
    /// under `lock`). The default, `None`, is a backend that keeps no commit times: nothing
    /// is ever reclaimed from it.
    fn blob_times(&mut self) -> Result<Option<Vec<StoredBlob>>, ReasonCode> {
        Ok(None)
    }
    /// A commit reuses the stored blob `digest` (deduplication, under `lock`): `false` when it
    /// is gone (reclaimed by another process), else it is marked committed now and `true`.
    fn keep_blob(&mut self, _digest: &Sha256Digest) -> Result<bool, ReasonCode> {
        Ok(true)
    }
}

/// A claim on a manifest slot and on the bytes of one blob, settled by value exactly once.
#[must_use = "a reservation must be committed or released"]
#[derive(Debug)]
pub struct Reservation {
    blob: Sha256Digest,
    size: u64,
    line: Vec<u8>,
    line_digest: Sha256Digest,
    /// Whether this reservation holds a reference on the pending-blob entry.
    holds_pending: bool,
    /// Whether this reservation holds a manifest slot.
    holds_slot: bool,
}

/// A claim on storage bytes for an upload still receiving its chunks: the declared raw size,
/// claimed at `begin` (WIRE-019) before the digest of what will be stored is known. Consumed
/// by value by `release_claim`, so it is settled exactly once.
#[must_use = "a byte claim must be released"]
#[derive(Debug, PartialEq, Eq)]
pub struct ByteClaim {
    size: u64,
}

impl ByteClaim {
    /// The bytes claimed.
    pub fn size(&self) -> u64 {
        self.size
    }
}

#[derive(Debug)]
struct PendingBlob {
    holders: u32,
    /// Bytes still counted in `reserved_bytes` for this blob (0 once written).
    reserved: u64,
}

/// The store: a backend plus the accounting that enforces the bounds.
pub struct BlobStore<B: BlobBackend> {
    backend: B,
    max_storage_bytes: u64,
    max_manifests: u64,
    blobs: HashMap<Sha256Digest, u64>,
    used_bytes: u64,
    pending: HashMap<Sha256Digest, PendingBlob>,
    reserved_bytes: u64,
    manifests: HashSet<Sha256Digest>,
    reserved_manifests: u64,
    claimed_bytes: u64,
}

impl<B: BlobBackend> BlobStore<B> {
    /// Opens the store over `backend`, counting what it already holds.
    pub fn open(mut backend: B, limits: &Limits) -> Result<BlobStore<B>, ReasonCode> {
        let inventory = backend.inventory()?;
        let mut blobs = HashMap::with_capacity(inventory.blobs.len());
        let mut used_bytes = 0u64;
        for (digest, size) in inventory.blobs {
            if blobs.insert(digest, size).is_none() {
                used_bytes = used_bytes.saturating_add(size);
            }
        }
        Ok(BlobStore {
            backend,
            max_storage_bytes: limits.max_storage_bytes,
            max_manifests: limits.max_manifests,
            blobs,
            used_bytes,
            pending: HashMap::new(),
            reserved_bytes: 0,
            manifests: inventory.manifests.into_iter().collect(),
            reserved_manifests: 0,
            claimed_bytes: 0,
        })
    }

    /// Bytes of unique committed blobs.
    pub fn used_bytes(&self) -> u64 {
        self.used_bytes
    }

    /// Bytes claimed by outstanding reservations for blobs not yet stored.
    pub fn reserved_bytes(&self) -> u64 {
        self.reserved_bytes
    }

    /// Bytes claimed by uploads still receiving chunks (`claim`).
    pub fn claimed_bytes(&self) -> u64 {
        self.claimed_bytes
    }

    /// Bytes stored, reserved and claimed: what the 512 MiB bound is checked against.
    fn committed_or_promised(&self) -> u64 {
        self.used_bytes
            .saturating_add(self.reserved_bytes)
            .saturating_add(self.claimed_bytes)
    }

    /// Claims `size` bytes of storage for an upload that has not yet delivered them
    /// (`storage_full` when stored + reserved + claimed bytes would pass the unique-blob
    /// bound; at the bound exactly is accepted).
    pub fn claim(&mut self, size: u64) -> Result<ByteClaim, ReasonCode> {
        if self.committed_or_promised().saturating_add(size) > self.max_storage_bytes {
            self.recount_blobs();
            if self.committed_or_promised().saturating_add(size) > self.max_storage_bytes {
                return Err(ReasonCode::StorageFull);
            }
        }
        self.claimed_bytes += size;
        Ok(ByteClaim { size })
    }

    /// Gives back a claim (at commit, before the normalized blob is reserved, or when the
    /// upload ends without a commit).
    pub fn release_claim(&mut self, claim: ByteClaim) {
        self.claimed_bytes -= claim.size;
    }

    /// Committed manifests.
    pub fn manifest_count(&self) -> u64 {
        self.manifests.len() as u64
    }

    /// Manifest slots claimed by outstanding reservations.
    pub fn reserved_manifests(&self) -> u64 {
        self.reserved_manifests
    }

    /// True when the blob with this digest is stored.
    pub fn contains_blob(&self, digest: &Sha256Digest) -> bool {
        self.blobs.contains_key(digest)
    }

    /// The backend (tests inspect it).
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// Mutable backend access (tests inject faults through it).
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Claims what committing `manifest` needs. A manifest already committed byte for byte
    /// needs no slot; a blob already stored, or already claimed by another reservation,
    /// needs no more bytes. `manifest_store_full` when no slot is left (100,000 by default),
    /// `storage_full` when the blob would pass the unique-blob bound (512 MiB).
    pub fn reserve(&mut self, manifest: &AttachmentRef) -> Result<Reservation, ReasonCode> {
        let blob = Sha256Digest::from_hex(&manifest.sha256).ok_or(ReasonCode::SchemaInvalid)?;
        let mut line = Vec::with_capacity(320);
        manifest.encode(&mut line);
        let line_digest = Sha256Digest::of(&line);
        let needs_slot = !self.manifests.contains(&line_digest);
        if needs_slot && self.manifest_count() + self.reserved_manifests + 1 > self.max_manifests {
            return Err(ReasonCode::ManifestStoreFull);
        }
        let size = manifest.size_bytes;
        let holds_pending = !self.blobs.contains_key(&blob);
        if holds_pending {
            if let Some(p) = self.pending.get_mut(&blob) {
                p.holders += 1;
            } else {
                if self.committed_or_promised().saturating_add(size) > self.max_storage_bytes {
                    self.recount_blobs();
                }
                let total = self.committed_or_promised().saturating_add(size);
                if total > self.max_storage_bytes {
                    return Err(ReasonCode::StorageFull);
                }
                self.reserved_bytes += size;
                self.pending.insert(
                    blob,
                    PendingBlob {
                        holders: 1,
                        reserved: size,
                    },
                );
            }
        }
        if needs_slot {
            self.reserved_manifests += 1;
        }
        Ok(Reservation {
            blob,
            size,
            line,
            line_digest,
            holds_pending,
            holds_slot: needs_slot,
        })
    }

    /// Counts what another process sharing the backend committed (under its lock).
    fn absorb(&mut self, delta: Inventory) {
        for (digest, size) in delta.blobs {
            if self.blobs.insert(digest, size).is_none() {
                self.used_bytes = self.used_bytes.saturating_add(size);
                if let Some(p) = self.pending.get_mut(&digest) {
                    self.reserved_bytes -= p.reserved;
                    p.reserved = 0;
                }
            }
        }
        self.manifests.extend(delta.manifests);
    }

    /// Settles `reservation` by storing `bytes` (whose SHA-256 and length must be the
    /// manifest's) and appending the manifest line durably, under the backend's
    /// inter-process lock: what other processes committed meanwhile is counted first and the
    /// bounds are checked again against it, so two processes sharing one AgentX home never
    /// pass them together or count one blob twice. On failure everything this commit wrote is
    /// removed and the reservation is released.
    pub fn commit(&mut self, reservation: Reservation, bytes: &[u8]) -> Result<(), ReasonCode> {
        if bytes.len() as u64 != reservation.size || Sha256Digest::of(bytes) != reservation.blob {
            self.release(reservation);
            return Err(ReasonCode::ProcessFailure);
        }
        let delta = match self.backend.lock() {
            Ok(delta) => delta,
            Err(e) => {
                self.release(reservation);
                return Err(e);
            }
        };
        self.absorb(delta);
        let result = self.commit_locked(reservation, bytes);
        self.backend.unlock();
        result
    }

    fn commit_locked(&mut self, reservation: Reservation, bytes: &[u8]) -> Result<(), ReasonCode> {
        // PROFILE §12: a blob counted as stored may have been reclaimed by another process
        // since; reusing it checks that it is still there (and marks it committed now).
        if let Some(&size) = self.blobs.get(&reservation.blob) {
            match self.backend.keep_blob(&reservation.blob) {
                Ok(true) => {}
                Ok(false) => {
                    self.blobs.remove(&reservation.blob);
                    self.used_bytes -= size;
                }
                Err(e) => {
                    self.release(reservation);
                    return Err(e);
                }
            }
        }
        // The bounds again, against what every process has stored (WIRE-018).
        if !self.manifests.contains(&reservation.line_digest)
            && self.manifest_count() + 1 > self.max_manifests
        {
            self.release(reservation);
            return Err(ReasonCode::ManifestStoreFull);
        }
        if !self.blobs.contains_key(&reservation.blob)
            && self.used_bytes.saturating_add(reservation.size) > self.max_storage_bytes
        {
            self.release(reservation);
            return Err(ReasonCode::StorageFull);
        }
        let mut wrote_blob = false;
        if !self.blobs.contains_key(&reservation.blob) {
            if let Err(e) = self.backend.write_blob(&reservation.blob, bytes) {
                self.release(reservation);
                return Err(e);
            }
            wrote_blob = true;
            self.blobs.insert(reservation.blob, reservation.size);
            self.used_bytes = self.used_bytes.saturating_add(reservation.size);
            if let Some(p) = self.pending.get_mut(&reservation.blob) {
                self.reserved_bytes -= p.reserved;
                p.reserved = 0;
            }
        }
        if !self.manifests.contains(&reservation.line_digest) {
            if let Err(e) = self.backend.append_manifest(&reservation.line) {
                if wrote_blob && self.backend.remove_blob(&reservation.blob).is_ok() {
                    self.blobs.remove(&reservation.blob);
                    self.used_bytes -= reservation.size;
                    // Other holders of the pending entry still need these bytes claimed.
                    if let Some(p) = self.pending.get_mut(&reservation.blob) {
                        p.reserved = reservation.size;
                        self.reserved_bytes += reservation.size;
                    }
                }
                self.release(reservation);
                return Err(e);
            }
            self.manifests.insert(reservation.line_digest);
        }
        self.release(reservation);
        Ok(())
    }

    /// PROFILE §12: removes every stored blob last committed more than
    /// [`RECLAIM_AFTER_SECS`] before `now` (Unix seconds: at the limit exactly it is kept)
    /// that `referenced` does not name and no outstanding reservation of this store holds,
    /// under the backend's lock. `referenced` is called only when some blob is old enough;
    /// it returns the digests the stored transcripts reference, or `None` when it cannot tell
    /// (then nothing is removed: a referenced blob is never reclaimed).
    pub fn reclaim(
        &mut self,
        now: u64,
        referenced: impl FnOnce() -> Option<HashSet<Sha256Digest>>,
    ) -> Result<Reclaimed, ReasonCode> {
        let delta = self.backend.lock()?;
        self.absorb(delta);
        let result = self.reclaim_locked(now, referenced);
        self.backend.unlock();
        result
    }

    fn reclaim_locked(
        &mut self,
        now: u64,
        referenced: impl FnOnce() -> Option<HashSet<Sha256Digest>>,
    ) -> Result<Reclaimed, ReasonCode> {
        let Some(listed) = self.backend.blob_times()? else {
            return Ok(Reclaimed::default());
        };
        let old: Vec<(Sha256Digest, u64)> = listed
            .into_iter()
            .filter(|b| {
                now.saturating_sub(b.committed_at) > RECLAIM_AFTER_SECS
                    && !self.pending.contains_key(&b.digest)
            })
            .map(|b| (b.digest, b.size))
            .collect();
        let mut done = Reclaimed::default();
        if old.is_empty() {
            return Ok(done);
        }
        let Some(referenced) = referenced() else {
            return Ok(done);
        };
        for (digest, size) in old {
            if referenced.contains(&digest) {
                continue;
            }
            self.backend.remove_blob(&digest)?;
            if let Some(counted) = self.blobs.remove(&digest) {
                self.used_bytes -= counted;
            }
            done.blobs += 1;
            done.bytes += size;
        }
        Ok(done)
    }

    /// Counts the stored blobs again from the backend (a bound that looks reached may have
    /// room again: another process reclaimed blobs, PROFILE §12). Best effort: on a backend
    /// error, or one that keeps no commit times, the counts stay as they were.
    fn recount_blobs(&mut self) {
        let Ok(delta) = self.backend.lock() else {
            return;
        };
        self.absorb(delta);
        let listed = self.backend.blob_times();
        self.backend.unlock();
        let Ok(Some(listed)) = listed else {
            return;
        };
        self.blobs.clear();
        self.used_bytes = 0;
        for b in listed {
            if self.blobs.insert(b.digest, b.size).is_none() {
                self.used_bytes = self.used_bytes.saturating_add(b.size);
            }
        }
        for (digest, p) in &mut self.pending {
            if self.blobs.contains_key(digest) && p.reserved > 0 {
                self.reserved_bytes -= p.reserved;
                p.reserved = 0;
            }
        }
    }

    /// Gives back everything `reservation` claimed, without storing anything.
    pub fn release(&mut self, reservation: Reservation) {
        if reservation.holds_pending {
            if let Some(p) = self.pending.get_mut(&reservation.blob) {
                p.holders -= 1;
                if p.holders == 0 {
                    self.reserved_bytes -= p.reserved;
                    self.pending.remove(&reservation.blob);
                }
            }
        }
        // The line is committed now or never: the slot's claim ends either way.
        if reservation.holds_slot {
            self.reserved_manifests -= 1;
        }
    }
}

/// The in-memory twin of `FsBackend`, for tests. Clone it to model a restart (the clone is
/// what survived); set the fault flags to make the next write or append fail; set `now` to
/// the Unix second its writes happen at (its clock is the test's).
#[derive(Clone, Debug, Default)]
pub struct MemoryBackend {
    /// Stored blobs by digest.
    pub blobs: HashMap<Sha256Digest, Vec<u8>>,
    /// The Unix second each stored blob was last committed (what a file's mtime is to
    /// `FsBackend`).
    pub committed_at: HashMap<Sha256Digest, u64>,
    /// The Unix second that a write or a reuse now records.
    pub now: u64,
    /// The manifest ledger's lines, in order.
    pub manifest_lines: Vec<Vec<u8>>,
    /// Make the next blob write fail.
    pub fail_next_write: bool,
    /// Make the next manifest append fail.
    pub fail_next_append: bool,
}

impl BlobBackend for MemoryBackend {
    fn inventory(&mut self) -> Result<Inventory, ReasonCode> {
        Ok(Inventory {
            blobs: self
                .blobs
                .iter()
                .map(|(d, b)| (*d, b.len() as u64))
                .collect(),
            manifests: self
                .manifest_lines
                .iter()
                .map(|l| Sha256Digest::of(l))
                .collect(),
        })
    }

    fn write_blob(&mut self, digest: &Sha256Digest, bytes: &[u8]) -> Result<(), ReasonCode> {
        if std::mem::take(&mut self.fail_next_write) {
            return Err(ReasonCode::ProcessFailure);
        }
        self.blobs.insert(*digest, bytes.to_vec());
        self.committed_at.insert(*digest, self.now);
        Ok(())
    }

    fn remove_blob(&mut self, digest: &Sha256Digest) -> Result<(), ReasonCode> {
        self.blobs.remove(digest);
        self.committed_at.remove(digest);
        Ok(())
    }

    fn blob_times(&mut self) -> Result<Option<Vec<StoredBlob>>, ReasonCode> {
        Ok(Some(
            self.blobs
                .iter()
                .map(|(d, b)| StoredBlob {
                    digest: *d,
                    size: b.len() as u64,
                    committed_at: self.committed_at.get(d).copied().unwrap_or(0),
                })
                .collect(),
        ))
    }

    fn keep_blob(&mut self, digest: &Sha256Digest) -> Result<bool, ReasonCode> {
        if !self.blobs.contains_key(digest) {
            return Ok(false);
        }
        self.committed_at.insert(*digest, self.now);
        Ok(true)
    }

    fn append_manifest(&mut self, line: &[u8]) -> Result<(), ReasonCode> {
        if std::mem::take(&mut self.fail_next_append) {
            return Err(ReasonCode::ProcessFailure);
        }
        self.manifest_lines.push(line.to_vec());
        Ok(())
    }
}

/// The read side for model requests (PROFILE §14), like `FsBlobs` over the files.
impl BlobSource for MemoryBackend {
    fn read_blob(
        &self,
        storage_id: &str,
        limit: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BlobUnavailable> {
        let digest = Sha256Digest::from_storage_id(storage_id).ok_or(BlobUnavailable)?;
        let bytes = self.blobs.get(&digest).ok_or(BlobUnavailable)?;
        let end = usize::try_from(limit.saturating_add(1))
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        // Pieces of a size that is not a multiple of 3, so readers handle any piece size.
        for piece in bytes[..end].chunks(64 * 1024 + 1) {
            sink(piece);
        }
        Ok(())
    }
}
