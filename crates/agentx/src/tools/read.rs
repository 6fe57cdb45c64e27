//! `Read {file_path, offset?, limit?}` (PROFILE §10, §17): UTF-8 text files, lines numbered,
//! relative paths against the session cwd. A successful read, partial or whole, is recorded
//! in the read-before-write [`Ledger`]; `tool_use_result` is `{"type":"text","file":{…}}`.

use std::fmt::Write as _;
use std::path::Path;

use agentx_core::session::ToolOutcome;

use super::fsx::{absolute, failed, io_reason, line_count, numbered, succeeded};
use super::result_json::Obj;
use super::seen::Ledger;
use super::READ_DEFAULT_LIMIT;

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
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => return failed(format!("cannot read {}: {}", path.display(), io_reason(&e))),
    };
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return failed(format!("cannot read {}: not UTF-8 text", path.display()));
    };
    ledger.record(&path, &bytes);
    let first = offset.unwrap_or(1).max(1);
    let chosen = limit.is_some();
    let limit = limit.unwrap_or(READ_DEFAULT_LIMIT);
    let mut out = String::new();
    let (mut start, mut end, mut shown) = (None, 0usize, 0u64);
    let mut at = 0usize;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let n = i as u64 + 1;
        let here = at;
        at += line.len();
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
        start.get_or_insert(here);
        end = at;
        shown += 1;
        numbered(&mut out, n, line);
    }
    // `content`: the returned lines as raw text, without numbers and without the last
    // line's newline.
    let raw = start.map_or("", |s| &text[s..end]);
    let raw = raw.strip_suffix('\n').unwrap_or(raw);
    let form = |content: Option<&str>| {
        let file = Obj::new()
            .str("filePath", &path.to_string_lossy())
            .opt_str("content", content)
            .num("numLines", shown)
            .num("startLine", first)
            .num("totalLines", line_count(text))
            .end();
        Obj::new().str("type", "text").raw("file", &file).end()
    };
    succeeded(out, [form(Some(raw)), form(None)])
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
}
