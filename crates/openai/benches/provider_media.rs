//! Time and peak memory to build and send one Chat Completions request carrying 40 MiB of
//! media (PROFILE §14): two committed 20 MiB blobs (41,943,040 bytes, the
//! `max_model_request_media_bytes` edge) in a temporary AgentX home, read through
//! `attach::FsBlobs`, hashed, base64-encoded into the body and POSTed by
//! `driver::openai::BlockingClient` (the code the `agentx` binary runs) to a local HTTP/1.1
//! server that reads and discards the body, then answers a short SSE stream.
//!
//! Reported per run (`AGENTX_BENCH_RUNS`, default 5):
//! - the whole call (build + send + the short answer): wall time and the CPU time of the
//!   calling thread (`/proc/thread-self/schedstat`);
//! - the body build alone (`request::body`): wall and thread CPU time;
//! - the peak resident set above the level before the call (`VmHWM` after resetting it with
//!   `/proc/self/clear_refs` = 5, minus `VmRSS` before): the cost of the request, compared with
//!   one raw copy of the media (40 MiB) and one encoded copy (53.3 MiB).
//!
//! `cargo bench --bench provider_media`. On a loaded machine wall time measures the
//! neighbours; CPU time and the memory figures are the ones to compare.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentx_core::attach::Sha256Digest;
use agentx_core::model::{Message, ModelEvent, ModelRequest, UserBlock};
use agentx_home::FsBlobs;
use agentx_openai::request;
use agentx_openai::{BlockingClient, Endpoint, Interrupt, Report};
use agentx_wire::wire::AttachmentRef;

const ITEM: usize = 20_971_520;

fn thread_cpu() -> Duration {
    let ns = std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|f| f.parse().ok()))
        .unwrap_or(0);
    Duration::from_nanos(ns)
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix(field)?.strip_prefix(':')?;
            rest.trim().trim_end_matches(" kB").trim().parse().ok()
        })
        .unwrap_or(0)
}

/// Resets `VmHWM` to the current RSS (Linux ≥ 4.0).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// Reads each request's head and `content-length` body into a 64 KiB buffer (nothing kept),
/// answers a short SSE stream; reports the body length it read.
fn serve() -> (u16, std::sync::mpsc::Receiver<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            let mut buf = vec![0u8; 1 << 16];
            let mut head = Vec::new();
            let (len, mut got) = loop {
                let n = socket.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break (0, 0);
                }
                head.extend_from_slice(&buf[..n]);
                if let Some(p) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                    let text = String::from_utf8_lossy(&head[..p]).to_ascii_lowercase();
                    let len: usize = text
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    break (len, head.len() - p - 4);
                }
            };
            while got < len {
                let n = socket.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                got += n;
            }
            let _ = tx.send(got);
            let sse = concat!(
                "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":null}]}\n\n",
                "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                "data: [DONE]\n\n"
            );
            let _ = socket.write_all(
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
                    sse.len()
                )
                .as_bytes(),
            );
        }
    });
    (port, rx)
}

/// Two 20 MiB blobs written under `<home>/blobs` as the store names them; their manifests.
fn blobs(home: &std::path::Path) -> Vec<AttachmentRef> {
    std::fs::create_dir_all(home.join("blobs")).unwrap();
    (0..2u8)
        .map(|k| {
            // Incompressible-looking bytes (an xorshift stream), as real media are.
            let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ u64::from(k);
            let bytes: Vec<u8> = (0..ITEM)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            let digest = Sha256Digest::of(&bytes);
            std::fs::write(home.join("blobs").join(digest.storage_id()), &bytes).unwrap();
            AttachmentRef {
                attachment_id: format!("att_bench{k}"),
                kind: "document".into(),
                name: format!("bench{k}.pdf"),
                mime_type: "application/pdf".into(),
                size_bytes: ITEM as u64,
                sha256: digest.to_hex(),
                storage_id: digest.storage_id(),
            }
        })
        .collect()
}

fn main() {
    let runs: usize = std::env::var("AGENTX_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let home = std::env::temp_dir().join(format!("agentx-bench-media-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let refs = blobs(&home);
    let request = ModelRequest {
        turn: 1,
        index: 0,
        model: "gpt-4o".into(),
        effort: None,
        messages: vec![Message::user_blocks([
            UserBlock::Text("Summarize both documents."),
            UserBlock::Attachment(&refs[0]),
            UserBlock::Attachment(&refs[1]),
        ])]
        .into(),
        tools: vec![],
        system: None,
        output_schema: None,
    };
    let source = Arc::new(FsBlobs::new(&home));
    let (port, bodies) = serve();
    let endpoint = Endpoint::from_parts(
        &format!("http://127.0.0.1:{port}/v1/chat/completions"),
        vec![],
    )
    .unwrap();
    let client = BlockingClient::with_blobs(endpoint, source.clone()).unwrap();
    let media_mib = (2 * ITEM) as f64 / 1048576.0;
    println!(
        "provider_media: {media_mib:.0} MiB of media ({} bytes) in one request, {runs} runs; load: {}",
        2 * ITEM,
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
    );
    let can_reset = reset_peak();
    if !can_reset {
        println!("SKIP peak memory: /proc/self/clear_refs is not writable here");
    }
    let mut build_wall = Vec::new();
    let mut build_cpu = Vec::new();
    let mut build_peak = Vec::new();
    let mut call_wall = Vec::new();
    let mut call_cpu = Vec::new();
    let mut call_peak = Vec::new();
    let mut body_len = 0;
    for _ in 0..runs {
        // The body alone.
        let before = status_kib("VmRSS");
        reset_peak();
        let (t, c) = (Instant::now(), thread_cpu());
        let body = request::body(&request, source.as_ref()).expect("the blobs are there");
        build_wall.push(t.elapsed());
        build_cpu.push(thread_cpu() - c);
        build_peak.push(status_kib("VmHWM").saturating_sub(before));
        body_len = body.bytes.len();
        assert_eq!(body.media, 2);
        drop(body);

        // Build and send, with the answer.
        let before = status_kib("VmRSS");
        reset_peak();
        let (t, c) = (Instant::now(), thread_cpu());
        let mut ended = false;
        client.call(&request, &Interrupt::new(), &mut |r| {
            if let Report::Event(ModelEvent::MessageStop { .. }) = r {
                ended = true;
            }
        });
        call_wall.push(t.elapsed());
        call_cpu.push(thread_cpu() - c);
        call_peak.push(status_kib("VmHWM").saturating_sub(before));
        assert!(ended, "the call ended with its message");
        assert_eq!(
            bodies.recv().unwrap(),
            body_len,
            "the server read the whole body"
        );
    }
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let max = |v: &[u64]| v.iter().copied().max().unwrap_or(0) as f64 / 1024.0;
    println!(
        "body: {body_len} bytes ({:.1} MiB)",
        body_len as f64 / 1048576.0
    );
    println!(
        "build only:      median wall {:>7.1} ms, thread CPU {:>7.1} ms, peak RSS above start {:>6.1} MiB (max of runs)",
        med(&mut build_wall).as_secs_f64() * 1e3,
        med(&mut build_cpu).as_secs_f64() * 1e3,
        max(&build_peak)
    );
    println!(
        "build + send:    median wall {:>7.1} ms, thread CPU {:>7.1} ms, peak RSS above start {:>6.1} MiB (max of runs)",
        med(&mut call_wall).as_secs_f64() * 1e3,
        med(&mut call_cpu).as_secs_f64() * 1e3,
        max(&call_peak)
    );
    println!(
        "reference: one raw copy of the media {:.1} MiB, one encoded copy {:.1} MiB",
        media_mib,
        (2 * ITEM).div_ceil(3) as f64 * 4.0 / 1048576.0
    );
    let _ = std::fs::remove_dir_all(&home);
}
