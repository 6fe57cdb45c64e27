//! Black-box: PROFILE §10's tools and permission modes through the real binary, each asserted
//! on the exact `tool_result` text, the prompts written (or not) and the result's
//! `permission_denials`; and two §8 session edges (nothing written before the host's first
//! record; the replay echo mints a `uuid`).

use crate::harness;

use harness::*;
use serde_json::{json, Value};

/// The `tool_result` blocks of a turn, in order.
fn tool_results(t: &[Value]) -> Vec<Value> {
    t.iter()
        .filter(|r| label(r).starts_with("user:tool_result"))
        .map(|r| r["message"]["content"][0].clone())
        .collect()
}

/// The content and error flag of each `tool_result` block.
fn outcomes(t: &[Value]) -> Vec<(String, bool)> {
    tool_results(t)
        .iter()
        .map(|b| {
            (
                b["content"].as_str().unwrap_or_default().to_owned(),
                b["is_error"] == true,
            )
        })
        .collect()
}

/// Bash runs `/bin/sh -c` in the cwd; the exit code is reported (nonzero: an error); stdout
/// then stderr are the text, capped together at 30,000 bytes; `timeout_ms` ends the
/// command with an error.
#[test]
fn bash_runs_in_the_cwd_reports_its_exit_code_and_keeps_its_cap_and_timeout() {
    let home = TempDir::new("tools-bash");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    a.say(concat!(
        "!tool Bash {\"command\":\"pwd\"}\n",
        "!tool Bash {\"command\":\"echo out; echo err >&2; exit 7\"}\n",
        "!tool Bash {\"command\":\"head -c 30001 /dev/zero | tr '\\\\0' a\"}\n",
        "!tool Bash {\"command\":\"head -c 30000 /dev/zero | tr '\\\\0' a\"}\n",
        "!tool Bash {\"command\":\"sleep 30\",\"timeout_ms\":200}",
    ));
    let t = a.turn();
    let cwd = std::fs::canonicalize(home.path()).unwrap();
    let a30k = "a".repeat(30_000);
    assert_eq!(
        outcomes(&t),
        [
            (format!("{}\nexit code: 0", cwd.display()), false),
            ("out\nerr\nexit code: 7".to_owned(), true),
            (
                format!("{a30k}\n[output truncated at 30000 bytes]\nexit code: 0"),
                false
            ),
            (format!("{a30k}\nexit code: 0"), false),
            ("timed out after 200 ms".to_owned(), true),
        ]
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// Read numbers lines `cat -n` style; `offset` (from 1) and `limit` choose them; relative
/// paths resolve against `--cwd`.
#[test]
fn read_offset_and_limit_choose_the_lines() {
    let home = TempDir::new("tools-read");
    std::fs::write(home.path().join("notes.txt"), "a\nb\nc\nd\n").unwrap();
    let mut a = Agentx::session(home.path(), &[]);
    a.say(concat!(
        "!tool Read {\"file_path\":\"notes.txt\",\"offset\":2,\"limit\":2}\n",
        "!tool Read {\"file_path\":\"notes.txt\",\"offset\":4}\n",
        "!tool Read {\"file_path\":\"notes.txt\",\"limit\":1}",
    ));
    let t = a.turn();
    assert!(
        !t.iter().any(is_permission_request),
        "Read inside the cwd asks nothing"
    );
    assert_eq!(
        outcomes(&t),
        [
            ("     2\tb\n     3\tc\n".to_owned(), false),
            ("     4\td\n".to_owned(), false),
            ("     1\ta\n".to_owned(), false),
        ]
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// `acceptEdits` allows a Write inside the cwd without a prompt and asks for a Write outside
/// it and for Bash, with PERM-020's descriptions (`Write <file_path>`, `Bash: <command>`).
#[test]
fn accept_edits_writes_inside_the_cwd_and_asks_for_the_rest() {
    let home = TempDir::new("tools-accept");
    std::fs::create_dir(home.path().join("work")).unwrap();
    let cwd = home.path().join("work");
    let cwd_arg = cwd.to_str().unwrap();
    let mut a = Agentx::session(
        home.path(),
        &["--permission-mode", "acceptEdits", "--cwd", cwd_arg],
    );
    a.say(concat!(
        "!tool Write {\"file_path\":\"in.txt\",\"content\":\"yes\"}\n",
        "!tool Write {\"file_path\":\"../out.txt\",\"content\":\"no\"}\n",
        "!tool Bash {\"command\":\"echo hi\"}",
    ));
    let mut descriptions = Vec::new();
    for _ in 0..2 {
        let upto = a.until(is_permission_request);
        let req = upto.last().unwrap();
        descriptions.push(req["request"]["description"].as_str().unwrap().to_owned());
        a.send(&deny(req["request_id"].as_str().unwrap(), "not now"));
    }
    assert_eq!(descriptions, ["Write ../out.txt", "Bash: echo hi"]);
    let t = a.turn();
    let all: Vec<Value> = a.seen.clone();
    assert_eq!(
        outcomes(&all),
        [
            (
                format!(
                    "wrote 3 bytes to {}",
                    std::fs::canonicalize(&cwd)
                        .unwrap()
                        .join("in.txt")
                        .display()
                ),
                false
            ),
            ("not now".to_owned(), true),
            ("not now".to_owned(), true),
        ]
    );
    assert_eq!(std::fs::read_to_string(cwd.join("in.txt")).unwrap(), "yes");
    assert!(!home.path().join("out.txt").exists());
    let result = t.iter().find(|r| is_result(r)).unwrap();
    let denied: Vec<&str> = result["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(denied, ["Write", "Bash"]);
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// `plan` allows Read and denies the rest with `plan mode: no changes`, without a prompt; each
/// denial is an entry of the result's `permission_denials`.
#[test]
fn plan_mode_reads_and_denies_the_rest_without_a_prompt() {
    let home = TempDir::new("tools-plan");
    std::fs::write(home.path().join("notes.txt"), "a\n").unwrap();
    let mut a = Agentx::session(home.path(), &["--permission-mode", "plan"]);
    a.say(concat!(
        "!tool Read {\"file_path\":\"notes.txt\"}\n",
        "!tool Write {\"file_path\":\"x.txt\",\"content\":\"no\"}\n",
        "!tool Bash {\"command\":\"touch y.txt\"}",
    ));
    let t = a.turn();
    assert!(!t.iter().any(is_permission_request), "{t:?}");
    assert!(!t
        .iter()
        .any(|r| r["type"] == "system" && r["state"] == "requires_action"));
    assert_eq!(
        outcomes(&t),
        [
            ("     1\ta\n".to_owned(), false),
            ("plan mode: no changes".to_owned(), true),
            ("plan mode: no changes".to_owned(), true),
        ]
    );
    let result = t.iter().find(|r| is_result(r)).unwrap();
    let denials = result["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 2);
    assert_eq!(denials[0]["tool_name"], "Write");
    assert_eq!(
        denials[0]["tool_input"],
        json!({"file_path":"x.txt","content":"no"})
    );
    assert_eq!(denials[1]["tool_name"], "Bash");
    assert!(!home.path().join("x.txt").exists() && !home.path().join("y.txt").exists());
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// PERM-020: a Bash request's description is `Bash: ` and the command's first 64 bytes.
#[test]
fn a_bash_description_is_the_command_cut_at_64_bytes() {
    let home = TempDir::new("tools-desc");
    let mut a = Agentx::session(home.path(), &[]);
    let command = format!("echo {}", "x".repeat(95));
    a.say(&format!("!tool Bash {}", json!({ "command": command })));
    let upto = a.until(is_permission_request);
    let req = upto.last().unwrap();
    assert_eq!(
        req["request"]["description"],
        format!("Bash: {}", &command[..64])
    );
    a.send(&deny(req["request_id"].as_str().unwrap(), "no"));
    a.turn();
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// PROFILE §8: nothing is written until the host's first record, and a `keep_alive` alone
/// starts no turn: stdout stays empty and EOF exits 0.
#[test]
fn a_keep_alive_then_eof_writes_nothing() {
    let home = TempDir::new("tools-quiet");
    let (status, out, _err) = run_session(home.path(), &[], b"{\"type\":\"keep_alive\"}\n");
    assert_eq!(status, Some(0));
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
}

/// PROFILE §8 replay: a user record without `uuid` is echoed with a minted one (an RFC 4122
/// UUID) and the session's `session_id`, before anything it causes.
#[test]
fn the_replay_echo_mints_a_uuid_when_the_record_has_none() {
    let home = TempDir::new("tools-replay");
    let mut a = Agentx::session(home.path(), &["--replay-user-messages"]);
    a.send(&user("hi"));
    let t = a.turn();
    let echo = &t[0];
    assert_eq!(label(echo), "user");
    assert_eq!(echo["isReplay"], true);
    let uuid = echo["uuid"].as_str().expect("a minted uuid");
    assert_eq!(uuid.len(), 36);
    assert!(uuid
        .chars()
        .enumerate()
        .all(|(i, c)| if [8, 13, 18, 23].contains(&i) {
            c == '-'
        } else {
            c.is_ascii_hexdigit() && !c.is_ascii_uppercase()
        }));
    let init = t.iter().find(|r| label(r) == "system/init").unwrap();
    assert_eq!(echo["session_id"], init["session_id"]);
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// PROFILE §10: without `--cwd`, relative paths resolve against the process's own cwd (and
/// Bash runs there).
#[test]
fn without_cwd_relative_paths_resolve_against_the_process_cwd() {
    let home = TempDir::new("tools-nocwd");
    let dir = home.path().join("here");
    std::fs::create_dir(&dir).unwrap();
    let mut cmd = agentx_command(home.path());
    cmd.args(SESSION_ARGS)
        .args(["--permission-mode", "bypassPermissions"])
        .current_dir(&dir);
    let mut a = Agentx::start(cmd);
    // Two turns: the tools of one message run at the same time.
    a.say("!tool Write {\"file_path\":\"rel.txt\",\"content\":\"r\"}");
    let mut t = a.turn();
    a.say("!tool Bash {\"command\":\"cat rel.txt\"}");
    t.extend(a.turn());
    let abs = std::fs::canonicalize(&dir).unwrap().join("rel.txt");
    assert_eq!(
        outcomes(&t),
        [
            (format!("wrote 1 bytes to {}", abs.display()), false),
            ("r\nexit code: 0".to_owned(), false),
        ]
    );
    assert_eq!(std::fs::read_to_string(dir.join("rel.txt")).unwrap(), "r");
    let done = a.finish();
    assert_eq!(done.status, Some(0));
}

/// PROFILE §8 startup: an invalid `settings.json` is one stderr line, status 1 and nothing on
/// stdout, whatever input follows.
#[test]
fn an_invalid_settings_json_is_one_line_and_status_1() {
    let home = TempDir::new("tools-settings");
    std::fs::write(home.path().join("settings.json"), br#"{"version":1,"x":1}"#).unwrap();
    let (status, out, err) = run_session(home.path(), &[], b"{\"type\":\"keep_alive\"}\n");
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(err, "agentx: invalid settings.json: $: unknown member\n");
}
