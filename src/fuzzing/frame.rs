//! Fuzz entry points of the `frame` layer: the reader under arbitrary chunkings and the
//! newline finder's backends against each other and `memchr`.
//!
//! Owns the properties checked (chunking independence, agreement with a naive reference
//! splitter, backend agreement) and the `split_all` convenience for tests. Must never
//! relax a property to make an input pass: a disagreement panics.

use bytes::Bytes;

use crate::frame::{FrameError, Reader, Splitter, DEFAULT_MAX_LINE};

/// What a reader yields for one stream: `(line number, bytes)` or a framing error.
pub type Framed = Vec<Result<(u64, Vec<u8>), FrameError>>;

/// Feeds `chunks` in order (copying each), finishes, and collects every line and error.
pub fn split_all(chunks: &[&[u8]], max_line: usize) -> Framed {
    split_all_with(chunks, max_line, Splitter::detect())
}

/// [`split_all`] on an explicit newline backend.
pub fn split_all_with(chunks: &[&[u8]], max_line: usize, splitter: Splitter) -> Framed {
    let mut reader = Reader::with_splitter(max_line, splitter);
    let mut out = Vec::new();
    for chunk in chunks {
        reader.push_slice(chunk);
        drain(&mut reader, &mut out);
    }
    reader.finish();
    drain(&mut reader, &mut out);
    out
}

fn drain(reader: &mut Reader, out: &mut Framed) {
    while let Some(item) = reader.next_line() {
        out.push(item.map(|line| {
            assert_eq!(
                line.to_bytes(),
                line.as_bytes(),
                "to_bytes differs from as_bytes"
            );
            (line.number(), line.as_bytes().to_vec())
        }));
    }
}

/// The obvious splitter the reader must agree with: `split` on LF, the last segment only when
/// non-empty, too long before blank (PROFILE §2a).
pub fn reference_split(stream: &[u8], max_line: usize) -> Framed {
    let mut out = Vec::new();
    let segments: Vec<&[u8]> = stream.split(|&b| b == b'\n').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.into_iter().enumerate() {
        if i == last && segment.is_empty() {
            break;
        }
        let number = i as u64 + 1;
        if segment.len() > max_line {
            out.push(Err(FrameError::line_too_long(number, max_line)));
        } else if !segment.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
            out.push(Ok((number, segment.to_vec())));
        }
    }
    out
}

/// A tiny deterministic generator for chunk sizes (xorshift64*).
struct Sizes(u64);

impl Sizes {
    fn next(&mut self, max: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as usize % (max + 1)
    }
}

/// Cuts `stream` into chunks of 0..=`max` bytes (empty chunks included) chosen by `seed`.
fn chunk(stream: &[u8], seed: u64, max: usize) -> Vec<&[u8]> {
    let mut sizes = Sizes(seed | 1);
    let mut chunks = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        let n = sizes.next(max).min(rest.len());
        let (head, tail) = rest.split_at(n);
        chunks.push(head);
        rest = tail;
    }
    chunks
}

/// Byte 0 picks the line limit (0..=62, or the 8 MiB default for 63 mod 64), byte 1 the
/// chunking; the rest is the stream. Every chunking, and every backend, must give exactly
/// what one chunk gives, which must equal the naive reference splitter.
pub fn reader_chunking(data: &[u8]) {
    let (Some(&limit_byte), Some(&chunk_byte)) = (data.first(), data.get(1)) else {
        return;
    };
    let stream = data.get(2..).unwrap_or_default();
    let max_line = match usize::from(limit_byte % 64) {
        63 => DEFAULT_MAX_LINE,
        n => n,
    };
    let want = reference_split(stream, max_line);
    assert_eq!(
        split_all(&[stream], max_line),
        want,
        "one chunk vs reference"
    );

    let max_chunk = 1 + usize::from(chunk_byte % 80);
    let seed = u64::from(chunk_byte) << 32 | stream.len() as u64;
    let chunks = chunk(stream, seed, max_chunk);
    for splitter in Splitter::available() {
        let got = split_all_with(&chunks, max_line, splitter);
        assert_eq!(
            got,
            want,
            "{:?}, chunks of <= {max_chunk}",
            splitter.backend()
        );
    }
    if stream.len() <= 4096 {
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(split_all(&bytes, max_line), want, "one byte per chunk");
    }

    // The zero-copy path: chunks that are slices of one shared buffer.
    let shared = Bytes::copy_from_slice(stream);
    let mut reader = Reader::with_max_line(max_line);
    let mut got = Vec::new();
    let mut at = 0;
    for c in &chunks {
        reader.push(shared.slice(at..at + c.len()));
        at += c.len();
        drain(&mut reader, &mut got);
    }
    reader.finish();
    drain(&mut reader, &mut got);
    assert_eq!(got, want, "shared Bytes chunks");
    assert!(
        reader.buffered_capacity() <= max_line,
        "assembly buffer past the limit"
    );
}

/// Every backend's `find`, `count` and positions equal the scalar twin's and `memchr`'s, on
/// the input and on its sub-slices at every start and end offset up to 64.
pub fn splitter(data: &[u8]) {
    let backends = Splitter::available();
    let edge = data.len().min(65);
    for start in 0..edge {
        check_slice(&backends, data.get(start..).unwrap_or_default());
    }
    for cut in 1..edge {
        check_slice(&backends, data.get(..data.len() - cut).unwrap_or_default());
    }
}

fn check_slice(backends: &[Splitter], hay: &[u8]) {
    let want: Vec<usize> = memchr::memchr_iter(b'\n', hay).collect();
    let first = want.first().copied();
    for s in backends {
        let name = s.backend().name();
        assert_eq!(s.find(hay), first, "{name} find");
        assert_eq!(s.count(hay), want.len(), "{name} count");
        assert!(s.newlines(hay).eq(want.iter().copied()), "{name} positions");
    }
}
