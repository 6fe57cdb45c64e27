//! The line-length limit (PROFILE §2a): 8,388,608 bytes accepted, 8,388,609 rejected with
//! `line_too_long`, the next line still parses, and no buffer grows past the limit.

use agentx_wire::frame::{FrameError, FrameErrorKind, Reader, DEFAULT_MAX_LINE};
use bytes::Bytes;

type Item = Result<(u64, usize), FrameError>;

/// Feeds `stream` in chunks of `size`, returning (line, length) or the error, plus the
/// largest assembly-buffer capacity seen.
fn read_sized(stream: &[u8], size: usize, reader: &mut Reader) -> (Vec<Item>, usize) {
    let mut out = Vec::new();
    let mut peak = 0;
    for c in stream.chunks(size) {
        reader.push(Bytes::copy_from_slice(c));
        peak = peak.max(reader.buffered_capacity());
        while let Some(item) = reader.next_line() {
            out.push(item.map(|l| (l.number(), l.as_bytes().len())));
            peak = peak.max(reader.buffered_capacity());
        }
    }
    reader.finish();
    while let Some(item) = reader.next_line() {
        out.push(item.map(|l| (l.number(), l.as_bytes().len())));
    }
    peak = peak.max(reader.buffered_capacity());
    (out, peak)
}

fn stream_with(lengths: &[usize]) -> Vec<u8> {
    let mut s = Vec::new();
    for &n in lengths {
        // A line of exactly `n` bytes: "", "7", "[]", "[7]", "[77]", ...
        match n {
            0 => {}
            1 => s.push(b'7'),
            _ => {
                s.push(b'[');
                s.extend(std::iter::repeat_n(b'7', n - 2));
                s.push(b']');
            }
        }
        s.push(b'\n');
    }
    s
}

#[test]
fn default_limit_is_8_mib() {
    assert_eq!(DEFAULT_MAX_LINE, 8_388_608);
    assert_eq!(Reader::new().max_line(), 8_388_608);
}

#[test]
fn at_the_default_limit_accepted_one_past_rejected_next_line_parses() {
    let stream = stream_with(&[8_388_608, 8_388_609, 2, 8_388_608]);
    for size in [stream.len(), 1 << 20, 65_536 + 1] {
        let (got, peak) = read_sized(&stream, size, &mut Reader::new());
        assert_eq!(got.len(), 4, "chunk size {size}");
        assert_eq!(got[0], Ok((1, 8_388_608)), "at the limit: accepted");
        let e = got[1].expect_err("one past the limit: rejected");
        assert_eq!(e.kind(), FrameErrorKind::LineTooLong);
        assert_eq!(e.kind().as_str(), "line_too_long");
        assert_eq!(e.line(), 2);
        assert_eq!(e.to_string(), "line too long (limit 8388608 bytes)");
        assert_eq!(got[2], Ok((3, 2)), "the next line parses");
        assert_eq!(got[3], Ok((4, 8_388_608)));
        assert!(peak <= DEFAULT_MAX_LINE, "buffer {peak} past the limit");
    }
}

#[test]
fn cr_counts_toward_the_limit() {
    let mut stream = vec![b'x'; 9];
    stream.extend_from_slice(b"\r\n");
    stream.extend_from_slice(&[b'y'; 10]);
    stream.extend_from_slice(b"\n");
    for size in 1..=stream.len() {
        let (got, _) = read_sized(&stream, size, &mut Reader::with_max_line(10));
        assert_eq!(got, vec![Ok((1, 10)), Ok((2, 10))], "size {size}");
        let (got, _) = read_sized(&stream, size, &mut Reader::with_max_line(9));
        assert!(got[0].is_err() && got[1].is_err(), "size {size}");
    }
}

#[test]
fn small_limit_edges_under_every_chunk_size() {
    // Limit 16: lengths 16 (ok), 17 (too long), 0 (blank), 1, 40 (too long), 16 unterminated.
    let mut stream = stream_with(&[16, 17, 0, 1, 40]);
    stream.extend_from_slice(&[b'z'; 16]);
    let want_ok = |n, len| Ok((n, len));
    let mut runs = 0;
    for size in 1..=stream.len() {
        let (got, peak) = read_sized(&stream, size, &mut Reader::with_max_line(16));
        assert_eq!(got.len(), 5, "size {size}: {got:?}");
        assert_eq!(got[0], want_ok(1, 16));
        assert_eq!(got[1].map_err(|e| e.line()), Err(2));
        assert_eq!(got[2], want_ok(4, 1));
        assert_eq!(got[3].map_err(|e| e.line()), Err(5));
        assert_eq!(
            got[4],
            want_ok(6, 16),
            "final unterminated line at the limit"
        );
        assert!(peak <= 16, "size {size}: buffer {peak}");
        runs += 1;
    }
    // One past the limit on the unterminated final line.
    stream.push(b'z');
    for size in 1..=stream.len() {
        let (got, _) = read_sized(&stream, size, &mut Reader::with_max_line(16));
        assert_eq!(got[4].map_err(|e| e.line()), Err(6), "size {size}");
        runs += 1;
    }
    eprintln!("small_limit_edges: {runs} chunk sizes");
}

#[test]
fn whitespace_only_line_past_the_limit_is_too_long() {
    // The length rule comes first: the reader never buffers past the limit to find out.
    let mut stream = vec![b' '; 20];
    stream.extend_from_slice(b"\n{}\n");
    for size in 1..=stream.len() {
        let (got, _) = read_sized(&stream, size, &mut Reader::with_max_line(10));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].map_err(|e| e.line()), Err(1));
        assert_eq!(got[1], Ok((2, 2)));
    }
}

#[test]
fn a_50_mb_line_never_grows_the_buffer_past_the_limit() {
    const LIMIT: usize = 1 << 20;
    let mut stream = vec![b'a'; 50_000_000];
    stream.extend_from_slice(b"\n{\"after\":true}\n");
    stream.extend_from_slice(&vec![b'b'; LIMIT]);
    stream.extend_from_slice(b"\n");
    for size in [4096, 65_536, 1 << 20, 3 << 20] {
        let (got, peak) = read_sized(&stream, size, &mut Reader::with_max_line(LIMIT));
        assert_eq!(got.len(), 3, "size {size}");
        assert_eq!(got[0].map_err(|e| e.line()), Err(1));
        assert_eq!(got[1], Ok((2, 14)));
        assert_eq!(got[2], Ok((3, LIMIT)));
        assert!(peak <= LIMIT, "size {size}: buffer grew to {peak}");
        eprintln!("chunk {size}: peak assembly buffer {peak} bytes (limit {LIMIT})");
    }
}

#[test]
fn zero_limit_accepts_only_blank_lines() {
    let (got, peak) = read_sized(b"\n\nx\n\n", 1, &mut Reader::with_max_line(0));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].map_err(|e| e.line()), Err(3));
    assert_eq!(peak, 0);
}
