//! Black-box: PROFILE §8 "Environment updates". A session holds at most 1,000 names and
//! 1,048,576 bytes of names plus values; a record past either bound is a stderr diagnostic and
//! changes nothing; applying a record is linear in its size, so a flood costs little CPU and
//! Bash still runs afterwards.

use crate::harness::*;
use agentx_test_support::proc_stat;
use serde_json::{json, Map, Value};

fn update(record: usize, names: usize, value: &str) -> Value {
    let vars: Map<String, Value> = (0..names)
        .map(|i| (format!("V{record}_{i}"), Value::from(value)))
        .collect();
    json!({"type":"update_environment_variables","variables":vars})
}

#[test]
fn a_hundred_records_of_a_thousand_names_are_bounded_and_cheap() {
    let home = TempDir::new("env-flood");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    let value = "v".repeat(1024);
    for r in 0..100 {
        a.send(&update(r, 1000, &value));
    }
    a.say("!tool Bash {\"command\":\"printf %s \\\"$V0_999\\\" | wc -c; printf %s \\\"$V1_0\\\" | wc -c\"}");
    let t = a.turn();
    let cpu = proc_stat::cpu(a.pid()).unwrap();
    let result = t
        .iter()
        .find(|r| label(r).starts_with("user:tool_result"))
        .unwrap();
    assert_eq!(
        result["message"]["content"][0]["content"],
        "1024\n0\nexit code: 0"
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    let refusals: Vec<&str> = done
        .stderr
        .lines()
        .filter(|l| l.contains("update_environment_variables"))
        .collect();
    assert_eq!(refusals.len(), 99, "{}", done.stderr);
    assert_eq!(
        refusals[0],
        "agentx: input line 2: update_environment_variables: the session would hold 2000 \
         variables, more than 1000 (PROFILE §8); nothing changed"
    );
    assert!(
        cpu < std::time::Duration::from_secs(1),
        "agentx used {cpu:?} of CPU"
    );
}

/// The byte bound through the binary: names plus values of exactly 1,048,576 bytes are held;
/// one more byte is refused and changes nothing; an unset frees its name and bytes.
#[test]
fn the_byte_bound_at_its_edge() {
    let home = TempDir::new("env-bytes");
    let mut a = Agentx::session(home.path(), &["--permission-mode", "bypassPermissions"]);
    // 32 names `B00`..`B31` (3 bytes each) with values filling 1,048,576 bytes exactly.
    let per = 1_048_576 / 32 - 3;
    let vars: Map<String, Value> = (0..32)
        .map(|i| (format!("B{i:02}"), Value::from("b".repeat(per))))
        .collect();
    a.send(&json!({"type":"update_environment_variables","variables":vars}));
    a.send(&json!({"type":"update_environment_variables","variables":{"X":""}}));
    a.send(&json!({"type":"update_environment_variables","variables":{"B00":null}}));
    a.send(&json!({"type":"update_environment_variables","variables":{"Y":"y"}}));
    a.say("!tool Bash {\"command\":\"echo ${X-unset} ${Y-unset} ${B00-unset}; printf %s \\\"$B31\\\" | wc -c\"}");
    let t = a.turn();
    let result = t
        .iter()
        .find(|r| label(r).starts_with("user:tool_result"))
        .unwrap();
    assert_eq!(
        result["message"]["content"][0]["content"],
        format!("unset y unset\n{per}\nexit code: 0")
    );
    let done = a.finish();
    let refusals: Vec<&str> = done
        .stderr
        .lines()
        .filter(|l| l.contains("update_environment_variables"))
        .collect();
    assert_eq!(
        refusals,
        [
            "agentx: input line 2: update_environment_variables: the session would hold 1048577 \
          bytes of names and values, more than 1048576 (PROFILE §8); nothing changed"
        ]
    );
}
