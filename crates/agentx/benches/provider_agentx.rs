//! Provider streaming through the real `agentx` binary (PROFILE §14): what an SDK host
//! sees when an `openai` provider streams from a local OpenAI-compatible server.
//!
//! Set-up: a local HTTP/1.1 server (a std thread in this process) answers each Chat Completions
//! request with `200 OK`, `text/event-stream`, chunked: the head, a 2 ms pause (a stand-in for
//! the model's time to first token, so the client is waiting for the body when it comes), the
//! first SSE event alone in one HTTP chunk, then the rest as fast as the socket takes it
//! (64 KiB HTTP chunks). The answer is a role chunk, `AGENTX_BENCH_TOKENS` one-token content
//! deltas (default 200,000; each a ~190-byte `data:` event shaped like OpenAI's), `stop`, a
//! usage chunk and `[DONE]`. `agentx` (the release binary of this build) runs in stream-json
//! mode with `--include-partial-messages` and an `auth.json` pointing an `openai` provider at
//! the server; this process is its host: it writes the user record and reads stdout line by
//! line (one `BufReader`, the instant taken as soon as a line is read, before any parsing).
//!
//! Timed, exactly:
//! - **throughput**: from the instant before the server writes the first body byte to the
//!   instant the host has read the last `content_block_delta` `stream_event` record; tokens per
//!   second = deltas / that. Also the CPU time of the whole `agentx` process over the turn
//!   (`/proc/PID/stat` utime + stime, 10 ms ticks; from before the user record is written to
//!   after `idle` is read, so it includes the session's store append with fsync), as tokens per
//!   agentx CPU-second. 3 turns in one process (`AGENTX_BENCH_ROUNDS`).
//! - **added latency**: from the instant before the server writes the first body byte to the
//!   instant the host has read the turn's first `stream_event` record (`message_start`), for
//!   `AGENTX_BENCH_LATENCY_RUNS` one-token turns (default 500, after 20 warm-up turns), p50 /
//!   p90 / p99 / max. It includes loopback TCP, hyper, our SSE parser and mapper, the hand-off
//!   to the session thread, the validating encoder, the stdout pipe and the host's read.
//!
//! `cargo bench --bench provider_agentx` (builds `agentx` in the bench profile too). On a
//! shared machine every wall figure includes waiting for the CPU: state `uptime` next to them.

use agentx_test_support::agentx_process;
use agentx_test_support::proc_stat;

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agentx_process::{env_usize, fresh_home, AgentProcess};

/// utime + stime of the whole `agentx` process (10 ms ticks).
fn process_cpu(pid: u32) -> Duration {
    proc_stat::cpu(pid).expect("agentx is running")
}

const HEAD: &str = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_bench","choices":[{"index":0,"delta":"#;
const KEY: &str = "sk-bench-Zq9vT4mXw2LbR7nK";
/// The server's pause between the response head and the first body byte.
const TIME_TO_FIRST_TOKEN: Duration = Duration::from_millis(2);

fn event(delta: &str, finish: &str) -> Vec<u8> {
    format!(
        "data: {HEAD}{delta},\"logprobs\":null,\"finish_reason\":{finish}}}],\"usage\":null}}\n\n"
    )
    .into_bytes()
}

/// The SSE events of one answer: the role chunk first, then `tokens` content deltas.
fn answer(tokens: usize) -> Vec<Vec<u8>> {
    let mut events = Vec::with_capacity(tokens + 4);
    events.push(event(
        r#"{"role":"assistant","content":"","refusal":null}"#,
        "null",
    ));
    for i in 0..tokens {
        let tok = if i % 7 == 0 { " the" } else { " tok" };
        events.push(event(&format!("{{\"content\":\"{tok}\"}}"), "null"));
    }
    events.push(event("{}", "\"stop\""));
    events.push(format!("data: {{\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"gpt-4o-2024-08-06\",\"choices\":[],\"usage\":{{\"prompt_tokens\":10,\"completion_tokens\":{tokens},\"total_tokens\":{}}}}}\n\n", tokens + 10).into_bytes());
    events.push(b"data: [DONE]\n\n".to_vec());
    events
}

fn http_chunk(out: &mut Vec<u8>, piece: &[u8]) {
    out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
    out.extend_from_slice(piece);
    out.extend_from_slice(b"\r\n");
}

/// Serves `events` to every connection; sends the instant before each response's first body
/// byte is written.
fn serve(events: Vec<Vec<u8>>, first_byte: mpsc::Sender<Instant>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // The first event alone in one HTTP chunk; the rest in 64 KiB HTTP chunks.
    let mut first = Vec::new();
    http_chunk(&mut first, &events[0]);
    let rest_bytes: Vec<u8> = events[1..].concat();
    let mut rest = Vec::with_capacity(rest_bytes.len() + rest_bytes.len() / 1000 + 16);
    for piece in rest_bytes.chunks(64 << 10) {
        http_chunk(&mut rest, piece);
    }
    rest.extend_from_slice(b"0\r\n\r\n");
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            let Ok(mut socket) = socket else { return };
            socket.set_nodelay(true).unwrap();
            read_request(&mut socket);
            let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n");
            std::thread::sleep(TIME_TO_FIRST_TOKEN);
            let _ = first_byte.send(Instant::now());
            let _ = socket.write_all(&first);
            let _ = socket.write_all(&rest);
            // Let the client read to the end and close first.
            let mut sink = [0u8; 256];
            let _ = socket.read(&mut sink);
        }
    });
    port
}

fn read_request(socket: &mut std::net::TcpStream) {
    let mut buf = vec![0u8; 1 << 16];
    let mut got = Vec::new();
    loop {
        let n = socket.read(&mut buf).unwrap_or(0);
        if n == 0 {
            return;
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
                return;
            }
        }
    }
}

/// The `agentx` process this bench is the host of.
struct Agentx(AgentProcess);

/// One turn as the host saw it.
struct Turn {
    first_stream_event: Instant,
    last_delta: Instant,
    deltas: usize,
    result: Vec<u8>,
    cpu: Duration,
    wall: Duration,
}

impl Agentx {
    fn start(tag: &str, port: u16) -> Agentx {
        let home = fresh_home(&format!("provider-{tag}"));
        std::fs::create_dir_all(home.join("work")).unwrap();
        std::fs::write(
            home.join("auth.json"),
            format!(
                r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"gpt-bench","api_key":"{KEY}","base_url":"http://127.0.0.1:{port}/v1"}}]}}"#
            ),
        )
        .unwrap();
        let work = home.join("work");
        let args = [
            OsStr::new("--include-partial-messages"),
            OsStr::new("--cwd"),
            work.as_os_str(),
        ];
        Agentx(AgentProcess::spawn(home.clone(), &args, Stdio::inherit()))
    }

    fn turn(&mut self, prompt: &str) -> Turn {
        let pid = self.0.pid();
        let cpu0 = process_cpu(pid);
        let t0 = Instant::now();
        self.0.say(prompt);
        let mut first = None;
        let mut last = None;
        let mut deltas = 0;
        let mut result = Vec::new();
        loop {
            let line = self.0.next_line();
            let at = Instant::now();
            if line.starts_with(br#"{"type":"stream_event","#) {
                first.get_or_insert(at);
                if line.starts_with(
                    br#"{"type":"stream_event","event":{"type":"content_block_delta","#,
                ) {
                    deltas += 1;
                    last = Some(at);
                }
            } else if line.starts_with(br#"{"type":"result","#) {
                result = line.to_vec();
            } else if line.starts_with(
                br#"{"type":"system","subtype":"session_state_changed","state":"idle""#,
            ) {
                break;
            }
        }
        let wall = t0.elapsed();
        Turn {
            first_stream_event: first.expect("a stream_event record"),
            last_delta: last.expect("a content_block_delta record"),
            deltas,
            result,
            cpu: process_cpu(pid) - cpu0,
            wall,
        }
    }

    fn finish(self) {
        self.0.finish();
    }
}

fn check_result(turn: &Turn, tokens: usize) {
    let r: serde_json::Value = serde_json::from_slice(&turn.result).expect("a result record");
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(r["usage"]["output_tokens"], tokens as u64, "{r}");
    assert_eq!(turn.deltas, tokens);
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is ignored (one harness, two parts).
    let tokens = env_usize("AGENTX_BENCH_TOKENS", 200_000);
    let rounds = env_usize("AGENTX_BENCH_ROUNDS", 3);
    let runs = env_usize("AGENTX_BENCH_LATENCY_RUNS", 500).max(1);
    let warmup = 20;

    // Throughput.
    let (tx, first_bytes) = mpsc::channel();
    let port = serve(answer(tokens), tx);
    let mut agentx = Agentx::start("throughput", port);
    for round in 0..rounds {
        let turn = agentx.turn("write a long answer");
        let sent = first_bytes.recv().unwrap();
        check_result(&turn, tokens);
        let stream = turn.last_delta.saturating_duration_since(sent);
        println!(
            "throughput round {round}: {tokens} tokens; server first body byte -> host read last delta record {:.1} ms = {:.0} tokens/s; agentx process CPU {:.2} s over the turn = {:.0} tokens per agentx CPU-second; whole turn (user record written -> idle read) {:.1} ms",
            stream.as_secs_f64() * 1e3,
            tokens as f64 / stream.as_secs_f64(),
            turn.cpu.as_secs_f64(),
            tokens as f64 / turn.cpu.as_secs_f64().max(1e-9),
            turn.wall.as_secs_f64() * 1e3,
        );
    }
    agentx.finish();

    // Added latency.
    let (tx, first_bytes) = mpsc::channel();
    let port = serve(answer(1), tx);
    let mut agentx = Agentx::start("latency", port);
    let mut lat = Vec::with_capacity(runs);
    for i in 0..warmup + runs {
        let turn = agentx.turn("one token");
        let sent = first_bytes.recv().unwrap();
        check_result(&turn, 1);
        if i >= warmup {
            lat.push(turn.first_stream_event.saturating_duration_since(sent));
        }
    }
    agentx.finish();
    lat.sort();
    let pct = |p: usize| lat[(lat.len() * p / 100).min(lat.len() - 1)];
    println!(
        "added latency, server first body byte -> host read first stream_event record, {runs} turns: p50 {:.0} us, p90 {:.0} us, p99 {:.0} us, max {:.0} us",
        us(pct(50)),
        us(pct(90)),
        us(pct(99)),
        us(lat[lat.len() - 1]),
    );
}
