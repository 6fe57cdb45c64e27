//! One session of a fleet, shared by the fleet benchmark (`benches/fleet.rs`) and its CI test
//! (`tests/host_fleet.rs`, by `#[path]`): `AsyncClient` spawns `agentx`, `initialize`s it,
//! runs `ECHO_TURNS` echo turns and one tool turn whose `Write` permission goes through an
//! async `can_use_tool` callback, then closes it. Every session of a fleet meets the others at
//! [`Phases`] so the driver can read everyone's memory while all are alive.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentx_wire::host::{
    AgentCommand, AsyncClient, AsyncClientOptions, PermissionAnswer, ToolPermissionRequest,
};
use agentx_wire::wire::{OutputRecord, ResultSubtype};
use tokio::sync::Barrier;

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
