//! The fleet benchmark: one tokio runtime, one `AsyncClient` per agent, N real `agentx`
//! processes (built-in `agentx-echo`) at once. Each session does `initialize`, 10 echo turns
//! and a tool turn (`Write`, allowed by an async `can_use_tool` callback), then closes; the
//! sessions meet between phases so memory is read while all N agents are alive.
//!
//! Reports: memory (RSS and PSS of the host and of all agents, per session), host CPU per turn
//! (this process, `/proc/self/stat`, over the turn phase), agentx CPU per turn (the agents'
//! live threads' `schedstat` over the turn phase, and each agent's whole life from this
//! process's `cutime + cstime` once all are reaped), echo-turn
//! p50/p99 across every session's turns, the permission callbacks, errors (there must be none),
//! descriptors, zombies after close.
//!
//! `cargo bench --bench fleet` (1,000 sessions); `AGENTX_FLEET_SESSIONS=N` for another size;
//! `AGENTX_FLEET_THREADS=N` for the runtime's worker threads (default: one per core).

#[path = "fleet_session.rs"]
mod fleet_session;
use agentx_test_support::proc_stat;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fleet_session::{open_descriptors, rss_pss_kib, zombie_children, Fleet, Measured};

const AGENTX: &str = env!("CARGO_BIN_EXE_agentx");

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn main() {
    let n = env_usize("AGENTX_FLEET_SESSIONS", 1000);
    let before = agentx_io::host::descriptor_limit();
    let limit = agentx_io::host::raise_descriptor_limit();
    println!("load average at start: {}", proc_stat::load());
    println!(
        "RLIMIT_NOFILE soft {} -> {} (hard {}); {n} sessions need about {} descriptors",
        before.soft,
        limit.soft,
        limit.hard,
        agentx_io::host::DESCRIPTORS_PER_ASYNC_AGENT as usize * n + 64
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
    let reaped0 = proc_stat::reaped_children_cpu();

    let fleet = Arc::new(Fleet::default());
    let t_start = Instant::now();
    let m = rt.block_on(fleet_session::run(n, AGENTX.as_ref(), &home, &fleet));
    let total = t_start.elapsed();
    let Measured {
        reports,
        startup,
        idle,
        busy,
        fds_alive: fds,
        turn_wall,
        host_cpu,
        agents_cpu,
        ..
    } = m;
    // Every agent was reaped by its session's `close`: their whole lives, exited threads too.
    let agents_life = proc_stat::reaped_children_cpu().saturating_sub(reaped0);
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
    for (name, m) in [("all idle (initialized)", idle), ("after the turns", busy)] {
        let (h, a) = (m.host, m.agents);
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
        "host CPU per turn: {} ({} turns, {:.2} s CPU); agentx CPU per turn: {} (live threads \
         over the turn phase, {:.2} s); agentx CPU per session, spawn to exit: {} ({:.2} s \
         reaped)",
        proc_stat::us(host_cpu / turns),
        turns,
        host_cpu.as_secs_f64(),
        proc_stat::us(agents_cpu / turns),
        agents_cpu.as_secs_f64(),
        proc_stat::us(agents_life / n.max(1) as u32),
        agents_life.as_secs_f64()
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
