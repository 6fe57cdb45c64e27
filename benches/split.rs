//! Line splitting: our SIMD newline finder and reader against `memchr` on the same bytes.
//!
//! Group `split`, `Throughput::Bytes`, two 64 MiB inputs made by a deterministic generator:
//! `mixed` (NDJSON-ish lines of 40..4000 printable bytes) and `short` (80..120 bytes).
//! Peers: `memchr_iter(..).count()` and iterating `memchr_iter` positions; ours: `count`,
//! iterating positions, and the whole `frame::Reader` (one `Bytes` chunk, blank check,
//! line numbers). Group `split_backends`: positions per backend on `short`.
//!
//! Run: `cargo bench --bench split -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use agentx_wire::frame::{Reader, Splitter};
use bytes::Bytes;
use criterion::{criterion_group, criterion_main, Criterion, SamplingMode, Throughput};

const SIZE: usize = 64 << 20;

/// Lines of `min..=max` printable bytes shaped like JSON records, LF-terminated, until `SIZE`.
fn ndjson(min: usize, max: usize, seed: u64) -> Vec<u8> {
    let mut state = seed;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut out = Vec::with_capacity(SIZE + max + 1);
    let mut i = 0u64;
    while out.len() < SIZE {
        let len = min + (next() % (max - min + 1) as u64) as usize;
        let start = out.len();
        out.extend_from_slice(
            format!("{{\"type\":\"stream_event\",\"seq\":{i},\"text\":\"").as_bytes(),
        );
        while out.len() - start < len.saturating_sub(2) {
            // Printable ASCII except quote and backslash.
            let b = b' ' + (next() % 95) as u8;
            out.push(if b == b'"' || b == b'\\' { b'_' } else { b });
        }
        out.extend_from_slice(b"\"}\n");
        i += 1;
    }
    out
}

fn bench_split(c: &mut Criterion) {
    let inputs = [
        ("mixed", ndjson(40, 4000, 0x5eed_0001)),
        ("short", ndjson(80, 120, 0x5eed_0002)),
    ];
    let ours = Splitter::detect();
    eprintln!("newline backend: {:?}", ours.backend());

    let mut group = c.benchmark_group("split");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    for (name, buf) in &inputs {
        let buf = buf.as_slice();
        let lines = memchr::memchr_iter(b'\n', buf).count();
        assert_eq!(ours.count(buf), lines);
        eprintln!("{name}: {} bytes, {lines} lines", buf.len());
        group.throughput(Throughput::Bytes(buf.len() as u64));

        group.bench_function(format!("memchr_iter_count/{name}"), |b| {
            b.iter(|| memchr::memchr_iter(b'\n', black_box(buf)).count())
        });
        group.bench_function(format!("ours_count/{name}"), |b| {
            b.iter(|| ours.count(black_box(buf)))
        });
        group.bench_function(format!("memchr_iter_positions/{name}"), |b| {
            b.iter(|| memchr::memchr_iter(b'\n', black_box(buf)).fold(0usize, |acc, p| acc ^ p))
        });
        group.bench_function(format!("ours_positions/{name}"), |b| {
            b.iter(|| ours.newlines(black_box(buf)).fold(0usize, |acc, p| acc ^ p))
        });
        let chunk = Bytes::copy_from_slice(buf);
        group.bench_function(format!("ours_reader/{name}"), |b| {
            b.iter(|| {
                let mut reader = Reader::new();
                reader.push(black_box(chunk.clone()));
                reader.finish();
                let mut total = 0usize;
                while let Some(Ok(line)) = reader.next_line() {
                    total += line.as_bytes().len();
                }
                total
            })
        });
    }
    group.finish();

    let (_, short) = &inputs[1];
    let short = short.as_slice();
    let mut group = c.benchmark_group("split_backends");
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(short.len() as u64));
    for s in Splitter::available() {
        group.bench_function(format!("positions_{}/short", s.backend().name()), |b| {
            b.iter(|| s.newlines(black_box(short)).fold(0usize, |acc, p| acc ^ p))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_split);
criterion_main!(benches);
