//! [`Pump`]: any `io::Read` into a [`Deframer`], yielding record lines: the blocking read loop
//! of `check`, `canon` and agentx's stdin thread, and agentx's polled stdin (one
//! [`Pump::fill`] when `poll` says readable, then [`Pump::next_buffered`]).
//!
//! Owns: the blocking reads (retrying `Interrupted`), ending the stream at end of input so the
//! unterminated tail is a record like any other (WIRE-EOF-001), and the owned [`RecordLine`].
//! The buffers and the framer are the [`Deframer`]'s (shared with the host's read sides and
//! the tokio codec).
//! Must never: parse JSON, drop a line or an error, or hold more than the deframer's buffers
//! plus the reader's one line limit.
//!
//! ```
//! use agentx_io::Pump;
//!
//! let input = &b"{\"type\":\"a\"}\n\n{\"type\":\"b\"}"[..];
//! let lines: Vec<_> = Pump::new(input).map(|l| l.unwrap()).collect();
//! assert_eq!(lines.len(), 2);
//! assert_eq!((lines[1].number, &lines[1].bytes[..]), (3, &b"{\"type\":\"b\"}"[..]));
//! ```

use std::fmt;
use std::io::{self, Read};

use bytes::Bytes;

use super::deframer::{Deframer, DEFAULT_CHUNK};
use agentx_wire::frame::{FrameError, Line, Reader};

/// One record line, owned: its physical line number and its bytes without the LF (a trailing
/// CR is kept). The bytes share the read buffer when the line lay inside one chunk.
#[derive(Clone, PartialEq, Eq)]
pub struct RecordLine {
    /// Physical 1-based line number.
    pub number: u64,
    /// The line's bytes, LF excluded.
    pub bytes: Bytes,
}

impl From<Line<'_>> for RecordLine {
    fn from(line: Line<'_>) -> Self {
        RecordLine {
            number: line.number(),
            bytes: line.to_bytes(),
        }
    }
}

impl fmt::Debug for RecordLine {
    /// The number and length only: a line may carry user content.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordLine")
            .field("number", &self.number)
            .field("len", &self.bytes.len())
            .finish()
    }
}

/// What the pump's iterator yields instead of a line.
#[derive(Debug)]
pub enum PumpError {
    /// One line was not a frame (e.g. `line_too_long`); the next item is the following line.
    Frame(FrameError),
    /// Reading the input failed; the iterator ends after this item.
    Read(io::Error),
}

impl fmt::Display for PumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PumpError::Frame(e) => fmt::Display::fmt(e, f),
            PumpError::Read(e) => write!(f, "cannot read input: {}", e.kind()),
        }
    }
}

impl std::error::Error for PumpError {}

/// Reads an `io::Read` chunk by chunk into a [`Deframer`]. See the module docs.
pub struct Pump<R> {
    input: R,
    deframer: Deframer,
    eof: bool,
}

impl<R: Read> Pump<R> {
    /// A pump with the default line limit (8,388,608 bytes) and [`DEFAULT_CHUNK`].
    pub fn new(input: R) -> Self {
        Self::with_reader(input, Reader::new(), DEFAULT_CHUNK)
    }

    /// A pump over `reader` (its limit and splitter), asking `chunk` bytes (at least 1) per
    /// read.
    pub fn with_reader(input: R, reader: Reader, chunk: usize) -> Self {
        Pump {
            input,
            deframer: Deframer::new(reader, chunk),
            eof: false,
        }
    }

    /// The framer (for `lines_read`, `max_line`).
    pub fn reader(&self) -> &Reader {
        self.deframer.reader()
    }

    /// The input (e.g. the descriptor a caller polls before [`Pump::fill`]).
    pub fn input(&self) -> &R {
        &self.input
    }

    /// The next line or framing error of what was already read, without reading: `None` when
    /// a [`Pump::fill`] is needed, or once the input is over. After the end of input it drains
    /// the buffered lines, then the unterminated tail (WIRE-EOF-001).
    pub fn next_buffered(&mut self) -> Option<Result<RecordLine, FrameError>> {
        self.deframer
            .next_line()
            .map(|item| item.map(RecordLine::from))
    }

    /// Bytes read elsewhere (by a caller that read the same input ahead), framed after what
    /// was read before them, without a copy.
    pub fn push(&mut self, chunk: Bytes) {
        self.deframer.push(chunk);
    }

    /// End of input, seen by a caller that read the same input ahead: the buffered lines, then
    /// the unterminated tail, come out of [`Pump::next_buffered`]; no more reads.
    pub fn end(&mut self) {
        self.eof = true;
        self.deframer.finish();
    }

    /// Whether a read returned the end of input.
    pub fn is_finished(&self) -> bool {
        self.eof
    }

    /// Calls `on_line` with every line and framing error in input order, through the
    /// unterminated tail (WIRE-EOF-001). Stops at the first `Err` of `on_line` or of a read.
    /// Lines borrow the read buffer: nothing is copied for a line inside one chunk.
    pub fn each_line<E: From<io::Error>>(
        &mut self,
        mut on_line: impl FnMut(Result<Line<'_>, FrameError>) -> Result<(), E>,
    ) -> Result<(), E> {
        loop {
            while let Some(item) = self.deframer.next_line() {
                on_line(item)?;
            }
            if self.eof {
                return Ok(());
            }
            self.fill()?;
        }
    }

    /// Reads one chunk into the deframer; at end of input declares it finished and returns
    /// `Ok(false)`. A failed read keeps its buffer for the next one.
    pub fn fill(&mut self) -> io::Result<bool> {
        if self.eof {
            return Ok(false);
        }
        let n = loop {
            match self.input.read(self.deframer.buffer()) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        };
        self.deframer.filled(n);
        if n == 0 {
            self.eof = true;
        }
        Ok(n > 0)
    }
}

impl<R: Read> Iterator for Pump<R> {
    type Item = Result<RecordLine, PumpError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.deframer.next_line() {
                return Some(item.map(RecordLine::from).map_err(PumpError::Frame));
            }
            if self.eof {
                return None;
            }
            if let Err(e) = self.fill() {
                // A failed read ends the stream: no tail is invented from a broken input.
                self.eof = true;
                return Some(Err(PumpError::Read(e)));
            }
        }
    }
}

impl<R> fmt::Debug for Pump<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pump")
            .field("deframer", &self.deframer)
            .field("eof", &self.eof)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Yields its bytes a few at a time, with an `Interrupted` between reads.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
        interrupt: bool,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn wire_eof_001_lines_across_chunks_and_the_tail() {
        let data = b"{\"a\":1}\r\n  \n{\"b\":[1,2,3]}\n{\"tail\":true}";
        for step in 1..data.len() + 1 {
            for chunk in [1, 3, 64] {
                let input = Trickle {
                    data,
                    step,
                    interrupt: false,
                };
                let got: Vec<(u64, Vec<u8>)> = Pump::with_reader(input, Reader::new(), chunk)
                    .map(|l| {
                        let l = l.unwrap();
                        (l.number, l.bytes.to_vec())
                    })
                    .collect();
                assert_eq!(
                    got,
                    [
                        (1, b"{\"a\":1}\r".to_vec()),
                        (3, b"{\"b\":[1,2,3]}".to_vec()),
                        (4, b"{\"tail\":true}".to_vec())
                    ],
                    "step {step} chunk {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_released_buffer_is_reused_and_kept_lines_are_never_overwritten() {
        // One 7-byte record per 8-byte read, each let go of before the next read: all four
        // reads fill the same buffer.
        let data = b"{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n{\"d\":4}\n";
        let mut starts = Vec::new();
        let r: Result<(), io::Error> =
            Pump::with_reader(&data[..], Reader::new(), 8).each_line(|l| {
                starts.push(l.unwrap().as_bytes().as_ptr() as usize);
                Ok(())
            });
        r.unwrap();
        assert_eq!(starts.len(), 4);
        assert!(starts.iter().all(|&p| p == starts[0]), "{starts:?}");

        // Lines the caller keeps hold their buffer: the pump takes a fresh one instead.
        let kept: Vec<RecordLine> = Pump::with_reader(&data[..], Reader::new(), 8)
            .map(|l| l.unwrap())
            .collect();
        let got: Vec<&[u8]> = kept.iter().map(|l| &l.bytes[..]).collect();
        assert_eq!(
            got,
            [&b"{\"a\":1}"[..], b"{\"b\":2}", b"{\"c\":3}", b"{\"d\":4}"]
        );
    }

    #[test]
    fn line_limit_at_its_edge_then_the_next_line() {
        // Limit 4: "abcd" accepted, "abcde" one past is `line_too_long`, the next line parses.
        let input = &b"abcd\nabcde\nok\n"[..];
        let items: Vec<_> = Pump::with_reader(input, Reader::with_max_line(4), 2).collect();
        assert_eq!(items.len(), 3);
        assert_eq!(&items[0].as_ref().unwrap().bytes[..], b"abcd");
        match &items[1] {
            Err(PumpError::Frame(e)) => {
                assert_eq!((e.kind().as_str(), e.line()), ("line_too_long", 2))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(&items[2].as_ref().unwrap().bytes[..], b"ok");
    }

    #[test]
    fn a_read_error_ends_the_stream_after_the_lines_before_it() {
        struct Broken(bool);
        impl Read for Broken {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    return Err(io::ErrorKind::ConnectionReset.into());
                }
                buf[..4].copy_from_slice(b"{}\n{");
                Ok(4)
            }
        }
        let items: Vec<_> = Pump::new(Broken(false)).collect();
        assert_eq!(items.len(), 2);
        assert_eq!(&items[0].as_ref().unwrap().bytes[..], b"{}");
        match &items[1] {
            Err(PumpError::Read(e)) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset),
            other => panic!("{other:?}"),
        }

        let mut seen = 0;
        let r: Result<(), io::Error> = Pump::new(Broken(false)).each_line(|l| {
            assert!(l.is_ok());
            seen += 1;
            Ok(())
        });
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::ConnectionReset);
        assert_eq!(seen, 1);
    }
}
