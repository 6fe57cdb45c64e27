//! The validating encoder against `serde_json::to_writer` on the same records (WIRE-013 cost).
//!
//! Input: `agentx_wire::sample::realistic_stream` (8 MiB: tool results full of escapes,
//! `stream_event` deltas, non-ASCII and emoji), parsed once up front, as typed
//! `wire::OutputRecord`s and as parsed JSON documents. Ours encodes each through
//! `encode::FrameEncoder` (reused buffer, separator check, `\n`, credential scan of the final
//! frame); the peer writes the same document, parsed as a `serde_json::Value`, with
//! `serde_json::to_writer` into a reused buffer plus `\n`, and scans nothing. Group `encode`,
//! `Throughput::Bytes` of the input stream.
//!
//! Peers in the group: `serde_json_to_writer`, `json_write_value_plain` (our writer without the
//! encoder), `encoder/credentials_{0,8,64}`.
//! Group `validate`: the credential scan alone over every line (the share of the cost that
//! WIRE-013 adds), for 8 and 64 credentials, beside the raw aho-corasick pass alone and a
//! `memchr` newline count (a calibration of the machine's load).
//!
//! The encoder is the sans-IO `encode::FrameEncoder` (the frame is handed to `black_box`, as
//! the peer's buffer is); `driver_wire_records/credentials_64` is the same records through the
//! blocking driver `driver::OutputFifo` (locks, one writer call per record to a sink).
//!
//! Run: `cargo bench --bench encode -- --warm-up-time 1 --measurement-time 3`; with
//! `AGENTX_BENCH_CPU=1` it measures the benchmark thread's CPU time instead of wall time.

use std::hint::black_box;
use std::io;

use agentx_io::OutputFifo;
use agentx_wire::encode::{CredentialSet, FrameEncoder};
use agentx_wire::json;
use criterion::measurement::Measurement;
use criterion::{Criterion, Throughput};

use agentx_test_support::cpu_time;

const SIZE: usize = 8 << 20;

/// `n` credentials shaped like a provider registry's private fields (PROFILE §3): API keys,
/// endpoints, deployments, API versions, organizations. None occurs in the sample stream.
fn credentials(n: usize) -> Vec<Vec<u8>> {
    let mut state = 0x0123_4567_89AB_CDEFu64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..n)
        .map(|i| match i % 5 {
            0 => {
                let mut k = b"sk-proj-".to_vec();
                k.extend((0..48).map(|_| ALNUM[next() as usize % ALNUM.len()]));
                k
            }
            1 => format!("https://zq-{i}-{:x}.openai.azure.invalid/", next() % 0xffff).into_bytes(),
            2 => format!("zq-deploy-{i}-{:x}", next() % 0xffff).into_bytes(),
            3 => format!("2031-0{}-1{}-zqpreview", i % 9 + 1, i % 10).into_bytes(),
            _ => format!("org-zq{:x}", next()).into_bytes(),
        })
        .collect()
}

fn bench_encode<M: Measurement>(c: &mut Criterion<M>) {
    let stream = agentx_wire::sample::realistic_stream(1, SIZE);
    let lines: Vec<&[u8]> = stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let docs: Vec<json::Document<'_>> = lines
        .iter()
        .map(|l| json::parse(l).expect("sample parses"))
        .collect();
    let values: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_slice(l).expect("sample parses"))
        .collect();
    eprintln!(
        "encode bench: {} records, {} bytes",
        lines.len(),
        stream.len()
    );

    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Bytes(stream.len() as u64));

    group.bench_function("serde_json_to_writer", |b| {
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
        b.iter(|| {
            for v in &values {
                buf.clear();
                serde_json::to_writer(&mut buf, v).expect("serializes");
                buf.push(b'\n');
                black_box(&buf);
            }
        })
    });

    group.bench_function("json_write_value_plain", |b| {
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
        b.iter(|| {
            for d in &docs {
                buf.clear();
                json::write_value(&mut buf, black_box(d.root()));
                buf.push(b'\n');
                black_box(&buf);
            }
        })
    });

    // The typed records of the wire layer: what the agent actually encodes.
    let mut parser = json::Parser::new();
    let records: Vec<agentx_wire::wire::OutputRecord<'_>> = lines
        .iter()
        .map(|l| {
            agentx_wire::wire::OutputRecord::decode_line(l, &mut parser).expect("typed record")
        })
        .collect();
    group.bench_function("wire_records_plain", |b| {
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 16);
        b.iter(|| {
            for r in &records {
                buf.clear();
                black_box(r).encode(&mut buf);
                buf.push(b'\n');
                black_box(&buf);
            }
        })
    });
    for n in [0usize, 8, 64] {
        let mut encoder = FrameEncoder::new();
        encoder
            .set_credentials(CredentialSet::new(credentials(n)).expect("credential set"))
            .expect("configure");
        // Every record must pass, or the benchmark would measure a latched encoder.
        for r in &records {
            encoder.encode(r).expect("clean record");
        }
        group.bench_function(format!("encoder_wire_records/credentials_{n}"), |b| {
            b.iter(|| {
                for r in &records {
                    let _ = black_box(encoder.encode(black_box(r)));
                }
            })
        });
        assert!(encoder.failure().is_none());
    }
    {
        let fifo = OutputFifo::new(|frame: &[u8]| -> io::Result<usize> {
            black_box(frame);
            Ok(frame.len())
        });
        fifo.set_credentials(CredentialSet::new(credentials(64)).expect("credential set"))
            .expect("configure");
        for r in &records {
            fifo.push(r).expect("clean record");
        }
        group.bench_function("driver_wire_records/credentials_64", |b| {
            b.iter(|| {
                for r in &records {
                    let _ = fifo.push(black_box(r));
                }
            })
        });
        assert!(fifo.failure().is_none());
    }

    for n in [0usize, 8, 64] {
        let mut encoder = FrameEncoder::new();
        encoder
            .set_credentials(CredentialSet::new(credentials(n)).expect("credential set"))
            .expect("configure");
        for d in &docs {
            encoder.encode(&d.root()).expect("clean record");
        }
        group.bench_function(format!("encoder/credentials_{n}"), |b| {
            b.iter(|| {
                for d in &docs {
                    let _ = black_box(encoder.encode(&black_box(d.root())));
                }
            })
        });
        assert!(encoder.failure().is_none());
    }
    group.finish();

    let mut group = c.benchmark_group("validate");
    group.throughput(Throughput::Bytes(stream.len() as u64));
    group.bench_function("memchr_count_calibration", |b| {
        b.iter(|| black_box(memchr::memchr_iter(b'\n', black_box(&stream)).count()))
    });
    for n in [8usize, 64] {
        let ac = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostFirst)
            .build(credentials(n))
            .expect("automaton");
        group.bench_function(format!("raw_only_aho_corasick/credentials_{n}"), |b| {
            b.iter(|| {
                for l in &lines {
                    black_box(ac.is_match(black_box(*l)));
                }
            })
        });
        let set = CredentialSet::new(credentials(n)).expect("credential set");
        let mut scratch = Vec::new();
        group.bench_function(format!("scan/credentials_{n}"), |b| {
            b.iter(|| {
                for l in &lines {
                    black_box(set.matches(black_box(l), &mut scratch));
                }
            })
        });
    }
    group.finish();
}

fn main() {
    cpu_time::run(bench_encode, bench_encode);
}
