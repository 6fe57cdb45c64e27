//! The loop's one wait: every event source's [`EventSender`], and the [`Inbox`] the loop takes
//! its next [`Event`] from.
//!
//! Owns: how input lines reach the loop, and how a sender wakes a loop that sleeps.
//! - **Polled stdin** (the process's stdin on Linux): the loop reads stdin itself while it
//!   waits, in one `poll` over stdin and an eventfd. A prompt wakes the loop directly, with no
//!   thread between the pipe and the session (one context switch fewer per turn than a stdin
//!   thread handing lines over a channel). A sender sends into the channel and then writes the
//!   eventfd, but only while the loop is parked in `poll` (a flag checked after the send, so a
//!   send never goes unseen and a busy loop costs its senders no system call). While the loop
//!   is blocked on a write to stdout, [`StdoutSink`](super::stdout::StdoutSink) reads stdin
//!   ahead into a [`ReadAhead`] (at most
//!   [`MAX_LINES_IN_FLIGHT`](super::event::MAX_LINES_IN_FLIGHT) bytes, as a stdin thread's
//!   budget), so a host that writes before it reads does not deadlock sooner than with a
//!   thread; those bytes are framed before stdin is read again. Memory is bounded by the two
//!   read buffers, the read-ahead and one line limit (backpressure, PROFILE §8).
//! - **A stdin thread** (any other reader: one-shot's prompt, other platforms, a stdin that
//!   cannot be read, or no eventfd): [`spawn_stdin`](super::event::spawn_stdin) with its
//!   [`Budget::lines`].
//!
//! Lines already read are handed out before channel events, and stdin is looked at (without
//! waiting) after every [`STDIN_EVERY`] channel events in a row, so neither side starves the
//! other. After the last line (the unterminated tail included, WIRE-EOF-001) comes one
//! [`Event::Eof`] (or [`Event::StdinFailed`]: the complete lines read before the failure, no
//! tail).
//! Must never: drop, reorder or duplicate a line; sleep while a sent event waits; block a
//! sender.

use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{fence, AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags};

use agentx_io::Pump;
use agentx_wire::frame::Reader;

use super::event::{spawn_stdin, Budget, Event, EventSender, Wake, STDIN_CHUNK};
use super::stdout::{lock, timespec, ReadAhead, SharedReadAhead};

/// A descriptor read with `read(2)`, no buffer of its own (the pump's buffers are the only ones).
struct FdReader(Box<dyn AsFd + Send>);

impl Read for FdReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Ok(rustix::io::read(self.0.as_fd(), buf)?)
    }
}

/// After this many channel events in a row, stdin is looked at without waiting (a provider
/// streaming faster than the loop writes must not keep a host's `interrupt` unread).
pub const STDIN_EVERY: u32 = 64;

/// Stdin read by the loop.
struct Polled {
    pump: Pump<FdReader>,
    wake: Arc<Wake>,
    /// What the stdout sink read while its write waited, framed before stdin is read again.
    ahead: SharedReadAhead,
    /// Channel events handed out since stdin was last looked at.
    channel_run: u32,
    /// The end of input was reached (or a read failed) and its event handed out.
    ended: bool,
    /// A read failed: the lines already read, then `StdinFailed`.
    failed: bool,
}

/// Where the loop's events come from. See the module docs.
pub struct Inbox {
    rx: Receiver<Event>,
    tx: EventSender,
    input: Source,
}

enum Source {
    Thread(Budget),
    Polled(Box<Polled>),
}

impl Inbox {
    /// The process's stdin: polled by the loop where it can be (Linux, a readable descriptor,
    /// an eventfd), else read by a stdin thread.
    pub fn stdin() -> Inbox {
        Inbox::polled(Box::new(io::stdin()))
            .unwrap_or_else(|_| Inbox::threaded(Box::new(io::stdin())))
    }

    /// Lines of `input` (any reader, e.g. one-shot's prompt) read on a thread of their own,
    /// held to [`Budget::lines`].
    pub fn threaded(input: Box<dyn Read + Send>) -> Inbox {
        let (tx, rx) = mpsc::channel();
        let tx = EventSender { tx, wake: None };
        let budget = Budget::lines();
        spawn_stdin(input, tx.clone(), budget.clone());
        Inbox {
            rx,
            tx,
            input: Source::Thread(budget),
        }
    }

    /// Lines of the descriptor `input` read by the loop while it waits. `Err` when `input`
    /// cannot be read (e.g. open for writing only: a read of 0 bytes fails) or no eventfd can
    /// be made.
    pub fn polled(input: Box<dyn AsFd + Send>) -> io::Result<Inbox> {
        rustix::io::read(input.as_fd(), &mut [0u8; 0][..])?;
        let fd = wake_fd()?;
        let wake = Arc::new(Wake {
            fd,
            parked: AtomicBool::new(false),
        });
        let (tx, rx) = mpsc::channel();
        let tx = EventSender {
            tx,
            wake: Some(wake.clone()),
        };
        let pump = Pump::with_reader(FdReader(input), Reader::new(), STDIN_CHUNK);
        Ok(Inbox {
            rx,
            tx,
            input: Source::Polled(Box::new(Polled {
                pump,
                wake,
                ahead: Arc::new(Mutex::new(ReadAhead::default())),
                channel_run: 0,
                ended: false,
                failed: false,
            })),
        })
    }

    /// Where the stdout sink reads stdin ahead while its write waits (polled stdin only).
    pub fn read_ahead(&self) -> Option<SharedReadAhead> {
        match &self.input {
            Source::Polled(p) => Some(p.ahead.clone()),
            Source::Thread(_) => None,
        }
    }

    /// A sender for the other event sources.
    pub fn sender(&self) -> EventSender {
        self.tx.clone()
    }

    /// The loop handled a line of `n` bytes (the stdin thread's budget regains room).
    pub fn release(&self, n: usize) {
        if let Source::Thread(budget) = &self.input {
            budget.release(n);
        }
    }

    /// An event that is already waiting: a line already read, else the channel's next.
    pub fn try_next(&mut self) -> Option<Event> {
        if let Some(e) = self.buffered() {
            return Some(e);
        }
        self.try_recv()
    }

    /// The channel's next event if one waits (a model burst is drained from it alone). After
    /// [`STDIN_EVERY`] of them in a row, stdin is read if it is readable, so the lines come
    /// first at the next [`Inbox::try_next`].
    pub fn try_recv(&mut self) -> Option<Event> {
        let e = self.rx.try_recv().ok()?;
        if let Source::Polled(p) = &mut self.input {
            p.channel_run += 1;
            if p.channel_run >= STDIN_EVERY && !p.ended {
                p.look();
            }
        }
        Some(e)
    }

    /// The next event, waiting for it until `deadline` (`None`: when it passed first).
    pub fn next(&mut self, deadline: Option<Instant>) -> Option<Event> {
        loop {
            if let Some(e) = self.try_next() {
                return Some(e);
            }
            let Source::Polled(p) = &mut self.input else {
                return self.recv(deadline);
            };
            if p.ended {
                return self.recv(deadline);
            }
            match p.wait(&self.rx, deadline) {
                Wait::Got(e) => return Some(e),
                Wait::Again => {}
                Wait::TimedOut => return None,
            }
        }
    }

    /// A line already read, or the end of input once they are all out.
    fn buffered(&mut self) -> Option<Event> {
        let Source::Polled(p) = &mut self.input else {
            return None;
        };
        if p.ended {
            return None;
        }
        loop {
            if let Some(item) = p.pump.next_buffered() {
                p.channel_run = 0;
                return Some(match item {
                    Ok(line) => Event::Line(line.bytes, line.number),
                    Err(e) => Event::FrameError(e),
                });
            }
            // Bytes the stdout sink read ahead, one chunk at a time, then its end of input.
            let mut ahead = lock(&p.ahead);
            if let Some(chunk) = ahead.pop() {
                drop(ahead);
                p.pump.push(chunk);
                continue;
            }
            match ahead.take_end() {
                Some(Ok(())) => {
                    drop(ahead);
                    // Then the buffered lines and the tail.
                    p.pump.end();
                    continue;
                }
                Some(Err(())) => p.failed = true,
                None => {}
            }
            break;
        }
        if p.failed || p.pump.is_finished() {
            p.ended = true;
            lock(&p.ahead).stop();
            return Some(if p.failed {
                Event::StdinFailed
            } else {
                Event::Eof
            });
        }
        None
    }

    /// Waits on the channel alone (input is a thread's, or over).
    fn recv(&mut self, deadline: Option<Instant>) -> Option<Event> {
        match deadline {
            None => Some(self.rx.recv().unwrap_or(Event::Eof)),
            Some(t) => match self
                .rx
                .recv_timeout(t.saturating_duration_since(Instant::now()))
            {
                Ok(e) => Some(e),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => Some(Event::Eof),
            },
        }
    }
}

/// The descriptor a sender writes to wake the loop: an eventfd (close-on-exec, so tool and hook
/// processes do not inherit it; non-blocking, so clearing a cleared counter does not block).
#[cfg(target_os = "linux")]
fn wake_fd() -> io::Result<OwnedFd> {
    use rustix::event::{eventfd, EventfdFlags};
    Ok(eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?)
}

/// Elsewhere stdin is read by a thread ([`Inbox::stdin`] falls back to it).
#[cfg(not(target_os = "linux"))]
fn wake_fd() -> io::Result<OwnedFd> {
    Err(io::ErrorKind::Unsupported.into())
}

/// What one wait of the polled loop gave.
enum Wait {
    /// An event sent just as the loop parked.
    Got(Event),
    /// Stdin was read (or failed), or a sender woke the loop: look again.
    Again,
    /// The deadline passed with nothing to read.
    TimedOut,
}

impl Polled {
    /// Sleeps until stdin is readable, a sender wakes the loop or `deadline` passes; reads one
    /// chunk when stdin is readable.
    fn wait(&mut self, rx: &Receiver<Event>, deadline: Option<Instant>) -> Wait {
        self.wake.parked.store(true, Ordering::Relaxed);
        // Pairs with the fence in `EventSender::send` (see there).
        fence(Ordering::SeqCst);
        if let Ok(e) = rx.try_recv() {
            self.wake.parked.store(false, Ordering::Relaxed);
            return Wait::Got(e);
        }
        let timeout = deadline.map(|t| timespec(t.saturating_duration_since(Instant::now())));
        let input = self.pump.input().0.as_fd();
        let mut fds = [
            PollFd::new(&input, PollFlags::IN),
            PollFd::new(&self.wake.fd, PollFlags::IN),
        ];
        let polled = poll(&mut fds, timeout.as_ref());
        self.wake.parked.store(false, Ordering::Relaxed);
        let (stdin, woken) = (fds[0].revents(), fds[1].revents());
        match polled {
            Ok(_) => {}
            // A signal handled on this thread: look again.
            Err(rustix::io::Errno::INTR) => return Wait::Again,
            // Anything else (no memory for the poll): as a failed read, never a busy loop.
            Err(_) => {
                self.failed = true;
                return Wait::Again;
            }
        }
        if !woken.is_empty() {
            // Clears the counter (non-blocking: a wake-up another call already read is 0).
            let _ = rustix::io::read(&self.wake.fd, &mut [0u8; 8]);
        }
        if stdin.is_empty() && woken.is_empty() {
            return Wait::TimedOut;
        }
        self.read_stdin(stdin);
        self.channel_run = 0;
        Wait::Again
    }

    /// Reads one chunk if stdin is readable now (a `poll` that does not wait).
    fn look(&mut self) {
        self.channel_run = 0;
        let input = self.pump.input().0.as_fd();
        let mut fds = [PollFd::new(&input, PollFlags::IN)];
        if poll(&mut fds, Some(&timespec(Duration::ZERO))).is_ok() {
            let revents = fds[0].revents();
            self.read_stdin(revents);
        }
    }

    /// Reads one chunk when `revents` (of a poll of stdin) says there is something to read.
    /// A read after readiness returns at once, except on a terminal another process reads
    /// too (it may take the line first): then the loop waits in the read.
    fn read_stdin(&mut self, revents: PollFlags) {
        if !lock(&self.ahead).is_idle() {
            // Bytes read ahead go first; they are framed at the next `buffered`.
            return;
        }
        if revents.contains(PollFlags::NVAL) {
            // Not an open descriptor: as a failed read (the lines read so far, then
            // `StdinFailed`; no tail is invented from a broken input).
            self.failed = true;
        } else if !revents.is_empty() {
            // Readable, hung up or failed: the read says which (data, 0 = EOF, an error). A
            // non-blocking stdin someone else drained first has nothing now: not an error.
            match self.pump.fill() {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => self.failed = true,
                Ok(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// One line of input and what it must come out as, one past the line limit included.
    fn edge_input() -> Vec<u8> {
        let mut input = b"{\"a\":1}\n\n".to_vec();
        input.resize(input.len() + agentx_wire::frame::DEFAULT_MAX_LINE + 1, b'x');
        input.extend_from_slice(b"\n{\"tail\":1}");
        input
    }

    fn show(e: &Event) -> String {
        match e {
            Event::Line(b, n) => format!("{n}:{}", String::from_utf8_lossy(b)),
            Event::FrameError(e) => format!("{}:{}", e.line(), e.kind().as_str()),
            other => format!("{other:?}"),
        }
    }

    /// Events until the end of input (inclusive), releasing every line as the loop does.
    fn until_end(inbox: &mut Inbox) -> Vec<String> {
        let mut got = Vec::new();
        loop {
            let e = inbox.next(None).expect("no deadline");
            if let Event::Line(b, _) = &e {
                inbox.release(b.len());
            }
            got.push(show(&e));
            if matches!(e, Event::Eof | Event::StdinFailed) {
                return got;
            }
        }
    }

    /// WIRE-EOF-001: the unterminated tail is line 4, then EOF; a blank line 2 is counted.
    const EDGE: [&str; 4] = ["1:{\"a\":1}", "3:line_too_long", "4:{\"tail\":1}", "Eof"];

    #[test]
    fn a_stdin_thread_hands_lines_frame_errors_and_the_eof_tail_in_order_then_eof() {
        let mut inbox = Inbox::threaded(Box::new(io::Cursor::new(edge_input())));
        assert_eq!(until_end(&mut inbox), EDGE);
        let Source::Thread(budget) = &inbox.input else {
            panic!("a reader is read on a thread");
        };
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn polled_stdin_hands_lines_frame_errors_and_the_eof_tail_in_order_then_eof() {
        let (rd, mut wr) = io::pipe().unwrap();
        let mut inbox = Inbox::polled(Box::new(rd)).unwrap();
        // More than a pipe holds: the loop must read while the writer still writes.
        let writer = std::thread::spawn(move || wr.write_all(&edge_input()).unwrap());
        assert_eq!(until_end(&mut inbox), EDGE);
        writer.join().unwrap();
        // After the end, only the channel is waited on.
        inbox.sender().send(Event::Interrupt).unwrap();
        assert!(matches!(inbox.next(None), Some(Event::Interrupt)));
    }

    #[test]
    fn a_sender_wakes_a_loop_that_sleeps_on_idle_stdin_every_time() {
        // Each send races the loop's parking: a lost wake-up would hang this test.
        let (rd, _wr) = io::pipe().unwrap();
        let mut inbox = Inbox::polled(Box::new(rd)).unwrap();
        let tx = inbox.sender();
        const N: usize = 5_000;
        let sender = std::thread::spawn(move || {
            for i in 0..N {
                tx.send(Event::Diagnostic(i.to_string())).unwrap();
                if i % 7 == 0 {
                    std::thread::yield_now();
                }
            }
        });
        for i in 0..N {
            match inbox.next(None) {
                Some(Event::Diagnostic(d)) => assert_eq!(d, i.to_string()),
                other => panic!("event {i}: {other:?}"),
            }
        }
        sender.join().unwrap();
    }

    #[test]
    fn lines_already_read_come_before_events_sent_after_the_read() {
        let (rd, mut wr) = io::pipe().unwrap();
        let mut inbox = Inbox::polled(Box::new(rd)).unwrap();
        wr.write_all(b"a\nb\n").unwrap();
        assert_eq!(show(&inbox.next(None).unwrap()), "1:a");
        inbox.sender().send(Event::Interrupt).unwrap();
        assert_eq!(show(&inbox.next(None).unwrap()), "2:b");
        assert!(matches!(inbox.next(None), Some(Event::Interrupt)));
    }

    #[test]
    fn a_passed_deadline_gives_none_on_idle_stdin_and_a_waiting_line_first() {
        let (rd, mut wr) = io::pipe().unwrap();
        let mut inbox = Inbox::polled(Box::new(rd)).unwrap();
        let past = Instant::now();
        assert!(inbox.next(Some(past)).is_none());
        wr.write_all(b"x\n").unwrap();
        assert_eq!(show(&inbox.next(Some(past)).unwrap()), "1:x");
        assert!(inbox.next(Some(past)).is_none());
        drop(wr);
        assert!(matches!(inbox.next(Some(past)), Some(Event::Eof)));
    }

    #[test]
    fn a_failed_read_ends_as_stdin_failed_after_the_complete_lines_without_a_tail() {
        use std::os::unix::net::UnixStream;
        // A socket whose peer closes with bytes it never read: our next read is ECONNRESET.
        let (ours, mut peer) = UnixStream::pair().unwrap();
        let mut to_peer = ours.try_clone().unwrap();
        peer.write_all(b"{\"a\":1}\npartial").unwrap();
        let mut inbox = Inbox::polled(Box::new(ours)).unwrap();
        assert_eq!(show(&inbox.next(None).unwrap()), "1:{\"a\":1}");
        to_peer.write_all(b"unread").unwrap();
        drop(peer);
        assert_eq!(until_end(&mut inbox), ["StdinFailed"]);
    }

    #[test]
    fn a_stdin_that_cannot_be_read_is_not_polled() {
        // A directory polls readable and fails every read (EISDIR).
        let dir = std::fs::File::open(env!("CARGO_MANIFEST_DIR")).unwrap();
        assert!(Inbox::polled(Box::new(dir)).is_err());
    }

    #[test]
    fn stdin_is_read_after_a_run_of_channel_events_however_many_wait() {
        let (rd, mut wr) = io::pipe().unwrap();
        let mut inbox = Inbox::polled(Box::new(rd)).unwrap();
        for i in 0..1000 {
            inbox
                .sender()
                .send(Event::Diagnostic(i.to_string()))
                .unwrap();
        }
        wr.write_all(b"interrupt\n").unwrap();
        let at = (0..1001)
            .position(|_| matches!(inbox.next(None), Some(Event::Line(..))))
            .unwrap();
        assert_eq!(at, STDIN_EVERY as usize);
    }

    #[test]
    fn bytes_read_ahead_are_framed_before_stdin_is_read_again() {
        let (rd, mut wr) = io::pipe().unwrap();
        let reader = rd.try_clone().unwrap();
        let mut inbox = Inbox::polled(Box::new(rd)).unwrap();
        let ahead = inbox.read_ahead().unwrap();
        // As the stdout sink does while its write waits: "a\nb" read ahead, then "c\n" arrives.
        wr.write_all(b"a\nb").unwrap();
        ahead.lock().unwrap().read_from(&reader);
        assert_eq!(ahead.lock().unwrap().len(), 3);
        wr.write_all(b"c\n").unwrap();
        // Model events drained alone reach the look at stdin: it must not read past them.
        for i in 0..STDIN_EVERY {
            inbox
                .sender()
                .send(Event::Diagnostic(i.to_string()))
                .unwrap();
        }
        for _ in 0..STDIN_EVERY {
            assert!(matches!(inbox.try_recv(), Some(Event::Diagnostic(_))));
        }
        assert_eq!(show(&inbox.next(None).unwrap()), "1:a");
        assert_eq!(show(&inbox.next(None).unwrap()), "2:bc");
        // The end of input read ahead comes after the tail.
        wr.write_all(b"tail").unwrap();
        drop(wr);
        ahead.lock().unwrap().read_from(&reader);
        ahead.lock().unwrap().read_from(&reader);
        assert!(
            ahead.lock().unwrap().take_end().is_none(),
            "a chunk waits first"
        );
        assert_eq!(until_end(&mut inbox), ["3:tail", "Eof"]);
    }

    #[test]
    fn a_stdin_open_only_for_writing_is_not_polled() {
        // poll(POLLIN) would never fire on it; the stdin thread's read ends it instead.
        let (_rd, wr) = io::pipe().unwrap();
        assert!(Inbox::polled(Box::new(wr)).is_err());
    }
}
