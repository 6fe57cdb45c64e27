//! What `Grep` keeps of its matches (PROFILE §17), bounded by what the result can show: each
//! walker thread fills its own [`Hits`] and they are merged at the end. Kept are the files that
//! give the first `offset + head_limit` output lines in the mode's order (`files_with_matches`
//! newest first, then by path; `content` and `count` by path), and in `content` mode at most
//! [`MAX_KEPT_BYTES`] of lines; every other match is counted, not kept. Must never: drop a
//! file whose lines the output shows within those bounds, or grow past them (pruning runs
//! whenever twice the bound is reached).

use std::cmp::Ordering;
use std::path::PathBuf;
use std::time::SystemTime;

use super::walk::path_order;
use super::GrepMode;

/// `content` lines kept, counted in path order from the first file: twice the largest output
/// line limit (PROFILE §15), so a `content` member that could still fit a record is kept
/// whole. Past it, lines are counted and `tool_use_result` omits `content`.
pub const MAX_KEPT_BYTES: usize = 2 * 8_388_608;

/// What one file gave.
pub struct Hit {
    /// The file.
    pub path: PathBuf,
    /// Its modification time (`files_with_matches` only; else the epoch).
    pub mtime: SystemTime,
    /// `content` mode: its output lines (context lines and `--` included).
    pub lines: Vec<String>,
    /// Its matching lines.
    pub count: u64,
}

impl Hit {
    fn bytes(&self) -> usize {
        self.lines.iter().map(|l| l.len() + 1).sum()
    }
}

/// The files kept and the counts of all.
pub struct Hits {
    mode: GrepMode,
    /// `content` with context lines: a `--` line between two files' groups.
    separated: bool,
    /// Output lines the result can show: `offset + head_limit` (no bound with no limit).
    need: usize,
    kept: Vec<Hit>,
    /// Output lines of `kept` (separators left out).
    kept_lines: usize,
    kept_bytes: usize,
    /// Matching files, all of them.
    pub files: u64,
    /// Matching lines of all files (`count`'s `numMatches`).
    pub matches: u64,
    /// `content` lines of all files (separators left out).
    lines: u64,
}

/// The output lines a result shows.
pub struct Window {
    /// Output lines from `offset`, at most `head_limit` (all when 0).
    pub lines: Vec<String>,
    /// Output lines in all, separators included.
    pub total: u64,
    /// Whether `lines` holds every line the window has (false only past [`MAX_KEPT_BYTES`]).
    pub complete: bool,
}

impl Hits {
    /// An empty set for `mode`, keeping what `offset` then `head_limit` can show.
    pub fn new(mode: GrepMode, separated: bool, offset: u64, head_limit: u64) -> Hits {
        let need = if head_limit == 0 {
            usize::MAX
        } else {
            usize::try_from(offset.saturating_add(head_limit)).unwrap_or(usize::MAX)
        };
        Hits {
            mode,
            separated,
            need,
            kept: Vec::new(),
            kept_lines: 0,
            kept_bytes: 0,
            files: 0,
            matches: 0,
            lines: 0,
        }
    }

    /// Adds one matching file.
    pub fn push(&mut self, hit: Hit) {
        self.files += 1;
        self.matches += hit.count;
        self.lines += hit.lines.len() as u64;
        self.add(hit);
        self.bound();
    }

    /// Takes in another thread's set (same mode and bounds).
    pub fn merge(&mut self, other: Hits) {
        self.files += other.files;
        self.matches += other.matches;
        self.lines += other.lines;
        for hit in other.kept {
            self.add(hit);
        }
        self.bound();
    }

    fn add(&mut self, hit: Hit) {
        self.kept_lines += self.lines_of(&hit);
        self.kept_bytes += hit.bytes();
        self.kept.push(hit);
    }

    fn lines_of(&self, hit: &Hit) -> usize {
        match self.mode {
            GrepMode::Content => hit.lines.len(),
            _ => 1,
        }
    }

    /// Prunes once twice a bound is reached, so pruning costs O(1) a file amortised.
    fn bound(&mut self) {
        if self.kept_lines / 2 >= self.need || self.kept_bytes / 2 >= MAX_KEPT_BYTES {
            self.prune();
        }
    }

    fn order(&self, a: &Hit, b: &Hit) -> Ordering {
        match self.mode {
            GrepMode::FilesWithMatches => b
                .mtime
                .cmp(&a.mtime)
                .then_with(|| path_order(&a.path, &b.path)),
            _ => path_order(&a.path, &b.path),
        }
    }

    /// Sorts the kept files and keeps the shortest prefix that gives `need` output lines or
    /// [`MAX_KEPT_BYTES`].
    fn prune(&mut self) {
        let mut kept = std::mem::take(&mut self.kept);
        kept.sort_by(|a, b| self.order(a, b));
        let (mut lines, mut bytes, mut end) = (0usize, 0usize, 0usize);
        for (i, hit) in kept.iter().enumerate() {
            if lines >= self.need || bytes >= MAX_KEPT_BYTES {
                break;
            }
            lines += self.lines_of(hit) + usize::from(self.separated && i > 0);
            bytes += hit.bytes();
            end = i + 1;
        }
        kept.truncate(end);
        self.kept_lines = kept.iter().map(|h| self.lines_of(h)).sum();
        self.kept_bytes = kept.iter().map(Hit::bytes).sum();
        self.kept = kept;
    }

    /// The output lines from `offset`, at most `head_limit` of them (0: all).
    pub fn window(mut self, offset: u64, head_limit: u64) -> Window {
        self.prune();
        let total = match self.mode {
            GrepMode::Content => {
                self.lines
                    + if self.separated {
                        self.files.saturating_sub(1)
                    } else {
                        0
                    }
            }
            _ => self.files,
        };
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let take = if head_limit == 0 {
            usize::MAX
        } else {
            usize::try_from(head_limit).unwrap_or(usize::MAX)
        };
        let mode = self.mode;
        let separated = self.separated;
        let mut out = self.kept.into_iter().enumerate().flat_map(|(i, hit)| {
            let sep = (separated && i > 0).then(|| "--".to_string());
            let lines: Vec<String> = match mode {
                GrepMode::Content => hit.lines,
                GrepMode::FilesWithMatches => vec![hit.path.to_string_lossy().into_owned()],
                GrepMode::Count => {
                    vec![format!("{}:{}", hit.path.to_string_lossy(), hit.count)]
                }
            };
            sep.into_iter().chain(lines)
        });
        let mut lines = Vec::new();
        let mut seen = 0usize;
        for line in out.by_ref() {
            seen += 1;
            if seen > skip {
                lines.push(line);
                if lines.len() >= take {
                    break;
                }
            }
        }
        let shown = total.saturating_sub(offset).min(take as u64);
        Window {
            complete: lines.len() as u64 == shown,
            lines,
            total,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(name: &str, line_bytes: usize) -> Hit {
        Hit {
            path: PathBuf::from(format!("/r/{name}")),
            mtime: SystemTime::UNIX_EPOCH,
            lines: vec!["a".repeat(line_bytes - 1)],
            count: 1,
        }
    }

    /// `content` lines are kept up to MAX_KEPT_BYTES in path order: at exactly the bound the
    /// window is complete; one file more is counted, not kept, and the window says so. Files
    /// pushed in reverse order keep the first paths.
    #[test]
    fn content_is_kept_up_to_max_kept_bytes_in_path_order() {
        let mib = 1 << 20;
        assert_eq!(MAX_KEPT_BYTES, 16 * mib);
        let mut at = Hits::new(GrepMode::Content, false, 0, 0);
        for k in (0..16).rev() {
            at.push(hit(&format!("f{k:02}"), mib));
        }
        let w = at.window(0, 0);
        assert!(w.complete);
        assert_eq!((w.total, w.lines.len()), (16, 16));
        let mut past = Hits::new(GrepMode::Content, false, 0, 0);
        for k in (0..40).rev() {
            past.push(hit(&format!("f{k:02}"), mib));
            assert!(
                past.kept_bytes <= 2 * MAX_KEPT_BYTES + mib,
                "bounded while pushing"
            );
        }
        assert_eq!(past.files, 40);
        let w = past.window(0, 0);
        assert!(!w.complete);
        assert_eq!((w.total, w.lines.len()), (40, 16));
    }

    /// `head_limit` bounds what is kept: twice `offset + head_limit` lines at most, and the
    /// window is the same slice the whole output gives.
    #[test]
    fn files_kept_are_bounded_by_offset_plus_head_limit() {
        let mut h = Hits::new(GrepMode::Count, false, 2, 3);
        for k in (0..100).rev() {
            h.push(hit(&format!("f{k:02}"), 2));
            assert!(h.kept.len() <= 10);
        }
        let w = h.window(2, 3);
        assert!(w.complete);
        assert_eq!(w.total, 100);
        assert_eq!(w.lines, ["/r/f02:1", "/r/f03:1", "/r/f04:1"]);
    }
}
