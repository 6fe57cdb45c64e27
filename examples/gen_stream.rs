//! Writes a realistic agent output stream to stdout (the input of `benches/process.sh`).
//!
//! Usage: `gen_stream [SIZE] [SEED]` — SIZE in bytes, with an optional `K`, `M` or `G` suffix
//! (powers of 1024; default 64M); SEED a u64 (default 1). `--events` generates a stream of only
//! `stream_event` records instead.

use std::io::Write;
use std::process::ExitCode;

fn parse_size(s: &str) -> Option<usize> {
    let (digits, mult) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1usize << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(mult)
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let events = args.iter().any(|a| a == "--events");
    args.retain(|a| a != "--events");
    let size = match args.first().map(|s| parse_size(s)) {
        None => 64 << 20,
        Some(Some(n)) => n,
        Some(None) => {
            eprintln!("gen_stream: SIZE must be a number with an optional K/M/G suffix");
            return ExitCode::from(2);
        }
    };
    let seed = match args.get(1).map(|s| s.parse::<u64>()) {
        None => 1,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            eprintln!("gen_stream: SEED must be an unsigned integer");
            return ExitCode::from(2);
        }
    };
    let bytes = if events {
        agentx_wire::sample::stream_events(seed, size)
    } else {
        agentx_wire::sample::realistic_stream(seed, size)
    };
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    if lock.write_all(&bytes).and_then(|()| lock.flush()).is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
