//! The blobs the stored transcripts reference (PROFILE §12): what `attach::BlobStore::reclaim`
//! must never remove.
//!
//! Owns one scan: every `sessions/*/transcript.ndjson` under AgentX home is read line by line
//! and every `blob_sha256_<64 lowercase hex>` in it is collected (an `attachment_ref`'s
//! `storage_id`, PROFILE §11 keeps every accepted prompt in its replay form). The scan errs on
//! the side of keeping: the same spelling inside a prompt's text counts as a reference too,
//! and a transcript that cannot be read makes the whole answer unknown (`Err`), so the caller
//! reclaims nothing. It never writes, and reads each transcript as a stream of 64 KiB chunks
//! (a reference split across two chunks is still found), so no line of any length is held.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, Read as _};
use std::path::Path;

use super::{SESSIONS_DIR, TRANSCRIPT_FILE};
use agentx_core::attach::Sha256Digest;

const STORAGE_PREFIX: &[u8] = b"blob_sha256_";

/// Every blob digest that a stored transcript under `home` names. A home without sessions
/// references nothing; a session directory without a transcript (being created) neither.
pub fn blob_references(home: &Path) -> io::Result<HashSet<Sha256Digest>> {
    let mut found = HashSet::new();
    let dir = match fs::read_dir(home.join(SESSIONS_DIR)) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(found),
        Err(e) => return Err(e),
    };
    let mut window = Vec::with_capacity(CHUNK + REFERENCE_LEN);
    for entry in dir {
        let path = entry?.path().join(TRANSCRIPT_FILE);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        scan_stream(file, &mut window, &mut found)?;
    }
    Ok(found)
}

/// Bytes read from a transcript at a time.
const CHUNK: usize = 64 * 1024;

/// `blob_sha256_` and 64 hex digits.
const REFERENCE_LEN: usize = STORAGE_PREFIX.len() + 64;

/// Scans `file` chunk by chunk: each chunk is scanned after the last `REFERENCE_LEN - 1` bytes
/// of the one before, so a reference that straddles two reads is seen whole (one seen twice is
/// one set entry).
fn scan_stream(
    mut file: File,
    window: &mut Vec<u8>,
    found: &mut HashSet<Sha256Digest>,
) -> io::Result<()> {
    window.clear();
    loop {
        let kept = window.len();
        window.resize(kept + CHUNK, 0);
        let n = loop {
            match file.read(&mut window[kept..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        window.truncate(kept + n);
        if n == 0 {
            return Ok(());
        }
        scan_line(window, found);
        let carry = window.len().saturating_sub(REFERENCE_LEN - 1);
        window.drain(..carry);
    }
}

/// Adds every `blob_sha256_<64 lowercase hex>` of `bytes` to `found`.
pub fn scan_line(bytes: &[u8], found: &mut HashSet<Sha256Digest>) {
    let mut rest = bytes;
    while let Some(at) = find(rest, STORAGE_PREFIX) {
        let hex_start = at + STORAGE_PREFIX.len();
        let digest = rest
            .get(hex_start..hex_start + 64)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(Sha256Digest::from_hex)
            .filter(|d| d.storage_id().as_bytes() == &rest[at..hex_start + 64]);
        if let Some(d) = digest {
            found.insert(d);
        }
        rest = &rest[hex_start..];
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_canonical_storage_ids_only() {
        let a = Sha256Digest::of(b"a");
        let b = Sha256Digest::of(b"b");
        let line = format!(
            "{{\"storage_id\":\"{}\"}} x blob_sha256_{} {}",
            a.storage_id(),
            b.to_hex().to_uppercase(),
            &b.storage_id()[..40]
        );
        let mut found = HashSet::new();
        scan_line(line.as_bytes(), &mut found);
        assert_eq!(found, HashSet::from([a]));
    }

    /// A reference at every offset around a chunk boundary, and a 9 MiB line (longer than
    /// any line agentx writes) with references at its start, middle and end: all are found,
    /// and the scan holds one chunk and a carry.
    #[test]
    fn references_across_chunk_boundaries_and_in_a_long_line_are_found() {
        let path = std::env::temp_dir().join(format!("agentx-refs-{}", std::process::id()));
        let digests: Vec<Sha256Digest> = (0..=REFERENCE_LEN + 1)
            .map(|k| Sha256Digest::of(&k.to_le_bytes()))
            .collect();
        for (k, d) in digests.iter().enumerate() {
            let mut bytes = vec![b'x'; CHUNK + 1 - k];
            bytes.extend_from_slice(d.storage_id().as_bytes());
            bytes.extend_from_slice(b"\n");
            std::fs::write(&path, &bytes).unwrap();
            let mut window = Vec::new();
            let mut found = HashSet::new();
            scan_stream(File::open(&path).unwrap(), &mut window, &mut found).unwrap();
            assert_eq!(found, HashSet::from([*d]), "reference at {}", CHUNK + 1 - k);
            assert!(window.capacity() <= 2 * (CHUNK + REFERENCE_LEN));
        }
        let ends = [digests[0], digests[1], digests[2]];
        let mut line = ends[0].storage_id().as_bytes().to_vec();
        line.resize(9 << 20, b'y');
        line.extend_from_slice(ends[1].storage_id().as_bytes());
        line.resize(18 << 20, b'z');
        line.extend_from_slice(ends[2].storage_id().as_bytes());
        std::fs::write(&path, &line).unwrap();
        let mut window = Vec::new();
        let mut found = HashSet::new();
        scan_stream(File::open(&path).unwrap(), &mut window, &mut found).unwrap();
        assert_eq!(found, HashSet::from(ends));
        assert!(window.capacity() <= 2 * (CHUNK + REFERENCE_LEN));
        let _ = std::fs::remove_file(&path);
    }
}
