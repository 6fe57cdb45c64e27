//! `FsBackend`: blobs and the manifest ledger as files under `<AgentX home>/blobs/`
//! (PROFILE §3).
//!
//! Layout: `blobs/blob_sha256_<hex>` per unique blob, `blobs/manifests.ndjson` with one
//! committed manifest per line. A blob is written to `blobs/.tmp-<hex>-<pid>-<n>`, fsynced and
//! renamed into place, then the directory is fsynced: a reader sees a complete blob or none.
//! A failed write removes its temporary file; temporaries left by a crash are swept when the
//! backend opens. A torn last manifest line (crash mid-append) is cut off at open. Never
//! writes outside the directory it was opened on; paths never leave this file (WIRE-022).

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::digest::Sha256Digest;
use super::reason::ReasonCode;
use super::store::{BlobBackend, Inventory};

const BLOB_PREFIX: &str = "blob_sha256_";
const TMP_PREFIX: &str = ".tmp-";
const MANIFESTS: &str = "manifests.ndjson";

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Blob files under one directory (`<home>/blobs`).
#[derive(Debug)]
pub struct FsBackend {
    dir: PathBuf,
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
        for entry in fs::read_dir(&dir).map_err(io_reason)? {
            let entry = entry.map_err(io_reason)?;
            if entry.file_name().to_string_lossy().starts_with(TMP_PREFIX) {
                let _ = fs::remove_file(entry.path());
            }
        }
        Ok(FsBackend { dir })
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

    fn sync_dir(&self) -> io::Result<()> {
        File::open(&self.dir)?.sync_all()
    }
}

impl BlobBackend for FsBackend {
    fn inventory(&mut self) -> Result<Inventory, ReasonCode> {
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
        let path = self.dir.join(MANIFESTS);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(inventory),
            Err(e) => return Err(io_reason(e)),
        };
        let mut reader = BufReader::new(file);
        let mut line = Vec::new();
        let mut complete_len = 0u64;
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line).map_err(io_reason)?;
            if n == 0 {
                break;
            }
            if line.last() != Some(&b'\n') {
                // Torn final append: cut it off so the next append starts a clean line.
                let f = OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(io_reason)?;
                f.set_len(complete_len).map_err(io_reason)?;
                f.sync_all().map_err(io_reason)?;
                break;
            }
            complete_len += n as u64;
            inventory
                .manifests
                .push(Sha256Digest::of(&line[..line.len() - 1]));
        }
        Ok(inventory)
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
        Ok(())
    }
}
