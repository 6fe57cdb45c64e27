//! What the driver's threads report to its loop, and the stdin and signal threads.
//!
//! Every source (stdin, signals, model calls, tools, hooks) sends [`Event`]s into one channel
//! that the loop drains in arrival order. Stdin lines in flight are bounded by bytes
//! ([`LineBudget`]): when the loop stops consuming (a host that stopped reading stdout blocks
//! the loop's writes), the stdin thread stops reading, so memory stays bounded.

use std::io::Read;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};

use bytes::Bytes;

use crate::frame::{FrameError, Reader};
use crate::model::{ModelEvent, TurnId};
use crate::session::{HookOutcome, ToolOutcome};

/// One thing that happened outside the loop.
#[derive(Debug)]
pub enum Event {
    /// A complete input line (LF excluded) and its physical line number.
    Line(Bytes, u64),
    /// A framing error (a line over the limit): fatal.
    FrameError(FrameError),
    /// Input EOF, after the final unterminated line was sent as a `Line`.
    Eof,
    /// stdin could not be read: treated as EOF.
    StdinFailed,
    /// SIGINT: an interrupt (PROFILE §8).
    Interrupt,
    /// SIGTERM or SIGHUP: input EOF (PROFILE §8).
    Terminate,
    /// One event of the model call of a turn.
    Model(TurnId, ModelEvent),
    /// A tool finished: its tool-use ID and outcome.
    ToolDone(String, ToolOutcome),
    /// A permission hook finished: its tool-use ID and outcome.
    HookDone(String, HookOutcome),
    /// One stderr line from a worker.
    Diagnostic(String),
}

/// At most this many bytes of input lines wait for the loop (one longer line may still pass
/// alone).
pub const MAX_LINES_IN_FLIGHT: usize = 16 * 1024 * 1024;

/// A byte budget for input lines between the stdin thread and the loop.
#[derive(Clone, Default)]
pub struct LineBudget(Arc<(Mutex<usize>, Condvar)>);

impl LineBudget {
    /// Waits until `n` more bytes fit (or nothing is in flight).
    pub fn acquire(&self, n: usize) {
        let (m, cv) = &*self.0;
        let mut used = m.lock().unwrap_or_else(|e| e.into_inner());
        while *used > 0 && *used + n > MAX_LINES_IN_FLIGHT {
            used = cv.wait(used).unwrap_or_else(|e| e.into_inner());
        }
        *used += n;
    }

    /// The loop handled a line of `n` bytes.
    pub fn release(&self, n: usize) {
        let (m, cv) = &*self.0;
        let mut used = m.lock().unwrap_or_else(|e| e.into_inner());
        *used = used.saturating_sub(n);
        cv.notify_all();
    }
}

/// Reads `input` to its end through `frame::Reader` (any chunking, the EOF tail, the line
/// limit), sending every line, framing error and finally [`Event::Eof`].
pub fn spawn_stdin<R: Read + Send + 'static>(mut input: R, tx: Sender<Event>, budget: LineBudget) {
    let _ = std::thread::Builder::new()
        .name("agentx-stdin".into())
        .spawn(move || {
            let mut reader = Reader::new();
            loop {
                let mut chunk = vec![0u8; 64 * 1024];
                match input.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => {
                        chunk.truncate(n);
                        reader.push(Bytes::from(chunk));
                        if !drain(&mut reader, &tx, &budget) {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => {
                        let _ = tx.send(Event::StdinFailed);
                        return;
                    }
                }
            }
            reader.finish();
            if drain(&mut reader, &tx, &budget) {
                let _ = tx.send(Event::Eof);
            }
        });
}

fn drain(reader: &mut Reader, tx: &Sender<Event>, budget: &LineBudget) -> bool {
    while let Some(next) = reader.next_line() {
        let event = match next {
            Ok(line) => {
                budget.acquire(line.as_bytes().len());
                Event::Line(line.to_bytes(), line.number())
            }
            Err(e) => Event::FrameError(e),
        };
        if tx.send(event).is_err() {
            return false;
        }
    }
    true
}

/// SIGINT → [`Event::Interrupt`]; SIGTERM and SIGHUP (a closed terminal, a dying parent) →
/// [`Event::Terminate`], handled as input EOF (PROFILE §8 Signals), for the process's life.
pub fn spawn_signals(tx: Sender<Event>) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("agentx-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                let ev = if sig == SIGINT {
                    Event::Interrupt
                } else {
                    Event::Terminate
                };
                if tx.send(ev).is_err() {
                    return;
                }
            }
        });
}
