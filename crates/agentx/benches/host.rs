//! The benchmark of the host client against the real `agentx` (built-in `agentx-echo`),
//! every contender in the same run:
//!
//! 1. **echo round trips**: `AGENTX_BENCH_TURNS` (default 1,000) turns in one session each,
//!    user record in → `result` out, through `host::Client` (blocking), `host::AsyncClient`
//!    (tokio, multi-thread runtime) and a hand-written host (`BufRead::lines` +
//!    `serde_json::from_str::<serde_json::Value>`). Round trips per wall second, and CPU time
//!    per turn of the host process and of agentx (their threads' `schedstat`), medians of
//!    `AGENTX_BENCH_ROUNDS` (default 5) alternating rounds, with each client's host CPU
//!    divided by the serde host's in the same round. The tokio client runs three times: its
//!    session in a task spawned on the runtime (as a server runs sessions), in `block_on`, and
//!    on a current-thread runtime. A hand-written tokio host (`tokio::process` pipes,
//!    `AsyncBufReadExt::lines` + `serde_json::Value`, in a spawned task) is the floor any host
//!    on tokio pays: a readiness wait (`epoll_wait`) before each read, and the runtime.
//! 2. **live stream session**: `--include-partial-messages`, `AGENTX_BENCH_STREAM_TURNS`
//!    (default 100) turns of `AGENTX_BENCH_WORDS` (default 4,000) words, one `stream_event` per
//!    word, read by a raw LF splitter (which also captures the transcript bytes), both
//!    clients, and the serde_json host. Wall records/s here are bounded by agentx producing
//!    them, so the host process's CPU time per record (its threads' `schedstat`, ns) is what
//!    tells the decoders apart.
//! 3. **captured transcript**: the bytes from 2, decoded in memory `AGENTX_BENCH_REPEAT`
//!    (default 4) times by each host: `Client::attach` and `AsyncClient::attach` over the bytes
//!    (read thread/task, channel, `recv`), the codec loop the clients run (`frame::Reader` +
//!    `OutputRecord::decode_line` + `into_owned`, no channel), the other users of the one read
//!    side (`driver::Pump`, `driver::LineCodec` under `FramedRead`) decoding the same way, and
//!    `BufRead::lines` + `serde_json::Value`. Records per CPU-second of this process (all
//!    threads).
//!
//! 4. **replayed transcript**: the bytes from 2 written into a pipe by `cat` (a producer
//!    nearly free per record, unlike agentx), read by both clients and the serde_json host:
//!    records per wall second when each host's own pace is the limit (best of
//!    `AGENTX_BENCH_ROUNDS`, default 3, alternating rounds).
//!
//! `cargo bench --bench host [echo|live|captured|replay]`; figures go to the README with the
//! load. `AGENTX_BENCH_AGENTX=PATH` runs another agentx binary under the same hosts.
//! `AGENTX_BENCH_TRANSCRIPT=FILE` keeps the live transcript in FILE, and a later `captured`
//! run decodes FILE without starting agentx (for `valgrind --tool=callgrind` or `perf`).

use agentx_test_support::proc_stat;

use std::io::{BufRead, BufReader, Cursor, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions, Client, ClientOptions};
use agentx_io::{LineCodec, Pump};
use agentx_wire::frame::Reader;
use agentx_wire::json::Parser;
use agentx_wire::wire::OutputRecord;
use futures_util::StreamExt;
use tokio_util::codec::FramedRead;

/// The agent binary: this build's `agentx`, or `AGENTX_BENCH_AGENTX` (to compare two builds
/// of agentx under the same hosts).
fn agentx() -> String {
    std::env::var("AGENTX_BENCH_AGENTX").unwrap_or_else(|_| env!("CARGO_BIN_EXE_agentx").into())
}
const IDLE: &[u8] =
    b"{\"type\":\"system\",\"subtype\":\"session_state_changed\",\"state\":\"idle\"";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Home(PathBuf);

impl Home {
    fn new(tag: &str) -> Home {
        let p =
            std::env::temp_dir().join(format!("agentx-host-bench-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Home(p)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn args(home: &Home, partial: bool) -> Vec<String> {
    let mut a: Vec<String> = [
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if partial {
        a.push("--include-partial-messages".into());
    }
    a.push("--cwd".into());
    a.push(home.0.to_string_lossy().into_owned());
    a
}

fn command(home: &Home, partial: bool) -> AgentCommand {
    let mut c = AgentCommand::new(agentx());
    for a in args(home, partial) {
        c = c.arg(a);
    }
    c.env("AGENTX_HOME", &home.0).env_remove("HOME")
}

fn user_line(text: &str) -> String {
    format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"parent_tool_use_id\":null}}\n"
    )
}

/// The prompts of the live stream session: `words` distinct words each.
fn stream_prompts() -> Vec<String> {
    let turns = env_usize("AGENTX_BENCH_STREAM_TURNS", 100);
    let words = env_usize("AGENTX_BENCH_WORDS", 4000);
    (0..turns)
        .map(|t| {
            (0..words)
                .map(|w| format!("w{t}x{w}"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// What one host did in one session.
struct Run {
    name: &'static str,
    units: u64,
    wall: Duration,
    host_cpu: Duration,
    agent_cpu: Duration,
    /// Times this process's threads were scheduled in (`proc_stat::task_slices`).
    host_slices: u64,
}

/// This process's CPU time in nanoseconds, summed over its live threads
/// (`/proc/self/task/*/schedstat`): `/proc/self/stat` counts 10 ms ticks, a ±5 % error on the
/// 0.2 s a client spends on the live session. Only for stretches in which no thread of this
/// process exits (a client's read thread lives as long as its session).
fn threads_cpu() -> Duration {
    proc_stat::task_cpu("self")
}

/// agentx's CPU time, the same way (its threads live as long as the session).
fn agent_cpu(pid: u32) -> Duration {
    proc_stat::task_cpu(&pid.to_string())
}

/// Measures `body` (given agentx's pid) between its first prompt and its last result.
struct Meter {
    pid: u32,
    t0: Instant,
    host0: Duration,
    agent0: Duration,
    slices0: u64,
}

impl Meter {
    fn start(pid: u32) -> Meter {
        Meter {
            pid,
            host0: threads_cpu(),
            agent0: agent_cpu(pid),
            slices0: proc_stat::task_slices("self"),
            t0: Instant::now(),
        }
    }
    fn stop(self, name: &'static str, units: u64) -> Run {
        Run {
            name,
            units,
            wall: self.t0.elapsed(),
            host_cpu: threads_cpu().saturating_sub(self.host0),
            agent_cpu: agent_cpu(self.pid).saturating_sub(self.agent0),
            host_slices: proc_stat::task_slices("self").saturating_sub(self.slices0),
        }
    }
}

// ---- 1. echo round trips ------------------------------------------------------------------

fn is_result(r: &OutputRecord<'_>) -> bool {
    matches!(r, OutputRecord::Result(_))
}

fn echo_blocking(turns: usize) -> Run {
    let home = Home::new("echo-blocking");
    let client = Client::spawn(&command(&home, false), ClientOptions::default()).unwrap();
    let pid = client.pid().unwrap();
    let turn = |i: usize| {
        client.send_text(&format!("hello {i}")).unwrap();
        while !is_result(&client.recv().expect("record").unwrap()) {}
    };
    (0..20).for_each(turn);
    let m = Meter::start(pid);
    (0..turns).for_each(turn);
    let run = m.stop("host::Client (blocking)", turns as u64);
    assert!(client.close(Duration::from_secs(30)).unwrap().success());
    run
}

/// The tokio client's echo session, either inside a task spawned on the runtime (as a server
/// runs its sessions: the worker that polls the pipe runs the session) or in `block_on` on
/// this thread (every read then wakes two threads: the worker that owns the I/O driver and
/// this one; on a current-thread runtime, the one thread does both). `name` is the row's.
fn echo_tokio(
    rt: &tokio::runtime::Runtime,
    turns: usize,
    in_task: bool,
    name: &'static str,
) -> Run {
    let home = Home::new(if in_task {
        "echo-tokio-task"
    } else {
        "echo-tokio"
    });
    let command = command(&home, false);
    let session = async move {
        let client = AsyncClient::spawn(&command, AsyncClientOptions::default())
            .await
            .unwrap();
        let pid = client.pid().unwrap();
        let turn = |i: usize| {
            let client = &client;
            async move {
                client.send_text(&format!("hello {i}")).unwrap();
                while !is_result(&client.recv().await.expect("record").unwrap()) {}
            }
        };
        for i in 0..20 {
            turn(i).await;
        }
        let m = Meter::start(pid);
        for i in 0..turns {
            turn(i).await;
        }
        let run = m.stop(name, turns as u64);
        assert!(client
            .close(Duration::from_secs(30))
            .await
            .unwrap()
            .success());
        run
    };
    let run = if in_task {
        rt.block_on(rt.spawn(session)).unwrap()
    } else {
        rt.block_on(session)
    };
    drop(home);
    run
}

/// The hand-written host: a child with pipes, `BufRead::lines`, `serde_json::Value`.
struct SerdeHost {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl SerdeHost {
    fn spawn(home: &Home, partial: bool) -> SerdeHost {
        let mut child = Command::new(agentx())
            .args(args(home, partial))
            .env("AGENTX_HOME", &home.0)
            .env_remove("HOME")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        SerdeHost {
            child,
            stdin,
            lines,
        }
    }
    fn say(&mut self, text: &str) {
        let s = self.stdin.as_mut().unwrap();
        s.write_all(user_line(text).as_bytes()).unwrap();
        s.flush().unwrap();
    }
    fn next(&mut self) -> Option<serde_json::Value> {
        let line = self.lines.next()?.unwrap();
        Some(serde_json::from_str(&line).unwrap())
    }
    fn until_result(&mut self) -> u64 {
        let mut n = 0;
        loop {
            let v = self.next().expect("record");
            n += 1;
            if v["type"] == "result" {
                return n;
            }
        }
    }
    /// EOF, the rest of the output, exit status 0: the records read.
    fn finish(mut self) -> u64 {
        self.stdin = None;
        let mut n = 0;
        while self.next().is_some() {
            n += 1;
        }
        assert!(self.child.wait().unwrap().success());
        n
    }
}

fn echo_serde(turns: usize) -> Run {
    let home = Home::new("echo-serde");
    let mut h = SerdeHost::spawn(&home, false);
    let pid = h.child.id();
    for i in 0..20 {
        h.say(&format!("hello {i}"));
        h.until_result();
    }
    let m = Meter::start(pid);
    for i in 0..turns {
        h.say(&format!("hello {i}"));
        h.until_result();
    }
    let run = m.stop("BufRead::lines + serde_json::Value", turns as u64);
    h.finish();
    run
}

/// The hand-written tokio host: the same child and pipes through `tokio::process`,
/// `AsyncBufReadExt::lines` + `serde_json::Value`, its session in a spawned task: what any
/// host on tokio pays (a readiness wait, `epoll_wait`, before each read) without a client.
fn echo_serde_tokio(rt: &tokio::runtime::Runtime, turns: usize) -> Run {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let home = Home::new("echo-serde-tokio");
    let mut child = tokio::process::Command::new(agentx());
    child
        .args(args(&home, false))
        .env("AGENTX_HOME", &home.0)
        .env_remove("HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let session = async move {
        let mut child = child.spawn().unwrap();
        let pid = child.id().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut turn = async |i: usize| {
            stdin
                .write_all(user_line(&format!("hello {i}")).as_bytes())
                .await
                .unwrap();
            loop {
                let line = lines.next_line().await.unwrap().expect("record");
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                if v["type"] == "result" {
                    break;
                }
            }
        };
        for i in 0..20 {
            turn(i).await;
        }
        let m = Meter::start(pid);
        for i in 0..turns {
            turn(i).await;
        }
        let run = m.stop(
            "tokio lines + serde_json::Value (spawned task)",
            turns as u64,
        );
        drop(stdin);
        while lines.next_line().await.unwrap().is_some() {}
        assert!(child.wait().await.unwrap().success());
        run
    };
    let run = rt.block_on(rt.spawn(session)).unwrap();
    drop(home);
    run
}

/// Medians over the rounds of each host's figures, and of its host CPU per turn divided by
/// the serde host's and by the hand-written tokio host's in the same round.
fn print_echo(rounds: &[Vec<Run>]) {
    let median = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let per = |r: &Run, d: Duration| d.as_secs_f64() * 1e6 / r.units as f64;
    // Host CPU per turn of `r` over that of the round's host named `peer…` (NaN without one).
    let ratio = |round: &[Run], r: &Run, peer: &str| {
        round
            .iter()
            .find(|p| p.name.starts_with(peer))
            .map_or(f64::NAN, |p| per(r, r.host_cpu) / per(p, p.host_cpu))
    };
    println!(
        "| host | round trips/s (wall) | host CPU per turn | ÷ serde host (same round) \
         | ÷ tokio serde host (same round) | host wakes per turn | agentx CPU per turn |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    let Some(first) = rounds.first() else { return };
    for (i, r) in first.iter().enumerate() {
        let of = |f: &dyn Fn(&[Run]) -> f64| median(rounds.iter().map(|round| f(round)).collect());
        println!(
            "| {} | {:.0} | {:.1} µs | {:.2} | {:.2} | {:.2} | {:.1} µs |",
            r.name,
            of(&|round| round[i].units as f64 / round[i].wall.as_secs_f64()),
            of(&|round| per(&round[i], round[i].host_cpu)),
            of(&|round| ratio(round, &round[i], "BufRead")),
            of(&|round| ratio(round, &round[i], "tokio lines")),
            of(&|round| round[i].host_slices as f64 / round[i].units as f64),
            of(&|round| per(&round[i], round[i].agent_cpu)),
        );
    }
}

// ---- 2. the live stream session -----------------------------------------------------------

/// A host that only splits lines; returns the run and the transcript bytes.
fn live_raw(prompts: &[String]) -> (Run, Vec<u8>) {
    let home = Home::new("live-raw");
    let mut child = Command::new(agentx())
        .args(args(&home, true))
        .env("AGENTX_HOME", &home.0)
        .env_remove("HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take();
    let mut out = BufReader::with_capacity(1 << 20, child.stdout.take().unwrap());
    let pid = child.id();
    let mut transcript = Vec::new();
    let mut line = Vec::new();
    let mut records = 0u64;
    let say = |w: &mut Option<std::process::ChildStdin>, text: &str| {
        let w = w.as_mut().unwrap();
        w.write_all(user_line(text).as_bytes()).unwrap();
        w.flush().unwrap();
    };
    say(&mut stdin, "warm up");
    loop {
        line.clear();
        out.read_until(b'\n', &mut line).unwrap();
        if line.starts_with(IDLE) {
            break;
        }
    }
    let m = Meter::start(pid);
    for p in prompts {
        say(&mut stdin, p);
        loop {
            line.clear();
            assert!(out.read_until(b'\n', &mut line).unwrap() > 0);
            transcript.extend_from_slice(&line);
            records += 1;
            if line.starts_with(IDLE) {
                break;
            }
        }
    }
    let run = m.stop("LF splitter only (agentx's pace)", records);
    drop(stdin);
    out.read_to_end(&mut Vec::new()).unwrap();
    assert!(child.wait().unwrap().success());
    (run, transcript)
}

fn live_blocking(prompts: &[String]) -> Run {
    let home = Home::new("live-blocking");
    let client = Client::spawn(&command(&home, true), ClientOptions::default()).unwrap();
    client.send_text("warm up").unwrap();
    while !is_result(&client.recv().unwrap().unwrap()) {}
    let m = Meter::start(client.pid().unwrap());
    let mut records = 0u64;
    for p in prompts {
        client.send_text(p).unwrap();
        loop {
            records += 1;
            if is_result(&client.recv().unwrap().unwrap()) {
                break;
            }
        }
    }
    let run = m.stop("host::Client (blocking)", records);
    client.end_input();
    while client.recv().is_some() {}
    assert!(client.close(Duration::from_secs(30)).unwrap().success());
    run
}

fn live_tokio(rt: &tokio::runtime::Runtime, prompts: &[String]) -> Run {
    let home = Home::new("live-tokio");
    rt.block_on(async {
        let client = AsyncClient::spawn(&command(&home, true), AsyncClientOptions::default())
            .await
            .unwrap();
        client.send_text("warm up").unwrap();
        while !is_result(&client.recv().await.unwrap().unwrap()) {}
        let m = Meter::start(client.pid().unwrap());
        let mut records = 0u64;
        for p in prompts {
            client.send_text(p).unwrap();
            loop {
                records += 1;
                if is_result(&client.recv().await.unwrap().unwrap()) {
                    break;
                }
            }
        }
        let run = m.stop("host::AsyncClient (tokio)", records);
        client.end_input();
        while client.recv().await.is_some() {}
        assert!(client
            .close(Duration::from_secs(30))
            .await
            .unwrap()
            .success());
        run
    })
}

fn live_serde(prompts: &[String]) -> Run {
    let home = Home::new("live-serde");
    let mut h = SerdeHost::spawn(&home, true);
    h.say("warm up");
    h.until_result();
    let m = Meter::start(h.child.id());
    let mut records = 0u64;
    for p in prompts {
        h.say(p);
        records += h.until_result();
    }
    let run = m.stop("BufRead::lines + serde_json::Value", records);
    h.finish();
    run
}

fn print_live(runs: &[Run]) {
    let serde = runs.iter().find(|r| r.name.starts_with("BufRead"));
    let rate = |r: &Run| r.units as f64 / r.wall.as_secs_f64();
    let per = |r: &Run| r.host_cpu.as_secs_f64() / r.units as f64;
    let (serde_rate, serde_per) = serde.map_or((f64::NAN, f64::NAN), |s| (rate(s), per(s)));
    println!("| host | records | records/s (wall) | vs serde host | host CPU µs/record | serde host CPU / this host CPU | agentx CPU µs/record |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for r in runs {
        println!(
            "| {} | {} | {:.0} | {:.2}× | {:.2} | {:.2}× | {:.2} |",
            r.name,
            r.units,
            rate(r),
            rate(r) / serde_rate,
            per(r) * 1e6,
            serde_per / per(r).max(1e-12),
            r.agent_cpu.as_secs_f64() * 1e6 / r.units as f64,
        );
    }
}

/// `AGENTX_BENCH_HOSTS=raw,blocking,tokio,codec,pump,linecodec,handoff,serde` picks the contenders of the live and
/// captured runs (for profiling one), and `blocking,tokio,block_on,serde` those of the echo
/// runs; unset, all of them.
fn pick_host(name: &str) -> bool {
    let hosts = std::env::var("AGENTX_BENCH_HOSTS").unwrap_or_default();
    hosts.is_empty() || hosts.split(',').any(|x| x == name)
}

// ---- 3. the captured transcript -----------------------------------------------------------

fn cpu_of(repeat: usize, mut body: impl FnMut() -> u64) -> (u64, Duration) {
    if repeat == 0 {
        return (0, Duration::ZERO);
    }
    body(); // warm-up
    let c0 = proc_stat::self_cpu();
    let n: u64 = (0..repeat).map(|_| body()).sum();
    (n, proc_stat::self_cpu() - c0)
}

fn captured(rt: &tokio::runtime::Runtime, bytes: &[u8]) {
    let repeat = env_usize("AGENTX_BENCH_REPEAT", 4);
    let records = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    let shared: std::sync::Arc<[u8]> = bytes.into();
    let mut rows: Vec<(&str, u64, Duration)> = Vec::new();
    let pick = pick_host;

    let (n, cpu) = cpu_of(if pick("blocking") { repeat } else { 0 }, || {
        let c = Client::attach(
            Cursor::new(shared.clone()),
            std::io::sink(),
            ClientOptions::default(),
        );
        let mut n = 0;
        while let Some(r) = c.recv() {
            std::hint::black_box(r.unwrap());
            n += 1;
        }
        n
    });
    rows.push((
        "host::Client (blocking): read thread + channel + recv",
        n,
        cpu,
    ));

    let (n, cpu) = cpu_of(if pick("tokio") { repeat } else { 0 }, || {
        rt.block_on(async {
            let c = AsyncClient::attach(
                Cursor::new(shared.clone()),
                tokio::io::sink(),
                AsyncClientOptions::default(),
            );
            let mut n = 0;
            while let Some(r) = c.recv().await {
                std::hint::black_box(r.unwrap());
                n += 1;
            }
            n
        })
    });
    rows.push((
        "host::AsyncClient (tokio): read task + channel + recv",
        n,
        cpu,
    ));

    let (n, cpu) = cpu_of(if pick("codec") { repeat } else { 0 }, || {
        let mut reader = Reader::new();
        let mut parser = Parser::new();
        let mut n = 0;
        for chunk in shared.chunks(256 << 10) {
            reader.push_slice(chunk);
            while let Some(line) = reader.next_line() {
                let line = line.unwrap();
                let r = OutputRecord::decode_line(line.as_bytes(), &mut parser).unwrap();
                std::hint::black_box(r.into_owned());
                n += 1;
            }
        }
        n
    });
    rows.push((
        "codec loop alone: frame::Reader + decode_line + into_owned",
        n,
        cpu,
    ));

    // The other users of the one read side (`driver::Deframer`) on the same bytes:
    // `driver::Pump` (the loop of `check`, `canon` and agentx's stdin) and `driver::LineCodec`
    // under `FramedRead`, each decoding as the clients do.
    let (n, cpu) = cpu_of(if pick("pump") { repeat } else { 0 }, || {
        let mut parser = Parser::new();
        let mut n = 0;
        let read: Result<(), std::io::Error> =
            Pump::new(Cursor::new(shared.clone())).each_line(|line| {
                let r = OutputRecord::decode_line(line.unwrap().as_bytes(), &mut parser).unwrap();
                std::hint::black_box(r.into_owned());
                n += 1;
                Ok(())
            });
        read.unwrap();
        n
    });
    rows.push(("driver::Pump + decode_line + into_owned", n, cpu));

    let (n, cpu) = cpu_of(if pick("linecodec") { repeat } else { 0 }, || {
        rt.block_on(async {
            let mut lines = FramedRead::new(&shared[..], LineCodec::new());
            let mut parser = Parser::new();
            let mut n = 0;
            while let Some(line) = lines.next().await {
                let line = line.unwrap().unwrap();
                let r = OutputRecord::decode_line(&line.bytes, &mut parser).unwrap();
                std::hint::black_box(r.into_owned());
                n += 1;
            }
            n
        })
    });
    rows.push((
        "driver::LineCodec (FramedRead) + decode_line + into_owned",
        n,
        cpu,
    ));

    // What the threads cost: the codec loop's records handed to another thread in per-read
    // batches and dropped there (the clients' shape without routing or the client API).
    let (n, cpu) = cpu_of(if pick("handoff") { repeat } else { 0 }, || {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<OutputRecord<'static>>>();
        let sink = std::thread::spawn(move || rx.iter().map(|b| b.len() as u64).sum::<u64>());
        let mut reader = Reader::new();
        let mut parser = Parser::new();
        for chunk in shared.chunks(256 << 10) {
            reader.push_slice(chunk);
            let mut batch = Vec::with_capacity(1024);
            while let Some(line) = reader.next_line() {
                let line = line.unwrap();
                let r = OutputRecord::decode_line(line.as_bytes(), &mut parser).unwrap();
                batch.push(r.into_owned());
            }
            tx.send(batch).unwrap();
        }
        drop(tx);
        sink.join().unwrap()
    });
    rows.push(("codec loop, records dropped on another thread", n, cpu));

    let (n, cpu) = cpu_of(if pick("serde") { repeat } else { 0 }, || {
        let mut n = 0;
        for line in BufReader::new(Cursor::new(shared.clone())).lines() {
            let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
            std::hint::black_box(v);
            n += 1;
        }
        n
    });
    rows.push(("BufRead::lines + serde_json::Value", n, cpu));

    let serde_rate = n as f64 / cpu.as_secs_f64().max(1e-9);
    println!(
        "captured transcript: {records} records, {:.1} MiB, decoded {repeat} times by each host \
         (a record item is {} bytes):",
        bytes.len() as f64 / 1048576.0,
        std::mem::size_of::<Result<OutputRecord<'static>, agentx_io::host::HostError>>()
    );
    println!("| host | records per CPU-second | MiB per CPU-second | vs serde host |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, n, cpu) in rows.into_iter().filter(|r| r.1 > 0) {
        assert_eq!(n, records * repeat as u64, "{name} lost records");
        let rate = n as f64 / cpu.as_secs_f64();
        println!(
            "| {name} | {:.0} | {:.0} | {:.2}× |",
            rate,
            (bytes.len() * repeat) as f64 / 1048576.0 / cpu.as_secs_f64(),
            rate / serde_rate
        );
    }
}

// ---- 4. the transcript replayed through a pipe ---------------------------------------------

/// The live session's bytes written into a pipe by `cat` (nearly free per record, unlike
/// agentx at ~1 µs), so each host's own pace sets the wall rate: records per wall second from
/// `cat`'s start to the last record, and this process's CPU time (ticks) per record.
fn replay(rt: &tokio::runtime::Runtime, bytes: &[u8]) {
    let home = Home::new("replay");
    let file = home.0.join("transcript.ndjson");
    std::fs::write(&file, bytes).unwrap();
    let records = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    let cat = || {
        let mut c = Command::new("cat");
        c.arg(&file).stdout(Stdio::piped()).stdin(Stdio::null());
        c
    };
    let timed = |name: &'static str, body: &dyn Fn() -> u64| {
        let (t0, c0) = (Instant::now(), proc_stat::self_cpu());
        let n = body();
        let (wall, cpu) = (t0.elapsed(), proc_stat::self_cpu() - c0);
        assert_eq!(n, records, "{name} lost records");
        (
            name,
            n as f64 / wall.as_secs_f64(),
            cpu.as_secs_f64() * 1e6 / n as f64,
        )
    };
    let mut rows = Vec::new();
    for _ in 0..env_usize("AGENTX_BENCH_ROUNDS", 3).max(1) {
        if pick_host("blocking") {
            rows.push(timed("host::Client (blocking)", &|| {
                let mut child = cat().spawn().unwrap();
                let out = child.stdout.take().unwrap();
                let c = Client::attach(out, std::io::sink(), ClientOptions::default());
                let mut n = 0;
                while let Some(r) = c.recv() {
                    std::hint::black_box(r.unwrap());
                    n += 1;
                }
                assert!(child.wait().unwrap().success());
                n
            }));
        }
        if pick_host("tokio") {
            rows.push(timed("host::AsyncClient (tokio)", &|| {
                rt.block_on(async {
                    let mut child = tokio::process::Command::from(cat()).spawn().unwrap();
                    let out = child.stdout.take().unwrap();
                    let c =
                        AsyncClient::attach(out, tokio::io::sink(), AsyncClientOptions::default());
                    let mut n = 0;
                    while let Some(r) = c.recv().await {
                        std::hint::black_box(r.unwrap());
                        n += 1;
                    }
                    assert!(child.wait().await.unwrap().success());
                    n
                })
            }));
        }
        if pick_host("serde") {
            rows.push(timed("BufRead::lines + serde_json::Value", &|| {
                let mut child = cat().spawn().unwrap();
                let out = child.stdout.take().unwrap();
                let mut n = 0;
                for line in BufReader::new(out).lines() {
                    let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
                    std::hint::black_box(v);
                    n += 1;
                }
                assert!(child.wait().unwrap().success());
                n
            }));
        }
    }
    // Best wall rate of each host over the alternating rounds.
    let mut best: Vec<(&str, f64, f64)> = Vec::new();
    for r in rows {
        match best.iter_mut().find(|b| b.0 == r.0) {
            Some(b) if b.1 >= r.1 => {}
            Some(b) => *b = r,
            None => best.push(r),
        }
    }
    let serde_rate = best
        .iter()
        .find(|b| b.0.starts_with("BufRead"))
        .map_or(f64::NAN, |b| b.1);
    println!(
        "the transcript ({records} records) replayed through a pipe by `cat`, best of {} alternating rounds:",
        env_usize("AGENTX_BENCH_ROUNDS", 3).max(1)
    );
    println!("| host | records/s (wall) | vs serde host | host CPU µs/record |");
    println!("| --- | ---: | ---: | ---: |");
    for (name, rate, cpu) in best {
        println!(
            "| {name} | {rate:.0} | {:.2}× | {cpu:.2} |",
            rate / serde_rate
        );
    }
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let want = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("load average at start: {}", proc_stat::load());
    if want("echo") {
        let turns = env_usize("AGENTX_BENCH_TURNS", 1000);
        let rounds = env_usize("AGENTX_BENCH_ROUNDS", 5).max(1);
        println!(
            "echo round trips, {turns} turns per host and session (after 20 warm-up turns), \
             medians of {rounds} alternating rounds (CPU: threads' schedstat, ns):"
        );
        // `AGENTX_BENCH_HOSTS=blocking,tokio,block_on,serde` picks the contenders (for
        // `strace -c` or `perf` of one); unset, all of them, the serde host last.
        let all: Vec<Vec<Run>> = (0..rounds)
            .map(|_| {
                let mut round = Vec::new();
                if pick_host("blocking") {
                    round.push(echo_blocking(turns));
                }
                if pick_host("tokio") {
                    round.push(echo_tokio(
                        &rt,
                        turns,
                        true,
                        "host::AsyncClient (tokio, session in a spawned task)",
                    ));
                }
                if pick_host("block_on") {
                    round.push(echo_tokio(
                        &rt,
                        turns,
                        false,
                        "host::AsyncClient (tokio, session in block_on)",
                    ));
                }
                if pick_host("current") {
                    let ct = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    round.push(echo_tokio(
                        &ct,
                        turns,
                        false,
                        "host::AsyncClient (tokio, current-thread runtime)",
                    ));
                }
                if pick_host("serde_tokio") {
                    round.push(echo_serde_tokio(&rt, turns));
                }
                if pick_host("serde") {
                    round.push(echo_serde(turns));
                }
                round
            })
            .collect();
        print_echo(&all);
        println!("load average: {}", proc_stat::load());
    }
    if want("live") || want("captured") || want("replay") {
        let prompts = stream_prompts();
        // AGENTX_BENCH_TRANSCRIPT=FILE: `captured` alone decodes FILE if it exists (for
        // profilers: no agentx run); otherwise the live raw run writes its transcript there.
        let saved = std::env::var_os("AGENTX_BENCH_TRANSCRIPT").map(PathBuf::from);
        if !want("live") {
            if let Some(bytes) = saved.as_ref().and_then(|p| std::fs::read(p).ok()) {
                if want("captured") {
                    captured(&rt, &bytes);
                }
                if want("replay") {
                    replay(&rt, &bytes);
                }
                println!("load average at end: {}", proc_stat::load());
                return;
            }
        }
        let mut runs = Vec::new();
        let mut transcript = Vec::new();
        if want("captured") || want("replay") || pick_host("raw") {
            let (raw, bytes) = live_raw(&prompts);
            runs.push(raw);
            transcript = bytes;
        }
        if let Some(p) = &saved {
            std::fs::write(p, &transcript).unwrap();
        }
        if want("live") {
            println!(
                "live stream session (--include-partial-messages), {} turns x {} words:",
                prompts.len(),
                env_usize("AGENTX_BENCH_WORDS", 4000)
            );
            if pick_host("blocking") {
                runs.push(live_blocking(&prompts));
            }
            if pick_host("tokio") {
                runs.push(live_tokio(&rt, &prompts));
            }
            if pick_host("serde") {
                runs.push(live_serde(&prompts));
            }
            print_live(&runs);
            println!("load average: {}", proc_stat::load());
        }
        if want("captured") {
            captured(&rt, &transcript);
        }
        if want("replay") {
            replay(&rt, &transcript);
            println!("load average: {}", proc_stat::load());
        }
    }
    println!("load average at end: {}", proc_stat::load());
}
