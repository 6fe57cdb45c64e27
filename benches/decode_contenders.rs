//! The decode contenders shared by `benches/decode.rs` (criterion) and `benches/peers`'s
//! `peer_decode` (the peers built by default and with `-C target-cpu=native`), included by
//! `#[path]` in both so the two measure exactly the same code. Each does the same minimal thing
//! with a parsed line: count it and `black_box` the value.

use std::hint::black_box;
use std::ops::Range;

use agentx_wire::json::Parser;

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
