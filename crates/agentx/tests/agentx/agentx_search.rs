//! Black-box: PROFILE §17's `Glob` and `Grep` through the real binary, one `!tool` call per
//! turn, asserted on the exact text result and `tool_use_result`: newest first with mtimes
//! the test sets, the ignore rules (`.gitignore`, hidden files, `.git` never entered), the
//! 100-result edge, each `output_mode`, context separators, the filters, `multiline`,
//! `head_limit`/`offset` at their edges, binary files, an unknown type and the byte cap.

use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::json;

use crate::agentx_edit::{err, ok, outcome, Coding};

fn put(root: &Path, rel: &str, body: &str, age_s: u64) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, body).unwrap();
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 - age_s);
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

fn abs(c: &Coding, rel: &str) -> String {
    c.path(rel).to_str().unwrap().to_owned()
}

fn lines(c: &Coding, rels: &[&str]) -> String {
    rels.iter()
        .map(|r| abs(c, r))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Newest first, equal times by path; a pattern without `/` matches names at any depth, one
/// with `/` the path relative to `path`; `tool_use_result` counts; an empty result and a
/// `path` that is not a directory.
#[test]
fn glob_is_newest_first_and_matches_names_or_relative_paths() {
    let mut c = Coding::new("glob-order", &[]);
    put(&c.cwd, "old.rs", "", 300);
    put(&c.cwd, "sub/new.rs", "", 10);
    put(&c.cwd, "sub/deep/b.rs", "", 100);
    put(&c.cwd, "sub/deep/a.rs", "", 100);
    put(&c.cwd, "notes.txt", "", 1);
    let user = c.call("Glob", &json!({"pattern": "*.rs"}));
    let want = ["sub/new.rs", "sub/deep/a.rs", "sub/deep/b.rs", "old.rs"];
    assert_eq!(outcome(&user), ok(lines(&c, &want)));
    let r = &user["tool_use_result"];
    assert_eq!(r["numFiles"], 4);
    assert_eq!(r["totalMatches"], 4);
    assert_eq!(r["truncated"], false);
    assert_eq!(r["countIsComplete"], true);
    assert!(r["durationMs"].is_u64());
    assert_eq!(
        r["filenames"],
        json!(want.iter().map(|w| abs(&c, w)).collect::<Vec<_>>())
    );
    let user = c.call("Glob", &json!({"pattern": "sub/*.rs"}));
    assert_eq!(outcome(&user), ok(lines(&c, &["sub/new.rs"])));
    let user = c.call("Glob", &json!({"pattern": "**/deep/{a,b}.rs"}));
    assert_eq!(
        outcome(&user),
        ok(lines(&c, &["sub/deep/a.rs", "sub/deep/b.rs"]))
    );
    let user = c.call("Glob", &json!({"pattern": "*.rs", "path": "sub/deep"}));
    assert_eq!(
        outcome(&user),
        ok(lines(&c, &["sub/deep/a.rs", "sub/deep/b.rs"]))
    );
    let user = c.call("Glob", &json!({"pattern": "*.md"}));
    assert_eq!(outcome(&user), ok("No files found"));
    let user = c.call("Glob", &json!({"pattern": "*", "path": "notes.txt"}));
    assert_eq!(
        outcome(&user),
        err(format!("{} is not a directory", abs(&c, "notes.txt")))
    );
    c.finish();
}

/// `.gitignore` (in a git repository) and `.ignore` are honoured, hidden files are included,
/// `.git` is never entered.
#[test]
fn glob_honours_ignore_files_includes_hidden_and_skips_dot_git() {
    let mut c = Coding::new("glob-ignore", &[]);
    put(&c.cwd, ".git/HEAD.rs", "", 1);
    put(&c.cwd, ".gitignore", "ignored.rs\nbuild/\n", 1);
    put(&c.cwd, ".ignore", "also.rs\n", 1);
    put(&c.cwd, "ignored.rs", "", 1);
    put(&c.cwd, "also.rs", "", 1);
    put(&c.cwd, "build/out.rs", "", 1);
    put(&c.cwd, ".hidden.rs", "", 2);
    put(&c.cwd, "kept.rs", "", 3);
    let user = c.call("Glob", &json!({"pattern": "*.rs"}));
    assert_eq!(outcome(&user), ok(lines(&c, &[".hidden.rs", "kept.rs"])));
    c.finish();
}

/// Exactly 100 matches: all, no truncation line; 101: the newest 100 and the line.
#[test]
fn glob_returns_100_then_truncates_at_101() {
    let mut c = Coding::new("glob-100", &[]);
    for k in 0..100 {
        put(&c.cwd, &format!("f{k:03}.txt"), "", 1000 - k);
    }
    let user = c.call("Glob", &json!({"pattern": "*.txt"}));
    let names: Vec<String> = (0..100).rev().map(|k| format!("f{k:03}.txt")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    assert_eq!(outcome(&user), ok(lines(&c, &refs)));
    assert_eq!(user["tool_use_result"]["truncated"], false);
    put(&c.cwd, "oldest.txt", "", 5000);
    let user = c.call("Glob", &json!({"pattern": "*.txt"}));
    assert_eq!(
        outcome(&user),
        ok(format!(
            "{}\n(Results are truncated. Consider using a more specific path or pattern.)",
            lines(&c, &refs)
        ))
    );
    let r = &user["tool_use_result"];
    assert_eq!(
        (r["numFiles"].clone(), r["totalMatches"].clone()),
        (json!(100), json!(101))
    );
    assert_eq!(r["truncated"], true);
    c.finish();
}

fn grep_tree(c: &Coding) {
    put(&c.cwd, "a.txt", "alpha\nbeta\ngamma\nbeta beta\n", 30);
    put(&c.cwd, "b.txt", "Beta\n", 10);
    put(&c.cwd, "c.txt", "nothing\n", 20);
}

/// The three modes, `-i`, `-n: false`, `-o`, and the empty texts.
#[test]
fn grep_output_modes_and_flags() {
    let mut c = Coding::new("grep-modes", &[]);
    grep_tree(&c);
    let (a, b) = (abs(&c, "a.txt"), abs(&c, "b.txt"));
    let user = c.call("Grep", &json!({"pattern": "(?i)beta"}));
    assert_eq!(outcome(&user), ok(format!("{b}\n{a}")));
    assert_eq!(
        user["tool_use_result"],
        json!({"mode": "files_with_matches", "numFiles": 2, "filenames": [b, a]})
    );
    let user = c.call(
        "Grep",
        &json!({"pattern": "beta", "output_mode": "content"}),
    );
    assert_eq!(outcome(&user), ok(format!("{a}:2:beta\n{a}:4:beta beta")));
    assert_eq!(
        user["tool_use_result"],
        json!({"mode": "content", "numFiles": 1, "filenames": [],
            "content": format!("{a}:2:beta\n{a}:4:beta beta"), "numLines": 2})
    );
    let user = c.call(
        "Grep",
        &json!({"pattern": "beta", "output_mode": "content", "-i": true, "-n": false}),
    );
    assert_eq!(
        outcome(&user),
        ok(format!("{a}:beta\n{a}:beta beta\n{b}:Beta"))
    );
    let user = c.call(
        "Grep",
        &json!({"pattern": "b[a-z]+", "output_mode": "content", "-o": true}),
    );
    assert_eq!(
        outcome(&user),
        ok(format!("{a}:2:beta\n{a}:4:beta\n{a}:4:beta"))
    );
    let user = c.call(
        "Grep",
        &json!({"pattern": "beta", "output_mode": "count", "-i": true}),
    );
    assert_eq!(outcome(&user), ok(format!("{a}:2\n{b}:1")));
    assert_eq!(user["tool_use_result"]["numMatches"], 3);
    assert_eq!(user["tool_use_result"]["numFiles"], 2);
    let none = json!({"pattern": "zeta"});
    assert_eq!(outcome(&c.call("Grep", &none)), ok("No files found"));
    for mode in ["content", "count"] {
        let q = json!({"pattern": "zeta", "output_mode": mode});
        assert_eq!(outcome(&c.call("Grep", &q)), ok("No matches found"));
    }
    let bad = json!({"pattern": "a", "output_mode": "lines"});
    assert_eq!(
        outcome(&c.call("Grep", &bad)),
        err(
            "invalid input for Grep: output_mode must be one of files_with_matches, content, count"
        )
    );
    c.finish();
}

/// `-A`, `-B`, `-C`: context lines `path-N-text`, `--` between groups that are not adjacent
/// and between files.
#[test]
fn grep_context_lines_and_separators() {
    let mut c = Coding::new("grep-context", &[]);
    let body: String = (1..=10).map(|k| format!("l{k}\n")).collect();
    put(
        &c.cwd,
        "a.txt",
        &body.replace("l2\n", "hit2\n").replace("l8\n", "hit8\n"),
        1,
    );
    put(&c.cwd, "b.txt", "x\nhit\n", 1);
    let (a, b) = (abs(&c, "a.txt"), abs(&c, "b.txt"));
    let user = c.call(
        "Grep",
        &json!({"pattern": "hit", "output_mode": "content", "-C": 1}),
    );
    assert_eq!(
        outcome(&user),
        ok(format!(
            "{a}-1-l1\n{a}:2:hit2\n{a}-3-l3\n--\n{a}-7-l7\n{a}:8:hit8\n{a}-9-l9\n--\n{b}-1-x\n{b}:2:hit"
        ))
    );
    let user = c.call(
        "Grep",
        &json!({"pattern": "hit", "output_mode": "content", "-A": 1, "path": "a.txt"}),
    );
    assert_eq!(
        outcome(&user),
        ok(format!("{a}:2:hit2\n{a}-3-l3\n--\n{a}:8:hit8\n{a}-9-l9"))
    );
    let user = c.call(
        "Grep",
        &json!({"pattern": "hit", "output_mode": "content", "-B": 5, "path": "a.txt"}),
    );
    // Adjacent groups merge: no separator.
    assert_eq!(
        outcome(&user),
        ok(format!(
            "{a}-1-l1\n{a}:2:hit2\n{a}-3-l3\n{a}-4-l4\n{a}-5-l5\n{a}-6-l6\n{a}-7-l7\n{a}:8:hit8"
        ))
    );
    // Context applies to content mode only.
    let user = c.call(
        "Grep",
        &json!({"pattern": "hit", "output_mode": "count", "-C": 3}),
    );
    assert_eq!(outcome(&user), ok(format!("{a}:2\n{b}:1")));
    c.finish();
}

/// `glob` and `type` narrow the files (never bringing back an ignored one); an unknown type
/// is an error naming it; `multiline` lets a match span lines.
#[test]
fn grep_filters_and_multiline() {
    let mut c = Coding::new("grep-filters", &[]);
    put(&c.cwd, ".git/config", "needle\n", 1);
    put(&c.cwd, ".gitignore", "skip.py\n", 1);
    put(&c.cwd, "src/a.rs", "needle\nfoo\nbar\n", 3);
    put(&c.cwd, "b.py", "needle\n", 2);
    put(&c.cwd, "skip.py", "needle\n", 1);
    let (a, b) = (abs(&c, "src/a.rs"), abs(&c, "b.py"));
    let q = |extra: serde_json::Value| {
        let mut v = json!({"pattern": "needle"});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    assert_eq!(
        outcome(&c.call("Grep", &q(json!({})))),
        ok(format!("{b}\n{a}"))
    );
    assert_eq!(
        outcome(&c.call("Grep", &q(json!({"type": "rust"})))),
        ok(a.clone())
    );
    assert_eq!(
        outcome(&c.call("Grep", &q(json!({"glob": "*.py"})))),
        ok(b.clone())
    );
    assert_eq!(
        outcome(&c.call("Grep", &q(json!({"glob": "src/*.rs"})))),
        ok(a.clone())
    );
    assert_eq!(
        outcome(&c.call("Grep", &q(json!({"type": "nope"})))),
        err("unknown file type \"nope\"")
    );
    let multi = json!({"pattern": "foo.bar", "output_mode": "content"});
    assert_eq!(outcome(&c.call("Grep", &multi)), ok("No matches found"));
    let multi = json!({"pattern": "foo.bar", "output_mode": "content", "multiline": true});
    assert_eq!(
        outcome(&c.call("Grep", &multi)),
        ok(format!("{a}:2:foo\n{a}:3:bar"))
    );
    c.finish();
}

/// `offset` skips output lines, then `head_limit` keeps them: at the number of lines no
/// note; one fewer, the note; 0 is no limit; an offset past the end leaves nothing.
#[test]
fn grep_head_limit_and_offset_at_their_edges() {
    let mut c = Coding::new("grep-limit", &[]);
    put(&c.cwd, "f.txt", "m1\nm2\nm3\nm4\nm5\n", 1);
    let f = abs(&c, "f.txt");
    let all: Vec<String> = (1..=5).map(|k| format!("{f}:{k}:m{k}")).collect();
    let q = |limit: u64, offset: u64| json!({"pattern": "m", "output_mode": "content", "head_limit": limit, "offset": offset});
    assert_eq!(outcome(&c.call("Grep", &q(5, 0))), ok(all.join("\n")));
    let user = c.call("Grep", &q(4, 0));
    assert_eq!(
        outcome(&user),
        ok(format!(
            "{}\n(results limited to 4 lines; use offset to see more)",
            all[..4].join("\n")
        ))
    );
    assert_eq!(user["tool_use_result"]["appliedLimit"], 4);
    let user = c.call("Grep", &q(1, 3));
    assert_eq!(
        outcome(&user),
        ok(format!(
            "{}\n(results limited to 1 lines; use offset to see more)",
            all[3]
        ))
    );
    assert_eq!(user["tool_use_result"]["appliedOffset"], 3);
    assert_eq!(outcome(&c.call("Grep", &q(0, 4))), ok(all[4].clone()));
    assert_eq!(outcome(&c.call("Grep", &q(1, 4))), ok(all[4].clone()));
    assert_eq!(outcome(&c.call("Grep", &q(0, 5))), ok(""));
    c.finish();
}

/// A binary file (a NUL byte) is skipped, in a walk and when `path` names it.
#[test]
fn grep_skips_binary_files() {
    let mut c = Coding::new("grep-binary", &[]);
    put(&c.cwd, "text.txt", "needle\n", 1);
    put(&c.cwd, "bin.dat", "needle\n\0\x01\x02", 1);
    let t = abs(&c, "text.txt");
    assert_eq!(
        outcome(&c.call("Grep", &json!({"pattern": "needle"}))),
        ok(t)
    );
    assert_eq!(
        outcome(&c.call(
            "Grep",
            &json!({"pattern": "needle", "path": "bin.dat", "output_mode": "content"})
        )),
        ok("No matches found")
    );
    c.finish();
}

/// The text result is capped at 30,000 bytes with `Bash`'s marker; at exactly 30,000 it is
/// whole.
#[test]
fn grep_caps_its_text_at_30000_bytes() {
    let mut c = Coding::new("grep-cap", &[]);
    let f = abs(&c, "big.txt");
    // Each output line `<f>:<n>:<pad>`; size the lines so that 300 of them exceed the cap.
    let body: String = (1..=300)
        .map(|k| format!("x{}\n", "y".repeat(120 + k % 3)))
        .collect();
    put(&c.cwd, "big.txt", &body, 1);
    let q = json!({"pattern": "x", "output_mode": "content", "head_limit": 0});
    let (text, is_error) = outcome(&c.call("Grep", &q));
    assert!(!is_error);
    let marker = "\n[output truncated at 30000 bytes]";
    assert!(text.ends_with(marker), "{}", &text[text.len() - 80..]);
    assert_eq!(text.len() - marker.len(), 30_000);
    // One line exactly filling the cap (no marker).
    let head = format!("{f}:1:");
    let exact = format!("{}\n", "z".repeat(30_000 - head.len()));
    put(&c.cwd, "big.txt", &exact, 1);
    let (text, _) = outcome(&c.call("Grep", &json!({"pattern": "z", "output_mode": "content"})));
    assert_eq!(text.len(), 30_000);
    assert!(!text.contains("truncated"));
    c.finish();
}

/// Grep keeps only the files that give the first `offset + head_limit` lines (pruned per
/// walker thread, then merged): over 240 files in 12 directories, every window of each mode
/// equals the same slice of the unlimited output, and the counts stay those of all matches.
#[test]
fn grep_windows_over_many_files_equal_slices_of_the_whole() {
    let mut c = Coding::new("grep-windows", &[]);
    for d in 0..12 {
        for f in 0..20 {
            // 1 to 3 matching lines, with a non-matching line between for context groups.
            let n = 1 + (d + f) % 3;
            let body: String = (0..n).map(|k| format!("hit {k}\nfill\nfill\n")).collect();
            put(
                &c.cwd,
                &format!("d{d:02}/f{f:02}.txt"),
                &body,
                (d * 20 + f) as u64 % 7,
            );
        }
    }
    for mode in [
        json!({"output_mode": "files_with_matches"}),
        json!({"output_mode": "count"}),
        json!({"output_mode": "content"}),
        json!({"output_mode": "content", "-A": 1}),
    ] {
        let q = |limit: u64, offset: u64| {
            let mut q = mode.clone();
            q["pattern"] = json!("hit");
            q["head_limit"] = json!(limit);
            q["offset"] = json!(offset);
            q
        };
        // The whole output from `tool_use_result` (the text is capped at 30,000 bytes).
        let whole = c.call("Grep", &q(0, 0));
        let w = &whole["tool_use_result"];
        let all: Vec<&str> = match w["content"].as_str() {
            Some(content) => content.split('\n').collect(),
            None => w["filenames"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect(),
        };
        assert!(all.len() >= 240, "{mode}: {} lines", all.len());
        for (limit, offset) in [(1, 0), (7, 0), (5, 3), (50, 101), (3, all.len() as u64 - 2)] {
            let user = c.call("Grep", &q(limit, offset));
            let from = (offset as usize).min(all.len());
            let to = (from + limit as usize).min(all.len());
            let mut want = all[from..to].join("\n");
            if all.len() - from > limit as usize {
                want.push_str(&format!(
                    "\n(results limited to {limit} lines; use offset to see more)"
                ));
            }
            assert_eq!(
                outcome(&user),
                ok(want),
                "{mode} limit {limit} offset {offset}"
            );
            let r = &user["tool_use_result"];
            assert_eq!(
                r["numFiles"],
                if mode["output_mode"] == "files_with_matches" {
                    json!(to - from)
                } else {
                    w["numFiles"].clone()
                }
            );
            assert_eq!(r["numMatches"], w["numMatches"]);
        }
    }
    c.finish();
}
