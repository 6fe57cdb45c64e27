//! The file walk `Glob` and `Grep` share (PROFILE §17), on ripgrep's `ignore` crate: the
//! `.gitignore`, `.ignore` and `.git/info/exclude` rules as ripgrep applies them, hidden files
//! included, `.git` never entered, symbolic links not followed; and the `--glob` pattern rule
//! (`globset`): a pattern without `/` matches a file's name at any depth, one with `/` its
//! path relative to the walk's root. Must never: return a directory, or a file the ignore
//! rules exclude.

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
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
            // `strip_prefix` on the bytes: the walk's paths are `root` then `/` and names.
            let (path, root) = (path.as_os_str().as_bytes(), root.as_os_str().as_bytes());
            path.strip_prefix(root).is_some_and(|rel| {
                let rel = rel.strip_prefix(b"/").unwrap_or(rel);
                self.glob.is_match(Path::new(OsStr::from_bytes(rel)))
            })
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

type Found = Vec<(PathBuf, std::time::SystemTime)>;

/// Files found so far: at most twice `keep` of them (pruning keeps the `keep` newest), and the
/// count of all.
struct Newest {
    keep: usize,
    files: Found,
    total: usize,
    /// After a pruning, the oldest time kept: an older file cannot be among the `keep` newest.
    cutoff: Option<std::time::SystemTime>,
}

impl Newest {
    fn new(keep: usize) -> Newest {
        Newest {
            keep,
            files: Vec::new(),
            total: 0,
            cutoff: None,
        }
    }

    /// Counts a file with time `mtime`; true when it may be among the `keep` newest (then it
    /// is to be [`Newest::push`]ed).
    fn count(&mut self, mtime: std::time::SystemTime) -> bool {
        self.total += 1;
        self.cutoff.is_none_or(|c| mtime >= c)
    }

    fn push(&mut self, file: (PathBuf, std::time::SystemTime)) {
        self.files.push(file);
        self.bound();
    }

    fn bound(&mut self) {
        if self.files.len() / 2 >= self.keep.max(1) {
            newest_first(&mut self.files);
            self.files.truncate(self.keep);
            self.cutoff = self.files.last().map(|f| f.1);
        }
    }
}

/// One walker thread's finds, handed to the shared set when the thread's visitor is dropped.
struct Batch<'a> {
    local: Newest,
    all: &'a std::sync::Mutex<Newest>,
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if let Ok(mut all) = self.all.lock() {
            all.total += self.local.total;
            all.files.append(&mut self.local.files);
            all.bound();
        }
    }
}

/// The `keep` newest files of the walk (no directories; [`newest_first`]), each with its
/// modification time, and the count of all that matched. The walk runs on ripgrep's parallel
/// walker; no more than twice `keep` files a thread are held at once.
pub fn files(root: &Path, pattern: Option<&Pattern>, keep: usize) -> (Found, usize) {
    let all = std::sync::Mutex::new(Newest::new(keep));
    builder(root, None).build_parallel().run(|| {
        let mut batch = Batch {
            local: Newest::new(keep),
            all: &all,
        };
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return ignore::WalkState::Continue;
            };
            if entry.file_type().is_some_and(|t| t.is_file())
                && pattern.is_none_or(|p| p.matches(root, entry.path()))
            {
                let mtime = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(std::time::UNIX_EPOCH);
                if batch.local.count(mtime) {
                    batch.local.push((entry.into_path(), mtime));
                }
            }
            ignore::WalkState::Continue
        })
    });
    let mut all = match all.into_inner() {
        Ok(all) => all,
        Err(poisoned) => poisoned.into_inner(),
    };
    newest_first(&mut all.files);
    all.files.truncate(keep);
    (all.files, all.total)
}

/// Newest first, then by path ascending (PROFILE §17).
pub fn newest_first(files: &mut [(PathBuf, std::time::SystemTime)]) {
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| path_order(&a.0, &b.0)));
}

/// `Path`'s order (component by component) for the walk's paths, computed on their bytes: in
/// a path without `.` components, repeated or trailing `/` (as the walk makes them from a
/// normalised root), comparing the bytes with `/` below every other byte is the same order.
pub fn path_order(a: &Path, b: &Path) -> Ordering {
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    let at = a.iter().zip(b).position(|(x, y)| x != y);
    let at = at.unwrap_or(a.len().min(b.len()));
    let key = |c: Option<&u8>| c.map(|&c| if c == b'/' { 0 } else { u16::from(c) + 1 });
    key(a.get(at)).cmp(&key(b.get(at)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte order agrees with `Path`'s where a separator meets a byte below or above it.
    #[test]
    fn path_order_is_paths_order() {
        let paths = [
            "/r/a",
            "/r/a/b",
            "/r/a-b",
            "/r/a.b",
            "/r/a0",
            "/r/ab",
            "/r/a/b/c",
            "/r/a b",
            "/r/A",
            "/r/\u{e9}",
            "/r/a/-",
            "/r/a/.x",
            "/r/b",
            "/r/a/b-c",
            "/r/a/b/-",
        ];
        for a in paths {
            for b in paths {
                let (a, b) = (Path::new(a), Path::new(b));
                assert_eq!(path_order(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }
}
