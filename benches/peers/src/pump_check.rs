//! The loop of `agentx-wire check --level json` (`agentx_io::Pump` + `json::Parser`, object check)
//! with the read size as an argument: how `agentx-wire check`'s 64 KiB chunk was chosen.
//!
//! Usage: `pump_check FILE CHUNK_BYTES [zero]`. With `zero` every read buffer is memset before
//! the read, as `Pump` once did. Prints the number of valid records.
//! Compare CPU times with alternating runs, e.g. `benches/process.sh`'s method.

use std::io::{self, Read};
use std::process::ExitCode;

use agentx_io::Pump;
use agentx_wire::frame::Reader;
use agentx_wire::json::Parser;

/// With `.1`, memsets the buffer before each read.
struct Zeroing(std::fs::File, bool);

impl Read for Zeroing {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.1 {
            buf.fill(0);
            std::hint::black_box(&buf);
        }
        self.0.read(buf)
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, chunk, zero) = match args.as_slice() {
        [p, c] => (p, c.parse::<usize>().ok(), false),
        [p, c, z] if z == "zero" => (p, c.parse::<usize>().ok(), true),
        _ => (&String::new(), None, false),
    };
    let Some(chunk) = chunk.filter(|&c| c > 0) else {
        eprintln!("usage: pump_check FILE CHUNK_BYTES [zero]");
        return ExitCode::from(2);
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("pump_check: {e}");
            return ExitCode::from(2);
        }
    };
    let mut parser = Parser::new();
    let (mut valid, mut invalid) = (0u64, 0u64);
    let mut pump = Pump::with_reader(Zeroing(file, zero), Reader::new(), chunk);
    let run = pump.each_line(|line| -> io::Result<()> {
        match line {
            Ok(l) if matches!(parser.parse(l.as_bytes()), Ok(v) if v.as_object().is_some()) => {
                valid += 1
            }
            _ => invalid += 1,
        }
        Ok(())
    });
    if let Err(e) = run {
        eprintln!("pump_check: {e}");
        return ExitCode::from(2);
    }
    println!("valid {valid} invalid {invalid}");
    ExitCode::from(u8::from(invalid > 0))
}
