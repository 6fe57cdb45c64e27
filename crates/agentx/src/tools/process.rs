//! Child processes in their own process group, with a deadline, an output cap and a kill
//! switch: the `Bash` tool and the permission hook run through [`run`].
//!
//! Owns the process-group discipline (the child leads a new group, so killing the group also
//! kills what it started), the watchdog that kills the group at the deadline, and reading the
//! output while keeping only the first `cap` bytes (the rest is drained so the child never
//! blocks on a full pipe). A call ends when its child exits (PROFILE §10 "Bash and the
//! processes it leaves"): what processes it started in the background still write is read for
//! at most [`LINGER`] after that, then the call returns; they are never waited for. Their group
//! stays known to the [`KillSwitch`] ([`KillSwitch::kill_leftovers`]) so agentx's exit can
//! kill it. Must never: be called on the thread that reads stdin (it blocks until the child
//! ends), or wait for a pipe that a background process holds open.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{kill_process_group, Pid, Signal};

/// A handle that kills a running child's whole process group; clone it to the thread that
/// may cancel (interrupt, EOF, a race lost).
#[derive(Clone, Default, Debug)]
pub struct KillSwitch(Arc<Mutex<KillState>>);

#[derive(Default, Debug)]
struct KillState {
    /// The running group (the child's pid), until the child is reaped.
    group: Option<i32>,
    /// The group of a reaped child, which processes it started may still be in.
    leftover: Option<i32>,
    /// Kill was asked (before or after the spawn).
    killed: bool,
    /// The guarded work reported its end.
    finished: bool,
}

impl KillSwitch {
    /// A switch not yet pulled.
    pub fn new() -> KillSwitch {
        KillSwitch::default()
    }

    /// Kills the group with SIGKILL now, or at spawn when the child has not started yet.
    pub fn kill(&self) {
        let mut st = self.0.lock().unwrap_or_else(|e| e.into_inner());
        st.killed = true;
        if let Some(pid) = st.group {
            kill_group(pid);
        }
    }

    /// The work this switch guards is over (its owner may forget it).
    pub fn finish(&self) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).finished = true;
    }

    /// Whether [`KillSwitch::finish`] was called.
    pub fn is_finished(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).finished
    }

    /// Whether [`KillSwitch::kill`] was called.
    pub fn was_killed(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).killed
    }

    fn attach(&self, pid: i32) -> bool {
        let mut st = self.0.lock().unwrap_or_else(|e| e.into_inner());
        st.group = Some(pid);
        if st.killed {
            kill_group(pid);
        }
        !st.killed
    }

    fn detach(&self) {
        let mut st = self.0.lock().unwrap_or_else(|e| e.into_inner());
        st.leftover = st.group.take();
    }

    /// Whether processes of a finished child's group are still alive.
    pub fn has_leftovers(&self) -> bool {
        let st = self.0.lock().unwrap_or_else(|e| e.into_inner());
        st.leftover.and_then(Pid::from_raw).is_some_and(|pid| {
            // Signal 0 checks the group exists without touching it.
            rustix::process::test_kill_process_group(pid).is_ok()
        })
    }

    /// Kills what a finished child left running in its group (agentx's exit, PROFILE §10).
    pub fn kill_leftovers(&self) {
        let leftover = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .leftover
            .take();
        if let Some(pid) = leftover {
            kill_group(pid);
        }
    }
}

/// How long output is still read after the child exits, for what it started in the
/// background (PROFILE §10).
pub const LINGER: Duration = Duration::from_millis(100);

fn kill_group(pid: i32) {
    if let Some(pid) = Pid::from_raw(pid) {
        // ESRCH (already gone) is fine: the group ended by itself.
        let _ = kill_process_group(pid, Signal::KILL);
    }
}

/// The output read so far, shared with the reading thread.
struct Collected {
    output: Vec<u8>,
    truncated: bool,
    /// The call has not returned yet: what is read is kept (up to the cap).
    open: bool,
}

/// How a child ended.
#[derive(Debug)]
pub struct Outcome {
    /// `None` when the status could not be collected.
    pub status: Option<ExitStatus>,
    /// The first `cap` bytes of its output (with [`Capture::Separate`], of its stdout).
    pub output: Vec<u8>,
    /// More than `cap` bytes were written (to `output`'s stream or streams).
    pub truncated: bool,
    /// [`Capture::Separate`]: the first `cap` bytes of its stderr.
    pub stderr: Vec<u8>,
    /// [`Capture::Separate`]: more than `cap` bytes were written to stderr.
    pub stderr_truncated: bool,
    /// The deadline passed and the group was killed.
    pub timed_out: bool,
    /// The kill switch ended it.
    pub killed: bool,
}

impl Outcome {
    /// The exit code, or `128 + signal` for a signalled child, as shells report it.
    pub fn code(&self) -> Option<i32> {
        let s = self.status?;
        s.code().or_else(|| s.signal().map(|n| 128 + n))
    }
}

/// Which streams the output collects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capture {
    /// stdout only; stderr goes to /dev/null.
    Stdout,
    /// stdout and stderr through a pipe each, each capped at `cap`.
    Separate,
}

/// Reads `reader` until every writer is gone, keeping the first `cap` bytes while the call
/// is open; after the call returned it only drains, so a background process never blocks on a
/// full pipe (nor dies of a closed one). Sends on `eof` at the end.
fn spawn_reader(
    reader: std::io::PipeReader,
    collected: Arc<Mutex<Collected>>,
    cap: usize,
    eof: mpsc::Sender<()>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("agentx-output".into())
        .spawn(move || {
            let mut reader = reader;
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let mut c = collected.lock().unwrap_or_else(|e| e.into_inner());
                        if c.open {
                            let room = cap.saturating_sub(c.output.len());
                            c.output.extend_from_slice(&buf[..n.min(room)]);
                            c.truncated |= n > room;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = eof.send(());
        })?;
    Ok(())
}

/// Closes `collected` to new output and takes what it holds.
fn take(collected: &Mutex<Collected>) -> (Vec<u8>, bool) {
    let mut c = collected.lock().unwrap_or_else(|e| e.into_inner());
    c.open = false;
    (std::mem::take(&mut c.output), c.truncated)
}

/// Spawns `cmd` in a new process group with `stdin` written to its standard input (then
/// closed), collects up to `cap` bytes of output, and kills the group at `timeout` or when
/// `kill` fires. Blocks until the child is reaped; an error only when it cannot be spawned.
pub fn run(
    mut cmd: Command,
    stdin: Option<Vec<u8>>,
    capture: Capture,
    cap: usize,
    timeout: Duration,
    kill: &KillSwitch,
) -> std::io::Result<Outcome> {
    let (reader, writer) = std::io::pipe()?;
    let mut err_reader = None;
    match capture {
        Capture::Stdout => {
            cmd.stdout(writer).stderr(Stdio::null());
        }
        Capture::Separate => {
            let (r, w) = std::io::pipe()?;
            err_reader = Some(r);
            cmd.stdout(writer).stderr(w);
        }
    }
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.process_group(0);
    let mut child = cmd.spawn()?;
    // The Command still holds our copies of the pipes' write ends: drop them, or the reads
    // below never see EOF.
    drop(cmd);
    let pid = i32::try_from(child.id()).unwrap_or(0);
    kill.attach(pid);

    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A child that exits without reading gives EPIPE: not our error.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&bytes);
        });
    }

    let (done_tx, done_rx) = mpsc::channel::<()>();
    let watchdog = {
        let kill = kill.clone();
        std::thread::spawn(move || match done_rx.recv_timeout(timeout) {
            Err(mpsc::RecvTimeoutError::Timeout) => {
                kill.kill();
                true
            }
            _ => false,
        })
    };

    let new = || {
        Arc::new(Mutex::new(Collected {
            output: Vec::new(),
            truncated: false,
            open: true,
        }))
    };
    let (collected, err_collected) = (new(), new());
    let (eof_tx, eof_rx) = mpsc::channel::<()>();
    spawn_reader(reader, Arc::clone(&collected), cap, eof_tx.clone())?;
    let streams = match err_reader {
        Some(r) => {
            spawn_reader(r, Arc::clone(&err_collected), cap, eof_tx)?;
            2
        }
        None => 1,
    };
    let status = child.wait().ok();
    let _ = done_tx.send(());
    let timed_out = watchdog.join().unwrap_or(false);
    kill.detach();
    // PROFILE §10: the output of what it left in the background, for at most LINGER.
    let linger_end = std::time::Instant::now() + LINGER;
    for _ in 0..streams {
        let left = linger_end.saturating_duration_since(std::time::Instant::now());
        if eof_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    let (output, truncated) = take(&collected);
    let (stderr, stderr_truncated) = take(&err_collected);
    let killed = kill.was_killed() && !timed_out;
    Ok(Outcome {
        status,
        output,
        truncated,
        stderr,
        stderr_truncated,
        timed_out,
        killed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn separate_streams_and_exit_code() {
        let out = run(
            sh("echo err >&2; echo out; exit 3"),
            None,
            Capture::Separate,
            1000,
            Duration::from_secs(30),
            &KillSwitch::new(),
        )
        .unwrap();
        assert_eq!(
            (&out.output[..], &out.stderr[..]),
            (&b"out\n"[..], &b"err\n"[..])
        );
        assert_eq!(out.code(), Some(3));
        assert!(!out.truncated && !out.timed_out && !out.killed);
    }

    #[test]
    fn cap_keeps_the_first_bytes_and_drains_the_rest() {
        let out = run(
            sh("head -c 100000 /dev/zero | tr '\\0' a"),
            None,
            Capture::Stdout,
            30_000,
            Duration::from_secs(30),
            &KillSwitch::new(),
        )
        .unwrap();
        assert_eq!(out.output.len(), 30_000);
        assert!(out.truncated);
        assert_eq!(out.code(), Some(0));
    }

    #[test]
    fn stdin_is_delivered() {
        let out = run(
            sh("read line; echo \"got $line\""),
            Some(b"hello\n".to_vec()),
            Capture::Stdout,
            100,
            Duration::from_secs(30),
            &KillSwitch::new(),
        )
        .unwrap();
        assert_eq!(out.output, b"got hello\n");
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let started = Instant::now();
        // The grandchild keeps the pipe open: only a group kill ends the read.
        let out = run(
            sh("sleep 30 & sleep 30; echo never"),
            None,
            Capture::Separate,
            100,
            Duration::from_millis(200),
            &KillSwitch::new(),
        )
        .unwrap();
        assert!(out.timed_out);
        assert_eq!(out.code(), Some(128 + 9));
        assert!(started.elapsed() < Duration::from_secs(20));
    }

    #[test]
    fn kill_switch_ends_a_running_child() {
        let kill = KillSwitch::new();
        let k2 = kill.clone();
        let t = std::thread::spawn(move || {
            run(
                sh("echo started; sleep 30 & sleep 30"),
                None,
                Capture::Separate,
                100,
                Duration::from_secs(60),
                &k2,
            )
            .unwrap()
        });
        // Wait until the child is attached, without sleeping a fixed time.
        let deadline = Instant::now() + Duration::from_secs(20);
        while kill.0.lock().unwrap().group.is_none() {
            assert!(Instant::now() < deadline);
            std::thread::yield_now();
        }
        kill.kill();
        let out = t.join().unwrap();
        assert!(out.killed && !out.timed_out);
    }

    #[test]
    fn killed_before_spawn_is_killed_at_spawn() {
        let kill = KillSwitch::new();
        kill.kill();
        let out = run(
            sh("echo ran"),
            None,
            Capture::Stdout,
            100,
            Duration::from_secs(30),
            &kill,
        )
        .unwrap();
        assert!(out.killed);
    }
}
