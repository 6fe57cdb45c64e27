//! WIRE-003 (the shared FIFO) and acceptance scenario 3 through the blocking driver
//! (`driver::OutputFifo` over `encode::FrameEncoder` + `control::Outbox`): one queue, one drain
//! at a time, order of entry is order on the wire, from several producer threads; re-entrant
//! pushes; capacity backpressure; a latched failure empties the queue. Deadlocks fail under a
//! timeout.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::thread;
use std::time::Duration;

use agentx_io::{OutputFifo, PushError, Pushed, RecordWriter};
use agentx_wire::encode::{CredentialSet, FailureKind, OutputFault};

fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(v) => v,
        Err(_) => panic!("deadlock or panic: scenario did not finish"),
    }
}

type Out = Arc<Mutex<Vec<u8>>>;

fn lines(out: &Out) -> Vec<String> {
    let out = out.lock().unwrap();
    String::from_utf8(out.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

const INIT: &str = r#"{"type":"system","subtype":"init"}"#;
const ASSISTANT: &str = r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}]}}"#;
const PERMISSION: &str = r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{},"tool_use_id":"toolu_1"}}"#;
const KEEP_ALIVE: &str = r#"{"type":"keep_alive"}"#;
const CANCEL: &str = r#"{"type":"control_cancel_request","request_id":"req_1"}"#;

/// The FIFO, its output, the release of its first write, and "the first write began".
type Gated = (Arc<OutputFifo>, Out, mpsc::Sender<()>, mpsc::Receiver<()>);

/// A FIFO whose writer blocks on its first record until `release` is sent: lets a test queue
/// records while a drain is provably running.
fn gated_fifo(capacity: usize, credentials: CredentialSet) -> Gated {
    let out: Out = Arc::default();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let (entered_tx, entered_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let first = AtomicBool::new(true);
    let o = out.clone();
    let fifo = OutputFifo::with_capacity(
        move |frame: &[u8]| -> io::Result<usize> {
            if first.swap(false, Ordering::SeqCst) {
                let _ = entered_tx.send(());
                let _ = release_rx.lock().unwrap().recv();
            }
            o.lock().unwrap().extend_from_slice(frame);
            Ok(frame.len())
        },
        capacity,
    );
    fifo.set_credentials(credentials).unwrap();
    (Arc::new(fifo), out, release_tx, entered_rx)
}

#[test]
fn scenario_3_permission_request_never_overtakes_the_assistant_event() {
    within(|| {
        // Uncontended, one thread.
        let out: Out = Arc::default();
        let o = out.clone();
        let fifo = OutputFifo::new(move |f: &[u8]| -> io::Result<usize> {
            o.lock().unwrap().extend_from_slice(f);
            Ok(f.len())
        });
        assert_eq!(fifo.push(ASSISTANT.as_bytes()).unwrap(), Pushed::Written);
        assert_eq!(fifo.push(PERMISSION.as_bytes()).unwrap(), Pushed::Written);
        assert_eq!(lines(&out), [ASSISTANT, PERMISSION]);

        // Contended: a drain is running on another thread when both are queued.
        let (fifo, out, release, entered) = gated_fifo(16, CredentialSet::empty());
        let f = fifo.clone();
        let drainer = thread::spawn(move || f.push(INIT.as_bytes()));
        entered.recv().unwrap(); // the drain is inside the writer now
        assert_eq!(fifo.push(ASSISTANT.as_bytes()).unwrap(), Pushed::Queued);
        // The permission request comes from yet another producer thread.
        let f = fifo.clone();
        let p = thread::spawn(move || f.push(PERMISSION.as_bytes()))
            .join()
            .unwrap();
        assert_eq!(p.unwrap(), Pushed::Queued);
        assert_eq!(fifo.len(), 2);
        release.send(()).unwrap();
        assert_eq!(drainer.join().unwrap().unwrap(), Pushed::Written);
        assert_eq!(lines(&out), [INIT, ASSISTANT, PERMISSION]);
        assert!(fifo.is_empty());
    });
}

#[test]
fn wire_003_order_across_producer_threads_and_one_drain_at_a_time() {
    within(|| {
        const THREADS: usize = 6;
        const PER: usize = 300;
        let out: Out = Arc::default();
        let busy = Arc::new(AtomicBool::new(false));
        let drains_seen = Arc::new(AtomicUsize::new(0));
        let (o, b, d) = (out.clone(), busy.clone(), drains_seen.clone());
        let fifo = Arc::new(OutputFifo::new(move |f: &[u8]| -> io::Result<usize> {
            assert!(!b.swap(true, Ordering::SeqCst), "two drains at once");
            d.fetch_add(1, Ordering::SeqCst);
            o.lock().unwrap().extend_from_slice(f);
            thread::yield_now();
            b.store(false, Ordering::SeqCst);
            Ok(f.len())
        }));
        let mut written = 0usize;
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let fifo = fifo.clone();
                thread::spawn(move || {
                    let mut mine = 0;
                    for i in 0..PER {
                        // The record kinds of WIRE-003 interleaved.
                        let rec = format!(r#"{{"type":"k{}","t":{t},"i":{i}}}"#, i % 4);
                        if fifo.push(rec.as_bytes()).unwrap() == Pushed::Written {
                            mine += 1;
                        }
                    }
                    mine
                })
            })
            .collect();
        for h in handles {
            written += h.join().unwrap();
        }
        assert!(written >= 1);
        let lines = lines(&out);
        assert_eq!(lines.len(), THREADS * PER);
        assert_eq!(drains_seen.load(Ordering::SeqCst), THREADS * PER);
        let mut next = [0usize; THREADS];
        for l in &lines {
            let doc = agentx_wire::json::parse(l.as_bytes()).expect("whole record");
            let o = doc.root().as_object().unwrap();
            let t = o
                .get("t")
                .and_then(|v| v.as_number())
                .and_then(|n| n.as_u64())
                .unwrap() as usize;
            let i = o
                .get("i")
                .and_then(|v| v.as_number())
                .and_then(|n| n.as_u64())
                .unwrap() as usize;
            assert_eq!(next[t], i, "producer {t} reordered");
            next[t] += 1;
        }
        eprintln!(
            "{} records from {THREADS} producers in entry order",
            lines.len()
        );
    });
}

#[test]
fn reentrant_push_from_the_writer_is_queued_behind_the_running_record() {
    within(|| {
        let out: Out = Arc::default();
        let slot: Arc<OnceLock<Weak<OutputFifo>>> = Arc::new(OnceLock::new());
        let results: Arc<Mutex<Vec<String>>> = Arc::default();
        let (o, s, r) = (out.clone(), slot.clone(), results.clone());
        let fifo = Arc::new(OutputFifo::new(move |f: &[u8]| -> io::Result<usize> {
            o.lock().unwrap().extend_from_slice(f);
            if f.starts_with(CANCEL.as_bytes()) {
                if let Some(fifo) = s.get().and_then(Weak::upgrade) {
                    let res = fifo.push(KEEP_ALIVE.as_bytes());
                    r.lock().unwrap().push(format!("{res:?}"));
                }
            }
            Ok(f.len())
        }));
        assert!(slot.set(Arc::downgrade(&fifo)).is_ok());
        assert_eq!(fifo.push(CANCEL.as_bytes()).unwrap(), Pushed::Written);
        assert_eq!(*results.lock().unwrap(), ["Ok(Queued)"]);
        assert_eq!(lines(&out), [CANCEL, KEEP_ALIVE]);
    });
}

#[test]
fn capacity_backpressure_and_full_for_the_drainer() {
    within(|| {
        let (fifo, out, release, entered) = gated_fifo(2, CredentialSet::empty());
        let f = fifo.clone();
        let drainer = thread::spawn(move || f.push(INIT.as_bytes()));
        entered.recv().unwrap();
        assert_eq!(fifo.push(&b"1"[..]).unwrap(), Pushed::Queued);
        assert_eq!(fifo.push(&b"2"[..]).unwrap(), Pushed::Queued);
        assert_eq!(fifo.len(), 2); // at capacity: accepted
                                   // One past: the producer waits for space instead of dropping or growing.
        let (done_tx, done_rx) = mpsc::channel();
        let f = fifo.clone();
        let waiter = thread::spawn(move || {
            let r = f.push(&b"3"[..]);
            let _ = done_tx.send(());
            r
        });
        assert!(
            done_rx.recv_timeout(Duration::from_millis(200)).is_err(),
            "did not wait"
        );
        assert_eq!(fifo.len(), 2);
        release.send(()).unwrap();
        assert_eq!(drainer.join().unwrap().unwrap(), Pushed::Written);
        assert!(waiter.join().unwrap().is_ok());
        assert_eq!(lines(&out), [INIT, "1", "2", "3"]);
    });
}

#[test]
fn the_drainer_itself_gets_full_back_instead_of_waiting_for_itself() {
    within(|| {
        let slot: Arc<OnceLock<Weak<OutputFifo>>> = Arc::new(OnceLock::new());
        let results: Arc<Mutex<Vec<String>>> = Arc::default();
        let (s, r) = (slot.clone(), results.clone());
        let first = AtomicBool::new(true);
        let fifo = Arc::new(OutputFifo::with_capacity(
            move |f: &[u8]| -> io::Result<usize> {
                if first.swap(false, Ordering::SeqCst) {
                    if let Some(fifo) = s.get().and_then(Weak::upgrade) {
                        for i in 0..3u8 {
                            let res = fifo.push(&[b'0' + i][..]);
                            r.lock().unwrap().push(format!("{res:?}"));
                        }
                    }
                }
                Ok(f.len())
            },
            2,
        ));
        assert!(slot.set(Arc::downgrade(&fifo)).is_ok());
        fifo.push(KEEP_ALIVE.as_bytes()).unwrap();
        assert_eq!(
            *results.lock().unwrap(),
            ["Ok(Queued)", "Ok(Queued)", "Err(Full)"]
        );
        assert!(fifo.is_empty());
    });
}

#[test]
fn latched_failure_empties_the_queue_and_refuses_later_pushes() {
    within(|| {
        let (fifo, out, release, entered) =
            gated_fifo(16, CredentialSet::new(["sk-secret"]).unwrap());
        let f = fifo.clone();
        let drainer = thread::spawn(move || f.push(ASSISTANT.as_bytes()));
        entered.recv().unwrap();
        // Queued behind the running record: a safe frame, validated and waiting.
        assert_eq!(fifo.push(KEEP_ALIVE.as_bytes()).unwrap(), Pushed::Queued);
        assert_eq!(fifo.len(), 1);
        // A record carrying the credential is refused on its producer's thread before it is
        // queued (WIRE-013), and the failure latches for everyone.
        let bad = br#"{"type":"result","result":"sk-secret"}"#;
        let failure = match fifo.push(&bad[..]) {
            Err(PushError::Failed(f)) => f,
            other => panic!("unexpected {other:?}"),
        };
        assert_eq!(failure.kind(), FailureKind::Validation);
        // Nothing follows a latched failure (WIRE-015): the queued safe frame is dropped.
        assert!(fifo.is_empty());
        release.send(()).unwrap();
        // The running drain finishes its own record, then reports the same failure.
        match drainer.join().unwrap() {
            Err(PushError::Failed(f)) => assert_eq!(f, failure),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(lines(&out), [ASSISTANT]);
        match fifo.push(KEEP_ALIVE.as_bytes()) {
            Err(PushError::Failed(f)) => assert_eq!(f, failure),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(fifo.failure(), Some(failure));
        assert_eq!(fifo.records_written(), 1);
        assert_eq!(lines(&out), [ASSISTANT]);
    });
}

#[test]
fn fifo_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<OutputFifo>();
}

/// Scenario 3 with typed records (the audit): the assistant record and the
/// permission request are `OutputRecord` values pushed from two producer threads while a drain
/// is running; the wire shows them in entry order, each exactly as the record encodes itself.
#[test]
fn scenario_3_typed_records_keep_entry_order_across_threads() {
    use agentx_wire::json::Parser;
    use agentx_wire::wire::OutputRecord;
    const TYPED_ASSISTANT: &str = r#"{"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"agentx-echo","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}},"parent_tool_use_id":null,"session_id":"00000000-0000-4000-8000-000000000001","uuid":"00000000-0000-4000-8000-000000000002"}"#;
    const TYPED_PERMISSION: &str = r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"toolu_1"}}"#;
    let mut parser = Parser::new();
    let assistant = OutputRecord::decode_line(TYPED_ASSISTANT.as_bytes(), &mut parser)
        .expect("a valid assistant record")
        .into_owned();
    let permission = OutputRecord::decode_line(TYPED_PERMISSION.as_bytes(), &mut parser)
        .expect("a valid can_use_tool request")
        .into_owned();
    let encoded = |r: &OutputRecord<'_>| {
        let mut v = Vec::new();
        r.encode(&mut v);
        String::from_utf8(v).unwrap()
    };
    let (a_line, p_line) = (encoded(&assistant), encoded(&permission));
    within(move || {
        let (fifo, out, release, entered) = gated_fifo(16, CredentialSet::empty());
        let f = fifo.clone();
        let drainer = thread::spawn(move || f.push(INIT.as_bytes()));
        entered.recv().unwrap();
        let f = fifo.clone();
        let a = thread::spawn(move || f.push(&assistant)).join().unwrap();
        assert_eq!(a.unwrap(), Pushed::Queued);
        let f = fifo.clone();
        let p = thread::spawn(move || f.push(&permission)).join().unwrap();
        assert_eq!(p.unwrap(), Pushed::Queued);
        release.send(()).unwrap();
        assert_eq!(drainer.join().unwrap().unwrap(), Pushed::Written);
        assert_eq!(lines(&out), [INIT.to_owned(), a_line, p_line]);
    });
}

/// A writer that holds frames back until [`RecordWriter::flush`] (as `agentx`'s stdout sink
/// does); its first frame pushes one more from inside the drain.
struct Holding {
    held: Vec<u8>,
    out: Out,
    flushes: Arc<AtomicUsize>,
    fifo: Arc<OnceLock<Weak<OutputFifo>>>,
    fail_flush: Option<io::ErrorKind>,
}

impl RecordWriter for Holding {
    fn write_record(&mut self, frame: &[u8]) -> io::Result<usize> {
        self.held.extend_from_slice(frame);
        if frame.starts_with(INIT.as_bytes()) {
            if let Some(fifo) = self.fifo.get().and_then(Weak::upgrade) {
                // From the writer on the draining thread: queued behind this frame.
                assert_eq!(fifo.push(KEEP_ALIVE.as_bytes()), Ok(Pushed::Queued));
            }
        }
        Ok(frame.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flushes.fetch_add(1, Ordering::SeqCst);
        if let Some(kind) = self.fail_flush {
            return Err(kind.into());
        }
        self.out.lock().unwrap().append(&mut self.held);
        Ok(())
    }
}

fn holding_fifo(fail_flush: Option<io::ErrorKind>) -> (Arc<OutputFifo>, Out, Arc<AtomicUsize>) {
    let out: Out = Arc::default();
    let flushes = Arc::new(AtomicUsize::new(0));
    let slot = Arc::new(OnceLock::new());
    let fifo = Arc::new(OutputFifo::new(Holding {
        held: Vec::new(),
        out: out.clone(),
        flushes: flushes.clone(),
        fifo: slot.clone(),
        fail_flush,
    }));
    slot.set(Arc::downgrade(&fifo)).unwrap();
    (fifo, out, flushes)
}

/// One frame sink for every driver: the FIFO flushes a writer that holds
/// frames back once its drain finds the outbox empty, after the frames queued during the
/// drain, so nothing is still held when `push` returns `Written`: one flush per drain.
#[test]
fn a_writer_that_holds_frames_is_flushed_once_its_drain_empties_the_outbox() {
    within(|| {
        let (fifo, out, flushes) = holding_fifo(None);
        assert_eq!(fifo.push(INIT.as_bytes()), Ok(Pushed::Written));
        assert_eq!(lines(&out), [INIT, KEEP_ALIVE]);
        assert_eq!(flushes.load(Ordering::SeqCst), 1);
        assert_eq!(fifo.records_written(), 2);
        assert_eq!(fifo.push(ASSISTANT.as_bytes()), Ok(Pushed::Written));
        assert_eq!(lines(&out), [INIT, KEEP_ALIVE, ASSISTANT]);
        assert_eq!(flushes.load(Ordering::SeqCst), 2);
    });
}

/// WIRE-015: a failing flush latches the output failure as a failing write does (classified
/// by kind only); the writer is not called again and nothing held reaches the output.
#[test]
fn a_failing_flush_latches_the_output_failure() {
    within(|| {
        let (fifo, out, flushes) = holding_fifo(Some(io::ErrorKind::BrokenPipe));
        let failure = match fifo.push(INIT.as_bytes()) {
            Err(PushError::Failed(f)) => f,
            other => panic!("{other:?}"),
        };
        assert_eq!(failure.kind(), FailureKind::Output(OutputFault::BrokenPipe));
        assert_eq!(
            fifo.push(ASSISTANT.as_bytes()),
            Err(PushError::Failed(failure))
        );
        assert_eq!(flushes.load(Ordering::SeqCst), 1);
        assert!(lines(&out).is_empty());
    });
}
