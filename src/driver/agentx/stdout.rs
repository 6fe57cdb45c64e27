//! agentx's stdout: [`StdoutSink`], the loop's frame sink, and the [`ReadAhead`] it fills from
//! stdin while a write waits for the host.
//!
//! Owns: one `write` per drain of the session (the loop flushes after every drain), writing
//! all of it however the host reads, and reading stdin ahead meanwhile. When the loop reads
//! stdin itself ([`super::inbox`]) and stdout is a pipe or a socket, stdout is made
//! non-blocking (its flags are restored when the sink is dropped): a write the host is not
//! ready for waits in one `poll` over stdout and stdin, and what stdin brings meanwhile goes
//! to the read-ahead, up to [`MAX_LINES_IN_FLIGHT`] bytes, as far as a stdin thread would have
//! read. A host that writes all its input before it reads any output then deadlocks no sooner
//! than with a thread; past that bound it is backpressure (PROFILE §8), and memory stays
//! bounded. A terminal or a file (shared with other processes, or never full) is written
//! with blocking writes.
//! Must never: write anything but the frames it was handed, in order, each whole; frame or
//! parse what it reads ahead (the inbox does, in order, before it reads stdin again); leave
//! stdout non-blocking after the session.

use std::collections::VecDeque;
use std::io;
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use rustix::event::{poll, PollFd, PollFlags};
use rustix::fs::OFlags;
use rustix::io::Errno;

use crate::driver::RecordWriter;

use super::event::MAX_LINES_IN_FLIGHT;
use super::inbox::STDIN_CHUNK;

/// Stdin read while a write to stdout waited: chunks in input order, then how input ended.
#[derive(Default)]
pub struct ReadAhead {
    chunks: VecDeque<Bytes>,
    bytes: usize,
    /// `Ok`: end of input; `Err`: a read failed.
    end: Option<Result<(), ()>>,
    scratch: Vec<u8>,
}

/// The read-ahead the sink fills and the inbox drains (both on the loop's thread).
pub type SharedReadAhead = Arc<Mutex<ReadAhead>>;

impl ReadAhead {
    /// The oldest chunk read ahead.
    pub fn pop(&mut self) -> Option<Bytes> {
        let chunk = self.chunks.pop_front()?;
        self.bytes -= chunk.len();
        Some(chunk)
    }

    /// How input ended, once every chunk is out (`Ok`: end of input; `Err`: a failed read).
    pub fn take_end(&mut self) -> Option<Result<(), ()>> {
        if self.chunks.is_empty() {
            self.end.take()
        } else {
            None
        }
    }

    /// Whether nothing is read ahead (no chunk, no end of input waiting).
    pub fn is_idle(&self) -> bool {
        self.chunks.is_empty() && self.end.is_none()
    }

    /// Whether it may read more: input not over, under [`MAX_LINES_IN_FLIGHT`] bytes.
    fn wants_more(&self) -> bool {
        self.end.is_none() && self.bytes < MAX_LINES_IN_FLIGHT
    }

    /// One read of `input` (which `poll` said is ready), kept as a chunk of its own size.
    pub(super) fn read_from(&mut self, input: impl AsFd) {
        self.scratch.resize(STDIN_CHUNK, 0);
        let n = loop {
            match rustix::io::read(&input, &mut self.scratch[..]) {
                Err(Errno::INTR) => continue,
                // Another reader took it first (a shared terminal): nothing read.
                Err(Errno::AGAIN) => return,
                Err(_) => {
                    self.end = Some(Err(()));
                    return;
                }
                Ok(n) => break n,
            }
        };
        if n == 0 {
            self.end = Some(Ok(()));
            return;
        }
        self.bytes += n;
        self.chunks
            .push_back(Bytes::copy_from_slice(&self.scratch[..n]));
    }

    /// Bytes read ahead and not yet taken. For tests.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.bytes
    }
}

/// Collected frames beyond this are written at once (a drain of many large records).
const STDOUT_BATCH: usize = 1 << 20;

/// stdout: the frames of one drain are collected and written together at
/// [`RecordWriter::flush`] (one `write` for a burst of `stream_event` records instead of one
/// per record). The loop flushes after every drain, so a frame never waits for a later event
/// (a drain that started a model is held only while that model's events already wait: an echo
/// turn is one write), and the flush still waits while the host is not reading
/// (backpressure). See the module docs for the read-ahead.
pub struct StdoutSink {
    out: io::Stdout,
    buf: Vec<u8>,
    /// With stdout made non-blocking: stdin and the read-ahead it fills while a write waits.
    ahead: Option<(io::Stdin, SharedReadAhead)>,
    /// stdout's flags before the sink made it non-blocking.
    restore: Option<OFlags>,
}

impl StdoutSink {
    /// The process's stdout; with `ahead` (the inbox's, when it reads stdin itself) and a
    /// pipe or socket for stdout, non-blocking and reading stdin ahead while a write waits.
    pub fn new(ahead: Option<SharedReadAhead>) -> StdoutSink {
        let out = io::stdout();
        let restore = ahead.as_ref().and_then(|_| make_non_blocking(&out));
        StdoutSink {
            ahead: ahead
                .filter(|_| restore.is_some())
                .map(|a| (io::stdin(), a)),
            out,
            buf: Vec::new(),
            restore,
        }
    }

    fn write_out(&mut self) -> io::Result<()> {
        let written = self.write_all();
        self.buf.clear();
        if self.buf.capacity() > STDOUT_BATCH {
            self.buf.shrink_to(STDOUT_BATCH);
        }
        written
    }

    /// Writes the whole buffer; a write the host is not ready for waits in [`Self::wait`].
    fn write_all(&mut self) -> io::Result<()> {
        let mut at = 0;
        while at < self.buf.len() {
            match rustix::io::write(&self.out, &self.buf[at..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => at += n,
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) => self.wait()?,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Waits until stdout can take more, reading stdin ahead meanwhile (while the read-ahead
    /// has room).
    fn wait(&mut self) -> io::Result<()> {
        loop {
            let ahead = self.ahead.as_ref().filter(|(_, a)| lock(a).wants_more());
            let (out, input) = match ahead {
                Some((stdin, _)) => {
                    let mut fds = [
                        PollFd::new(&self.out, PollFlags::OUT),
                        PollFd::new(stdin, PollFlags::IN),
                    ];
                    poll_again(&mut fds)?;
                    (fds[0].revents(), fds[1].revents())
                }
                None => {
                    let mut fds = [PollFd::new(&self.out, PollFlags::OUT)];
                    poll_again(&mut fds)?;
                    (fds[0].revents(), PollFlags::empty())
                }
            };
            if let (Some((stdin, a)), false) = (ahead, input.is_empty()) {
                lock(a).read_from(stdin);
            }
            // Writable, or hung up or failed: the next write says which.
            if !out.is_empty() {
                return Ok(());
            }
        }
    }
}

/// The read-ahead, whatever a panic elsewhere left it as (it holds only bytes and counts).
fn lock(a: &SharedReadAhead) -> std::sync::MutexGuard<'_, ReadAhead> {
    a.lock().unwrap_or_else(|e| e.into_inner())
}

/// `poll` without a timeout; a signal handled on this thread polls again.
fn poll_again(fds: &mut [PollFd<'_>]) -> io::Result<()> {
    loop {
        match poll(fds, None) {
            Ok(_) => return Ok(()),
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// Sets `O_NONBLOCK` on stdout when it is a pipe or a socket that neither stdin nor stderr
/// also is; its flags before, or `None` when it is anything else or the flags cannot be
/// changed. The flag belongs to the open file description, which `2>&1` or one socket for
/// both directions shares: stderr's `eprintln!` would then fail (a panic) on a full pipe, and
/// stdin's reads would fail instead of waiting.
fn make_non_blocking(out: &io::Stdout) -> Option<OFlags> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, fstat, FileType};
    let stat = fstat(out).ok()?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::Fifo && kind != FileType::Socket {
        return None;
    }
    let same = |other: Option<rustix::fs::Stat>| {
        other.is_none_or(|o| (o.st_dev, o.st_ino) == (stat.st_dev, stat.st_ino))
    };
    if same(fstat(io::stdin()).ok()) || same(fstat(io::stderr()).ok()) {
        return None;
    }
    let flags = fcntl_getfl(out).ok()?;
    fcntl_setfl(out, flags | OFlags::NONBLOCK).ok()?;
    Some(flags)
}

impl Drop for StdoutSink {
    fn drop(&mut self) {
        if let Some(flags) = self.restore {
            let _ = rustix::fs::fcntl_setfl(&self.out, flags);
        }
    }
}

impl RecordWriter for StdoutSink {
    fn write_record(&mut self, frame: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(frame);
        if self.buf.len() >= STDOUT_BATCH {
            self.write_out()?;
        }
        Ok(frame.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.write_out()
    }
}
