//! A fleet from one process: 64 real `agentx` sessions on one tokio runtime, each
//! `initialize`, 10 echo turns and a tool turn through an async permission callback, with no
//! error; every agent reaped, every descriptor given back, every stderr drained. And the
//! descriptor limit a fleet hits: the soft `RLIMIT_NOFILE` raised when a spawn runs out, and
//! the typed `HostError::DescriptorLimit` when the hard limit allows no more.
//!
//! One `#[test]` in this binary: the limit tests change this process's `RLIMIT_NOFILE`, which
//! would disturb any test running beside them.

#[path = "../benches/fleet_session.rs"]
mod fleet_session;
use agentx_test_support::proc_stat;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use agentx_io::host::{
    AgentCommand, AsyncClient, AsyncClientOptions, Client, ClientOptions, HostError,
    DESCRIPTORS_PER_AGENT, DESCRIPTORS_PER_ASYNC_AGENT,
};
use fleet_session::{open_descriptors, zombie_children, Fleet};
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

const AGENTX: &str = env!("CARGO_BIN_EXE_agentx");
const SESSIONS: usize = 64;

fn temp_home(tag: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("agentx-fleet-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn sixty_four_sessions(rt: &tokio::runtime::Runtime) {
    let home = temp_home("ci");
    let fds0 = open_descriptors();
    let fleet = Arc::new(Fleet::default());
    let m = rt.block_on(fleet_session::run(SESSIONS, AGENTX.as_ref(), &home, &fleet));
    let (reports, fds_alive) = (&m.reports, m.fds_alive);
    let errors: Vec<&String> = reports.iter().filter_map(|r| r.as_ref().err()).collect();
    assert!(
        errors.is_empty(),
        "{} sessions failed: {errors:?}",
        errors.len()
    );
    for r in reports.iter().flatten() {
        assert_eq!(r.echo.len(), fleet_session::ECHO_TURNS);
    }
    assert_eq!(
        fleet.permissions.load(Ordering::Relaxed),
        SESSIONS,
        "one permission callback per tool turn"
    );
    // Four descriptors per live agent (three pipes and tokio's pidfd) were open, and all of
    // them are closed again.
    assert!(
        fds_alive >= fds0 + DESCRIPTORS_PER_ASYNC_AGENT as usize * SESSIONS,
        "{fds_alive} descriptors with {SESSIONS} agents alive, {fds0} before"
    );
    assert!(
        open_descriptors() <= fds0 + 8,
        "descriptors leaked: {} after, {fds0} before",
        open_descriptors()
    );
    // The agents' CPU over the turn phase is measured (their threads' ns, not 10 ms ticks
    // per process, which truncated ~1 ms per agent to a total of 0).
    let turns = (SESSIONS * (fleet_session::ECHO_TURNS + 1)) as u32;
    assert_eq!(m.pids.len(), SESSIONS);
    assert!(
        m.agents_cpu / turns > Duration::from_micros(1),
        "agentx CPU over {turns} turns: {:?}",
        m.agents_cpu
    );
    // `close` waited for each agent: none is left unreaped.
    assert_eq!(zombie_children(), Vec::<u32>::new());
    let _ = std::fs::remove_dir_all(&home);
}

/// A chatty agent (a shell writing 4 MiB to stderr before it reads anything) never blocks on a
/// full stderr pipe: the drain keeps what the cap allows and reads the rest away.
fn stderr_is_drained(rt: &tokio::runtime::Runtime) {
    rt.block_on(async {
        let cmd = AgentCommand::new("/bin/sh")
            .arg("-c")
            .arg("head -c 4194304 /dev/zero >&2; echo '{\"type\":\"keep_alive\"}'; cat >/dev/null");
        let client = AsyncClient::spawn(&cmd, AsyncClientOptions::default().stderr_cap(1000))
            .await
            .unwrap();
        let first = tokio::time::timeout(Duration::from_secs(60), client.recv())
            .await
            .expect("the agent blocked on stderr")
            .unwrap()
            .unwrap();
        assert_eq!(first.record_type(), "keep_alive");
        let exit = client.close(Duration::from_secs(60)).await.unwrap();
        assert!(exit.success());
        assert_eq!(exit.stderr.len(), 1000);
    });
}

fn set_nofile(soft: u64, hard: u64) {
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(soft),
            maximum: Some(hard),
        },
    )
    .expect("setrlimit");
}

/// Spawns `cat` agents (no protocol needed) until `want` are alive or a spawn fails.
fn spawn_many(rt: &tokio::runtime::Runtime, want: usize) -> (Vec<AsyncClient>, Option<HostError>) {
    rt.block_on(async {
        let mut alive = Vec::new();
        for _ in 0..want {
            match AsyncClient::spawn(&AgentCommand::new("cat"), AsyncClientOptions::default()).await
            {
                Ok(c) => alive.push(c),
                Err(e) => return (alive, Some(e)),
            }
        }
        (alive, None)
    })
}

/// Ends each agent's input and reads its output to the end (the client lets go of the pipe
/// before the stream ends, so no descriptor lingers after this), then closes it.
fn close_all(rt: &tokio::runtime::Runtime, clients: Vec<AsyncClient>) {
    rt.block_on(async {
        for c in clients {
            c.end_input();
            while c.recv().await.is_some() {}
            assert!(c.close(Duration::from_secs(60)).await.unwrap().success());
        }
    });
}

fn descriptor_limits(rt: &tokio::runtime::Runtime) {
    let original = getrlimit(Resource::Nofile);
    let open = open_descriptors() as u64;
    let want = 40;
    // The soft limit leaves room for a few agents only; the hard one for all of them: the
    // spawn that runs out raises the soft limit and goes on.
    let hard = open + (DESCRIPTORS_PER_ASYNC_AGENT as u64) * want as u64 + 64;
    set_nofile(open + 12, hard);
    let (alive, err) = spawn_many(rt, want);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(alive.len(), want);
    let raised = agentx_io::host::descriptor_limit();
    assert_eq!(
        raised.soft, hard,
        "the soft limit was raised to the hard one"
    );
    close_all(rt, alive);

    // The hard limit itself is the ceiling now, at the edge: the typed error, with the
    // limits and the descriptors per agent it states.
    let last = descriptors_at_the_edge(rt);
    // The original hard limit cannot be restored (it was lowered); put back what we can.
    let _ = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: original.current.map(|c| c.min(last)),
            maximum: Some(last),
        },
    );
}

/// Spawns `cat` agents with the blocking client until `want` are alive or a spawn fails.
fn spawn_many_blocking(want: usize) -> (Vec<Client>, Option<HostError>) {
    let mut alive = Vec::new();
    for _ in 0..want {
        match Client::spawn(&AgentCommand::new("cat"), ClientOptions::default()) {
            Ok(c) => alive.push(c),
            Err(e) => return (alive, Some(e)),
        }
    }
    (alive, None)
}

/// The descriptors a live agent holds, at the edge: with `K` agents' worth (at the
/// `per_agent` each client states) plus `SPAWN_ROOM` free under a limit with soft = hard,
/// exactly `K + 1` agents start (the last one in the room a spawn needs briefly: both ends of
/// three pipes, and std's exec-status pipe, 6 to 8) and the next one fails with the typed
/// error. Agents that held a descriptor fewer than stated would let more start; one more,
/// fewer.
const SPAWN_ROOM: u64 = 8;

/// The `RLIMIT_NOFILE` under which exactly `free` descriptor numbers are unused (the kernel
/// hands out the lowest free number; an open descriptor numbered above the limit takes no
/// room under it).
fn limit_leaving(free: u64) -> u64 {
    let me = format!("/proc/{}/fd", std::process::id());
    let open: Vec<u64> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .flatten()
        // Not the listing's own handle.
        .filter(|e| std::fs::read_link(e.path()).map_or(true, |t| t.as_os_str() != me.as_str()))
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let mut limit = free;
    loop {
        let below = open.iter().filter(|&&fd| fd < limit).count() as u64;
        if below + free == limit {
            return limit;
        }
        limit = below + free;
    }
}

/// Returns the last limit set (soft = hard).
fn descriptors_at_the_edge(rt: &tokio::runtime::Runtime) -> u64 {
    const K: usize = 6;
    // Warm-up: tokio's process driver opens its descriptors at the first spawn.
    let (warm, _) = spawn_many(rt, 1);
    close_all(rt, warm);
    let limit = limit_leaving(DESCRIPTORS_PER_ASYNC_AGENT as u64 * K as u64 + SPAWN_ROOM);
    set_nofile(limit, limit);
    let (alive, err) = spawn_many(rt, K + 3);
    assert_eq!(alive.len(), K + 1, "AsyncClient agents that fit: {err:?}");
    let err = err.expect("a spawn past the limit fails");
    match &err {
        HostError::DescriptorLimit {
            soft,
            hard,
            system: false,
            per_agent,
        } => assert_eq!(
            (*soft, *hard, *per_agent),
            (limit, limit, DESCRIPTORS_PER_ASYNC_AGENT)
        ),
        other => panic!("expected DescriptorLimit, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains(&format!("soft {limit}, hard {limit}"))
            && text.contains(&format!(
                "each running agent holds {DESCRIPTORS_PER_ASYNC_AGENT}"
            )),
        "{text}"
    );
    close_all(rt, alive);
    let limit = limit_leaving(DESCRIPTORS_PER_AGENT as u64 * K as u64 + SPAWN_ROOM);
    set_nofile(limit, limit);
    let (alive, err) = spawn_many_blocking(K + 3);
    assert_eq!(alive.len(), K + 1, "Client agents that fit: {err:?}");
    let err = err.expect("a spawn past the limit fails");
    match &err {
        HostError::DescriptorLimit {
            per_agent,
            system: false,
            ..
        } => assert_eq!(*per_agent, DESCRIPTORS_PER_AGENT),
        other => panic!("expected DescriptorLimit, got {other:?}"),
    }
    assert!(
        err.to_string()
            .contains(&format!("each running agent holds {DESCRIPTORS_PER_AGENT}")),
        "{err}"
    );
    for c in alive {
        c.end_input();
        while c.recv().is_some() {}
        assert!(c.close(Duration::from_secs(60)).unwrap().success());
    }
    limit
}

#[test]
fn a_fleet_of_64_sessions_then_the_descriptor_limit() {
    let rt = runtime();
    sixty_four_sessions(&rt);
    stderr_is_drained(&rt);
    descriptor_limits(&rt);
}
