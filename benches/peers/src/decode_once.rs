//! One pass of our parser over a generated stream, nothing else: a fixed workload for
//! instruction counts (`valgrind --tool=callgrind`, `perf stat -e instructions`), which stay
//! comparable before and after a change whatever the machine's load.
//!
//! Usage: `decode_once [realistic|stream_events|FILE.json] [MIB] [PASSES]` (defaults
//! `stream_events 8 1`; a `.json` file is parsed whole, MIB ignored);
//! prints the number of accepted lines and the parse's thread CPU time
//! (`PASSES` 0 writes the stream instead).

use std::hint::black_box;

use agentx_wire::json::Parser;

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "stream_events".into());
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(8);
    let passes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let whole = which.ends_with(".json");
    let bytes = match which.as_str() {
        "realistic" => agentx_wire::sample::realistic_stream(1, mib << 20),
        "stream_events" => agentx_wire::sample::stream_events(1, mib << 20),
        path => std::fs::read(path).expect("a realistic, stream_events or FILE.json"),
    };
    let lines: Vec<&[u8]> = if whole {
        vec![&bytes[..]]
    } else {
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect()
    };
    if passes == 0 {
        // `PASSES` 0: write the stream itself (to look at the records).
        use std::io::Write;
        let _ = std::io::stdout().write_all(&bytes);
        return;
    }
    let mut parser = Parser::new();
    let mut ok = 0usize;
    let cpu_start = thread_cpu_ns();
    let wall_start = std::time::Instant::now();
    for _ in 0..passes {
        for line in &lines {
            if let Ok(v) = parser.parse(line) {
                black_box(&v);
                ok += 1;
            }
        }
    }
    let cpu_ns = thread_cpu_ns() - cpu_start;
    let wall_ns = wall_start.elapsed().as_nanos() as f64;
    let line_bytes: usize = lines.iter().map(|l| l.len()).sum::<usize>() * passes;
    let mib = line_bytes as f64 / (1 << 20) as f64;
    // Thread CPU time is what load does not move; on an idle machine, wall time of the loop
    // has the finer resolution (CPU time may tick in 4 ms steps).
    println!(
        "{ok} lines accepted, {:.1} ms thread CPU, {:.0} MiB per CPU-second, {:.0} MiB per wall-second",
        cpu_ns as f64 / 1e6,
        mib / (cpu_ns as f64 / 1e9),
        mib / (wall_ns / 1e9)
    );
}

/// This thread's CPU time in nanoseconds (Linux `schedstat`), 0 where unavailable.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
