//! The peer side of the whole-process comparison (`benches/process.sh`): what a program that
//! splits lines with `memchr` and parses each with sonic-rs does, shaped like
//! `agentx-wire check --level json`.
//!
//! Usage: `peer_check [FILE|-]` (stdin when absent or `-`). Reads 1 MiB chunks, keeps a partial
//! last line across chunks, skips lines holding only JSON whitespace, parses every other line with
//! `sonic_rs::from_slice::<sonic_rs::Value>` and counts it valid when it parses to an object.
//! Prints `records N valid N invalid N` and exits 0 when nothing was invalid, 1 otherwise, 2 on
//! a usage or I/O error.

use std::fs::File;
use std::io::{self, Read};
use std::process::ExitCode;

use sonic_rs::JsonValueTrait;

const CHUNK: usize = 1 << 20;

#[derive(Default)]
struct Counts {
    records: u64,
    valid: u64,
    invalid: u64,
}

impl Counts {
    fn line(&mut self, line: &[u8]) {
        if line
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
        {
            return;
        }
        self.records += 1;
        match sonic_rs::from_slice::<sonic_rs::Value>(line) {
            Ok(v) if v.is_object() => self.valid += 1,
            _ => self.invalid += 1,
        }
    }
}

fn run(mut input: impl Read) -> io::Result<Counts> {
    let mut counts = Counts::default();
    // `buf[..filled]` holds the partial line carried from the previous chunk, then the new chunk.
    let mut buf = vec![0u8; 2 * CHUNK];
    let mut filled = 0;
    loop {
        if buf.len() < filled + CHUNK {
            buf.resize(filled + CHUNK, 0);
        }
        let n = match input.read(&mut buf[filled..filled + CHUNK]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let scan_from = filled;
        filled += n;
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &buf[scan_from..filled]) {
            let end = scan_from + nl;
            counts.line(&buf[start..end]);
            start = end + 1;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
    }
    if filled > 0 {
        counts.line(&buf[..filled]);
    }
    Ok(counts)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [] => run(io::stdin().lock()),
        [p] if p == "-" => run(io::stdin().lock()),
        [p] => match File::open(p) {
            Ok(f) => run(f),
            Err(e) => Err(e),
        },
        _ => {
            eprintln!("usage: peer_check [FILE|-]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(c) => {
            println!(
                "records {} valid {} invalid {}",
                c.records, c.valid, c.invalid
            );
            if c.invalid == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("peer_check: {e}");
            ExitCode::from(2)
        }
    }
}
