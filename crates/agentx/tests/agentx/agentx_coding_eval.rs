//! Black-box: PROFILE §17's evaluation per tool (read-only `Glob`/`Grep` inside the cwd run
//! without a prompt, outside they are asked or, in `plan`, allowed; `Edit` as `Write`;
//! `TodoWrite` always allowed), the §15 tool options over the new names, the default system
//! message as `!system` shows it, and the todo list across `--resume`.

use serde_json::{json, Value};

use crate::harness;

use harness::*;

/// The `user` records that carry a `tool_result`, in order.
fn tool_users(t: &[Value]) -> impl Iterator<Item = &Value> {
    t.iter()
        .filter(|r| label(r).starts_with("user:tool_result"))
}

/// The only (or first) `user` record carrying a `tool_result`.
fn tool_user(t: &[Value]) -> &Value {
    tool_users(t).next().expect("a tool_result")
}

fn results(t: &[Value]) -> Vec<(String, bool)> {
    tool_users(t).map(crate::agentx_edit::outcome).collect()
}

/// A home with the session's cwd `work` in it (canonical), holding `f.txt`.
fn work_home(tag: &str) -> (TempDir, std::path::PathBuf) {
    let home = TempDir::new(tag);
    let cwd = home.path().join("work");
    std::fs::create_dir(&cwd).unwrap();
    std::fs::write(cwd.join("f.txt"), "x\n").unwrap();
    let cwd = std::fs::canonicalize(cwd).unwrap();
    (home, cwd)
}

/// Answers `prompts` permission requests with a denial "no"; their descriptions, sorted
/// (they open at the same time).
fn deny_prompts(a: &mut Agentx, prompts: usize) -> Vec<String> {
    let mut descriptions = Vec::new();
    for _ in 0..prompts {
        let upto = a.until(is_permission_request);
        let req = upto.last().unwrap();
        descriptions.push(req["request"]["description"].as_str().unwrap().to_owned());
        a.send(&deny(req["request_id"].as_str().unwrap(), "no"));
    }
    descriptions.sort();
    descriptions
}

/// Runs one message of `!tool` lines in `mode`, denying every prompt with "no"; returns the
/// prompts' descriptions (sorted: they open at the same time) and the results in block order.
fn run_mode(mode: &str, lines: &str, prompts: usize) -> (Vec<String>, Vec<(String, bool)>) {
    let (home, cwd) = work_home("coding-eval");
    let mut a = Agentx::session(
        home.path(),
        &["--permission-mode", mode, "--cwd", cwd.to_str().unwrap()],
    );
    a.say(lines);
    let descriptions = deny_prompts(&mut a, prompts);
    a.turn();
    let all = a.seen.clone();
    assert_eq!(
        all.iter().filter(|r| is_permission_request(r)).count(),
        prompts,
        "{mode}: exactly these prompts"
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    (descriptions, results(&all))
}

const CALLS: &str = concat!(
    "!tool Glob {\"pattern\":\"*.txt\"}\n",
    "!tool Grep {\"pattern\":\"x\",\"path\":\"f.txt\"}\n",
    "!tool Glob {\"pattern\":\"*.none\",\"path\":\"..\"}\n",
    "!tool Grep {\"pattern\":\"zzz\",\"path\":\"/etc/hostname\"}\n",
    "!tool TodoWrite {\"todos\":[]}\n",
    "!tool Edit {\"file_path\":\"new.txt\",\"old_string\":\"\",\"new_string\":\"n\"}\n",
    "!tool Edit {\"file_path\":\"../out.txt\",\"old_string\":\"\",\"new_string\":\"o\"}",
);

fn ok_inside(r: &[(String, bool)]) {
    assert!(r[0].0.ends_with("/work/f.txt") && !r[0].1, "{r:?}");
    assert!(r[1].0.ends_with("/work/f.txt") && !r[1].1, "{r:?}");
    assert_eq!(
        r[4],
        (
            "todo list updated: 0 pending, 0 in progress, 0 completed".into(),
            false
        )
    );
}

/// `default`: read-only tools inside run unasked, outside they are asked (`Glob <pattern>`,
/// `Grep <pattern>`); `Edit` is asked inside and out (`Edit <file_path>`); `TodoWrite` runs.
#[test]
fn default_mode_asks_for_edits_and_for_searches_outside() {
    let (asked, r) = run_mode("default", CALLS, 4);
    assert_eq!(
        asked,
        ["Edit ../out.txt", "Edit new.txt", "Glob *.none", "Grep zzz"]
    );
    ok_inside(&r);
    for i in [2, 3, 5, 6] {
        assert_eq!(r[i], ("no".to_string(), true));
    }
}

/// `acceptEdits`: `Edit` inside runs unasked; outside it and the searches outside are asked.
#[test]
fn accept_edits_mode_allows_edits_inside() {
    let (asked, r) = run_mode("acceptEdits", CALLS, 3);
    assert_eq!(asked, ["Edit ../out.txt", "Glob *.none", "Grep zzz"]);
    ok_inside(&r);
    assert!(r[5].0.starts_with("edited ") && !r[5].1, "{r:?}");
}

/// `plan`: every read-only call runs (outside too), `TodoWrite` runs, `Edit` is denied.
#[test]
fn plan_mode_runs_searches_and_todos_and_denies_edits() {
    let (asked, r) = run_mode("plan", CALLS, 0);
    assert!(asked.is_empty());
    ok_inside(&r);
    assert_eq!(r[2], ("No files found".to_string(), false));
    assert_eq!(r[3], ("No files found".to_string(), false));
    for i in [5, 6] {
        assert_eq!(r[i], ("plan mode: no changes".to_string(), true));
    }
}

const SDK: [&str; 5] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
];

fn sdk(home: &TempDir, extra: &[&str]) -> Agentx {
    let mut args: Vec<String> = SDK.iter().map(|s| s.to_string()).collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--cwd".to_string(), home.path().display().to_string()]);
    Agentx::spawn(home.path(), &args)
}

/// PROFILE §15 over the new names: `--tools` narrows (system/init keeps §17's order),
/// `--disallowedTools Edit` removes it, `--allowedTools Edit` runs it unasked.
#[test]
fn tool_options_apply_to_the_coding_tools() {
    let home = TempDir::new("coding-options");
    let mut a = sdk(
        &home,
        &[
            "--tools",
            "TodoWrite,Grep,Read,Edit",
            "--disallowedTools",
            "Edit",
        ],
    );
    a.say("!tool Edit {\"file_path\":\"a\",\"old_string\":\"\",\"new_string\":\"b\"}");
    let t = a.turn();
    let init = t.iter().find(|r| r["subtype"] == "init").unwrap();
    assert_eq!(init["tools"], json!(["Read", "Grep", "TodoWrite"]));
    assert_eq!(results(&t), [("unknown tool Edit".to_string(), true)]);
    a.finish();
    let mut a = sdk(&home, &["--allowedTools", "Read,Edit"]);
    a.say("!tool Edit {\"file_path\":\"a.txt\",\"old_string\":\"\",\"new_string\":\"b\"}");
    let t = a.turn();
    assert!(!t.iter().any(is_permission_request));
    assert!(results(&t)[0].0.starts_with("edited "), "{t:?}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("a.txt")).unwrap(),
        "b"
    );
    a.finish();
}

fn system_text(home: &TempDir, extra: &[&str]) -> String {
    let mut a = sdk(home, extra);
    a.say("!system");
    let t = a.turn();
    let r = t.iter().find(|r| is_result(r)).unwrap()["result"]
        .as_str()
        .unwrap()
        .to_owned();
    a.finish();
    r
}

/// The default system message (no prompt set; the SDKs' `claude_code` preset sets none) with
/// its environment block; `--append-system-prompt` adds to it; an explicit prompt replaces
/// it, an empty one too.
#[test]
fn the_default_system_message_and_what_replaces_it() {
    let home = TempDir::new("coding-system");
    let cwd = std::fs::canonicalize(home.path()).unwrap();
    let text = system_text(&home, &[]);
    assert!(
        text.starts_with("system: You are agentx, a coding agent"),
        "{text}"
    );
    assert!(text.contains(&format!("Working directory: {}\n", cwd.display())));
    assert!(text.contains("Is a git repository: no\n"));
    let appended = system_text(&home, &["--append-system-prompt", "Extra rule."]);
    assert!(appended.starts_with("system: You are agentx"));
    assert!(appended.ends_with("\n\nExtra rule."), "{appended}");
    assert_eq!(
        system_text(&home, &["--system-prompt", "Be terse."]),
        "system: Be terse."
    );
    assert_eq!(system_text(&home, &["--system-prompt="]), "system: (none)");
    std::fs::create_dir(home.path().join(".git")).unwrap();
    assert!(system_text(&home, &[]).contains("Is a git repository: yes\n"));
}

/// The todo list survives `--resume`: the next `TodoWrite` reports it as `oldTodos`.
#[test]
fn the_todo_list_survives_resume() {
    let home = TempDir::new("coding-todo");
    let list = json!([
        {"content": "write tests", "status": "completed", "activeForm": "writing tests"},
        {"content": "ship", "status": "in_progress", "activeForm": "shipping"}
    ]);
    let mut a = Agentx::session(home.path(), &[]);
    a.say(&format!("!tool TodoWrite {}", json!({ "todos": list })));
    let t = a.turn();
    assert_eq!(
        results(&t),
        [(
            "todo list updated: 0 pending, 1 in progress, 1 completed".to_string(),
            false
        )]
    );
    let user = tool_user(&t);
    assert_eq!(
        user["tool_use_result"],
        json!({"oldTodos": [], "newTodos": list})
    );
    // A failed TodoWrite does not count.
    a.say("!tool TodoWrite {\"todos\":[{\"content\":\"x\",\"status\":\"done\",\"activeForm\":\"x\"}]}");
    let t = a.turn();
    assert_eq!(
        results(&t),
        [(
            "invalid input for TodoWrite: todos[0]: status must be one of pending, in_progress, completed"
                .to_string(),
            true
        )]
    );
    let sid = t.iter().find(|r| is_result(r)).unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    a.finish();
    let mut b = Agentx::session(home.path(), &["--resume", &sid]);
    b.say("!tool TodoWrite {\"todos\":[]}");
    let t = b.turn();
    let user = tool_user(&t);
    assert_eq!(
        user["tool_use_result"],
        json!({"oldTodos": list, "newTodos": []})
    );
    b.finish();
}

/// `TodoWrite`'s limits: 100 items accepted, 101 refused; empty `content` refused.
#[test]
fn todo_write_limits() {
    let home = TempDir::new("coding-todo-limits");
    let item = json!({"content": "c", "status": "pending", "activeForm": "a"});
    let mut a = Agentx::session(home.path(), &[]);
    a.say(&format!(
        "!tool TodoWrite {}\n!tool TodoWrite {}\n!tool TodoWrite {}",
        json!({ "todos": vec![item.clone(); 100] }),
        json!({ "todos": vec![item.clone(); 101] }),
        json!({"todos": [{"content": "", "status": "pending", "activeForm": "a"}]}),
    ));
    let t = a.turn();
    assert_eq!(
        results(&t),
        [
            (
                "todo list updated: 100 pending, 0 in progress, 0 completed".to_string(),
                false
            ),
            (
                "invalid input for TodoWrite: todos must have at most 100 items".to_string(),
                true
            ),
            (
                "invalid input for TodoWrite: todos[0]: content must not be empty".to_string(),
                true
            ),
        ]
    );
    a.finish();
}

/// PROFILE §17: "inside" is the canonical path's: a symbolic link inside the cwd that points
/// out is outside, so reading or searching through it is asked in `default`; a link that
/// stays inside is inside.
#[test]
fn a_link_inside_the_cwd_that_points_out_is_outside() {
    let (home, cwd) = work_home("coding-link");
    let out = home.path().join("elsewhere");
    std::fs::create_dir_all(cwd.join("real")).unwrap();
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("secret.txt"), "s\n").unwrap();
    std::fs::write(cwd.join("real/ok.txt"), "k\n").unwrap();
    std::os::unix::fs::symlink(&out, cwd.join("out")).unwrap();
    std::os::unix::fs::symlink(cwd.join("real"), cwd.join("in")).unwrap();
    let mut a = Agentx::session(home.path(), &["--cwd", cwd.to_str().unwrap()]);
    a.say(concat!(
        "!tool Read {\"file_path\":\"in/ok.txt\"}\n",
        "!tool Read {\"file_path\":\"out/secret.txt\"}\n",
        "!tool Grep {\"pattern\":\"s\",\"path\":\"out\"}",
    ));
    let asked = deny_prompts(&mut a, 2);
    a.turn();
    assert_eq!(asked, ["Grep s", "Read out/secret.txt"]);
    let r = results(&a.seen);
    assert_eq!(r[0], ("     1\tk\n".to_string(), false));
    assert_eq!(r[1], ("no".to_string(), true));
    assert_eq!(r[2], ("no".to_string(), true));
    assert_eq!(
        a.seen.iter().filter(|v| is_permission_request(v)).count(),
        2
    );
    a.finish();
}

/// PROFILE §17's fallbacks at the SDK profile's 1 MiB line: a Read whose record with the full
/// `tool_use_result` would pass it keeps the numbered text and sets `file.content` to null;
/// one whose text alone passes it drops `tool_use_result` and cuts the text with a marker.
#[test]
fn tool_use_result_gives_way_before_the_tool_result_at_the_line_limit() {
    let home = TempDir::new("coding-limit");
    let line = |n: usize| format!("{}\n", "r".repeat(n));
    std::fs::write(home.path().join("mid.txt"), line(399).repeat(2_000)).unwrap();
    std::fs::write(home.path().join("big.txt"), line(599).repeat(2_000)).unwrap();
    let mut a = sdk(&home, &[]);
    a.say("!tool Read {\"file_path\":\"mid.txt\"}");
    let t = a.turn();
    let user = tool_user(&t);
    let (text, is_error) = crate::agentx_edit::outcome(user);
    assert!(!is_error);
    assert_eq!(text.lines().count(), 2_000);
    assert_eq!(user["tool_use_result"]["file"]["content"], Value::Null);
    assert_eq!(user["tool_use_result"]["file"]["numLines"], 2_000);
    a.say("!tool Read {\"file_path\":\"big.txt\"}");
    let t = a.turn();
    let user = tool_user(&t);
    assert!(user.get("tool_use_result").is_none(), "dropped");
    let (text, _) = crate::agentx_edit::outcome(user);
    assert!(
        text.len() < 1_048_576 && text.len() > 1_000_000,
        "{}",
        text.len()
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert!(done
        .stdout
        .split(|b| *b == b'\n')
        .all(|l| l.len() <= 1_048_576));
}

/// PROFILE §17: a built-in tool's failed call carries `tool_use_result`, exactly its error
/// text as a JSON string, whether it failed running, on invalid input or by a denial (the
/// host's "no"); an unknown tool and a built-in one `--tools` does not offer carry none.
#[test]
fn failed_calls_carry_their_error_text_and_unknown_tools_none() {
    let home = TempDir::new("coding-failed");
    std::fs::write(home.path().join("f.txt"), "x\n").unwrap();
    let cwd = std::fs::canonicalize(home.path()).unwrap();
    let mut a = sdk(
        &home,
        &["--tools", "Read,Write", "--permission-prompt-tool", "stdio"],
    );
    a.say(concat!(
        "!tool Read {\"file_path\":\"missing.txt\"}\n",
        "!tool Read {\"file_path\":\"f.txt\",\"nope\":1}\n",
        "!tool Write {\"file_path\":\"w.txt\",\"content\":\"w\"}\n",
        "!tool Frob {}\n",
        "!tool Edit {\"file_path\":\"f.txt\",\"old_string\":\"x\",\"new_string\":\"y\"}",
    ));
    assert_eq!(deny_prompts(&mut a, 1), ["Write w.txt"]);
    a.turn();
    let got: Vec<(String, bool, Option<Value>)> = tool_users(&a.seen)
        .map(|u| {
            let (text, is_error) = crate::agentx_edit::outcome(u);
            (text, is_error, u.get("tool_use_result").cloned())
        })
        .collect();
    let missing = format!(
        "cannot read {}: not found",
        cwd.join("missing.txt").display()
    );
    let failed = |t: &str| (t.to_string(), true, Some(json!(t)));
    let unknown = |t: &str| (t.to_string(), true, None);
    assert_eq!(
        got,
        [
            failed(&missing),
            failed("invalid input for Read: unknown member"),
            failed("no"),
            unknown("unknown tool Frob"),
            unknown("unknown tool Edit"),
        ]
    );
    a.finish();
}

/// PROFILE §17 `Bash` `{stdout, stderr, interrupted}`: each stream on its own; the text is
/// stdout then stderr whatever the order written (PROFILE §10); a nonzero exit is a failed
/// call, its `tool_use_result` the error text.
#[test]
fn bash_tool_use_result_keeps_stdout_and_stderr_apart() {
    let mut c = crate::agentx_edit::Coding::new("coding-bash", &[]);
    let user = c.call(
        "Bash",
        &json!({"command": "echo err >&2; echo out; echo more"}),
    );
    assert_eq!(
        crate::agentx_edit::outcome(&user),
        ("out\nmore\nerr\nexit code: 0".to_string(), false)
    );
    assert_eq!(
        user["tool_use_result"],
        json!({"stdout": "out\nmore\n", "stderr": "err\n", "interrupted": false})
    );
    let user = c.call(
        "Bash",
        &json!({"command": "echo out; echo err >&2; exit 3"}),
    );
    let text = "out\nerr\nexit code: 3";
    assert_eq!(crate::agentx_edit::outcome(&user), (text.to_string(), true));
    assert_eq!(user["tool_use_result"], json!(text));
    c.finish();
}
