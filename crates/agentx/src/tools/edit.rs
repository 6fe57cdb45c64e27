//! `Edit {file_path, old_string, new_string, replace_all?}` (PROFILE §17): a targeted
//! replacement in a UTF-8 text file this process read and that has not changed since
//! ([`Ledger`]), or the creation of a new file (an empty `old_string`). Every other byte of
//! the file stays as it was, line endings included; the write is atomic and keeps the file's
//! permissions. Must never write when the replacement is ambiguous or the file is stale.

use std::path::Path;

use agentx_core::session::ToolOutcome;

use super::fsx::{absolute, failed, io_reason, numbered, succeeded, write_atomic};
use super::patch::structured_patch;
use super::result_json::Obj;
use super::seen::Ledger;
use super::{EDIT_CONTEXT_LINES, EDIT_MAX_SHOWN_LINES};

/// One `Edit` call's input.
pub struct EditInput<'a> {
    /// As given (absolute or relative to the cwd).
    pub file_path: &'a str,
    /// The text to replace.
    pub old_string: &'a str,
    /// The replacement.
    pub new_string: &'a str,
    /// Replace every occurrence.
    pub replace_all: bool,
}

/// Runs the edit.
pub fn edit(cwd: &Path, ledger: &Ledger, input: &EditInput<'_>) -> ToolOutcome {
    let path = absolute(cwd, input.file_path);
    let shown = path.display();
    let _serial = ledger.lock_writes();
    let (old, new) = (input.old_string, input.new_string);
    if old == new {
        return failed("old_string and new_string are the same".into());
    }
    let bytes = match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return failed(format!("cannot edit {shown}: {}", io_reason(&e))),
    };
    let Some(bytes) = bytes else {
        if !old.is_empty() {
            return failed(format!("cannot edit {shown}: not found"));
        }
        // An empty `old_string` creates the file (no read needed).
        if let Err(e) = write_atomic(&path, new.as_bytes()) {
            return failed(format!("cannot write {shown}: {}", io_reason(&e)));
        }
        ledger.record(&path, new.as_bytes());
        let spans = [(0, new.len())];
        return done(&path, input, "", new, 1, &spans);
    };
    if let Err(stale) = ledger.check(&path, &bytes) {
        return failed(stale.message(&path));
    }
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return failed(format!("cannot edit {shown}: not UTF-8 text"));
    };
    if old.is_empty() {
        return failed("old_string is empty".into());
    }
    let count = text.matches(old).count();
    if count == 0 {
        return failed(format!("old_string not found in {shown}"));
    }
    if count > 1 && !input.replace_all {
        return failed(format!(
            "old_string occurs {count} times in {shown}; add context to make it unique or set replace_all"
        ));
    }
    // The new text, and where each replacement landed in it.
    let mut updated = String::with_capacity(text.len() + count * new.len());
    let mut spans = Vec::with_capacity(count);
    let mut last = 0;
    for (at, _) in text.match_indices(old) {
        updated.push_str(&text[last..at]);
        spans.push((updated.len(), updated.len() + new.len()));
        updated.push_str(new);
        last = at + old.len();
    }
    updated.push_str(&text[last..]);
    if let Err(e) = write_atomic(&path, updated.as_bytes()) {
        return failed(format!("cannot write {shown}: {}", io_reason(&e)));
    }
    ledger.record(&path, updated.as_bytes());
    done(&path, input, text, &updated, count, &spans)
}

/// The text result and the `tool_use_result` forms of a successful edit.
fn done(
    path: &Path,
    input: &EditInput<'_>,
    original: &str,
    updated: &str,
    count: usize,
    spans: &[(usize, usize)],
) -> ToolOutcome {
    let noun = if count == 1 {
        "replacement"
    } else {
        "replacements"
    };
    let mut text = format!("edited {}: {count} {noun}\n", path.display());
    region(&mut text, updated, spans);
    let patch = structured_patch(original, updated);
    let file_path = path.to_string_lossy();
    let form = |original: Option<&str>| {
        Obj::new()
            .str("filePath", &file_path)
            .str("oldString", input.old_string)
            .str("newString", input.new_string)
            .opt_str("originalFile", original)
            .raw("structuredPatch", &patch)
            .bool("userModified", false)
            .bool("replaceAll", input.replace_all)
            .end()
    };
    succeeded(text, [form(Some(original)), form(None)])
}

/// Appends the changed region of `updated` in `Read`'s numbered form: from
/// [`EDIT_CONTEXT_LINES`] lines before the first line a replacement touched to as many after
/// the last, cut to its first [`EDIT_MAX_SHOWN_LINES`] lines.
fn region(out: &mut String, updated: &str, spans: &[(usize, usize)]) {
    let (Some(first), Some(last)) = (spans.first(), spans.last()) else {
        return;
    };
    // 0-based line index of a byte offset.
    let line_of = |at: usize| {
        updated.as_bytes()[..at.min(updated.len())]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
    };
    let first_line = line_of(first.0);
    // The last line the replacement's text reaches (its own line when it is empty).
    let last_line = line_of(if last.1 > last.0 { last.1 - 1 } else { last.0 });
    let from = first_line.saturating_sub(EDIT_CONTEXT_LINES);
    let to = last_line + EDIT_CONTEXT_LINES;
    for (i, line) in updated
        .split_inclusive('\n')
        .enumerate()
        .skip(from)
        .take((to - from + 1).min(EDIT_MAX_SHOWN_LINES))
    {
        numbered(out, i as u64 + 1, line);
    }
}
