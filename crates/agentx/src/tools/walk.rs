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

type Found = Vec<(PathBuf, std::time::SystemTime)>;

/// Files found so far: at most twice `keep` of them (pruning keeps the `keep` newest), and the
/// count of all.
struct Newest {
    keep: usize,
    files: Found,
    total: usize,
}

impl Newest {
    fn push(&mut self, file: (PathBuf, std::time::SystemTime)) {
        self.total += 1;
        self.files.push(file);
        self.bound();
    }

    fn bound(&mut self) {
        if self.files.len() / 2 >= self.keep.max(1) {
            newest_first(&mut self.files);
            self.files.truncate(self.keep);
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
    let all = std::sync::Mutex::new(Newest {
        keep,
        files: Vec::new(),
        total: 0,
    });
    builder(root, None).build_parallel().run(|| {
        let mut batch = Batch {
            local: Newest {
                keep,
                files: Vec::new(),
                total: 0,
            },
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
                batch.local.push((entry.into_path(), mtime));
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
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
}
