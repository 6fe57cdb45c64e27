//! Black-box: WIRE-PERM-004 / PERM-022 through the real binary. `!network HOST PORT` (PROFILE
//! §9) asks the host with the synthetic `SandboxNetworkAccess` `can_use_tool` request, on the
//! same path as a tool's permission (its description the safe summary `SandboxNetworkAccess
//! HOST`, PERM-021); an allow gives `network HOST: allowed`, a deny and a
//! malformed answer give `network HOST: denied` (a protocol error denies).

use crate::harness::*;
use serde_json::{json, Value};

/// Asks for `host`, answers the request with `response` (a `control_response` `response`
/// member, `request_id` filled in), and returns the turn's records from the request on.
fn network_turn(a: &mut Agentx, host: &str, port: &str, response: Value) -> Vec<Value> {
    a.say(&format!("!network {host} {port}"));
    let upto = a.until(is_permission_request);
    let req = upto.last().unwrap().clone();
    let id = req["request_id"].as_str().unwrap().to_owned();
    let port_json: Value = serde_json::from_str(port).unwrap();
    assert_eq!(
        req["request"],
        json!({"subtype":"can_use_tool","tool_name":"SandboxNetworkAccess",
            "input":{"host":host,"port":port_json},
            "tool_use_id":req["request"]["tool_use_id"],
            "description":format!("SandboxNetworkAccess {host}")})
    );
    assert!(upto.iter().any(|r| is_state(r, "requires_action")));
    let mut answer = json!({"type":"control_response","response":response});
    answer["response"]["request_id"] = Value::from(id);
    a.send(&answer);
    let mut t = vec![req];
    t.extend(a.turn());
    t
}

fn texts(t: &[Value]) -> Vec<String> {
    t.iter()
        .map(label)
        .filter(|l| l.starts_with("assistant:text:"))
        .collect()
}

#[test]
fn wire_perm_004_network_prompt_allow_deny_and_malformed_answer() {
    let home = TempDir::new("network-prompt");
    let mut a = Agentx::session(home.path(), &[]);
    let allow = json!({"subtype":"success","response":{"behavior":"allow","updatedInput":{}}});
    let t = network_turn(&mut a, "api.example.com", "443", allow);
    assert_eq!(
        texts(&t),
        ["assistant:text:network api.example.com: allowed"]
    );
    assert_eq!(label(&t[t.len() - 2]), "result:success");

    let deny = json!({"subtype":"success","response":{"behavior":"deny","message":"no"}});
    let t = network_turn(&mut a, "evil.example", "null", deny);
    assert_eq!(texts(&t), ["assistant:text:network evil.example: denied"]);

    // PERM-049: a malformed decision (`updatedInput` not an object) is a denial.
    let bad = json!({"subtype":"success","response":{"behavior":"allow","updatedInput":7}});
    let t = network_turn(&mut a, "h.example", "80", bad);
    assert_eq!(texts(&t), ["assistant:text:network h.example: denied"]);

    let done = a.finish();
    assert_eq!(done.status, Some(0));
    done.assert_valid_output();
}
