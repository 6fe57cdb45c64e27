//! `agentx-wire canon [--direction input|output] [--credentials FILE] [FILE|-]` (PROFILE §2):
//! decodes each record and re-encodes it canonically through the validating encoder, so an
//! operator can prove a transcript carries none of their secrets.
//!
//! Owns: argument handling and I/O around `frame::Reader`, `json::Parser` and `encode::Encoder`.
//! Must never: print a credential, a record value or a callback error; write part of a record.
//!
//! Behaviour:
//! - every line is decoded as a typed record of `--direction` (default `output`) and written in
//!   its canonical encoding (`wire`: fixed member order, canonical escapes) plus `\n`. A
//!   preserved unknown type or `system` subtype (WIRE-002) is written as its canonical JSON with
//!   a warning on stderr; blank lines are dropped.
//! - `--credentials FILE`: one credential a line, verbatim without its LF, `\n` = newline,
//!   `\\` = backslash. The first record that fails validation stops the run: the records before
//!   it are written, it and nothing after it is, stderr gets the fixed PROFILE §5 diagnostic,
//!   status 1.
//! - a framing or JSON error on line N: `agentx-wire: input line N: <reason>`, status 1, after
//!   the records before it.
//! - a closed stdout ends quietly with status 1; usage errors give status 2.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::BytesMut;

use super::wire_args::CanonArgs;
use crate::encode::{CredentialSet, Encoder, RecordWriter, MAX_CREDENTIALS, MAX_CREDENTIAL_LEN};
use crate::frame::{self, Reader};
use crate::json::Parser;
use crate::wire::{Direction, InputRecord, OutputRecord};

/// Read size per chunk handed to the framer.
const CHUNK: usize = 1 << 20;
/// Largest credentials file read (every credential at its limit, fully escaped, plus LFs).
const MAX_CREDENTIALS_FILE: u64 = (MAX_CREDENTIALS * (2 * MAX_CREDENTIAL_LEN + 1)) as u64;

/// The record writer of `canon`: appends whole frames to a shared buffered sink, which the
/// run flushes at its end (so a refused record still leaves the records before it written).
struct SharedSink<W: Write>(Arc<Mutex<BufWriter<W>>>);

impl<W: Write + Send> RecordWriter for SharedSink<W> {
    fn write_record(&mut self, frame: &[u8]) -> io::Result<usize> {
        let mut w = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        w.write_all(frame)?;
        Ok(frame.len())
    }
}

enum Stop {
    /// Status 1 with this diagnostic already formatted (never a value).
    Diagnostic(String),
    /// Status 1, quietly (closed stdout).
    Quiet,
}

/// Runs `canon` over `input` with `credentials`, writing records to `out` and diagnostics to
/// `err`; returns the exit status.
pub fn canon_stream<W: Write + Send + 'static>(
    mut input: impl Read,
    direction: Direction,
    credentials: CredentialSet,
    out: W,
    mut err: impl Write,
) -> i32 {
    let sink = Arc::new(Mutex::new(BufWriter::with_capacity(64 << 10, out)));
    let encoder = Encoder::new(SharedSink(Arc::clone(&sink)));
    if encoder.set_credentials(credentials).is_err() {
        // Unreachable: nothing was encoded yet.
        return 1;
    }
    let mut reader = Reader::new();
    let mut parser = Parser::new();
    let mut buf = BytesMut::new();
    let mut warnings: Vec<u8> = Vec::new();
    let mut on_item = |item: Result<frame::Line<'_>, frame::FrameError>| -> Result<(), Stop> {
        let line = item
            .map_err(|e| Stop::Diagnostic(format!("agentx-wire: input line {}: {e}", e.line())))?;
        let number = line.number();
        let record = Decoded::decode(line.as_bytes(), direction, &mut parser)
            .map_err(|e| Stop::Diagnostic(format!("agentx-wire: input line {number}: {e}")))?;
        if record.is_unknown() {
            let _ = writeln!(
                warnings,
                "agentx-wire: warning: input line {number}: ignored record of unknown type"
            );
        }
        encoder
            .encode(|out| record.encode(out))
            .map_err(|e| match e.failure() {
                Some(f) if f.is_broken_pipe() => Stop::Quiet,
                Some(f) => Stop::Diagnostic(f.to_string()),
                None => Stop::Diagnostic(e.to_string()),
            })
    };
    let run = (|| -> Result<(), Stop> {
        loop {
            buf.reserve(CHUNK);
            buf.resize(CHUNK, 0);
            let n = loop {
                match input.read(&mut buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        return Err(Stop::Diagnostic(format!(
                            "agentx-wire: cannot read input: {}",
                            e.kind()
                        )))
                    }
                }
            };
            if n == 0 {
                break;
            }
            buf.truncate(n);
            reader.push(buf.split().freeze());
            while let Some(item) = reader.next_line() {
                on_item(item)?;
            }
        }
        // WIRE-EOF-001: the unterminated tail is a record like any other.
        reader.finish();
        while let Some(item) = reader.next_line() {
            on_item(item)?;
        }
        Ok(())
    })();
    let _ = err.write_all(&warnings);
    // Whatever happened, the records accepted before it reach stdout.
    let flushed = sink.lock().unwrap_or_else(PoisonError::into_inner).flush();
    match (run, flushed) {
        (Err(Stop::Quiet), _) => 1,
        (Err(Stop::Diagnostic(msg)), _) => {
            let _ = writeln!(err, "{msg}");
            let _ = err.flush();
            1
        }
        (Ok(()), Ok(())) => 0,
        (Ok(()), Err(e)) if e.kind() == io::ErrorKind::BrokenPipe => 1,
        (Ok(()), Err(_)) => {
            let _ = writeln!(err, "{}", crate::encode::OUTPUT_FAILURE_TEXT);
            1
        }
    }
}

/// One decoded record of either direction.
enum Decoded<'a> {
    Input(InputRecord<'a>),
    Output(OutputRecord<'a>),
}

impl<'a> Decoded<'a> {
    fn decode(
        line: &'a [u8],
        direction: Direction,
        parser: &mut Parser,
    ) -> Result<Self, crate::wire::Error> {
        Ok(match direction {
            Direction::Input => Decoded::Input(InputRecord::decode_line(line, parser)?),
            Direction::Output => Decoded::Output(OutputRecord::decode_line(line, parser)?),
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Decoded::Input(r) => r.encode(out),
            Decoded::Output(r) => r.encode(out),
        }
    }

    /// A preserved unknown type or `system` subtype (WIRE-002).
    fn is_unknown(&self) -> bool {
        match self {
            Decoded::Input(r) => r.warning().is_some(),
            Decoded::Output(r) => r.warning().is_some(),
        }
    }
}

/// Reads and parses a credentials file (PROFILE §2). Diagnostics name neither path nor value.
fn load_credentials(path: &Path) -> Result<CredentialSet, String> {
    let file = File::open(path)
        .map_err(|e| format!("agentx-wire: cannot open credentials file: {}", e.kind()))?;
    let mut bytes = Vec::new();
    file.take(MAX_CREDENTIALS_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("agentx-wire: cannot read credentials file: {}", e.kind()))?;
    if bytes.len() as u64 > MAX_CREDENTIALS_FILE {
        return Err("agentx-wire: credentials file too large".to_string());
    }
    CredentialSet::from_file_bytes(&bytes).map_err(|e| format!("agentx-wire: {e}"))
}

/// `agentx-wire canon …` with its parsed arguments.
pub fn run(options: CanonArgs) -> i32 {
    let credentials = match options.credentials.as_deref().map(load_credentials) {
        None => CredentialSet::empty(),
        Some(Ok(set)) => set,
        Some(Err(msg)) => {
            eprintln!("{msg}");
            return 1;
        }
    };
    let stderr = io::stderr();
    match options.file {
        None => canon_stream(
            io::stdin().lock(),
            options.direction,
            credentials,
            io::stdout(),
            stderr,
        ),
        Some(path) => match File::open(&path) {
            Ok(f) => canon_stream(f, options.direction, credentials, io::stdout(), stderr),
            Err(e) => {
                eprintln!("agentx-wire: cannot open input file: {}", e.kind());
                1
            }
        },
    }
}
