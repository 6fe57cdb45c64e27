//! Per-line decode, ours and the peers, in CPU time of this thread: the same inputs and the
//! same contenders as `benches/decode.rs`, in a binary small enough to build twice, once by
//! default and once with `RUSTFLAGS="-C target-cpu=native"`. sonic-rs has no run-time CPU detection (CRATE-FACTS), so only a native build
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
//! One more contender lives only here, because it needs a C++ toolchain: C++ simdjson 4.6.4
//! (DOM parser, through the `simdjson-rust` binding), `simdjson`. NDJSON inputs are parsed per
//! line with `Parser::parse_bytes`, which copies the line into the parser's padded buffer
//! (simdjson reads up to 64 bytes past the end of its input, so a host holding lines in a
//! read buffer must copy each one; that copy is part of what it costs a host to use it); whole
//! documents are copied once into a padded buffer before timing and parsed in place with
//! `parse_bytes_with_padding`, no copy timed. See README.md.
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

/// The simdjson contender's state: one reused parser, and the padded copy of a whole document.
struct Simdjson {
    parser: simdjson_rust::dom::Parser,
    padded: Vec<u8>,
    whole: bool,
}

impl Simdjson {
    fn new(input: &Input) -> Simdjson {
        let whole = input.lines.len() == 1 && input.lines[0] == (0..input.bytes.len());
        let mut padded = Vec::new();
        if whole {
            padded.extend_from_slice(&input.bytes);
            padded.resize(input.bytes.len() + simdjson_rust::SIMDJSON_PADDING, 0);
        }
        Simdjson {
            parser: simdjson_rust::dom::Parser::default(),
            padded,
            whole,
        }
    }

    /// Parses every line (or the whole document); returns how many simdjson accepted. Not
    /// inlined, so callgrind can count its instructions alone (`--toggle-collect`).
    #[inline(never)]
    fn run(&mut self, input: &Input) -> usize {
        if self.whole {
            let len = input.bytes.len();
            // SAFETY: `padded` holds the document followed by SIMDJSON_PADDING initialized
            // zero bytes, all allocated and unchanged during the call.
            let tape = unsafe { self.parser.parse_bytes_with_padding(&self.padded[..len]) };
            return tape.map(|t| black_box(t)).is_ok() as usize;
        }
        let mut ok = 0;
        for r in &input.lines {
            // The binding copies the line into its padded buffer (timed: a host must).
            if let Ok(t) = self.parser.parse_bytes(&input.bytes[r.clone()]) {
                black_box(t);
                ok += 1;
            }
        }
        ok
    }
}

fn conformance_dir() -> PathBuf {
    std::env::var_os("AGENTX_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            agentx_test_support::workspace_root().join("../../../shared/conformance")
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
        let mut simdjson = Simdjson::new(&input);
        if simdjson.run(&input) != input.lines.len() {
            eprintln!("simdjson rejected lines of {}", input.name);
            return ExitCode::from(1);
        }
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
        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); CONTENDERS.len() + 1];
        for _ in 0..rounds {
            for i in 0..=CONTENDERS.len() {
                let start = thread_cpu_ns();
                let mut iters = 0u64;
                let mut used;
                loop {
                    match CONTENDERS.get(i) {
                        Some((_, run)) => {
                            black_box(run(black_box(&input.bytes), &input.lines, &mut scratch));
                        }
                        None => {
                            black_box(simdjson.run(black_box(&input)));
                        }
                    }
                    iters += 1;
                    used = thread_cpu_ns().saturating_sub(start);
                    if used >= min_ns {
                        break;
                    }
                }
                rates[i].push(mib * iters as f64 / (used as f64 / 1e9));
            }
        }
        let names = CONTENDERS.iter().map(|(n, _)| *n).chain(["simdjson"]);
        let medians: Vec<(&str, f64)> = names.zip(rates.into_iter().map(median)).collect();
        for (contender, m) in &medians {
            println!("{} {contender} {m:.0} {build}", input.name);
        }
        let rate = |name: &str| medians.iter().find(|(n, _)| *n == name).map(|m| m.1);
        if let (Some(ours), Some(sj)) = (rate("agentx"), rate("simdjson")) {
            println!("{} agentx/simdjson {:.2}x {build}", input.name, ours / sj);
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
