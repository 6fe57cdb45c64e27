//! The record writer: the one "where frames go" of every driver, and its containment
//! (WIRE-015).
//!
//! Owns: the [`RecordWriter`] trait (the blocking [`OutputFifo`](super::OutputFifo) writes
//! through it, and so does the `agentx` loop: `driver::agentx::stdout::StdoutSink`, which
//! collects one drain's frames for one `write`), the adapter from `std::io::Write`, and turning
//! what a writer did (a count, an error, a panic) into a fixed [`EncoderFailure`].
//! Must never: format, `Debug`, `Display` or walk the `source()` of a writer's error (it is
//! classified by `io::ErrorKind` only, then dropped inside `catch_unwind`); hand a writer part
//! of a frame.

use std::io;

use agentx_wire::encode::{
    classify_io, contained, discard_foreign, EncoderFailure, OutputFault, Panicked,
};

/// The output sink. One call per record with the complete validated frame; it returns how many
/// bytes it accepted. Anything but `Ok(frame.len())` (an error, a short count, a panic) latches
/// the output failure.
///
/// A writer may hold accepted frames back (to write several with one system call) until
/// [`flush`](RecordWriter::flush): every driver flushes when it has nothing more to hand over
/// for now (the FIFO when its drain finds the outbox empty, the `agentx` loop after each
/// drain of the session), so a held frame never waits for a later one.
pub trait RecordWriter: Send {
    /// Writes one complete frame (or takes it to write at the next flush).
    fn write_record(&mut self, frame: &[u8]) -> io::Result<usize>;

    /// Writes out every frame held back since the last flush. The default holds none.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<F> RecordWriter for F
where
    F: FnMut(&[u8]) -> io::Result<usize> + Send,
{
    fn write_record(&mut self, frame: &[u8]) -> io::Result<usize> {
        self(frame)
    }
}

/// Adapts a `std::io::Write` to a [`RecordWriter`]: `write_all` then `flush`, one call each
/// per record. If the OS accepts part of a frame and then fails, those bytes are out (no
/// writer can take them back) and the failure latches, so no later record follows them.
#[derive(Debug)]
pub struct WriteAll<W>(pub W);

impl<W: io::Write + Send> RecordWriter for WriteAll<W> {
    fn write_record(&mut self, frame: &[u8]) -> io::Result<usize> {
        self.0.write_all(frame)?;
        self.0.flush()?;
        Ok(frame.len())
    }
}

/// Hands one whole frame to `writer`, contained (WIRE-015): a panic, an error (classified by
/// kind only) or a count other than the frame's length is the output failure.
pub fn write_frame(writer: &mut dyn RecordWriter, frame: &[u8]) -> Result<(), EncoderFailure> {
    match contained(|| writer.write_record(frame)) {
        Ok(Ok(n)) if n == frame.len() => Ok(()),
        Ok(Ok(_)) => Err(EncoderFailure::output(OutputFault::ShortWrite)),
        Ok(Err(e)) => Err(io_failure(e)),
        Err(Panicked) => Err(EncoderFailure::output(OutputFault::Panicked)),
    }
}

/// [`RecordWriter::flush`], contained as [`write_frame`] is.
pub fn flush_writer(writer: &mut dyn RecordWriter) -> Result<(), EncoderFailure> {
    match contained(|| writer.flush()) {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(io_failure(e)),
        Err(Panicked) => Err(EncoderFailure::output(OutputFault::Panicked)),
    }
}

#[cold]
fn io_failure(e: io::Error) -> EncoderFailure {
    // `kind()` reads the stored kind; it never calls into a wrapped error.
    let fault = classify_io(e.kind());
    discard_foreign(e);
    EncoderFailure::output(fault)
}
