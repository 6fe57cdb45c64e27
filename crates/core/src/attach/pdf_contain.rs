//! Containment for lopdf, the one place in `attach` that spawns a thread and reads a clock.
//!
//! lopdf has a history of panics and stack overflows on hostile files. Each validation runs
//! on its own thread with a large stack, under `catch_unwind`, and the caller waits at most a
//! wall-clock budget: a hostile file is rejected (`pdf_invalid`), it never hangs or crashes
//! the process. A thread that overruns its budget cannot be killed; it is detached and
//! counted, and while `MAX_RUNAWAY` of them are still running new validations are refused
//! (`process_failure`) rather than piling up more CPU burners.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::reason::ReasonCode;

/// Stack for the validation thread.
const STACK_BYTES: usize = 256 * 1024 * 1024;
/// Validation threads allowed to be alive at once (running or overrun).
const MAX_RUNAWAY: usize = 4;

/// The count of validation threads alive (running or overrun) against `MAX_RUNAWAY`.
struct Slots(AtomicUsize);

/// The process's slots: every validation of the agent counts here.
static SLOTS: Slots = Slots(AtomicUsize::new(0));

/// One taken slot, released when the validation thread stops burning CPU.
struct LiveGuard(&'static Slots);

impl Drop for LiveGuard {
    fn drop(&mut self) {
        self.0 .0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Runs `inspect(&bytes)` contained and hands `bytes` back with the verdict (the thread owns
/// them while it runs, so no copy is needed). A panic inside is `pdf_invalid`; running past
/// `time_limit` is `pdf_invalid` (the bytes stay with the detached thread); failing to start
/// the thread is `process_failure`.
pub fn run<T: Send + 'static>(
    bytes: Vec<u8>,
    time_limit: Duration,
    inspect: fn(&[u8]) -> T,
) -> Result<(T, Vec<u8>), ReasonCode> {
    run_counted(&SLOTS, bytes, time_limit, inspect)
}

/// [`run`] counting against `slots` (the tests' own, so no other test's threads count).
fn run_counted<T: Send + 'static>(
    slots: &'static Slots,
    bytes: Vec<u8>,
    time_limit: Duration,
    inspect: fn(&[u8]) -> T,
) -> Result<(T, Vec<u8>), ReasonCode> {
    if slots.0.fetch_add(1, Ordering::AcqRel) >= MAX_RUNAWAY {
        slots.0.fetch_sub(1, Ordering::AcqRel);
        return Err(ReasonCode::ProcessFailure);
    }
    let guard = LiveGuard(slots);
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("agentx-pdf-validate".into())
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let outcome = catch_unwind(AssertUnwindSafe(|| inspect(&bytes)));
            // This thread burns no more CPU: release its slot before the caller wakes, so a
            // caller that validates again at once (or under heavy load, while this thread is
            // not yet scheduled to exit) is never refused for a thread that already finished.
            drop(guard);
            // The receiver may have given up; nothing to do then.
            let _ = tx.send(outcome.ok().map(|verdict| (verdict, bytes)));
        });
    if spawned.is_err() {
        // The closure (and the guard in it) was dropped: the slot is already released.
        return Err(ReasonCode::ProcessFailure);
    }
    match rx.recv_timeout(time_limit) {
        Ok(Some(verdict)) => Ok(verdict),
        Ok(None) | Err(_) => Err(ReasonCode::PdfInvalid),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panics(_: &[u8]) -> u8 {
        panic!("hostile input")
    }

    fn sleeps(_: &[u8]) -> u8 {
        std::thread::sleep(Duration::from_millis(400));
        1
    }

    fn recurses(b: &[u8]) -> usize {
        fn depth(n: usize) -> usize {
            let pad = std::hint::black_box([n as u8; 512]);
            if n == 0 {
                usize::from(pad[0])
            } else {
                depth(n - 1) + usize::from(pad[1] != u8::MAX || pad[2] == u8::MAX)
            }
        }
        depth(b.len())
    }

    fn live(slots: &Slots) -> usize {
        slots.0.load(Ordering::Acquire)
    }

    #[test]
    fn a_finished_validation_holds_no_slot_once_its_verdict_is_back() {
        // The slot is released before the verdict is sent, so when `run` returns, the thread
        // that produced the verdict no longer counts, however late it is scheduled to exit
        // (a loaded CI machine refused validations for threads that had already finished).
        static MINE: Slots = Slots(AtomicUsize::new(0));
        for i in 0..64 {
            let (n, _) = run_counted(&MINE, vec![0; i], Duration::from_secs(20), <[u8]>::len)
                .expect("a quick validation succeeds");
            assert_eq!(n, i);
            assert_eq!(live(&MINE), 0, "validation {i} still holds its slot");
        }
        assert_eq!(
            run_counted(&MINE, vec![1], Duration::from_secs(20), panics).map(|(v, _)| v),
            Err(ReasonCode::PdfInvalid)
        );
        assert_eq!(live(&MINE), 0, "a contained panic releases its slot");
    }

    static GATE: (std::sync::Mutex<bool>, std::sync::Condvar) =
        (std::sync::Mutex::new(false), std::sync::Condvar::new());

    /// Runs until the test opens `GATE`: an overrun that stays alive as long as needed.
    fn waits_for_the_gate(_: &[u8]) -> u8 {
        let (open, cv) = &GATE;
        let mut g = open.lock().unwrap();
        while !*g {
            g = cv.wait(g).unwrap();
        }
        1
    }

    #[test]
    fn max_runaway_overruns_are_allowed_and_one_more_is_refused() {
        static MINE: Slots = Slots(AtomicUsize::new(0));
        // At the limit: each of MAX_RUNAWAY overruns is accepted (run, then given up on).
        for _ in 0..MAX_RUNAWAY {
            assert_eq!(
                run_counted(&MINE, vec![], Duration::from_millis(5), waits_for_the_gate)
                    .map(|(v, _)| v),
                Err(ReasonCode::PdfInvalid)
            );
        }
        assert_eq!(live(&MINE), MAX_RUNAWAY);
        // One past: refused at once, without starting a thread.
        assert_eq!(
            run_counted(&MINE, vec![], Duration::from_secs(20), <[u8]>::len).map(|(v, _)| v),
            Err(ReasonCode::ProcessFailure)
        );
        assert_eq!(live(&MINE), MAX_RUNAWAY);
        let (open, cv) = &GATE;
        *open.lock().unwrap() = true;
        cv.notify_all();
        // The overruns end and give their slots back (waiting for that state, not a time).
        while live(&MINE) != 0 {
            std::thread::yield_now();
        }
        assert_eq!(
            run_counted(&MINE, vec![7], Duration::from_secs(20), <[u8]>::len).map(|(v, _)| v),
            Ok(1)
        );
    }

    #[test]
    fn panic_is_contained_as_pdf_invalid() {
        assert_eq!(
            run(vec![1], Duration::from_secs(5), panics).map(|(v, _)| v),
            Err(ReasonCode::PdfInvalid)
        );
    }

    #[test]
    fn overrun_is_rejected_without_waiting() {
        let start = std::time::Instant::now();
        assert_eq!(
            run(vec![], Duration::from_millis(50), sleeps).map(|(v, _)| v),
            Err(ReasonCode::PdfInvalid)
        );
        assert!(start.elapsed() < Duration::from_millis(350));
    }

    #[test]
    fn deep_recursion_fits_the_large_stack() {
        // ~100k frames of >512 bytes: far beyond a default 2 MiB thread stack.
        let n = 100_000;
        let (verdict, bytes) = run(vec![0; n], Duration::from_secs(20), recurses).unwrap();
        assert_eq!(verdict, n);
        assert_eq!(bytes, vec![0; n], "the bytes come back whole");
    }
}
