//! `agentx-wire attach [--home DIR] [--mime TYPE] [--name NAME] FILE` (PROFILE §2).
//!
//! Admits one file through the same pipeline as a stream import (limits, MIME claim and
//! magic, normalization, the blob store under AgentX home) and prints the committed
//! manifest, the WIRE-017 `attachment_ref` block, as one JSON line on stdout. A rejection
//! prints `agentx-wire: attachment rejected: <reason code>` on stderr and exits 1; a usage
//! error exits 2. Without `--mime` the type comes from the magic bytes; without `--name` the
//! name is the file's last path component (never the path: WIRE-022), cut to 255 bytes.
//! The attachment ID is `admit::derive_attachment_id` of the normalized digest and the name.
//!
//! Owns reading the file (at most one byte past the item limit) and
//! resolving AgentX home (`--home`, else `$AGENTX_HOME`, else `$HOME/.agentx`, PROFILE §3).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use agentx_core::attach::limits::MAX_DISPLAY_NAME_BYTES;
use agentx_core::attach::{admit_file, BlobStore, Limits, ReasonCode};
use agentx_home::FsBackend;

use super::wire_args::AttachArgs;

fn truncate(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// AgentX home: `$AGENTX_HOME`, else `$HOME/.agentx` (PROFILE §3).
fn default_home() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("AGENTX_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(h));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".agentx"))
}

/// The default display name: the last path component, at most 255 bytes.
fn default_name(file: &Path) -> String {
    let base = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let clean: String = base.chars().filter(|c| !c.is_control()).collect();
    let name = truncate(&clean, MAX_DISPLAY_NAME_BYTES).to_owned();
    if name.is_empty() {
        "attachment".to_owned()
    } else {
        name
    }
}

fn reject(code: ReasonCode) -> i32 {
    eprintln!("agentx-wire: attachment rejected: {}", code.as_str());
    1
}

/// Runs `agentx-wire attach` with its parsed arguments; returns the exit status.
pub fn run(args: AttachArgs) -> i32 {
    let limits = Limits::default();
    let Some(home) = args.home.clone().or_else(default_home) else {
        eprintln!("agentx-wire: attach: no AgentX home (set --home, AGENTX_HOME or HOME)");
        return 1;
    };
    let mut raw = Vec::new();
    let read = std::fs::File::open(&args.file)
        .and_then(|f| f.take(limits.max_item_bytes + 1).read_to_end(&mut raw));
    if let Err(e) = read {
        eprintln!("agentx-wire: attach: cannot read FILE: {}", e.kind());
        return 1;
    }
    if raw.len() as u64 > limits.max_item_bytes {
        return reject(ReasonCode::ItemTooLarge);
    }
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| default_name(&args.file));
    let backend = match FsBackend::open(&home) {
        Ok(b) => b,
        Err(code) => return reject(code),
    };
    let mut store = match BlobStore::open(backend, &limits) {
        Ok(s) => s,
        Err(code) => return reject(code),
    };
    let manifest = match admit_file(&mut store, &raw, args.mime.as_deref(), &name, None, &limits) {
        Ok(m) => m,
        Err(code) => return reject(code),
    };
    let mut line = Vec::with_capacity(384);
    manifest.encode(&mut line);
    line.push(b'\n');
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&line).and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_name_is_the_base_name_only() {
        assert_eq!(default_name(Path::new("/secret/dir/shot.png")), "shot.png");
        let long = format!("/x/{}.png", "é".repeat(200));
        let n = default_name(Path::new(&long));
        assert!(n.len() <= 255 && n.starts_with('é'));
    }
}
