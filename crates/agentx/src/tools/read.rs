//! `Read {file_path, offset?, limit?}` (PROFILE §10, §17): UTF-8 text files, lines numbered,
//! relative paths against the session cwd. A successful read, partial or whole, is recorded
//! in the read-before-write [`Ledger`]; `tool_use_result` is `{"type":"text","file":{…}}`.
//!
//! The file is streamed in 64 KiB reads: it is checked as UTF-8, hashed for the ledger and its
//! lines counted as it goes, and only the lines shown are kept, at most
//! [`READ_MAX_SHOWN_BYTES`] of them (issue 46: a file of any size costs that much memory).
//! Must never: hold the whole file, or show a line that is not the file's.

use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;

use sha2::{Digest, Sha256};

use agentx_core::session::ToolOutcome;

use super::fsx::{absolute, failed, io_reason, numbered, succeeded};
use super::result_json::Obj;
use super::seen::Ledger;
use super::READ_DEFAULT_LIMIT;

/// Bytes asked of the file per read.
const READ_CHUNK: usize = 64 * 1024;

/// The most bytes of numbered lines one `Read` shows: an output line's worth (8,388,608). The
/// line that would pass it is not shown, and a last line says where to go on (`[read stopped at
/// 8,388,608 bytes after N lines; more from offset M]`).
pub const READ_MAX_SHOWN_BYTES: usize = 8 * 1024 * 1024;

/// Lines `offset..offset+limit` (1-based, default from line 1, [`READ_DEFAULT_LIMIT`] lines),
/// each as `<number>\t<line>` (`cat -n` style). When the default limit (no `limit` given)
/// stops the read before the end of the file, a last line says so and where to go on
/// (`[read stopped after 2000 lines; more from offset 2001]`).
pub fn read(
    cwd: &Path,
    ledger: &Ledger,
    file_path: &str,
    offset: Option<u64>,
    limit: Option<u64>,
) -> ToolOutcome {
    let path = absolute(cwd, file_path);
    let cannot = |why: &str| failed(format!("cannot read {}: {why}", path.display()));
    let mut file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) => return cannot(io_reason(&e)),
    };
    let mut window = Window::new(offset.unwrap_or(1).max(1), limit);
    let mut hash = Sha256::new();
    let mut size = 0u64;
    let mut buf = vec![0u8; READ_CHUNK];
    // The start of a character cut by the last read (at most 3 bytes).
    let mut carry = 0usize;
    loop {
        let n = match file.read(&mut buf[carry..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return cannot(io_reason(&e)),
        };
        if n == 0 {
            if carry > 0 {
                return cannot("not UTF-8 text");
            }
            break;
        }
        hash.update(&buf[carry..carry + n]);
        size += n as u64;
        let filled = carry + n;
        let valid = match std::str::from_utf8(&buf[..filled]) {
            Ok(text) => {
                window.take(text);
                filled
            }
            // A character cut at the end of the read: the rest comes with the next one. Only
            // this case checks its valid prefix a second time.
            Err(e) if e.error_len().is_none() => {
                let valid = e.valid_up_to();
                window.take(std::str::from_utf8(&buf[..valid]).unwrap_or_default());
                valid
            }
            Err(_) => return cannot("not UTF-8 text"),
        };
        buf.copy_within(valid..filled, 0);
        carry = filled - valid;
    }
    ledger.record_digest(&path, size, hash.finalize().into());
    let (out, raw, shown, total, first) = window.end();
    // `content`: the returned lines as raw text, without numbers and without the last
    // line's newline.
    let raw = raw.strip_suffix('\n').unwrap_or(&raw);
    let form = |content: Option<&str>| {
        let file = Obj::new()
            .str("filePath", &path.to_string_lossy())
            .opt_str("content", content)
            .num("numLines", shown)
            .num("startLine", first)
            .num("totalLines", total)
            .end();
        Obj::new().str("type", "text").raw("file", &file).end()
    };
    succeeded(out, [form(Some(raw)), form(None)])
}

/// The lines a read shows, fed the file's text piece by piece.
struct Window {
    first: u64,
    limit: u64,
    /// The caller gave `limit` (no marker when it stops the read).
    chosen: bool,
    /// The number of the line being read (0 before the first).
    n: u64,
    /// The next piece starts a line.
    at_start: bool,
    /// The part of line `n` read so far, when it is shown.
    line: String,
    /// No more lines are shown.
    done: bool,
    out: String,
    raw: String,
    shown: u64,
}

impl Window {
    fn new(first: u64, limit: Option<u64>) -> Window {
        Window {
            first,
            limit: limit.unwrap_or(READ_DEFAULT_LIMIT),
            chosen: limit.is_some(),
            n: 0,
            at_start: true,
            line: String::new(),
            done: false,
            out: String::new(),
            raw: String::new(),
            shown: 0,
        }
    }

    fn take(&mut self, text: &str) {
        for piece in text.split_inclusive('\n') {
            if self.at_start {
                self.at_start = false;
                self.n += 1;
                self.begin_line();
            }
            if self.shows_line() {
                // The numbered form of the line at most: its number column, a tab, and the
                // line with its newline (a `\r` before it is dropped).
                let numbered = self.n.to_string().len().max(6) + 1 + self.line.len();
                if self.out.len() + numbered + piece.len() > READ_MAX_SHOWN_BYTES {
                    self.stop_at_bytes();
                } else {
                    self.line.push_str(piece);
                }
            }
            if piece.ends_with('\n') {
                self.end_line();
                self.at_start = true;
            }
        }
    }

    /// Line `n` begins: past the window, the read stops showing (with the marker when the
    /// default limit stopped it).
    fn begin_line(&mut self) {
        if !self.done && self.n >= self.first && self.n - self.first >= self.limit {
            self.done = true;
            if !self.chosen {
                let _ = writeln!(
                    self.out,
                    "[read stopped after {} lines; more from offset {}]",
                    self.limit, self.n
                );
            }
        }
    }

    fn shows_line(&self) -> bool {
        !self.done && self.n >= self.first
    }

    /// Line `n` would pass [`READ_MAX_SHOWN_BYTES`]: it is not shown, and the marker says
    /// where to go on.
    fn stop_at_bytes(&mut self) {
        self.done = true;
        self.line = String::new();
        let _ = writeln!(
            self.out,
            "[read stopped at 8,388,608 bytes after {} lines; more from offset {}]",
            self.shown, self.n
        );
    }

    fn end_line(&mut self) {
        if self.shows_line() {
            numbered(&mut self.out, self.n, &self.line);
            self.raw.push_str(&self.line);
            self.shown += 1;
        }
        self.line.clear();
    }

    /// The numbered lines, the raw lines, how many were shown, the file's lines and the
    /// first line asked for.
    fn end(mut self) -> (String, String, u64, u64, u64) {
        if !self.at_start {
            // A last line without its newline.
            self.end_line();
        }
        (self.out, self.raw, self.shown, self.n, self.first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("agentx-read-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn text(o: ToolOutcome) -> (String, bool) {
        (o.content, o.is_error)
    }

    #[test]
    fn numbered_with_offset_and_limit() {
        let d = tmp("rw");
        std::fs::write(d.join("f.txt"), "one\ntwo\r\nthree\nfour").unwrap();
        let l = Ledger::default();
        assert_eq!(
            text(read(&d, &l, "f.txt", None, None)),
            (
                "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n".into(),
                false
            )
        );
        assert_eq!(
            text(read(
                &d,
                &l,
                &d.join("f.txt").to_string_lossy(),
                Some(2),
                Some(2)
            )),
            ("     2\ttwo\n     3\tthree\n".into(), false)
        );
        assert_eq!(
            text(read(&d, &l, "f.txt", Some(9), None)),
            ("".into(), false)
        );
        let r = read(&d, &l, "f.txt", Some(2), Some(2));
        assert_eq!(
            String::from_utf8(r.tool_use_result[0].as_bytes().to_vec()).unwrap(),
            format!(
                r#"{{"type":"text","file":{{"filePath":"{}","content":"two\r\nthree","numLines":2,"startLine":2,"totalLines":4}}}}"#,
                d.join("f.txt").display()
            )
        );
    }

    /// The default limit, at its edge: a file of exactly 2,000 lines is read whole with no
    /// marker; one more line and the read stops with the marker naming the next offset.
    #[test]
    fn the_default_limit_says_where_it_stopped() {
        let d = tmp("limit");
        let l = Ledger::default();
        let lines = |n: u64| (1..=n).map(|k| format!("l{k}\n")).collect::<String>();
        let shown = |from: u64, to: u64| {
            (from..=to)
                .map(|k| format!("{k:>6}\tl{k}\n"))
                .collect::<String>()
        };
        std::fs::write(d.join("at.txt"), lines(READ_DEFAULT_LIMIT)).unwrap();
        assert_eq!(
            text(read(&d, &l, "at.txt", None, None)),
            (shown(1, READ_DEFAULT_LIMIT), false)
        );
        std::fs::write(d.join("past.txt"), lines(READ_DEFAULT_LIMIT + 1)).unwrap();
        assert_eq!(
            text(read(&d, &l, "past.txt", None, None)),
            (
                format!(
                    "{}[read stopped after 2000 lines; more from offset 2001]\n",
                    shown(1, READ_DEFAULT_LIMIT)
                ),
                false
            )
        );
        std::fs::write(d.join("long.txt"), lines(4_500)).unwrap();
        assert_eq!(
            text(read(&d, &l, "long.txt", Some(101), None)),
            (
                format!(
                    "{}[read stopped after 2000 lines; more from offset 2101]\n",
                    shown(101, 2_100)
                ),
                false
            )
        );
    }

    #[test]
    fn errors_name_the_absolute_path() {
        let d = tmp("err");
        let l = Ledger::default();
        assert_eq!(
            text(read(&d, &l, "missing", None, None)),
            (
                format!("cannot read {}/missing: not found", d.display()),
                true
            )
        );
        std::fs::write(d.join("bin"), [0xff, 0xfe]).unwrap();
        assert_eq!(
            text(read(&d, &l, "bin", None, None)),
            (
                format!("cannot read {}/bin: not UTF-8 text", d.display()),
                true
            )
        );
    }

    /// The file is streamed: a character split across two 64 KiB reads is whole, an invalid
    /// byte far past the window still fails the read, the ledger's digest is the whole
    /// file's, and `totalLines` counts every line.
    #[test]
    fn a_large_file_is_read_in_pieces() {
        let d = tmp("large");
        let l = Ledger::default();
        // Line k is `k` then `é`s, so characters straddle every read boundary.
        let body: String = (1..=40_000)
            .map(|k| format!("{k}{}\n", "é".repeat(k % 7)))
            .collect();
        assert!(body.len() > 4 * READ_CHUNK);
        std::fs::write(d.join("big.txt"), &body).unwrap();
        let (out, err) = text(read(&d, &l, "big.txt", Some(39_999), None));
        assert!(!err);
        let shown = |k: usize| format!("{k:>6}\t{k}{}\n", "é".repeat(k % 7));
        assert_eq!(out, shown(39_999) + &shown(40_000));
        let r = read(&d, &l, "big.txt", Some(1), Some(1));
        assert!(String::from_utf8_lossy(r.tool_use_result[0].as_bytes())
            .contains(r#""totalLines":40000"#));
        assert_eq!(l.check(&d.join("big.txt"), body.as_bytes()), Ok(()));

        let mut bad = body.into_bytes();
        bad.push(0xff);
        std::fs::write(d.join("bad.txt"), &bad).unwrap();
        assert_eq!(
            text(read(&d, &l, "bad.txt", None, Some(1))),
            (
                format!("cannot read {}/bad.txt: not UTF-8 text", d.display()),
                true
            )
        );
        // A cut character at the very end is not UTF-8 either.
        std::fs::write(d.join("cut.txt"), [b'a', 0xc3]).unwrap();
        assert!(read(&d, &l, "cut.txt", None, None).is_error);
    }

    /// At most 8,388,608 bytes of numbered lines: the line that would pass it is not shown and
    /// the marker says where to go on, whatever `limit` asked.
    #[test]
    fn the_lines_shown_stop_at_8_mib() {
        let d = tmp("bytes");
        let l = Ledger::default();
        // One line whose numbered form is exactly the bound is shown; one byte more is not.
        let exact = "x".repeat(READ_MAX_SHOWN_BYTES - 8);
        std::fs::write(d.join("exact.txt"), format!("{exact}\n")).unwrap();
        let (out, _) = text(read(&d, &l, "exact.txt", None, None));
        assert_eq!(out.len(), READ_MAX_SHOWN_BYTES);
        std::fs::write(d.join("over.txt"), format!("{exact}x\n")).unwrap();
        assert_eq!(
            text(read(&d, &l, "over.txt", None, None)),
            (
                "[read stopped at 8,388,608 bytes after 0 lines; more from offset 1]\n".into(),
                false
            )
        );
        // 1 MiB lines: 7 fit with their numbers, the 8th would pass.
        let line = "x".repeat(1 << 20);
        let body: String = (0..12).map(|_| format!("{line}\n")).collect();
        std::fs::write(d.join("wide.txt"), &body).unwrap();
        let (out, err) = text(read(&d, &l, "wide.txt", None, Some(100)));
        assert!(!err);
        assert!(out.len() <= READ_MAX_SHOWN_BYTES + 100, "{}", out.len());
        assert!(
            out.ends_with("[read stopped at 8,388,608 bytes after 7 lines; more from offset 8]\n"),
            "{}",
            &out[out.len() - 100..]
        );
        // Read on from there: the next lines are shown.
        let (out, _) = text(read(&d, &l, "wide.txt", Some(8), Some(2)));
        assert!(out.starts_with("     8\tx") && out.contains("\n     9\tx"));
    }
}
