//! The cost of one echo turn through the session core (issue 10): a user line in, the model
//! events of a one-block reply, every frame (system/init once, running, assistant, result,
//! idle) and action drained. No I/O: this is the core's own CPU cost per turn.
//!
//! `cargo bench --bench session` prints turns per second and ns per turn, by wall clock and
//! by the thread's CPU time (Linux `/proc/thread-self/schedstat`), over 5 rounds of 20,000
//! turns; the best round is reported (the machine is shared).

use std::hint::black_box;
use std::time::{Duration, Instant};

use agentx_wire::model::{ModelEvent, StopReason, Usage};
use agentx_wire::session::{Action, Session, SessionConfig};

const TURNS: u64 = 20_000;
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

fn main() {
    let line = br#"{"type":"user","message":"hello there","parent_tool_use_id":null}"#;
    let now = Instant::now();
    let mut best_wall = Duration::MAX;
    let mut best_cpu = Duration::MAX;
    let mut bytes = 0;
    for _ in 0..ROUNDS {
        let config = SessionConfig::local("0b6f1c1e-6c59-4c1e-9a55-3f1e7948c27b", "/tmp");
        let mut s = Session::new(config, now).expect("valid config");
        let cpu0 = thread_cpu();
        let t0 = Instant::now();
        bytes = black_box(echo_turns(&mut s, now, TURNS, line));
        let wall = t0.elapsed();
        if let (Some(a), Some(b)) = (cpu0, thread_cpu()) {
            best_cpu = best_cpu.min(b.saturating_sub(a));
        }
        best_wall = best_wall.min(wall);
    }
    let per = |d: Duration| d.as_nanos() as f64 / TURNS as f64;
    println!(
        "session echo turn: {:.0} ns/turn wall ({:.0} turns/s), {} bytes out per turn",
        per(best_wall),
        1e9 / per(best_wall),
        bytes / TURNS
    );
    if best_cpu != Duration::MAX {
        println!(
            "session echo turn: {:.0} ns/turn thread CPU ({:.0} turns per CPU-second)",
            per(best_cpu),
            1e9 / per(best_cpu)
        );
    }
}
