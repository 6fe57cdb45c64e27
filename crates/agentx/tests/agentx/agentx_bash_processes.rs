//! Black-box: PROFILE §10 "Bash and the processes it leaves". A call ends when its shell exits
//! (what it started in the background is read for at most 100 ms more, never waited for), or
//! at its timeout, when its process group is killed; an interrupt and agentx's exit kill the
//! call's process group. Each test waits for records and for processes to go, never for a
//! fixed time.

use std::path::Path;
use std::time::Duration;

use crate::harness::*;
use agentx_test_support::proc_stat::{is_running, wait_gone};
use serde_json::Value;

/// The first `tool_result` block of a turn: its content and error flag.
fn first_outcome(t: &[Value]) -> (String, bool) {
    let r = t
        .iter()
        .find(|r| label(r).starts_with("user:tool_result"))
        .expect("a tool_result");
    let b = &r["message"]["content"][0];
    (
        b["content"].as_str().unwrap_or_default().to_owned(),
        b["is_error"] == true,
    )
}

/// Waits for a file the command writes (a pid), by polling: the command's own progress.
fn read_pid(path: &Path) -> u32 {
    let until = std::time::Instant::now() + TIMEOUT;
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            std::time::Instant::now() < until,
            "{} never written",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `sleep 45 &` and the `setsid` form: the call returns once the shell exits, with the
/// background processes still running (they were not waited for), and the turn ends. The
/// group's process is killed at agentx's exit; the `setsid` one left the group, so the test
/// ends it itself.
#[test]
fn a_background_process_does_not_hold_the_call_and_dies_with_agentx() {
    let home = TempDir::new("bash-background");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    a.say("!tool Bash {\"command\":\"sleep 45 & echo $!\"}");
    let t = a.turn();
    let (content, is_error) = first_outcome(&t);
    assert!(!is_error, "{content}");
    let pid: u32 = content.lines().next().unwrap().parse().expect(&content);
    assert_eq!(content, format!("{pid}\nexit code: 0"));
    assert!(
        is_running(pid),
        "the background sleep was waited for or killed early"
    );
    assert_eq!(
        labels(&t).last().unwrap(),
        "system/session_state_changed:idle"
    );

    // setsid: a new session and group that keeps the output pipe open.
    a.say(concat!(
        "!tool Bash {\"command\":\"setsid sh -c 'echo $$ > setsid.pid; exec sleep 45' & ",
        "while [ ! -s setsid.pid ]; do :; done; echo started\"}"
    ));
    let t = a.turn();
    assert_eq!(
        first_outcome(&t),
        ("started\nexit code: 0".to_owned(), false)
    );
    let setsid_pid = read_pid(&home.path().join("setsid.pid"));
    assert!(is_running(setsid_pid));

    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert!(
        wait_gone(pid, Duration::from_secs(7)),
        "the call's process group outlived agentx"
    );
    // Not in any group of agentx's: PROFILE §10 promises nothing for it.
    let _ = std::process::Command::new("kill")
        .arg(setsid_pid.to_string())
        .status();
    done.assert_valid_output();
}

/// `timeout_ms` 500 with a background process: the call ends at its timeout, and the kill of
/// the group takes the background process too.
#[test]
fn the_timeout_kills_the_group_with_its_background_processes() {
    let home = TempDir::new("bash-timeout-group");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    a.say(concat!(
        "!tool Bash {\"command\":\"sleep 45 & echo $! > bg.pid; sleep 30\",",
        "\"timeout_ms\":500}"
    ));
    let t = a.turn();
    assert_eq!(
        first_outcome(&t),
        ("timed out after 500 ms".to_owned(), true)
    );
    let pid = read_pid(&home.path().join("bg.pid"));
    assert!(
        wait_gone(pid, Duration::from_secs(7)),
        "the background sleep survived the timeout"
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
}

/// An interrupt kills the running call's whole group: the shell and its background process.
#[test]
fn an_interrupt_kills_the_calls_process_group() {
    let home = TempDir::new("bash-interrupt-group");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    a.say("!tool Bash {\"command\":\"sleep 45 & echo $! > bg.pid; sleep 30\"}");
    a.until(|v| label(v) == "assistant:tool_use:Bash");
    let pid = read_pid(&home.path().join("bg.pid"));
    a.send(&control("int-1", "interrupt"));
    let t = a.turn();
    assert_eq!(first_outcome(&t), ("interrupted".to_owned(), true));
    assert!(
        wait_gone(pid, Duration::from_secs(7)),
        "the background sleep survived the interrupt"
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
}
