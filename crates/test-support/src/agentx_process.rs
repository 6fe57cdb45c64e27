//! The real `agentx` binary as a benchmark's peer, shared by the whole-process benches
//! (`agentx`, `upload`, `provider_agentx`): a private AgentX home, the process in stream-json
//! mode on pipes, its stdout read line by line through one large `BufReader` (the bench looks
//! at each line's first bytes, or decodes it), and the end of the run (input closed, exit 0
//! asserted, home removed). It measures nothing itself: timing and `/proc` readings stay with
//! each bench (`proc_stat.rs`).

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A fresh, empty AgentX home under the temp dir (`agentx-bench-<tag>-<pid>`).
pub fn fresh_home(tag: &str) -> PathBuf {
    let home = std::env::temp_dir().join(format!("agentx-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    home
}

/// `n` from the environment variable `name`, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A running `agentx --input-format stream-json --output-format stream-json` with its home.
pub struct AgentProcess {
    pub child: Child,
    /// `None` once closed (input EOF ends the session).
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
    pub home: PathBuf,
    line: Vec<u8>,
}

impl AgentProcess {
    /// Spawns the bench build's `agentx` (or the binary `AGENTX_BENCH_BIN` names, to measure
    /// another build with the same bench) in stream-json mode with `args` after the formats,
    /// `AGENTX_HOME=home` (removed by [`AgentProcess::finish`]) and no `HOME`; its stderr goes
    /// to `stderr`.
    pub fn spawn<A: AsRef<OsStr>>(home: PathBuf, args: &[A], stderr: Stdio) -> AgentProcess {
        let bin = std::env::var_os("AGENTX_BENCH_BIN")
            .map(PathBuf::from)
            .unwrap_or_else(|| crate::bin("agentx"));
        let mut child = Command::new(bin)
            .args([
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ])
            .args(args)
            .env("AGENTX_HOME", &home)
            .env_remove("HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("spawn agentx (cargo bench builds it)");
        let stdin = child.stdin.take();
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
        AgentProcess {
            child,
            stdin,
            stdout,
            home,
            line: Vec::new(),
        }
    }

    /// The AgentX home (also usable as `--cwd`).
    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Writes `bytes` to stdin and flushes.
    pub fn write(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().expect("stdin open");
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    /// A `user` record whose content is `text`, which must hold nothing that needs escaping
    /// (words and digits).
    pub fn say(&mut self, text: &str) {
        let rec = format!(
            "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"parent_tool_use_id\":null}}\n"
        );
        self.write(rec.as_bytes());
    }

    /// The next output line (LF included); panics at end of output.
    pub fn next_line(&mut self) -> &[u8] {
        self.line.clear();
        let n = self.stdout.read_until(b'\n', &mut self.line).unwrap();
        assert!(n > 0, "agentx ended its output early");
        &self.line
    }

    /// The next output line decoded as JSON.
    pub fn next_json(&mut self) -> serde_json::Value {
        let line = self.next_line();
        serde_json::from_slice(line).expect("agentx writes JSON lines")
    }

    /// Closes stdin, reads the rest of the output, asserts exit status 0, removes the home.
    pub fn finish(mut self) {
        self.stdin = None;
        let mut rest = Vec::new();
        let _ = self.stdout.read_to_end(&mut rest);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "agentx exited with {status}");
        let _ = std::fs::remove_dir_all(&self.home);
    }
}
