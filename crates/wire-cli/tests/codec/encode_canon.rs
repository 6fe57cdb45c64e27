//! `agentx-wire canon` (PROFILE §2): canonical re-encoding through the validating encoder,
//! credentials file syntax, stop at the first refused record after exactly the records before
//! it, malformed-line diagnostics, quiet broken pipe, usage errors.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use agentx_wire_cli::canon::canon_stream;

/// `agentx-wire canon ARGS…` through the tool's own dispatch; returns the exit status.
fn run(args: &[String]) -> i32 {
    let mut all = vec!["canon".to_string()];
    all.extend_from_slice(args);
    agentx_wire_cli::run(&all)
}
use agentx_wire::encode::{CredentialSet, VALIDATION_FAILURE_TEXT};
use agentx_wire::wire::Direction;

#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

fn canon(input: &[u8], credentials: CredentialSet) -> (i32, String, String) {
    let out = Shared::default();
    let mut err = Vec::new();
    let status = canon_stream(input, Direction::Output, credentials, out.clone(), &mut err);
    (status, out.text(), String::from_utf8(err).unwrap())
}

#[test]
fn canonical_reencoding() {
    let input = b"{ \"type\" : \"a\", \"x\":\"\\u0041\\/\\u00e9\" , \"n\": 1.50 }\n\n  \r\n[1]\n{\"type\":\"b\",\"s\":\"\\u2028\"}";
    let (status, out, err) = canon(&input[..], CredentialSet::empty());
    // The second record is an array: not a record.
    assert_eq!(status, 1);
    assert_eq!(out, "{\"type\":\"a\",\"x\":\"A/é\",\"n\":1.50}\n");
    // WIRE-002: the unknown type is preserved (and written) with a warning.
    assert_eq!(
        err,
        "agentx-wire: warning: input line 1: ignored record of unknown type\n\
         agentx-wire: input line 4: record is not a JSON object (PROFILE §2a)\n"
    );

    let input = b"{ \"type\" : \"a\" }\n\n{\"type\":\"b\",\"s\":\"\\u2028\"}";
    let (status, out, err) = canon(&input[..], CredentialSet::empty());
    assert_eq!(status, 0);
    assert_eq!(err.matches("ignored record of unknown type").count(), 2);
    // Blank lines dropped, the unterminated last line processed, U+2028 kept escaped.
    assert_eq!(
        out,
        "{\"type\":\"a\"}\n{\"type\":\"b\",\"s\":\"\\u2028\"}\n"
    );
}

#[test]
fn sample_stream_canonicalizes_idempotently() {
    // Every generated record is a typed output record; canon's output is canon's fixed point.
    let stream = agentx_wire::sample::realistic_stream(3, 128 << 10);
    let (status, out, err) = canon(&stream, CredentialSet::empty());
    assert_eq!((status, err.as_str()), (0, ""));
    let records = stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(out.lines().count(), records);
    let (status, again, err) = canon(out.as_bytes(), CredentialSet::empty());
    assert_eq!((status, err.as_str()), (0, ""));
    assert_eq!(again, out);
}

#[test]
fn first_refused_record_stops_the_run_after_exactly_the_records_before_it() {
    let file = b"sk-live-1\nline\\nbreak\nback\\\\slash\n";
    let set = CredentialSet::from_file_bytes(file).unwrap();
    assert_eq!(set.len(), 3);
    let input = concat!(
        "{\"type\":\"a\"}\n",
        "{\"type\":\"b\",\"t\":\"ok\"}\n",
        "{\"type\":\"c\",\"t\":\"x line\\nbreak y\"}\n",
        "{\"type\":\"d\"}\n",
    );
    let (status, out, err) = canon(input.as_bytes(), set);
    assert_eq!(status, 1);
    assert_eq!(out, "{\"type\":\"a\"}\n{\"type\":\"b\",\"t\":\"ok\"}\n");
    assert!(
        err.ends_with(&format!("{VALIDATION_FAILURE_TEXT}\n")),
        "{err}"
    );
    assert!(err.ends_with("\nagentx: output refused: record failed credential validation\n"));
    assert!(!err.contains("line break") && !err.contains("sk-live"));

    // `\\` in the file is one backslash: a record holding `back\slash` is refused, and for
    // its credential: the same record decodes and is written without the credential set.
    let record = br#"{"type":"x","p":"C:\\back\\slash"}"#;
    let (status, out, err) = canon(record, CredentialSet::empty());
    assert_eq!(
        (status, out.as_str()),
        (0, "{\"type\":\"x\",\"p\":\"C:\\\\back\\\\slash\"}\n"),
        "{err}"
    );
    let set = CredentialSet::from_file_bytes(file).unwrap();
    let (status, out, err) = canon(record, set);
    assert_eq!((status, out.as_str()), (1, ""));
    assert!(
        err.ends_with(&format!("{VALIDATION_FAILURE_TEXT}\n")),
        "refused for the credential, not the schema: {err}"
    );
}

#[test]
fn malformed_line_diagnostic_names_the_line() {
    let input = b"{\"type\":\"a\"}\n{\"type\":\"b\",}\n{\"type\":\"c\"}\n";
    let (status, out, err) = canon(&input[..], CredentialSet::empty());
    assert_eq!(status, 1);
    assert_eq!(out, "{\"type\":\"a\"}\n");
    assert!(
        err.contains("agentx-wire: input line 2: malformed JSON: "),
        "{err}"
    );
    let (status, _, err) = canon(b"\n{\"a\":1,\"\\u0061\":2}", CredentialSet::empty());
    assert_eq!(status, 1);
    assert_eq!(
        err,
        "agentx-wire: input line 2: ambiguous JSON: duplicate member name\n"
    );
}

struct ClosedPipe;
impl Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> io::Result<()> {
        Err(io::ErrorKind::BrokenPipe.into())
    }
}

#[test]
fn broken_pipe_is_quiet_status_1() {
    // Enough output to overflow the 64 KiB buffer, so the pipe error reaches the encoder.
    let stream = agentx_wire::sample::realistic_stream(5, 512 << 10);
    let mut err = Vec::new();
    let status = canon_stream(
        &stream[..],
        Direction::Output,
        CredentialSet::empty(),
        ClosedPipe,
        &mut err,
    );
    assert_eq!(status, 1);
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    // Small output: the pipe error surfaces at the final flush.
    let mut err = Vec::new();
    let status = canon_stream(
        &b"{\"type\":\"keep_alive\"}\n"[..],
        Direction::Output,
        CredentialSet::empty(),
        ClosedPipe,
        &mut err,
    );
    assert_eq!(status, 1);
    assert!(err.is_empty());
}

#[test]
fn usage_errors_are_status_2() {
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(run(&args(&["--direction", "sideways"])), 2);
    assert_eq!(run(&args(&["--bogus"])), 2);
    assert_eq!(run(&args(&["a", "b"])), 2);
    assert_eq!(run(&args(&["--credentials"])), 2);
    assert_eq!(
        run(&args(&["--direction", "input", "--direction", "output"])),
        2
    );
}

#[test]
fn credentials_file_errors_are_status_1() {
    let dir = std::env::temp_dir().join(format!("agentx-canon-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let missing = dir.join("missing");
    assert_eq!(run(&args(&["--credentials", missing.to_str().unwrap()])), 1);
    // A credential past the length limit.
    let long = dir.join("long");
    std::fs::write(
        &long,
        vec![b'x'; agentx_wire::encode::MAX_CREDENTIAL_LEN + 1],
    )
    .unwrap();
    assert_eq!(run(&args(&["--credentials", long.to_str().unwrap()])), 1);
    // A valid file and an input whose first record is refused: status 1, nothing written.
    let creds = dir.join("creds");
    std::fs::write(&creds, b"}\\n\n").unwrap();
    let input = dir.join("input");
    std::fs::write(&input, b"{\"type\":\"a\"}\n").unwrap();
    assert_eq!(
        run(&args(&[
            "--direction",
            "output",
            "--credentials",
            creds.to_str().unwrap(),
            input.to_str().unwrap()
        ])),
        1
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn credentials_file_syntax() {
    // Verbatim lines; `\n` = LF, `\\` = backslash, other backslashes kept; empty lines skipped;
    // an unterminated last line counts.
    let set = CredentialSet::from_file_bytes(b"a\\nb\n\n\\\\\nc\\d\nlast").unwrap();
    assert_eq!(set.len(), 4);
    let mut s = Vec::new();
    assert!(set.matches(b"xa\nbx", &mut s));
    assert!(set.matches(b"x\\x", &mut s));
    assert!(set.matches(b"c\\d", &mut s));
    assert!(set.matches(b"last", &mut s));
    // A CR before the LF is part of the credential (verbatim).
    let set = CredentialSet::from_file_bytes(b"tok\r\n").unwrap();
    assert!(!set.matches(b"tok\n", &mut s));
    assert!(set.matches(b"tok\r", &mut s));
}
