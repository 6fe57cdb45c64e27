//! File helpers the file tools share: the absolute path every text names (PROFILE §17), the
//! stable short reason of an I/O error, the atomic replace that keeps a file's permissions,
//! and the failed outcome whose `tool_use_result` is its error text. Must never follow a
//! permission decision it was not given, or leave a temporary file behind on success.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use agentx_core::session::ToolOutcome;

use super::result_json;

/// `path` resolved against `cwd` and made absolute, `.` and `..` removed lexically.
pub fn absolute(cwd: &Path, path: &str) -> PathBuf {
    let joined = super::resolve(cwd, path);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A short, stable reason (never the OS message with its locale and paths).
pub fn io_reason(e: &std::io::Error) -> &'static str {
    use std::io::ErrorKind::*;
    match e.kind() {
        NotFound => "not found",
        PermissionDenied => "permission denied",
        IsADirectory => "is a directory",
        NotADirectory => "not a directory",
        AlreadyExists => "already exists",
        _ => "I/O error",
    }
}

/// A failed built-in call: `is_error`, and its `tool_use_result` is exactly the error text
/// (PROFILE §17).
pub fn failed(text: String) -> ToolOutcome {
    let mut out = ToolOutcome::error(text);
    out.tool_use_result = result_json::forms([result_json::string(&out.content)]);
    out
}

/// A successful built-in call with its `tool_use_result` forms, fullest first.
pub fn succeeded(text: String, forms: impl IntoIterator<Item = String>) -> ToolOutcome {
    let mut out = ToolOutcome::ok(text);
    out.tool_use_result = result_json::forms(forms);
    out
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Replaces (or creates) `path` atomically: a temporary file in the same directory, written
/// and synced, given the old file's permissions when there was one, then renamed over it.
/// A symbolic link is written through: its target is replaced, the link stays.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => path.to_path_buf(),
        Err(e) => return Err(e),
    };
    let dir = target.parent().unwrap_or(Path::new("/"));
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let old_perms = std::fs::metadata(&target).ok().map(|m| m.permissions());
    if std::fs::metadata(&target).is_ok_and(|m| m.is_dir()) {
        return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory));
    }
    let tmp = dir.join(format!(
        ".{name}.agentx-{}-{}.tmp",
        std::process::id(),
        TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        if let Some(p) = old_perms {
            f.set_permissions(p)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The lines of `text` split after each `\n` (a final newline starts no line), as
/// PROFILE §17's `totalLines` counts them.
pub fn line_count(text: &str) -> u64 {
    text.split_inclusive('\n').count() as u64
}

/// One line in `Read`'s numbered form: the number right-aligned in 6 columns, a tab, the
/// line without its `\n` or `\r\n`.
pub fn numbered(out: &mut String, n: u64, line: &str) {
    use std::fmt::Write as _;
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    let _ = writeln!(out, "{n:>6}\t{line}");
}

/// The canonical form of an absolute `path` (PROFILE §17 "inside"): symbolic links of its
/// longest existing prefix resolved, the missing rest kept as written (a file not yet created
/// is judged by its directory).
pub fn canonical(path: &str) -> String {
    let mut existing = Path::new(path);
    let mut rest = Vec::new();
    loop {
        if let Ok(mut real) = std::fs::canonicalize(existing) {
            for part in rest.iter().rev() {
                real.push(part);
            }
            return real.to_string_lossy().into_owned();
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_string(),
        }
    }
}
