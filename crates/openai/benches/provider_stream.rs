//! Provider streaming throughput and added latency (PROFILE §14).
//!
//! A local HTTP/1.1 server (its own thread and runtime) streams a long Chat Completions answer
//! as fast as it can: `AGENTX_BENCH_TOKENS` deltas (default 200,000) of one short token each,
//! then `finish_reason`, usage and `[DONE]`. The client is `driver::openai::BlockingClient`, the
//! same code the `agentx` binary runs. Reported:
//! - tokens per second (text deltas mapped into model events per wall second, and per CPU
//!   second of the client thread, from `/proc/thread-self/schedstat`);
//! - the added latency from the server's first body byte written to our first text delta
//!   (median and max over `AGENTX_BENCH_LATENCY_RUNS` single-token calls, default 200).
//!
//! `cargo bench --bench provider_stream`. On a shared, loaded machine the wall figures mostly
//! measure the other processes; the CPU figure is the one to compare.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agentx_core::model::{Message, ModelEvent, ModelRequest};
use agentx_openai::{BlockingClient, Endpoint, Interrupt, Report};

const HEAD: &str = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":{"content":"#;

fn stream_body(tokens: usize) -> Vec<u8> {
    let mut body = Vec::with_capacity(tokens * 220);
    for i in 0..tokens {
        let tok = if i % 7 == 0 { " the" } else { " tok" };
        body.extend_from_slice(b"data: ");
        body.extend_from_slice(HEAD.as_bytes());
        body.extend_from_slice(
            format!("\"{tok}\"}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}\n\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(b"data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n");
    body.extend_from_slice(format!("data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":{tokens},\"total_tokens\":{}}}}}\n\ndata: [DONE]\n\n", tokens + 10).as_bytes());
    body
}

/// Serves `body` (chunked, in 64 KiB HTTP chunks) to every connection; reports the instant
/// each response's first body byte was written.
fn serve(body: Vec<u8>, first_byte: mpsc::Sender<Instant>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            socket.set_nodelay(true).unwrap();
            let mut buf = vec![0u8; 1 << 16];
            let mut got = Vec::new();
            // Read the head and the content-length body.
            loop {
                let n = socket.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                got.extend_from_slice(&buf[..n]);
                if let Some(p) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&got[..p]).to_ascii_lowercase();
                    let len: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0);
                    if got.len() >= p + 4 + len {
                        break;
                    }
                }
            }
            let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n");
            let mut first = true;
            for piece in body.chunks(64 << 10) {
                let mut out = format!("{:x}\r\n", piece.len()).into_bytes();
                out.extend_from_slice(piece);
                out.extend_from_slice(b"\r\n");
                if first {
                    // Head and size line first, then the body's first byte is timed.
                    let _ = socket.write_all(&out[..out.len() - piece.len() - 2]);
                    let _ = first_byte.send(Instant::now());
                    let _ = socket.write_all(&out[out.len() - piece.len() - 2..]);
                    first = false;
                } else if socket.write_all(&out).is_err() {
                    break;
                }
            }
            let _ = socket.write_all(b"0\r\n\r\n");
        }
    });
    port
}

fn thread_cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(Duration::from_nanos)
        .unwrap_or_default()
}

fn request() -> ModelRequest {
    ModelRequest {
        turn: 1,
        index: 0,
        model: "bench".into(),
        effort: None,
        messages: vec![Message::user("write a long answer")].into(),
        tools: vec![],
        system: None,
        output_schema: None,
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let tokens = env_usize("AGENTX_BENCH_TOKENS", 200_000);
    let runs = env_usize("AGENTX_BENCH_LATENCY_RUNS", 200);
    let interrupt = Interrupt::new();

    // Throughput.
    let (tx, _rx) = mpsc::channel();
    let port = serve(stream_body(tokens), tx);
    let endpoint = Endpoint::from_parts(
        &format!("http://127.0.0.1:{port}/v1/chat/completions"),
        vec![("authorization", b"Bearer sk-bench".to_vec())],
    )
    .unwrap();
    let client = BlockingClient::new(endpoint).unwrap();
    for round in 0..3 {
        let mut deltas = 0usize;
        let mut first: Option<Instant> = None;
        let cpu0 = thread_cpu();
        let t0 = Instant::now();
        client.call(&request(), &interrupt, &mut |r| {
            if let Report::Event(ModelEvent::TextDelta { .. }) = r {
                deltas += 1;
                first.get_or_insert_with(Instant::now);
            }
        });
        let wall = t0.elapsed();
        let cpu = thread_cpu() - cpu0;
        assert_eq!(deltas, tokens);
        println!(
            "throughput round {round}: {tokens} tokens in {:.1} ms wall ({:.0} tokens/s), {:.1} ms client-thread CPU ({:.0} tokens per CPU-second)",
            wall.as_secs_f64() * 1e3,
            tokens as f64 / wall.as_secs_f64(),
            cpu.as_secs_f64() * 1e3,
            tokens as f64 / cpu.as_secs_f64().max(1e-9),
        );
    }

    // Added latency: the server's first body byte → our first text delta.
    let (tx, rx) = mpsc::channel();
    let port = serve(stream_body(1), tx);
    let endpoint = Endpoint::from_parts(
        &format!("http://127.0.0.1:{port}/v1/chat/completions"),
        vec![("authorization", b"Bearer sk-bench".to_vec())],
    )
    .unwrap();
    let client = BlockingClient::new(endpoint).unwrap();
    let mut lat = Vec::with_capacity(runs);
    for _ in 0..runs {
        let mut at = None;
        client.call(&request(), &interrupt, &mut |r| {
            if let Report::Event(ModelEvent::TextDelta { .. }) = r {
                at.get_or_insert_with(Instant::now);
            }
        });
        let sent = rx.recv().unwrap();
        lat.push(at.unwrap().saturating_duration_since(sent));
    }
    lat.sort();
    println!(
        "added latency (server first body byte -> first text delta), {runs} calls: median {:.0} us, p90 {:.0} us, max {:.0} us",
        lat[runs / 2].as_secs_f64() * 1e6,
        lat[runs * 9 / 10].as_secs_f64() * 1e6,
        lat[runs - 1].as_secs_f64() * 1e6,
    );
}
