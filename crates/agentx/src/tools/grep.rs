//! `Grep` (PROFILE §17): ripgrep's search on ripgrep's libraries. The walk is `Glob`'s
//! ([`walk`]), run in parallel; `grep-regex` compiles the pattern (ripgrep's default engine)
//! and `grep-searcher` searches each file (binary files skipped, context lines, multiline).
//! The three output modes, `offset` then `head_limit`, and the 30,000-byte cap with `Bash`'s
//! marker; `tool_use_result` `{mode, numFiles, filenames, content?, numLines?, numMatches?,
//! appliedLimit?, appliedOffset?}`. Must never print a file the walk ignores or a binary one.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use agentx_core::session::ToolOutcome;
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::WalkState;

use super::fsx::{absolute, failed, succeeded};
use super::result_json::Obj;
use super::walk::{self, Pattern};
use super::{GrepInput, GrepMode, GREP_OUTPUT_CAP};

/// What one file gave.
struct Hit {
    path: PathBuf,
    mtime: SystemTime,
    /// `content` mode: its output lines (context lines and `--` included).
    lines: Vec<String>,
    /// Matching lines.
    count: u64,
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
    searcher
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .multi_line(input.multiline)
        .before_context(if content { input.before as usize } else { 0 })
        .after_context(if content { input.after as usize } else { 0 });
    let hits = Mutex::new(Vec::new());
    let search_one = |searcher: &mut Searcher, path: &Path| {
        let mut sink = FileSink {
            input,
            matcher: &matcher,
            shown: path.to_string_lossy().into_owned(),
            lines: Vec::new(),
            count: 0,
            binary: false,
        };
        if searcher.search_path(&matcher, path, &mut sink).is_err() || sink.binary {
            return;
        }
        if sink.count == 0 {
            return;
        }
        let mtime = if input.output_mode == GrepMode::FilesWithMatches {
            std::fs::metadata(path)
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH)
        } else {
            std::time::UNIX_EPOCH
        };
        if let Ok(mut h) = hits.lock() {
            h.push(Hit {
                path: path.to_path_buf(),
                mtime,
                lines: sink.lines,
                count: sink.count,
            });
        }
    };
    if meta.is_file() {
        // A `path` naming one file: searched (unless binary) in the same formats.
        search_one(&mut searcher.build(), &root);
    } else {
        walk::builder(&root, types).build_parallel().run(|| {
            let mut s = searcher.build();
            let (root, glob, search_one) = (&root, &glob, &search_one);
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_file())
                    && glob.as_ref().is_none_or(|g| g.matches(root, entry.path()))
                {
                    search_one(&mut s, entry.path());
                }
                WalkState::Continue
            })
        });
    }
    let mut hits = hits.into_inner().unwrap_or_default();
    let mut lines: Vec<String> = Vec::new();
    match input.output_mode {
        GrepMode::FilesWithMatches => {
            hits.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)));
            lines.extend(hits.iter().map(|h| h.path.to_string_lossy().into_owned()));
        }
        GrepMode::Content => {
            hits.sort_by(|a, b| a.path.cmp(&b.path));
            for (i, h) in hits.iter_mut().enumerate() {
                if context && i > 0 {
                    lines.push("--".into());
                }
                lines.append(&mut h.lines);
            }
        }
        GrepMode::Count => {
            hits.sort_by(|a, b| a.path.cmp(&b.path));
            lines.extend(
                hits.iter()
                    .map(|h| format!("{}:{}", h.path.to_string_lossy(), h.count)),
            );
        }
    }
    finish(input, &hits, lines)
}

/// `offset`, `head_limit`, the empty texts, the cap, and `tool_use_result`.
fn finish(input: &GrepInput, hits: &[Hit], lines: Vec<String>) -> ToolOutcome {
    let total = lines.len() as u64;
    let skipped = input.offset.min(total);
    let mut kept: Vec<String> = lines.into_iter().skip(skipped as usize).collect();
    let limited = input.head_limit > 0 && kept.len() as u64 > input.head_limit;
    if limited {
        kept.truncate(input.head_limit as usize);
    }
    let mut text = if kept.is_empty() && total == 0 {
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
    let body = kept.join("\n");
    let form = |content: Option<&str>| {
        let mut o = Obj::new().str("mode", mode.as_str());
        o = match mode {
            GrepMode::FilesWithMatches => o
                .num("numFiles", kept.len() as u64)
                .strs("filenames", kept.iter().map(String::as_str)),
            _ => o
                .num("numFiles", hits.len() as u64)
                .strs("filenames", std::iter::empty())
                .opt_str("content", content),
        };
        o = match mode {
            GrepMode::Content => o.num("numLines", kept.len() as u64),
            GrepMode::Count => o.num("numMatches", hits.iter().map(|h| h.count).sum()),
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
    succeeded(text, [form(Some(&body)), form(None)])
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
    shown: String,
    lines: Vec<String>,
    count: u64,
    binary: bool,
}

impl FileSink<'_> {
    fn line(&mut self, sep: char, number: Option<u64>, text: &[u8]) {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        let text = String::from_utf8_lossy(text);
        self.lines.push(match (self.input.line_numbers, number) {
            (true, Some(n)) => format!("{}{sep}{n}{sep}{text}", self.shown),
            _ => format!("{}{sep}{text}", self.shown),
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
