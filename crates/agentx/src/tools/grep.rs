//! `Grep` (PROFILE §17): ripgrep's search on ripgrep's libraries. The walk is `Glob`'s
//! ([`walk`]), run in parallel; `grep-regex` compiles the pattern (ripgrep's default engine)
//! and `grep-searcher` searches each file (binary files skipped, context lines, multiline).
//! Each walker thread keeps only what the result can show ([`super::grep_hits`]).
//! The three output modes, `offset` then `head_limit`, and the 30,000-byte cap with `Bash`'s
//! marker; `tool_use_result` `{mode, numFiles, filenames, content?, numLines?, numMatches?,
//! appliedLimit?, appliedOffset?}`. Must never print a file the walk ignores or a binary one.

use std::path::Path;
use std::sync::Mutex;

use agentx_core::session::ToolOutcome;
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::WalkState;

use super::fsx::{absolute, failed, succeeded};
use super::grep_hits::{Hit, Hits, Window};
use super::result_json::Obj;
use super::walk::{self, Pattern};
use super::{GrepInput, GrepMode, GREP_OUTPUT_CAP};

/// One walker thread's hits, merged into the shared set when the thread's visitor is dropped.
struct Batch<'a> {
    local: Option<Hits>,
    all: &'a Mutex<Hits>,
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if let (Some(local), Ok(mut all)) = (self.local.take(), self.all.lock()) {
            all.merge(local);
        }
    }
}

/// Runs the search.
pub fn grep(cwd: &Path, input: &GrepInput) -> ToolOutcome {
    let root = absolute(cwd, input.path.as_deref().unwrap_or("."));
    let meta = match std::fs::metadata(&root) {
        Ok(m) => m,
        Err(_) => return failed(format!("{} does not exist", root.display())),
    };
    let types = match input.file_type.as_deref().map(walk::file_type).transpose() {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let glob = match input.glob.as_deref().map(Pattern::new).transpose() {
        Ok(g) => g,
        Err(e) => return failed(e),
    };
    let matcher = match matcher(input) {
        Ok(m) => m,
        Err(e) => return failed(e),
    };
    let content = input.output_mode == GrepMode::Content;
    let context = content && (input.before > 0 || input.after > 0);
    let mut searcher = SearcherBuilder::new();
    // As ripgrep: lines are counted only when the output shows their numbers.
    searcher
        .binary_detection(BinaryDetection::quit(0))
        .line_number(content && input.line_numbers)
        .multi_line(input.multiline)
        .before_context(if content { input.before as usize } else { 0 })
        .after_context(if content { input.after as usize } else { 0 });
    let new_hits = || Hits::new(input.output_mode, context, input.offset, input.head_limit);
    let search_one = |searcher: &mut Searcher, path: &Path, hits: &mut Hits| {
        let mut sink = FileSink {
            input,
            matcher: &matcher,
            path,
            shown: None,
            lines: Vec::new(),
            count: 0,
            binary: false,
        };
        // Opened here (as `search_path` would) so that a match's mtime is an `fstat`.
        let Ok(file) = std::fs::File::open(path) else {
            return;
        };
        if searcher.search_file(&matcher, &file, &mut sink).is_err() || sink.binary {
            return;
        }
        if sink.count == 0 {
            return;
        }
        let mtime = if input.output_mode == GrepMode::FilesWithMatches {
            file.metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH)
        } else {
            std::time::UNIX_EPOCH
        };
        hits.push(Hit {
            path: path.to_path_buf(),
            mtime,
            lines: sink.lines,
            count: sink.count,
        });
    };
    let hits = if meta.is_file() {
        // A `path` naming one file: searched (unless binary) in the same formats.
        let mut hits = new_hits();
        search_one(&mut searcher.build(), &root, &mut hits);
        hits
    } else {
        let all = Mutex::new(new_hits());
        walk::builder(&root, types).build_parallel().run(|| {
            let mut s = searcher.build();
            let mut batch = Batch {
                local: Some(new_hits()),
                all: &all,
            };
            let (root, glob, search_one) = (&root, &glob, &search_one);
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_file())
                    && glob.as_ref().is_none_or(|g| g.matches(root, entry.path()))
                {
                    if let Some(hits) = batch.local.as_mut() {
                        search_one(&mut s, entry.path(), hits);
                    }
                }
                WalkState::Continue
            })
        });
        match all.into_inner() {
            Ok(hits) => hits,
            Err(poisoned) => poisoned.into_inner(),
        }
    };
    finish(input, hits)
}

/// `offset`, `head_limit`, the empty texts, the cap, and `tool_use_result`.
fn finish(input: &GrepInput, hits: Hits) -> ToolOutcome {
    let (files, matches) = (hits.files, hits.matches);
    let Window {
        lines: kept,
        total,
        complete,
    } = hits.window(input.offset, input.head_limit);
    let shown = total.saturating_sub(input.offset);
    let limited = input.head_limit > 0 && shown > input.head_limit;
    let shown = if limited { input.head_limit } else { shown };
    let mut text = if total == 0 {
        match input.output_mode {
            GrepMode::FilesWithMatches => "No files found".to_string(),
            _ => "No matches found".to_string(),
        }
    } else {
        kept.join("\n")
    };
    if limited {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!(
            "(results limited to {} lines; use offset to see more)",
            input.head_limit
        ));
    }
    let text = cap(text);
    let mode = input.output_mode;
    let form = |content: Option<&str>| {
        let mut o = Obj::new().str("mode", mode.as_str());
        o = match mode {
            GrepMode::FilesWithMatches => o
                .num("numFiles", kept.len() as u64)
                .strs("filenames", kept.iter().map(String::as_str)),
            _ => o
                .num("numFiles", files)
                .strs("filenames", std::iter::empty())
                .opt_str("content", content),
        };
        o = match mode {
            GrepMode::Content => o.num("numLines", shown),
            GrepMode::Count => o.num("numMatches", matches),
            GrepMode::FilesWithMatches => o,
        };
        if limited {
            o = o.num("appliedLimit", input.head_limit);
        }
        if input.offset > 0 {
            o = o.num("appliedOffset", input.offset);
        }
        o.end()
    };
    if complete {
        let body = kept.join("\n");
        succeeded(text, [form(Some(&body)), form(None)])
    } else {
        // Past MAX_KEPT_BYTES the whole `content` is not known: the member is left out.
        succeeded(text, [form(None)])
    }
}

/// The text cut at [`GREP_OUTPUT_CAP`] bytes with `Bash`'s marker after the cut.
fn cap(mut text: String) -> String {
    if text.len() <= GREP_OUTPUT_CAP {
        return text;
    }
    let mut end = GREP_OUTPUT_CAP;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("[output truncated at {GREP_OUTPUT_CAP} bytes]"));
    text
}

/// The pattern compiled as ripgrep compiles it: line-oriented unless `multiline` (then `.`
/// matches `\n` too, `rg -U --multiline-dotall`).
fn matcher(input: &GrepInput) -> Result<RegexMatcher, String> {
    let mut b = RegexMatcherBuilder::new();
    b.case_insensitive(input.case_insensitive);
    if input.multiline {
        b.multi_line(true).dot_matches_new_line(true);
    } else {
        b.line_terminator(Some(b'\n'));
    }
    b.build(&input.pattern)
        .map_err(|e| format!("invalid regular expression: {e}"))
}

/// Collects one file's output.
struct FileSink<'a> {
    input: &'a GrepInput,
    matcher: &'a RegexMatcher,
    path: &'a Path,
    /// The path as printed, made at the first line.
    shown: Option<String>,
    lines: Vec<String>,
    count: u64,
    binary: bool,
}

impl FileSink<'_> {
    fn line(&mut self, sep: char, number: Option<u64>, text: &[u8]) {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = String::from_utf8_lossy(text);
        let path = self.path;
        let shown = self
            .shown
            .get_or_insert_with(|| path.to_string_lossy().into_owned());
        self.lines.push(match (self.input.line_numbers, number) {
            (true, Some(n)) => format!("{shown}{sep}{n}{sep}{text}"),
            _ => format!("{shown}{sep}{text}"),
        });
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.count += 1;
        match self.input.output_mode {
            // One match is enough to list the file.
            GrepMode::FilesWithMatches => return Ok(false),
            GrepMode::Count => return Ok(true),
            GrepMode::Content => {}
        }
        let first = mat.line_number();
        for (i, line) in mat.lines().enumerate() {
            let n = first.map(|f| f + i as u64);
            if self.input.only_matching {
                let mut parts = Vec::new();
                let _ = self.matcher.find_iter(line, |m| {
                    if !m.is_empty() {
                        parts.push(line[m].to_vec());
                    }
                    true
                });
                for p in parts {
                    self.line(':', n, &p);
                }
            } else {
                self.line(':', n, line);
            }
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, std::io::Error> {
        if matches!(ctx.kind(), SinkContextKind::Other) {
            return Ok(true);
        }
        self.line('-', ctx.line_number(), ctx.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, std::io::Error> {
        self.lines.push("--".into());
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, std::io::Error> {
        // PROFILE §17: binary files are skipped, whatever matched before the NUL.
        self.binary = true;
        Ok(false)
    }
}
