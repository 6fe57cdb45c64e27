//! The benchmark of the real `agentx` binary on its built-in model `agentx-echo`,
//! stream-json on pipes, driven by a minimal host (it writes one user line and splits the
//! output on LF, looking only at each line's first bytes), so the figures are agentx's:
//!
//! - **echo-turn latency**: one session, `AGENTX_BENCH_TURNS` (default 1,000) echo turns after
//!   20 warm-up turns; per turn, the time from writing the user record to reading the `result`
//!   record (the host waits for `idle` before the next turn). p50, p99, max, and the p50 of the
//!   first and last 100 turns (does a turn get slower as the session grows?).
//! - **stream throughput**: one session with `--include-partial-messages`,
//!   `AGENTX_BENCH_STREAM_TURNS` (default 60) turns whose prompts hold `AGENTX_BENCH_WORDS`
//!   (default 4,000) words; the echo reply streams one `stream_event` per word (the first
//!   4,096 words of a block, `model::scripted::WORD_DELTAS`).
//!   Records and bytes per wall second from the first prompt to the last `idle`.
//! - for both: CPU time of the agentx process (utime + stime, all threads; robust to the load
//!   of a shared machine) per turn / per record, and its peak memory (VmHWM from
//!   `/proc/<pid>/status`, read after the last turn, before EOF).
//!
//! `cargo bench --bench agentx` (builds the release `agentx`); the load is printed with the
//! figures, which go to the README.

use agentx_test_support::agentx_process;
use agentx_test_support::proc_stat;

use std::process::Stdio;
use std::time::{Duration, Instant};

use agentx_process::{env_usize, fresh_home, AgentProcess};
use proc_stat::{percentile, us};

const RESULT: &[u8] = b"{\"type\":\"result\",";
const RESULT_SUCCESS: &[u8] = b"{\"type\":\"result\",\"subtype\":\"success\"";
const IDLE: &[u8] =
    b"{\"type\":\"system\",\"subtype\":\"session_state_changed\",\"state\":\"idle\"";
const STREAM_EVENT: &[u8] = b"{\"type\":\"stream_event\",";

/// An `agentx` session in a fresh home, `--cwd` that home, stderr discarded.
fn spawn(tag: &str, extra: &[&str]) -> AgentProcess {
    let home = fresh_home(tag);
    let mut args: Vec<std::ffi::OsString> = extra.iter().map(|a| a.into()).collect();
    args.push("--cwd".into());
    args.push(home.clone().into());
    AgentProcess::spawn(home, &args, Stdio::null())
}

fn latency() {
    let turns = env_usize("AGENTX_BENCH_TURNS", 1000);
    let warm = 20;
    let mut a = spawn("latency", &[]);
    let pid = a.pid();
    let mut lat = Vec::with_capacity(turns);
    let mut cpu0 = Duration::ZERO;
    let mut wall0 = Instant::now();
    for i in 0..warm + turns {
        if i == warm {
            cpu0 = proc_stat::cpu(pid).unwrap();
            wall0 = Instant::now();
        }
        let t0 = Instant::now();
        a.say(&format!("hello {i}"));
        loop {
            let l = a.next_line();
            if l.starts_with(RESULT) {
                assert!(
                    l.starts_with(RESULT_SUCCESS),
                    "{}",
                    String::from_utf8_lossy(l)
                );
                break;
            }
        }
        if i >= warm {
            lat.push(t0.elapsed());
        }
        while !a.next_line().starts_with(IDLE) {}
    }
    let wall = wall0.elapsed();
    let cpu = proc_stat::cpu(pid).unwrap() - cpu0;
    let hwm = proc_stat::status_kib(pid, "VmHWM").unwrap_or(0);
    a.finish();
    let (first, last) = (
        lat[..100.min(turns)].to_vec(),
        lat[turns.saturating_sub(100)..].to_vec(),
    );
    let median = |mut v: Vec<Duration>| {
        v.sort();
        percentile(&v, 50.0)
    };
    let (first50, last50) = (median(first), median(last));
    lat.sort();
    println!("agentx echo-turn latency (user record in -> result out), {turns} turns in one session after {warm} warm-up turns:");
    println!(
        "  p50 {}  p99 {}  max {}  mean {}  (p50 of turns 1-100: {}, of the last 100: {})",
        us(percentile(&lat, 50.0)),
        us(percentile(&lat, 99.0)),
        us(*lat.last().unwrap()),
        us(lat.iter().sum::<Duration>() / turns as u32),
        us(first50),
        us(last50),
    );
    println!(
        "  agentx CPU (utime+stime) per turn {}  ({:.2} s over {turns} turns, {:.2} s wall)",
        us(cpu / turns as u32),
        cpu.as_secs_f64(),
        wall.as_secs_f64()
    );
    println!("  agentx peak memory VmHWM {} KiB", hwm);
}

fn stream() {
    let turns = env_usize("AGENTX_BENCH_STREAM_TURNS", 60);
    let words = env_usize("AGENTX_BENCH_WORDS", 4000);
    let mut a = spawn("stream", &["--include-partial-messages"]);
    let pid = a.pid();
    // A warm-up turn (system/init, the session store created).
    a.say("warm up");
    while !a.next_line().starts_with(IDLE) {}
    let cpu0 = proc_stat::cpu(pid).unwrap();
    let host0 = proc_stat::self_cpu();
    let t0 = Instant::now();
    let (mut records, mut bytes, mut events) = (0u64, 0u64, 0u64);
    for t in 0..turns {
        let prompt: Vec<String> = (0..words).map(|w| format!("w{t}x{w}")).collect();
        a.say(&prompt.join(" "));
        loop {
            let l = a.next_line();
            records += 1;
            bytes += l.len() as u64;
            if l.starts_with(STREAM_EVENT) {
                events += 1;
            } else if l.starts_with(IDLE) {
                break;
            }
        }
    }
    let wall = t0.elapsed();
    let cpu = proc_stat::cpu(pid).unwrap() - cpu0;
    let host = proc_stat::self_cpu() - host0;
    let hwm = proc_stat::status_kib(pid, "VmHWM").unwrap_or(0);
    a.finish();
    assert!(
        events >= (turns * words) as u64,
        "one stream_event per word"
    );
    println!(
        "agentx stream throughput (--include-partial-messages), {turns} turns x {words}-word echo:"
    );
    println!(
        "  {records} records ({events} stream_event), {:.1} MiB in {:.2} s wall: {:.0} records/s, {:.1} MiB/s",
        bytes as f64 / 1048576.0,
        wall.as_secs_f64(),
        records as f64 / wall.as_secs_f64(),
        bytes as f64 / 1048576.0 / wall.as_secs_f64()
    );
    println!(
        "  agentx CPU {:.2} s: {:.0} records per agentx CPU-second ({:.2} µs/record); host reader CPU {:.2} s",
        cpu.as_secs_f64(),
        records as f64 / cpu.as_secs_f64().max(1e-9),
        cpu.as_secs_f64() * 1e6 / records as f64,
        host.as_secs_f64()
    );
    println!("  agentx peak memory VmHWM {} KiB", hwm);
}

fn main() {
    // `cargo bench` passes `--bench`; a filter picks one part ("latency" or "stream").
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let want = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    println!("load average at start: {}", proc_stat::load());
    if want("latency") {
        latency();
    }
    if want("stream") {
        stream();
    }
    println!("load average at end: {}", proc_stat::load());
}
