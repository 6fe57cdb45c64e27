//! What to start, and the start itself for both clients: a program, its arguments,
//! environment and working directory ([`AgentCommand`]); the spawn under the descriptor limit
//! (`host::limits`), the piped ends, and the agent's stderr read to its end on a reader of its
//! own while its first `cap` bytes are kept for `ExitReport::stderr`.
//!
//! Must never: block a client on the agent's stderr (it is drained past the cap, so a chatty
//! agent never stalls on a full pipe), or parse what the agent writes there.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread::{self, JoinHandle};

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
    /// use agentx_wire::host::AgentCommand;
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
    /// let cmd = agentx_wire::host::AgentCommand::new("agentx").arg("--replay-user-messages");
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
    /// let cmd = agentx_wire::host::AgentCommand::stream_json("agentx");
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
    /// use agentx_wire::host::AgentCommand;
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
    /// use agentx_wire::host::AgentCommand;
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
    /// use agentx_wire::host::AgentCommand;
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
    /// use agentx_wire::host::AgentCommand;
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
    /// use agentx_wire::host::AgentCommand;
    /// let c = AgentCommand::stream_json("agentx");
    /// assert_eq!(c.args(), ["--input-format", "stream-json", "--output-format", "stream-json"]);
    /// ```
    pub fn args(&self) -> &[OsString] {
        &self.args
    }

    /// A `std::process::Command` with piped stdin, stdout and stderr.
    ///
    /// ```
    /// use agentx_wire::host::AgentCommand;
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

/// Reads the agent's stderr to its end (or a read error) on a thread of its own; the handle
/// yields the kept bytes.
pub(crate) fn capture_stderr(
    mut stderr: impl Read + Send + 'static,
    cap: usize,
) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut kept = KeptStderr::new(cap);
        let mut buf = [0u8; STDERR_CHUNK];
        loop {
            match stderr.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => kept.keep(&buf[..n]),
            }
        }
        kept.kept
    })
}

/// [`capture_stderr`] as a tokio task, for the async client.
#[cfg(feature = "tokio")]
pub(crate) fn capture_stderr_async(
    mut stderr: impl ::tokio::io::AsyncRead + Unpin + Send + 'static,
    cap: usize,
) -> ::tokio::task::JoinHandle<Vec<u8>> {
    use ::tokio::io::AsyncReadExt as _;
    ::tokio::spawn(async move {
        let mut kept = KeptStderr::new(cap);
        let mut buf = [0u8; STDERR_CHUNK];
        loop {
            match stderr.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => kept.keep(&buf[..n]),
            }
        }
        kept.kept
    })
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
