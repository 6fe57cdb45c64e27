//! The async client's input side: validated frames (WIRE-013) written in order to the agent's
//! stdin, straight from `send` when the pipe takes them, else queued in one reused buffer for
//! the writer task.
//!
//! Owns: the client's one `FrameEncoder`, the agent's input (the caller's `AsyncWrite`), the
//! queue of bytes not yet written (push order is write order, WIRE-003 from the host's end),
//! end of input, the latched input failure, and backpressure for a caller that can wait (an
//! upload awaits [`Outgoing::until_below`] before each chunk instead of queueing a whole file's
//! base64). `send` stays synchronous so callbacks and `send_text` never await.
//!
//! **Write-through.** When nothing is queued and no write is in progress, `send` offers the
//! frame to the pipe itself: one non-blocking `poll_write` (a no-op waker), outside the lock.
//! A pipe with room takes it whole and no task is woken; whatever it does not take is queued
//! first and the writer task writes it when the pipe has room. On an echo turn this saves the
//! hop to the writer task (a wake-up, often of another thread) per record sent.
//!
//! **WIRE-015.** The writer is a foreign callback: it is never polled under the lock that owns
//! the encoder, a panic in it is contained, and an error is classified by `io::ErrorKind` and
//! dropped unformatted; either latches one fixed [`EncoderFailure`] that every later `send`
//! returns ([`HostError::InputFailed`]), and the writer is not polled again except for one
//! contained `poll_shutdown`.
//!
//! Must never: allocate per frame in steady state (the writer swaps two buffers, write-through
//! reuses a spare), reorder or drop a frame that was accepted, or keep accepting frames after
//! the writer failed or input was closed.

use std::collections::VecDeque;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use ::tokio::io::AsyncWrite;
use ::tokio::sync::Notify;

use super::error::HostError;
use agentx_wire::encode::{
    classify_io, contained, discard_foreign, EncoderFailure, FrameEncoder, OutputFault, Panicked,
};
use agentx_wire::wire::InputRecord;

/// At most this many answers to the agent's own requests (permission decisions, the
/// unsupported-control error) wait for the agent to read them; while they do, the read task
/// stops reading the agent's stdout, so an agent that asks without reading its input stalls
/// instead of growing the queue (issue 46).
pub const MAX_QUEUED_ANSWERS: usize = 1024;

/// A buffer bigger than this is not kept for reuse once written (one large upload or record
/// must not pin its memory for the session's life).
const KEEP_CAPACITY: usize = 4 << 20;

type Input = Pin<Box<dyn AsyncWrite + Send>>;

struct State {
    encoder: FrameEncoder,
    /// Frames accepted and not yet taken by a writer, in order.
    queued: Vec<u8>,
    /// The agent's input; `None` while a write (the task's or a write-through) has it.
    input: Option<Input>,
    /// Written but not yet flushed by a write-through whose flush did not complete.
    unflushed: bool,
    /// False once input was closed or a write failed.
    open: bool,
    /// The latched writer failure (WIRE-015).
    failure: Option<EncoderFailure>,
    /// The write-through's reused copy of the frame (the lock is released while it writes).
    spare: Vec<u8>,
    /// Bytes accepted since the start (queued or written through).
    accepted: u64,
    /// Bytes handed to the agent's input since the start.
    written: u64,
    /// The end offsets (in `accepted`) of answers not yet written, oldest first.
    answers: VecDeque<u64>,
}

impl State {
    /// Latches `fault` (the first one stays): nothing more is accepted, the queue is dropped.
    fn fail(&mut self, fault: OutputFault) -> EncoderFailure {
        let f = *self.failure.get_or_insert(EncoderFailure::output(fault));
        self.open = false;
        self.queued = Vec::new();
        self.answers.clear();
        f
    }

    /// `n` more bytes reached the agent's input: the answers among them are no longer queued.
    fn wrote(&mut self, n: usize) {
        self.written += n as u64;
        while self.answers.front().is_some_and(|&end| end <= self.written) {
            self.answers.pop_front();
        }
    }

    /// Work for the writer task is waiting (or it must shut the input down).
    fn task_has_work(&self) -> bool {
        !self.queued.is_empty() || self.unflushed || !self.open
    }
}

/// The queue between `AsyncClient::send*` and its writer task.
pub(crate) struct Outgoing {
    state: Mutex<State>,
    /// Wakes the writer: bytes were queued, the input came home, or input was closed.
    ready: Notify,
    /// Wakes [`Outgoing::until_below`] waiters: a writer took and wrote a batch.
    drained: Notify,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What one contained poll of the writer gave.
enum Polled<T> {
    Ready(T),
    Pending,
    Failed(OutputFault),
}

/// Polls `f` once inside `catch_unwind`; an error is classified by kind and dropped unread.
fn poll_contained<T>(f: impl FnOnce() -> Poll<io::Result<T>>) -> Polled<T> {
    match contained(f) {
        Ok(Poll::Ready(Ok(v))) => Polled::Ready(v),
        Ok(Poll::Pending) => Polled::Pending,
        Ok(Poll::Ready(Err(e))) => {
            let fault = classify_io(e.kind());
            discard_foreign(e);
            Polled::Failed(fault)
        }
        Err(Panicked) => Polled::Failed(OutputFault::Panicked),
    }
}

impl Outgoing {
    pub(crate) fn new(input: impl AsyncWrite + Unpin + Send + 'static) -> Arc<Outgoing> {
        Arc::new(Outgoing {
            state: Mutex::new(State {
                encoder: FrameEncoder::new(),
                queued: Vec::new(),
                input: Some(Box::pin(input)),
                unflushed: false,
                open: true,
                failure: None,
                spare: Vec::new(),
                accepted: 0,
                written: 0,
                answers: VecDeque::new(),
            }),
            ready: Notify::new(),
            drained: Notify::new(),
        })
    }

    /// Encodes `record` as one validated frame and writes it now, or queues it behind every
    /// earlier one (see the module docs).
    pub(crate) fn send(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        self.send_frame(record, false)
    }

    /// [`Outgoing::send`] for an answer to an agent request: counted until it is written
    /// ([`Outgoing::until_answers_below`]).
    pub(crate) fn send_answer(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        self.send_frame(record, true)
    }

    fn send_frame(&self, record: &InputRecord<'_>, answer: bool) -> Result<(), HostError> {
        let mut s = lock(&self.state);
        if let Some(f) = s.failure {
            return Err(HostError::InputFailed(f));
        }
        if !s.open {
            return Err(HostError::InputClosed);
        }
        let State {
            encoder,
            queued,
            input,
            spare,
            accepted,
            answers,
            ..
        } = &mut *s;
        // One oversized record is this call's error, not the end of input.
        let frame = encoder.encode_bounded(record).map_err(HostError::refused)?;
        *accepted += frame.len() as u64;
        if answer {
            answers.push_back(*accepted);
        }
        let through = queued.is_empty() && input.is_some();
        if !through {
            queued.extend_from_slice(frame);
            encoder.shrink();
            drop(s);
            self.ready.notify_one();
            return Ok(());
        }
        let mut frame_copy = std::mem::take(spare);
        frame_copy.extend_from_slice(frame);
        encoder.shrink();
        let Some(mut w) = input.take() else {
            return Err(HostError::InputClosed); // unreachable: checked above
        };
        drop(s);

        // Outside the lock (WIRE-015): one non-blocking attempt.
        let mut cx = Context::from_waker(Waker::noop());
        let mut written = 0;
        let mut fault = None;
        while written < frame_copy.len() {
            match poll_contained(|| w.as_mut().poll_write(&mut cx, &frame_copy[written..])) {
                Polled::Ready(0) => {
                    fault = Some(OutputFault::ShortWrite);
                    break;
                }
                Polled::Ready(n) => written += n,
                Polled::Pending => break,
                Polled::Failed(f) => {
                    fault = Some(f);
                    break;
                }
            }
        }
        let mut flushed = false;
        if fault.is_none() && written == frame_copy.len() {
            match poll_contained(|| w.as_mut().poll_flush(&mut cx)) {
                Polled::Ready(()) => flushed = true,
                Polled::Pending => {}
                Polled::Failed(f) => fault = Some(f),
            }
        }

        let mut s = lock(&self.state);
        s.input = Some(w);
        s.wrote(written);
        let result = match fault {
            Some(f) => Err(HostError::InputFailed(s.fail(f))),
            None => {
                if written < frame_copy.len() {
                    // Before anything queued meanwhile: this frame was first.
                    let rest = frame_copy.get(written..).unwrap_or(&[]);
                    s.queued.splice(0..0, rest.iter().copied());
                } else if !flushed {
                    s.unflushed = true;
                }
                Ok(())
            }
        };
        frame_copy.clear();
        if frame_copy.capacity() <= KEEP_CAPACITY {
            s.spare = frame_copy;
        }
        let wake = s.task_has_work();
        drop(s);
        if wake {
            self.ready.notify_one();
        }
        result
    }

    /// Ends input: frames already queued are still written, then the writer shuts the pipe.
    pub(crate) fn close(&self) {
        lock(&self.state).open = false;
        self.ready.notify_one();
        self.drained.notify_waiters();
    }

    /// Bytes accepted and not yet handed to a writer.
    #[cfg(test)]
    fn queued(&self) -> usize {
        lock(&self.state).queued.len()
    }

    /// Waits until fewer than `limit` bytes are queued (or input is closed, when the next
    /// `send` reports it).
    pub(crate) async fn until_below(&self, limit: usize) {
        self.until(|s| s.queued.len() < limit).await
    }

    /// Waits until fewer than `limit` answers to agent requests are unwritten (or input is
    /// closed or failed: nothing more will be written, and the read side must go on to EOF).
    pub(crate) async fn until_answers_below(&self, limit: usize) {
        self.until(|s| s.answers.len() < limit).await
    }

    /// Waits until `ready` holds or input is closed, checking again after every write.
    async fn until(&self, ready: impl Fn(&State) -> bool) {
        loop {
            let drained = self.drained.notified();
            ::tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let s = lock(&self.state);
                if ready(&s) || !s.open {
                    return;
                }
            }
            drained.await;
        }
    }

    /// The writer task: takes everything queued in one swap, writes and flushes it, repeats;
    /// after input is closed and the queue is empty (or a write fails) it shuts the input
    /// down.
    pub(crate) async fn run(self: Arc<Self>) {
        let mut batch = Vec::new();
        let mut w = loop {
            let ready = self.ready.notified();
            ::tokio::pin!(ready);
            ready.as_mut().enable();
            let taken = {
                let mut s = lock(&self.state);
                match s.input.take() {
                    // A write-through has it; it wakes this task when it is done.
                    None => None,
                    Some(w) if s.failure.is_some() => Some(Err(w)),
                    Some(w) if s.queued.is_empty() && !s.unflushed => {
                        if s.open {
                            s.input = Some(w);
                            None
                        } else {
                            Some(Err(w))
                        }
                    }
                    Some(w) => {
                        std::mem::swap(&mut s.queued, &mut batch);
                        s.unflushed = false;
                        Some(Ok(w))
                    }
                }
            };
            let mut w = match taken {
                None => {
                    ready.await;
                    continue;
                }
                // Failed, or closed with nothing left: shut the pipe.
                Some(Err(w)) => break w,
                Some(Ok(w)) => w,
            };
            let mut pos = 0;
            let outcome = poll_fn(|cx| {
                while pos < batch.len() {
                    match poll_contained(|| w.as_mut().poll_write(cx, &batch[pos..])) {
                        Polled::Ready(0) => return Poll::Ready(Err(OutputFault::ShortWrite)),
                        Polled::Ready(n) => pos += n,
                        Polled::Pending => return Poll::Pending,
                        Polled::Failed(f) => return Poll::Ready(Err(f)),
                    }
                }
                match poll_contained(|| w.as_mut().poll_flush(cx)) {
                    Polled::Ready(()) => Poll::Ready(Ok(())),
                    Polled::Pending => Poll::Pending,
                    Polled::Failed(f) => Poll::Ready(Err(f)),
                }
            })
            .await;
            let written = pos;
            batch.clear();
            if batch.capacity() > KEEP_CAPACITY {
                batch = Vec::new();
            }
            let mut s = lock(&self.state);
            s.wrote(written);
            if let Err(f) = outcome {
                s.fail(f);
            }
            let failed = s.failure.is_some();
            if failed {
                drop(s);
                self.drained.notify_waiters();
                break w;
            }
            s.input = Some(w);
            drop(s);
            self.drained.notify_waiters();
        };
        // Shut the pipe (the agent sees EOF); contained like every other call of the writer.
        let _ = poll_fn(|cx| match poll_contained(|| w.as_mut().poll_shutdown(cx)) {
            Polled::Pending => Poll::Pending,
            _ => Poll::Ready(()),
        })
        .await;
        lock(&self.state).open = false;
        self.drained.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::tokio::io::AsyncReadExt;
    use agentx_wire::wire::UserRecord;

    fn rt() -> ::tokio::runtime::Runtime {
        ::tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn frames_arrive_in_order_and_close_ends_the_pipe_after_them() {
        rt().block_on(async {
            let (w, mut r) = ::tokio::io::duplex(64);
            let out = Outgoing::new(w);
            let writer = ::tokio::spawn(Arc::clone(&out).run());
            for i in 0..100 {
                let text = format!("m{i}");
                out.send(&InputRecord::User(UserRecord::text(text)))
                    .unwrap();
            }
            out.close();
            assert!(matches!(
                out.send(&InputRecord::KeepAlive),
                Err(HostError::InputClosed)
            ));
            let mut all = String::new();
            r.read_to_string(&mut all).await.unwrap(); // EOF: the writer shut the pipe
            writer.await.unwrap();
            let texts: Vec<String> = all
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    v["message"].as_str().unwrap().to_owned()
                })
                .collect();
            let expected: Vec<String> = (0..100).map(|i| format!("m{i}")).collect();
            assert_eq!(texts, expected);
        });
    }

    #[test]
    fn until_below_waits_for_the_writer_and_a_failed_write_closes_input() {
        rt().block_on(async {
            // A reader that takes nothing until told: the writer blocks inside write_all.
            let (w, mut r) = ::tokio::io::duplex(16);
            let out = Outgoing::new(w);
            let writer = ::tokio::spawn(Arc::clone(&out).run());
            let big = "x".repeat(4096);
            out.send(&InputRecord::User(UserRecord::text(big.clone())))
                .unwrap();
            ::tokio::task::yield_now().await; // the writer takes the first frame
            out.send(&InputRecord::User(UserRecord::text(big))).unwrap();
            assert!(out.queued() > 4096);
            let mut waiter = {
                let out = Arc::clone(&out);
                ::tokio::spawn(async move { out.until_below(1024).await })
            };
            ::tokio::task::yield_now().await;
            assert!(!waiter.is_finished(), "must wait while the queue is full");
            // Drain the pipe: the writer takes the second frame and wakes the waiter.
            let mut sink = vec![0u8; 1 << 16];
            ::tokio::select! {
                done = &mut waiter => done.unwrap(),
                _ = async { loop { let _ = r.read(&mut sink).await; } } => unreachable!(),
            }
            // The reader goes away: the next write fails, and that one fixed failure is latched
            // (WIRE-015): every later send returns it.
            drop(r);
            let _ = out.send(&InputRecord::KeepAlive);
            writer.await.unwrap();
            for _ in 0..2 {
                match out.send(&InputRecord::KeepAlive) {
                    Err(HostError::InputFailed(f)) => assert!(f.is_broken_pipe(), "{f:?}"),
                    other => panic!("expected the latched failure, got {other:?}"),
                }
            }
        });
    }
}
