//! Both host clients against a real agent process that floods its stdout while nobody calls
//! `recv` (issue 46, `ClientOptions::max_buffered_records`): the agent is `awk` writing a million
//! numbered 200-byte records (200 MB) as fast as it can. The client stops reading at its bound,
//! so the agent's writes block on the full pipe: the test waits until the agent's written-byte
//! count (`/proc/<pid>/io` `wchar`) stops moving, then checks that it wrote at most the bound
//! plus the pipe and one read, and that the host's resident set is under 100 MiB. Once the agent
//! is stalled nothing more can arrive, so the bound holds for as long as the host waits. A
//! `recv` loop started then receives every record, in order, and the agent exits 0.
//!
//! `awk` is in every Debian base system; where it is absent the test prints why and passes
//! (skipped), and fails under `CI`.

use std::time::{Duration, Instant};

use agentx_io::host::{
    AgentCommand, AsyncClient, AsyncClientOptions, Client, ClientOptions, HostError,
};
use agentx_wire::wire::OutputRecord;

use crate::host_buffer_bound::{number, LINE};

const TOTAL: usize = 1_000_000;

/// The agent's written bytes may pass the queue's records by the pipe (64 KiB by default, at
/// most 1 MiB) and one 256 KiB client read; 4 MiB leaves room for both.
const WRITTEN_MAX: u64 = 1024 * LINE as u64 + (4 << 20);

const RSS_MAX_KIB: u64 = 100 * 1024;

/// `awk` printing `TOTAL` records shaped as `host_buffer_bound::record`.
fn flood_command() -> Option<AgentCommand> {
    let found = std::process::Command::new("awk")
        .arg("BEGIN{}")
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        let why = "SKIP host_flood_process: awk cannot run";
        assert!(
            std::env::var_os("CI").is_none(),
            "{why} (required under CI)"
        );
        eprintln!("{why}");
        return None;
    }
    let pad = "p".repeat(LINE - 3 - head(0).len());
    let program = format!(
        r#"BEGIN {{ for (i = 0; i < {TOTAL}; i++) printf "{}%012x{}{pad}\"}}\n", i }}"#,
        escape(&head(0)[..head(0).len() - 12 - TAIL.len()]),
        escape(TAIL),
    );
    Some(AgentCommand::new("awk").arg(program))
}

const TAIL: &str = r#"","session_id":"93ba9bd5-b18d-4283-afcb-95d00a53b0a9","pad":""#;

/// The record's text up to its padding, for sequence number `i` (the awk program prints the
/// same text with `%012x`).
fn head(i: usize) -> String {
    format!(
        r#"{{"type":"stream_event","event":{{"type":"ping"}},"parent_tool_use_id":null,"uuid":"3f1e7948-5c1f-4c1f-8e2c-{i:012x}{TAIL}"#
    )
}

/// `s` as the inside of an awk string literal.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The bytes `pid` has written (`/proc/<pid>/io` `wchar`).
fn written(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Waits until the agent's `wchar` has not moved for 300 ms (it is blocked on the full pipe) or
/// the agent is gone; returns the bytes it wrote. A slow machine can only end the wait early
/// (a smaller figure), never make the bound look tighter than it is.
fn settle(pid: u32) -> u64 {
    let mut last = written(pid).unwrap_or(0);
    let mut since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let Some(now) = written(pid) else {
            return last;
        };
        if now != last {
            (last, since) = (now, Instant::now());
        } else if since.elapsed() > Duration::from_millis(300) {
            return now;
        }
    }
}

fn host_rss_kib() -> u64 {
    agentx_test_support::proc_stat::status_kib(std::process::id(), "VmRSS").expect("VmRSS")
}

fn check_stalled(pid: u32, client: &str) {
    let written = settle(pid);
    let rss = host_rss_kib();
    eprintln!("{client}: the agent wrote {written} bytes before it stalled; host RSS {rss} KiB");
    assert!(
        written <= WRITTEN_MAX,
        "{client}: the agent wrote {written} bytes with nobody calling recv"
    );
    assert!(rss < RSS_MAX_KIB, "{client}: host RSS {rss} KiB");
}

fn check_order(i: usize, item: Result<OutputRecord<'static>, HostError>) {
    assert_eq!(number(item), i, "record {i} out of order");
}

#[test]
fn the_client_stalls_a_flooding_agent_process_at_its_bound_and_loses_nothing() {
    let Some(command) = flood_command() else {
        return;
    };
    let client = Client::spawn(&command, ClientOptions::default()).expect("spawn awk");
    check_stalled(client.pid().expect("pid"), "Client");
    for i in 0..TOTAL {
        check_order(i, client.recv().expect("every record"));
    }
    assert!(client.recv().is_none());
    let report = client.close(Duration::from_secs(10)).expect("close");
    assert!(report.success(), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_async_client_stalls_a_flooding_agent_process_at_its_bound_and_loses_nothing() {
    let Some(command) = flood_command() else {
        return;
    };
    let client = AsyncClient::spawn(&command, AsyncClientOptions::default())
        .await
        .expect("spawn awk");
    let pid = client.pid().expect("pid");
    tokio::task::spawn_blocking(move || check_stalled(pid, "AsyncClient"))
        .await
        .unwrap();
    for i in 0..TOTAL {
        check_order(i, client.recv().await.expect("every record"));
    }
    assert!(client.recv().await.is_none());
    let report = client.close(Duration::from_secs(10)).await.expect("close");
    assert!(report.success(), "{report:?}");
}
