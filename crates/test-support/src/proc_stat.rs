//! Linux `/proc` readings for the whole-process benchmarks (`agentx`, `host`): CPU time of a
//! process (all its threads, exited ones included), its peak resident set, and the load.
//!
//! CPU time comes from `utime + stime` of `/proc/<pid>/stat` in clock ticks (USER_HZ = 100 on
//! Linux: 10 ms resolution), so measured stretches should be ≥ 1 s of CPU. On a shared machine
//! CPU time is what stays comparable across runs; wall time mostly measures the neighbours.

use std::time::Duration;

/// Linux's USER_HZ (fixed at 100 for the `/proc` interface on every architecture we run).
const TICKS_PER_SECOND: u64 = 100;

/// `utime + stime` of process `pid` (`None` once it is gone).
pub fn cpu(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    cpu_of(&stat)
}

/// `utime + stime` of this process (every thread, live or exited).
pub fn self_cpu() -> Duration {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| cpu_of(&s))
        .unwrap_or_default()
}

fn cpu_of(stat: &str) -> Option<Duration> {
    // Fields after the command name (which may hold spaces and parentheses): field 3 is the
    // state, so utime (field 14) and stime (field 15) are at indices 11 and 12.
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
}

/// CPU time of process `pid` (`"self"` for this one) in nanoseconds, summed over its live
/// threads' `/proc/<pid>/task/*/schedstat`: exact where `/proc/<pid>/stat` counts 10 ms ticks
/// per process (an agent's ~1 ms of a fleet's turn phase truncates to 0). Threads that exited
/// are not counted: only for stretches in which the process keeps its threads.
pub fn task_cpu(pid: &str) -> Duration {
    let ns: u64 = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(ns)
}

/// How many times the live threads of process `pid` (`"self"` for this one) were scheduled
/// onto a CPU (the third field of `/proc/<pid>/task/*/schedstat`): each wake from a blocking
/// wait is one, so per turn it counts the sleeps a host pays. Same caveats as [`task_cpu`].
pub fn task_slices(pid: &str) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().nth(2)?.parse::<u64>().ok())
        .sum()
}

/// `cutime + cstime` of this process: the CPU time of its children that were reaped (every
/// thread, exited ones included; 10 ms ticks, truncated once over all children).
pub fn reaped_children_cpu() -> Duration {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| {
            let rest = &stat[stat.rfind(')')? + 1..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks: u64 = f.get(13)?.parse::<u64>().ok()? + f.get(14)?.parse::<u64>().ok()?;
            Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
        })
        .unwrap_or_default()
}

/// A `/proc/<pid>/status` field in KiB (`VmHWM`, `VmRSS`, ...).
pub fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|l| {
        let v = l.strip_prefix(field)?.strip_prefix(':')?;
        v.split_whitespace().next()?.parse().ok()
    })
}

/// The 1/5/15-minute load averages, as `/proc/loadavg` prints them.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// The `p`-th percentile (0..=100) of sorted `v`, nearest rank.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Microseconds with one decimal.
pub fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// Whether process `pid` exists and is not a zombie (state `Z`) or dead (`X`).
pub fn is_running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rfind(')')
        .and_then(|at| stat[at + 1..].split_whitespace().next());
    !matches!(state, None | Some("Z") | Some("X"))
}

/// Waits until process `pid` is no longer running, polling `/proc` every 10 ms; `false` when
/// it still runs at `deadline` (a condition waited for, not a fixed sleep).
pub fn wait_gone(pid: u32, deadline: Duration) -> bool {
    let until = std::time::Instant::now() + deadline;
    while is_running(pid) {
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}
