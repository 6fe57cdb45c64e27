//! `structuredPatch` (PROFILE §17): the unified-diff hunks between a file's old and new text,
//! 3 lines of context, as `[{oldStart, oldLines, newStart, newLines, lines}]` with each line
//! prefixed by ` `, `-` or `+` (no `\ No newline` lines). Computed by `similar`, a kept diff
//! library; this module only shapes its hunks.

use similar::{ChangeTag, TextDiff};

use super::result_json::{array, Obj};

/// The hunks as JSON text.
pub fn structured_patch(old: &str, new: &str) -> String {
    let diff = TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .diff_lines(old, new);
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let mut lines: Vec<String> = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let text = change.value();
                // The line without its `\n` (a `\r` before it stays: joining the lines with
                // `\n` gives the file's bytes back).
                let text = text.strip_suffix('\n').unwrap_or(text);
                lines.push(format!("{sign}{text}"));
            }
        }
        let start = |r: &std::ops::Range<usize>| {
            // Unified-diff convention: an empty range starts at the line before it.
            if r.is_empty() {
                r.start as u64
            } else {
                r.start as u64 + 1
            }
        };
        hunks.push(
            Obj::new()
                .num("oldStart", start(&old_range))
                .num("oldLines", old_range.len() as u64)
                .num("newStart", start(&new_range))
                .num("newLines", new_range.len() as u64)
                .strs("lines", lines.iter().map(String::as_str))
                .end(),
        );
    }
    array(&hunks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line_has_three_lines_of_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        assert_eq!(
            structured_patch(old, new),
            r#"[{"oldStart":2,"oldLines":7,"newStart":2,"newLines":7,"lines":[" 2"," 3"," 4","-5","+five"," 6"," 7"," 8"]}]"#
        );
        assert_eq!(structured_patch(old, old), "[]");
    }

    #[test]
    fn creating_from_empty_starts_at_zero() {
        assert_eq!(
            structured_patch("", "a\nb\n"),
            r#"[{"oldStart":0,"oldLines":0,"newStart":1,"newLines":2,"lines":["+a","+b"]}]"#
        );
    }
}
