//! Turns through the session core on a virtual clock (PROFILE §8): the echo turn, the
//! record order and payloads, priorities, replay, the input-error result.

mod session_sim;

use serde_json::json;
use session_sim::*;

/// PROFILE §8: system/init once right before the first turn's first record, running,
/// one assistant record per block, result, idle.
#[test]
fn echo_turn_exact_records() {
    let mut sim = Sim::local();
    sim.send(&user("hi"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:text:echo: hi",
            "result:success",
            "state:idle"
        ]
    );
    let init = &sim.out[0];
    assert_eq!(init["session_id"], SID);
    assert_eq!(init["model"], "agentx-echo");
    assert_eq!(init["provider"], "local");
    assert_eq!(init["provider_type"], "scripted");
    assert_eq!(init["apiKeySource"], "user");
    assert_eq!(init["permissionMode"], "default");
    assert_eq!(init["cwd"], CWD);
    assert_eq!(init["tools"], json!(["Read", "Write", "Bash"]));
    assert_eq!(init["mcp_servers"], json!([]));
    assert!(init["input_capabilities"]["attachments"].is_object());
    let a = &sim.out[2];
    assert_eq!(a["message"]["id"], "msg_1_0");
    assert_eq!(a["message"]["role"], "assistant");
    assert_eq!(a["message"]["model"], "agentx-echo");
    assert_eq!(a["parent_tool_use_id"], json!(null));
    let r = &sim.out[3];
    assert_eq!(r["result"], "echo: hi");
    assert_eq!(r["is_error"], false);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["stop_reason"], "end_turn");
    assert_eq!(
        r["total_cost_usd"],
        json!(null),
        "WIRE-012: unknown cost is null"
    );
    assert_eq!(r["modelUsage"]["agentx-echo"]["costUSD"], json!(null));
    assert_eq!(r["usage"]["input_tokens"], 3);
    assert_eq!(r["usage"]["output_tokens"], 4);
    assert_eq!(r["permission_denials"], json!([]));
    // Every record carries the session id and a distinct uuid.
    let uuids: std::collections::HashSet<_> = sim.out.iter().map(|v| v["uuid"].clone()).collect();
    assert_eq!(uuids.len(), sim.out.len());
    assert!(sim.out.iter().all(|v| v["session_id"] == SID));
    // A second turn: no second system/init.
    sim.send(&user("again"));
    assert_eq!(
        sim.of("system")
            .iter()
            .filter(|v| v["subtype"] == "init")
            .count(),
        1
    );
    assert_eq!(sim.last()["state"], "idle");
}
