//! WIRE-015 in the blocking host client: the writer a caller passes to `Client::attach` (and
//! the reader) are foreign callbacks. They are called outside the lock that owns the encoder,
//! a panic in one is contained, an error latches one fixed failure, the writer is never called
//! again after it, and nothing the callback returned is formatted.

use std::io::{self, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use agentx_io::host::{Client, ClientOptions, HostError};
use agentx_wire::encode::{FailureKind, OutputFault};

const SECRET: &str = "sk-live-wire015-secret";
const T: Duration = Duration::from_secs(20);

/// An error whose every formatting path would leak the secret, and whose `Display` panics.
#[derive(Debug)]
struct Hostile;

impl std::fmt::Display for Hostile {
    fn fmt(&self, _: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        panic!("formatted a callback-owned error: {SECRET}")
    }
}

impl std::error::Error for Hostile {}

/// What the writer does on each call.
enum Misbehave {
    Panic,
    Error,
    Short,
}

struct BadWriter {
    how: Misbehave,
    calls: Arc<AtomicUsize>,
}

impl Write for BadWriter {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        match self.how {
            Misbehave::Panic => panic!("writer panicked holding {SECRET}"),
            Misbehave::Error => Err(io::Error::other(Hostile)),
            Misbehave::Short => Ok(0),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn client_with(how: Misbehave) -> (Client, Arc<AtomicUsize>) {
    let calls = Arc::new(AtomicUsize::new(0));
    let w = BadWriter {
        how,
        calls: Arc::clone(&calls),
    };
    // The output side stays open (never ends) so nothing else settles.
    let (out_r, out_w) = io::pipe().unwrap();
    std::mem::forget(out_w);
    (Client::attach(out_r, w, ClientOptions::default()), calls)
}

fn assert_fixed(e: &HostError, fault: OutputFault) {
    let HostError::InputFailed(f) = e else {
        panic!("expected the latched input failure, got {e:?}");
    };
    assert_eq!(f.kind(), FailureKind::Output(fault));
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(SECRET), "leaked: {shown}");
    assert_eq!(
        e.to_string(),
        "agent input failed: the record writer failed"
    );
}

#[test]
fn a_panicking_writer_is_contained_and_latches_one_fixed_failure() {
    let (client, calls) = client_with(Misbehave::Panic);
    let first = catch_unwind(AssertUnwindSafe(|| client.send_text("hello")))
        .expect("the writer's panic reached the caller (WIRE-015)");
    assert_fixed(&first.unwrap_err(), OutputFault::Panicked);
    let n = calls.load(Ordering::SeqCst);
    // Latched: the same failure, and the writer is never called again.
    for _ in 0..3 {
        let again = catch_unwind(AssertUnwindSafe(|| client.send_text("again")))
            .expect("no panic after the latch");
        assert_fixed(&again.unwrap_err(), OutputFault::Panicked);
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        n,
        "writer called after the latch"
    );
    client.end_input();
    assert!(matches!(
        client.send_text("late"),
        Err(HostError::InputClosed)
    ));
}

#[test]
fn a_writer_error_is_classified_by_kind_and_never_formatted() {
    let (client, calls) = client_with(Misbehave::Error);
    // Formatting the `Hostile` payload would panic; the result must be the fixed failure.
    let e = catch_unwind(AssertUnwindSafe(|| client.send_text("hello")))
        .expect("the client formatted the writer's error")
        .unwrap_err();
    assert_fixed(&e, OutputFault::Other);
    let n = calls.load(Ordering::SeqCst);
    let e = client.send_text("again").unwrap_err();
    assert_fixed(&e, OutputFault::Other);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        n,
        "writer called after the latch"
    );
}

#[test]
fn a_short_write_latches_the_failure() {
    let (client, _) = client_with(Misbehave::Short);
    let e = client.send_text("hello").unwrap_err();
    // `write_all` turns a zero-byte write into `WriteZero`: a short write.
    assert_fixed(&e, OutputFault::ShortWrite);
}

/// A writer that blocks inside its first write until told to go on.
struct Gate {
    entered: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
    first: bool,
    out: Arc<std::sync::Mutex<Vec<u8>>>,
}

impl Write for Gate {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if std::mem::take(&mut self.first) {
            let _ = self.entered.send(());
            let _ = self.release.recv_timeout(T);
        }
        self.out.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_writer_runs_outside_the_encoder_lock_and_order_is_kept() {
    let (entered_tx, entered) = mpsc::channel();
    let (release, release_rx) = mpsc::channel();
    let out = Arc::new(std::sync::Mutex::new(Vec::new()));
    let gate = Gate {
        entered: entered_tx,
        release: release_rx,
        first: true,
        out: Arc::clone(&out),
    };
    let (out_r, out_w) = io::pipe().unwrap();
    let client = Client::attach(out_r, gate, ClientOptions::default());
    std::thread::scope(|s| {
        let first = s.spawn(|| client.send_text("first"));
        entered.recv_timeout(T).expect("the writer was called");
        // The writer is blocked inside its call: another send must still be accepted (queued
        // behind it) instead of waiting for the lock the writer would hold.
        let (done_tx, done) = mpsc::channel();
        let client = &client;
        s.spawn(move || {
            let r = client.send_text("second");
            let _ = done_tx.send(r.is_ok());
        });
        let accepted = done.recv_timeout(T);
        release.send(()).unwrap();
        assert_eq!(
            accepted,
            Ok(true),
            "a send waited for the writer of another (WIRE-015)"
        );
        first.join().unwrap().unwrap();
    });
    let text = String::from_utf8(out.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("\"first\"") && lines[1].contains("\"second\""));
    drop(out_w);
}

/// A reader that fails with a hostile error after one record.
struct BadReader {
    sent: bool,
    panic: bool,
}

impl Read for BadReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !std::mem::replace(&mut self.sent, true) {
            let line = b"{\"type\":\"keep_alive\"}\n";
            buf[..line.len()].copy_from_slice(line);
            return Ok(line.len());
        }
        if self.panic {
            panic!("reader panicked holding {SECRET}");
        }
        Err(io::Error::new(io::ErrorKind::ConnectionReset, Hostile))
    }
}

/// The stream's item for a failed reader: an I/O error of the read's kind (`Other` for a
/// panic), with nothing of the reader's own error or panic in its text (WIRE-015).
fn assert_reader_failure(e: &HostError, panic: bool) {
    let HostError::Io(io) = e else {
        panic!("expected an I/O item, got {e:?}")
    };
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(SECRET), "leaked: {shown}");
    let want = if panic {
        io::ErrorKind::Other
    } else {
        io::ErrorKind::ConnectionReset
    };
    assert_eq!(io.kind(), want);
}

#[test]
fn a_reader_error_keeps_only_its_kind_and_a_reader_panic_ends_the_output() {
    for panic in [false, true] {
        let client = Client::attach(
            BadReader { sent: false, panic },
            io::sink(),
            ClientOptions::default(),
        );
        assert_eq!(client.recv().unwrap().unwrap().record_type(), "keep_alive");
        let e = client.recv().expect("the failure is an item").unwrap_err();
        assert_reader_failure(&e, panic);
        // The output ended: pending calls are rejected (WIRE-008) rather than left waiting.
        assert!(client.recv().is_none());
        let r = client.control(
            agentx_wire::wire::ControlRequestBody::McpStatus(
                agentx_wire::wire::subtypes::McpStatus,
            ),
            T,
        );
        assert!(
            matches!(r, Err(HostError::StreamClosed)),
            "{r:?} (panic={panic})"
        );
    }
}

/// An async writer that panics when polled.
struct PanickingAsyncWriter;

impl tokio::io::AsyncWrite for PanickingAsyncWriter {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        panic!("async writer panicked holding {SECRET}")
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[test]
fn the_async_clients_writer_is_contained_too() {
    use agentx_io::host::{AsyncClient, AsyncClientOptions};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let (out_r, _out_w) = tokio::io::duplex(64);
        let client =
            AsyncClient::attach(out_r, PanickingAsyncWriter, AsyncClientOptions::default());
        // The frame is offered to the writer by `send` itself (nothing queued): its panic is
        // contained and latched, and every later send returns the same failure (before: the
        // writer task died and sends were accepted into a queue nobody drained).
        for _ in 0..3 {
            let e = client.send_text("hello").unwrap_err();
            assert_fixed(&e, OutputFault::Panicked);
        }
    });
}

/// An async reader that hands one record, then waits for `trigger` and fails with a hostile
/// error or panics.
struct BadAsyncReader {
    sent: bool,
    panic: bool,
    trigger: tokio::sync::oneshot::Receiver<()>,
}

impl tokio::io::AsyncRead for BadAsyncReader {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        use std::task::Poll;
        if !std::mem::replace(&mut self.sent, true) {
            buf.put_slice(b"{\"type\":\"keep_alive\"}\n");
            return Poll::Ready(Ok(()));
        }
        if std::pin::Pin::new(&mut self.trigger).poll(cx).is_pending() {
            return Poll::Pending;
        }
        if self.panic {
            panic!("async reader panicked holding {SECRET}");
        }
        Poll::Ready(Err(io::Error::new(io::ErrorKind::ConnectionReset, Hostile)))
    }
}

use std::future::Future as _;

#[test]
fn the_async_clients_reader_is_contained_and_its_end_rejects_a_pending_call() {
    use agentx_io::host::{AsyncClient, AsyncClientOptions};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for panic in [false, true] {
        rt.block_on(async {
            let (fire, trigger) = tokio::sync::oneshot::channel();
            let reader = BadAsyncReader {
                sent: false,
                panic,
                trigger,
            };
            let client =
                AsyncClient::attach(reader, tokio::io::sink(), AsyncClientOptions::default());
            assert_eq!(
                client.recv().await.unwrap().unwrap().record_type(),
                "keep_alive"
            );
            // A call is pending when the reader fails: WIRE-008 rejects it at once (before the
            // fix, a panic ended the read task without ending the routes, and the call waited
            // out its whole timeout).
            let call = client.control(
                agentx_wire::wire::ControlRequestBody::McpStatus(
                    agentx_wire::wire::subtypes::McpStatus,
                ),
                T,
            );
            let fail = async {
                tokio::task::yield_now().await;
                fire.send(()).unwrap();
            };
            let (r, ()) = tokio::join!(call, fail);
            assert!(
                matches!(r, Err(HostError::StreamClosed)),
                "{r:?} (panic={panic})"
            );
            let e = client
                .recv()
                .await
                .expect("the failure is an item")
                .unwrap_err();
            assert_reader_failure(&e, panic);
            assert!(client.recv().await.is_none());
        });
    }
}

/// Fails once with `Interrupted`, then hands one record, then ends.
struct InterruptedOnce {
    step: u8,
}

impl InterruptedOnce {
    fn next(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.step += 1;
        match self.step {
            1 => Err(io::ErrorKind::Interrupted.into()),
            2 => {
                let line = b"{\"type\":\"keep_alive\"}\n";
                buf[..line.len()].copy_from_slice(line);
                Ok(line.len())
            }
            _ => Ok(0),
        }
    }
}

impl Read for InterruptedOnce {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.next(buf)
    }
}

impl tokio::io::AsyncRead for InterruptedOnce {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let mut chunk = [0u8; 64];
        std::task::Poll::Ready(self.next(&mut chunk).map(|n| buf.put_slice(&chunk[..n])))
    }
}

#[test]
fn an_interrupted_read_is_retried_not_an_item_in_both_clients() {
    let client = Client::attach(
        InterruptedOnce { step: 0 },
        io::sink(),
        ClientOptions::default(),
    );
    assert_eq!(client.recv().unwrap().unwrap().record_type(), "keep_alive");
    assert!(client.recv().is_none());

    use agentx_io::host::{AsyncClient, AsyncClientOptions};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = AsyncClient::attach(
            InterruptedOnce { step: 0 },
            tokio::io::sink(),
            AsyncClientOptions::default(),
        );
        assert_eq!(
            client.recv().await.unwrap().unwrap().record_type(),
            "keep_alive"
        );
        assert!(client.recv().await.is_none());
    });
}
