//! The bytes copied per output record between the session producing it and
//! `write(2)`. One sans-IO [`Session`] (as `agentx` runs it) gets model events; after each,
//! its frames are drained into agentx's own [`StdoutSink`] and written, as the driver loop
//! does (`driver::agentx::run`). Run under the LD_PRELOAD shim `benches/memcpy/count.c`
//! (`benches/memcpy_per_record.sh` builds it and runs this), which counts the bytes the
//! process copies with memcpy/memmove (run-time-length copies; constant-size copies the
//! compiler inlines are not seen), read here before and after each record through `dlsym`.
//!
//! Two records: a `stream_event` text delta (`--include-partial-messages`, one word per
//! delta as `agentx-echo` streams) and an `assistant` record of one text block. The window of
//! one record is the model event in (the session's own bookkeeping of the block's text
//! included) to the `write` out; building the event is outside it.
//!
//! Usage: `LD_PRELOAD=target/memcount.so cargo bench --bench output_copies > /dev/null`
//! (the figures go to stderr). Env: `OUTPUT_COPIES_N` records (default 2,000).

use std::ffi::{c_char, c_void};
use std::time::Instant;

use agentx::run::stdout::StdoutSink;
use agentx_core::model::{ModelEvent, StopReason, TurnId, Usage};
use agentx_core::session::{Action, Session, SessionConfig};
use agentx_io::RecordWriter;

const SID: &str = "0b6f1c1e-6c59-4c1e-9a55-3f1e7948c27b";

extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// The shim's running total, when the shim is loaded.
fn counter() -> Option<extern "C" fn() -> u64> {
    // SAFETY: `dlsym` with RTLD_DEFAULT (null on glibc) and a NUL-terminated name only looks
    // the symbol up.
    let p = unsafe { dlsym(std::ptr::null_mut(), c"memcount_total".as_ptr()) };
    // SAFETY: the shim defines `unsigned long long memcount_total(void)`.
    (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> u64>(p) })
}

fn drain(s: &mut Session, sink: &mut StdoutSink) -> u64 {
    let mut bytes = 0;
    while let Some(f) = s.poll_transmit() {
        bytes += f.len() as u64;
        sink.write_record(&f).expect("stdout");
    }
    sink.flush().expect("stdout");
    bytes
}

/// A session with one turn started on `prompt`; its model call's turn.
fn started(partial: bool, sink: &mut StdoutSink) -> (Session, TurnId) {
    let mut config = SessionConfig::local(SID, "/tmp");
    config.include_partial_messages = partial;
    let now = Instant::now();
    let mut s = Session::new(config, now).expect("config");
    s.handle_line(
        br#"{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}"#,
        1,
        now,
    );
    let turn = loop {
        match s.poll_action().expect("a model call") {
            Action::StartModel(r) => break r.turn,
            _ => continue,
        }
    };
    let start = ModelEvent::MessageStart {
        message_id: "msg_1".into(),
    };
    s.handle_model(turn, start, now);
    drain(&mut s, sink);
    (s, turn)
}

/// Feeds `records` groups of events, each producing the one record measured.
fn measure(
    what: &str,
    s: &mut Session,
    turn: TurnId,
    sink: &mut StdoutSink,
    records: Vec<Vec<ModelEvent>>,
    count: extern "C" fn() -> u64,
) {
    let now = Instant::now();
    let (mut copied, mut written) = (0u64, 0u64);
    let n = records.len() as u64;
    for events in records {
        let before = count();
        for e in events {
            s.handle_model(turn, e, now);
        }
        written += drain(s, sink);
        copied += count() - before;
    }
    eprintln!(
        "{what}: {:.0} bytes copied per record of {:.0} bytes (frame incl. LF), over {n} records",
        copied as f64 / n as f64,
        written as f64 / n as f64
    );
}

fn main() {
    let Some(count) = counter() else {
        eprintln!("output_copies: skipped: run under LD_PRELOAD=target/memcount.so (benches/memcpy_per_record.sh)");
        return;
    };
    let n = std::env::var("OUTPUT_COPIES_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000usize);
    let mut sink = StdoutSink::new(None);

    // `stream_event` deltas of one text block, one word each.
    let (mut s, turn) = started(true, &mut sink);
    s.handle_model(turn, ModelEvent::TextStart { index: 0 }, Instant::now());
    drain(&mut s, &mut sink);
    let deltas = (0..n)
        .map(|i| {
            vec![ModelEvent::TextDelta {
                index: 0,
                text: format!("w{i:05} "),
            }]
        })
        .collect();
    measure(
        "stream_event text delta",
        &mut s,
        turn,
        &mut sink,
        deltas,
        count,
    );

    // One `assistant` record per text block of 200 bytes (partial messages off).
    let (mut s, turn) = started(false, &mut sink);
    let blocks = (0..n as u32)
        .map(|i| {
            vec![
                ModelEvent::TextStart { index: i },
                ModelEvent::TextDelta {
                    index: i,
                    text: format!("{i:05} {}", "lorem ipsum ".repeat(16))
                        .chars()
                        .take(200)
                        .collect(),
                },
                ModelEvent::BlockStop { index: i },
            ]
        })
        .collect();
    measure(
        "assistant record (one 200-byte text block)",
        &mut s,
        turn,
        &mut sink,
        blocks,
        count,
    );
    let stop = ModelEvent::MessageStop {
        stop_reason: StopReason::EndTurn,
        usage: Usage::default(),
        cost: Some(0.0),
    };
    s.handle_model(turn, stop, Instant::now());
    drain(&mut s, &mut sink);
}
