//! What to start: a program, its arguments, environment and working directory.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// How to start the agent. Any command that speaks the protocol on stdin/stdout works.
#[derive(Clone, Debug)]
pub struct AgentCommand {
    program: OsString,
    args: Vec<OsString>,
    env: Vec<(OsString, Option<OsString>)>,
    cwd: Option<PathBuf>,
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
