//! A fleet from one process (issue 23): 64 real `agentx` sessions on one tokio runtime, each
//! `initialize`, 10 echo turns and a tool turn through an async permission callback, with no
//! error; every agent reaped, every descriptor given back, every stderr drained. And the
//! descriptor limit a fleet hits: the soft `RLIMIT_NOFILE` raised when a spawn runs out, and
//! the typed `HostError::DescriptorLimit` when the hard limit allows no more.
//!
//! One `#[test]` in this binary: the limit tests change this process's `RLIMIT_NOFILE`, which
//! would disturb any test running beside them.

#[path = "../benches/fleet_session.rs"]
mod fleet_session;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use agentx_wire::host::{AgentCommand, AsyncClient, AsyncClientOptions, HostError};
use fleet_session::{open_descriptors, session, zombie_children, Fleet, Phases};
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
    let phases = Phases::new(SESSIONS);
    let (reports, fds_alive) = rt.block_on(async {
        let tasks: Vec<_> = (0..SESSIONS)
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
        let fds_alive = open_descriptors();
        phases.go.wait().await;
        phases.turned.wait().await;
        phases.close.wait().await;
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.expect("session task"));
        }
        (out, fds_alive)
    });
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
    // Three pipes per live agent were open, and all of them are closed again.
    assert!(
        fds_alive >= fds0 + 3 * SESSIONS,
        "{fds_alive} descriptors with {SESSIONS} agents alive, {fds0} before"
    );
    assert!(
        open_descriptors() <= fds0 + 8,
        "descriptors leaked: {} after, {fds0} before",
        open_descriptors()
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

fn close_all(rt: &tokio::runtime::Runtime, clients: Vec<AsyncClient>) {
    rt.block_on(async {
        for c in clients {
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
    let hard = open + 3 * want as u64 + 64;
    set_nofile(open + 12, hard);
    let (alive, err) = spawn_many(rt, want);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(alive.len(), want);
    let raised = agentx_wire::host::descriptor_limit();
    assert_eq!(
        raised.soft, hard,
        "the soft limit was raised to the hard one"
    );
    close_all(rt, alive);

    // The hard limit itself is the ceiling now: the typed error, with the limits.
    let tight = open_descriptors() as u64 + 12;
    set_nofile(tight, tight);
    let (alive, err) = spawn_many(rt, want);
    let err = err.expect("a spawn past the hard limit fails");
    assert!(alive.len() < want);
    match &err {
        HostError::DescriptorLimit {
            soft,
            hard,
            system: false,
        } => assert_eq!((*soft, *hard), (tight, tight)),
        other => panic!("expected DescriptorLimit, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains(&format!("soft {tight}, hard {tight}"))
            && text.contains("each agent needs 3"),
        "{text}"
    );
    close_all(rt, alive);
    // The original hard limit cannot be restored (it was lowered); put back what we can.
    let _ = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: original.current.map(|c| c.min(tight)),
            maximum: Some(tight),
        },
    );
}

#[test]
fn a_fleet_of_64_sessions_then_the_descriptor_limit() {
    let rt = runtime();
    sixty_four_sessions(&rt);
    stderr_is_drained(&rt);
    descriptor_limits(&rt);
}
