//! The JSON writer: strings, numbers and re-encoding of parsed values, compact and canonical.
//!
//! Strings are spelled by `escape`'s one table: `"`, `\` and every control character (short
//! forms where JSON has them, `\u00XX` otherwise), and always U+2028 and U+2029 as
//! `\u2028`/`\u2029`, so a consumer that splits on Unicode line boundaries cannot cut a record
//! in two (Framing and envelopes; acceptance scenario 2). Integers go through `itoa`, floats through `ryu`, and a
//! non-finite float is refused. This module never writes a newline outside a string escape and
//! never performs I/O.

use smallvec::SmallVec;

use super::escape::{self, write_char, write_plain_run};
use super::tape::{Tag, Value};

/// A float that JSON cannot represent (NaN or an infinity) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NonFinite;

impl std::fmt::Display for NonFinite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("non-finite number cannot be written as JSON")
    }
}

impl std::error::Error for NonFinite {}

/// Writes `s` as a quoted JSON string.
#[inline]
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    write_str_bytes(out, s.as_bytes());
}

/// Writes UTF-8 bytes `s` as a quoted JSON string. The caller guarantees `s` is UTF-8.
pub fn write_str_bytes(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    escape::write_body(out, s);
    out.push(b'"');
}

/// Appends the decimal spelling of `v`.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Appends the decimal spelling of `v`.
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Writes a finite float in its shortest round-tripping form; refuses NaN and infinities.
pub fn write_f64(out: &mut Vec<u8>, v: f64) -> Result<(), NonFinite> {
    if !v.is_finite() {
        return Err(NonFinite);
    }
    out.extend_from_slice(ryu::Buffer::new().format_finite(v).as_bytes());
    Ok(())
}

/// Re-encodes a parsed value compactly: member order kept, strings re-escaped canonically,
/// numbers as their original lexeme. One pass over the value's validated bytes
/// ([`super::copy_canonical`]); the tape walk below is the reference it is tested against.
pub fn write_value(out: &mut Vec<u8>, v: Value<'_, '_>) {
    if !super::canonical::copy_canonical(v.raw(), out) {
        write_value_from_tape(out, v);
    }
}

/// [`write_value`] by walking the tape: iterative (any depth the parser accepted is safe) and
/// allocation-free up to 32 levels deep. The reference for the one-pass copy.
#[doc(hidden)]
pub fn write_value_from_tape(out: &mut Vec<u8>, v: Value<'_, '_>) {
    struct Open {
        left: u32,
        object: bool,
    }
    let tape = v.tape;
    let input = v.input.as_bytes();
    let mut stack: SmallVec<[Open; 32]> = SmallVec::new();
    let mut i = v.idx;
    let string = |out: &mut Vec<u8>, i: usize| {
        if let Some(n) = tape.get(i) {
            let raw = input.get(n.start as usize..n.end as usize).unwrap_or(&[]);
            write_parsed_str(out, raw, n.flag);
        }
    };
    loop {
        let Some(n) = tape.get(i).copied() else {
            return;
        };
        match n.tag {
            Tag::Array | Tag::Object if n.count > 0 => {
                let object = n.tag == Tag::Object;
                out.push(if object { b'{' } else { b'[' });
                stack.push(Open {
                    left: n.count,
                    object,
                });
                i += 1;
                if object {
                    string(out, i);
                    out.push(b':');
                    i += 1;
                }
                continue;
            }
            Tag::Array => out.extend_from_slice(b"[]"),
            Tag::Object => out.extend_from_slice(b"{}"),
            Tag::String => string(out, i),
            Tag::Number => {
                out.extend_from_slice(input.get(n.start as usize..n.end as usize).unwrap_or(&[]))
            }
            Tag::True => out.extend_from_slice(b"true"),
            Tag::False => out.extend_from_slice(b"false"),
            Tag::Null => out.extend_from_slice(b"null"),
        }
        i += 1;
        loop {
            let Some(top) = stack.last_mut() else {
                return;
            };
            top.left -= 1;
            if top.left == 0 {
                out.push(if top.object { b'}' } else { b']' });
                stack.pop();
                continue;
            }
            out.push(b',');
            if top.object {
                string(out, i);
                out.push(b':');
                i += 1;
            }
            break;
        }
    }
}

/// Writes the body of a string the parser validated (`raw`, escapes as written) in canonical
/// form, transcoding escape by escape: no decode buffer, no allocation.
fn write_parsed_str(out: &mut Vec<u8>, raw: &[u8], escaped: bool) {
    if !escaped {
        return write_str_bytes(out, raw);
    }
    out.reserve(raw.len() + 2);
    out.push(b'"');
    let mut i = 0;
    while let Some(off) = raw.get(i..).and_then(|rest| memchr::memchr(b'\\', rest)) {
        write_plain_run(out, raw.get(i..i + off).unwrap_or(&[]));
        let (c, len) = escape::decode_escape_lossy(raw, i + off);
        write_char(out, c);
        i += off + len;
    }
    write_plain_run(out, raw.get(i..).unwrap_or(&[]));
    out.push(b'"');
}
