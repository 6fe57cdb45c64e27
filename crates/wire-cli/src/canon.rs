//! `agentx-wire canon [--direction input|output] [--credentials FILE] [FILE|-]` (PROFILE §2):
//! decodes each record and re-encodes it canonically through the validating encoder, so an
//! operator can prove a transcript carries none of their secrets.
//!
//! Owns: argument handling and I/O around `driver::Pump`, `json::Parser` and
//! `encode::FrameEncoder`.
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

use super::wire_args::CanonArgs;
use agentx_io::Pump;
use agentx_wire::encode::{
    CredentialSet, FrameEncoder, MAX_CREDENTIALS, MAX_CREDENTIAL_LEN, OUTPUT_FAILURE_TEXT,
};
use agentx_wire::json::Parser;
use agentx_wire::wire::{Direction, Encode, InputRecord, OutputRecord};

/// Largest credentials file read (every credential at its limit, fully escaped, plus LFs).
const MAX_CREDENTIALS_FILE: u64 = (MAX_CREDENTIALS * (2 * MAX_CREDENTIAL_LEN + 1)) as u64;

enum Stop {
    /// Status 1 with this diagnostic already formatted (never a value).
    Diagnostic(String),
    /// Status 1, quietly (closed stdout).
    Quiet,
}

impl From<io::Error> for Stop {
    /// A read error of the input (write errors are mapped where they happen).
    fn from(e: io::Error) -> Self {
        Stop::Diagnostic(format!("agentx-wire: cannot read input: {}", e.kind()))
    }
}

/// Runs `canon` over `input` with `credentials`, writing records to `out` and diagnostics to
/// `err`; returns the exit status.
pub fn canon_stream<W: Write + Send + 'static>(
    input: impl Read,
    direction: Direction,
    credentials: CredentialSet,
    out: W,
    mut err: impl Write,
) -> i32 {
    let mut sink = BufWriter::with_capacity(64 << 10, out);
    let mut encoder = FrameEncoder::new();
    if encoder.set_credentials(credentials).is_err() {
        // Unreachable: nothing was encoded yet.
        return 1;
    }
    let mut parser = Parser::new();
    let mut warnings: Vec<u8> = Vec::new();
    let run = Pump::new(input).each_line(|item| -> Result<(), Stop> {
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
        // WIRE-013: the exact frame is validated before a byte of it is written.
        let frame = encoder
            .encode(&record)
            .map_err(|f| Stop::Diagnostic(f.to_string()))?;
        sink.write_all(frame).map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => Stop::Quiet,
            _ => Stop::Diagnostic(OUTPUT_FAILURE_TEXT.to_string()),
        })
    });
    let _ = err.write_all(&warnings);
    // Whatever happened, the records accepted before it reach stdout.
    let flushed = sink.flush();
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
            let _ = writeln!(err, "{OUTPUT_FAILURE_TEXT}");
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
    ) -> Result<Self, agentx_wire::wire::Error> {
        Ok(match direction {
            Direction::Input => Decoded::Input(InputRecord::decode_line(line, parser)?),
            Direction::Output => Decoded::Output(OutputRecord::decode_line(line, parser)?),
        })
    }

    /// A preserved unknown type or `system` subtype (WIRE-002).
    fn is_unknown(&self) -> bool {
        match self {
            Decoded::Input(r) => r.warning().is_some(),
            Decoded::Output(r) => r.warning().is_some(),
        }
    }
}

impl Encode for Decoded<'_> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Decoded::Input(r) => r.encode(out),
            Decoded::Output(r) => r.encode(out),
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
