//! [`Deframer`]: the read side of every reader in the crate without its I/O: the read buffers
//! and the framer ([`frame::Reader`](agentx_wire::frame::Reader)). A blocking loop ([`Pump`](super::Pump):
//! `check`, `canon`, agentx's stdin read in its loop's wait or by a thread), the host's read sides (`host::stream::Output`, under the
//! blocking and the tokio client) and the tokio codec ([`LineCodec`](super::LineCodec)) each
//! drive it with their own I/O.
//!
//! Owns: the buffers reads fill (two, used as they come free: a buffer the framer and every
//! line handed out have let go of is filled again as it is, neither reallocated nor zeroed
//! again; only a fresh buffer is zeroed, once), lending each read's bytes to the framer without
//! a copy, and end of input (a read of 0 bytes, or [`Deframer::finish`]), after which the
//! unterminated tail is a line like any other (WIRE-EOF-001). Line limits, blank lines and
//! physical line numbers are the framer's, unchanged.
//! Must never: read, block or wait; parse JSON; drop a line or an error; hold more than two
//! read buffers plus the framer's one line limit (a buffer still shared by lines the caller
//! keeps is left to them).
//!
//! ```
//! use agentx_io::Deframer;
//! use agentx_wire::frame::Reader;
//!
//! let mut input = &b"{\"type\":\"a\"}\n\n{\"type\":\"b\"}"[..];
//! let mut deframer = Deframer::new(Reader::new(), 4);
//! let mut lines = Vec::new();
//! loop {
//!     // The caller's I/O: here a slice, a few bytes at a time.
//!     let buf = deframer.buffer();
//!     let n = buf.len().min(input.len());
//!     buf[..n].copy_from_slice(&input[..n]);
//!     input = &input[n..];
//!     deframer.filled(n); // 0: end of input
//!     while let Some(line) = deframer.next_line() {
//!         let line = line.unwrap();
//!         lines.push((line.number(), line.as_bytes().to_vec()));
//!     }
//!     if n == 0 {
//!         break;
//!     }
//! }
//! assert_eq!(lines, [(1, b"{\"type\":\"a\"}".to_vec()), (3, b"{\"type\":\"b\"}".to_vec())]);
//! ```

use std::fmt;

use bytes::{Bytes, BytesMut};

use agentx_wire::frame::{FrameError, Line, Reader};

/// Default bytes asked of the input per read.
pub const DEFAULT_CHUNK: usize = 1 << 20;

/// Read buffers and the framer. See the module docs.
pub struct Deframer {
    reader: Reader,
    /// Buffers lent to the framer, each whole (`chunk` initialized bytes); the framer got a
    /// slice of it. Taken back with `try_into_mut` once the framer and every line handed out
    /// have let go of it.
    bufs: [Option<Bytes>; 2],
    /// The slot of the last buffer filled (tried first: it is the one still in cache).
    last: usize,
    /// The buffer the next read fills, once [`Deframer::buffer`] handed it out, and its slot.
    filling: Option<(usize, BytesMut)>,
    chunk: usize,
}

impl Default for Deframer {
    /// The default line limit (8,388,608 bytes) and [`DEFAULT_CHUNK`].
    fn default() -> Self {
        Deframer::new(Reader::new(), DEFAULT_CHUNK)
    }
}

impl Deframer {
    /// A deframer over `reader` (its limit and splitter) whose buffers hold `chunk` bytes (at
    /// least 1). Nothing is allocated until the first [`Deframer::buffer`].
    pub fn new(reader: Reader, chunk: usize) -> Self {
        Deframer {
            reader,
            bufs: [None, None],
            last: 0,
            filling: None,
            chunk: chunk.max(1),
        }
    }

    /// The framer (for `lines_read`, `max_line`).
    pub fn reader(&self) -> &Reader {
        &self.reader
    }

    /// The buffer the next read fills (`chunk` bytes): the same one until
    /// [`Deframer::filled`], so a read that failed or was interrupted is simply retried.
    pub fn buffer(&mut self) -> &mut [u8] {
        if self.filling.is_none() {
            self.filling = Some(self.take_buffer());
        }
        match &mut self.filling {
            Some((_, buf)) => buf,
            None => &mut [],
        }
    }

    /// The first `n` bytes of [`Deframer::buffer`] were read and go to the framer without a
    /// copy; `n == 0` is end of input ([`Deframer::finish`]). Drain [`Deframer::next_line`]
    /// before the next read.
    pub fn filled(&mut self, n: usize) {
        let Some((slot, buf)) = self.filling.take() else {
            // No buffer was handed out: nothing was read into one.
            if n == 0 {
                self.finish();
            }
            return;
        };
        let whole = buf.freeze();
        if n == 0 {
            self.bufs[slot] = Some(whole);
            self.finish();
            return;
        }
        self.reader.push(whole.slice(..n.min(whole.len())));
        self.bufs[slot] = Some(whole);
        self.last = slot;
    }

    /// Bytes read into a buffer the caller owns (tokio_util's `FramedRead` keeps its own),
    /// handed to the framer without a copy.
    pub fn push(&mut self, chunk: Bytes) {
        self.reader.push(chunk);
    }

    /// End of input: the following [`Deframer::next_line`] calls drain what is buffered, then
    /// the unterminated tail (WIRE-EOF-001).
    pub fn finish(&mut self) {
        self.reader.finish();
    }

    /// Whether the input ended.
    pub fn is_finished(&self) -> bool {
        self.reader.is_finished()
    }

    /// The next line or framing error; `None` when more input is needed (or, after the end of
    /// input, when the stream is over). Lines borrow the read buffer: nothing is copied for a
    /// line inside one read.
    pub fn next_line(&mut self) -> Option<Result<Line<'_>, FrameError>> {
        self.reader.next_line()
    }

    /// A buffer for the next read and its slot: the last one filled if it came free, else the
    /// other, else a fresh one (zeroed once) in the slot of the older buffer, which is left to
    /// the lines that still hold it.
    fn take_buffer(&mut self) -> (usize, BytesMut) {
        for slot in [self.last, self.last ^ 1] {
            match self.bufs[slot].take().map(Bytes::try_into_mut) {
                Some(Ok(buf)) if buf.len() == self.chunk => return (slot, buf),
                Some(Err(shared)) => self.bufs[slot] = Some(shared),
                _ => {}
            }
        }
        let slot = if self.bufs[self.last].is_none() {
            self.last
        } else {
            self.last ^ 1
        };
        self.bufs[slot] = None;
        (slot, BytesMut::zeroed(self.chunk))
    }
}

impl fmt::Debug for Deframer {
    /// Sizes only: the buffers hold the peer's bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deframer")
            .field("chunk", &self.chunk)
            .field("buffers", &self.bufs.iter().flatten().count())
            .field("reader", &self.reader)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies `data` into the next buffer and lends it to the framer.
    fn read(d: &mut Deframer, data: &[u8]) -> usize {
        let buf = d.buffer();
        buf[..data.len()].copy_from_slice(data);
        let at = buf.as_ptr() as usize;
        d.filled(data.len());
        at
    }

    fn owned(d: &mut Deframer) -> Vec<Bytes> {
        let mut out = Vec::new();
        while let Some(line) = d.next_line() {
            out.push(line.unwrap().to_bytes());
        }
        out
    }

    #[test]
    fn a_buffer_is_reused_once_free_and_never_while_a_kept_line_shares_it() {
        let mut d = Deframer::new(Reader::new(), 16);
        // Released after each read: one buffer for every read.
        let a = read(&mut d, b"{\"a\":1}\n");
        drop(owned(&mut d));
        assert_eq!(read(&mut d, b"{\"b\":2}\n"), a);
        // Kept: the next read takes the other slot, then the one after that, with lines kept
        // from both, a fresh buffer; every kept line still reads as it was.
        let b = owned(&mut d);
        let other = read(&mut d, b"{\"c\":3}\n");
        assert_ne!(other, a);
        let c = owned(&mut d);
        let fresh = read(&mut d, b"{\"d\":4}\n");
        assert!(fresh != a && fresh != other);
        let e = owned(&mut d);
        assert_eq!(
            [&b[0][..], &c[0][..], &e[0][..]],
            [&b"{\"b\":2}"[..], b"{\"c\":3}", b"{\"d\":4}"]
        );
        // Once the lines are gone, the last buffer filled comes back first.
        drop((b, c, e));
        assert_eq!(read(&mut d, b"{\"e\":5}\n"), fresh);
    }

    #[test]
    fn an_unfilled_buffer_is_handed_out_again_and_zero_bytes_end_the_input() {
        let mut d = Deframer::new(Reader::with_max_line(4), 8);
        let first = d.buffer().as_ptr();
        // A failed or interrupted read: the same buffer next time.
        assert_eq!(d.buffer().as_ptr(), first);
        assert_eq!(d.buffer().len(), 8);
        read(&mut d, b"abcd\nab");
        assert_eq!(&owned(&mut d)[..], [&b"abcd"[..]]);
        assert!(!d.is_finished());
        // WIRE-EOF-001: at end of input the unterminated tail is a line, its limit exact.
        read(&mut d, b"cd");
        assert!(owned(&mut d).is_empty());
        d.filled(0);
        assert!(d.is_finished());
        let tail = d.next_line().unwrap().unwrap();
        assert_eq!((tail.number(), tail.as_bytes()), (2, &b"abcd"[..]));
        assert!(d.next_line().is_none());
    }

    #[test]
    fn pushed_chunks_frame_like_read_ones_and_debug_shows_no_bytes() {
        let mut d = Deframer::new(Reader::with_max_line(4), 8);
        d.push(Bytes::from_static(b"{\"sk-SECRET\"}\nok\n  \n"));
        let first = d.next_line().unwrap().unwrap_err();
        assert_eq!((first.kind().as_str(), first.line()), ("line_too_long", 1));
        let ok = d.next_line().unwrap().unwrap();
        assert_eq!((ok.number(), ok.as_bytes()), (2, &b"ok"[..]));
        assert!(d.next_line().is_none());
        assert_eq!(d.reader().lines_read(), 3);
        d.push(Bytes::from_static(b"sk-SECRET"));
        let shown = format!("{d:?}");
        assert!(
            !shown.contains("SECRET") && shown.contains("chunk"),
            "{shown}"
        );
    }
}
