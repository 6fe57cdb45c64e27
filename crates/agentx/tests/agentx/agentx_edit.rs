//! Black-box: PROFILE §17's `Edit`, read-before-write (`Edit` and `Write`) and the
//! `tool_use_result` of `Read`, `Write` and `Edit` through the real binary, each call one turn
//! of the echo model's `!tool` directive, asserted on the exact `tool_result` text, the file's
//! bytes and mode, and the structured result (its `structuredPatch` applied to
//! `originalFile` gives the new file).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness;

use harness::*;
use serde_json::{json, Value};

/// A session in `bypassPermissions` (evaluation is tested elsewhere) with its cwd `work`.
pub(crate) struct Coding {
    pub(crate) a: Agentx,
    pub(crate) cwd: PathBuf,
    _home: TempDir,
}

impl Coding {
    pub(crate) fn new(tag: &str, extra: &[&str]) -> Coding {
        let home = TempDir::new(tag);
        let cwd = home.path().join("work");
        std::fs::create_dir(&cwd).unwrap();
        let cwd = std::fs::canonicalize(cwd).unwrap();
        let mut args = vec!["--permission-mode", "bypassPermissions"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--cwd", cwd.to_str().unwrap()]);
        let a = Agentx::session(home.path(), &args);
        Coding {
            a,
            cwd,
            _home: home,
        }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.cwd.join(name)
    }

    /// One `!tool NAME INPUT` turn: its `user` record carrying the `tool_result`.
    pub(crate) fn call(&mut self, tool: &str, input: &Value) -> Value {
        self.a.say(&format!("!tool {tool} {input}"));
        let t = self.a.turn();
        let users: Vec<&Value> = t
            .iter()
            .filter(|r| label(r).starts_with("user:tool_result"))
            .collect();
        assert_eq!(users.len(), 1, "{t:?}");
        users[0].clone()
    }

    pub(crate) fn finish(self) {
        let done = self.a.finish();
        assert_eq!(done.status, Some(0));
        done.assert_valid_output();
    }
}

/// The `tool_result` text and its `is_error`.
pub(crate) fn outcome(user: &Value) -> (String, bool) {
    let block = &user["message"]["content"][0];
    (
        block["content"].as_str().unwrap().to_owned(),
        block["is_error"] == true,
    )
}

pub(crate) fn ok(text: impl Into<String>) -> (String, bool) {
    (text.into(), false)
}

pub(crate) fn err(text: impl Into<String>) -> (String, bool) {
    (text.into(), true)
}

/// `structuredPatch` applied to `original` (lines split on `\n`; a hunk's lines carry any
/// `\r`): the new text.
fn apply(original: &str, patch: &Value) -> String {
    let ends_nl = original.ends_with('\n');
    let mut old: Vec<&str> = original.split('\n').collect();
    if ends_nl {
        old.pop();
    }
    let mut out: Vec<String> = Vec::new();
    let mut at = 0usize;
    for hunk in patch.as_array().unwrap() {
        let start = hunk["oldStart"].as_u64().unwrap() as usize;
        let start = if hunk["oldLines"] == 0 {
            start
        } else {
            start - 1
        };
        out.extend(old[at..start].iter().map(|s| s.to_string()));
        at = start;
        for line in hunk["lines"].as_array().unwrap() {
            let line = line.as_str().unwrap();
            let (sign, text) = line.split_at(1);
            match sign {
                " " => {
                    assert_eq!(old[at], text);
                    out.push(text.to_string());
                    at += 1;
                }
                "-" => {
                    assert_eq!(old[at], text);
                    at += 1;
                }
                "+" => out.push(text.to_string()),
                other => panic!("line prefix {other:?}"),
            }
        }
    }
    out.extend(old[at..].iter().map(|s| s.to_string()));
    let mut text = out.join("\n");
    if ends_nl {
        text.push('\n');
    }
    text
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// A unique replacement keeps CRLF endings, the missing final newline and the file's mode;
/// the text is `edited <abs>: 1 replacement` and the numbered region; `tool_use_result` is
/// the SDKs' `FileEditOutput` and its patch rebuilds the new file.
#[test]
fn edit_keeps_crlf_the_missing_final_newline_and_the_mode() {
    let mut c = Coding::new("edit-crlf", &[]);
    let f = c.path("f.txt");
    let original = "one\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix\r\nseven\r\neight\r\nnine";
    std::fs::write(&f, original).unwrap();
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o751)).unwrap();
    let read = c.call(
        "Read",
        &json!({"file_path": "f.txt", "offset": 2, "limit": 1}),
    );
    assert_eq!(outcome(&read), ok("     2\ttwo\n"));
    assert_eq!(
        read["tool_use_result"],
        json!({"type": "text", "file": {"filePath": f.to_str().unwrap(), "content": "two\r",
            "numLines": 1, "startLine": 2, "totalLines": 9}})
    );
    let user = c.call(
        "Edit",
        &json!({"file_path": "f.txt", "old_string": "five", "new_string": "FIVE\r\n5"}),
    );
    let fp = f.to_str().unwrap();
    assert_eq!(
        outcome(&user),
        ok(format!(
            "edited {fp}: 1 replacement\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tFIVE\n     6\t5\n     7\tsix\n     8\tseven\n     9\teight\n"
        ))
    );
    let new = "one\r\ntwo\r\nthree\r\nfour\r\nFIVE\r\n5\r\nsix\r\nseven\r\neight\r\nnine";
    assert_eq!(std::fs::read_to_string(&f).unwrap(), new);
    assert_eq!(mode(&f), 0o751);
    let r = &user["tool_use_result"];
    assert_eq!(
        r,
        &json!({"filePath": fp, "oldString": "five", "newString": "FIVE\r\n5",
            "originalFile": original,
            "structuredPatch": [{"oldStart": 2, "oldLines": 7, "newStart": 2, "newLines": 8,
                "lines": [" two\r", " three\r", " four\r", "-five\r", "+FIVE\r", "+5\r",
                    " six\r", " seven\r", " eight\r"]}],
            "userModified": false, "replaceAll": false})
    );
    assert_eq!(apply(original, &r["structuredPatch"]), new);
    // A second edit needs no new read: the process wrote the file.
    let user = c.call(
        "Edit",
        &json!({"file_path": fp, "old_string": "nine", "new_string": "nine\n"}),
    );
    assert!(!outcome(&user).1);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), format!("{new}\n"));
    // Only the final newline changed: the hunk names the line (the patch format carries no
    // "no newline" marker, PROFILE §17).
    assert_eq!(
        user["tool_use_result"]["structuredPatch"][0]["lines"],
        json!([" six\r", " seven\r", " eight\r", "-nine", "+nine"])
    );
    let dir: Vec<_> = std::fs::read_dir(&c.cwd).unwrap().collect();
    assert_eq!(dir.len(), 1, "no temporary file is left");
    c.finish();
}

/// `replace_all`, `old_string` not found, N occurrences without `replace_all`, the same old
/// and new, with §17's texts; a failed call's `tool_use_result` is its error text; the
/// changed region is cut to 40 lines.
#[test]
fn edit_occurrences_replace_all_and_the_error_texts() {
    let mut c = Coding::new("edit-errors", &[]);
    let f = c.path("g.txt");
    let fp = f.to_str().unwrap().to_owned();
    let body: String = (1..=60).map(|k| format!("x{k} a\n")).collect();
    std::fs::write(&f, &body).unwrap();
    c.call("Read", &json!({"file_path": "g.txt", "limit": 1}));
    let same = c.call(
        "Edit",
        &json!({"file_path": "g.txt", "old_string": "a", "new_string": "a"}),
    );
    assert_eq!(
        outcome(&same),
        err("old_string and new_string are the same")
    );
    assert_eq!(
        same["tool_use_result"],
        json!("old_string and new_string are the same")
    );
    let missing = c.call(
        "Edit",
        &json!({"file_path": "g.txt", "old_string": "zz", "new_string": "y"}),
    );
    assert_eq!(
        outcome(&missing),
        err(format!("old_string not found in {fp}"))
    );
    let many = c.call(
        "Edit",
        &json!({"file_path": "g.txt", "old_string": " a\n", "new_string": " b\n"}),
    );
    assert_eq!(
        outcome(&many),
        err(format!(
            "old_string occurs 60 times in {fp}; add context to make it unique or set replace_all"
        ))
    );
    let empty = c.call(
        "Edit",
        &json!({"file_path": "g.txt", "old_string": "", "new_string": "b"}),
    );
    assert_eq!(outcome(&empty), err("old_string is empty"));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), body);
    let all = c.call(
        "Edit",
        &json!({"file_path": "g.txt", "old_string": " a\n", "new_string": " b\n", "replace_all": true}),
    );
    let shown: String = (1..=40).map(|k| format!("{k:>6}\tx{k} b\n")).collect();
    assert_eq!(
        outcome(&all),
        ok(format!("edited {fp}: 60 replacements\n{shown}"))
    );
    assert_eq!(all["tool_use_result"]["replaceAll"], true);
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        body.replace(" a\n", " b\n")
    );
    c.finish();
}

/// An empty `old_string` creates a missing file with no read; its patch is built from the
/// empty file.
#[test]
fn edit_with_an_empty_old_string_creates_the_file() {
    let mut c = Coding::new("edit-create", &[]);
    let user = c.call(
        "Edit",
        &json!({"file_path": "new.txt", "old_string": "", "new_string": "a\nb\n"}),
    );
    let fp = c.path("new.txt");
    let fp = fp.to_str().unwrap();
    assert_eq!(
        outcome(&user),
        ok(format!(
            "edited {fp}: 1 replacement\n     1\ta\n     2\tb\n"
        ))
    );
    assert_eq!(
        std::fs::read_to_string(c.path("new.txt")).unwrap(),
        "a\nb\n"
    );
    assert_eq!(
        user["tool_use_result"]["structuredPatch"],
        json!([{"oldStart": 0, "oldLines": 0, "newStart": 1, "newLines": 2, "lines": ["+a", "+b"]}])
    );
    assert_eq!(user["tool_use_result"]["originalFile"], "");
    c.finish();
}

/// Read-before-write: `Edit` and `Write` of an existing file fail with `read <abs> first`
/// until a `Read` (partial counts); a change on disk since then (same size, new bytes) fails
/// with `changed on disk`; a new file needs no read; `Write` reports `create`/`update` with
/// its patch.
#[test]
fn read_before_write_for_edit_and_write() {
    let mut c = Coding::new("edit-rbw", &[]);
    let f = c.path("h.txt");
    let fp = f.to_str().unwrap().to_owned();
    std::fs::write(&f, "alpha\nbeta\n").unwrap();
    let edit = json!({"file_path": "h.txt", "old_string": "beta", "new_string": "gamma"});
    assert_eq!(
        outcome(&c.call("Edit", &edit)),
        err(format!("read {fp} first"))
    );
    assert_eq!(
        outcome(&c.call("Write", &json!({"file_path": "h.txt", "content": "x"}))),
        err(format!("read {fp} first"))
    );
    c.call(
        "Read",
        &json!({"file_path": "h.txt", "offset": 2, "limit": 1}),
    );
    std::fs::write(&f, "alpha\nbetA\n").unwrap();
    assert_eq!(
        outcome(&c.call("Edit", &edit)),
        err(format!(
            "{fp} changed on disk since it was read; read it again"
        ))
    );
    c.call("Read", &json!({"file_path": "h.txt"}));
    let edit = json!({"file_path": "h.txt", "old_string": "betA", "new_string": "gamma"});
    assert!(!outcome(&c.call("Edit", &edit)).1);
    let w = c.call(
        "Write",
        &json!({"file_path": "h.txt", "content": "alpha\ndelta\n"}),
    );
    assert_eq!(outcome(&w), ok(format!("wrote 12 bytes to {fp}")));
    assert_eq!(
        w["tool_use_result"],
        json!({"type": "update", "filePath": fp, "content": "alpha\ndelta\n",
            "structuredPatch": [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2,
                "lines": [" alpha", "-gamma", "+delta"]}],
            "originalFile": "alpha\ngamma\n"})
    );
    let created = c.call(
        "Write",
        &json!({"file_path": "new/../n.txt", "content": "z"}),
    );
    let np = c.path("n.txt");
    let np = np.to_str().unwrap();
    assert_eq!(outcome(&created), ok(format!("wrote 1 bytes to {np}")));
    assert_eq!(
        created["tool_use_result"],
        json!({"type": "create", "filePath": np, "content": "z", "structuredPatch": [],
            "originalFile": null})
    );
    c.finish();
}

/// The rule is per process: a resumed session reads again.
#[test]
fn read_before_write_is_per_process() {
    let home = TempDir::new("edit-resume");
    let f = home.path().join("r.txt");
    std::fs::write(&f, "one\n").unwrap();
    let fp = std::fs::canonicalize(&f).unwrap();
    let fp = fp.to_str().unwrap();
    let args = ["--permission-mode", "bypassPermissions"];
    let mut a = Agentx::session(home.path(), &args);
    a.say("!tool Read {\"file_path\":\"r.txt\"}");
    let t = a.turn();
    let sid = t.iter().find(|r| is_result(r)).unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    a.say("!tool Edit {\"file_path\":\"r.txt\",\"old_string\":\"one\",\"new_string\":\"two\"}");
    a.turn();
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "two\n");
    a.finish();
    let mut b = Agentx::session(
        home.path(),
        &["--permission-mode", "bypassPermissions", "--resume", &sid],
    );
    b.say("!tool Edit {\"file_path\":\"r.txt\",\"old_string\":\"two\",\"new_string\":\"three\"}");
    let t = b.turn();
    let user = t
        .iter()
        .find(|r| label(r).starts_with("user:tool_result"))
        .unwrap();
    assert_eq!(outcome(user), err(format!("read {fp} first")));
    let done = b.finish();
    assert_eq!(done.status, Some(0));
}

/// Closed inputs: an unknown member, a wrong type, a missing member are `invalid input for
/// Edit: …` with no prompt, in `default` mode too.
#[test]
fn edit_invalid_input_is_refused_without_a_prompt() {
    let home = TempDir::new("edit-invalid");
    let mut a = Agentx::session(home.path(), &[]);
    a.say(concat!(
        "!tool Edit {\"file_path\":\"a\",\"old_string\":\"x\"}\n",
        "!tool Edit {\"file_path\":\"a\",\"old_string\":\"x\",\"new_string\":\"y\",\"replace_all\":1}\n",
        "!tool Edit {\"file_path\":\"a\",\"old_string\":\"x\",\"new_string\":\"y\",\"z\":1}",
    ));
    let t = a.turn();
    assert!(!t.iter().any(is_permission_request));
    let got: Vec<(String, bool)> = t
        .iter()
        .filter(|r| label(r).starts_with("user:tool_result"))
        .map(outcome)
        .collect();
    assert_eq!(
        got,
        [
            err("invalid input for Edit: new_string is required"),
            err("invalid input for Edit: replace_all must be a boolean"),
            err("invalid input for Edit: unknown member"),
        ]
    );
    a.finish();
}
