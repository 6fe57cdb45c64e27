//! The decode workload shared by `benches/decode.rs` (criterion) and `benches/peers`'s
//! `peer_decode` (the peers built by default and with `-C target-cpu=native`), included by
//! `#[path]` in both so the two measure exactly the same code on the same inputs: the inputs
//! ([`Input::named`]) and the contenders, each doing the same minimal thing with a parsed line
//! (count it and `black_box` the value).

use std::hint::black_box;
use std::ops::Range;
use std::path::{Path, PathBuf};

use agentx_wire::json::Parser;

pub const STREAM_BYTES: usize = 8 << 20;

/// One benchmark input: the bytes and the ranges of its non-blank lines (LF excluded).
pub struct Input {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub lines: Vec<Range<usize>>,
}

impl Input {
    pub fn per_line(name: &'static str, bytes: Vec<u8>) -> Input {
        let mut lines = Vec::new();
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', &bytes) {
            if end > start {
                lines.push(start..end);
            }
            start = end + 1;
        }
        if start < bytes.len() {
            lines.push(start..bytes.len());
        }
        Input { name, bytes, lines }
    }

    pub fn whole(name: &'static str, bytes: Vec<u8>) -> Input {
        let whole: Range<usize> = 0..bytes.len();
        let lines = Vec::from([whole]);
        Input { name, bytes, lines }
    }

    /// The input called `name`: `realistic` and `stream_events` generated (8 MiB, per line),
    /// `twitter`, `citm_catalog` and `canada` read whole from `bench_dir`. `None` for another
    /// name; the read's error (with the path) when a classic is missing.
    pub fn named(name: &str, bench_dir: &Path) -> Option<Result<Input, (PathBuf, std::io::Error)>> {
        let classic = |name: &'static str| {
            let path = bench_dir.join(format!("{name}.json"));
            match std::fs::read(&path) {
                Ok(bytes) => Ok(Input::whole(name, bytes)),
                Err(e) => Err((path, e)),
            }
        };
        Some(match name {
            "realistic" => Ok(Input::per_line(
                "realistic",
                agentx_wire::sample::realistic_stream(1, STREAM_BYTES),
            )),
            "stream_events" => Ok(Input::per_line(
                "stream_events",
                agentx_wire::sample::stream_events(1, STREAM_BYTES),
            )),
            "twitter" => classic("twitter"),
            "citm_catalog" => classic("citm_catalog"),
            "canada" => classic("canada"),
            _ => return None,
        })
    }

    pub fn line_bytes(&self) -> u64 {
        self.lines.iter().map(|r| r.len() as u64).sum()
    }
}

/// Each contender parses every line and returns how many it accepted; the value of each line
/// goes through `black_box` so no work is optimised away.
pub type Contender = fn(&[u8], &[Range<usize>], &mut Scratch) -> usize;

/// State a contender may reuse across lines and iterations.
pub struct Scratch {
    parser: Parser,
    copy: Vec<u8>,
}

impl Scratch {
    /// One reused parser and a 1 MiB copy buffer (simd-json parses in place).
    pub fn new() -> Scratch {
        Scratch {
            parser: Parser::new(),
            copy: Vec::with_capacity(1 << 20),
        }
    }
}

fn agentx(bytes: &[u8], lines: &[Range<usize>], s: &mut Scratch) -> usize {
    let mut ok = 0;
    for r in lines {
        if let Ok(v) = s.parser.parse(&bytes[r.clone()]) {
            black_box(&v);
            ok += 1;
        }
    }
    ok
}

fn serde_json_value(bytes: &[u8], lines: &[Range<usize>], _: &mut Scratch) -> usize {
    let mut ok = 0;
    for r in lines {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&bytes[r.clone()]) {
            black_box(&v);
            ok += 1;
        }
    }
    ok
}

fn serde_json_ignored(bytes: &[u8], lines: &[Range<usize>], _: &mut Scratch) -> usize {
    let mut ok = 0;
    for r in lines {
        if let Ok(v) = serde_json::from_slice::<serde::de::IgnoredAny>(&bytes[r.clone()]) {
            black_box(&v);
            ok += 1;
        }
    }
    ok
}

fn simd_json_borrowed(bytes: &[u8], lines: &[Range<usize>], s: &mut Scratch) -> usize {
    let mut ok = 0;
    for r in lines {
        s.copy.clear();
        s.copy.extend_from_slice(&bytes[r.clone()]);
        if let Ok(v) = simd_json::to_borrowed_value(&mut s.copy) {
            black_box(&v);
            ok += 1;
        }
    }
    ok
}

fn sonic_rs_value(bytes: &[u8], lines: &[Range<usize>], _: &mut Scratch) -> usize {
    let mut ok = 0;
    for r in lines {
        if let Ok(v) = sonic_rs::from_slice::<sonic_rs::Value>(&bytes[r.clone()]) {
            black_box(&v);
            ok += 1;
        }
    }
    ok
}

pub const CONTENDERS: &[(&str, Contender)] = &[
    ("agentx", agentx),
    ("serde_json_value", serde_json_value),
    ("serde_json_ignored", serde_json_ignored),
    ("simd_json_borrowed", simd_json_borrowed),
    ("sonic_rs_value", sonic_rs_value),
];
