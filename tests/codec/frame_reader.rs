//! The incremental reader: spec acceptance scenario 1, blank lines, CRLF, the final
//! unterminated record (WIRE-EOF-001), line numbers, zero-copy hand-out, and chunking
//! independence (every split point of small streams gives the same output).

use agentx_wire::frame::{FrameError, Reader, Splitter};
use bytes::Bytes;

type Item = Result<(u64, Vec<u8>), FrameError>;

/// Feeds `chunks` (copying), finishes, and collects everything the reader yields.
fn read_chunks(chunks: &[&[u8]], max_line: usize) -> Vec<Item> {
    let mut r = Reader::with_max_line(max_line);
    let mut out = Vec::new();
    for c in chunks {
        r.push(Bytes::copy_from_slice(c));
        drain(&mut r, &mut out);
    }
    r.finish();
    drain(&mut r, &mut out);
    out
}

fn drain(r: &mut Reader, out: &mut Vec<Item>) {
    while let Some(item) = r.next_line() {
        out.push(item.map(|l| (l.number(), l.as_bytes().to_vec())));
    }
}

fn ok(n: u64, s: &str) -> Item {
    Ok((n, s.as_bytes().to_vec()))
}

#[test]
fn acceptance_1_three_records_split_across_chunks_final_newline_omitted() {
    // sdk-wire-protocol acceptance scenario 1: all three parse once.
    let stream = br#"{"type":"keep_alive"}
{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}
{"type":"keep_alive","n":3}"#;
    let want = vec![
        ok(1, r#"{"type":"keep_alive"}"#),
        ok(
            2,
            r#"{"type":"user","message":{"role":"user","content":"hi"},"parent_tool_use_id":null}"#,
        ),
        ok(3, r#"{"type":"keep_alive","n":3}"#),
    ];
    let mut chunkings = 0;
    for a in 0..=stream.len() {
        for b in (a..=stream.len()).step_by(5) {
            let got = read_chunks(&[&stream[..a], &stream[a..b], &stream[b..]], 1 << 20);
            assert_eq!(got, want, "split at {a}, {b}");
            assert_parses_as_the_three_records(&got);
            chunkings += 1;
        }
    }
    eprintln!("acceptance 1: {chunkings} chunkings, each yielding all three records once");
}

/// Scenario 1 says "all three parse once": each framed line decodes as the typed input record
/// it holds.
fn assert_parses_as_the_three_records(lines: &[Item]) {
    use agentx_wire::json::Parser;
    use agentx_wire::wire::{InputRecord, UserContent, UserMessage};
    let mut parser = Parser::new();
    let records: Vec<InputRecord<'_>> = lines
        .iter()
        .map(|l| {
            let (_, bytes) = l.as_ref().expect("a framed line");
            InputRecord::decode_line(bytes, &mut parser).expect("a valid input record")
        })
        .collect();
    assert_eq!(records.len(), 3);
    assert!(matches!(records[0], InputRecord::KeepAlive));
    match &records[1] {
        InputRecord::User(u) => {
            assert_eq!(u.parent_tool_use_id, None);
            assert!(matches!(
                &u.message,
                UserMessage::Object { versioned: false, content: UserContent::Text(t) } if t == "hi"
            ));
        }
        other => panic!("{other:?}"),
    }
    // PROFILE §2b: nothing but `type` is read from keep_alive.
    assert!(matches!(records[2], InputRecord::KeepAlive));
}

#[test]
fn final_record_needs_finish() {
    // WIRE-EOF-001: the unterminated tail is held until EOF, then parsed like a line.
    let mut r = Reader::new();
    r.push_slice(b"{\"a\":1}\n{\"b\":2}");
    let mut out = Vec::new();
    drain(&mut r, &mut out);
    assert_eq!(out, vec![ok(1, r#"{"a":1}"#)]);
    assert!(r.next_line().is_none(), "tail must wait for more input");
    r.finish();
    drain(&mut r, &mut out);
    assert_eq!(out, vec![ok(1, r#"{"a":1}"#), ok(2, r#"{"b":2}"#)]);
    assert!(r.next_line().is_none());
    assert!(r.next_line().is_none(), "fused after EOF");
    assert_eq!(r.lines_read(), 2);
}

#[test]
fn blank_and_whitespace_only_lines_are_skipped_but_counted() {
    // PROFILE §2a: empty or only space, tab, CR (LF ends the line) is blank.
    let stream = b"\n \n\t\t\n\r\n \t\r \n{}\n\n  \r\n[1]\n \t";
    let got = read_chunks(&[stream], 100);
    assert_eq!(got, vec![ok(6, "{}"), ok(9, "[1]")]);
    // Other bytes are not blank here, even if a JSON parser would reject them.
    let got = read_chunks(&[b"\x0c\n\x0b\n\xc2\xa0\n"], 100);
    assert_eq!(got, vec![ok(1, "\x0c"), ok(2, "\x0b"), ok(3, "\u{a0}")]);
}

#[test]
fn crlf_keeps_the_cr_as_part_of_the_line() {
    // A CR before the LF is JSON whitespace (PROFILE §2a); the frame layer hands it on.
    let stream = b"{\"a\":1}\r\n{\"b\":2}\r\n\r\n{\"c\":3}\r";
    let want = vec![
        ok(1, "{\"a\":1}\r"),
        ok(2, "{\"b\":2}\r"),
        ok(4, "{\"c\":3}\r"),
    ];
    for cut in 0..=stream.len() {
        assert_eq!(
            read_chunks(&[&stream[..cut], &stream[cut..]], 100),
            want,
            "cut {cut}"
        );
    }
    // A lone CR is not a line end.
    assert_eq!(read_chunks(&[b"a\rb\n"], 100), vec![ok(1, "a\rb")]);
}

#[test]
fn final_unterminated_record_cases() {
    assert_eq!(read_chunks(&[b"x"], 10), vec![ok(1, "x")]);
    assert_eq!(read_chunks(&[b"x\n"], 10), vec![ok(1, "x")]);
    assert_eq!(read_chunks(&[b"x\n  "], 10), vec![ok(1, "x")]);
    assert_eq!(read_chunks(&[b"x\n\r"], 10), vec![ok(1, "x")]);
    assert_eq!(read_chunks(&[b"", b"", b""], 10), vec![]);
    assert_eq!(read_chunks(&[], 10), vec![]);
    assert_eq!(read_chunks(&[b"\n\n\ny"], 10), vec![ok(4, "y")]);
}

#[test]
fn line_numbers_are_physical() {
    let stream = b"a\n\nb\n   \nc\nd\n\n\n\ne";
    let got = read_chunks(&[stream], 10);
    assert_eq!(
        got,
        vec![ok(1, "a"), ok(3, "b"), ok(5, "c"), ok(6, "d"), ok(10, "e")]
    );
}

#[test]
fn lines_inside_one_chunk_are_not_copied() {
    let chunk = Bytes::from_static(b"{\"a\":1}\n{\"bb\":2}\n{\"tail\"");
    let range = chunk.as_ptr() as usize..chunk.as_ptr() as usize + chunk.len();
    let mut r = Reader::new();
    r.push(chunk.clone());
    let mut seen = 0;
    while let Some(item) = r.next_line() {
        let line = item.expect("no error");
        assert!(line.is_zero_copy());
        assert!(range.contains(&(line.as_bytes().as_ptr() as usize)));
        let owned = line.to_bytes();
        assert_eq!(
            owned.as_ptr(),
            line.as_bytes().as_ptr(),
            "to_bytes is a slice"
        );
        seen += 1;
    }
    assert_eq!(seen, 2);
    // The tail spans chunks: assembled, and `to_bytes` copies it.
    r.push(Bytes::from_static(b":3}\n"));
    let line = r.next_line().expect("a line").expect("no error");
    assert_eq!(line.as_bytes(), b"{\"tail\":3}");
    assert_eq!(line.number(), 3);
    assert!(!line.is_zero_copy());
    assert_eq!(line.to_bytes(), Bytes::from_static(b"{\"tail\":3}"));
}

#[test]
fn pushing_without_draining_queues_chunks() {
    let mut r = Reader::new();
    for piece in [&b"a\nb"[..], b"", b"c\n", b"\n", b"d"] {
        r.push_slice(piece);
    }
    r.finish();
    let mut out = Vec::new();
    drain(&mut r, &mut out);
    assert_eq!(out, vec![ok(1, "a"), ok(2, "bc"), ok(4, "d")]);
    // After finish, pushes are ignored (caller bug) rather than corrupting the stream.
    r.push_slice(b"late\n");
    assert!(r.next_line().is_none());
}

/// A stream exercising every rule at once, with a small limit of 8 bytes.
const MIXED: &[u8] =
    b"{}\n\n  \t\n0123456789\n12345678\r\n123456789\nab\r\r\n\n\r\nlast-one-too-long";

fn mixed_want() -> Vec<Item> {
    // Line 4 is 10 bytes, line 5 is 9 with the CR: both too long at limit 8. Line 6 is 9.
    vec![
        ok(1, "{}"),
        Err(too_long(4, 8)),
        Err(too_long(5, 8)),
        Err(too_long(6, 8)),
        ok(7, "ab\r\r"),
        Err(too_long(10, 8)),
    ]
}

fn too_long(line: u64, limit: usize) -> FrameError {
    // Build the expected error through the public reader, so the test does not need a
    // constructor: one line of `limit + 1` bytes at the given number.
    let mut stream = vec![b'\n'; (line - 1) as usize];
    stream.extend(std::iter::repeat_n(b'x', limit + 1));
    let got = read_chunks(&[&stream], limit);
    match got.as_slice() {
        [Err(e)] => *e,
        other => panic!("expected one error, got {other:?}"),
    }
}

#[test]
fn every_single_split_point_gives_identical_output() {
    let want = mixed_want();
    assert_eq!(read_chunks(&[MIXED], 8), want);
    for cut in 0..=MIXED.len() {
        assert_eq!(
            read_chunks(&[&MIXED[..cut], &MIXED[cut..]], 8),
            want,
            "cut {cut}"
        );
    }
}

#[test]
fn every_pair_of_split_points_gives_identical_output() {
    let want = mixed_want();
    let mut cases = 0;
    for a in 0..=MIXED.len() {
        for b in a..=MIXED.len() {
            let got = read_chunks(&[&MIXED[..a], &MIXED[a..b], &MIXED[b..]], 8);
            assert_eq!(got, want, "cuts {a}, {b}");
            cases += 1;
        }
    }
    eprintln!("every_pair_of_split_points: {cases} chunkings");
}

#[test]
fn every_chunking_of_a_short_stream() {
    // All 2^(n-1) ways to cut a 15-byte stream.
    let stream = b"a\n\r\nbc\n  \ndefgh";
    let want = read_chunks(&[stream], 3);
    assert_eq!(
        want,
        vec![ok(1, "a"), ok(3, "bc"), Err(too_long(5, 3))],
        "reference"
    );
    let n = stream.len();
    for cuts in 0u32..(1 << (n - 1)) {
        let mut chunks: Vec<&[u8]> = Vec::new();
        let mut start = 0;
        for i in 1..n {
            if cuts & (1 << (i - 1)) != 0 {
                chunks.push(&stream[start..i]);
                start = i;
            }
        }
        chunks.push(&stream[start..]);
        assert_eq!(read_chunks(&chunks, 3), want, "cuts {cuts:b}");
    }
    eprintln!(
        "every_chunking_of_a_short_stream: {} chunkings",
        1u32 << (n - 1)
    );
}

#[test]
fn byte_at_a_time_equals_one_chunk_on_every_backend() {
    let mut stream = Vec::new();
    for i in 0..300usize {
        let body = "x".repeat(i % 97);
        stream.extend_from_slice(format!("{{\"i\":{i},\"s\":\"{body}\"}}").as_bytes());
        stream.extend_from_slice(if i % 3 == 0 { b"\r\n" } else { b"\n" });
        if i % 7 == 0 {
            stream.extend_from_slice(b"  \n");
        }
    }
    let want = read_chunks(&[&stream], 90);
    assert!(want.iter().any(|i| i.is_err()) && want.iter().any(|i| i.is_ok()));
    for s in Splitter::available() {
        for size in [1usize, 2, 3, 63, 64, 65, 1000] {
            let mut r = Reader::with_splitter(90, s);
            let mut got = Vec::new();
            for c in stream.chunks(size) {
                r.push(Bytes::copy_from_slice(c));
                drain(&mut r, &mut got);
            }
            r.finish();
            drain(&mut r, &mut got);
            assert_eq!(got, want, "{:?} chunk size {size}", s.backend());
        }
    }
}
