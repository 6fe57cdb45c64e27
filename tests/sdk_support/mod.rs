//! The harness that drives the real published Claude Agent SDKs against the built `agentx`
//! (PROFILE §15): Python `claude-agent-sdk` (tests/sdk/requirements.txt) and TypeScript
//! `@anthropic-ai/claude-agent-sdk` (tests/sdk/package.json + package-lock.json), installed
//! once per target directory under `target/tmp/` (a venv; `npm ci --omit=optional`) on first
//! use and reused by every later test and run. Without python3/node or a reachable registry a
//! test prints `SKIP: <reason>` and passes, except under `CI`, where it fails.
//!
//! A flow is one function in tests/sdk/driver.py and tests/sdk/driver.mjs (same name), which
//! prints what the SDK handed to its caller as normalized JSON lines, plus one check function
//! here that both tests/sdk_python.rs and tests/sdk_typescript.rs call. Each run gets a fresh
//! AgentX home and working directory.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

#[path = "../common/agentx.rs"]
mod harness;

pub use harness::TempDir;

/// The longest a flow may take before it is killed and fails.
const FLOW_TIMEOUT: Duration = Duration::from_secs(180);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sdk {
    Python,
    TypeScript,
}

/// An installed SDK: the interpreter and the driver script (and, for TypeScript, the module).
struct Installed {
    program: PathBuf,
    script: PathBuf,
    env: Vec<(String, PathBuf)>,
}

fn sdk_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/sdk")
}

/// FNV-1a of the pin files, so a changed pin installs afresh.
fn pin_hash(files: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        let bytes = std::fs::read(sdk_dir().join(f)).unwrap_or_default();
        for b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Skips (or, under `CI`, fails) with `reason`.
fn unavailable(reason: String) -> Option<Installed> {
    if std::env::var_os("CI").is_some() {
        panic!("SDK test prerequisites unavailable while CI is set: {reason}");
    }
    eprintln!("SKIP: {reason}");
    None
}

fn run_quiet(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd:?} could not start: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        let tail = String::from_utf8_lossy(&out.stderr);
        let tail: String = tail
            .chars()
            .rev()
            .take(2000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        Err(format!("{cmd:?} failed ({}): {tail}", out.status))
    }
}

/// Installs into `target/tmp/<name>-<hash>` via a temporary sibling renamed into place, so a
/// half-finished install is never used and concurrent runs do not clash.
fn install_once(
    name: &str,
    pins: &[&str],
    install: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = base.join(format!("{name}-{}", pin_hash(pins)));
    if dir.join(".complete").exists() {
        return Ok(dir);
    }
    let tmp = base.join(format!("{name}-partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| e.to_string())?;
    eprintln!(
        "installing the pinned {name} into {} (once per target directory)",
        dir.display()
    );
    install(&tmp)?;
    std::fs::write(tmp.join(".complete"), b"").map_err(|e| e.to_string())?;
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another run finished first: use its install.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dir.join(".complete").exists() {
        Ok(dir)
    } else {
        Err(format!("{} did not appear", dir.display()))
    }
}

fn python() -> Option<Installed> {
    let ok = Command::new("python3")
        .args(["-c", "import sys; assert sys.version_info >= (3, 10)"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return unavailable("python3 (3.10 or newer) is not available".into());
    }
    let dir = install_once("sdk-python", &["requirements.txt"], |tmp| {
        run_quiet(
            Command::new("python3")
                .args(["-m", "venv"])
                .arg(tmp.join("venv")),
        )?;
        run_quiet(
            Command::new(tmp.join("venv/bin/python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "-r",
                ])
                .arg(sdk_dir().join("requirements.txt")),
        )
    });
    match dir {
        Ok(dir) => Some(Installed {
            program: dir.join("venv/bin/python"),
            script: sdk_dir().join("driver.py"),
            env: Vec::new(),
        }),
        Err(e) => unavailable(format!("the Python SDK could not be installed: {e}")),
    }
}

fn typescript() -> Option<Installed> {
    let ok = Command::new("node")
        .args([
            "-e",
            "process.exit(Number(process.versions.node.split('.')[0]) >= 18 ? 0 : 1)",
        ])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return unavailable("node (18 or newer) is not available".into());
    }
    let dir = install_once(
        "sdk-typescript",
        &["package.json", "package-lock.json"],
        |tmp| {
            for f in ["package.json", "package-lock.json"] {
                std::fs::copy(sdk_dir().join(f), tmp.join(f)).map_err(|e| e.to_string())?;
            }
            // The SDK's native Claude Code binaries are optional dependencies: agentx is the
            // executable, so they are never needed.
            run_quiet(
                Command::new("npm")
                    .args([
                        "ci",
                        "--omit=optional",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                    ])
                    .current_dir(tmp),
            )
        },
    );
    match dir {
        Ok(dir) => Some(Installed {
            program: PathBuf::from("node"),
            script: sdk_dir().join("driver.mjs"),
            env: vec![(
                "SDK_TS_MODULE".into(),
                dir.join("node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs"),
            )],
        }),
        Err(e) => unavailable(format!("the TypeScript SDK could not be installed: {e}")),
    }
}

fn installed(sdk: Sdk) -> Option<&'static Installed> {
    static PY: OnceLock<Option<Installed>> = OnceLock::new();
    static TS: OnceLock<Option<Installed>> = OnceLock::new();
    match sdk {
        Sdk::Python => PY.get_or_init(python).as_ref(),
        Sdk::TypeScript => TS.get_or_init(typescript).as_ref(),
    }
}

/// What one flow printed, and where it ran.
pub struct Flow {
    pub sdk: Sdk,
    /// Every JSON line of the driver except `stderr` lines, in order.
    pub events: Vec<Value>,
    /// agentx's stderr lines as the SDK's stderr callback saw them.
    pub stderr: Vec<String>,
    pub home: TempDir,
    pub cwd: TempDir,
}

impl Flow {
    /// The `message` events of `type`.
    pub fn messages(&self, ty: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["event"] == "message" && e["type"] == ty)
            .collect()
    }

    /// The events named `name`.
    pub fn named(&self, name: &str) -> Vec<&Value> {
        self.events.iter().filter(|e| e["event"] == name).collect()
    }

    /// `kind/subtype` of every message, in order (`system` ones by subtype).
    pub fn labels(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["event"] == "message")
            .map(|e| match e["type"].as_str().unwrap_or("?") {
                "system" => format!("system/{}", e["subtype"].as_str().unwrap_or("?")),
                "result" => format!("result/{}", e["subtype"].as_str().unwrap_or("?")),
                "stream_event" => format!("stream_event/{}", e["kind"].as_str().unwrap_or("?")),
                t => t.to_string(),
            })
            .collect()
    }
}

/// Runs flow `name` of `sdk` against the built agentx; `None` when skipped.
pub fn run_flow(sdk: Sdk, name: &str) -> Option<Flow> {
    let installed = installed(sdk)?;
    let home = TempDir::new("sdk-home");
    let cwd = TempDir::new("sdk-cwd");
    let mut cmd = Command::new(&installed.program);
    cmd.arg(&installed.script)
        .arg(name)
        .env("AGENTX_BIN", harness::agentx_bin())
        .env("AGENTX_HOME", home.path())
        .env("FLOW_CWD", cwd.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &installed.env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn the SDK driver");
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        let _ = std::io::Read::read_to_string(&mut { stdout }, &mut out);
        let _ = tx.send(out);
    });
    let err = std::thread::spawn(move || {
        let mut e = String::new();
        let _ = std::io::Read::read_to_string(&mut { stderr }, &mut e);
        e
    });
    let out = match rx.recv_timeout(FLOW_TIMEOUT) {
        Ok(out) => out,
        Err(_) => {
            let _ = child.kill();
            panic!("{sdk:?} flow {name} did not finish in {FLOW_TIMEOUT:?}");
        }
    };
    let status = child.wait().expect("wait for the SDK driver");
    let driver_stderr = err.join().unwrap_or_default();
    let mut events = Vec::new();
    let mut agentx_stderr = Vec::new();
    for line in out.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("driver line is not JSON ({e}): {line}"));
        if v["event"] == "stderr" {
            agentx_stderr.push(v["line"].as_str().unwrap_or_default().to_string());
        } else {
            events.push(v);
        }
    }
    assert!(
        status.success() && events.last().is_some_and(|e| e["event"] == "done"),
        "{sdk:?} flow {name} failed ({status}); events {events:#?}; driver stderr: {driver_stderr}; \
         agentx stderr: {agentx_stderr:#?}"
    );
    Some(Flow {
        sdk,
        events,
        stderr: agentx_stderr,
        home,
        cwd,
    })
}

/// The exact normalized result of a turn.
fn result(f: &Flow, i: usize) -> &Value {
    f.messages("result")[i]
}

/// `system/init` as the SDK handed it over (PROFILE §15, §16).
fn check_init(f: &Flow) {
    let init = f
        .events
        .iter()
        .find(|e| e["subtype"] == "init")
        .expect("system/init");
    let data = &init["data"];
    assert_eq!(data["claude_code_version"], "2.1.333");
    assert_eq!(data["agentx_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(data["model"], "agentx-echo");
    assert_eq!(data["tools"], serde_json::json!(["Read", "Write", "Bash"]));
}

/// No `session_state_changed` reaches the caller: it carries `sdk_host_only` (PROFILE §15).
fn no_state_records(f: &Flow) {
    assert!(
        !f.labels()
            .iter()
            .any(|l| l == "system/session_state_changed"),
        "{:?}",
        f.labels()
    );
}

pub fn check_prompt(f: &Flow) {
    assert_eq!(f.labels(), ["system/init", "assistant", "result/success"]);
    check_init(f);
    no_state_records(f);
    assert_eq!(
        f.messages("assistant")[0]["blocks"],
        serde_json::json!([{"type": "text", "text": "echo: hello agentx"}])
    );
    let r = result(f, 0);
    assert_eq!(r["is_error"], false);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["result"], "echo: hello agentx");
    assert!(
        f.stderr.iter().all(|l| !l.contains("WARN")),
        "{:?}",
        f.stderr
    );
}

pub fn check_can_use_tool(f: &Flow) {
    let calls: Vec<(&Value, &Value)> = f
        .named("callback")
        .iter()
        .map(|c| (&c["tool"], &c["input"]))
        .collect();
    assert_eq!(
        calls,
        [
            (
                &serde_json::json!("Write"),
                &serde_json::json!({"file_path": "a.txt", "content": "x"})
            ),
            (
                &serde_json::json!("Bash"),
                &serde_json::json!({"command": "echo hi"})
            ),
        ]
    );
    assert_eq!(
        f.labels(),
        [
            "system/init",
            "assistant",
            "assistant",
            "user",
            "user",
            "assistant",
            "result/success"
        ]
    );
    let results: Vec<&Value> = f.messages("user").iter().map(|u| &u["blocks"][0]).collect();
    assert_eq!(results[0]["content"], "wrote 1 bytes to a.txt");
    assert_eq!(results[0]["is_error"], false);
    assert_eq!(results[1]["content"], "no shell");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(
        std::fs::read_to_string(f.cwd.path().join("a.txt")).unwrap(),
        "x"
    );
    let r = result(f, 0);
    assert_eq!(r["denials"], serde_json::json!(["Bash"]));
    assert_eq!(r["num_turns"], 2);
    assert_eq!(r["result"], "done");
}

pub fn check_no_callback(f: &Flow) {
    // Without --permission-prompt-tool stdio an ask is denied (PROFILE §15).
    assert!(f.named("callback").is_empty());
    let user = f.messages("user");
    assert_eq!(
        user[0]["blocks"][0]["content"],
        "no permission prompt available"
    );
    assert_eq!(user[0]["blocks"][0]["is_error"], true);
    assert_eq!(result(f, 0)["denials"], serde_json::json!(["Bash"]));
}

pub fn check_bypass(f: &Flow) {
    assert!(
        f.named("callback").is_empty(),
        "bypassPermissions never asks"
    );
    let user = f.messages("user");
    assert_eq!(user[0]["blocks"][0]["content"], "bypassed\nexit code: 0");
    assert_eq!(user[0]["blocks"][0]["is_error"], false);
    assert_eq!(result(f, 0)["denials"], serde_json::json!([]));
}

pub fn check_interrupt(f: &Flow) {
    assert_eq!(f.named("interrupted").len(), 1);
    assert_eq!(
        f.labels(),
        [
            "system/init",
            "result/error_during_execution",
            "assistant",
            "result/success"
        ]
    );
    let r = result(f, 0);
    assert_eq!(r["is_error"], true);
    assert_eq!(r["errors"], serde_json::json!(["interrupted"]));
    assert_eq!(result(f, 1)["result"], "echo: after the interrupt");
}

pub fn check_tasks(f: &Flow) {
    assert_eq!(
        f.labels(),
        [
            "system/init",
            "system/task_started",
            "assistant",
            "system/task_progress",
            "system/task_progress",
            "system/task_notification",
            "result/success"
        ]
    );
    let n = f
        .events
        .iter()
        .find(|e| e["subtype"] == "task_notification")
        .unwrap();
    assert_eq!(n["data"]["task_id"], "t1");
    assert_eq!(n["data"]["status"], "completed");
    assert_eq!(result(f, 0)["result"], "started");
}

pub fn check_partial(f: &Flow) {
    assert_eq!(
        f.labels(),
        [
            "system/init",
            "stream_event/message_start",
            "stream_event/content_block_start",
            "stream_event/content_block_delta",
            "stream_event/content_block_delta",
            "stream_event/content_block_delta",
            "stream_event/content_block_stop",
            "assistant",
            "stream_event/message_delta",
            "stream_event/message_stop",
            "result/success"
        ]
    );
}

pub fn check_system_prompt(f: &Flow) {
    // Python passes --system-prompt; TypeScript initialize `systemPrompt` (PROFILE §15, §16).
    let texts: Vec<&Value> = f.messages("result").iter().map(|r| &r["result"]).collect();
    assert_eq!(texts, ["system: You are terse.", "system: (none)"]);
}

pub fn check_controls(f: &Flow) {
    assert_eq!(
        f.named("mcp_status")[0]["value"],
        serde_json::json!({"mcpServers": []})
    );
    let usage = f.named("context_usage")[0];
    assert_eq!(usage["model"], "agentx-echo");
    assert!(usage["keys"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("totalTokens")));
    let raised: Vec<&Value> = f.named("raised").iter().map(|r| &r["error"]).collect();
    // PROFILE §5's texts, raised by the SDK to its caller.
    assert_eq!(raised.len(), 2, "{:?}", f.events);
    assert!(raised[0]
        .as_str()
        .unwrap()
        .contains("provider and model are fixed for this process; restart with --provider <id>"));
    assert!(raised[1].as_str().unwrap().contains(
        "live permission-mode changes are unavailable; start a new session with --permission-mode"
    ));
}

pub fn check_close_persists(f: &Flow) {
    assert_eq!(f.named("disconnected").len(), 1);
    let sid = result(f, 0)["session_id"].as_str().unwrap().to_string();
    // PROFILE §11/§15: the finished turn is in the store after the SDK's close path.
    let transcript = f
        .home
        .path()
        .join("sessions")
        .join(&sid)
        .join("transcript.ndjson");
    let text = std::fs::read_to_string(&transcript)
        .unwrap_or_else(|e| panic!("{}: {e}", transcript.display()));
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(records
        .iter()
        .any(|r| r["type"] == "result" && r["result"] == "echo: remember me"));
}

/// PROFILE §16 structured output through the SDK's `output_format` / `outputFormat`: the
/// valid `!json` answer is `structured_output`; the invalid one is asked again twice (the
/// corrective prompts have no directive, so agentx-echo answers `echo: …`) and the turn ends
/// `error_max_structured_output_retries`.
pub fn check_structured_output(f: &Flow) {
    let structured: Vec<(&Value, &Value)> = f
        .named("structured")
        .iter()
        .map(|e| (&e["subtype"], &e["value"]))
        .collect();
    assert_eq!(
        structured,
        [
            (
                &serde_json::json!("success"),
                &serde_json::json!({"answer": 42})
            ),
            (
                &serde_json::json!("error_max_structured_output_retries"),
                &Value::Null
            ),
        ]
    );
    let results = f.messages("result");
    assert_eq!(results[0]["num_turns"], 1);
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(results[1]["num_turns"], 3);
    let errors = results[1]["errors"].as_array().expect("errors");
    assert!(
        errors[0]
            .as_str()
            .unwrap_or_default()
            .starts_with("structured output not valid after 3 attempts: "),
        "{errors:?}"
    );
    let texts: Vec<&Value> = f
        .messages("assistant")
        .iter()
        .map(|m| &m["blocks"][0]["text"])
        .collect();
    assert_eq!(texts.len(), 4, "{texts:?}");
    assert_eq!(texts[0], "{\"answer\": 42}");
    assert_eq!(texts[1], "{\"answer\": \"x\"}");
    assert!(texts[2]
        .as_str()
        .unwrap_or_default()
        .starts_with("echo: structured output: "));
}
