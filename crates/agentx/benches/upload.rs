//! Upload throughput through the real `agentx` binary: a 20 MiB PNG and a 20 MiB
//! PDF sent as stream-json `attachment_import` lines (begin, 80 chunks of 262,144 bytes
//! as canonical base64, commit) to a fresh `agentx` process with its own AgentX home, timed
//! from the first byte written to the committed manifest read back. An `mcp_status` control
//! sent between the last chunk and the commit splits the time: its response comes back once
//! every chunk was admitted (input is processed in order), so the rest is the commit
//! (normalization, digest, blob write with fsync, ledger line).
//!
//! Reported per round: MiB of base64 chunk data per wall second end to end; the agent
//! process's CPU seconds (utime + stime from `/proc/<pid>/stat`, so the figures mean
//! something on a loaded machine); the chunk-admission and commit parts; the agent's peak
//! resident memory (`VmHWM` from `/proc/<pid>/status`, read before its input is closed).
//! Best and median of `AGENTX_BENCH_ROUNDS` rounds (default 3), each in a fresh home.
//!
//! A third row, `client_pdf`, sends the same PDF through the blocking host client's
//! [`Client::upload`](agentx_io::host::Client::upload) (its chunking, base64, the writer
//! thread that writes upload records, the acknowledgement waits) to the same kind of agent,
//! timed from the call to its return, with this process's CPU (every thread of the bench:
//! the client's writer and helper threads) beside the agent's.
//!
//! `cargo bench --bench upload` (release build of the bench and of `agentx`).

use agentx_test_support::agentx_process;
use agentx_test_support::proc_stat;

use std::io::Write;
use std::process::Stdio;
use std::time::Instant;

use agentx_process::{env_usize, fresh_home, AgentProcess};

use agentx_core::attach::image::{DecodedImage, SampleDepth};
use agentx_core::attach::limits::MAX_ITEM_BYTES;
use agentx_core::attach::Sha256Digest;
use zune_core::colorspace::ColorSpace;

const PROMPT: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";

/// xorshift noise: incompressible pixels, so the PNG is as large as its pixels.
fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A PNG just under 20 MiB: 2640 × 2640 RGB noise (6.97 MP; its re-encoding stays under the
/// 20 MiB item limit too).
fn png_20mib() -> Vec<u8> {
    let (w, h) = (2640u32, 2640u32);
    let image = DecodedImage {
        width: w,
        height: h,
        colorspace: ColorSpace::RGB,
        depth: SampleDepth::Eight,
        pixels: noise((w * h * 3) as usize),
    };
    let png = agentx_core::attach::png::encode(&image).unwrap();
    assert!(png.len() as u64 <= MAX_ITEM_BYTES, "{}", png.len());
    png
}

/// A one-page PDF of exactly 20 MiB: its content stream is padded with comment lines, and the
/// cross-reference table carries the real offsets.
fn pdf_20mib() -> Vec<u8> {
    fn build(stream_len: usize) -> Vec<u8> {
        let mut pdf = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        let mut obj = |pdf: &mut Vec<u8>, body: &[u8]| {
            offsets.push(pdf.len());
            pdf.extend_from_slice(body);
        };
        obj(
            &mut pdf,
            b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n",
        );
        obj(
            &mut pdf,
            b"2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n",
        );
        obj(
            &mut pdf,
            b"3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>\nendobj\n",
        );
        let mut content = Vec::with_capacity(stream_len);
        while content.len() + 100 <= stream_len {
            content.push(b'%');
            content.extend(std::iter::repeat_n(b'x', 98));
            content.push(b'\n');
        }
        content.resize(stream_len, b'\n');
        let mut four = format!("4 0 obj\n<< /Length {stream_len} >>\nstream\n").into_bytes();
        four.extend_from_slice(&content);
        four.extend_from_slice(b"\nendstream\nendobj\n");
        obj(&mut pdf, &four);
        let xref = pdf.len();
        pdf.extend_from_slice(b"xref\n0 5\n0000000000 65535 f \n");
        for o in &offsets {
            pdf.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
        }
        pdf.extend_from_slice(
            format!("trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
        );
        pdf
    }
    let target = MAX_ITEM_BYTES as isize;
    let mut n = target - build(0).len() as isize;
    loop {
        let pdf = build(n as usize);
        let off = target - pdf.len() as isize;
        if off == 0 {
            return pdf;
        }
        n += off;
    }
}

/// The input: begin, the chunk lines, an `mcp_status` marker, commit; and the base64 bytes.
struct Input {
    begin: Vec<u8>,
    chunks: Vec<u8>,
    marker: Vec<u8>,
    commit: Vec<u8>,
    base64_bytes: usize,
    chunk_lines: usize,
}

fn input(upload: &str, mime: &str, bytes: &[u8]) -> Input {
    let begin = format!(
        "{{\"type\":\"attachment_import\",\"version\":1,\"operation\":\"begin\",\"prompt_uuid\":\"{PROMPT}\",\"upload_id\":\"{upload}\",\"attachment_id\":\"att_{upload}\",\"name\":\"big\",\"size_bytes\":{},\"mime_type\":\"{mime}\",\"sha256\":\"{}\"}}\n",
        bytes.len(),
        Sha256Digest::of(bytes).to_hex()
    );
    let mut chunks = Vec::with_capacity(bytes.len() / 3 * 4 + 200 * 100);
    let mut base64_bytes = 0;
    let mut chunk_lines = 0;
    for (i, piece) in bytes.chunks(262_144).enumerate() {
        let data = base64_simd::STANDARD.encode_to_string(piece);
        base64_bytes += data.len();
        chunk_lines += 1;
        chunks.extend_from_slice(
            format!("{{\"type\":\"attachment_import\",\"version\":1,\"operation\":\"chunk\",\"upload_id\":\"{upload}\",\"sequence\":{i},\"data\":\"{data}\"}}\n").as_bytes(),
        );
    }
    Input {
        begin: begin.into_bytes(),
        chunks,
        marker: b"{\"type\":\"control_request\",\"request_id\":\"chunks-done\",\"request\":{\"subtype\":\"mcp_status\"}}\n".to_vec(),
        commit: format!(
            "{{\"type\":\"attachment_import\",\"version\":1,\"operation\":\"commit\",\"upload_id\":\"{upload}\"}}\n"
        )
        .into_bytes(),
        base64_bytes,
        chunk_lines,
    }
}

/// The agent's CPU seconds so far (utime + stime).
fn cpu_seconds(pid: u32) -> f64 {
    proc_stat::cpu(pid).unwrap().as_secs_f64()
}

fn peak_rss_mib(pid: u32) -> f64 {
    proc_stat::status_kib(pid, "VmHWM").unwrap() as f64 / 1024.0
}

struct Round {
    wall: f64,
    chunks_wall: f64,
    commit_wall: f64,
    cpu: f64,
    chunks_cpu: f64,
    peak_mib: f64,
    idle_mib: f64,
    committed_size: u64,
}

fn round(name: &str, data: &Input, n: usize) -> Round {
    let no_args: [&str; 0] = [];
    let mut agent = AgentProcess::spawn(
        fresh_home(&format!("upload-{name}-{n}")),
        &no_args,
        Stdio::null(),
    );
    let pid = agent.pid();
    // Warm the process (startup, store open) before the clock starts.
    agent.write(b"{\"type\":\"control_request\",\"request_id\":\"warm\",\"request\":{\"subtype\":\"mcp_status\"}}\n");
    assert_eq!(agent.next_json()["type"], "control_response");
    // The writer thread owns stdin while this one reads.
    let mut stdin = agent.stdin.take().unwrap();
    let idle_mib = peak_rss_mib(pid);
    let cpu0 = cpu_seconds(pid);
    let t0 = Instant::now();
    let r = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            stdin.write_all(&data.begin).unwrap();
            stdin.write_all(&data.chunks).unwrap();
            stdin.write_all(&data.marker).unwrap();
            stdin.write_all(&data.commit).unwrap();
            stdin.flush().unwrap();
        });
        let accepted = agent.next_json();
        assert_eq!(accepted["status"], "accepted", "{accepted}");
        let marker = agent.next_json();
        assert_eq!(marker["response"]["request_id"], "chunks-done", "{marker}");
        let chunks_wall = t0.elapsed().as_secs_f64();
        let chunks_cpu = cpu_seconds(pid) - cpu0;
        let done = agent.next_json();
        let wall = t0.elapsed().as_secs_f64();
        let cpu = cpu_seconds(pid) - cpu0;
        assert_eq!(done["status"], "committed", "{done}");
        writer.join().unwrap();
        let peak_mib = peak_rss_mib(pid);
        Round {
            wall,
            chunks_wall,
            commit_wall: wall - chunks_wall,
            cpu,
            chunks_cpu,
            peak_mib,
            idle_mib,
            committed_size: done["attachment"]["size_bytes"].as_u64().unwrap(),
        }
    });
    // Input EOF ends the process.
    drop(stdin);
    agent.finish();
    r
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn bench(name: &str, mime: &str, raw: &[u8], rounds: usize) {
    let data = input(&format!("upl_{name}"), mime, raw);
    let mib = data.base64_bytes as f64 / 1_048_576.0;
    let results: Vec<Round> = (0..rounds).map(|n| round(name, &data, n)).collect();
    let best = |f: &dyn Fn(&Round) -> f64| results.iter().map(f).fold(f64::INFINITY, f64::min);
    let med = |f: &dyn Fn(&Round) -> f64| median(results.iter().map(f).collect());
    println!(
        "upload/{name}: {:.2} MiB raw, {mib:.2} MiB base64 in {} chunk lines -> committed {} bytes",
        raw.len() as f64 / 1_048_576.0,
        data.chunk_lines,
        results[0].committed_size
    );
    println!(
        "  end to end: best {:.1} MiB/s wall ({:.2} s), median {:.1} MiB/s; agent CPU best {:.2} s ({:.1} MiB/CPU-s), median {:.2} s",
        mib / best(&|r| r.wall),
        best(&|r| r.wall),
        mib / med(&|r| r.wall),
        best(&|r| r.cpu),
        mib / best(&|r| r.cpu),
        med(&|r| r.cpu),
    );
    println!(
        "  chunk admission: best {:.2} s wall ({:.1} MiB/s), {:.2} CPU-s ({:.1} MiB/CPU-s); commit: best {:.2} s wall, median {:.2} s",
        best(&|r| r.chunks_wall),
        mib / best(&|r| r.chunks_wall),
        best(&|r| r.chunks_cpu),
        mib / best(&|r| r.chunks_cpu).max(0.01),
        best(&|r| r.commit_wall),
        med(&|r| r.commit_wall),
    );
    println!(
        "  agent peak RSS (VmHWM): max {:.0} MiB, median {:.0} MiB (after startup, before the upload: {:.0} MiB)",
        results.iter().map(|r| r.peak_mib).fold(0.0, f64::max),
        med(&|r| r.peak_mib),
        med(&|r| r.idle_mib)
    );
}

/// One `Client::upload` of `raw` to a fresh agent: (wall s, host CPU s, agent CPU s).
fn client_round(raw: &[u8], n: usize) -> (f64, f64, f64) {
    use agentx_io::host::{AgentCommand, Client, ClientOptions, UploadSource};
    use std::time::Duration;
    let home = fresh_home(&format!("upload-client-{n}"));
    let bin =
        std::env::var_os("AGENTX_BENCH_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_agentx").into());
    let command = AgentCommand::stream_json(bin)
        .env("AGENTX_HOME", &home)
        .env_remove("HOME");
    let client = Client::spawn(&command, ClientOptions::default()).unwrap();
    let t = Duration::from_secs(60);
    client.initialize(t).unwrap();
    let pid = client.pid().unwrap();
    let (host0, agent0) = (proc_stat::self_cpu(), cpu_seconds(pid));
    let t0 = Instant::now();
    let manifest = client
        .upload(
            UploadSource::Bytes(raw),
            "big.pdf",
            "application/pdf",
            PROMPT,
            t,
        )
        .unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let host = (proc_stat::self_cpu() - host0).as_secs_f64();
    let agent = cpu_seconds(pid) - agent0;
    assert_eq!(manifest.size_bytes, raw.len() as u64);
    client.close(t).unwrap();
    let _ = std::fs::remove_dir_all(&home);
    (wall, host, agent)
}

fn bench_client(raw: &[u8], rounds: usize) {
    let mib = raw.len() as f64 / 1_048_576.0;
    let results: Vec<(f64, f64, f64)> = (0..rounds).map(|n| client_round(raw, n)).collect();
    let best =
        |f: &dyn Fn(&(f64, f64, f64)) -> f64| results.iter().map(f).fold(f64::INFINITY, f64::min);
    let med = |f: &dyn Fn(&(f64, f64, f64)) -> f64| median(results.iter().map(f).collect());
    println!(
        "upload/client_pdf: {mib:.2} MiB raw through Client::upload: best {:.1} MiB/s wall ({:.2} s), median {:.1} MiB/s; host CPU best {:.2} s, median {:.2} s; agent CPU best {:.2} s, median {:.2} s",
        mib / best(&|r| r.0),
        best(&|r| r.0),
        mib / med(&|r| r.0),
        best(&|r| r.1),
        med(&|r| r.1),
        best(&|r| r.2),
        med(&|r| r.2),
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument selects one of `png`, `pdf`.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let rounds = env_usize("AGENTX_BENCH_ROUNDS", 3).max(1);
    let wants = |n: &str| filter.as_deref().is_none_or(|f| n.contains(f));
    if wants("pdf") {
        bench("pdf", "application/pdf", &pdf_20mib(), rounds);
    }
    if wants("png") {
        bench("png", "image/png", &png_20mib(), rounds);
    }
    if wants("client_pdf") {
        bench_client(&pdf_20mib(), rounds);
    }
}
