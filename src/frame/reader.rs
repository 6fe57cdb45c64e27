//! `Reader`: the incremental line reader (chunks of bytes in, complete lines out).
//!
//! Owns the partial trailing record across chunks, the final unterminated record at EOF
//! (WIRE-EOF-001), skipping blank lines (PROFILE §2a), physical line numbering, and the line
//! length limit (PROFILE §2a), enforced without buffering more than the limit. Must never
//! look inside a line beyond deciding whether it is blank, and never do I/O: the caller owns
//! reading and hands chunks in ("incomplete is not invalid": no chunk boundary is an error).
//!
//! Rules, in the order they apply to each physical line (LF-terminated, or the unterminated
//! tail at `finish()`):
//! 1. it gets the next physical line number, whatever follows;
//! 2. longer than the limit (LF excluded, a CR counted) → one `FrameError` (`line_too_long`);
//!    the rest of the line is skipped without being stored, even if it is all whitespace;
//! 3. empty or only space, tab, CR → skipped silently;
//! 4. otherwise handed out as a [`Line`].

use std::collections::VecDeque;

use bytes::Bytes;

use super::split::{Cursor, Splitter};
use super::{FrameError, Line};

/// The default line-length limit: 8,388,608 bytes (8 MiB), LF excluded (PROFILE §2a).
pub const DEFAULT_MAX_LINE: usize = 8 * 1024 * 1024;

/// Incremental NDJSON framer: push chunks, pull lines.
///
/// See the [module docs](super) for the streaming loop. Memory held: the chunks pushed and not
/// yet drained (shared `Bytes`, not copied), plus one assembly buffer for a line spanning
/// chunks, whose capacity never exceeds the limit.
///
/// `Debug` shows positions and sizes, never buffered input bytes.
pub struct Reader {
    splitter: Splitter,
    max_line: usize,
    /// The chunk being split; `pos..` is not yet consumed.
    chunk: Bytes,
    pos: usize,
    /// LF positions in `chunk`, in step with `pos`.
    cursor: Cursor,
    /// Chunks pushed before the current one was drained.
    queue: VecDeque<Bytes>,
    /// The head of a line that started in an earlier chunk (never longer than the limit).
    partial: Vec<u8>,
    /// `partial` holds a line handed out by the last call; clear it on the next.
    release_partial: bool,
    /// Inside a too-long line that was already reported: drop bytes up to its LF.
    skipping: bool,
    /// Physical lines finished so far (the number of the last line started and ended).
    lines: u64,
    finished: bool,
    eof_done: bool,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("backend", &self.splitter.backend())
            .field("max_line", &self.max_line)
            .field("lines_read", &self.lines)
            .field("chunk_len", &self.chunk.len())
            .field("pos", &self.pos)
            .field("queued_chunks", &self.queue.len())
            .field("partial_len", &self.partial.len())
            .field("skipping", &self.skipping)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

impl Default for Reader {
    fn default() -> Reader {
        Reader::new()
    }
}

impl Reader {
    /// A reader with the default limit ([`DEFAULT_MAX_LINE`]).
    pub fn new() -> Reader {
        Reader::with_max_line(DEFAULT_MAX_LINE)
    }

    /// A reader whose lines may hold at most `max_line` bytes (LF excluded, CR counted).
    pub fn with_max_line(max_line: usize) -> Reader {
        Reader::with_splitter(max_line, Splitter::detect())
    }

    /// A reader on an explicit newline backend. For tests.
    #[doc(hidden)]
    pub fn with_splitter(max_line: usize, splitter: Splitter) -> Reader {
        Reader {
            splitter,
            max_line,
            chunk: Bytes::new(),
            pos: 0,
            cursor: Cursor::default(),
            queue: VecDeque::new(),
            partial: Vec::new(),
            release_partial: false,
            skipping: false,
            lines: 0,
            finished: false,
            eof_done: false,
        }
    }

    /// The line-length limit in bytes.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// Physical lines ended so far (LF-terminated, plus the final tail after `finish`),
    /// blank and too-long lines included.
    pub fn lines_read(&self) -> u64 {
        self.lines
    }

    /// Whether [`Reader::finish`] was called.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Capacity of the assembly buffer for lines spanning chunks. For memory tests.
    #[doc(hidden)]
    pub fn buffered_capacity(&self) -> usize {
        self.partial.capacity()
    }

    /// Appends a chunk, zero-copy. Any chunk boundary is fine, including inside a CRLF.
    ///
    /// Drain with [`Reader::next_line`] until `None` before pushing again to keep memory
    /// constant; chunks pushed earlier are queued, not lost. Pushing after
    /// [`Reader::finish`] is a caller bug: the chunk is ignored.
    pub fn push(&mut self, chunk: Bytes) {
        if self.finished || chunk.is_empty() {
            return;
        }
        if self.pos >= self.chunk.len() && self.queue.is_empty() {
            self.set_chunk(chunk);
        } else {
            self.queue.push_back(chunk);
        }
    }

    /// Appends a chunk by copying it. Prefer [`Reader::push`] with `Bytes`.
    pub fn push_slice(&mut self, chunk: &[u8]) {
        if !self.finished && !chunk.is_empty() {
            self.push(Bytes::copy_from_slice(chunk));
        }
    }

    /// Declares end of input. The following [`Reader::next_line`] calls drain what is
    /// buffered and then the unterminated tail, parsed exactly as a normal line
    /// (WIRE-EOF-001): blank → skipped, too long → `line_too_long`, else a [`Line`].
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// The next complete non-blank line, or a framing error for one line; `None` when more
    /// input is needed (or, after `finish`, when the stream is over).
    ///
    /// After an error the reader goes on: the next call returns the following line.
    pub fn next_line(&mut self) -> Option<Result<Line<'_>, FrameError>> {
        if self.release_partial {
            self.partial.clear();
            self.release_partial = false;
        }
        loop {
            if self.pos < self.chunk.len() {
                match self.cursor.next(self.splitter, &self.chunk) {
                    Some(lf) => {
                        self.lines += 1;
                        let start = self.pos;
                        self.pos = lf + 1;
                        match self.end_line(start, lf) {
                            Ended::Skip => continue,
                            Ended::TooLong => {
                                return Some(Err(FrameError::line_too_long(
                                    self.lines,
                                    self.max_line,
                                )))
                            }
                            Ended::InChunk => {
                                let bytes = self.chunk.get(start..lf).unwrap_or_default();
                                return Some(Ok(Line::in_chunk(self.lines, bytes, &self.chunk)));
                            }
                            Ended::Assembled => {
                                self.release_partial = true;
                                return Some(Ok(Line::assembled(self.lines, &self.partial)));
                            }
                        }
                    }
                    None => {
                        // No LF in the rest of this chunk: keep it as the head of the next line.
                        let start = self.pos;
                        self.pos = self.chunk.len();
                        if !self.skipping {
                            let tail_len = self.chunk.len() - start;
                            if self.partial.len() + tail_len > self.max_line {
                                // Reported now, before the LF arrives, so nothing past the
                                // limit is ever stored (PROFILE §2a).
                                self.partial.clear();
                                self.skipping = true;
                                return Some(Err(FrameError::line_too_long(
                                    self.lines + 1,
                                    self.max_line,
                                )));
                            }
                            self.append_partial(start, self.chunk.len());
                        }
                    }
                }
            }
            if let Some(next) = self.queue.pop_front() {
                self.set_chunk(next);
                continue;
            }
            // Drop the drained chunk so the caller's buffer can be reclaimed and reused.
            self.set_chunk(Bytes::new());
            return self.end_of_input();
        }
    }

    /// Classifies the line `start..lf` of the current chunk (its LF at `lf`), consuming the
    /// assembled head in `partial` if there is one.
    fn end_line(&mut self, start: usize, lf: usize) -> Ended {
        if self.skipping {
            self.skipping = false;
            return Ended::Skip;
        }
        let piece = lf - start;
        if self.partial.is_empty() {
            if piece > self.max_line {
                return Ended::TooLong;
            }
            if is_blank(self.chunk.get(start..lf).unwrap_or_default()) {
                return Ended::Skip;
            }
            return Ended::InChunk;
        }
        if self.partial.len() + piece > self.max_line {
            self.partial.clear();
            return Ended::TooLong;
        }
        self.append_partial(start, lf);
        if is_blank(&self.partial) {
            self.partial.clear();
            return Ended::Skip;
        }
        Ended::Assembled
    }

    /// After the last chunk: the unterminated tail once `finish` was called.
    fn end_of_input(&mut self) -> Option<Result<Line<'_>, FrameError>> {
        if !self.finished || self.eof_done {
            return None;
        }
        self.eof_done = true;
        if self.skipping {
            // The too-long tail was reported when it crossed the limit.
            self.skipping = false;
            self.lines += 1;
            return None;
        }
        if self.partial.is_empty() {
            return None;
        }
        self.lines += 1;
        if is_blank(&self.partial) {
            self.partial.clear();
            return None;
        }
        self.release_partial = true;
        Some(Ok(Line::assembled(self.lines, &self.partial)))
    }

    fn set_chunk(&mut self, chunk: Bytes) {
        self.chunk = chunk;
        self.pos = 0;
        self.cursor = Cursor::default();
    }

    /// Appends `chunk[start..end]` to `partial`; the caller has checked the limit. Grows the
    /// buffer geometrically but never past the limit, so its capacity stays at most the limit.
    fn append_partial(&mut self, start: usize, end: usize) {
        let piece = self.chunk.get(start..end).unwrap_or_default();
        let needed = self.partial.len() + piece.len();
        if needed > self.partial.capacity() {
            let target = needed
                .max(self.partial.capacity().saturating_mul(2))
                .min(self.max_line.max(needed));
            self.partial.reserve_exact(target - self.partial.len());
        }
        self.partial.extend_from_slice(piece);
    }
}

/// How one LF-terminated line ended.
enum Ended {
    /// Blank, or the end of an already reported too-long line.
    Skip,
    TooLong,
    /// Hand out `chunk[start..lf]`.
    InChunk,
    /// Hand out `partial`.
    Assembled,
}

/// Empty or only JSON whitespace without LF: space, tab, CR (PROFILE §2a).
#[inline]
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(r: &mut Reader) -> Vec<Result<(u64, Vec<u8>), FrameError>> {
        let mut out = Vec::new();
        while let Some(item) = r.next_line() {
            out.push(item.map(|l| (l.number(), l.as_bytes().to_vec())));
        }
        out
    }

    #[test]
    fn partial_tail_survives_chunk_boundary() {
        let mut r = Reader::new();
        r.push_slice(b"{\"a\":1}\n{\"b\"");
        assert_eq!(drain(&mut r), vec![Ok((1, b"{\"a\":1}".to_vec()))]);
        r.push_slice(b":2}\n");
        assert_eq!(drain(&mut r), vec![Ok((2, b"{\"b\":2}".to_vec()))]);
        r.finish();
        assert_eq!(drain(&mut r), vec![]);
        assert_eq!(r.lines_read(), 2);
    }

    #[test]
    fn queued_chunks_are_not_lost() {
        let mut r = Reader::new();
        r.push_slice(b"a\nb");
        r.push_slice(b"c\nd");
        r.push_slice(b"\n");
        r.finish();
        r.push_slice(b"ignored\n");
        let got = drain(&mut r);
        assert_eq!(
            got,
            vec![
                Ok((1, b"a".to_vec())),
                Ok((2, b"bc".to_vec())),
                Ok((3, b"d".to_vec()))
            ]
        );
    }

    #[test]
    fn drained_chunk_is_released() {
        let mut r = Reader::new();
        let chunk = Bytes::from(b"x\ny\n".to_vec());
        r.push(chunk.clone());
        assert!(!chunk.is_unique());
        let _ = drain(&mut r);
        assert!(chunk.is_unique(), "reader still holds the drained chunk");
    }

    #[test]
    fn debug_never_shows_input_bytes() {
        let mut r = Reader::new();
        r.push_slice(b"{\"api_key\":\"sk-SECRET\"}\n{\"partial\":\"sk-SECRET");
        let line = r.next_line().expect("a line").expect("no error");
        assert!(!format!("{line:?}").contains("SECRET"));
        assert!(r.next_line().is_none());
        let shown = format!("{r:?}");
        assert!(
            !shown.contains("SECRET") && shown.contains("partial_len"),
            "{shown}"
        );
    }

    #[test]
    fn blank_is_space_tab_cr_only() {
        assert!(is_blank(b""));
        assert!(is_blank(b" \t\r \r"));
        assert!(!is_blank(b"\x0c"));
        assert!(!is_blank(b"\x0b"));
        assert!(!is_blank(b" 0 "));
        assert!(!is_blank("\u{a0}".as_bytes()));
    }
}
