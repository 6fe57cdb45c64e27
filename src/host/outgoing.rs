//! The async client's input side: validated frames (WIRE-013) queued in order in one reused
//! buffer, and the writer task that drains it to the agent's stdin.
//!
//! Owns: the client's one `FrameEncoder`, the queue of bytes not yet written (push order is
//! write order, WIRE-003 from the host's end), end of input, and backpressure for a caller that
//! can wait (an upload awaits [`Outgoing::until_below`] before each chunk instead of queueing a
//! whole file's base64). `send` stays synchronous so callbacks and `send_text` never await.
//!
//! Must never: allocate per frame in steady state (the writer swaps two buffers), reorder or
//! drop a frame that was accepted, or keep accepting frames after the writer failed or input
//! was closed.

use std::sync::{Arc, Mutex, MutexGuard};

use ::tokio::io::{AsyncWrite, AsyncWriteExt};
use ::tokio::sync::Notify;

use super::error::HostError;
use crate::encode::FrameEncoder;
use crate::wire::InputRecord;

/// A buffer bigger than this is not kept for reuse once written (one large upload or record
/// must not pin its memory for the session's life).
const KEEP_CAPACITY: usize = 4 << 20;

struct State {
    encoder: FrameEncoder,
    /// Frames accepted and not yet taken by the writer, in order.
    queued: Vec<u8>,
    /// False once input was closed or a write failed.
    open: bool,
}

/// The queue between `AsyncClient::send*` and its writer task.
pub(crate) struct Outgoing {
    state: Mutex<State>,
    /// Wakes the writer: bytes were queued or input was closed.
    ready: Notify,
    /// Wakes [`Outgoing::until_below`] waiters: the writer took and wrote a batch.
    drained: Notify,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Outgoing {
    pub(crate) fn new() -> Arc<Outgoing> {
        Arc::new(Outgoing {
            state: Mutex::new(State {
                encoder: FrameEncoder::new(),
                queued: Vec::new(),
                open: true,
            }),
            ready: Notify::new(),
            drained: Notify::new(),
        })
    }

    /// Encodes `record` as one validated frame and queues it behind every earlier one.
    pub(crate) fn send(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        {
            let mut s = lock(&self.state);
            if !s.open {
                return Err(HostError::InputClosed);
            }
            let State {
                encoder, queued, ..
            } = &mut *s;
            let frame = encoder
                .encode(record)
                .map_err(|f| HostError::Encode(f.message()))?;
            queued.extend_from_slice(frame);
            encoder.shrink();
        }
        self.ready.notify_one();
        Ok(())
    }

    /// Ends input: frames already queued are still written, then the writer shuts the pipe.
    pub(crate) fn close(&self) {
        lock(&self.state).open = false;
        self.ready.notify_one();
        self.drained.notify_waiters();
    }

    /// Bytes accepted and not yet handed to the writer.
    #[cfg(test)]
    fn queued(&self) -> usize {
        lock(&self.state).queued.len()
    }

    /// Waits until fewer than `limit` bytes are queued (or input is closed, when the next
    /// `send` reports it).
    pub(crate) async fn until_below(&self, limit: usize) {
        loop {
            let drained = self.drained.notified();
            ::tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let s = lock(&self.state);
                if s.queued.len() < limit || !s.open {
                    return;
                }
            }
            drained.await;
        }
    }

    /// The writer task: takes everything queued in one swap, writes and flushes it, repeats;
    /// after input is closed and the queue is empty (or a write fails) it shuts `input` down.
    pub(crate) async fn run(self: Arc<Self>, mut input: impl AsyncWrite + Unpin) {
        let mut batch = Vec::new();
        loop {
            let ready = self.ready.notified();
            {
                let mut s = lock(&self.state);
                if s.queued.is_empty() {
                    if !s.open {
                        break;
                    }
                } else {
                    std::mem::swap(&mut s.queued, &mut batch);
                }
            }
            if batch.is_empty() {
                ready.await;
                continue;
            }
            let written = input.write_all(&batch).await.is_ok() && input.flush().await.is_ok();
            batch.clear();
            if batch.capacity() > KEEP_CAPACITY {
                batch = Vec::new();
            }
            if !written {
                let mut s = lock(&self.state);
                s.open = false;
                s.queued = Vec::new();
            }
            self.drained.notify_waiters();
            if !written {
                break;
            }
        }
        let _ = input.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::UserRecord;
    use ::tokio::io::AsyncReadExt;

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
            let out = Outgoing::new();
            let writer = ::tokio::spawn(Arc::clone(&out).run(w));
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
            let out = Outgoing::new();
            let writer = ::tokio::spawn(Arc::clone(&out).run(w));
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
            // The reader goes away: the next write fails and input is closed for good.
            drop(r);
            out.send(&InputRecord::KeepAlive).unwrap_or(());
            writer.await.unwrap();
            assert!(matches!(
                out.send(&InputRecord::KeepAlive),
                Err(HostError::InputClosed)
            ));
        });
    }
}
