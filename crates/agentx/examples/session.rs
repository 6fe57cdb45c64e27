//! A real agentx session on the built-in model, played by a tiny host: one command,
//! `cargo run --release --example session`, prints a short transcript with a tool call, a
//! permission prompt answered by the host, and the result.
//!
//! It spawns the built `agentx` binary (building it first if needed) with a temporary AgentX
//! home, writes input records on its stdin and reads output records from its stdout.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

fn agentx_path() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/examples/session -> target/<profile>/agentx
    let bin = exe
        .parent()
        .and_then(|p| p.parent())
        .map(|p| p.join("agentx"))
        .expect("target dir");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let release = exe.to_string_lossy().contains("/release/");
        let mut c = Command::new(cargo);
        c.args(["build", "--bin", "agentx"]);
        if release {
            c.arg("--release");
        }
        assert!(
            c.status().expect("cargo build").success(),
            "building agentx failed"
        );
    }
    bin
}

fn main() {
    let home = std::env::temp_dir().join(format!("agentx-example-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut child = Command::new(agentx_path())
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .arg("--cwd")
        .arg(&home)
        .env("AGENTX_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn agentx");
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value, show: &str| {
        println!("host  > {show}");
        writeln!(stdin, "{v}").unwrap();
    };

    send(
        json!({"type":"control_request","request_id":"init-1","request":{"subtype":"initialize"}}),
        "initialize",
    );
    let prompt = "!say Let me write the notes file.\n!tool Write {\"file_path\":\"notes.txt\",\"content\":\"hello from agentx\\n\"}\n!say Reading it back.\n!tool Read {\"file_path\":\"notes.txt\"}\n!say Done: the file is written and read back.";
    send(
        json!({"type":"user","message":{"role":"user","content":prompt},"parent_tool_use_id":null}),
        "user: write notes.txt, then read it back",
    );

    let mut line = String::new();
    let mut turns = 0;
    while out.read_line(&mut line).unwrap() > 0 {
        let v: Value = serde_json::from_str(&line).unwrap();
        line.clear();
        match v["type"].as_str().unwrap_or("") {
            "control_response" => {
                let r = &v["response"]["response"];
                println!(
                    "agent < initialize ok: provider {} ({}), {} provider(s)",
                    r["account"]["provider"],
                    r["models"][0]["value"],
                    r["providers"].as_array().map_or(0, Vec::len)
                );
            }
            "system" if v["subtype"] == "init" => {
                println!(
                    "agent < system/init: model {}, tools {}",
                    v["model"], v["tools"]
                );
            }
            "system" if v["subtype"] == "session_state_changed" => {
                println!("agent < state: {}", v["state"].as_str().unwrap_or(""));
                if v["state"] == "idle" {
                    turns += 1;
                    break;
                }
            }
            "assistant" => {
                let b = &v["message"]["content"][0];
                match b["type"].as_str() {
                    Some("text") => {
                        println!("agent < assistant: {}", b["text"].as_str().unwrap_or(""))
                    }
                    Some("tool_use") => println!("agent < tool_use {} {}", b["name"], b["input"]),
                    _ => {}
                }
            }
            "control_request" if v["request"]["subtype"] == "can_use_tool" => {
                let req = &v["request"];
                println!(
                    "agent < permission? {}",
                    req["description"].as_str().unwrap_or("")
                );
                send(
                    json!({"type":"control_response","response":{"subtype":"success","request_id":v["request_id"],"response":{"behavior":"allow"}}}),
                    "allow",
                );
            }
            "user" => {
                let b = &v["message"]["content"][0];
                println!(
                    "agent < tool_result{}: {}",
                    if b["is_error"] == true {
                        " (error)"
                    } else {
                        ""
                    },
                    b["content"]
                        .as_str()
                        .unwrap_or("")
                        .trim_end()
                        .replace('\n', " | ")
                );
            }
            "result" => println!(
                "agent < result {}: \"{}\" ({} model calls, cost {})",
                v["subtype"].as_str().unwrap_or(""),
                v["result"].as_str().unwrap_or(""),
                v["num_turns"],
                v["total_cost_usd"]
            ),
            _ => {}
        }
    }
    drop(stdin);
    let status = child.wait().unwrap();
    println!("agentx exited with {status} after {turns} turn(s)");
    let _ = std::fs::remove_dir_all(&home);
}
