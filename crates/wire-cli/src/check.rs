//! `agentx-wire check [--level json|records] [--direction input|output] [--json] [FILE|-]`
//! (PROFILE §2): reads every line of a stream in constant memory, reports each problem as
//! `line N: <message>` on stderr, optionally a JSON summary on stdout, and exits 0 when every
//! record is valid, 1 when any is not, 2 on a usage error.
//!
//! Owns the command's argument handling, streaming loop and report format. The verdict on a
//! line comes from the codec (`frame`, `json`, and the record layer); this module holds no
//! protocol rule of its own.

use std::fs::File;
use std::io::{self, Read, Write};

use super::wire_args::CheckArgs;
use agentx_io::Pump;
use agentx_wire::frame::Reader;
use agentx_wire::json::{self, Parser};

pub use crate::wire_args::Level;
pub use agentx_wire::wire::check::RecordCheck as Verdict;
pub use agentx_wire::wire::Direction;

/// Checks one complete line at `level`; reuses `parser` across lines.
pub fn check_line(line: &[u8], level: Level, direction: Direction, parser: &mut Parser) -> Verdict {
    match level {
        Level::Json => check_json(line, parser),
        Level::Records => agentx_wire::wire::check::check_record(line, direction, parser),
    }
}

fn check_json(line: &[u8], parser: &mut Parser) -> Verdict {
    match parser.parse(line) {
        Ok(root) if root.as_object().is_some() => Verdict::Valid,
        Ok(_) => invalid("not_an_object", "record is not a JSON object"),
        Err(e) => invalid(e.kind().check_kind(), e.to_string()),
    }
}

/// An invalid verdict; at this level every problem ends the line, none the stream.
#[cold]
fn invalid(kind: &'static str, message: impl Into<String>) -> Verdict {
    Verdict::Error {
        kind,
        message: message.into(),
        fatal: false,
    }
}

/// Running totals and the two report streams.
struct Report<O: Write, E: Write> {
    summary: bool,
    out: O,
    err: E,
    records: u64,
    valid: u64,
    invalid: u64,
    warnings: u64,
    listed: u64,
}

impl<O: Write, E: Write> Report<O, E> {
    fn start(&mut self) -> io::Result<()> {
        if self.summary {
            // Streamed so memory stays constant however many lines are bad; member order is
            // not semantic in JSON, so the counts follow the list.
            self.out.write_all(b"{\"errors\":[")?;
        }
        Ok(())
    }

    fn record(&mut self, line: u64, verdict: Verdict) -> io::Result<()> {
        self.records += 1;
        match verdict {
            Verdict::Valid => self.valid += 1,
            Verdict::Warning { kind, message } => {
                self.valid += 1;
                self.warnings += 1;
                writeln!(self.err, "line {line}: warning: {message}")?;
                self.list(line, kind, &message)?;
            }
            Verdict::Error { kind, message, .. } => {
                self.invalid += 1;
                writeln!(self.err, "line {line}: {message}")?;
                self.list(line, kind, &message)?;
            }
        }
        Ok(())
    }

    fn list(&mut self, line: u64, kind: &str, message: &str) -> io::Result<()> {
        if !self.summary {
            return Ok(());
        }
        let mut buf = Vec::with_capacity(64 + message.len());
        if self.listed > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(b"{\"line\":");
        json::write_u64(&mut buf, line);
        buf.extend_from_slice(b",\"kind\":");
        json::write_str(&mut buf, kind);
        buf.extend_from_slice(b",\"message\":");
        json::write_str(&mut buf, message);
        buf.push(b'}');
        self.listed += 1;
        self.out.write_all(&buf)
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.summary {
            let mut buf = Vec::with_capacity(96);
            buf.extend_from_slice(b"],\"records\":");
            json::write_u64(&mut buf, self.records);
            buf.extend_from_slice(b",\"valid\":");
            json::write_u64(&mut buf, self.valid);
            buf.extend_from_slice(b",\"invalid\":");
            json::write_u64(&mut buf, self.invalid);
            buf.extend_from_slice(b",\"warnings\":");
            json::write_u64(&mut buf, self.warnings);
            buf.extend_from_slice(b"}\n");
            self.out.write_all(&buf)?;
        }
        self.out.flush()?;
        self.err.flush()
    }
}

/// Read size per chunk handed to the framer. Small enough that the kernel copies into a buffer
/// that stays in the L2 cache and the parser reads it from there: on the 64 MiB realistic
/// stream 64 KiB took 41.6 ms of CPU against 46.1 ms for 1 MiB and 51.2 ms for
/// 4 MiB (medians of 15 alternating runs). It is also a pipe's default capacity.
const CHUNK: usize = 64 << 10;

/// Runs `check` over `input`, reporting to `out` and `err`; returns the exit status.
pub fn check_stream(
    input: impl Read,
    level: Level,
    direction: Direction,
    summary: bool,
    out: impl Write,
    err: impl Write,
) -> i32 {
    let mut report = Report {
        summary,
        out,
        err,
        records: 0,
        valid: 0,
        invalid: 0,
        warnings: 0,
        listed: 0,
    };
    let mut parser = Parser::new();
    let mut pump = Pump::with_reader(input, Reader::new(), CHUNK);
    let run = (|| -> Result<(), Failure> {
        report.start().map_err(|_| Failure::Output)?;
        // WIRE-EOF-001: the pump checks the unterminated tail exactly like any other line.
        pump.each_line(|item| {
            match item {
                Ok(line) => report.record(
                    line.number(),
                    check_line(line.as_bytes(), level, direction, &mut parser),
                ),
                Err(e) => report.record(e.line(), invalid(e.kind().as_str(), e.to_string())),
            }
            .map_err(|_| Failure::Output)
        })?;
        report.finish().map_err(|_| Failure::Output)
    })();
    match run {
        Ok(()) if report.invalid == 0 => 0,
        Ok(()) => 1,
        // A closed stdout (e.g. `| head`) ends quietly with status 1 (PROFILE §2).
        Err(Failure::Output) => 1,
        Err(Failure::Input(kind)) => {
            let _ = writeln!(report.err, "agentx-wire: cannot read input: {kind}");
            1
        }
    }
}

enum Failure {
    Input(io::ErrorKind),
    Output,
}

impl From<io::Error> for Failure {
    /// A read error of the input (output errors are mapped where they happen).
    fn from(e: io::Error) -> Self {
        Failure::Input(e.kind())
    }
}

/// `agentx-wire check …` with its parsed arguments.
pub fn run(args: CheckArgs) -> i32 {
    let CheckArgs {
        level,
        direction,
        json: summary,
        file,
    } = args;
    let stdout = io::BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let stderr = io::BufWriter::with_capacity(16 * 1024, io::stderr().lock());
    match file {
        None => check_stream(
            io::stdin().lock(),
            level,
            direction,
            summary,
            stdout,
            stderr,
        ),
        Some(path) => match File::open(&path) {
            Ok(f) => check_stream(f, level, direction, summary, stdout, stderr),
            Err(e) => {
                eprintln!("agentx-wire: cannot open input file: {}", e.kind());
                1
            }
        },
    }
}
