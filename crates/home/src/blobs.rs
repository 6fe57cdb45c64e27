//! `FsBackend`: blobs and the manifest ledger as files under `<AgentX home>/blobs/`
//! (PROFILE §3).
//!
//! Layout: `blobs/blob_sha256_<hex>` per unique blob, `blobs/manifests.ndjson` with one
//! committed manifest per line. A blob is written to `blobs/.tmp-<hex>-<pid>-<n>`, fsynced and
//! renamed into place, then the directory is fsynced: a reader sees a complete blob or none.
//! A failed write removes its temporary file; temporaries left by a crash are swept when the
//! backend opens. A torn last manifest line (crash mid-append) is cut off at open. The
//! directory is fsynced after `manifests.ndjson` is created, so the ledger's directory entry
//! is as durable as its first line. Never writes outside the directory it was opened on;
//! paths never leave this file (WIRE-022).
//!
//! Several processes may share one AgentX home: every sweep, inventory and commit runs under
//! an exclusive `flock`-style lock on `blobs/.lock` (`std::fs::File::lock`), and `lock`
//! reports the manifest lines other processes appended since this one last read the ledger
//! (it remembers the byte offset it has read up to), with their blobs' sizes, so the store
//! counts them before it checks its bounds. The sweep only removes temporaries under the
//! lock, when no other process can be writing one.
//!
//! Reclamation (PROFILE §12): a blob's commit time is its file's modification time. A blob is
//! written once (so its mtime is its commit); a commit that reuses it (deduplication) sets the
//! mtime to now under the lock, after checking that it is still there. `blob_times` lists the
//! blobs with those times for `BlobStore::reclaim`, which decides; this file only reports
//! and removes.
//!
//! [`FsBlobs`] is the read side the model interface uses ([`BlobSource`], PROFILE §14): a
//! committed blob is a complete file that is renamed into place and never rewritten, so it is
//! read without the lock, in pieces, and only under a name rebuilt from a parsed digest (a
//! `storage_id` is never joined to a path as given).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read as _, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use agentx_core::attach::digest::BLOB_PREFIX;
use agentx_core::attach::limits::MAX_MANIFESTS;
use agentx_core::attach::store::Inventory;
use agentx_core::attach::{BlobBackend, ReasonCode, Sha256Digest, StoredBlob};
use agentx_core::model::{BlobSource, BlobUnavailable};

const TMP_PREFIX: &str = ".tmp-";
const MANIFESTS: &str = "manifests.ndjson";
const LOCK: &str = ".lock";
/// The longest manifest line read back (LF excluded): agentx writes none longer than an output
/// line.
const MAX_MANIFEST_LINE: usize = agentx_wire::frame::DEFAULT_MAX_LINE;

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Blob files under one directory (`<home>/blobs`).
#[derive(Debug)]
pub struct FsBackend {
    dir: PathBuf,
    /// `blobs/.lock`, held exclusively while this process sweeps, reads or commits.
    lock: File,
    /// Bytes of `manifests.ndjson` already counted (complete lines only).
    read_to: u64,
}

#[cold]
fn io_reason(e: io::Error) -> ReasonCode {
    match e.kind() {
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded => ReasonCode::StorageFull,
        _ => ReasonCode::ProcessFailure,
    }
}

impl FsBackend {
    /// Opens (creating if needed) `<home>/blobs` and sweeps stale temporaries.
    pub fn open(home: &Path) -> Result<FsBackend, ReasonCode> {
        let dir = home.join("blobs");
        fs::create_dir_all(&dir).map_err(io_reason)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(LOCK))
            .map_err(io_reason)?;
        let backend = FsBackend {
            dir,
            lock,
            read_to: 0,
        };
        backend.lock.lock().map_err(io_reason)?;
        let swept = backend.sweep();
        let _ = backend.lock.unlock();
        swept?;
        Ok(backend)
    }

    /// Removes temporaries left by a crash (under the lock: no process is writing one).
    fn sweep(&self) -> Result<(), ReasonCode> {
        for entry in fs::read_dir(&self.dir).map_err(io_reason)? {
            let entry = entry.map_err(io_reason)?;
            if entry.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(())
    }

    /// Reads the manifest lines appended after `read_to`: their digests, and the size of
    /// each one's blob (the last member of a canonical line is
    /// `"storage_id":"blob_sha256_<hex>"`). A torn last line (a crash mid-append) is cut
    /// off; the caller holds the lock.
    fn read_new_manifests(
        &mut self,
        inventory: &mut Inventory,
        with_blobs: bool,
    ) -> io::Result<()> {
        let path = self.dir.join(MANIFESTS);
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let len = file.metadata()?.len();
        if len <= self.read_to {
            return Ok(());
        }
        file.seek(SeekFrom::Start(self.read_to))?;
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        let mut complete = self.read_to;
        loop {
            line.clear();
            let n = (&mut reader)
                .take(MAX_MANIFEST_LINE as u64 + 2)
                .read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            let body_len = n - usize::from(line.last() == Some(&b'\n'));
            if body_len > MAX_MANIFEST_LINE || inventory.manifests.len() >= MAX_MANIFESTS as usize {
                // Not a ledger this store wrote (its lines fit one output line, and it stops
                // at 100,000 manifests): refuse it rather than hold it.
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "manifests.ndjson is not a ledger agentx wrote",
                ));
            }
            if line.last() != Some(&b'\n') {
                // Torn final append: cut it off so the next append starts a clean line.
                let f = OpenOptions::new().write(true).open(&path)?;
                f.set_len(complete)?;
                f.sync_all()?;
                break;
            }
            complete += n as u64;
            let body = &line[..line.len() - 1];
            inventory.manifests.push(Sha256Digest::of(body));
            if with_blobs {
                if let Some(digest) = manifest_blob(body) {
                    if let Ok(meta) = fs::metadata(self.blob_path(&digest)) {
                        inventory.blobs.push((digest, meta.len()));
                    }
                }
            }
        }
        self.read_to = complete;
        Ok(())
    }

    fn blob_path(&self, digest: &Sha256Digest) -> PathBuf {
        self.dir.join(digest.storage_id())
    }

    /// Temporary files currently present (tests assert there are none).
    pub fn temporaries(&self) -> usize {
        fs::read_dir(&self.dir)
            .map(|it| {
                it.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().starts_with(TMP_PREFIX))
                    .count()
            })
            .unwrap_or(0)
    }

    fn inventory_locked(&mut self) -> Result<Inventory, ReasonCode> {
        let mut inventory = Inventory::default();
        for entry in fs::read_dir(&self.dir).map_err(io_reason)? {
            let entry = entry.map_err(io_reason)?;
            let name = entry.file_name();
            let Some(hex) = name.to_str().and_then(|n| n.strip_prefix(BLOB_PREFIX)) else {
                continue;
            };
            let Some(digest) = Sha256Digest::from_hex(hex) else {
                continue;
            };
            let meta = entry.metadata().map_err(io_reason)?;
            if meta.is_file() {
                inventory.blobs.push((digest, meta.len()));
            }
        }
        self.read_to = 0;
        self.read_new_manifests(&mut inventory, false)
            .map_err(io_reason)?;
        Ok(inventory)
    }

    fn blob_times_locked(&self) -> io::Result<Vec<StoredBlob>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(&self.dir)? {
            let entry = entry?;
            let name = entry.file_name();
            let Some(hex) = name.to_str().and_then(|n| n.strip_prefix(BLOB_PREFIX)) else {
                continue;
            };
            let Some(digest) = Sha256Digest::from_hex(hex) else {
                continue;
            };
            let meta = match entry.metadata() {
                Ok(m) => m,
                // Removed meanwhile (a reader holds no lock): not a blob any more.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            if !meta.is_file() {
                continue;
            }
            // A time before 1970 counts as 0: old, never "in the future".
            let at = meta
                .modified()?
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            out.push(StoredBlob {
                digest,
                size: meta.len(),
                committed_at: at,
            });
        }
        Ok(out)
    }

    fn sync_dir(&self) -> io::Result<()> {
        File::open(&self.dir)?.sync_all()
    }
}

impl BlobBackend for FsBackend {
    fn inventory(&mut self) -> Result<Inventory, ReasonCode> {
        self.lock.lock().map_err(io_reason)?;
        let result = self.inventory_locked();
        let _ = self.lock.unlock();
        result
    }

    fn lock(&mut self) -> Result<Inventory, ReasonCode> {
        self.lock.lock().map_err(io_reason)?;
        let mut delta = Inventory::default();
        if let Err(e) = self.read_new_manifests(&mut delta, true) {
            let _ = self.lock.unlock();
            return Err(io_reason(e));
        }
        Ok(delta)
    }

    fn unlock(&mut self) {
        let _ = self.lock.unlock();
    }

    fn blob_times(&mut self) -> Result<Option<Vec<StoredBlob>>, ReasonCode> {
        self.blob_times_locked().map(Some).map_err(io_reason)
    }

    fn keep_blob(&mut self, digest: &Sha256Digest) -> Result<bool, ReasonCode> {
        let file = match OpenOptions::new().write(true).open(self.blob_path(digest)) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io_reason(e)),
        };
        // The reuse is a commit: its time restarts the 24 hours (PROFILE §12).
        file.set_modified(SystemTime::now()).map_err(io_reason)?;
        Ok(true)
    }

    fn write_blob(&mut self, digest: &Sha256Digest, bytes: &[u8]) -> Result<(), ReasonCode> {
        let tmp = self.dir.join(format!(
            "{TMP_PREFIX}{}-{}-{}",
            digest.to_hex(),
            std::process::id(),
            TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| -> io::Result<()> {
            let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            drop(f);
            fs::rename(&tmp, self.blob_path(digest))?;
            self.sync_dir()
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(io_reason(e));
        }
        Ok(())
    }

    fn remove_blob(&mut self, digest: &Sha256Digest) -> Result<(), ReasonCode> {
        fs::remove_file(self.blob_path(digest)).map_err(io_reason)?;
        self.sync_dir().map_err(io_reason)
    }

    fn append_manifest(&mut self, line: &[u8]) -> Result<(), ReasonCode> {
        let path = self.dir.join(MANIFESTS);
        let created = !path.exists();
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_reason)?;
        let before = f.metadata().map_err(io_reason)?.len();
        let mut record = Vec::with_capacity(line.len() + 1);
        record.extend_from_slice(line);
        record.push(b'\n');
        if let Err(e) = f.write_all(&record).and_then(|()| f.sync_data()) {
            // Leave no partial line behind.
            let _ = f.set_len(before);
            return Err(io_reason(e));
        }
        if created {
            // The new ledger's directory entry must be as durable as its first line.
            self.sync_dir().map_err(io_reason)?;
        }
        if before == self.read_to {
            // Our own line: counted by the store already (the caller holds the lock).
            self.read_to = before + record.len() as u64;
        }
        Ok(())
    }
}

/// The blob digest of a canonical manifest line: its last member is
/// `"storage_id":"blob_sha256_<64 hex>"` (WIRE-017 order).
fn manifest_blob(line: &[u8]) -> Option<Sha256Digest> {
    let body = line.strip_suffix(b"\"}")?;
    let hex = body.get(body.len().checked_sub(64)?..)?;
    let prefix = body.get(..body.len() - 64)?;
    if !prefix.ends_with(b"\"storage_id\":\"blob_sha256_") {
        return None;
    }
    Sha256Digest::from_hex(std::str::from_utf8(hex).ok()?)
}

/// The size of one read of [`FsBlobs`]: a multiple of 3, so base64 pieces need no carry.
const READ_PIECE: usize = 3 << 18;

/// Committed blobs under `<home>/blobs`, read for model requests (PROFILE §14).
#[derive(Clone)]
pub struct FsBlobs {
    dir: PathBuf,
}

impl std::fmt::Debug for FsBlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The path stays private (WIRE-022).
        f.debug_struct("FsBlobs").finish_non_exhaustive()
    }
}

impl FsBlobs {
    /// The blobs of the AgentX home `home` (nothing is opened until a blob is read).
    pub fn new(home: &Path) -> FsBlobs {
        FsBlobs {
            dir: home.join("blobs"),
        }
    }
}

impl BlobSource for FsBlobs {
    fn read_blob(
        &self,
        storage_id: &str,
        limit: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BlobUnavailable> {
        let digest = Sha256Digest::from_storage_id(storage_id).ok_or(BlobUnavailable)?;
        let file = File::open(self.dir.join(digest.storage_id())).map_err(|_| BlobUnavailable)?;
        let mut reader = io::Read::take(file, limit.saturating_add(1));
        let mut piece = vec![0u8; READ_PIECE];
        loop {
            // Fill the piece completely (short reads happen) so pieces stay multiples of 3.
            let mut filled = 0;
            while filled < piece.len() {
                match io::Read::read(&mut reader, &mut piece[filled..]) {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return Err(BlobUnavailable),
                }
            }
            if filled > 0 {
                sink(&piece[..filled]);
            }
            if filled < piece.len() {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A home under the temporary directory, removed on drop.
    struct Home(PathBuf);

    impl Home {
        fn new(name: &str) -> Home {
            let dir =
                std::env::temp_dir().join(format!("agentx-blobs-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            Home(dir)
        }
        fn ledger(&self, bytes: &[u8]) -> FsBackend {
            let backend = FsBackend::open(&self.0).unwrap();
            fs::write(self.0.join("blobs").join(MANIFESTS), bytes).unwrap();
            backend
        }
    }

    impl Drop for Home {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes())
            .collect()
    }

    #[test]
    fn a_ledger_of_100_000_manifests_is_read_and_one_more_is_refused() {
        let home = Home::new("count");
        let mut at = home.ledger(&lines(MAX_MANIFESTS as usize));
        assert_eq!(at.inventory().unwrap().manifests.len(), 100_000);
        let mut over = home.ledger(&lines(MAX_MANIFESTS as usize + 1));
        assert_eq!(over.inventory().unwrap_err(), ReasonCode::ProcessFailure);
    }

    #[test]
    fn a_manifest_line_of_the_line_limit_is_read_and_one_byte_more_is_refused() {
        let home = Home::new("line");
        let mut line = vec![b'm'; MAX_MANIFEST_LINE];
        line.push(b'\n');
        let mut at = home.ledger(&line);
        assert_eq!(at.inventory().unwrap().manifests.len(), 1);
        line.insert(0, b'm');
        let mut over = home.ledger(&line);
        assert_eq!(over.inventory().unwrap_err(), ReasonCode::ProcessFailure);
    }
}
