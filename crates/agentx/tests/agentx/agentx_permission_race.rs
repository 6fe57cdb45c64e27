//! Black-box: the protocol's scenario 6 (WIRE-PERM-001) through the real binary with the
//! decisions the other way round from `agentx_permission.rs`: the hook denies while the host
//! allows, in both completion orders. The first decisive result wins exactly once: one
//! `tool_result`, the loser's answer ignored (a late host response) or its process killed (the
//! hook, PROFILE §10), and the tool runs only on an allow. Order is forced by waiting for
//! records or for the hook's pid file, never by sleeping for a fixed time.

use crate::harness;

use std::path::Path;
use std::time::{Duration, Instant};

use harness::*;
use serde_json::{json, Value};

fn tool_results(records: &[Value]) -> Vec<&Value> {
    records
        .iter()
        .filter(|r| label(r).starts_with("user:tool_result"))
        .collect()
}

fn tool_use_id(records: &[Value]) -> String {
    let r = records
        .iter()
        .find(|r| is_permission_request(r))
        .expect("a can_use_tool request");
    r["request"]["tool_use_id"].as_str().unwrap().to_string()
}

/// Waits until `pred` holds, at most `limit`.
fn wait_for(what: &str, limit: Duration, mut pred: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !pred() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Gone, or a zombie not yet reaped.
fn process_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s[s.rfind(')').unwrap() + 1..]
            .trim_start()
            .starts_with(['Z', 'X']),
    }
}

fn hook_pid(home: &Path) -> Option<u32> {
    std::fs::read_to_string(home.join("hook.pid"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

#[test]
fn scenario_6_hook_deny_first_then_late_host_allow_is_ignored() {
    let home = TempDir::new("s6hookdeny");
    write_hook(
        home.path(),
        "cat >/dev/null; echo '{\"decision\":\"deny\",\"message\":\"hook says no\"}'",
    );
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo ran > ran.txt\"}");
    let upto = a.until(is_permission_request);
    let request = upto.last().unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    let tool_use = tool_use_id(&upto);
    // The hook's deny wins: the host request is cancelled (WIRE-PERM-001).
    let cancel = a.until(|v| v["type"] == "control_cancel_request");
    assert_eq!(cancel.last().unwrap()["request_id"], request.as_str());
    // The host's allow arrives after the cancellation: ignored, the tool never runs.
    a.send(&allow(&request));
    let rest = a.turn();
    assert!(!rest.iter().any(|r| r["type"] == "control_cancel_request"));
    let all: Vec<Value> = cancel.iter().chain(rest.iter()).cloned().collect();
    let tr = tool_results(&all);
    assert_eq!(tr.len(), 1, "{:?}", labels(&all));
    assert_eq!(
        tr[0]["message"]["content"][0]["tool_use_id"],
        tool_use.as_str()
    );
    assert_eq!(tr[0]["message"]["content"][0]["is_error"], true);
    assert_eq!(tr[0]["message"]["content"][0]["content"], "hook says no");
    let result = rest.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(
        result["permission_denials"],
        json!([{"tool_name":"Bash","tool_use_id":tool_use,"tool_input":{"command":"echo ran > ran.txt"}}])
    );
    assert!(!home.path().join("ran.txt").exists(), "a denied tool ran");
    // The session goes on.
    a.say("after");
    let next = a.turn();
    let r = next.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(r["result"], "echo: after");
    assert!(!next
        .iter()
        .any(|r| label(r).starts_with("user:tool_result")));
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

#[test]
fn scenario_6_host_allow_first_kills_the_hook_that_would_deny() {
    let home = TempDir::new("s6hostallow");
    // The hook runs in agentx's own working directory, not `--cwd`: an absolute pid file.
    let pid_file = home.path().join("hook.pid");
    write_hook(
        home.path(),
        &format!(
            "echo $$ > '{}'; cat >/dev/null; sleep 30; echo '{{\"decision\":\"deny\",\"message\":\"hook says no\"}}'",
            pid_file.display()
        ),
    );
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo allowed\"}");
    let upto = a.until(is_permission_request);
    let request = upto.last().unwrap()["request_id"]
        .as_str()
        .unwrap()
        .to_string();
    let tool_use = tool_use_id(&upto);
    // Both racers are running: the hook has started (its pid file) and sleeps.
    wait_for("the hook to start", TIMEOUT, || {
        hook_pid(home.path()).is_some()
    });
    let pid = hook_pid(home.path()).unwrap();
    a.send(&allow(&request));
    let rest = a.turn();
    // The host won: no cancellation is sent, the hook is killed, the tool runs once.
    assert!(!rest.iter().any(|r| r["type"] == "control_cancel_request"));
    let tr = tool_results(&rest);
    assert_eq!(tr.len(), 1, "{:?}", labels(&rest));
    assert_eq!(
        tr[0]["message"]["content"][0]["tool_use_id"],
        tool_use.as_str()
    );
    assert_eq!(
        tr[0]["message"]["content"][0]["content"],
        "allowed\nexit code: 0"
    );
    let result = rest.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["permission_denials"], json!([]));
    // Killed: well before its 30 s sleep (or the 30 s hook timeout) would end it.
    wait_for(
        "the losing hook to be killed",
        Duration::from_secs(20),
        || process_ended(pid),
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert!(!done
        .rest
        .iter()
        .any(|r| label(r).starts_with("user:tool_result")));
    done.assert_valid_output();
}
