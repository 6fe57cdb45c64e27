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

static LIVE: AtomicUsize = AtomicUsize::new(0);

struct LiveGuard;

impl Drop for LiveGuard {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::AcqRel);
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
    if LIVE.fetch_add(1, Ordering::AcqRel) >= MAX_RUNAWAY {
        LIVE.fetch_sub(1, Ordering::AcqRel);
        return Err(ReasonCode::ProcessFailure);
    }
    let guard = LiveGuard;
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
        // The closure (and the guard in it) was dropped: LIVE is already released.
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
