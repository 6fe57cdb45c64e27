//! The file walk `Glob` and `Grep` share (PROFILE §17), on ripgrep's `ignore` crate: the
//! `.gitignore`, `.ignore` and `.git/info/exclude` rules as ripgrep applies them, hidden files
//! included, `.git` never entered, symbolic links not followed; and the `--glob` pattern rule
//! (`globset`): a pattern without `/` matches a file's name at any depth, one with `/` its
//! path relative to the walk's root. Must never: return a directory, or a file the ignore
//! rules exclude.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};
use ignore::types::Types;
use ignore::WalkBuilder;

/// A compiled `Glob` pattern.
pub struct Pattern {
    glob: GlobMatcher,
    by_name: bool,
}

impl Pattern {
    /// Compiles `pattern`; the error is the text of an `is_error` result.
    pub fn new(pattern: &str) -> Result<Pattern, String> {
        let by_name = !pattern.contains('/');
        let text = pattern.strip_prefix('/').unwrap_or(pattern);
        let glob = GlobBuilder::new(text)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| format!("invalid glob pattern {pattern:?}: {}", e.kind()))?;
        Ok(Pattern {
            glob: glob.compile_matcher(),
            by_name,
        })
    }

    /// Whether the file at `path` (under `root`) matches.
    pub fn matches(&self, root: &Path, path: &Path) -> bool {
        if self.by_name {
            path.file_name().is_some_and(|n| self.glob.is_match(n))
        } else {
            path.strip_prefix(root)
                .is_ok_and(|rel| self.glob.is_match(rel))
        }
    }
}

/// ripgrep's type table narrowed to `name`; an unknown name is an error naming it.
pub fn file_type(name: &str) -> Result<Types, String> {
    let mut b = ignore::types::TypesBuilder::new();
    b.add_defaults();
    b.select(name);
    b.build().map_err(|_| format!("unknown file type {name:?}"))
}

/// The walk of `root` (a directory, or one file) with the ignore rules of PROFILE §17.
pub fn builder(root: &Path, types: Option<Types>) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.standard_filters(true)
        .hidden(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    if let Some(t) = types {
        b.types(t);
    }
    b
}

/// The files of the walk (no directories), each with its modification time.
pub fn files(root: &Path, pattern: Option<&Pattern>) -> Vec<(PathBuf, std::time::SystemTime)> {
    let mut out = Vec::new();
    for entry in builder(root, None).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if pattern.is_some_and(|p| !p.matches(root, entry.path())) {
            continue;
        }
        let mtime = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(std::time::UNIX_EPOCH);
        out.push((entry.into_path(), mtime));
    }
    out
}

/// Newest first, then by path ascending (PROFILE §17).
pub fn newest_first(files: &mut [(PathBuf, std::time::SystemTime)]) {
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}
