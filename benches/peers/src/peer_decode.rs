//! Per-line decode, ours and the peers, in CPU time of this thread: the same inputs and the
//! same contenders as `benches/decode.rs`, in a binary small enough to build twice, once by
//! default and once with `RUSTFLAGS="-C target-cpu=native"` (issue 14: "the peers built
//! native"). sonic-rs has no run-time CPU detection (CRATE-FACTS), so only a native build
//! shows its AVX2 speed; our parser dispatches at run time, so its default build is what ships.
//!
//! Usage: `peer_decode [--rounds N] [--min-ms MS] [INPUT...]` with INPUT among `realistic`,
//! `stream_events`, `twitter`, `citm_catalog`, `canada` (default: all that are available; the
//! three classics come from `$AGENTX_CONFORMANCE_DIR/json/bench` or
//! `<repo>/../shared/conformance/json/bench`).
//!
//! Each round runs every contender in turn (alternating, so load drift hits all alike) until it
//! has used at least `--min-ms` of thread CPU time (default 300), and records MiB of line bytes
//! (LFs excluded) per CPU-second; the median of `--rounds` (default 7) rounds is printed as
//! `input contender MiB/s-cpu build`, where `build` is `native` when compiled with AVX2
//! enabled, else `default`.
//!
//! Build and run both flavours:
//! ```text
//! cd benches/peers
//! cargo build --release
//! CARGO_TARGET_DIR=target-native RUSTFLAGS="-C target-cpu=native" cargo build --release
//! target/release/peer_decode; target-native/release/peer_decode
//! ```

use std::hint::black_box;
use std::path::PathBuf;
use std::process::ExitCode;

#[path = "../../decode_workload.rs"]
mod decode_workload;

use decode_workload::{Input, Scratch, CONTENDERS};

fn conformance_dir() -> PathBuf {
    std::env::var_os("AGENTX_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance")
        })
}

fn input(name: &str) -> Option<Input> {
    match Input::named(name, &conformance_dir().join("json").join("bench"))? {
        Ok(input) => Some(input),
        Err((path, e)) => {
            eprintln!("SKIP {name}: {} ({e})", path.display());
            None
        }
    }
}

/// This thread's CPU time in nanoseconds (`/proc/thread-self/schedstat`).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|f| f.parse().ok()))
        .unwrap_or(0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> ExitCode {
    let mut rounds = 7usize;
    let mut min_ns = 300_000_000u64;
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let number = |v: Option<String>| v.and_then(|v| v.parse::<u64>().ok()).filter(|&n| n > 0);
        match a.as_str() {
            "--rounds" => match number(args.next()) {
                Some(n) => rounds = n as usize,
                None => return usage(),
            },
            "--min-ms" => match number(args.next()) {
                Some(n) => min_ns = n * 1_000_000,
                None => return usage(),
            },
            _ => names.push(a),
        }
    }
    if names.is_empty() {
        names = [
            "realistic",
            "stream_events",
            "twitter",
            "citm_catalog",
            "canada",
        ]
        .map(String::from)
        .to_vec();
    }
    let build = if cfg!(target_feature = "avx2") {
        "native"
    } else {
        "default"
    };
    let mut scratch = Scratch::new();
    for name in &names {
        let Some(input) = input(name) else {
            if !matches!(name.as_str(), "twitter" | "citm_catalog" | "canada") {
                return usage();
            }
            continue;
        };
        let mib = input.line_bytes() as f64 / 1_048_576.0;
        for (contender, run) in CONTENDERS {
            let ok = run(&input.bytes, &input.lines, &mut scratch);
            if ok != input.lines.len() {
                eprintln!(
                    "{contender} rejected {} lines of {}",
                    input.lines.len() - ok,
                    input.name
                );
                return ExitCode::from(1);
            }
        }
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); CONTENDERS.len()];
        for _ in 0..rounds {
            for (i, (_, run)) in CONTENDERS.iter().enumerate() {
                let start = thread_cpu_ns();
                let mut iters = 0u64;
                let mut used;
                loop {
                    black_box(run(black_box(&input.bytes), &input.lines, &mut scratch));
                    iters += 1;
                    used = thread_cpu_ns().saturating_sub(start);
                    if used >= min_ns {
                        break;
                    }
                }
                rates[i].push(mib * iters as f64 / (used as f64 / 1e9));
            }
        }
        for ((contender, _), r) in CONTENDERS.iter().zip(rates) {
            println!("{} {contender} {:.0} {build}", input.name, median(r));
        }
    }
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: peer_decode [--rounds N] [--min-ms MS] \
         [realistic|stream_events|twitter|citm_catalog|canada]..."
    );
    ExitCode::from(2)
}
