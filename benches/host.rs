//! The host client, measured on whole processes:
//! - `host_decode`: records per second a host decodes from an agent's stdout — the same
//!   stream_event-heavy session (`sample::stream_events`, 32 MiB) streamed by `cat` — through
//!   our blocking client, our tokio client, and a typical hand-written Rust host
//!   (`BufRead::lines` + `serde_json::from_str::<serde_json::Value>`), in the same run.
//! - `host_echo_turn`: round trips (user record in → result out) through the real `agentx`
//!   binary on its built-in model, blocking and tokio.
//!
//! `cargo bench --bench host`; the figures go to the README.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentx_wire::host::{AgentCommand, AsyncClient, AsyncClientOptions, Client, ClientOptions};
use agentx_wire::wire::OutputRecord;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const STREAM_BYTES: usize = 32 << 20;

fn stream_file() -> (PathBuf, u64) {
    let path =
        std::env::temp_dir().join(format!("agentx-host-bench-{}.ndjson", std::process::id()));
    let bytes = agentx_wire::sample::stream_events(7, STREAM_BYTES);
    let records = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    std::fs::File::create(&path)
        .unwrap()
        .write_all(&bytes)
        .unwrap();
    (path, records)
}

fn decode(c: &mut Criterion) {
    let (path, records) = stream_file();
    let mut g = c.benchmark_group("host_decode");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(records));
    let cat = AgentCommand::new("cat").arg(&path);
    g.bench_function("agentx_wire_client", |b| {
        b.iter(|| {
            let client = Client::spawn(&cat, ClientOptions::default()).unwrap();
            let mut n = 0u64;
            while let Some(r) = client.recv() {
                std::hint::black_box(r.unwrap());
                n += 1;
            }
            assert_eq!(n, records);
        })
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    g.bench_function("agentx_wire_tokio_client", |b| {
        b.iter(|| {
            rt.block_on(async {
                let client = AsyncClient::spawn(&cat, AsyncClientOptions::default())
                    .await
                    .unwrap();
                let mut n = 0u64;
                while let Some(r) = client.recv().await {
                    std::hint::black_box(r.unwrap());
                    n += 1;
                }
                assert_eq!(n, records);
            })
        })
    });
    g.bench_function("bufread_lines_serde_json_value", |b| {
        b.iter(|| {
            let mut child = Command::new("cat")
                .arg(&path)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let out = BufReader::new(child.stdout.take().unwrap());
            let mut n = 0u64;
            for line in out.lines() {
                let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
                std::hint::black_box(v);
                n += 1;
            }
            child.wait().unwrap();
            assert_eq!(n, records);
        })
    });
    g.finish();
    let _ = std::fs::remove_file(&path);
}

fn echo_turns(c: &mut Criterion) {
    let home = std::env::temp_dir().join(format!("agentx-host-bench-home-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let cmd = AgentCommand::stream_json(env!("CARGO_BIN_EXE_agentx")).env("AGENTX_HOME", &home);
    let mut g = c.benchmark_group("host_echo_turn");
    g.throughput(Throughput::Elements(1));
    let client = Client::spawn(&cmd, ClientOptions::default()).unwrap();
    g.bench_function("blocking", |b| {
        b.iter(|| {
            client.send_text("hello").unwrap();
            while let Some(r) = client.recv() {
                if matches!(r.unwrap(), OutputRecord::Result(_)) {
                    break;
                }
            }
        })
    });
    drop(client);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let client = rt
        .block_on(AsyncClient::spawn(&cmd, AsyncClientOptions::default()))
        .unwrap();
    g.bench_function("tokio", |b| {
        b.iter(|| {
            rt.block_on(async {
                client.send_text("hello").unwrap();
                while let Some(r) = client.recv().await {
                    if matches!(r.unwrap(), OutputRecord::Result(_)) {
                        break;
                    }
                }
            })
        })
    });
    g.finish();
    let started = Instant::now();
    drop(client);
    let _ = started;
}

criterion_group!(benches, decode, echo_turns);
criterion_main!(benches);
