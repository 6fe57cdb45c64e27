//! What the driver's event sources report to its loop, and the stdin and signal threads.
//!
//! Every source (signals, model calls, tools, hooks, and stdin when a thread reads it) sends
//! [`Event`]s through an [`EventSender`] into one channel that the loop drains in arrival order
//! ([`super::inbox`], which also reads the process's stdin itself where it can). Lines a stdin
//! thread has in flight are bounded by bytes ([`Budget::lines`]), and so are a provider
//! thread's model events ([`Budget::model_events`]): when the loop stops consuming (a host that
//! stopped reading stdout blocks the loop's writes), those threads stop reading, so memory
//! stays bounded.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};

use bytes::Bytes;

use agentx_core::model::{ModelEvent, TurnId};
use agentx_core::session::{HookOutcome, McpReport, ToolOutcome};
use agentx_io::Pump;
use agentx_wire::frame::{FrameError, Reader};

/// Bytes asked of stdin per read (a pipe hands at most its capacity, 64 KiB by default).
pub const STDIN_CHUNK: usize = 64 * 1024;

/// How a loop that sleeps in `poll` is woken: the eventfd, and whether the loop is parked.
pub(super) struct Wake {
    pub(super) fd: OwnedFd,
    pub(super) parked: AtomicBool,
}

/// A sender of events to the loop (model calls, tools, hooks, signals, the stdin thread).
#[derive(Clone)]
pub struct EventSender {
    pub(super) tx: Sender<Event>,
    pub(super) wake: Option<Arc<Wake>>,
}

impl EventSender {
    /// Sends `event`; `Err` when the loop is gone.
    pub fn send(&self, event: Event) -> Result<(), Event> {
        self.tx.send(event).map_err(|e| e.0)?;
        if let Some(wake) = &self.wake {
            // Pairs with the fence in `Polled::wait`: either the loop's check of the
            // channel after parking sees this event, or this load sees the loop parked.
            fence(Ordering::SeqCst);
            if wake.parked.load(Ordering::Relaxed) {
                // A full counter (2^64 - 2 wake-ups unread) cannot happen: the loop reads it at
                // every wake-up. A failed write leaves the event in the channel for the loop's
                // next check.
                let _ = rustix::io::write(&wake.fd, &1u64.to_ne_bytes());
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for EventSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSender")
            .field("polled", &self.wake.is_some())
            .finish()
    }
}

/// One thing that happened outside the loop.
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
    /// One event of the model call of a turn, and the bytes it holds of the model budget
    /// (0 when sent from the loop's own thread).
    Model(TurnId, ModelEvent, usize),
    /// A tool finished: its tool-use ID and outcome.
    ToolDone(String, ToolOutcome),
    /// A permission hook finished: its tool-use ID and outcome.
    HookDone(String, HookOutcome),
    /// One stderr line from a worker.
    Diagnostic(String),
    /// A user's MCP server: its name, connection epoch and status (PROFILE §18).
    McpServer(String, u64, McpReport),
}

impl std::fmt::Debug for Event {
    /// The kind, and for a line its number and length: a line, a model event or a tool's output
    /// may carry user content or a credential.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Event::Line(b, n) => write!(f, "Line {{ number: {n}, len: {} }}", b.len()),
            Event::FrameError(e) => write!(f, "FrameError({e:?})"),
            Event::Eof => f.write_str("Eof"),
            Event::StdinFailed => f.write_str("StdinFailed"),
            Event::Interrupt => f.write_str("Interrupt"),
            Event::Terminate => f.write_str("Terminate"),
            Event::Model(turn, _, _) => write!(f, "Model({turn:?}, ..)"),
            Event::ToolDone(id, _) => write!(f, "ToolDone({id:?}, ..)"),
            Event::HookDone(id, _) => write!(f, "HookDone({id:?}, ..)"),
            Event::Diagnostic(d) => write!(f, "Diagnostic {{ len: {} }}", d.len()),
            Event::McpServer(name, epoch, _) => write!(f, "McpServer({name:?}, {epoch}, ..)"),
        }
    }
}

/// At most this many bytes of input lines wait for the loop (one longer line may still pass
/// alone).
pub const MAX_LINES_IN_FLIGHT: usize = 16 * 1024 * 1024;

/// At most this many bytes of model events (their text, by [`model_event_weight`]) wait for
/// the loop: while the loop is behind (a host that stopped reading stdout blocks its writes),
/// a provider's HTTP thread stops reading the response, and the server's stream waits in its
/// socket (issue 46). One larger event may still pass alone.
pub const MAX_MODEL_BYTES_IN_FLIGHT: usize = 16 * 1024 * 1024;

/// What a model event counts against [`MAX_MODEL_BYTES_IN_FLIGHT`]: its text, plus a fixed 64
/// for the event itself, so a flood of empty events is bounded too.
pub fn model_event_weight(event: &ModelEvent) -> usize {
    64 + match event {
        ModelEvent::TextDelta { text, .. } => text.len(),
        ModelEvent::InputJsonDelta { partial_json, .. } => partial_json.len(),
        ModelEvent::ToolUseStart { id, name, .. } => id.len() + name.len(),
        ModelEvent::Failed {
            message: Some(m), ..
        }
        | ModelEvent::ContextLengthExceeded { message: Some(m) } => m.len(),
        _ => 0,
    }
}

/// A byte budget between a producer thread and the loop: input lines from the stdin thread
/// ([`Budget::lines`]), model events from a provider's thread ([`Budget::model_events`]).
#[derive(Clone)]
pub struct Budget {
    shared: Arc<(Mutex<InFlight>, Condvar)>,
    max: usize,
}

/// Bytes in flight, and whether a producer waits for room.
#[derive(Default)]
struct InFlight {
    used: usize,
    /// Threads waiting in [`Budget::acquire`]: the loop wakes them only when there are
    /// any (a `notify` is a system call even with nobody waiting, one per line otherwise).
    waiting: usize,
}

impl Budget {
    /// The stdin thread's: [`MAX_LINES_IN_FLIGHT`].
    pub fn lines() -> Budget {
        Budget::new(MAX_LINES_IN_FLIGHT)
    }

    /// The model threads': [`MAX_MODEL_BYTES_IN_FLIGHT`].
    pub fn model_events() -> Budget {
        Budget::new(MAX_MODEL_BYTES_IN_FLIGHT)
    }

    fn new(max: usize) -> Budget {
        Budget {
            shared: Arc::default(),
            max,
        }
    }

    /// Waits until `n` more bytes fit (or nothing is in flight).
    pub fn acquire(&self, n: usize) {
        let (m, cv) = &*self.shared;
        let mut s = m.lock().unwrap_or_else(|e| e.into_inner());
        while s.used > 0 && s.used + n > self.max {
            s.waiting += 1;
            s = cv.wait(s).unwrap_or_else(|e| e.into_inner());
            s.waiting -= 1;
        }
        s.used += n;
    }

    /// The loop handled `n` bytes.
    pub fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        let (m, cv) = &*self.shared;
        let mut s = m.lock().unwrap_or_else(|e| e.into_inner());
        s.used = s.used.saturating_sub(n);
        let wake = s.waiting > 0;
        drop(s);
        if wake {
            cv.notify_all();
        }
    }

    /// Bytes in flight. For tests.
    #[cfg(test)]
    pub(super) fn used(&self) -> usize {
        self.shared.0.lock().unwrap_or_else(|e| e.into_inner()).used
    }
}

/// Why the stdin thread stopped before the end of its input.
enum Stop {
    /// A read failed.
    Read,
    /// The loop is gone.
    Closed,
}

impl From<std::io::Error> for Stop {
    fn from(_: std::io::Error) -> Stop {
        Stop::Read
    }
}

/// Reads `input` to its end through the crate's one read loop ([`Pump`]: any chunking, the
/// EOF tail, the line limit; a read buffer the loop let go of is filled again, not zeroed or
/// allocated per read), sending every line, framing error and finally [`Event::Eof`].
pub fn spawn_stdin<R: Read + Send + 'static>(input: R, tx: EventSender, budget: Budget) {
    let _ = std::thread::Builder::new()
        .name("agentx-stdin".into())
        .spawn(move || {
            let mut pump = Pump::with_reader(input, Reader::new(), STDIN_CHUNK);
            let sent = pump.each_line(|next| {
                let event = match next {
                    Ok(line) => {
                        budget.acquire(line.as_bytes().len());
                        Event::Line(line.to_bytes(), line.number())
                    }
                    Err(e) => Event::FrameError(e),
                };
                tx.send(event).map_err(|_| Stop::Closed)
            });
            let last = match sent {
                Ok(()) => Event::Eof,
                Err(Stop::Read) => Event::StdinFailed,
                Err(Stop::Closed) => return,
            };
            let _ = tx.send(last);
        });
}

/// SIGINT → [`Event::Interrupt`]; SIGTERM and SIGHUP (a closed terminal, a dying parent) →
/// [`Event::Terminate`], handled as input EOF (PROFILE §8 Signals), for the process's life.
pub fn spawn_signals(tx: EventSender) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn the_budget_holds_a_line_that_does_not_fit_until_the_loop_releases_room() {
        holds_what_does_not_fit(Budget::lines(), MAX_LINES_IN_FLIGHT);
        holds_what_does_not_fit(Budget::model_events(), MAX_MODEL_BYTES_IN_FLIGHT);
    }

    /// At `max - 1` bytes in flight, 2 more wait until the loop releases room.
    fn holds_what_does_not_fit(budget: Budget, max: usize) {
        budget.acquire(max - 1);
        // One line alone may exceed the budget when nothing is in flight; this one must wait.
        let (tx, rx) = mpsc::channel();
        let waiter = {
            let budget = budget.clone();
            std::thread::spawn(move || {
                budget.acquire(2);
                tx.send(()).unwrap();
            })
        };
        // The waiter registers before it sleeps; only then is a release bound to wake it.
        while budget.shared.0.lock().unwrap().waiting == 0 {
            std::thread::yield_now();
        }
        assert!(rx.try_recv().is_err());
        budget.release(max - 1);
        rx.recv().unwrap();
        waiter.join().unwrap();
        assert_eq!(budget.used(), 2);
    }

    #[test]
    fn an_event_s_debug_shows_no_content() {
        let line = Event::Line(Bytes::from_static(b"{\"key\":\"sk-secret\"}"), 3);
        assert_eq!(format!("{line:?}"), "Line { number: 3, len: 19 }");
        let d = format!("{:?}", Event::Diagnostic("sk-secret".into()));
        assert_eq!(d, "Diagnostic { len: 9 }");
    }
}
