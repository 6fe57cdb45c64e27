//! Black-box: a host that stops reading agentx's stdout (PROFILE
//! §8). agentx's loop waits on its write and reads stdin ahead meanwhile
//! (`run::stdout` in the binary) until its read-ahead holds `MAX_LINES_IN_FLIGHT` bytes (as a stdin
//! thread's budget would), the pipe fills and the host's writer blocks: agentx takes no more
//! input and its memory stays bounded however much the host still has to send. When the host
//! reads again, every record arrives, in order, and the session ends normally.
//!
//! Determinism: the input is mostly "pad" control requests (16 KiB each, an unknown member, so
//! each is answered by one ~120-byte error `control_response`, WIRE-021). Each consumed pad
//! writes output, so at most ~64 KiB / 120 B pads can be consumed before the unread stdout
//! pipe is full, whatever the scheduling; the rest must wait in the read-ahead and the stdin pipe.
//! The stall is detected by the host's writer making no progress (generous deadline), and the
//! assertions hold at whatever moment they are read.

use crate::harness;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// agentx's input read-ahead limit (README "Limits"; `run::event::MAX_LINES_IN_FLIGHT` in the
/// binary): a black-box test states the documented figure.
const MAX_LINES_IN_FLIGHT: usize = 16 * 1024 * 1024;
use harness::*;
use serde_json::Value;

const PADS: usize = 6144;
const PAD_BYTES: usize = 16 * 1024;
const MID_EVERY: usize = 768;
const FIRST_WORDS: usize = 2000;
const MIB: u64 = 1 << 20;

fn status_kib(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

fn user_line(text: &str) -> Vec<u8> {
    let mut l = serde_json::to_vec(&user(text)).unwrap();
    l.push(b'\n');
    l
}

#[test]
fn stalled_host_blocks_agentx_with_bounded_memory_and_loses_no_record() {
    let home = TempDir::new("stall");
    let mut child = session_command(home.path(), &["--include-partial-messages"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut err = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });

    // The input: a streamed turn, pads with a user turn every MID_EVERY pads, a last turn.
    let first: Vec<String> = (0..FIRST_WORDS).map(|i| format!("w{i}")).collect();
    let first = first.join(" ");
    let mut prompts = vec![first.clone()];
    let mut lines = vec![user_line(&first)];
    let pad = "x".repeat(PAD_BYTES);
    for i in 0..PADS {
        let mut l = format!("{{\"type\":\"control_request\",\"request_id\":\"pad-{i}\",\"request\":{{\"subtype\":\"get_context_usage\"}},\"pad\":\"{pad}\"}}").into_bytes();
        l.push(b'\n');
        lines.push(l);
        if (i + 1) % MID_EVERY == 0 {
            let p = format!("mid {i}");
            lines.push(user_line(&p));
            prompts.push(p);
        }
    }
    lines.push(user_line("last"));
    prompts.push("last".into());
    let total: u64 = lines.iter().map(|l| l.len() as u64).sum();
    assert!(total > 5 * MAX_LINES_IN_FLIGHT as u64);

    let written = Arc::new(AtomicU64::new(0));
    let mut stdin = child.stdin.take().unwrap();
    let progress = Arc::clone(&written);
    let writer = std::thread::spawn(move || {
        for l in &lines {
            stdin.write_all(l).unwrap();
            progress.fetch_add(l.len() as u64, Ordering::SeqCst);
        }
        stdin // kept open: EOF only after the checks below
    });

    // The host does not read stdout. Wait until the writer is stuck: at least the in-flight
    // budget taken and no progress for a while (generous overall deadline).
    let deadline = Instant::now() + TIMEOUT;
    let (mut last, mut since) = (u64::MAX, Instant::now());
    let stalled_at = loop {
        let w = written.load(Ordering::SeqCst);
        assert!(
            w < total,
            "agentx took all {total} input bytes while nobody read its stdout: no backpressure"
        );
        if w != last {
            (last, since) = (w, Instant::now());
        } else if w >= MAX_LINES_IN_FLIGHT as u64 && since.elapsed() >= Duration::from_millis(300) {
            break w;
        }
        assert!(
            Instant::now() < deadline,
            "the writer never stalled (at {w} bytes)"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    let hwm_stalled = status_kib(pid, "VmHWM");
    eprintln!("stalled after {stalled_at} of {total} input bytes; agentx VmHWM {hwm_stalled} KiB");
    // Taken: what was consumed before stdout filled (< 1 MiB of turns, at most ~550 pads ≈
    // 9 MiB), the read-ahead (at most one read past its bound), the pipe. Everything else still waits in the host.
    assert!(
        stalled_at <= MAX_LINES_IN_FLIGHT as u64 + 14 * MIB,
        "agentx took {stalled_at} bytes while stalled"
    );
    // Bounded memory: the read-ahead plus the process itself, far below the input.
    let limit_kib = (MAX_LINES_IN_FLIGHT as u64 + 48 * MIB) / 1024;
    assert!(
        hwm_stalled < limit_kib,
        "VmHWM {hwm_stalled} KiB while stalled (limit {limit_kib} KiB)"
    );

    // The host reads again: every record, in order.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut l = Vec::new();
            if r.read_until(b'\n', &mut l).unwrap_or(0) == 0 || tx.send(l).is_err() {
                return;
            }
        }
    });
    let mut raw = Vec::new();
    let mut records: Vec<Value> = Vec::new();
    let mut last_result_seen = false;
    loop {
        let l = rx
            .recv_timeout(TIMEOUT)
            .expect("a record after the host resumed reading");
        raw.extend_from_slice(&l);
        let v: Value = serde_json::from_slice(&l).unwrap();
        let idle = is_state(&v, "idle");
        last_result_seen |= is_result(&v) && v["result"] == "echo: last";
        records.push(v);
        if last_result_seen && idle {
            break;
        }
    }
    let hwm_end = status_kib(pid, "VmHWM");
    eprintln!("agentx VmHWM {hwm_end} KiB after {} records", records.len());
    assert!(
        hwm_end < limit_kib,
        "VmHWM {hwm_end} KiB at the end (limit {limit_kib} KiB)"
    );
    drop(writer.join().unwrap()); // EOF
    let rest: Vec<Vec<u8>> = rx.iter().collect();
    assert!(
        rest.is_empty(),
        "records after the last idle: {}",
        rest.len()
    );
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let stderr = stderr.join().unwrap();

    // Every pad answered once, in input order, with the WIRE-021 error.
    let pads: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "control_response")
        .collect();
    assert_eq!(pads.len(), PADS, "{stderr}");
    for (i, r) in pads.iter().enumerate() {
        assert_eq!(r["response"]["request_id"], format!("pad-{i}").as_str());
        assert_eq!(r["response"]["subtype"], "error");
        assert_eq!(
            r["response"]["error"],
            "record: unknown member \"pad\" (WIRE-021)"
        );
    }
    // Every turn, in order, each result exactly its echo.
    let results: Vec<&str> = records
        .iter()
        .filter(|r| is_result(r))
        .map(|r| {
            assert_eq!(r["subtype"], "success");
            r["result"].as_str().unwrap()
        })
        .collect();
    let expected: Vec<String> = prompts.iter().map(|p| format!("echo: {p}")).collect();
    assert_eq!(results, expected);
    // Every streamed delta, in order: together exactly the turns' texts.
    let streamed: String = records
        .iter()
        .filter(|r| r["type"] == "stream_event" && r["event"]["delta"]["type"] == "text_delta")
        .map(|r| r["event"]["delta"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, expected.concat());
    assert_eq!(
        records
            .iter()
            .filter(|r| r["type"] == "stream_event" && r["event"]["delta"]["type"] == "text_delta")
            .count(),
        FIRST_WORDS + 1 + 3 * (PADS / MID_EVERY) + 2
    );
    // The last prompt was written after every pad: its reply streams after every answer.
    let last_pad = records
        .iter()
        .rposition(|r| r["type"] == "control_response")
        .unwrap();
    let last_reply = records
        .iter()
        .position(|r| r["event"]["delta"]["text"] == "last")
        .unwrap();
    assert!(last_pad < last_reply);
    check_output(&raw);
}

/// A host that writes all its input before it reads any output (`stdin.write(all)`, then
/// `stdout.read()`): agentx's first writes wait, it reads the rest of the input ahead
/// meanwhile, the host's write completes, and every turn is answered. 2.4 MiB of prompts, far
/// past the pipes (64 KiB each) and under the read-ahead bound; each echo's output is as long
/// as its prompt, so agentx's stdout fills after the first few turns. With `shared_stderr`
/// stderr is the same pipe (`stderr=STDOUT`, `2>&1`). Throughout, stdout's flags stay as the
/// host made them (blocking): only each write is non-blocking (`RWF_NOWAIT`).
fn writes_all_then_reads(shared_stderr: bool) {
    const TURNS: usize = 100;
    let home = TempDir::new("halfduplex");
    let (reader, writer) = std::io::pipe().unwrap();
    let stderr: Stdio = if shared_stderr {
        writer.try_clone().unwrap().into()
    } else {
        Stdio::null()
    };
    let mut cmd = session_command(home.path(), &[]);
    cmd.stdin(Stdio::piped()).stdout(writer).stderr(stderr);
    let mut child = cmd.spawn().unwrap();
    drop(cmd); // our copies of the write end: else the read below never ends
    let prompts: Vec<String> = (0..TURNS)
        .map(|i| format!("{i} {}", "y".repeat(24 * 1024)))
        .collect();
    let input: Vec<u8> = prompts.iter().flat_map(|p| user_line(p)).collect();
    assert!(input.len() > 2 * MIB as usize);
    let mut stdin = child.stdin.take().unwrap();
    let (done_tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let wrote = stdin.write_all(&input).is_ok();
        drop(stdin); // EOF
        let _ = done_tx.send(wrote);
    });
    // The host reads only once its write is complete.
    match done.recv_timeout(TIMEOUT) {
        Ok(wrote) => assert!(wrote, "the host's write failed"),
        Err(_) => {
            let _ = child.kill();
            panic!("deadlock: the host's write of all its input never completed");
        }
    }
    assert!(!non_blocking(child.id(), 1), "stdout's flags were changed");
    let mut out = String::new();
    BufReader::new(reader).read_to_string(&mut out).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let results: Vec<String> = out
        .lines()
        // With a shared stderr, its lines (the startup notice) are not records.
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(is_result)
        .map(|r| {
            assert_eq!(r["subtype"], "success");
            r["result"].as_str().unwrap().to_owned()
        })
        .collect();
    let expected: Vec<String> = prompts.iter().map(|p| format!("echo: {p}")).collect();
    assert_eq!(results, expected);
}

#[test]
fn a_host_that_writes_all_its_input_before_reading_gets_every_turn() {
    writes_all_then_reads(false);
}

#[test]
fn a_host_that_writes_first_with_stderr_on_stdout_gets_every_turn() {
    writes_all_then_reads(true);
}

/// Whether agentx's descriptor `fd` is non-blocking, from `/proc/<pid>/fdinfo` (octal flags).
fn non_blocking(pid: u32, fd: u32) -> bool {
    let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap();
    let flags = info
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .map(|f| u32::from_str_radix(f.trim(), 8).unwrap())
        .unwrap();
    flags & 0o4000 != 0 // O_NONBLOCK
}

/// stdout on a regular file (`agentx … > out.jsonl`): every turn is written and agentx exits.
/// A file has no reader to wait for, so its writes block (on XFS and btrfs a non-blocking
/// `RWF_NOWAIT` write to a file answered `EAGAIN` while the file polled writable, and agentx
/// retried forever at 100 % CPU, writing nothing).
#[test]
fn stdout_on_a_regular_file_gets_every_turn() {
    const TURNS: usize = 20;
    let home = TempDir::new("stdoutfile");
    let path = home.path().join("out.jsonl");
    let mut cmd = session_command(home.path(), &[]);
    cmd.stdin(Stdio::piped())
        .stdout(std::fs::File::create(&path).unwrap())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let prompts: Vec<String> = (0..TURNS).map(|i| format!("to a file {i}")).collect();
    for p in &prompts {
        stdin.write_all(&user_line(p)).unwrap();
    }
    drop(stdin); // EOF: agentx answers every turn, then exits
    let (exited_tx, exited) = mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = exited_tx.send(child.wait());
    });
    let Ok(status) = exited.recv_timeout(TIMEOUT) else {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
        panic!("agentx did not exit with its stdout on a regular file");
    };
    let status = status.unwrap();
    assert_eq!(status.code(), Some(0));
    let out = std::fs::read_to_string(&path).unwrap();
    let results: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(is_result)
        .map(|r| r["result"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = prompts.iter().map(|p| format!("echo: {p}")).collect();
    assert_eq!(results, expected);
}
