//! Black-box: provider selection through the real binary (WIRE-016, WIRE-023..026):
//! scenarios 21, 25, 26, 27, 28 and both halves of 29. Routing sentinels and keys never
//! appear on stdout or stderr.

use crate::harness;

use harness::*;
use serde_json::{json, Value};

const SENTINELS: [&str; 5] = [
    "SENTINEL-KEY-9f2",
    "sentinel-endpoint.example.invalid",
    "SENTINEL-DEPLOY-77",
    "SENTINEL-APIVER-3",
    "SENTINEL-ORG-5",
];

fn registry(home: &std::path::Path) {
    let auth = json!({
        "version": 2,
        "providers": [
            {"id":"east","type":"azure_openai","model":"gpt-east","endpoint":"https://sentinel-endpoint.example.invalid/","deployment":"SENTINEL-DEPLOY-77","api_version":"SENTINEL-APIVER-3","api_key":"SENTINEL-KEY-9f2",
             "reasoning":{"efforts":["low","medium","high"],"default_effort":"high"}},
            {"id":"echo-a","type":"scripted","model":"echo-model-a"},
            {"id":"echo-b","type":"scripted","model":"echo-model-b","reasoning":{"efforts":["low","high"],"default_effort":"low"}},
            {"id":"oa","type":"openai","model":"gpt-oa","api_key":"SENTINEL-KEY-9f2","organization":"SENTINEL-ORG-5"}
        ]
    });
    std::fs::write(home.join("auth.json"), serde_json::to_vec(&auth).unwrap()).unwrap();
}

fn assert_no_sentinel(bytes: &[u8], stderr: &str) {
    let out = String::from_utf8_lossy(bytes);
    // WIRE-016 / scenario 21: no credential path or field name as source metadata (the
    // catalog's fixed descriptions say "configured by AgentX-home auth.json", never a path).
    for s in ["/auth.json", "api_key", "api_key_env"] {
        assert!(!out.contains(s), "stdout names {s}");
    }
    for s in SENTINELS {
        assert!(!out.contains(s), "stdout holds {s}");
        assert!(!stderr.contains(s), "stderr holds {s}");
    }
}

#[test]
fn scenarios_25_26_27_28_selected_nondefault_provider_session() {
    let home = TempDir::new("prov");
    registry(home.path());
    let mut a = Agentx::session(home.path(), &["--provider", "echo-b"]);
    a.send(&control("init-1", "initialize"));
    let init = a.next().unwrap();
    assert_eq!(init["type"], "control_response");
    let resp = &init["response"]["response"];
    // 21: apiKeySource user, the selected provider.
    assert_eq!(
        resp["account"],
        json!({"apiKeySource":"user","provider":"echo-b"})
    );
    // 26: complete catalog in file order, exactly one selected.
    let providers = resp["providers"].as_array().unwrap();
    let ids: Vec<&str> = providers
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["east", "echo-a", "echo-b", "oa"]);
    assert!(providers.iter().all(|p| p["value"] == p["id"]));
    let selected: Vec<&str> = providers
        .iter()
        .filter(|p| p["selected"] == true)
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert_eq!(selected, ["echo-b"]);
    assert_eq!(resp["models"].as_array().unwrap().len(), 1);
    assert_eq!(resp["models"][0]["provider"], "echo-b");
    // A second initialize is refused.
    a.send(&control("init-2", "initialize"));
    let again = a.next().unwrap();
    assert_eq!(again["response"]["subtype"], "error");
    assert_eq!(again["response"]["error"], "already initialized");
    // 28: set_model and set_provider.
    a.send(&json!({"type":"control_request","request_id":"sm","request":{"subtype":"set_model","model":"east"}}));
    let sm = a.next().unwrap();
    assert_eq!(
        sm["response"]["error"],
        "provider and model are fixed for this process; restart with --provider <id>"
    );
    a.send(&json!({"type":"control_request","request_id":"sp","request":{"subtype":"set_provider","provider":"east"}}));
    let sp = a.next().unwrap();
    assert_eq!(
        sp["response"]["error"],
        "unsupported control request \"set_provider\""
    );
    // 25: system/init names the selection and its declared efforts.
    a.say("hi");
    let t = a.turn();
    let si = &t[0];
    assert_eq!(si["subtype"], "init");
    assert_eq!(si["provider"], "echo-b");
    assert_eq!(si["provider_type"], "scripted");
    assert_eq!(si["model"], "echo-model-b");
    // 21, the other initialization form (WIRE-016): system/init says `user` too.
    assert_eq!(si["apiKeySource"], "user");
    assert_eq!(
        si["reasoning_capabilities"],
        json!({"supported":true,"efforts":["low","high"],"defaultEffort":"low"})
    );
    let r = t.iter().find(|r| is_result(r)).unwrap();
    assert!(r["modelUsage"].get("echo-model-b").is_some());
    let sid = si["session_id"].as_str().unwrap().to_string();
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert_no_sentinel(&done.stdout, &done.stderr);
    done.assert_valid_output();

    // 28, resume half: another provider fails closed before any output.
    let (status, out, err) = run_session(
        home.path(),
        &["--provider", "echo-a", "--resume", &sid],
        b"",
    );
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(
        err.trim_end(),
        format!("agentx: cannot resume {sid}: it was recorded with another provider")
    );
}

#[test]
fn scenario_29_discovery_then_a_second_process_on_a_returned_id() {
    let home = TempDir::new("s29");
    // No default: discovery succeeds; a session without --provider cannot select.
    registry(home.path());
    let (status, out, err) = run(
        home.path(),
        &["--list-providers", "--output-format", "json"],
        b"",
    );
    assert_eq!(status, Some(0), "{err}");
    assert_no_sentinel(&out, &err);
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["version"], 1);
    let listed = doc["providers"].as_array().unwrap().clone();
    assert!(listed.iter().all(|p| p["selected"] == false));
    let chosen = listed[1]["value"].as_str().unwrap().to_string();

    let mut a = Agentx::session(home.path(), &["--provider", &chosen]);
    a.send(&control("i", "initialize"));
    let init = a.next().unwrap();
    let catalog = init["response"]["response"]["providers"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(catalog.len(), listed.len());
    for (d, c) in listed.iter().zip(catalog.iter()) {
        let mut d = d.clone();
        if d["id"] == chosen.as_str() {
            d["selected"] = json!(true);
        }
        assert_eq!(&d, c);
    }
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    assert_no_sentinel(&done.stdout, &done.stderr);
    done.assert_valid_output();

    // Without --provider and without a default: startup fails naming the ids, stdout empty.
    let (status, out, err) = run_session(home.path(), &[], b"");
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_no_sentinel(&out, &err);
}

#[test]
fn unknown_provider_and_collisions_fail_before_output() {
    let home = TempDir::new("unk");
    registry(home.path());
    let (status, out, err) = run_session(
        home.path(),
        &["--provider", "nope"],
        b"{\"type\":\"user\",\"message\":\"x\",\"parent_tool_use_id\":null}\n",
    );
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    // A public model name that contains a private value (WIRE-024).
    let auth = json!({"version":2,"providers":[{"id":"c","type":"openai","model":"m-SENTINEL-KEY-9f2","api_key":"SENTINEL-KEY-9f2"}]});
    std::fs::write(
        home.path().join("auth.json"),
        serde_json::to_vec(&auth).unwrap(),
    )
    .unwrap();
    let (status, out, err) = run_session(home.path(), &[], b"");
    assert_eq!(status, Some(1));
    assert!(out.is_empty());
    assert_no_sentinel(&out, &err);
}
