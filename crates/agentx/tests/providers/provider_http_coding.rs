//! PROFILE §17 through the openai provider and the recording server: the request carries the
//! seven built-in tools as function tools with §17's input shapes (closed objects, the SDKs'
//! member names, enums and required members), and agentx's default system message with the
//! cwd, whether it is a git repository, the platform and today's date.

use crate::provider_http_support;

use std::time::SystemTime;

use provider_http_support::agentx_home::*;
use provider_http_support::*;
use serde_json::{json, Value};

#[test]
fn profile_17_request_carries_the_seven_tools_and_the_default_system_message() {
    let server = Server::start_in_thread(vec![Reply::Sse(text_stream())]);
    let home = Home::new(&openai_auth(&server));
    let cwd = std::fs::canonicalize(home.cwd()).unwrap();
    let before = agentx::run::system_prompt::date(SystemTime::now());
    let run = one_shot(&home, "hello", &[]);
    let after = agentx::run::system_prompt::date(SystemTime::now());
    assert_eq!(run.status, 0, "{}", run.stderr);
    let reqs = server.requests();
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs[1], json!({"role": "user", "content": "hello"}));
    let system = msgs[0]["content"].as_str().unwrap();
    assert!(
        system.starts_with("You are agentx, a coding agent"),
        "{system}"
    );
    assert!(
        system.contains(&format!("Working directory: {}\n", cwd.display())),
        "{system}"
    );
    assert!(system.contains("Is a git repository: no\n"), "{system}");
    assert!(system.contains(&format!("Platform: {}\n", std::env::consts::OS)));
    assert!(
        system.contains(&format!("Today's date: {before}\n"))
            || system.contains(&format!("Today's date: {after}\n")),
        "{system}"
    );
    for tool in ["Read", "Write", "Bash", "Edit", "Glob", "Grep", "TodoWrite"] {
        assert!(system.contains(&format!("- {tool}: ")), "{tool}");
    }
    let tools = body["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Read", "Write", "Bash", "Edit", "Glob", "Grep", "TodoWrite"]
    );
    let schema = |name: &str| {
        tools
            .iter()
            .find(|t| t["function"]["name"] == name)
            .unwrap()["function"]["parameters"]
            .clone()
    };
    let members = |s: &Value| {
        let mut m: Vec<String> = s["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        m.sort();
        m
    };
    for t in tools {
        assert_eq!(t["type"], "function");
        let p = &t["function"]["parameters"];
        assert_eq!(p["type"], "object");
        assert_eq!(p["additionalProperties"], false, "{t}");
    }
    let edit = schema("Edit");
    assert_eq!(
        members(&edit),
        ["file_path", "new_string", "old_string", "replace_all"]
    );
    assert_eq!(
        edit["required"],
        json!(["file_path", "old_string", "new_string"])
    );
    assert_eq!(edit["properties"]["replace_all"]["type"], "boolean");
    let glob = schema("Glob");
    assert_eq!(members(&glob), ["path", "pattern"]);
    assert_eq!(glob["required"], json!(["pattern"]));
    let grep = schema("Grep");
    assert_eq!(
        members(&grep),
        [
            "-A",
            "-B",
            "-C",
            "-i",
            "-n",
            "-o",
            "context",
            "glob",
            "head_limit",
            "multiline",
            "offset",
            "output_mode",
            "path",
            "pattern",
            "type"
        ]
    );
    assert_eq!(grep["required"], json!(["pattern"]));
    assert_eq!(
        grep["properties"]["output_mode"]["enum"],
        json!(["content", "files_with_matches", "count"])
    );
    let todo = schema("TodoWrite");
    assert_eq!(todo["required"], json!(["todos"]));
    let item = &todo["properties"]["todos"]["items"];
    assert_eq!(members(item), ["activeForm", "content", "status"]);
    assert_eq!(
        item["properties"]["status"]["enum"],
        json!(["pending", "in_progress", "completed"])
    );
    assert_eq!(item["additionalProperties"], false);
    let bash = schema("Bash");
    assert_eq!(members(&bash), ["command", "description", "timeout_ms"]);
    assert_eq!(members(&schema("Read")), ["file_path", "limit", "offset"]);
    assert_eq!(members(&schema("Write")), ["content", "file_path"]);
}
