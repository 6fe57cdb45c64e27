//! Acceptance scenario 18 and WIRE-015 callback containment, through the blocking driver
//! (`driver::OutputFifo`): re-entrant configuration from the
//! validator and the writer, panicking callbacks, callback errors whose `Display`/`Debug`/
//! `source`/`Drop` panic, a validator mutating its copy, one latched failure, no callback after
//! failure, no deadlock. Every scenario runs on its own thread under a timeout, so a deadlock
//! fails the test instead of hanging it.

use std::error::Error as StdError;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::Duration;

use agentx_io::{OutputFifo, PushError, State};
use agentx_wire::encode::{
    CredentialSet, EncoderFailure, FailureKind, OutputFault, RecordFault, ValidatorError,
    OUTPUT_FAILURE_TEXT, VALIDATION_FAILURE_TEXT,
};
use agentx_wire::wire::Encode;

/// Runs `f` on a thread and fails if it does not finish within 10 s (a deadlock).
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

/// Flags set by any method of [`Hostile`] that must never be called.
#[derive(Default)]
struct Touched {
    display: AtomicBool,
    debug: AtomicBool,
    source: AtomicBool,
    dropped: AtomicBool,
}

/// An error whose Display, Debug and source (Error/Unwrap in Go terms) panic, and whose Drop
/// panics too.
struct Hostile(Arc<Touched>);

impl fmt::Display for Hostile {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.display.store(true, Ordering::SeqCst);
        panic!("Display called on a callback error")
    }
}
impl fmt::Debug for Hostile {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.debug.store(true, Ordering::SeqCst);
        panic!("Debug called on a callback error")
    }
}
impl StdError for Hostile {
    #[allow(deprecated)]
    fn description(&self) -> &str {
        self.0.display.store(true, Ordering::SeqCst);
        panic!("description called on a callback error")
    }
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0.source.store(true, Ordering::SeqCst);
        panic!("source called on a callback error")
    }
}
impl Drop for Hostile {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
        panic!("drop of a callback error panics too")
    }
}

fn assert_untouched(t: &Touched) {
    assert!(!t.display.load(Ordering::SeqCst), "Display was called");
    assert!(!t.debug.load(Ordering::SeqCst), "Debug was called");
    assert!(!t.source.load(Ordering::SeqCst), "source was called");
}

/// Counters of callback invocations plus the bytes the writer received.
#[derive(Default)]
struct Calls {
    validator: AtomicUsize,
    writer: AtomicUsize,
    written: Mutex<Vec<u8>>,
}

fn counting_writer(calls: Arc<Calls>) -> impl FnMut(&[u8]) -> io::Result<usize> + Send {
    move |frame: &[u8]| {
        calls.writer.fetch_add(1, Ordering::SeqCst);
        calls
            .written
            .lock()
            .map_err(|_| io::ErrorKind::Other)?
            .extend_from_slice(frame);
        Ok(frame.len())
    }
}

const SAFE: &[u8] = br#"{"type":"keep_alive"}"#;

/// A record whose own `encode` panics halfway.
struct Panicking;

impl Encode for Panicking {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"partial\":");
        panic!("marshal panics")
    }
}

/// After a latched failure: the same failure on every later encode, no callback call.
fn assert_latched(enc: &OutputFifo, failure: EncoderFailure, calls: &Calls) {
    let (v, w) = (
        calls.validator.load(Ordering::SeqCst),
        calls.writer.load(Ordering::SeqCst),
    );
    for _ in 0..3 {
        assert_eq!(enc.push(SAFE), Err(PushError::Failed(failure)));
    }
    assert_eq!(enc.state(), State::Failed(failure));
    assert_eq!(
        calls.validator.load(Ordering::SeqCst),
        v,
        "validator after failure"
    );
    assert_eq!(
        calls.writer.load(Ordering::SeqCst),
        w,
        "writer after failure"
    );
}

#[test]
fn scenario_18_reentrant_configuration_from_the_validator() {
    within(|| {
        let calls = Arc::new(Calls::default());
        let slot: Arc<OnceLock<Arc<OutputFifo>>> = Arc::new(OnceLock::new());
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let enc = Arc::new(OutputFifo::new(counting_writer(calls.clone())));
        let (slot2, calls2, seen2) = (slot.clone(), calls.clone(), seen.clone());
        enc.set_validator(move |_: &mut [u8]| -> Result<(), ValidatorError> {
            calls2.validator.fetch_add(1, Ordering::SeqCst);
            let enc = slot2.get().expect("encoder installed");
            let mut s = seen2.lock().unwrap();
            s.push(format!("{:?}", enc.state()));
            s.push(format!("{:?}", enc.set_credentials(CredentialSet::empty())));
            s.push(format!("{:?}", enc.set_max_record_len(1)));
            s.push(format!("{:?}", enc.push(SAFE)));
            s.push(format!("{:?}", enc.failure()));
            Ok(())
        })
        .unwrap();
        assert!(slot.set(enc.clone()).is_ok());
        enc.push(SAFE).unwrap();
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "Writing",
                "Err(AlreadyStarted)",
                "Err(AlreadyStarted)",
                "Err(Reentrant)",
                "None"
            ]
        );
        // Byte-exact output on success; the re-entrant encode wrote nothing.
        assert_eq!(*calls.written.lock().unwrap(), [SAFE, b"\n"].concat());
        assert_eq!(enc.records_written(), 1);
        assert_eq!(enc.state(), State::Open);
    });
}

#[test]
fn scenario_18_reentrant_configuration_from_the_writer() {
    within(|| {
        const FIRST: &[u8] = br#"{"type":"system","subtype":"init"}"#;
        let slot: Arc<OnceLock<Arc<OutputFifo>>> = Arc::new(OnceLock::new());
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let out: Arc<Mutex<Vec<u8>>> = Arc::default();
        let (slot2, seen2, out2) = (slot.clone(), seen.clone(), out.clone());
        let enc = Arc::new(OutputFifo::new(move |frame: &[u8]| -> io::Result<usize> {
            let enc = slot2.get().expect("encoder installed");
            if frame.starts_with(FIRST) {
                let mut s = seen2.lock().unwrap();
                s.push(format!("{:?}", enc.state()));
                s.push(format!(
                    "{:?}",
                    enc.set_validator(|_: &mut [u8]| -> Result<(), ValidatorError> { Ok(()) })
                ));
                // Queued behind the running record, written by this same drain.
                s.push(format!("{:?}", enc.push(SAFE)));
                s.push(format!("{}", enc.records_written()));
            }
            out2.lock().unwrap().extend_from_slice(frame);
            Ok(frame.len())
        }));
        assert!(slot.set(enc.clone()).is_ok());
        assert_eq!(enc.push(FIRST), Ok(agentx_io::Pushed::Written));
        enc.push(SAFE).unwrap();
        assert_eq!(
            *seen.lock().unwrap(),
            ["Writing", "Err(AlreadyStarted)", "Ok(Queued)", "0"]
        );
        assert_eq!(
            *out.lock().unwrap(),
            [FIRST, b"\n", SAFE, b"\n", SAFE, b"\n"].concat()
        );
        assert_eq!(enc.records_written(), 3);
        assert_eq!(enc.state(), State::Open);
    });
}

#[test]
fn scenario_18_validator_panic_latches_validation_failure() {
    within(|| {
        let calls = Arc::new(Calls::default());
        let enc = OutputFifo::new(counting_writer(calls.clone()));
        let c = calls.clone();
        enc.set_validator(move |_: &mut [u8]| -> Result<(), ValidatorError> {
            c.validator.fetch_add(1, Ordering::SeqCst);
            panic!("validator panics")
        })
        .unwrap();
        let e = enc.push(SAFE).unwrap_err();
        let f = e.failure().unwrap();
        assert_eq!(f.kind(), FailureKind::Validation);
        assert_eq!(f.to_string(), VALIDATION_FAILURE_TEXT);
        assert_eq!(calls.writer.load(Ordering::SeqCst), 0);
        assert_eq!(calls.validator.load(Ordering::SeqCst), 1);
        assert_latched(&enc, f, &calls);
    });
}

#[test]
fn scenario_18_validator_error_with_panicking_methods_is_never_touched() {
    within(|| {
        let touched = Arc::new(Touched::default());
        let calls = Arc::new(Calls::default());
        let enc = OutputFifo::new(counting_writer(calls.clone()));
        let (t, c) = (touched.clone(), calls.clone());
        enc.set_validator(move |_: &mut [u8]| -> Result<(), ValidatorError> {
            c.validator.fetch_add(1, Ordering::SeqCst);
            Err(Box::new(Hostile(t.clone())))
        })
        .unwrap();
        let f = enc.push(SAFE).unwrap_err().failure().unwrap();
        assert_eq!(f.kind(), FailureKind::Validation);
        assert_untouched(&touched);
        // It was dropped (its panicking Drop contained), not leaked or formatted.
        assert!(touched.dropped.load(Ordering::SeqCst));
        assert_eq!(calls.writer.load(Ordering::SeqCst), 0);
        assert_latched(&enc, f, &calls);
        // Printing our failure never reaches the callback's error.
        let _ = format!("{f} {f:?} {:?}", enc);
        assert_untouched(&touched);
    });
}

#[test]
fn scenario_18_writer_errors_with_panicking_methods_are_classified_by_kind_only() {
    for (kind, fault) in [
        (io::ErrorKind::BrokenPipe, OutputFault::BrokenPipe),
        (
            io::ErrorKind::ConnectionReset,
            OutputFault::ConnectionClosed,
        ),
        (io::ErrorKind::WriteZero, OutputFault::ShortWrite),
        (io::ErrorKind::PermissionDenied, OutputFault::Other),
    ] {
        within(move || {
            let touched = Arc::new(Touched::default());
            let calls = Arc::new(Calls::default());
            let (t, c) = (touched.clone(), calls.clone());
            let enc = OutputFifo::new(move |_: &[u8]| -> io::Result<usize> {
                c.writer.fetch_add(1, Ordering::SeqCst);
                Err(io::Error::new(kind, Hostile(t.clone())))
            });
            let f = enc.push(SAFE).unwrap_err().failure().unwrap();
            assert_eq!(f.kind(), FailureKind::Output(fault));
            assert_eq!(f.is_broken_pipe(), fault == OutputFault::BrokenPipe);
            assert_eq!(f.to_string(), OUTPUT_FAILURE_TEXT);
            assert_untouched(&touched);
            assert!(touched.dropped.load(Ordering::SeqCst));
            assert_eq!(calls.writer.load(Ordering::SeqCst), 1);
            assert_latched(&enc, f, &calls);
        });
    }
}

#[test]
fn scenario_18_writer_panic_and_short_write_latch() {
    within(|| {
        let calls = Arc::new(Calls::default());
        let c = calls.clone();
        let enc = OutputFifo::new(move |_: &[u8]| -> io::Result<usize> {
            c.writer.fetch_add(1, Ordering::SeqCst);
            panic!("writer panics")
        });
        let f = enc.push(SAFE).unwrap_err().failure().unwrap();
        assert_eq!(f.kind(), FailureKind::Output(OutputFault::Panicked));
        assert_latched(&enc, f, &calls);

        let calls = Arc::new(Calls::default());
        let c = calls.clone();
        let enc = OutputFifo::new(move |frame: &[u8]| -> io::Result<usize> {
            c.writer.fetch_add(1, Ordering::SeqCst);
            Ok(frame.len() - 1)
        });
        let f = enc.push(SAFE).unwrap_err().failure().unwrap();
        assert_eq!(f.kind(), FailureKind::Output(OutputFault::ShortWrite));
        assert_latched(&enc, f, &calls);
        // Reporting more than the frame is no better.
        let calls = Arc::new(Calls::default());
        let enc = OutputFifo::new(move |frame: &[u8]| -> io::Result<usize> { Ok(frame.len() + 1) });
        let f = enc.push(SAFE).unwrap_err().failure().unwrap();
        assert_eq!(f.kind(), FailureKind::Output(OutputFault::ShortWrite));
        assert_latched(&enc, f, &calls);
    });
}

/// A panic payload whose own Drop panics: dropping it must not escape or abort.
struct PayloadBomb;
impl Drop for PayloadBomb {
    fn drop(&mut self) {
        panic!("payload drop panics")
    }
}

#[test]
fn scenario_18_panic_payload_with_panicking_drop_is_contained() {
    within(|| {
        let calls = Arc::new(Calls::default());
        let enc = OutputFifo::new(counting_writer(calls.clone()));
        enc.set_validator(|_: &mut [u8]| -> Result<(), ValidatorError> {
            std::panic::panic_any(PayloadBomb)
        })
        .unwrap();
        let f = enc.push(SAFE).unwrap_err().failure().unwrap();
        assert_eq!(f.kind(), FailureKind::Validation);
        assert_latched(&enc, f, &calls);
    });
}

#[test]
fn scenario_18_marshal_panic_latches_record_failure() {
    within(|| {
        let calls = Arc::new(Calls::default());
        let enc = OutputFifo::new(counting_writer(calls.clone()));
        let f = enc.push(&Panicking).unwrap_err().failure().unwrap();
        assert_eq!(f.kind(), FailureKind::Record(RecordFault::Panicked));
        assert_eq!(calls.writer.load(Ordering::SeqCst), 0);
        assert_latched(&enc, f, &calls);
    });
}

#[test]
fn scenario_18_validator_mutating_its_copy_cannot_change_output() {
    within(|| {
        let calls = Arc::new(Calls::default());
        let enc = OutputFifo::new(counting_writer(calls.clone()));
        let seen: Arc<Mutex<Vec<u8>>> = Arc::default();
        let seen2 = seen.clone();
        enc.set_validator(move |frame: &mut [u8]| -> Result<(), ValidatorError> {
            seen2.lock().unwrap().extend_from_slice(frame);
            frame.fill(b'X');
            if let Some(last) = frame.last_mut() {
                *last = b'}';
            }
            Ok(())
        })
        .unwrap();
        let record = br#"{"type":"assistant","text":"keep me"}"#;
        enc.push(&record[..]).unwrap();
        enc.push(&record[..]).unwrap();
        let frame = [&record[..], b"\n"].concat();
        // The validator saw the exact final frame, terminator included.
        assert_eq!(*seen.lock().unwrap(), [&frame[..], &frame[..]].concat());
        // What was written is the original, byte for byte.
        assert_eq!(
            *calls.written.lock().unwrap(),
            [&frame[..], &frame[..]].concat()
        );
    });
}

#[test]
fn credentials_run_before_the_custom_validator() {
    within(|| {
        let calls = Arc::new(Calls::default());
        let enc = OutputFifo::new(counting_writer(calls.clone()));
        enc.set_credentials(CredentialSet::new(["tok"]).unwrap())
            .unwrap();
        let c = calls.clone();
        enc.set_validator(move |_: &mut [u8]| -> Result<(), ValidatorError> {
            c.validator.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
        .unwrap();
        let f = enc
            .push(&br#"{"a":"tok"}"#[..])
            .unwrap_err()
            .failure()
            .unwrap();
        assert_eq!(f.kind(), FailureKind::Validation);
        assert_eq!(calls.validator.load(Ordering::SeqCst), 0);
        assert_eq!(calls.writer.load(Ordering::SeqCst), 0);
        assert_latched(&enc, f, &calls);
    });
}

#[test]
fn concurrent_records_stay_whole_and_serialized() {
    within(|| {
        let busy = Arc::new(AtomicBool::new(false));
        let out: Arc<Mutex<Vec<u8>>> = Arc::default();
        let (b, o) = (busy.clone(), out.clone());
        let enc = Arc::new(OutputFifo::new(move |frame: &[u8]| -> io::Result<usize> {
            // Two writer calls at once would be a serialization bug.
            assert!(!b.swap(true, Ordering::SeqCst), "writer entered twice");
            // Hand the frame over in pieces to widen any race window.
            for chunk in frame.chunks(7) {
                o.lock().unwrap().extend_from_slice(chunk);
                thread::yield_now();
            }
            b.store(false, Ordering::SeqCst);
            Ok(frame.len())
        }));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let enc = enc.clone();
                thread::spawn(move || {
                    for i in 0..200 {
                        enc.push(format!(r#"{{"t":{t},"i":{i}}}"#).as_bytes())
                            .unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let out = out.lock().unwrap();
        let lines: Vec<&[u8]> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        assert_eq!(lines.len(), 800);
        let mut next = [0u32; 4];
        for l in lines {
            let doc = agentx_wire::json::parse(l).expect("whole record");
            let o = doc.root().as_object().unwrap();
            let t = o
                .get("t")
                .and_then(|v| v.as_number())
                .and_then(|n| n.as_u64())
                .unwrap();
            let i = o
                .get("i")
                .and_then(|v| v.as_number())
                .and_then(|n| n.as_u64())
                .unwrap();
            assert_eq!(u64::from(next[t as usize]), i, "per-thread order");
            next[t as usize] += 1;
        }
        assert_eq!(enc.records_written(), 800);
    });
}

#[test]
fn encoder_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<OutputFifo>();
    assert_send_sync::<CredentialSet>();
}
