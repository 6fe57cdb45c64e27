//! The `agentx` side of the provider tests: a temp AgentX home whose `auth.json` points an
//! `openai` or `azure_openai` provider at the test server, one-shot runs of the real binary,
//! and the checks that no private material (key, endpoint, deployment, API version) reached
//! stdout, stderr or the session store.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::Server;

pub const KEY: &str = "sk-agentx-test-4f3e2d1c";
pub const DEPLOYMENT: &str = "sol-prod-7";
pub const API_VERSION: &str = "2026-10-01-preview";

pub struct Home(pub PathBuf);

impl Home {
    pub fn new(auth: &str) -> Home {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "agentx-provider-http-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        std::fs::write(dir.join("auth.json"), auth).unwrap();
        Home(dir)
    }

    pub fn cwd(&self) -> PathBuf {
        self.0.join("work")
    }

    /// Every byte under the home except auth.json: the session store.
    pub fn store_bytes(&self) -> Vec<u8> {
        fn walk(p: &Path, out: &mut Vec<u8>) {
            if let Ok(entries) = std::fs::read_dir(p) {
                for e in entries.flatten() {
                    let path = e.path();
                    if path.is_dir() {
                        walk(&path, out);
                    } else if path.file_name().is_some_and(|n| n != "auth.json") {
                        out.extend(std::fs::read(&path).unwrap_or_default());
                    }
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.0.join("sessions"), &mut out);
        out
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn openai_auth(server: &Server) -> String {
    format!(
        r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"gpt-x","api_key":"{KEY}","base_url":"{}","reasoning":{{"efforts":["low","high"],"default_effort":"high"}}}}]}}"#,
        server.base_url()
    )
}

pub fn azure_auth(server: &Server) -> String {
    format!(
        r#"{{"version":2,"providers":[{{"id":"az","type":"azure_openai","model":"gpt-5.6-sol","endpoint":"http://127.0.0.1:{}/","deployment":"{DEPLOYMENT}","api_version":"{API_VERSION}","api_key":"{KEY}"}}]}}"#,
        server.port
    )
}

pub struct Run {
    pub status: i32,
    pub records: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
}

pub fn agentx(home: &Home, args: &[&str]) -> Run {
    let out = Command::new(crate::bin("agentx"))
        .args(args)
        .arg("--cwd")
        .arg(home.cwd())
        .env("AGENTX_HOME", &home.0)
        .env("HOME", &home.0)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let records = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Run {
        status: out.status.code().unwrap_or(-1),
        records,
        stdout,
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

pub fn one_shot(home: &Home, prompt: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--include-partial-messages",
    ];
    args.extend_from_slice(extra);
    agentx(home, &args)
}

pub fn of_type<'r>(records: &'r [Value], ty: &str) -> Vec<&'r Value> {
    records.iter().filter(|r| r["type"] == ty).collect()
}

pub fn result(run: &Run) -> &Value {
    let r = of_type(&run.records, "result");
    assert_eq!(r.len(), 1, "{}", run.stdout);
    r[0]
}

/// The stream_event types in order.
pub fn stream_events(records: &[Value]) -> Vec<String> {
    of_type(records, "stream_event")
        .iter()
        .map(|r| {
            let e = &r["event"];
            match e["type"].as_str().unwrap() {
                "content_block_delta" => format!("delta:{}", e["delta"]["type"].as_str().unwrap()),
                t => t.to_string(),
            }
        })
        .collect()
}

pub fn assert_no_private_material(run: &Run, home: &Home, server: &Server) {
    let port = format!("127.0.0.1:{}", server.port);
    for (what, bytes) in [
        ("stdout", run.stdout.as_bytes().to_vec()),
        ("stderr", run.stderr.as_bytes().to_vec()),
        ("session store", home.store_bytes()),
    ] {
        let text = String::from_utf8_lossy(&bytes);
        for secret in [KEY, DEPLOYMENT, API_VERSION, port.as_str()] {
            assert!(!text.contains(secret), "{what} holds private material");
        }
    }
}

/// No 8-byte piece of `KEY` (so no prefix, suffix or middle of it, and not the whole key) in
/// `bytes`.
pub fn assert_no_key_piece(what: &str, bytes: &[u8]) {
    for piece in KEY.as_bytes().windows(8) {
        assert!(
            !bytes.windows(8).any(|w| w == piece),
            "{what} holds a piece of the key"
        );
    }
}

/// `agentx` in stream-json mode with `args`, `--cwd` the home's work directory and no
/// `AGENTX_AUTOCOMPACT_PCT` from the test's environment: `prompts` are written as user records,
/// stdin is closed, and the run's status, records and stderr are returned.
pub fn stream_session(home: &Home, args: &[&str], prompts: &[&str]) -> (i32, Vec<Value>, String) {
    use std::io::Write as _;
    let mut child = Command::new(crate::bin("agentx"))
        .args([
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
        ])
        .args(args)
        .arg("--cwd")
        .arg(home.cwd())
        .env("AGENTX_HOME", &home.0)
        .env("HOME", &home.0)
        .env_remove("AGENTX_AUTOCOMPACT_PCT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for p in prompts {
        let line = serde_json::json!({"type":"user","message":{"role":"user","content":p},"parent_tool_use_id":null})
            .to_string()
            + "\n";
        stdin.write_all(line.as_bytes()).unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let records = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        out.status.code().unwrap_or(-1),
        records,
        String::from_utf8(out.stderr).unwrap(),
    )
}
