//! Acceptance scenarios 2 and 17 (sdk-wire-protocol §10) and WIRE-013 whole-record credential
//! validation, every step asserted, against the real blocking driver (`driver::OutputFifo` over `encode::FrameEncoder`) and
//! `CredentialSet`.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agentx_io::{OutputFifo, State};
use agentx_wire::encode::{CredentialSet, Error, FailureKind, VALIDATION_FAILURE_TEXT};
use agentx_wire::json;

/// A writer recording every frame it gets and how often it was called.
#[derive(Clone, Default)]
struct Sink {
    bytes: Arc<Mutex<Vec<u8>>>,
    calls: Arc<AtomicUsize>,
}

impl Sink {
    fn encoder(&self) -> OutputFifo {
        let s = self.clone();
        OutputFifo::new(move |frame: &[u8]| -> io::Result<usize> {
            s.calls.fetch_add(1, Ordering::SeqCst);
            s.bytes
                .lock()
                .map_err(|_| io::ErrorKind::Other)?
                .extend_from_slice(frame);
            Ok(frame.len())
        })
    }
    fn bytes(&self) -> Vec<u8> {
        self.bytes.lock().map(|b| b.clone()).unwrap_or_default()
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

fn assistant_text(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(
        br#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"#,
    );
    json::write_str(out, text);
    out.extend_from_slice(br#"}]},"parent_tool_use_id":null}"#);
}

fn decoded_text(line: &[u8]) -> String {
    let doc = json::parse(line).expect("frame parses");
    let text = doc
        .root()
        .as_object()
        .and_then(|o| o.get("message"))
        .and_then(|m| m.as_object())
        .and_then(|m| m.get("content"))
        .and_then(|c| c.as_array())
        .and_then(|c| c.get(0))
        .and_then(|b| b.as_object())
        .and_then(|b| b.get("text"))
        .and_then(|t| t.as_str())
        .expect("text member");
    text.decode().into_owned()
}

#[test]
fn scenario_2_separators_give_one_physical_line_and_exact_text() {
    let text = "line\u{2028}para\u{2029}end \u{2028}\u{2029} done";
    for credentials in [
        CredentialSet::empty(),
        CredentialSet::new(["sk-unrelated"]).unwrap(),
    ] {
        let sink = Sink::default();
        let enc = sink.encoder();
        enc.set_credentials(credentials).unwrap();
        let mut record = Vec::new();
        assistant_text(&mut record, text);
        enc.push(&record).unwrap();
        let out = sink.bytes();
        // One physical line: exactly one LF, at the end.
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(out.last(), Some(&b'\n'));
        // No raw separator survives, for a consumer that splits on Unicode line boundaries.
        let s = std::str::from_utf8(&out).unwrap();
        assert!(!s.contains('\u{2028}') && !s.contains('\u{2029}'));
        assert_eq!(s.lines().count(), 1);
        assert!(s.contains("\\u2028") && s.contains("\\u2029"));
        // Exact decoded text.
        assert_eq!(decoded_text(&out[..out.len() - 1]), text);
    }
}

#[test]
fn scenario_2_encoder_escapes_raw_separators_a_marshaler_left() {
    // Defence in depth: even a marshaler that leaves raw separators yields one physical line.
    let sink = Sink::default();
    let enc = sink.encoder();
    let text = "a\u{2028}b\u{2029}c";
    let record = [
        &b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"text\":\""[..],
        text.as_bytes(),
        b"\"}]}}",
    ]
    .concat();
    enc.push(&record).unwrap();
    let out = sink.bytes();
    assert_eq!(
        out,
        b"{\"type\":\"assistant\",\"message\":{\"content\":[{\"text\":\"a\\u2028b\\u2029c\"}]}}\n"
    );
    assert_eq!(decoded_text(&out[..out.len() - 1]), text);
}

#[test]
fn raw_line_feed_in_marshaled_bytes_latches_and_writes_nothing() {
    let sink = Sink::default();
    let enc = sink.encoder();
    let e = enc.push(b"{\"type\":\n\"x\"}").unwrap_err();
    assert!(matches!(
        e.failure().map(|f| f.kind()),
        Some(FailureKind::Record(_))
    ));
    assert_eq!(sink.calls(), 0);
    assert_eq!(enc.push(b"{}"), Err(e));
}

/// Scenario 17 step: a set that must reject `record` before a byte reaches the writer, with the
/// same latched failure on every later write (safe records included), and no writer call ever.
fn assert_rejected_before_any_byte(credentials: &[&[u8]], record: &'static [u8]) {
    let sink = Sink::default();
    let enc = sink.encoder();
    enc.set_credentials(CredentialSet::new(credentials).unwrap())
        .unwrap();
    let e = enc.push(record).unwrap_err();
    let failure = e.failure().expect("latched failure");
    assert_eq!(failure.kind(), FailureKind::Validation);
    assert_eq!(failure.to_string(), VALIDATION_FAILURE_TEXT);
    assert_eq!(
        failure.to_string(),
        "agentx: output refused: record failed credential validation"
    );
    assert_eq!(sink.calls(), 0, "no byte reached the writer");
    assert!(sink.bytes().is_empty());
    assert_eq!(enc.state(), State::Failed(failure));
    // Later writes, even of a safe record, return the same failure and write nothing.
    for _ in 0..3 {
        assert_eq!(enc.push(b"{\"type\":\"keep_alive\"}"), Err(e));
    }
    assert_eq!(sink.calls(), 0);
    // The diagnostic is credential-free.
    for c in credentials {
        assert!(
            !failure
                .to_string()
                .as_bytes()
                .windows(c.len())
                .any(|w| w == *c)
                || c.len() < 2
        );
    }
}

#[test]
fn scenario_17_separator_between_two_safe_fields() {
    // The canonical separator between two safe fields of a structured result.
    assert_rejected_before_any_byte(
        &[b"\",\""],
        br#"{"type":"result","subtype":"success","result":"done"}"#,
    );
}

#[test]
fn scenario_17_record_suffix_plus_newline() {
    // Safe as marshaled; the credential only exists once the terminator is appended.
    assert_rejected_before_any_byte(&[b"}\n"], br#"{"type":"result","subtype":"success"}"#);
    assert_rejected_before_any_byte(&[b"\"}\n"], br#"{"type":"result","result":"ok"}"#);
}

#[test]
fn scenario_17_credential_across_field_boundaries() {
    assert_rejected_before_any_byte(&[b"ab\",\"y\":\"cd"], br#"{"x":"ab","y":"cd"}"#);
}

#[test]
fn scenario_17_duplicate_members_every_occurrence_inspected() {
    // Earlier escaped value decodes to the credential, later value is safe.
    assert_rejected_before_any_byte(
        &[b"hunter2"],
        br#"{"type":"result","token":"hunt\u0065r2","token":"safe"}"#,
    );
    // Earlier safe, later escaped.
    assert_rejected_before_any_byte(
        &[b"hunter2"],
        br#"{"type":"result","token":"safe","token":"\u0068unter2"}"#,
    );
    // A duplicated member *name* in an escape-equivalent spelling.
    assert_rejected_before_any_byte(
        &[b"hunter2"],
        br#"{"type":"result","x":1,"\u0068unter2":2,"x":3}"#,
    );
    // Nested duplicates.
    assert_rejected_before_any_byte(
        &[b"hunter2"],
        br#"{"type":"r","a":{"b":[{"c":"x"},{"c":"h\u0075nter\u0032"}]},"a":{}}"#,
    );
}

#[test]
fn wire_013_escaped_and_foreign_spellings() {
    // Our writer's escaped spelling of a credential holding a quote, a backslash, a newline.
    let mut record = Vec::new();
    json::write_str(&mut record, "pa\"ss\\w\nrd");
    let record: &'static [u8] = Box::leak(
        [b"{\"k\":".as_slice(), &record, b"}"]
            .concat()
            .into_boxed_slice(),
    );
    assert_rejected_before_any_byte(&[b"pa\"ss\\w\nrd"], record);
    // Foreign spellings: `\/`, upper-case hex, surrogate pairs.
    assert_rejected_before_any_byte(
        &[b"https://x.example/k"],
        br#"{"u":"https:\/\/x.example\/k"}"#,
    );
    assert_rejected_before_any_byte(&["clé".as_bytes()], br#"{"u":"cl\u00E9"}"#);
    assert_rejected_before_any_byte(&["k😀y".as_bytes()], br#"{"u":"k\ud83d\ude00y"}"#);
    // A credential with U+2028: written as `\u2028` by the writer.
    let sink = Sink::default();
    let enc = sink.encoder();
    enc.set_credentials(CredentialSet::new(["a\u{2028}b"]).unwrap())
        .unwrap();
    let mut record = Vec::new();
    assistant_text(&mut record, "xa\u{2028}by");
    assert!(enc.push(&record).is_err());
    assert_eq!(sink.calls(), 0);
}

#[test]
fn wire_013_near_misses_are_written() {
    let sink = Sink::default();
    let enc = sink.encoder();
    enc.set_credentials(CredentialSet::new(["hunter2", "\",\"x"]).unwrap())
        .unwrap();
    let records: [&[u8]; 4] = [
        br#"{"a":"hunter","b":"2"}"#,
        br#"{"a":"hunt\u0065r3"}"#,
        br#"{"a":"x","b":"y"}"#,
        br#"{"hunter":2}"#,
    ];
    for r in records {
        enc.push(r).unwrap();
    }
    let expected: Vec<u8> = records.iter().flat_map(|r| [*r, b"\n"].concat()).collect();
    assert_eq!(sink.bytes(), expected);
}

/// Parses every line of `stream` and re-encodes it with `json::write_value`: the plain
/// encoding an encoder without credentials must reproduce byte for byte.
fn plain_reencoding(stream: &[u8]) -> Vec<u8> {
    let mut parser = json::Parser::new();
    let mut out = Vec::new();
    for line in stream.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let v = parser.parse(line).expect("sample parses");
        json::write_value(&mut out, v);
        out.push(b'\n');
    }
    out
}

#[test]
fn scenario_17_credential_free_encoder_is_byte_identical_through_the_fifo() {
    let stream = agentx_wire::sample::realistic_stream(17, 256 << 10);
    let expected = plain_reencoding(&stream);
    let lines: Vec<&[u8]> = stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    for credentials in [
        CredentialSet::empty(),
        CredentialSet::new(["sk-not-in-the-stream-0123456789"]).unwrap(),
    ] {
        let sink = Sink::default();
        let enc = sink.encoder();
        enc.set_credentials(credentials).unwrap();
        let fifo = enc;
        let mut parser = json::Parser::new();
        for line in &lines {
            let mut rec = Vec::new();
            json::write_value(&mut rec, parser.parse(line).unwrap());
            fifo.push(&rec).unwrap();
        }
        assert_eq!(sink.bytes(), expected);
        assert_eq!(sink.calls(), lines.len());
        eprintln!(
            "byte-identical: {} records, {} bytes",
            lines.len(),
            expected.len()
        );
    }
}

#[test]
fn reconfiguration_after_first_record_is_rejected() {
    let sink = Sink::default();
    let enc = sink.encoder();
    assert_eq!(enc.state(), State::Configuring);
    // Before the first record configuration may change (the last one wins).
    enc.set_credentials(CredentialSet::new(["first"]).unwrap())
        .unwrap();
    enc.set_credentials(CredentialSet::new(["second"]).unwrap())
        .unwrap();
    enc.push(br#"{"a":"first"}"#).unwrap();
    assert_eq!(enc.state(), State::Open);
    assert_eq!(
        enc.set_credentials(CredentialSet::empty()),
        Err(Error::AlreadyStarted)
    );
    assert_eq!(enc.set_max_record_len(1), Err(Error::AlreadyStarted));
    assert_eq!(
        enc.set_validator(
            |_: &mut [u8]| -> Result<(), agentx_wire::encode::ValidatorError> { Ok(()) }
        ),
        Err(Error::AlreadyStarted)
    );
    // The installed set still applies.
    assert!(enc.push(br#"{"a":"second"}"#).is_err());
    assert_eq!(sink.bytes(), b"{\"a\":\"first\"}\n");
}

#[test]
fn record_limit_at_edge() {
    let sink = Sink::default();
    let enc = sink.encoder();
    enc.set_max_record_len(10).unwrap();
    enc.push(b"\"12345678\"").unwrap(); // 10 bytes: at the limit
    let e = enc.push(b"\"123456789\"").unwrap_err(); // 11: one past
    assert_eq!(
        e.failure().map(|f| f.kind()),
        Some(FailureKind::Record(
            agentx_wire::encode::RecordFault::TooLarge
        ))
    );
    assert_eq!(sink.bytes(), b"\"12345678\"\n");
}

#[test]
fn debug_never_shows_a_secret() {
    let set = CredentialSet::new(["sk-live-SECRET-1", "}\n"]).unwrap();
    let d = format!("{set:?}");
    assert!(!d.contains("SECRET"), "{d}");
    let sink = Sink::default();
    let enc = sink.encoder();
    enc.set_credentials(set).unwrap();
    let _ = enc.push(br#"{"k":"sk-live-SECRET-1"}"#);
    let d = format!("{enc:?} {:?} {}", enc.state(), enc.failure().unwrap());
    assert!(!d.contains("SECRET"), "{d}");
}

/// Found by `fuzz/encode_credentials`: a credential ending in LF, reconstructed by an
/// unterminated last string whose escapes are all canonical plus the frame's own terminator.
#[test]
fn credential_ending_in_the_line_terminator_is_refused() {
    use agentx_wire::encode::{CredentialSet, FrameEncoder};
    let mut encoder = FrameEncoder::new();
    encoder
        .set_credentials(CredentialSet::new([&b"fe\"\n"[..]]).unwrap())
        .unwrap();
    let result = encoder.encode(&b"\xfe \\\"safe\\\""[..]);
    assert!(
        result.is_err(),
        "the frame decodes to a string ending in the credential"
    );
}

/// Scenario 17's FIFO leg with typed records (the audit): every line of the
/// realistic stream decoded into a typed `OutputRecord` and pushed as that value; the FIFO's
/// output is byte for byte the records' own canonical encoding, with and without a credential
/// set that matches nothing.
#[test]
fn scenario_17_typed_records_are_byte_identical_through_the_fifo() {
    use agentx_wire::wire::OutputRecord;
    let stream = agentx_wire::sample::realistic_stream(17, 256 << 10);
    let mut parser = json::Parser::new();
    let records: Vec<OutputRecord<'static>> = stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            OutputRecord::decode_line(l, &mut parser)
                .expect("the sample stream is valid output")
                .into_owned()
        })
        .collect();
    assert!(records.len() > 100, "a stream worth the name");
    let mut expected = Vec::new();
    for r in &records {
        r.encode(&mut expected);
        expected.push(b'\n');
    }
    for credentials in [
        CredentialSet::empty(),
        CredentialSet::new(["sk-not-in-the-stream-0123456789"]).unwrap(),
    ] {
        let sink = Sink::default();
        let fifo = sink.encoder();
        fifo.set_credentials(credentials).unwrap();
        for r in &records {
            fifo.push(r).unwrap();
        }
        assert_eq!(sink.bytes(), expected);
        assert_eq!(sink.calls(), records.len());
    }
}
