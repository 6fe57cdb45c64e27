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

pub use agentx_test_support::harness;
use agentx_test_support::install;

#[macro_use]
pub mod examples;
pub mod mcp_servers;

pub use harness::TempDir;

/// Every flow, once: `tests/sdk_python.rs` and `tests/sdk_typescript.rs` each expand this with
/// their SDK, so each flow is one `#[test]` per SDK. A new flow is one line here (its name as in
/// driver.py / driver.mjs, then its check), appended at the end.
macro_rules! every_flow {
    ($sdk:expr) => {
        flow_tests! { $sdk;
            prompt => check_prompt,
            can_use_tool => check_can_use_tool,
            no_callback => check_no_callback,
            bypass => check_bypass,
            interrupt => check_interrupt,
            tasks => check_tasks,
            partial => check_partial,
            system_prompt => check_system_prompt,
            controls => check_controls,
            close_persists => check_close_persists,
            resume => check_resume,
            max_turns => check_max_turns,
            budget => check_budget,
            tool_rules => check_tool_rules,
            coding => check_coding,
            stop_task => check_stop_task,
            hooks_pre_tool_use => check_hooks_pre_tool_use,
            hooks_post_tool_use => check_hooks_post_tool_use,
            hooks_user_prompt_submit => check_hooks_user_prompt_submit,
            hooks_raise => check_hooks_raise,
            hooks_interrupt => check_hooks_interrupt,
            structured_output => check_structured_output,
            mcp_tools => check_mcp_tools,
            mcp_status => check_mcp_status,
            interrupt_hook_mcp => check_interrupt_hook_mcp,
            pre_compact => check_pre_compact,
        }

        // PROFILE §18: flows that start the FastMCP server of tests/mcp from its pinned venv.
        mcp_flow_tests! { $sdk;
            mcp_stdio => check_mcp_stdio,
            mcp_stdio_live => check_mcp_stdio_live,
            mcp_network => check_mcp_network,
        }

        /// PROFILE §19 with a priced provider: its home is prepared, so not a `flow_tests` line.
        #[test]
        fn priced_budget() {
            sdk_support::priced_budget($sdk);
        }
    };
}

/// One `#[test]` per `flow => check` pair: runs the flow in `$sdk` (or skips) and checks it.
macro_rules! flow_tests {
    ($sdk:expr; $($name:ident => $check:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                if let Some(f) = sdk_support::run_flow($sdk, stringify!($name)) {
                    sdk_support::$check(&f);
                }
            }
        )*
    };
}

/// One `#[test]` per `flow => check` pair of [`mcp_servers`]: runs the flow with the MCP venv
/// (or skips) and checks it.
macro_rules! mcp_flow_tests {
    ($sdk:expr; $($name:ident => $check:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                if let Some(f) = sdk_support::mcp_servers::run_flow($sdk, stringify!($name)) {
                    sdk_support::mcp_servers::$check(&f);
                }
            }
        )*
    };
}

/// The longest a flow may take before it is killed and fails.
pub(crate) const FLOW_TIMEOUT: Duration = Duration::from_secs(180);

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
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk")
}

fn python() -> Option<Installed> {
    let tmpdir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    match install::python_venv(tmpdir, "sdk-python", &sdk_dir().join("requirements.txt")) {
        Ok(program) => Some(Installed {
            program,
            script: sdk_dir().join("driver.py"),
            env: Vec::new(),
        }),
        Err(e) => install::unavailable("the Python SDK", &e),
    }
}

fn typescript() -> Option<Installed> {
    // The SDK's native Claude Code binaries are optional dependencies: agentx is the
    // executable, so they are never needed (`npm ci --omit=optional`).
    let tmpdir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    match install::npm_tree(tmpdir, "sdk-typescript", &sdk_dir()) {
        Ok(dir) => Some(Installed {
            program: PathBuf::from("node"),
            script: sdk_dir().join("driver.mjs"),
            env: vec![(
                "SDK_TS_MODULE".into(),
                dir.join("node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs"),
            )],
        }),
        Err(e) => install::unavailable("the TypeScript SDK", &e),
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

/// Runs `installed`'s interpreter with `args` against the built agentx, with AgentX home `home`
/// and the working directory `cwd` (passed to the script as `$cwd_var`); killed after
/// [`FLOW_TIMEOUT`] (the test then fails naming `what`). Returns its status, stdout and stderr.
fn run_script(
    installed: &Installed,
    args: &[&std::ffi::OsStr],
    home: &Path,
    (cwd_var, cwd): (&str, &Path),
    what: &str,
) -> (std::process::ExitStatus, String, String) {
    run_script_env(installed, args, home, (cwd_var, cwd), what, &[])
}

/// [`run_script`] with more environment variables for the script.
fn run_script_env(
    installed: &Installed,
    args: &[&std::ffi::OsStr],
    home: &Path,
    (cwd_var, cwd): (&str, &Path),
    what: &str,
    extra_env: &[(&str, &Path)],
) -> (std::process::ExitStatus, String, String) {
    let mut cmd = Command::new(&installed.program);
    cmd.args(args)
        .env("AGENTX_BIN", harness::agentx_bin())
        .env("AGENTX_HOME", home)
        .env(cwd_var, cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in &installed.env {
        cmd.env(k, v);
    }
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {what}: {e}"));
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
            panic!("{what} did not finish in {FLOW_TIMEOUT:?}");
        }
    };
    let status = child
        .wait()
        .unwrap_or_else(|e| panic!("wait for {what}: {e}"));
    (status, out, err.join().unwrap_or_default())
}

/// Runs flow `name` of `sdk` against the built agentx; `None` when skipped.
pub fn run_flow(sdk: Sdk, name: &str) -> Option<Flow> {
    run_flow_in(sdk, name, TempDir::new("sdk-home"))
}

/// [`run_flow`] with an AgentX home the caller prepared (an `auth.json`).
pub fn run_flow_in(sdk: Sdk, name: &str, home: TempDir) -> Option<Flow> {
    run_flow_env(sdk, name, home, &[])
}

/// [`run_flow_in`] with more environment variables for the driver.
pub fn run_flow_env(
    sdk: Sdk,
    name: &str,
    home: TempDir,
    extra_env: &[(&str, &Path)],
) -> Option<Flow> {
    let installed = installed(sdk)?;
    let script = installed.script.as_os_str();
    let what = format!("{sdk:?} flow {name}");
    let cwd = TempDir::new("sdk-cwd");
    let args = [script, name.as_ref()];
    let (status, out, driver_stderr) = run_script_env(
        installed,
        &args,
        home.path(),
        ("FLOW_CWD", cwd.path()),
        &what,
        extra_env,
    );
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
pub(crate) fn result(f: &Flow, i: usize) -> &Value {
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
    assert_eq!(
        data["tools"],
        serde_json::json!(["Read", "Write", "Bash", "Edit", "Glob", "Grep", "TodoWrite"])
    );
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
    let written = std::fs::canonicalize(f.cwd.path()).unwrap().join("a.txt");
    assert_eq!(
        results[0]["content"],
        format!("wrote 1 bytes to {}", written.display())
    );
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

/// The `result` texts, in order.
fn result_texts(f: &Flow) -> Vec<&Value> {
    f.messages("result").iter().map(|r| &r["result"]).collect()
}

/// The `result` records of a stored transcript (PROFILE §11).
fn stored_results(f: &Flow, sid: &str) -> Vec<Value> {
    let path = f
        .home
        .path()
        .join("sessions")
        .join(sid)
        .join("transcript.ndjson");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "result")
        .collect()
}

pub fn check_resume(f: &Flow) {
    // PROFILE §15: four turns on one client, then `resume`, `continue`, `fork_session` and
    // `resume` again, each in a new agentx process; `!history` counts the rebuilt context.
    assert_eq!(
        result_texts(f),
        [
            "echo: turn 1",
            "echo: turn 2",
            "echo: turn 3",
            "echo: turn 4",
            "history: 8 messages",
            "history: 10 messages",
            "history: 12 messages",
            "history: 12 messages",
        ]
    );
    let sid = f.named("first")[0]["session_id"].as_str().unwrap();
    let ids: Vec<&str> = f
        .messages("result")
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    // resume and continue keep the id; the fork has a new one; the original is untouched by
    // the fork (the last resume still counts 12 messages, not 14).
    assert!(ids[..6].iter().all(|id| *id == sid), "{ids:?}");
    let fork = ids[6];
    assert_ne!(fork, sid);
    assert!(uuid::Uuid::parse_str(fork).is_ok(), "{fork}");
    assert_eq!(ids[7], sid);
    assert_eq!(stored_results(f, sid).len(), 7);
    // The fork's transcript starts as a copy of the six turns, plus its own.
    let forked = stored_results(f, fork);
    assert_eq!(forked.len(), 7);
    assert_eq!(forked[6]["result"], "history: 12 messages");
}

pub fn check_max_turns(f: &Flow) {
    // PROFILE §15 `--max-turns 1`: the tool use gets its result, no second request is made.
    let r = result(f, 0);
    assert_eq!(r["subtype"], "error_max_turns");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["errors"], serde_json::json!(["max turns reached: 1"]));
    let user = f.messages("user");
    assert_eq!(user.len(), 1);
    assert_eq!(user[0]["blocks"][0]["content"], "     1\tnote\n");
    assert!(!f
        .messages("assistant")
        .iter()
        .any(|a| a["blocks"][0]["text"] == "never"));
    // The limit is per turn: the next turn runs.
    let next = result(f, 1);
    assert_eq!(next["subtype"], "success");
    assert_eq!(next["result"], "echo: next turn");
}

/// PROFILE §19: after two turns (the first to summarize, the second preserved), `/compact keep
/// the names` is a command: PreCompact is called with `manual` and the instructions, and the
/// turn's result is the compaction's.
pub fn check_pre_compact(f: &Flow) {
    let hooks: Vec<&Value> = f.events.iter().filter(|e| e["event"] == "hook").collect();
    assert_eq!(hooks.len(), 1, "{:#?}", f.events);
    assert_eq!(hooks[0]["hook"], "PreCompact");
    assert_eq!(hooks[0]["trigger"], "manual");
    assert_eq!(hooks[0]["custom"], "keep the names");
    let r = result(f, 2);
    assert_eq!(r["subtype"], "success", "{r}");
    let text = r["result"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("compacted: ") && text.ends_with(" tokens"),
        "{text}"
    );
}

/// PROFILE §19 through a real SDK: `max_budget_usd` 0.01 with a provider priced by the
/// operator (2 USD per million input tokens, 4 per million output): each request costs
/// 0.008 USD, so the second reaches the budget and the third turn ends
/// `error_max_budget_usd` without a request.
pub fn priced_budget(sdk: Sdk) {
    use agentx_test_support::http::{text_with_usage, usage, Reply, Server};
    let server = Server::start_in_thread(vec![
        Reply::Sse(text_with_usage("first", usage(2000, 1000))),
        Reply::Sse(text_with_usage("second", usage(2000, 1000))),
    ]);
    let home = TempDir::new("sdk-priced-home");
    std::fs::write(
        home.path().join("auth.json"),
        format!(
            r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"gpt-x","api_key":"sk-agentx-test-4f3e2d1c","base_url":"{}","pricing":{{"input_per_mtok":2,"output_per_mtok":4}}}}]}}"#,
            server.base_url()
        ),
    )
    .unwrap();
    let Some(f) = run_flow_in(sdk, "priced_budget", home) else {
        return;
    };
    let subtypes: Vec<&str> = f
        .messages("result")
        .iter()
        .map(|r| r["subtype"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(subtypes, ["success", "success", "error_max_budget_usd"]);
    assert_eq!(server.requests().len(), 2, "the third turn made no request");
}

pub fn check_budget(f: &Flow) {
    // PROFILE §15 `--max-budget-usd 0.01`: 0.004, then 0.007 reaches it in a request without
    // tools (that turn ends normally), then a turn ends without a model request.
    let subtypes: Vec<&Value> = f.messages("result").iter().map(|r| &r["subtype"]).collect();
    assert_eq!(subtypes, ["success", "success", "error_max_budget_usd"]);
    assert_eq!(result(f, 1)["result"], "reaches it");
    let r = result(f, 2);
    assert_eq!(r["is_error"], true);
    assert_eq!(r["num_turns"], 0);
    assert_eq!(r["errors"], serde_json::json!(["budget reached: 0.01 USD"]));
    assert!(!f
        .messages("assistant")
        .iter()
        .any(|a| a["blocks"][0]["text"] == "echo: after the budget"));
}

pub fn check_coding(f: &Flow) {
    // PROFILE §17: no permission callback was needed (allowed_tools), the Edit|Write hook saw
    // the Edit only, and the user messages carry the Read's and the Edit's tool_use_result.
    assert!(f.named("callback").is_empty());
    let hooks: Vec<&Value> = f.named("hook").iter().map(|h| &h["tool"]).collect();
    assert_eq!(hooks, [&serde_json::json!("Edit")]);
    let results: Vec<&Value> = f
        .named("tool_use_result")
        .iter()
        .map(|r| &r["value"])
        .collect();
    assert_eq!(results.len(), 2, "{:?}", f.events);
    assert_eq!(results[0]["type"], "text");
    assert_eq!(results[0]["file"]["content"], "a\nb\nc");
    assert_eq!(
        results[1]["structuredPatch"],
        serde_json::json!([{"oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 3,
            "lines": [" a", "-b", "+B", " c"]}])
    );
    assert_eq!(results[1]["originalFile"], "a\nb\nc\n");
    assert_eq!(
        std::fs::read_to_string(f.cwd.path().join("code.txt")).unwrap(),
        "a\nB\nc\n"
    );
}

pub fn check_tool_rules(f: &Flow) {
    // PROFILE §15: `--allowedTools Bash(echo:*)` runs `echo …` without asking, `ls` is asked;
    // `--disallowedTools Write` removes Write from `tools` and from the model's tools.
    let init = f.events.iter().find(|e| e["subtype"] == "init").unwrap();
    assert_eq!(
        init["data"]["tools"],
        serde_json::json!(["Read", "Bash", "Edit", "Glob", "Grep", "TodoWrite"])
    );
    let calls: Vec<&Value> = f.named("callback").iter().map(|c| &c["input"]).collect();
    assert_eq!(calls, [&serde_json::json!({"command": "ls"})]);
    let results: Vec<(&Value, &Value)> = f
        .messages("user")
        .iter()
        .map(|u| (&u["blocks"][0]["content"], &u["blocks"][0]["is_error"]))
        .collect();
    assert_eq!(
        results,
        [
            (
                &serde_json::json!("allowed\nexit code: 0"),
                &Value::Bool(false)
            ),
            (&serde_json::json!("asked and denied"), &Value::Bool(true)),
            (&serde_json::json!("unknown tool Write"), &Value::Bool(true)),
        ]
    );
    assert!(!f.cwd.path().join("w.txt").exists());
    assert_eq!(result(f, 0)["denials"], serde_json::json!(["Bash"]));
}

pub fn check_stop_task(f: &Flow) {
    // PROFILE §15 `stop_task`: the task ends `stopped`; an unknown id is `no task <id>`.
    assert_eq!(f.named("stopped").len(), 1);
    let raised = f.named("raised");
    assert_eq!(raised.len(), 1, "{:?}", f.events);
    assert!(raised[0]["error"]
        .as_str()
        .unwrap()
        .contains("no task nope"));
    let ends: Vec<&Value> = f
        .events
        .iter()
        .filter(|e| e["subtype"] == "task_notification")
        .collect();
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["data"]["task_id"], "t1");
    assert_eq!(ends[0]["data"]["status"], "stopped");
    assert_eq!(result_texts(f), ["started", "echo: after the task"]);
}

/// The `tool_result` blocks of the turn's user messages: (content, is_error).
pub(crate) fn tool_results(f: &Flow) -> Vec<(&Value, &Value)> {
    f.messages("user")
        .iter()
        .map(|u| (&u["blocks"][0]["content"], &u["blocks"][0]["is_error"]))
        .collect()
}

pub fn check_hooks_pre_tool_use(f: &Flow) {
    // PROFILE §16: a PreToolUse hook denies Bash and allows a Read outside the cwd (which §10
    // would ask about): the host's can_use_tool is never called.
    let hooks = f.named("hook");
    let tools: Vec<&Value> = hooks.iter().map(|h| &h["tool"]).collect();
    assert_eq!(tools, ["Read", "Bash"]);
    for h in &hooks {
        assert_eq!(h["hook"], "PreToolUse");
        assert_eq!(h["same_id"], true);
        assert_eq!(
            h["keys"],
            serde_json::json!([
                "cwd",
                "hook_event_name",
                "permission_mode",
                "session_id",
                "tool_input",
                "tool_name",
                "tool_use_id",
                "transcript_path"
            ])
        );
    }
    assert!(f.named("callback").is_empty(), "{:?}", f.events);
    assert_eq!(
        tool_results(f),
        [
            (&serde_json::json!("     1\toutside\n"), &Value::Bool(false)),
            (
                &serde_json::json!("no shell from a hook"),
                &Value::Bool(true)
            ),
        ]
    );
    let r = result(f, 0);
    assert_eq!(r["denials"], serde_json::json!(["Bash"]));
    assert_eq!(r["result"], "done");
    assert!(
        f.stderr.iter().all(|l| !l.contains("WARN")),
        "{:?}",
        f.stderr
    );
}

pub fn check_hooks_post_tool_use(f: &Flow) {
    // PROFILE §16: the PostToolUse context is a text block after the tool's output in the
    // tool_result record, and the model saw both (`!last_tool_result`).
    let hooks = f.named("hook");
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0]["hook"], "PostToolUse");
    assert_eq!(hooks[0]["response"], "     1\tnote\n");
    assert_eq!(
        tool_results(f),
        [(
            &serde_json::json!([
                {"type": "text", "text": "     1\tnote\n"},
                {"type": "text", "text": "checked by a hook"}
            ]),
            &Value::Bool(false)
        )]
    );
    assert_eq!(
        result(f, 0)["result"],
        "last tool result:      1\tnote\n\nchecked by a hook"
    );
}

pub fn check_hooks_user_prompt_submit(f: &Flow) {
    // PROFILE §16: a UserPromptSubmit block ends the turn with the input-error result and no
    // model request; the next prompt runs.
    let prompts: Vec<&Value> = f.named("hook").iter().map(|h| &h["prompt"]).collect();
    assert_eq!(prompts, ["a forbidden topic", "an allowed topic"]);
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
    assert_eq!(r["num_turns"], 0);
    assert_eq!(
        r["errors"],
        serde_json::json!(["input error: blocked by UserPromptSubmit hook: that topic is blocked"])
    );
    assert_eq!(result(f, 1)["result"], "echo: an allowed topic");
}

pub fn check_hooks_raise(f: &Flow) {
    // PROFILE §16: a hook that raises. Default onFailure (continue): no decision, so the
    // host's can_use_tool is asked (and denies); `block`: denied `hook failed` without asking.
    // The session goes on either way.
    assert_eq!(f.named("hook").len(), 2);
    let calls: Vec<&Value> = f.named("callback").iter().map(|c| &c["tool"]).collect();
    assert_eq!(calls, ["Bash"]);
    assert_eq!(
        tool_results(f),
        [
            (&serde_json::json!("host says no"), &Value::Bool(true)),
            (&serde_json::json!("hook failed"), &Value::Bool(true)),
        ]
    );
    assert_eq!(
        result_texts(f),
        ["done", "echo: still here", "done", "echo: still here"]
    );
    let warns: Vec<&String> = f
        .stderr
        .iter()
        .filter(|l| l.contains("PreToolUse hook callback"))
        .collect();
    assert_eq!(warns.len(), 2, "{:?}", f.stderr);
    assert!(warns[0].ends_with("failed: the callback answered an error; onFailure continue"));
    assert!(warns[1].ends_with("failed: the callback answered an error; onFailure block"));
}

pub fn check_hooks_interrupt(f: &Flow) {
    // PROFILE §16 / WIRE-011: an interrupt while the PreToolUse callback is pending cancels
    // it (the SDK saw the control_cancel_request: its callback was cancelled), the tool use
    // gets its `interrupted` tool_result, the host is never asked, the session goes on.
    assert_eq!(f.named("hook").len(), 1);
    assert_eq!(f.named("hook_cancelled").len(), 1, "{:?}", f.events);
    assert_eq!(f.named("interrupted").len(), 1);
    assert!(f.named("callback").is_empty());
    assert_eq!(
        f.labels(),
        [
            "system/init",
            "assistant",
            "user",
            "result/error_during_execution",
            "assistant",
            "result/success"
        ]
    );
    assert_eq!(
        tool_results(f),
        [(&serde_json::json!("interrupted"), &Value::Bool(true))]
    );
    assert_eq!(result(f, 0)["errors"], serde_json::json!(["interrupted"]));
    assert_eq!(result(f, 1)["result"], "echo: after the interrupt");
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

/// PROFILE §16: an SDK MCP server with two tools: system/init lists them and the server
/// `connected`; each `!mcp` call goes through the host's permission callback, runs in the
/// host's process (`mcp_call`) and its result is the `tool_result` (the `isError` one an
/// error); the model saw the last one (`!last_tool_result`).
pub fn check_mcp_tools(f: &Flow) {
    let init = &f.messages("system")[0]["data"];
    let tools = init["tools"].as_array().unwrap();
    for t in ["mcp__calc__add", "mcp__calc__fail"] {
        assert!(tools.contains(&serde_json::json!(t)), "{tools:?}");
    }
    assert_eq!(
        init["mcp_servers"],
        serde_json::json!([{"name": "calc", "status": "connected"}])
    );
    let asked: Vec<&Value> = f.named("callback").iter().map(|c| &c["tool"]).collect();
    assert_eq!(
        asked,
        ["mcp__calc__add", "mcp__calc__fail"],
        "{:?}",
        f.events
    );
    let calls: Vec<(&Value, &Value)> = f
        .named("mcp_call")
        .iter()
        .map(|c| (&c["tool"], &c["args"]))
        .collect();
    assert_eq!(
        calls,
        [
            (
                &serde_json::json!("add"),
                &serde_json::json!({"a": 1, "b": 2})
            ),
            (
                &serde_json::json!("fail"),
                &serde_json::json!({"why": "on purpose"})
            ),
        ]
    );
    let results = tool_results(f);
    assert_eq!(results.len(), 2, "{:?}", f.events);
    let text = |v: &Value| -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => panic!("tool_result content {other}"),
        }
    };
    assert_eq!(text(results[0].0), "3");
    assert_eq!(results[0].1, &Value::Bool(false));
    assert_eq!(text(results[1].0), "failed: on purpose");
    assert_eq!(results[1].1, &Value::Bool(true));
    let r = result(f, 0);
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["result"], "last tool result: failed: on purpose");
}

/// PROFILE §16: `get_mcp_status` / `mcpServerStatus()` reports the SDK server `connected`.
pub fn check_mcp_status(f: &Flow) {
    assert_eq!(
        f.named("mcp_status")[0]["value"],
        serde_json::json!({"mcpServers": [{"name": "calc", "status": "connected"}]})
    );
    assert_eq!(result(f, 0)["subtype"], "success");
}

/// PROFILE §16 / WIRE-011: an interrupt while an MCP call and a PreToolUse callback are
/// pending: the hook callback is cancelled, both tool uses get their `interrupted`
/// `tool_result` in block order, the host is never asked, and the session goes on.
pub fn check_interrupt_hook_mcp(f: &Flow) {
    assert_eq!(f.named("hook").len(), 1);
    assert_eq!(f.named("mcp_call").len(), 1);
    assert_eq!(f.named("hook_cancelled").len(), 1, "{:?}", f.events);
    assert_eq!(f.named("interrupted").len(), 1);
    assert_eq!(
        f.labels(),
        [
            "system/init",
            "assistant",
            "assistant",
            "user",
            "user",
            "result/error_during_execution",
            "assistant",
            "result/success"
        ]
    );
    let interrupted = serde_json::json!("interrupted");
    assert_eq!(
        tool_results(f),
        [
            (&interrupted, &Value::Bool(true)),
            (&interrupted, &Value::Bool(true))
        ]
    );
    assert_eq!(result(f, 0)["errors"], serde_json::json!(["interrupted"]));
    assert_eq!(result(f, 1)["result"], "echo: after the interrupt");
}
