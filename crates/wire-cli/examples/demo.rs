//! The main job on built-in data: generate a realistic agent output stream (64 MB by default,
//! `cargo run --release --example demo -- BYTES` for another size), then run exactly what
//! `agentx-wire check --json` runs over it, in memory, and report the verdict and throughput.

use std::io::{self, Cursor};
use std::time::Instant;

use agentx_wire_cli::check::{check_stream, Direction, Level};

fn main() {
    let bytes: usize = match std::env::args().nth(1).map(|s| s.parse()) {
        None => 64 << 20,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            eprintln!("usage: demo [BYTES]");
            std::process::exit(2);
        }
    };
    let t = Instant::now();
    let stream = agentx_wire::sample::realistic_stream(1, bytes);
    eprintln!(
        "demo: generated {} bytes of realistic agent output in {:.2?}",
        stream.len(),
        t.elapsed()
    );
    for (name, level) in [("json", Level::Json), ("records", Level::Records)] {
        let t = Instant::now();
        let status = check_stream(
            Cursor::new(&stream),
            level,
            Direction::Output,
            true,
            io::stdout().lock(),
            io::stderr().lock(),
        );
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "demo: check --level {name}: exit {status}, {:.0} MB/s ({:.3} s)",
            stream.len() as f64 / secs / 1e6,
            secs
        );
        if status != 0 {
            std::process::exit(status);
        }
    }
}
