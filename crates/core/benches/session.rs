//! The cost of one echo turn through the session core: a user line in, the model
//! events of a one-block reply, every frame (system/init once per session, running,
//! assistant, result, idle) and action drained. No I/O: this is the core's own CPU cost per
//! turn.
//!
//! `cargo bench --bench session` prints turns per second and ns per turn, by wall clock and
//! by the thread's CPU time (Linux `/proc/thread-self/schedstat`), best of 5 rounds. A round
//! runs 20 turns in each of 1,000 sessions created before the clock starts: every model
//! request carries the whole conversation (the model interface's `ModelRequest::messages`),
//! so a turn's cost grows with the session's history, and one 20,000-turn session would
//! mostly measure that copy. The second figure shows it: turns 1..5,000 of one session.

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentx_core::model::{ModelEvent, StopReason, Usage};
use agentx_core::session::{Action, Session, SessionConfig};

const ROUNDS: usize = 5;

fn thread_cpu() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

fn echo_turns(s: &mut Session, now: Instant, n: u64, line: &[u8]) -> u64 {
    let mut bytes = 0u64;
    for i in 0..n {
        s.handle_line(line, i + 1, now);
        while let Some(a) = s.poll_action() {
            if let Action::StartModel(req) = a {
                for ev in [
                    ModelEvent::MessageStart {
                        message_id: "msg_1".into(),
                    },
                    ModelEvent::TextStart { index: 0 },
                    ModelEvent::TextDelta {
                        index: 0,
                        text: "echo: hello there".into(),
                    },
                    ModelEvent::BlockStop { index: 0 },
                    ModelEvent::MessageStop {
                        stop_reason: StopReason::EndTurn,
                        usage: Usage::default(),
                        cost: None,
                    },
                ] {
                    s.handle_model(req.turn, ev, now);
                }
            }
        }
        while let Some(f) = s.poll_transmit() {
            bytes += f.len() as u64;
        }
        while s.poll_action().is_some() {}
    }
    bytes
}

const SESSIONS: usize = 1_000;
const TURNS_PER_SESSION: u64 = 20;
const LONG_TURNS: u64 = 5_000;

fn new_session(now: Instant) -> Session {
    let config = SessionConfig::local("0b6f1c1e-6c59-4c1e-9a55-3f1e7948c27b", "/tmp");
    Session::new(config, now).expect("valid config")
}

fn report(what: &str, turns: u64, wall: Duration, cpu: Option<Duration>, bytes: u64) {
    let per = |d: Duration| d.as_nanos() as f64 / turns as f64;
    println!(
        "{what}: {:.0} ns/turn wall ({:.0} turns/s), {} bytes out per turn",
        per(wall),
        1e9 / per(wall),
        bytes / turns
    );
    if let Some(cpu) = cpu {
        println!(
            "{what}: {:.0} ns/turn thread CPU ({:.0} turns per CPU-second)",
            per(cpu),
            1e9 / per(cpu)
        );
    }
}

fn main() {
    let line = br#"{"type":"user","message":"hello there","parent_tool_use_id":null}"#;
    let now = Instant::now();
    let mut best_wall = Duration::MAX;
    let mut best_cpu: Option<Duration> = None;
    let mut bytes = 0;
    for _ in 0..ROUNDS {
        let mut sessions: Vec<Session> = (0..SESSIONS).map(|_| new_session(now)).collect();
        let cpu0 = thread_cpu();
        let t0 = Instant::now();
        let mut round_bytes = 0;
        for s in &mut sessions {
            round_bytes += echo_turns(s, now, TURNS_PER_SESSION, line);
        }
        let wall = t0.elapsed();
        bytes = black_box(round_bytes);
        if let (Some(a), Some(b)) = (cpu0, thread_cpu()) {
            let d = b.saturating_sub(a);
            best_cpu = Some(best_cpu.map_or(d, |c| c.min(d)));
        }
        best_wall = best_wall.min(wall);
        drop(sessions);
    }
    report(
        "session echo turn (20 turns x 1,000 sessions)",
        SESSIONS as u64 * TURNS_PER_SESSION,
        best_wall,
        best_cpu,
        bytes,
    );
    // One long session: the history copy per model request grows with every turn.
    let mut s = new_session(now);
    let cpu0 = thread_cpu();
    let t0 = Instant::now();
    let bytes = black_box(echo_turns(&mut s, now, LONG_TURNS, line));
    let wall = t0.elapsed();
    let cpu = match (cpu0, thread_cpu()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    report(
        "session echo turn (turns 1..5,000 of one session)",
        LONG_TURNS,
        wall,
        cpu,
        bytes,
    );
}
