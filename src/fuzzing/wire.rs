//! Fuzz properties of the `wire` layer, and the byte-driven record generator that the fuzz
//! targets and the proptest round-trip tests share.
//!
//! [`decode_any`]: arbitrary bytes decoded as an input and as an output record never panic;
//! whatever decodes re-encodes to canonical JSON that decodes to an equal record, encodes to
//! the same bytes again, and has an equal owned form. [`round_trip`]: the bytes drive
//! [`Gen`] to build a record of every type (with hostile strings: quotes, controls, U+2028,
//! non-ASCII), which must satisfy `decode(encode(r)) == r` and byte-idempotent encoding.

use std::borrow::Cow;

use crate::json::Parser;
use crate::wire::*;

#[path = "wire_gen.rs"]
mod wire_gen;
pub use wire_gen::{Gen, INPUT_KINDS, OUTPUT_KINDS};

/// Decodes `data` as an input and as an output record; every success must round-trip.
pub fn decode_any(data: &[u8]) {
    let mut parser = Parser::new();
    if let Ok(r) = InputRecord::decode_line(data, &mut parser) {
        check_input(&r);
    }
    if let Ok(r) = OutputRecord::decode_line(data, &mut parser) {
        check_output(&r);
    }
}

/// Builds one input and one output record from `data` and checks their round trips.
pub fn round_trip(data: &[u8]) {
    let mut g = Gen::new(data);
    let which = g.u8();
    check_input(&g.input_record(which));
    let which = g.u8();
    check_output(&g.output_record(which));
}

/// `decode(encode(r)) == r`, byte-idempotent encoding, equal owned form.
pub fn check_input(r: &InputRecord<'_>) {
    let mut once = Vec::new();
    r.encode(&mut once);
    let mut parser = Parser::new();
    let again = InputRecord::decode_line(&once, &mut parser)
        .unwrap_or_else(|e| panic!("canonical input record rejected: {e}: {}", show(&once)));
    assert_eq!(&again, r, "decode(encode(r)) != r: {}", show(&once));
    let mut twice = Vec::new();
    again.encode(&mut twice);
    assert_eq!(once, twice, "encoding is not idempotent");
    assert!(!once.contains(&b'\n'), "a record must be one physical line");
    assert_eq!(&r.clone().into_owned(), r, "owned form differs");
}

/// As [`check_input`], for output records.
pub fn check_output(r: &OutputRecord<'_>) {
    let mut once = Vec::new();
    r.encode(&mut once);
    let mut parser = Parser::new();
    let again = OutputRecord::decode_line(&once, &mut parser)
        .unwrap_or_else(|e| panic!("canonical output record rejected: {e}: {}", show(&once)));
    assert_eq!(&again, r, "decode(encode(r)) != r: {}", show(&once));
    let mut twice = Vec::new();
    again.encode(&mut twice);
    assert_eq!(once, twice, "encoding is not idempotent");
    assert!(!once.contains(&b'\n'), "a record must be one physical line");
    assert_eq!(&r.clone().into_owned(), r, "owned form differs");
}

fn show(b: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(&b[..b.len().min(2000)])
}
