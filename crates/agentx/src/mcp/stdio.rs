//! The stdio transport (PROFILE §18): the server's command in the cwd, in its own process
//! group, with the config's `env` over the variables the official MCP clients pass and
//! nothing else of agentx's environment; newline-delimited JSON-RPC framed by our own
//! [`Reader`] (at most 8,388,608 bytes a message); a stdout line that is not JSON-RPC skipped,
//! more than 64 KiB of them fails the server; stderr drained, its last 4 KiB kept; shutdown
//! by closing stdin, then SIGTERM to the group after 2 s and SIGKILL after 5 s.
//!
//! Must never: let a server's output grow agentx's memory without bound, block agentx on a
//! server that stops reading, or leave a process of the group behind at shutdown.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentx_io::Pump;
use agentx_wire::frame::Reader;
use rustix::process::{kill_process_group, test_kill_process_group, Pid, Signal};

use super::rpc::{Rpc, Transport};

/// The variables a stdio server inherits from agentx (the official MCP clients' set).
pub const INHERITED: [&str; 6] = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"];
/// One message from a server is at most this long (PROFILE §18 "Limits").
pub const MAX_MESSAGE: usize = 8_388_608;
/// More than this many bytes of stdout lines that are not JSON-RPC fail the server.
pub const MAX_SKIPPED: usize = 64 * 1024;
/// The stderr kept for the `failed` message.
pub const STDERR_TAIL: usize = 4 * 1024;
/// After stdin is closed, the group gets SIGTERM at this point…
pub const TERM_AFTER: Duration = Duration::from_secs(2);
/// … and SIGKILL at this one.
pub const KILL_AFTER: Duration = Duration::from_secs(5);

/// A running stdio server.
pub struct StdioServer {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    child: Mutex<Child>,
    pgid: i32,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Disconnected when the stderr reader ends.
    stderr_done: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

/// How long the `failed` message waits for the rest of a dead server's stderr.
const STDERR_GRACE: Duration = Duration::from_millis(500);

struct Pipe(Arc<Mutex<Option<ChildStdin>>>);

impl Transport for Pipe {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        let mut stdin = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let Some(w) = stdin.as_mut() else {
            return Err("the server's stdin is closed".into());
        };
        let mut framed = Vec::with_capacity(message.len() + 1);
        framed.extend_from_slice(message);
        framed.push(b'\n');
        w.write_all(&framed)
            .and_then(|()| w.flush())
            .map_err(|_| "the server's stdin is closed".to_string())
    }
}

/// Starts `command` and its reader threads; `on_end` is called once with a one-line reason
/// when its stdout ends or it breaks the framing rules.
pub fn spawn(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: &Path,
    roots: Vec<String>,
    on_end: impl FnOnce(String) + Send + 'static,
) -> Result<(Arc<StdioServer>, Arc<Rpc>), String> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for name in INHERITED {
        if let Some(v) = std::env::var_os(name) {
            cmd.env(name, v);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("the command could not start: {}", e.kind()))?;
    let pgid = i32::try_from(child.id()).unwrap_or(0);
    let stdin = Arc::new(Mutex::new(child.stdin.take()));
    let stdout = child.stdout.take();
    let stderr_pipe = child.stderr.take();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let server = Arc::new(StdioServer {
        stdin: stdin.clone(),
        child: Mutex::new(child),
        pgid,
        stderr: Arc::new(Mutex::new(Vec::new())),
        stderr_done: Mutex::new(Some(done_rx)),
    });
    let rpc = Rpc::new(Box::new(Pipe(stdin)), roots);
    if let Some(mut err) = stderr_pipe {
        let tail = server.stderr.clone();
        let _ = std::thread::Builder::new()
            .name("agentx-mcp-stderr".into())
            .spawn(move || {
                let _done = done_tx;
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                    t.extend_from_slice(&buf[..n]);
                    if t.len() > STDERR_TAIL {
                        let cut = t.len() - STDERR_TAIL;
                        t.drain(..cut);
                    }
                }
            });
    }
    if let Some(out) = stdout {
        let rpc = rpc.clone();
        let _ = std::thread::Builder::new()
            .name("agentx-mcp-stdout".into())
            .spawn(move || on_end(read_stdout(out, &rpc)));
    }
    Ok((server, rpc))
}

/// Reads the server's stdout until it ends or breaks a rule; returns why it ended.
fn read_stdout(out: impl Read, rpc: &Rpc) -> String {
    let mut pump = Pump::with_reader(out, Reader::with_max_line(MAX_MESSAGE), 64 * 1024);
    let mut skipped = 0usize;
    let ended = pump.each_line(|next| -> Result<(), Stop> {
        let line = next.map_err(|_| Stop::TooLong)?;
        let bytes = line.as_bytes();
        if !rpc.receive(bytes) {
            // PROFILE §18: a line that is not JSON is skipped, as the official clients do.
            skipped += bytes.len() + 1;
            if skipped > MAX_SKIPPED {
                return Err(Stop::Garbage);
            }
        }
        Ok(())
    });
    let why = match ended {
        Ok(()) => "the server closed its stdout".to_string(),
        Err(Stop::Read) => "its stdout could not be read".to_string(),
        Err(Stop::TooLong) => format!("a message is over {MAX_MESSAGE} bytes"),
        Err(Stop::Garbage) => "stdout is not JSON-RPC".to_string(),
    };
    rpc.close(&why);
    why
}

enum Stop {
    Read,
    TooLong,
    Garbage,
}

impl From<std::io::Error> for Stop {
    fn from(_: std::io::Error) -> Stop {
        Stop::Read
    }
}

impl StdioServer {
    /// The last 4 KiB of its stderr, lossily decoded (after waiting briefly for the end of
    /// a dead server's stderr).
    pub fn stderr_tail(&self) -> String {
        if let Some(rx) = self
            .stderr_done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = rx.recv_timeout(STDERR_GRACE);
        }
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&t).into_owned()
    }

    /// Kills the group now (a server that broke the framing rules).
    pub fn kill(&self) {
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(pid) = Pid::from_raw(self.pgid) {
            let _ = kill_process_group(pid, Signal::KILL);
        }
        let _ = self
            .child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .try_wait();
    }

    /// Closes stdin (the server's signal to exit).
    pub fn close_stdin(&self) {
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
    }

    /// True while any process of its group is alive (the leader is reaped first, so a
    /// zombie leader does not count).
    pub fn group_alive(&self) -> bool {
        let _ = self
            .child
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .try_wait();
        Pid::from_raw(self.pgid).is_some_and(|p| test_kill_process_group(p).is_ok())
    }

    /// Signals the whole group.
    pub fn signal(&self, sig: Signal) {
        if let Some(pid) = Pid::from_raw(self.pgid) {
            let _ = kill_process_group(pid, sig);
        }
    }
}

/// PROFILE §18 "Shutdown" for several servers at once: stdin closed, SIGTERM to each group
/// still alive after 2 s, SIGKILL after 5 s. Returns when every group is gone (or was
/// killed).
pub fn shut_down(servers: &[Arc<StdioServer>]) {
    if servers.is_empty() {
        return;
    }
    let start = Instant::now();
    for s in servers {
        s.close_stdin();
    }
    let wait_until = |deadline: Duration| loop {
        if servers.iter().all(|s| !s.group_alive()) {
            return true;
        }
        if start.elapsed() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if wait_until(TERM_AFTER) {
        return;
    }
    for s in servers.iter().filter(|s| s.group_alive()) {
        s.signal(Signal::TERM);
    }
    if wait_until(KILL_AFTER) {
        return;
    }
    for s in servers.iter().filter(|s| s.group_alive()) {
        s.signal(Signal::KILL);
    }
    let _ = wait_until(KILL_AFTER + Duration::from_millis(500));
}
