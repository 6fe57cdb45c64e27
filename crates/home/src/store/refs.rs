//! The blobs the stored transcripts reference (PROFILE §12): what `attach::BlobStore::reclaim`
//! must never remove.
//!
//! Owns one scan: every `sessions/*/transcript.ndjson` under AgentX home is read line by line
//! and every `blob_sha256_<64 lowercase hex>` in it is collected (an `attachment_ref`'s
//! `storage_id`, PROFILE §11 keeps every accepted prompt in its replay form). The scan errs on
//! the side of keeping: the same spelling inside a prompt's text counts as a reference too,
//! and a transcript that cannot be read makes the whole answer unknown (`Err`), so the caller
//! reclaims nothing. It never writes, and never holds more than one line of a transcript.

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::{self, BufRead as _, BufReader};
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
    let mut line = Vec::new();
    for entry in dir {
        let path = entry?.path().join(TRANSCRIPT_FILE);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let mut reader = BufReader::new(file);
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            scan_line(&line, &mut found);
        }
    }
    Ok(found)
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
}
