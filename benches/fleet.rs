//! Issue 23's fleet benchmark: one tokio runtime, one `AsyncClient` per agent, N real `agentx`
//! processes (built-in `agentx-echo`) at once. Each session does `initialize`, 10 echo turns
//! and a tool turn (`Write`, allowed by an async `can_use_tool` callback), then closes; the
//! sessions meet between phases so memory is read while all N agents are alive.
//!
//! Reports: memory (RSS and PSS of the host and of all agents, per session), host CPU per turn
//! (this process, `/proc/self/stat`, over the turn phase), agentx CPU per turn, echo-turn
//! p50/p99 across every session's turns, the permission callbacks, errors (there must be none),
//! descriptors, zombies after close.
//!
//! `cargo bench --bench fleet` (1,000 sessions); `AGENTX_FLEET_SESSIONS=N` for another size;
//! `AGENTX_FLEET_THREADS=N` for the runtime's worker threads (default: one per core).

#[path = "fleet_session.rs"]
mod fleet_session;
#[path = "proc_stat.rs"]
mod proc_stat;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_session::{open_descriptors, rss_pss_kib, session, zombie_children, Fleet, Phases};

const AGENTX: &str = env!("CARGO_BIN_EXE_agentx");

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Summed RSS and PSS (KiB) of the host and of `pids`.
fn memory(pids: &[u32]) -> ((u64, u64), (u64, u64)) {
    let host = rss_pss_kib(std::process::id()).unwrap_or_default();
    let agents = pids
        .iter()
        .filter_map(|&p| rss_pss_kib(p))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (host, agents)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn main() {
    let n = env_usize("AGENTX_FLEET_SESSIONS", 1000);
    let before = agentx_wire::host::descriptor_limit();
    let limit = agentx_wire::host::raise_descriptor_limit();
    println!("load average at start: {}", proc_stat::load());
    println!(
        "RLIMIT_NOFILE soft {} -> {} (hard {}); {n} sessions need about {} descriptors",
        before.soft,
        limit.soft,
        limit.hard,
        3 * n + 64
    );
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(t) = std::env::var("AGENTX_FLEET_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        rt.worker_threads(t);
    }
    let rt = rt.enable_all().build().unwrap();
    let home = std::env::temp_dir().join(format!("agentx-fleet-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let fds0 = open_descriptors();
    let host0 = rss_pss_kib(std::process::id()).unwrap_or_default();

    let fleet = Arc::new(Fleet::default());
    let phases = Phases::new(n);
    let t_start = Instant::now();
    let (reports, figures) = rt.block_on(async {
        let tasks: Vec<_> = (0..n)
            .map(|i| {
                tokio::spawn(session(
                    i,
                    AGENTX.into(),
                    home.clone(),
                    Arc::clone(&fleet),
                    Arc::clone(&phases),
                ))
            })
            .collect();
        phases.ready.wait().await;
        let startup = t_start.elapsed();
        let pids = fleet.pids.lock().unwrap().clone();
        let idle = memory(&pids);
        let fds = open_descriptors();
        let agents_cpu0: Duration = pids.iter().filter_map(|&p| proc_stat::cpu(p)).sum();
        let (host_cpu0, t0) = (proc_stat::self_cpu(), Instant::now());
        phases.go.wait().await;
        phases.turned.wait().await;
        let (host_cpu, turn_wall) = (proc_stat::self_cpu() - host_cpu0, t0.elapsed());
        let agents_cpu = pids
            .iter()
            .filter_map(|&p| proc_stat::cpu(p))
            .sum::<Duration>()
            .saturating_sub(agents_cpu0);
        let busy = memory(&pids);
        phases.close.wait().await;
        let mut reports = Vec::new();
        for t in tasks {
            reports.push(t.await.map_err(|e| format!("task: {e}")).and_then(|r| r));
        }
        (
            reports,
            (startup, idle, fds, host_cpu, agents_cpu, turn_wall, busy),
        )
    });
    let total = t_start.elapsed();
    let (startup, idle, fds, host_cpu, agents_cpu, turn_wall, busy) = figures;
    let zombies = zombie_children();
    let fds_after = open_descriptors();
    let _ = std::fs::remove_dir_all(&home);

    let errors: Vec<&String> = reports.iter().filter_map(|r| r.as_ref().err()).collect();
    let ok: Vec<_> = reports.iter().filter_map(|r| r.as_ref().ok()).collect();
    let mut echo: Vec<Duration> = ok.iter().flat_map(|r| r.echo.iter().copied()).collect();
    echo.sort();
    let mut tool: Vec<Duration> = ok.iter().map(|r| r.tool).collect();
    tool.sort();
    let turns = (ok.len() * (fleet_session::ECHO_TURNS + 1)).max(1) as u32;
    let per = |kib: u64| mib(kib / n.max(1) as u64);

    println!(
        "{n} sessions on one tokio runtime: all initialized after {:.2} s; turns took {:.2} s wall; \
         {:.2} s from the first spawn to the last exit",
        startup.as_secs_f64(),
        turn_wall.as_secs_f64(),
        total.as_secs_f64()
    );
    println!("| | RSS | PSS |");
    println!("| --- | ---: | ---: |");
    for (name, (h, a)) in [("all idle (initialized)", idle), ("after the turns", busy)] {
        println!("| {name}: host | {} | {} |", mib(h.0), mib(h.1));
        println!("| {name}: {} agents | {} | {} |", n, mib(a.0), mib(a.1));
        println!(
            "| {name}: per session (host above its {} start, agent) | {} + {} | {} + {} |",
            mib(host0.0),
            per(h.0.saturating_sub(host0.0)),
            per(a.0),
            per(h.1.saturating_sub(host0.1)),
            per(a.1)
        );
        println!(
            "| {name}: total (host + agents) | {} | {} |",
            mib(h.0 + a.0),
            mib(h.1 + a.1)
        );
    }
    println!(
        "host CPU per turn: {} ({} turns, {:.2} s CPU); agentx CPU per turn: {}",
        proc_stat::us(host_cpu / turns),
        turns,
        host_cpu.as_secs_f64(),
        proc_stat::us(agents_cpu / turns)
    );
    println!(
        "echo turn across sessions: p50 {} p99 {} max {} ({} turns); tool turn p50 {} p99 {}",
        proc_stat::us(proc_stat::percentile(&echo, 50.0)),
        proc_stat::us(proc_stat::percentile(&echo, 99.0)),
        proc_stat::us(echo.last().copied().unwrap_or_default()),
        echo.len(),
        proc_stat::us(proc_stat::percentile(&tool, 50.0)),
        proc_stat::us(proc_stat::percentile(&tool, 99.0)),
    );
    println!(
        "permission callbacks: {}; descriptors: {fds0} before, {fds} with every agent alive, \
         {fds_after} after; zombies after close: {}",
        fleet.permissions.load(Ordering::Relaxed),
        zombies.len()
    );
    println!("errors: {}", errors.len());
    for e in errors.iter().take(10) {
        println!("  {e}");
    }
    println!("load average at end: {}", proc_stat::load());
    assert!(errors.is_empty(), "{} sessions failed", errors.len());
    assert!(zombies.is_empty(), "unreaped agents: {zombies:?}");
}
