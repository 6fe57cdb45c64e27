//! Decode with duplicate detection, per line: ours against serde_json, simd-json and sonic-rs on
//! the same bytes in one run.
//!
//! Inputs (group per input, `Throughput::Bytes` = the bytes of the lines, LFs excluded):
//! - `decode/realistic`: 8 MiB of `sample::realistic_stream(1, ..)`, parsed line by line
//!   (by bytes mostly tool results full of escaped code; see `src/sample/mod.rs`);
//! - `decode/stream_events`: 8 MiB of `sample::stream_events(1, ..)`, ~250-byte records;
//! - `decode/twitter`, `decode/citm_catalog`, `decode/canada`: whole documents from
//!   `<conformance>/json/bench` (skipped with a note when absent; the directory is
//!   `AGENTX_CONFORMANCE_DIR` or `<CARGO_MANIFEST_DIR>/../shared/conformance`).
//!
//! Contenders, each doing the same minimal thing with a parsed line (count it, `black_box` the
//! value): `agentx` (`json::Parser::parse`, one parser reused across lines: UTF-8 validation,
//! strict grammar, duplicate and escape-equivalent member detection); `serde_json_value`
//! (`from_slice::<Value>`); `serde_json_ignored` (`from_slice::<IgnoredAny>`);
//! `simd_json_borrowed` (copy of the line into a reused `Vec`, then `to_borrowed_value`; the copy
//! is timed); `sonic_rs_value` (`from_slice::<sonic_rs::Value>`). Line boundaries are found with
//! `memchr` before timing.
//!
//! Run: `cargo bench --bench decode` (about two minutes: 1 s warm-up, 3 s measurement, 10 flat
//! samples per contender and input; override with `-- --warm-up-time W --measurement-time M`).
//!
//! On a shared, overloaded machine wall time mostly measures the other processes. With
//! `AGENTX_BENCH_CPU=1` the bench measures the benchmark thread's CPU time instead (Linux
//! `/proc/thread-self/schedstat`, scheduler-tick resolution, so keep samples ≥ 100 ms: the
//! defaults give 300 ms samples); throughputs are then "per CPU-second".

use std::hint::black_box;
use std::path::PathBuf;

use criterion::measurement::Measurement;
use criterion::{Criterion, SamplingMode, Throughput};

use agentx_test_support::cpu_time;
#[path = "decode_workload.rs"]
mod decode_workload;

use decode_workload::{Input, Scratch, CONTENDERS};

fn conformance_dir() -> PathBuf {
    std::env::var_os("AGENTX_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| agentx_test_support::workspace_root().join("../shared/conformance"))
}

fn inputs() -> Vec<Input> {
    let dir = conformance_dir().join("json").join("bench");
    let names = [
        "realistic",
        "stream_events",
        "twitter",
        "citm_catalog",
        "canada",
    ];
    let mut inputs = Vec::new();
    for input in names
        .into_iter()
        .filter_map(|name| Input::named(name, &dir))
    {
        match input {
            Ok(input) => inputs.push(input),
            Err((path, e)) => eprintln!(
                "SKIP decode/{}: {} ({e}); set AGENTX_CONFORMANCE_DIR",
                path.file_stem().unwrap_or_default().to_string_lossy(),
                path.display()
            ),
        }
    }
    inputs
}

fn bench_decode<M: Measurement>(c: &mut Criterion<M>) {
    let mut scratch = Scratch::new();
    for input in inputs() {
        let lines = input.lines.len();
        eprintln!(
            "decode/{}: {} lines, {} bytes of lines",
            input.name,
            lines,
            input.line_bytes()
        );
        // Every contender must accept every line, or the comparison would time error paths.
        for (name, run) in CONTENDERS {
            let ok = run(&input.bytes, &input.lines, &mut scratch);
            assert_eq!(
                ok,
                lines,
                "{name} rejected {} lines of {}",
                lines - ok,
                input.name
            );
        }
        let mut group = c.benchmark_group(format!("decode/{}", input.name));
        group
            .throughput(Throughput::Bytes(input.line_bytes()))
            .sampling_mode(SamplingMode::Flat);
        for (name, run) in CONTENDERS {
            group.bench_function(*name, |b| {
                b.iter(|| black_box(run(black_box(&input.bytes), &input.lines, &mut scratch)))
            });
        }
        group.finish();
    }
}

fn main() {
    cpu_time::run(bench_decode, bench_decode);
}
