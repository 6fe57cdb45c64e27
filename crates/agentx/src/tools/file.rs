//! `Read` and `Write` (PROFILE §10): UTF-8 text files, relative paths against the session cwd.

use std::fmt::Write as _;
use std::path::Path;

use super::{resolve, ToolOutput, READ_DEFAULT_LIMIT};

/// `Read {file_path, offset?, limit?}`: lines `offset..offset+limit` (1-based, default from
/// line 1, [`READ_DEFAULT_LIMIT`] lines), each as `<number>\t<line>` (`cat -n` style). When
/// the default limit (no `limit` given) stops the read before the end of the file, a last
/// line says so and where to go on (`[read stopped after 2000 lines; more from offset
/// 2001]`), so a long file is never cut without a word.
pub fn read(cwd: &Path, file_path: &str, offset: Option<u64>, limit: Option<u64>) -> ToolOutput {
    let path = resolve(cwd, file_path);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return ToolOutput::error(format!("cannot read {file_path}: {}", io_reason(&e))),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return ToolOutput::error(format!("cannot read {file_path}: not UTF-8 text"));
    };
    let first = offset.unwrap_or(1).max(1);
    let chosen = limit.is_some();
    let limit = limit.unwrap_or(READ_DEFAULT_LIMIT);
    let mut out = String::new();
    let lines = text.split_inclusive('\n');
    for (i, line) in lines.enumerate() {
        let n = i as u64 + 1;
        if n < first {
            continue;
        }
        if n - first >= limit {
            if !chosen {
                let _ = writeln!(
                    out,
                    "[read stopped after {limit} lines; more from offset {n}]"
                );
            }
            break;
        }
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        let _ = writeln!(out, "{n:>6}\t{line}");
    }
    ToolOutput::ok(out)
}

/// `Write {file_path, content}`: creates or replaces the file.
pub fn write(cwd: &Path, file_path: &str, content: &str) -> ToolOutput {
    let path = resolve(cwd, file_path);
    match std::fs::write(&path, content.as_bytes()) {
        Ok(()) => ToolOutput::ok(format!("wrote {} bytes to {file_path}", content.len())),
        Err(e) => ToolOutput::error(format!("cannot write {file_path}: {}", io_reason(&e))),
    }
}

/// A short, stable reason (never the OS message with its locale and paths).
fn io_reason(e: &std::io::Error) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("agentx-tools-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn write_then_read_numbered_with_offset_and_limit() {
        let d = tmp("rw");
        assert_eq!(
            write(&d, "f.txt", "one\ntwo\r\nthree\nfour"),
            ToolOutput::ok("wrote 19 bytes to f.txt")
        );
        assert_eq!(
            read(&d, "f.txt", None, None),
            ToolOutput::ok("     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n")
        );
        assert_eq!(
            read(&d, &d.join("f.txt").to_string_lossy(), Some(2), Some(2)),
            ToolOutput::ok("     2\ttwo\n     3\tthree\n")
        );
        assert_eq!(read(&d, "f.txt", Some(9), None), ToolOutput::ok(""));
    }

    /// The default limit, at its edge: a file of exactly 2,000 lines is read whole with no
    /// marker; one more line and the read stops with the marker naming the next offset (from
    /// any offset); a `limit` the caller chose stops without one.
    #[test]
    fn the_default_limit_says_where_it_stopped() {
        let d = tmp("limit");
        let text = |n: u64| (1..=n).map(|k| format!("l{k}\n")).collect::<String>();
        let numbered = |from: u64, to: u64| {
            (from..=to)
                .map(|k| format!("{k:>6}\tl{k}\n"))
                .collect::<String>()
        };
        std::fs::write(d.join("at.txt"), text(READ_DEFAULT_LIMIT)).unwrap();
        assert_eq!(
            read(&d, "at.txt", None, None),
            ToolOutput::ok(numbered(1, READ_DEFAULT_LIMIT))
        );
        std::fs::write(d.join("past.txt"), text(READ_DEFAULT_LIMIT + 1)).unwrap();
        assert_eq!(
            read(&d, "past.txt", None, None),
            ToolOutput::ok(format!(
                "{}[read stopped after 2000 lines; more from offset 2001]\n",
                numbered(1, READ_DEFAULT_LIMIT)
            ))
        );
        std::fs::write(d.join("long.txt"), text(4_500)).unwrap();
        assert_eq!(
            read(&d, "long.txt", Some(101), None),
            ToolOutput::ok(format!(
                "{}[read stopped after 2000 lines; more from offset 2101]\n",
                numbered(101, 2_100)
            ))
        );
        assert_eq!(
            read(&d, "long.txt", Some(2), Some(2)),
            ToolOutput::ok(numbered(2, 3))
        );
    }

    #[test]
    fn errors_are_tool_errors() {
        let d = tmp("err");
        assert_eq!(
            read(&d, "missing", None, None),
            ToolOutput::error("cannot read missing: not found")
        );
        std::fs::write(d.join("bin"), [0xff, 0xfe]).unwrap();
        assert_eq!(
            read(&d, "bin", None, None),
            ToolOutput::error("cannot read bin: not UTF-8 text")
        );
        assert_eq!(
            write(&d, "no/such/dir/x", "a"),
            ToolOutput::error("cannot write no/such/dir/x: not found")
        );
    }
}
