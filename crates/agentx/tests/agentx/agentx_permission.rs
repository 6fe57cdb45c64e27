//! Black-box: the permission race through the real binary (WIRE-PERM-001..002, PROFILE §10)
//! and the protocol's permission scenarios 5, 7, 12, 13, 14. Ordering is forced by waiting
//! for records (a hook that answers at once or sleeps; a host that answers when it sees a
//! given record), never by sleeping in the test.

use crate::harness;

use harness::*;
use serde_json::Value;

fn request_ids(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| is_permission_request(r))
        .map(|r| r["request_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn wire_perm_001_hook_wins_then_late_host_deny_is_ignored() {
    let home = TempDir::new("hookwins");
    write_hook(
        home.path(),
        "cat >/dev/null; echo '{\"decision\":\"allow\"}'",
    );
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo hooked\"}");
    let upto = a.until(is_permission_request);
    let id = request_ids(&upto)[0].clone();
    // The hook answers at once: the host request is cancelled (WIRE-PERM-001).
    let cancel = a.until(|v| v["type"] == "control_cancel_request");
    assert_eq!(cancel.last().unwrap()["request_id"], id.as_str());
    // The host's deny arrives late and changes nothing.
    a.send(&deny(&id, "too late"));
    let rest = a.turn();
    let results: Vec<&Value> = cancel
        .iter()
        .chain(rest.iter())
        .filter(|r| label(r).starts_with("user:tool_result"))
        .collect();
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0]["message"]["content"][0]["content"],
        "hooked\nexit code: 0"
    );
    let r = rest.iter().find(|r| is_result(r)).unwrap();
    assert_eq!(r["permission_denials"], serde_json::json!([]));
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

#[test]
fn wire_perm_001_host_wins_while_the_hook_sleeps() {
    let home = TempDir::new("hostwins");
    write_hook(home.path(), "sleep 30; echo '{\"decision\":\"allow\"}'");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo never\"}");
    let upto = a.until(is_permission_request);
    let id = request_ids(&upto)[0].clone();
    a.send(&deny(&id, "host says no"));
    let rest = a.turn();
    assert!(!rest.iter().any(|r| r["type"] == "control_cancel_request"));
    let tr: Vec<&Value> = rest
        .iter()
        .filter(|r| label(r).starts_with("user:tool_result"))
        .collect();
    assert_eq!(tr.len(), 1);
    assert_eq!(tr[0]["message"]["content"][0]["content"], "host says no");
    assert_eq!(tr[0]["message"]["content"][0]["is_error"], true);
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

#[test]
fn hook_deny_carries_its_message_and_sees_the_session_id() {
    let home = TempDir::new("hookdeny");
    write_hook(
        home.path(),
        "cat >/dev/null; printf '{\"decision\":\"deny\",\"message\":\"hook %s\"}\\n' \"$AGENTX_SESSION_ID\"",
    );
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo x\"}");
    let t = a.turn();
    let sid = t[0]["session_id"].as_str().unwrap();
    let tr = t
        .iter()
        .find(|r| label(r) == "user:tool_result:error")
        .unwrap();
    assert_eq!(
        tr["message"]["content"][0]["content"],
        format!("hook {sid}")
    );
    let done = a.finish();
    done.assert_valid_output();
}

#[test]
fn failing_hook_is_a_decisive_deny() {
    let home = TempDir::new("hookfail");
    write_hook(home.path(), "cat >/dev/null; exit 3");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo x\"}");
    let t = a.turn();
    let tr = t
        .iter()
        .find(|r| label(r) == "user:tool_result:error")
        .unwrap();
    assert_eq!(
        tr["message"]["content"][0]["content"],
        "permission hook failed"
    );
    let done = a.finish();
    done.assert_valid_output();
}

#[test]
fn scenario_5_eof_with_two_pending_permissions() {
    let home = TempDir::new("s5");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo a\"}\n!tool Bash {\"command\":\"echo b\"}");
    let mut seen = a.until(is_permission_request);
    seen.extend(a.until(is_permission_request));
    assert_eq!(request_ids(&seen).len(), 2);
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    let l = labels(&done.rest);
    assert_eq!(
        l.iter().filter(|s| *s == "user:tool_result:error").count(),
        2,
        "{l:?}"
    );
    assert_eq!(l.last().unwrap(), "system/session_state_changed:idle");
    assert!(
        l.contains(&"result:success".to_string())
            || l.contains(&"result:error_during_execution".to_string())
    );
    done.assert_valid_output();
}

#[test]
fn scenario_7_same_late_response_twice_gives_one_tool_result() {
    let home = TempDir::new("s7");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo once\"}");
    let upto = a.until(is_permission_request);
    let id = request_ids(&upto)[0].clone();
    a.send(&allow(&id));
    a.send(&allow(&id));
    let t = a.turn();
    assert_eq!(
        t.iter()
            .filter(|r| label(r).starts_with("user:tool_result"))
            .count(),
        1
    );
    a.say("next");
    a.turn();
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

#[test]
fn scenario_12_interrupt_with_two_pending_permissions_exact_order() {
    let home = TempDir::new("s12");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo a\"}\n!tool Bash {\"command\":\"echo b\"}");
    let mut seen = a.until(is_permission_request);
    seen.extend(a.until(is_permission_request));
    let ids = request_ids(&seen);
    a.send(&control("int-12", "interrupt"));
    let rest = a.turn();
    assert_eq!(
        labels(&rest),
        [
            "control_cancel_request",
            "control_cancel_request",
            "control_response:success",
            "user:tool_result:error",
            "user:tool_result:error",
            "result:error_during_execution",
            "system/session_state_changed:idle",
        ]
    );
    assert_eq!(rest[0]["request_id"], ids[0].as_str());
    assert_eq!(rest[1]["request_id"], ids[1].as_str());
    assert_eq!(rest[2]["response"]["request_id"], "int-12");
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// WIRE-015 on the interrupt path, through the binary: the acknowledgement is pushed by the
/// broker's ordered post-cancellation callback. Its `request_id` here echoes a credential of
/// the registry (an unselected provider's key is in the union, PROFILE §3), so the encoder
/// refuses it (WIRE-013): both cancellations were written in order, nothing follows, stderr
/// has PROFILE §5's text, status 1, and the key appears nowhere.
#[test]
fn wire_015_interrupt_acknowledgement_refused_after_the_cancellations() {
    const KEY: &str = "sk-wire015-Q7pLm2Xc";
    let home = TempDir::new("w015");
    std::fs::write(
        home.path().join("auth.json"),
        format!(
            r#"{{"version":2,"providers":[{{"id":"local","type":"scripted","model":"agentx-echo","default":true}},{{"id":"oa","type":"openai","model":"gpt-x","api_key":"{KEY}"}}]}}"#
        ),
    )
    .unwrap();
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo a\"}\n!tool Bash {\"command\":\"echo b\"}");
    let mut seen = a.until(is_permission_request);
    seen.extend(a.until(is_permission_request));
    let ids = request_ids(&seen);
    a.send(&control(&format!("int-{KEY}"), "interrupt"));
    let done = a.finish();
    assert_eq!(
        labels(&done.rest),
        ["control_cancel_request", "control_cancel_request"]
    );
    assert_eq!(done.rest[0]["request_id"], ids[0].as_str());
    assert_eq!(done.rest[1]["request_id"], ids[1].as_str());
    assert_eq!(done.status, Some(1));
    assert_eq!(
        done.stderr.lines().last(),
        Some("agentx: output refused: record failed credential validation"),
        "{}",
        done.stderr
    );
    assert!(!done.stderr.contains(KEY));
    assert!(!String::from_utf8_lossy(&done.stdout).contains(KEY));
    done.assert_valid_output();
}

#[test]
fn scenario_13_valid_unterminated_final_response_resolves_before_eof() {
    let home = TempDir::new("s13");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo first\"}\n!tool Bash {\"command\":\"echo second\"}");
    let mut seen = a.until(is_permission_request);
    seen.extend(a.until(is_permission_request));
    let ids = request_ids(&seen);
    let resp = serde_json::to_vec(&allow(&ids[0])).unwrap();
    a.send_raw(&resp); // no LF: the final unterminated record
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    let results: Vec<&Value> = done
        .rest
        .iter()
        .filter(|r| label(r).starts_with("user:tool_result"))
        .collect();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0]["message"]["content"][0]["content"],
        "first\nexit code: 0"
    );
    assert_eq!(results[1]["message"]["content"][0]["is_error"], true);
    done.assert_valid_output();
}

#[test]
fn scenario_14_malformed_unterminated_tail_is_fatal() {
    let home = TempDir::new("s14");
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo a\"}");
    let seen = a.until(is_permission_request);
    let id = request_ids(&seen)[0].clone();
    a.send_raw(format!("{{\"type\":\"control_response\",\"response\":{{\"subtype\":\"success\",\"request_id\":\"{id}\"").as_bytes());
    let done = a.finish();
    assert_eq!(done.status, Some(1));
    assert!(
        done.stderr
            .contains("agentx: input line 2: malformed JSON: "),
        "{}",
        done.stderr
    );
    assert!(!done.rest.iter().any(|r| label(r) == "user:tool_result:ok"));
    done.assert_valid_output();
}

/// PERM-049 (PROFILE §4: a malformed decision is a denial) through the binary, one malformed
/// answer per turn of one session: a duplicate member (in the decision, in the response
/// object, in the envelope), an invalid outer object, an invalid outcome, a bad decision.
/// Each settles the pending `can_use_tool` as a denial: the command never runs, the tool gets
/// its deny `tool_result` (`invalid permission decision`), `requires_action` goes back to
/// `running`, the result lists the denial, the turn ends `idle`, and the session goes on.
/// Each rejected line also gets its stderr diagnostic (`agentx: input line N: …`).
#[test]
fn perm_049_malformed_answers_to_a_pending_prompt_are_denials() {
    /// A malformed answer to request `id`.
    type Answer = fn(&str) -> String;
    let answers: [(&str, Answer); 7] = [
        ("duplicate in the decision", |id| {
            format!(
                r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"behavior":"deny","beh\u0061vior":"allow"}}}}}}"#
            )
        }),
        ("duplicate request_id", |id| {
            format!(
                r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","request_id":"{id}","response":{{"behavior":"allow"}}}}}}"#
            )
        }),
        ("duplicate envelope type", |id| {
            format!(
                r#"{{"type":"control_response","type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"behavior":"allow"}}}}}}"#
            )
        }),
        ("unknown envelope member", |id| {
            format!(
                r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"behavior":"allow"}}}},"extra":1}}"#
            )
        }),
        ("invalid outcome subtype", |id| {
            format!(
                r#"{{"type":"control_response","response":{{"subtype":"succes","request_id":"{id}","response":{{"behavior":"allow"}}}}}}"#
            )
        }),
        ("success with an error member", |id| {
            format!(
                r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","error":"x","response":{{"behavior":"allow"}}}}}}"#
            )
        }),
        ("bad decision", |id| {
            format!(
                r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"behavior":"maybe"}}}}}}"#
            )
        }),
    ];
    let home = TempDir::new("perm049");
    let mut a = Agentx::session(home.path(), &[]);
    for (n, (what, answer)) in answers.iter().enumerate() {
        let marker = home.path().join(format!("ran-{n}"));
        a.say(&format!(
            "!tool Bash {{\"command\":\"touch {}\"}}",
            marker.display()
        ));
        let upto = a.until(is_permission_request);
        assert!(
            upto.iter().any(|r| is_state(r, "requires_action")),
            "{what}"
        );
        let id = request_ids(&upto)[0].clone();
        let tool_use_id = upto.last().unwrap()["request"]["tool_use_id"]
            .as_str()
            .unwrap()
            .to_string();
        let mut line = answer(&id).into_bytes();
        line.push(b'\n');
        a.send_raw(&line);
        let rest = a.turn();
        let l = labels(&rest);
        // Denied at once: back to running, the deny tool_result, the turn's end.
        assert_eq!(
            l.first().map(String::as_str),
            Some("system/session_state_changed:running"),
            "{what}: {l:?}"
        );
        let tr: Vec<&Value> = rest
            .iter()
            .filter(|r| label(r).starts_with("user:tool_result"))
            .collect();
        assert_eq!(tr.len(), 1, "{what}: {l:?}");
        let block = &tr[0]["message"]["content"][0];
        assert_eq!(block["tool_use_id"], tool_use_id.as_str(), "{what}");
        assert_eq!(block["is_error"], true, "{what}");
        assert_eq!(block["content"], "invalid permission decision", "{what}");
        let r = rest.iter().find(|r| is_result(r)).unwrap();
        assert_eq!(
            r["permission_denials"][0]["tool_use_id"],
            tool_use_id.as_str(),
            "{what}"
        );
        assert_eq!(l.last().unwrap(), "system/session_state_changed:idle");
        assert!(!marker.exists(), "{what}: the tool ran");
    }
    // The session goes on.
    a.say("still here");
    let t = a.turn();
    assert!(labels(&t).contains(&"result:success".to_string()));
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    // One stderr diagnostic per rejected line (the bad decision is a valid record).
    assert_eq!(
        done.stderr
            .lines()
            .filter(|l| l.starts_with("agentx: input line "))
            .count(),
        6,
        "{}",
        done.stderr
    );
    done.assert_valid_output();
}

/// PROFILE §10: invalid input is a `tool_result` with `is_error` true and **no permission
/// prompt**, by the tool's own schema (the one `system/init` advertises: `timeout_ms` 1 to
/// 600,000, nonempty `command` and `file_path`, `offset`/`limit` from 1). In default mode,
/// where a valid Bash call or a Write would ask, each of these is refused at once: no
/// `requires_action`, no `can_use_tool`, and the result's text is the tool runner's.
#[test]
fn invalid_input_by_the_tool_schema_gets_no_prompt() {
    let home = TempDir::new("invalid-input");
    let mut a = Agentx::session(home.path(), &[]);
    let calls = [
        (
            r#"Bash {"command":"echo no","timeout_ms":0}"#,
            "invalid input for Bash: timeout_ms must be an integer from 1 to 600000",
        ),
        (
            r#"Bash {"command":"echo no","timeout_ms":600001}"#,
            "invalid input for Bash: timeout_ms must be an integer from 1 to 600000",
        ),
        (
            r#"Bash {"command":""}"#,
            "invalid input for Bash: command must not be empty",
        ),
        (
            r#"Write {"file_path":"","content":"x"}"#,
            "invalid input for Write: file_path must not be empty",
        ),
        (
            r#"Read {"file_path":"/etc/hostname","offset":0}"#,
            "invalid input for Read: offset must be an integer from 1 to 18446744073709551615",
        ),
    ];
    let script: Vec<String> = calls.iter().map(|(c, _)| format!("!tool {c}")).collect();
    a.say(&script.join("\n"));
    let t = a.turn();
    assert!(
        !t.iter().any(|r| is_permission_request(r)
            || (r["type"] == "system" && r["state"] == "requires_action")),
        "no prompt for invalid input: {t:?}"
    );
    let results: Vec<&Value> = t
        .iter()
        .filter(|r| label(r).starts_with("user:tool_result"))
        .collect();
    assert_eq!(results.len(), calls.len());
    for (r, (call, text)) in results.iter().zip(calls) {
        let block = &r["message"]["content"][0];
        assert_eq!(block["is_error"], true, "{call}");
        assert_eq!(block["content"], text, "{call}");
    }
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// PROFILE §10: the hook reads one JSON line on stdin, `{"session_id","tool_name",
/// "tool_use_id","input"}`, naming the same call as the host's `can_use_tool` request.
#[test]
fn the_hook_reads_one_line_naming_the_call() {
    let home = TempDir::new("hookline");
    let line = home.path().join("line.json");
    write_hook(
        home.path(),
        &format!(
            "cat > '{}'; echo '{{\"decision\":\"allow\"}}'",
            line.display()
        ),
    );
    let mut a = Agentx::session(home.path(), &[]);
    a.say("!tool Bash {\"command\":\"echo via-hook\"}");
    let t = a.turn();
    let req = t.iter().find(|r| is_permission_request(r)).unwrap();
    let sid = t[0]["session_id"].as_str().unwrap();
    let written = std::fs::read_to_string(&line).unwrap();
    assert!(
        written.ends_with('\n') && written.matches('\n').count() == 1,
        "{written:?}"
    );
    let got: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(
        got,
        serde_json::json!({
            "session_id": sid,
            "tool_name": "Bash",
            "tool_use_id": req["request"]["tool_use_id"],
            "input": {"command": "echo via-hook"},
        })
    );
    let tr = t
        .iter()
        .find(|r| label(r).starts_with("user:tool_result"))
        .unwrap();
    assert_eq!(
        tr["message"]["content"][0]["content"],
        "via-hook\nexit code: 0"
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}

/// PROFILE §10, WIRE-PERM-002: a malformed hook answer and a hook past its `timeout_ms` are
/// decisive denials (`permission hook failed`): the host's request is cancelled
/// (`control_cancel_request`) before the host answered, and the call is denied.
#[test]
fn a_malformed_or_late_hook_answer_is_a_decisive_deny() {
    for (tag, script, timeout_ms) in [
        ("hookjunk", "cat >/dev/null; echo nonsense", 30_000),
        (
            "hookslow",
            "cat >/dev/null; sleep 30; echo '{\"decision\":\"allow\"}'",
            200,
        ),
    ] {
        let home = TempDir::new(tag);
        let settings = serde_json::json!({"version":1,"permission_hook":{"command":["/bin/sh","-c",script],"timeout_ms":timeout_ms}});
        std::fs::write(
            home.path().join("settings.json"),
            serde_json::to_vec(&settings).unwrap(),
        )
        .unwrap();
        let mut a = Agentx::session(home.path(), &[]);
        a.say("!tool Bash {\"command\":\"echo never\"}");
        let upto = a.until(is_permission_request);
        let id = request_ids(&upto)[0].clone();
        // The host never answers: the hook's failure decides.
        let t = a.turn();
        let cancel = t
            .iter()
            .position(|r| r["type"] == "control_cancel_request")
            .unwrap_or_else(|| panic!("{tag}: a cancel in {t:?}"));
        assert_eq!(t[cancel]["request_id"], id.as_str(), "{tag}");
        let tr = t
            .iter()
            .position(|r| label(r) == "user:tool_result:error")
            .unwrap();
        assert!(cancel < tr, "{tag}: the cancel precedes the denial");
        assert_eq!(
            t[tr]["message"]["content"][0]["content"], "permission hook failed",
            "{tag}"
        );
        let result = t.iter().find(|r| is_result(r)).unwrap();
        assert_eq!(
            result["permission_denials"][0]["tool_name"], "Bash",
            "{tag}"
        );
        let done = a.finish();
        assert_eq!(done.status, Some(0));
        done.assert_valid_output();
    }
}
