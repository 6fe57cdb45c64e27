//! What to start, and the start itself for both clients: a program, its arguments,
//! environment and working directory ([`AgentCommand`]); the spawn under the descriptor limit
//! (`host::limits`), the piped ends, and the agent's stderr read to its end on a reader of its
//! own while its first `cap` bytes are kept for `ExitReport::stderr`.
//!
//! Must never: block a client on the agent's stderr (it is drained past the cap, so a chatty
//! agent never stalls on a full pipe; `close` waits for its end at most [`STDERR_GRACE`], so
//! a descendant holding it does not hold `close`), or parse what the agent writes there.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use super::error::HostError;
use super::limits::{spawn_with_descriptors, DESCRIPTORS_PER_AGENT};

/// The stderr bytes a client keeps unless told otherwise (1 MiB).
pub(crate) const DEFAULT_STDERR_CAP: usize = 1 << 20;

/// One read of the agent's stderr.
const STDERR_CHUNK: usize = 8192;

/// How to start the agent. Any command that speaks the protocol on stdin/stdout works.
#[derive(Clone)]
pub struct AgentCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
}

impl std::fmt::Debug for AgentCommand {
    /// The program, how many arguments, the names of the variables set or removed and the
    /// working directory: never an argument or a variable's value, which may be a key
    /// (`OPENAI_API_KEY`, an `ssh` command line).
    ///
    /// ```
    /// use agentx_io::host::AgentCommand;
    /// let c = AgentCommand::new("agentx").arg("--key=sk-1").env("OPENAI_API_KEY", "sk-2");
    /// let shown = format!("{c:?}");
    /// assert!(shown.contains("OPENAI_API_KEY") && !shown.contains("sk-"));
    /// ```
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentCommand")
            .field("program", &self.program)
            .field("args", &self.args.len())
            .field("env", &self.env.iter().map(|(k, _)| k).collect::<Vec<_>>())
            .field("cwd", &self.cwd)
            .finish()
    }
}

impl AgentCommand {
    /// `program` with no arguments.
    ///
    /// ```
    /// let cmd = agentx_io::host::AgentCommand::new("agentx").arg("--replay-user-messages");
    /// assert_eq!(cmd.args().len(), 1);
    /// ```
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        AgentCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// `agentx` (from `program`) in stream-json mode: `--input-format stream-json
    /// --output-format stream-json`.
    ///
    /// ```
    /// let cmd = agentx_io::host::AgentCommand::stream_json("agentx");
    /// assert_eq!(cmd.args().len(), 4);
    /// ```
    pub fn stream_json(program: impl AsRef<OsStr>) -> Self {
        AgentCommand::new(program)
            .arg("--input-format")
            .arg("stream-json")
            .arg("--output-format")
            .arg("stream-json")
    }

    /// Appends one argument.
    ///
    /// ```
    /// use agentx_io::host::AgentCommand;
    /// let c = AgentCommand::new("agentx").arg("--provider").arg("echo");
    /// assert_eq!(c.args().len(), 2);
    /// ```
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Self {
        self.args.push(a.as_ref().to_owned());
        self
    }

    /// Sets an environment variable for the child.
    ///
    /// ```
    /// use agentx_io::host::AgentCommand;
    /// let c = AgentCommand::stream_json("agentx").env("AGENTX_HOME", "/tmp/agentx-home");
    /// assert_eq!(c.to_command().get_envs().count(), 1);
    /// ```
    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> Self {
        self.env
            .push((k.as_ref().to_owned(), Some(v.as_ref().to_owned())));
        self
    }

    /// Removes an environment variable for the child.
    ///
    /// ```
    /// use agentx_io::host::AgentCommand;
    /// let c = AgentCommand::stream_json("agentx").env_remove("OPENAI_API_KEY");
    /// let envs: Vec<_> = c.to_command().get_envs().map(|(k, v)| (k.to_owned(), v.is_none())).collect();
    /// assert_eq!(envs, [("OPENAI_API_KEY".into(), true)]);
    /// ```
    pub fn env_remove(mut self, k: impl AsRef<OsStr>) -> Self {
        self.env.push((k.as_ref().to_owned(), None));
        self
    }

    /// The child's working directory.
    ///
    /// ```
    /// use agentx_io::host::AgentCommand;
    /// let c = AgentCommand::stream_json("agentx").current_dir("/tmp");
    /// assert_eq!(c.to_command().get_current_dir(), Some(std::path::Path::new("/tmp")));
    /// ```
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The arguments so far.
    ///
    /// ```
    /// use agentx_io::host::AgentCommand;
    /// let c = AgentCommand::stream_json("agentx");
    /// assert_eq!(c.args(), ["--input-format", "stream-json", "--output-format", "stream-json"]);
    /// ```
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// A `std::process::Command` with piped stdin, stdout and stderr.
    ///
    /// ```
    /// use agentx_io::host::AgentCommand;
    /// let c = AgentCommand::new("agentx").arg("--version").to_command();
    /// assert_eq!(c.get_program(), "agentx");
    /// ```
    pub fn to_command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in &self.env {
            match v {
                Some(v) => c.env(k, v),
                None => c.env_remove(k),
            };
        }
        if let Some(d) = &self.cwd {
            c.current_dir(d);
        }
        c
    }
}

impl AgentCommand {
    /// Spawns the agent for the blocking client ([`DESCRIPTORS_PER_AGENT`]).
    pub(crate) fn spawn_blocking(&self) -> Result<std::process::Child, HostError> {
        spawn_with_descriptors(DESCRIPTORS_PER_AGENT, || self.to_command().spawn())
    }

    /// Spawns the agent for the async client, killed when its handle is dropped
    /// ([`DESCRIPTORS_PER_ASYNC_AGENT`](super::DESCRIPTORS_PER_ASYNC_AGENT)).
    #[cfg(feature = "tokio")]
    pub(crate) fn spawn_tokio(&self) -> Result<::tokio::process::Child, HostError> {
        let mut cmd = ::tokio::process::Command::from(self.to_command());
        cmd.kill_on_drop(true);
        spawn_with_descriptors(super::DESCRIPTORS_PER_ASYNC_AGENT, || cmd.spawn())
    }
}

/// The agent's stdin and stdout, taken from a child spawned with [`AgentCommand::to_command`]
/// (which pipes both; a missing end is a closed input or output).
pub(crate) fn pipes<I, O>(stdin: Option<I>, stdout: Option<O>) -> Result<(I, O), HostError> {
    let stdin = stdin.ok_or(HostError::InputClosed)?;
    let stdout = stdout.ok_or(HostError::StreamClosed)?;
    Ok((stdin, stdout))
}

/// What a client keeps of the agent's stderr: the first `cap` bytes of everything read.
struct KeptStderr {
    kept: Vec<u8>,
    cap: usize,
}

impl KeptStderr {
    fn new(cap: usize) -> KeptStderr {
        KeptStderr {
            kept: Vec::new(),
            cap,
        }
    }

    /// Keeps what fits of one read; the rest is dropped (the pipe is still drained).
    fn keep(&mut self, read: &[u8]) {
        let room = self.cap.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&read[..read.len().min(room)]);
    }
}

/// How long `close` waits for the agent's stderr to end once the agent exited. The pipe ends
/// at once unless a descendant of the agent still holds it (a server it started in the
/// background); `close` then takes what was kept by then and stops reading.
pub(crate) const STDERR_GRACE: Duration = Duration::from_secs(1);

/// What the reader of the agent's stderr and the `close` that ends it share.
struct StderrShared {
    kept: Mutex<KeptStderr>,
    /// Set by `close` after its grace: the reader drops the pipe at its next read's return.
    stop: AtomicBool,
}

impl StderrShared {
    fn new(cap: usize) -> Arc<StderrShared> {
        Arc::new(StderrShared {
            kept: Mutex::new(KeptStderr::new(cap)),
            stop: AtomicBool::new(false),
        })
    }

    /// Keeps one read; false once the reader is to stop.
    fn took(&self, read: &[u8]) -> bool {
        if self.stop.load(Ordering::Acquire) {
            return false;
        }
        lock(&self.kept).keep(read);
        true
    }

    /// Stops the reader and takes what it kept.
    fn finish(&self) -> Vec<u8> {
        self.stop.store(true, Ordering::Release);
        std::mem::take(&mut lock(&self.kept).kept)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The agent's stderr, read to its end (or a read error) on a thread of its own.
pub(crate) struct StderrCapture {
    shared: Arc<StderrShared>,
    /// Disconnected when the reader ends (in a mutex: the client is `Sync`).
    ended: Mutex<mpsc::Receiver<()>>,
}

impl StderrCapture {
    /// Waits up to `grace` for the pipe to end, then stops reading: the kept bytes.
    pub(crate) fn finish(self, grace: Duration) -> Vec<u8> {
        let _ = lock(&self.ended).recv_timeout(grace);
        self.shared.finish()
    }
}

/// Starts reading the agent's stderr; the first `cap` bytes are kept.
pub(crate) fn capture_stderr(mut stderr: impl Read + Send + 'static, cap: usize) -> StderrCapture {
    let shared = StderrShared::new(cap);
    let (alive, ended) = mpsc::channel::<()>();
    let reader = Arc::clone(&shared);
    thread::spawn(move || {
        let _alive = alive;
        let mut buf = [0u8; STDERR_CHUNK];
        loop {
            match stderr.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) if reader.took(&buf[..n]) => {}
                Ok(_) => break,
            }
        }
    });
    StderrCapture {
        shared,
        ended: Mutex::new(ended),
    }
}

/// [`StderrCapture`] as a tokio task, for the async client.
#[cfg(feature = "tokio")]
pub(crate) struct AsyncStderrCapture {
    shared: Arc<StderrShared>,
    task: ::tokio::task::JoinHandle<()>,
}

#[cfg(feature = "tokio")]
impl AsyncStderrCapture {
    /// Waits up to `grace` for the pipe to end, then drops it: the kept bytes.
    pub(crate) async fn finish(mut self, grace: Duration) -> Vec<u8> {
        if ::tokio::time::timeout(grace, &mut self.task).await.is_err() {
            self.task.abort();
        }
        self.shared.finish()
    }
}

/// [`capture_stderr`] as a tokio task.
#[cfg(feature = "tokio")]
pub(crate) fn capture_stderr_async(
    mut stderr: impl ::tokio::io::AsyncRead + Unpin + Send + 'static,
    cap: usize,
) -> AsyncStderrCapture {
    use ::tokio::io::AsyncReadExt as _;
    let shared = StderrShared::new(cap);
    let reader = Arc::clone(&shared);
    let task = ::tokio::spawn(async move {
        let mut buf = [0u8; STDERR_CHUNK];
        loop {
            match stderr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) if reader.took(&buf[..n]) => {}
                Ok(_) => break,
            }
        }
    });
    AsyncStderrCapture { shared, task }
}

#[cfg(test)]
mod tests {
    use super::KeptStderr;

    #[test]
    fn stderr_is_kept_up_to_the_cap_at_its_edge() {
        for (cap, reads, kept) in [
            (0, &[3usize, 2][..], 0),
            (5, &[3, 2], 5),
            (5, &[3, 3], 5),
            (5, &[6], 5),
            (6, &[3, 2], 5),
        ] {
            let mut k = KeptStderr::new(cap);
            for &n in reads {
                k.keep(&vec![b'e'; n]);
            }
            assert_eq!(k.kept.len(), kept, "cap {cap} reads {reads:?}");
        }
    }
}
