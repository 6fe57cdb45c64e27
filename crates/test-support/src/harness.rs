//! Black-box harness for the real `agentx` binary: spawn it with a temporary AgentX home,
//! write input records, wait for output records (generous timeout, no sleeps), and check
//! everything it wrote with `agentx-wire check --direction output`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

pub const TIMEOUT: Duration = Duration::from_secs(60);

/// A fresh directory under the system temp dir (removed on drop).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "agentx-bb-{}-{}-{}",
            tag,
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `agentx` binary under test ([`crate::bin`]).
pub fn agentx_bin() -> PathBuf {
    crate::bin("agentx")
}

pub const SESSION_ARGS: [&str; 4] = [
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
];

/// `agentx` with `AGENTX_HOME=home` and no `HOME`; arguments and stdio are the caller's.
pub fn agentx_command(home: &Path) -> Command {
    let mut cmd = Command::new(agentx_bin());
    cmd.env("AGENTX_HOME", home).env_remove("HOME");
    cmd
}

/// `agentx` in stream-json session mode with `extra` arguments and `--cwd home` (unless
/// `extra` names a cwd).
pub fn session_command(home: &Path, extra: &[&str]) -> Command {
    let mut cmd = agentx_command(home);
    cmd.args(SESSION_ARGS).args(extra);
    if !extra.contains(&"--cwd") {
        cmd.arg("--cwd").arg(home);
    }
    cmd
}

pub struct Agentx {
    pub child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Option<Value>>,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Signalled when the stderr reader has seen EOF (every byte is in `stderr`).
    stderr_done: Receiver<()>,
    /// Every record received so far.
    pub seen: Vec<Value>,
}

impl Agentx {
    /// Spawns `agentx` in session mode with `extra` arguments, `AGENTX_HOME=home` and
    /// `--cwd home`.
    pub fn session(home: &Path, extra: &[&str]) -> Agentx {
        Agentx::start(session_command(home, extra))
    }

    /// Spawns `agentx ARGS` with `AGENTX_HOME=home` (no `--cwd` added).
    pub fn spawn(home: &Path, args: &[String]) -> Agentx {
        let mut cmd = agentx_command(home);
        cmd.args(args);
        Agentx::start(cmd)
    }

    /// Spawns `cmd` with piped stdio and starts the stdout and stderr readers.
    pub fn start(mut cmd: Command) -> Agentx {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn agentx");
        let (tx, rx) = mpsc::channel();
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        let log = Arc::clone(&stdout);
        std::thread::spawn(move || {
            let mut r = BufReader::new(out);
            loop {
                let mut line = Vec::new();
                match r.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) if !line.ends_with(b"\n") => {
                        // The output ended inside a line: a SIGKILL mid-write (the crash tests)
                        // tears the last one. It is kept in the bytes (`Finished::stdout`, which
                        // `assert_valid_output` rejects) and ends the records.
                        log.lock().unwrap().extend_from_slice(&line);
                        let _ = tx.send(None);
                        return;
                    }
                    Ok(_) => {
                        log.lock().unwrap().extend_from_slice(&line);
                        let v: Value = serde_json::from_slice(&line).unwrap_or_else(|e| {
                            panic!(
                                "agentx wrote a non-JSON line ({e}): {}",
                                String::from_utf8_lossy(&line)
                            )
                        });
                        let _ = tx.send(Some(v));
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let err = child.stderr.take().unwrap();
        let elog = Arc::clone(&stderr);
        let (done_tx, stderr_done) = mpsc::channel();
        std::thread::spawn(move || {
            let mut e = err;
            let mut buf = [0u8; 4096];
            while let Ok(n) = e.read(&mut buf) {
                if n == 0 {
                    break;
                }
                elog.lock().unwrap().extend_from_slice(&buf[..n]);
            }
            let _ = done_tx.send(());
        });
        let stdin = child.stdin.take();
        Agentx {
            child,
            stdin,
            rx,
            stdout,
            stderr,
            stderr_done,
            seen: Vec::new(),
        }
    }

    /// Writes raw bytes to stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let s = self.stdin.as_mut().expect("stdin open");
        s.write_all(bytes).expect("write stdin");
        s.flush().unwrap();
    }

    /// Writes one record and its LF.
    pub fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).unwrap();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// A `user` record with text `text`.
    pub fn say(&mut self, text: &str) {
        self.send(&user(text));
    }

    /// Hands agentx's stdin to the caller (a writer thread); `send` panics afterwards.
    pub fn take_stdin(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin open")
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next record, or `None` at end of output; panics after [`TIMEOUT`].
    #[allow(clippy::should_implement_trait)] // a blocking read with a timeout, not an iterator
    pub fn next(&mut self) -> Option<Value> {
        match self.rx.recv_timeout(TIMEOUT) {
            Ok(Some(v)) => {
                self.seen.push(v.clone());
                Some(v)
            }
            Ok(None) => None,
            Err(RecvTimeoutError::Disconnected) => panic!(
                "the stdout reader stopped (it panicked: see above); stderr: {}",
                self.stderr_text()
            ),
            Err(RecvTimeoutError::Timeout) => panic!(
                "timed out waiting for a record; stderr: {}",
                self.stderr_text()
            ),
        }
    }

    /// Records up to and including the first that matches `pred`.
    pub fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let v = self.next().unwrap_or_else(|| {
                panic!(
                    "output ended before the awaited record; got {out:#?}; stderr: {}",
                    self.stderr_text()
                )
            });
            let hit = pred(&v);
            out.push(v);
            if hit {
                return out;
            }
        }
    }

    /// Records up to and including the next `result`, then up to `idle`.
    pub fn turn(&mut self) -> Vec<Value> {
        self.until(|v| is_state(v, "idle"))
    }

    /// Closes stdin, reads the rest, waits: (status, remaining records).
    pub fn finish(mut self) -> Finished {
        self.close_stdin();
        let mut rest = Vec::new();
        while let Some(v) = self.next() {
            rest.push(v);
        }
        let status = self.child.wait().unwrap().code();
        // The process has exited, but its last stderr bytes may still be in the pipe: wait for
        // the reader's EOF (bounded, in case a killed tool's orphan still holds the pipe).
        let _ = self.stderr_done.recv_timeout(Duration::from_secs(30));
        let stdout = self.stdout.lock().unwrap().clone();
        let stderr = self.stderr_text();
        Finished {
            status,
            rest,
            stdout,
            stderr,
        }
    }

    /// The byte length (LF excluded) of output line `index` (0-based; the index of the record
    /// in [`Agentx::seen`]).
    pub fn line_len(&self, index: usize) -> usize {
        let out = self.stdout.lock().unwrap();
        out.split(|&b| b == b'\n')
            .nth(index)
            .map(<[u8]>::len)
            .expect("that line was read")
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

pub struct Finished {
    pub status: Option<i32>,
    pub rest: Vec<Value>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Finished {
    /// Every record written passes `agentx-wire check --direction output`.
    pub fn assert_valid_output(&self) {
        check_output(&self.stdout);
    }

    /// The process exited 0 and no output line is longer than `max` bytes (PROFILE §15's
    /// 1,048,576-byte line in the SDK profile).
    pub fn assert_exit_0_with_lines_within(&self, max: usize) {
        assert_eq!(self.status, Some(0));
        assert!(self.stdout.split(|&b| b == b'\n').all(|l| l.len() <= max));
    }
}

/// Runs `cmd` to its end with `stdin` written by a thread (so a full stdout pipe cannot block
/// the writer): its output.
pub fn output_with_stdin(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut c = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut input = c.stdin.take().unwrap();
    let data = stdin.to_vec();
    let w = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = c.wait_with_output().unwrap();
    w.join().unwrap();
    out
}

/// Runs the real `agentx-wire check --direction output` on `bytes`.
pub fn check_output(bytes: &[u8]) {
    let mut cmd = Command::new(crate::bin("agentx-wire"));
    cmd.args(["check", "--direction", "output", "-"]);
    let out = output_with_stdin(cmd, bytes);
    assert!(
        out.status.success(),
        "agentx-wire check --direction output failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub fn user(text: &str) -> Value {
    serde_json::json!({"type":"user","message":{"role":"user","content":text},"parent_tool_use_id":null})
}

pub fn is_type(v: &Value, t: &str) -> bool {
    v["type"] == t
}

pub fn is_state(v: &Value, s: &str) -> bool {
    v["type"] == "system" && v["subtype"] == "session_state_changed" && v["state"] == s
}

pub fn is_result(v: &Value) -> bool {
    is_type(v, "result")
}

pub fn is_permission_request(v: &Value) -> bool {
    v["type"] == "control_request" && v["request"]["subtype"] == "can_use_tool"
}

/// A short label per record, for exact order assertions.
pub fn label(v: &Value) -> String {
    match v["type"].as_str().unwrap_or("?") {
        "system" => format!(
            "system/{}{}",
            v["subtype"].as_str().unwrap_or("?"),
            v["state"]
                .as_str()
                .map(|s| format!(":{s}"))
                .unwrap_or_default()
        ),
        "assistant" => {
            let block = &v["message"]["content"][0];
            match block["type"].as_str() {
                Some("text") => format!("assistant:text:{}", block["text"].as_str().unwrap_or("")),
                Some("tool_use") => format!(
                    "assistant:tool_use:{}",
                    block["name"].as_str().unwrap_or("")
                ),
                _ => "assistant".into(),
            }
        }
        "user" => {
            let block = &v["message"]["content"][0];
            if block["type"] == "tool_result" {
                format!(
                    "user:tool_result:{}",
                    if block["is_error"] == true {
                        "error"
                    } else {
                        "ok"
                    }
                )
            } else {
                "user".into()
            }
        }
        "result" => format!("result:{}", v["subtype"].as_str().unwrap_or("?")),
        "control_request" => format!(
            "control_request:{}",
            v["request"]["subtype"].as_str().unwrap_or("?")
        ),
        "control_response" => format!(
            "control_response:{}",
            v["response"]["subtype"].as_str().unwrap_or("?")
        ),
        other => other.to_string(),
    }
}

pub fn labels(vs: &[Value]) -> Vec<String> {
    vs.iter().map(label).collect()
}

/// A host permission answer.
pub fn allow(request_id: &str) -> Value {
    serde_json::json!({"type":"control_response","response":{"subtype":"success","request_id":request_id,"response":{"behavior":"allow"}}})
}

pub fn deny(request_id: &str, message: &str) -> Value {
    serde_json::json!({"type":"control_response","response":{"subtype":"success","request_id":request_id,"response":{"behavior":"deny","message":message}}})
}

pub fn control(request_id: &str, subtype: &str) -> Value {
    serde_json::json!({"type":"control_request","request_id":request_id,"request":{"subtype":subtype}})
}

/// Writes `settings.json` with a permission hook running `script` under /bin/sh.
pub fn write_hook(home: &Path, script: &str) {
    let settings = serde_json::json!({"version":1,"permission_hook":{"command":["/bin/sh","-c",script],"timeout_ms":30000}});
    std::fs::write(
        home.join("settings.json"),
        serde_json::to_vec(&settings).unwrap(),
    )
    .unwrap();
}

/// Runs `agentx ARGS` to its end with `AGENTX_HOME=home` and `stdin`: (status, stdout, stderr).
pub fn run(home: &Path, args: &[&str], stdin: &[u8]) -> (Option<i32>, Vec<u8>, String) {
    let mut cmd = agentx_command(home);
    cmd.args(args);
    let out = output_with_stdin(cmd, stdin);
    (
        out.status.code(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// [`run`] in stream-json session mode: `SESSION_ARGS` then `extra`.
pub fn run_session(home: &Path, extra: &[&str], stdin: &[u8]) -> (Option<i32>, Vec<u8>, String) {
    let mut args = SESSION_ARGS.to_vec();
    args.extend_from_slice(extra);
    run(home, &args, stdin)
}

/// [`run`] with `--cwd home` appended (one-shot `-p` runs).
pub fn run_in_home(home: &Path, args: &[&str]) -> (Option<i32>, Vec<u8>, String) {
    let cwd = home.to_string_lossy().into_owned();
    let mut all = args.to_vec();
    all.extend(["--cwd", cwd.as_str()]);
    run(home, &all, b"")
}
