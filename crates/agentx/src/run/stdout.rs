//! agentx's stdout: [`StdoutSink`], the loop's frame sink, and the [`ReadAhead`] it fills from
//! stdin while a write waits for the host.
//!
//! Owns: writing each drain of the session (the loop flushes after every drain) with as few
//! `write`s as the host's reading allows, all of it, and reading stdin ahead meanwhile. When
//! the loop reads stdin itself ([`super::inbox`]), each write is non-blocking by itself
//! (`pwritev2` with `RWF_NOWAIT`, which pipes and sockets honour): stdout's file status flags
//! are never changed, so whoever else holds the same pipe (a `2>&1` stderr, a shell's other
//! writers, one socket for both directions) is unaffected. A write the host is not ready for
//! waits in one `poll` over stdout and stdin, and what stdin brings meanwhile goes to the
//! read-ahead, up to [`MAX_LINES_IN_FLIGHT`] bytes, as far as a stdin thread would have read.
//! A host that writes all its input before it reads any output then deadlocks no sooner than
//! with a thread; past that bound it is backpressure (PROFILE §8), and memory stays bounded
//! (reads are merged into buffers of up to [`AHEAD_BLOCK`] bytes, so many small reads cost no
//! more than one large one). Only a pipe or a socket is written that way: elsewhere (a regular
//! file, a terminal, a device) there is no reader to wait for, and a regular file always polls
//! writable while XFS and btrfs answer `RWF_NOWAIT` with `EAGAIN` until a blocking write
//! updates its times, which retried forever. There, and where `RWF_NOWAIT` is refused (an
//! older kernel) or keeps failing while stdout polls writable, stdout is written with blocking
//! writes and nothing is read ahead.
//! Must never: write anything but the frames it was handed, in order, each whole; frame or
//! parse what it reads ahead (the inbox does, in order, before it reads stdin again); change
//! stdout's flags.

use std::collections::VecDeque;
use std::io;
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::io::Errno;

use agentx_io::RecordWriter;

use super::event::{MAX_LINES_IN_FLIGHT, STDIN_CHUNK};

/// Reads ahead are appended to one buffer until it holds this many bytes.
pub const AHEAD_BLOCK: usize = 1 << 20;

/// Stdin read while a write to stdout waited: blocks in input order, then how input ended.
#[derive(Default)]
pub struct ReadAhead {
    /// Full blocks, oldest first.
    blocks: VecDeque<Bytes>,
    /// The block reads are appended to.
    filling: BytesMut,
    /// Bytes in `blocks` and `filling`.
    bytes: usize,
    /// `Ok`: end of input; `Err`: a read failed.
    end: Option<Result<(), ()>>,
    /// The inbox stopped taking input: nothing more is read.
    stopped: bool,
    scratch: Vec<u8>,
}

/// The read-ahead the sink fills and the inbox drains (both on the loop's thread).
pub type SharedReadAhead = Arc<Mutex<ReadAhead>>;

impl ReadAhead {
    /// The oldest bytes read ahead (a full block, else what the filling one holds).
    pub fn pop(&mut self) -> Option<Bytes> {
        let chunk = match self.blocks.pop_front() {
            Some(b) => b,
            None if !self.filling.is_empty() => self.filling.split().freeze(),
            None => return None,
        };
        self.bytes -= chunk.len();
        Some(chunk)
    }

    /// How input ended, once every byte is out (`Ok`: end of input; `Err`: a failed read).
    pub fn take_end(&mut self) -> Option<Result<(), ()>> {
        if self.bytes == 0 {
            self.end.take()
        } else {
            None
        }
    }

    /// Whether nothing is read ahead (no bytes, no end of input waiting).
    pub fn is_idle(&self) -> bool {
        self.bytes == 0 && self.end.is_none()
    }

    /// The inbox handed out its last event: nothing more is read ahead.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Whether it may read more: input not over, under [`MAX_LINES_IN_FLIGHT`] bytes.
    fn wants_more(&self) -> bool {
        !self.stopped && self.end.is_none() && self.bytes < MAX_LINES_IN_FLIGHT
    }

    /// One read of `input` (which `poll` said is ready), at most up to the bound, appended to
    /// the filling block.
    pub(super) fn read_from(&mut self, input: impl AsFd) {
        let room = (MAX_LINES_IN_FLIGHT - self.bytes.min(MAX_LINES_IN_FLIGHT)).min(STDIN_CHUNK);
        if room == 0 {
            return;
        }
        self.scratch.resize(STDIN_CHUNK, 0);
        let n = loop {
            match rustix::io::read(&input, &mut self.scratch[..room]) {
                Err(Errno::INTR) => continue,
                // A non-blocking stdin another reader drained first: nothing read.
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
        self.filling.extend_from_slice(&self.scratch[..n]);
        self.bytes += n;
        if self.filling.len() >= AHEAD_BLOCK {
            let full = self.filling.split().freeze();
            self.blocks.push_back(full);
        }
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
/// per record, while the host keeps up). The loop flushes after every drain, so a frame never
/// waits for a later event (a drain that started a model is held only while that model's
/// events already wait: an echo turn is one write), and the flush still waits while the host
/// is not reading (backpressure). See the module docs for the read-ahead.
pub struct StdoutSink {
    out: io::Stdout,
    buf: Vec<u8>,
    /// With the inbox's read-ahead: stdin and the read-ahead it fills while a write waits.
    ahead: Option<(io::Stdin, SharedReadAhead)>,
    /// Writes go out with `RWF_NOWAIT` (until stdout refuses it).
    nowait: bool,
}

impl StdoutSink {
    /// The process's stdout; with `ahead` (the inbox's, when it reads stdin itself), writes
    /// that do not wait and stdin read ahead while the host is not ready for them.
    pub fn new(ahead: Option<SharedReadAhead>) -> StdoutSink {
        let out = io::stdout();
        StdoutSink {
            nowait: ahead.is_some() && waits_for_reader(out.as_fd()),
            ahead: ahead.map(|a| (io::stdin(), a)),
            out,
            buf: Vec::new(),
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
        let mut refusals = Refusals::default();
        while at < self.buf.len() {
            let rest = &self.buf[at..];
            let wrote = if self.nowait {
                match nowait_write(&self.out, rest) {
                    // Not honoured here (a terminal, some files, an older kernel): blocking
                    // writes from now on, nothing read ahead.
                    Err(Errno::OPNOTSUPP) | Err(Errno::INVAL) | Err(Errno::NOSYS) => {
                        self.nowait = false;
                        continue;
                    }
                    other => other,
                }
            } else {
                rustix::io::write(&self.out, rest)
            };
            match wrote {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    at += n;
                    refusals = Refusals::default();
                }
                Err(Errno::INTR) => {}
                Err(Errno::AGAIN) if self.nowait && refusals.refused(writable_now(&self.out)) => {
                    self.nowait = false;
                }
                Err(Errno::AGAIN) => self.wait()?,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Waits until stdout can take more, reading stdin ahead meanwhile (while the read-ahead
    /// has room and writes do not wait by themselves).
    fn wait(&mut self) -> io::Result<()> {
        loop {
            let ahead = self
                .ahead
                .as_ref()
                .filter(|(_, a)| self.nowait && lock(a).wants_more());
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

/// Whether stdout is a pipe or a socket, where a write that does not fit waits for the
/// reader (and `RWF_NOWAIT` says so with `EAGAIN` until `poll` says writable).
fn waits_for_reader(out: std::os::fd::BorrowedFd<'_>) -> bool {
    use std::os::unix::fs::FileTypeExt;
    out.try_clone_to_owned()
        .map(std::fs::File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_socket())
}

/// Whether stdout takes bytes now (a zero-timeout `poll`).
fn writable_now(out: &io::Stdout) -> bool {
    let mut fds = [PollFd::new(out, PollFlags::OUT)];
    let now = timespec(std::time::Duration::ZERO);
    matches!(poll(&mut fds, Some(&now)), Ok(n) if n > 0)
}

/// After this many `EAGAIN`s in a row from a stdout that polled writable each time,
/// `RWF_NOWAIT` counts as refused.
const REFUSALS_MAX: u32 = 64;

/// `EAGAIN`s of one write that `poll` contradicted: one can be the host reading between the
/// write and the look, [`REFUSALS_MAX`] in a row are a stdout that refuses `RWF_NOWAIT`
/// without saying so (then writes block, as for a terminal), never a loop without end.
#[derive(Default)]
struct Refusals(u32);

impl Refusals {
    /// An `EAGAIN` that stdout's `poll` answered with `writable`; `true`: give up `RWF_NOWAIT`.
    fn refused(&mut self, writable: bool) -> bool {
        if !writable {
            self.0 = 0;
            return false;
        }
        self.0 += 1;
        self.0 >= REFUSALS_MAX
    }
}

/// One write that takes what fits now and never waits (`EAGAIN` when nothing fits).
#[cfg(all(target_os = "linux", not(target_os = "android")))]
fn nowait_write(out: &io::Stdout, bytes: &[u8]) -> Result<usize, Errno> {
    // u64::MAX: at the current position (pipes and sockets have none).
    use rustix::io::{pwritev2, ReadWriteFlags};
    pwritev2(
        out,
        &[io::IoSlice::new(bytes)],
        u64::MAX,
        ReadWriteFlags::NOWAIT,
    )
}

/// Elsewhere there is no per-write `RWF_NOWAIT`: refused, so writes block.
#[cfg(not(all(target_os = "linux", not(target_os = "android"))))]
fn nowait_write(_: &io::Stdout, _: &[u8]) -> Result<usize, Errno> {
    Err(Errno::OPNOTSUPP)
}

/// The read-ahead, whatever a panic elsewhere left it as (it holds only bytes and counts).
pub(super) fn lock(a: &SharedReadAhead) -> std::sync::MutexGuard<'_, ReadAhead> {
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

/// A `poll` timeout of `d`.
pub(super) fn timespec(d: Duration) -> Timespec {
    Timespec {
        tv_sec: d.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: d.subsec_nanos().into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn only_pipes_and_sockets_are_written_without_waiting() {
        let (rd, wr) = io::pipe().unwrap();
        assert!(waits_for_reader(rd.as_fd()) && waits_for_reader(wr.as_fd()));
        let (a, _b) = std::os::unix::net::UnixStream::pair().unwrap();
        assert!(waits_for_reader(a.as_fd()));
        // A regular file (XFS and btrfs answer `RWF_NOWAIT` on one with `EAGAIN` while it
        // polls writable: the write retried forever) and a device get blocking writes.
        let path = std::env::temp_dir().join(format!("agentx-stdout-{}", std::process::id()));
        let file = std::fs::File::create(&path).unwrap();
        assert!(!waits_for_reader(file.as_fd()));
        std::fs::remove_file(&path).unwrap();
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .unwrap();
        assert!(!waits_for_reader(null.as_fd()));
    }

    #[test]
    fn eagain_while_stdout_polls_writable_gives_up_rwf_nowait_after_the_bound() {
        let mut r = Refusals::default();
        for _ in 1..REFUSALS_MAX {
            assert!(!r.refused(true));
        }
        // A real wait (stdout full) in between starts the count again.
        assert!(!r.refused(false));
        for _ in 1..REFUSALS_MAX {
            assert!(!r.refused(true));
        }
        assert!(r.refused(true));
    }

    #[test]
    fn small_reads_ahead_are_merged_into_one_block() {
        let (rd, mut wr) = io::pipe().unwrap();
        let mut ahead = ReadAhead::default();
        for i in 0..10_000u32 {
            wr.write_all(&[b'a' + (i % 26) as u8]).unwrap();
            ahead.read_from(&rd);
        }
        assert_eq!(ahead.len(), 10_000);
        let block = ahead.pop().unwrap();
        assert_eq!(block.len(), 10_000);
        assert_eq!(&block[..3], b"abc");
        assert!(ahead.pop().is_none() && ahead.is_idle());
    }

    #[test]
    fn the_read_ahead_stops_exactly_at_its_bound_then_hands_out_the_end() {
        let (rd, mut wr) = io::pipe().unwrap();
        let writer = std::thread::spawn(move || {
            // 3 bytes more than the bound, then EOF.
            let block = vec![b'x'; 1 << 16];
            for _ in 0..MAX_LINES_IN_FLIGHT / block.len() {
                wr.write_all(&block).unwrap();
            }
            wr.write_all(b"xyz").unwrap();
        });
        let mut ahead = ReadAhead::default();
        while ahead.wants_more() {
            ahead.read_from(&rd);
        }
        assert_eq!(ahead.len(), MAX_LINES_IN_FLIGHT);
        let mut taken = 0;
        while let Some(b) = ahead.pop() {
            assert!(b.len() <= AHEAD_BLOCK + STDIN_CHUNK);
            taken += b.len();
        }
        assert_eq!(taken, MAX_LINES_IN_FLIGHT);
        // Room again: the rest, then the end of input.
        while ahead.wants_more() {
            ahead.read_from(&rd);
        }
        writer.join().unwrap();
        assert_eq!(ahead.pop().as_deref(), Some(&b"xyz"[..]));
        assert_eq!(ahead.take_end(), Some(Ok(())));
    }
}
