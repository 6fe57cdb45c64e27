//! A fleet and its sessions, shared by the fleet benchmark (`benches/fleet.rs`) and its CI test
//! (`tests/host_fleet.rs`, both by `#[path]`, each with `proc_stat` as a sibling module): each
//! session's `AsyncClient` spawns `agentx`, `initialize`s it, runs `ECHO_TURNS` echo turns and
//! one tool turn whose `Write` permission goes through an async `can_use_tool` callback, then
//! closes it. Every session meets the others at [`Phases`], where [`run`] reads everyone's
//! memory, descriptors and CPU time while all are alive.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentx_io::host::{
    AgentCommand, AsyncClient, AsyncClientOptions, PermissionAnswer, ToolPermissionRequest,
};
use agentx_wire::wire::{OutputRecord, ResultSubtype};
use tokio::sync::Barrier;

use super::proc_stat;

/// Echo turns per session.
pub const ECHO_TURNS: usize = 10;

/// Generous: a thousand agents starting at once on two loaded cores.
const T: Duration = Duration::from_secs(300);

/// Where all sessions meet (each barrier has one party per session plus the driver).
pub struct Phases {
    /// Every session initialized (or failed trying).
    pub ready: Barrier,
    /// The driver read memory: go on with the turns.
    pub go: Barrier,
    /// Every session finished its turns (or failed).
    pub turned: Barrier,
    /// The driver read memory again: close.
    pub close: Barrier,
}

impl Phases {
    pub fn new(sessions: usize) -> Arc<Phases> {
        Arc::new(Phases {
            ready: Barrier::new(sessions + 1),
            go: Barrier::new(sessions + 1),
            turned: Barrier::new(sessions + 1),
            close: Barrier::new(sessions + 1),
        })
    }
}

/// What one session saw.
#[derive(Debug, Default)]
pub struct SessionReport {
    /// The agent's pid.
    pub pid: u32,
    /// Send-to-`result` time of each echo turn.
    pub echo: Vec<Duration>,
    /// The tool turn's send-to-`result` time.
    pub tool: Duration,
}

/// The fleet's shared state: the permission callback's count and the agents' pids.
#[derive(Default)]
pub struct Fleet {
    pub permissions: AtomicUsize,
    pub pids: std::sync::Mutex<Vec<u32>>,
}

fn command(agentx: &Path, home: &Path, cwd: &Path) -> AgentCommand {
    AgentCommand::stream_json(agentx)
        .arg("--cwd")
        .arg(cwd)
        .env("AGENTX_HOME", home)
        .env_remove("HOME")
}

/// Records until the turn's `result`; any error item or a non-success result is an error.
async fn until_result(client: &AsyncClient, what: &str) -> Result<(), String> {
    loop {
        match client.recv().await {
            None => return Err(format!("{what}: the output ended before the result")),
            Some(Err(e)) => return Err(format!("{what}: error item: {e}")),
            Some(Ok(OutputRecord::Result(r))) => {
                return if r.subtype == ResultSubtype::Success && !r.is_error {
                    Ok(())
                } else {
                    Err(format!("{what}: result {:?}", r.subtype))
                };
            }
            Some(Ok(_)) => {}
        }
    }
}

async fn start(
    i: usize,
    agentx: &Path,
    home: &Path,
    fleet: &Arc<Fleet>,
) -> Result<(AsyncClient, PathBuf), String> {
    let cwd = home.join(format!("cwd-{i}"));
    std::fs::create_dir_all(&cwd).map_err(|e| format!("cwd: {e}"))?;
    let counter = Arc::clone(fleet);
    let options = AsyncClientOptions::default().can_use_tool(move |r: ToolPermissionRequest| {
        let counter = Arc::clone(&counter);
        async move {
            counter.permissions.fetch_add(1, Ordering::Relaxed);
            Ok(if r.tool_name == "Write" {
                PermissionAnswer::allow()
            } else {
                PermissionAnswer::deny("fleet hosts allow Write only")
            })
        }
    });
    let client = AsyncClient::spawn(&command(agentx, home, &cwd), options)
        .await
        .map_err(|e| format!("spawn: {e}"))?;
    let init = client
        .initialize(T)
        .await
        .map_err(|e| format!("initialize: {e}"))?;
    if init.providers.is_empty() {
        return Err("initialize: no provider".into());
    }
    if let Some(pid) = client.pid() {
        fleet.pids.lock().unwrap().push(pid);
    }
    Ok((client, cwd))
}

async fn turns(
    i: usize,
    client: &AsyncClient,
    cwd: &Path,
    report: &mut SessionReport,
) -> Result<(), String> {
    for t in 0..ECHO_TURNS {
        let t0 = Instant::now();
        client
            .send_text(&format!("session {i} turn {t}"))
            .map_err(|e| format!("send: {e}"))?;
        until_result(client, "echo turn").await?;
        report.echo.push(t0.elapsed());
    }
    let t0 = Instant::now();
    client
        .send_text(&format!(
            "!tool Write {{\"file_path\":\"fleet.txt\",\"content\":\"session {i}\"}}"
        ))
        .map_err(|e| format!("send: {e}"))?;
    until_result(client, "tool turn").await?;
    report.tool = t0.elapsed();
    let written = std::fs::read_to_string(cwd.join("fleet.txt")).unwrap_or_default();
    if written != format!("session {i}") {
        return Err(format!("tool turn: fleet.txt holds {written:?}"));
    }
    Ok(())
}

/// One session through every phase; it always reaches every barrier, so one failing session
/// never stalls the others.
pub async fn session(
    i: usize,
    agentx: PathBuf,
    home: PathBuf,
    fleet: Arc<Fleet>,
    phases: Arc<Phases>,
) -> Result<SessionReport, String> {
    let started = start(i, &agentx, &home, &fleet).await;
    phases.ready.wait().await;
    phases.go.wait().await;
    let mut report = SessionReport::default();
    let turned = match &started {
        Ok((client, cwd)) => {
            report.pid = client.pid().unwrap_or(0);
            turns(i, client, cwd, &mut report).await
        }
        Err(e) => Err(e.clone()),
    };
    phases.turned.wait().await;
    phases.close.wait().await;
    let (client, _) = started?;
    turned?;
    let exit = client.close(T).await.map_err(|e| format!("close: {e}"))?;
    if !exit.success() {
        return Err(format!(
            "agentx exited with {:?}: {}",
            exit.status,
            String::from_utf8_lossy(&exit.stderr)
        ));
    }
    Ok(report)
}

/// What [`run`] read at the phases, and every session's outcome.
pub struct Measured {
    /// One per session, in order.
    pub reports: Vec<Result<SessionReport, String>>,
    /// The agents' pids (the initialized ones).
    pub pids: Vec<u32>,
    /// From the first spawn until every session was initialized.
    pub startup: Duration,
    /// Host and agents' `(Rss, Pss)` in KiB with all idle (initialized), and after the turns.
    pub idle: Memory,
    pub busy: Memory,
    /// Descriptors of this process with every agent alive.
    pub fds_alive: usize,
    /// The turn phase: wall time, this process's CPU (`/proc/self/stat`), and the agents'
    /// (their live threads' `schedstat`, ns: per agent ~1 ms, which `/proc/<pid>/stat`'s
    /// 10 ms ticks truncate to 0).
    pub turn_wall: Duration,
    pub host_cpu: Duration,
    pub agents_cpu: Duration,
}

/// `(Rss, Pss)` in KiB of the host and of all agents.
#[derive(Clone, Copy, Debug, Default)]
pub struct Memory {
    pub host: (u64, u64),
    pub agents: (u64, u64),
}

/// Summed RSS and PSS (KiB) of the host and of `pids`.
pub fn memory(pids: &[u32]) -> Memory {
    Memory {
        host: rss_pss_kib(std::process::id()).unwrap_or_default(),
        agents: pids
            .iter()
            .filter_map(|&p| rss_pss_kib(p))
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
    }
}

/// The agents' CPU time, summed over their live threads.
fn agents_cpu(pids: &[u32]) -> Duration {
    pids.iter()
        .map(|p| proc_stat::task_cpu(&p.to_string()))
        .sum()
}

/// `n` sessions of `agentx` (each in `home/cwd-<i>`) on the current tokio runtime, driven
/// through the phases; returns once every session closed.
pub async fn run(n: usize, agentx: &Path, home: &Path, fleet: &Arc<Fleet>) -> Measured {
    let phases = Phases::new(n);
    let t_start = Instant::now();
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            tokio::spawn(session(
                i,
                agentx.to_path_buf(),
                home.to_path_buf(),
                Arc::clone(fleet),
                Arc::clone(&phases),
            ))
        })
        .collect();
    phases.ready.wait().await;
    let startup = t_start.elapsed();
    let pids = fleet.pids.lock().unwrap().clone();
    let idle = memory(&pids);
    let fds_alive = open_descriptors();
    let agents_cpu0 = agents_cpu(&pids);
    let (host_cpu0, t0) = (proc_stat::self_cpu(), Instant::now());
    phases.go.wait().await;
    phases.turned.wait().await;
    let (host_cpu, turn_wall) = (proc_stat::self_cpu() - host_cpu0, t0.elapsed());
    let agents_cpu = agents_cpu(&pids).saturating_sub(agents_cpu0);
    let busy = memory(&pids);
    phases.close.wait().await;
    let mut reports = Vec::new();
    for t in tasks {
        reports.push(t.await.map_err(|e| format!("task: {e}")).and_then(|r| r));
    }
    Measured {
        reports,
        pids,
        startup,
        idle,
        busy,
        fds_alive,
        turn_wall,
        host_cpu,
        agents_cpu,
    }
}

/// The pids of this process's children that are zombies (exited, not reaped).
pub fn zombie_children() -> Vec<u32> {
    let me = std::process::id();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.first() == Some(&"Z") && f.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(me) {
            out.push(pid);
        }
    }
    out
}

/// How many descriptors this process has open.
pub fn open_descriptors() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

/// `Rss` and `Pss` of `pid` in KiB (`/proc/<pid>/smaps_rollup`), `None` once it is gone.
pub fn rss_pss_kib(pid: u32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let field = |name: &str| {
        s.lines().find_map(|l| {
            let v = l.strip_prefix(name)?.strip_prefix(':')?;
            v.split_whitespace().next()?.parse::<u64>().ok()
        })
    };
    Some((field("Rss")?, field("Pss")?))
}
