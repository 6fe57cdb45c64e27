//! Canonical re-encoding straight from validated JSON bytes: the fast path of
//! [`super::write_value`] and of `wire::RawJson`.
//!
//! Owns one pass that copies a validated value's bytes to the output, diverging only where the
//! canonical form differs (whitespace outside strings, `\/`, `\u` escapes, raw U+2028/U+2029).
//! It never validates: fed bytes that are not one validated JSON value it may return `false`.

use super::escape;

/// Bytes inside a string that need a look: the quote, the backslash, and the lead byte of
/// U+2028/U+2029 (E2 80 A8/A9), which the writer always escapes.
const fn in_string_table() -> [bool; 256] {
    let mut t = [false; 256];
    t[b'"' as usize] = true;
    t[b'\\' as usize] = true;
    t[0xE2] = true;
    t
}
static IN_STRING: [bool; 256] = in_string_table();

/// The first byte of `s` that [`IN_STRING`] marks: eight bytes at a time (SWAR: the lowest
/// zero byte of `w ^ pattern` is exact), then the tail byte by byte.
#[inline]
fn find_in_string(s: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let zero = |v: u64| v.wrapping_sub(LO) & !v & HI;
    let mut chunks = s.chunks_exact(8);
    let mut base = 0;
    for chunk in chunks.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let hit = zero(w ^ (LO * u64::from(b'"')))
            | zero(w ^ (LO * u64::from(b'\\')))
            | zero(w ^ (LO * 0xE2));
        if hit != 0 {
            return Some(base + (hit.trailing_zeros() / 8) as usize);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&c| IN_STRING[c as usize])
        .map(|p| base + p)
}

/// Writes validated JSON in `json::write_value`'s canonical compact form in one pass:
/// whitespace outside strings dropped, runs of plain string bytes copied whole, short escapes
/// kept, and every other escaped or separator character decoded and re-written by `escape`
/// (the writer's one table, not a copy of it). Returns `false`, having
/// written nothing, only for bytes that are not one validated JSON value.
pub fn copy_canonical(b: &[u8], out: &mut Vec<u8>) -> bool {
    let start = out.len();
    out.reserve(b.len());
    // Bytes before `flushed` are in `out`; the output equals the input except where a
    // divergence (whitespace, `\/`, `\u`, U+2028/9) flushes and writes something else.
    let mut flushed = 0;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        // Outside a string: drop insignificant whitespace; everything else is copied.
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                out.extend_from_slice(b.get(flushed..i).unwrap_or_default());
                i += 1;
                flushed = i;
                continue;
            }
            b'"' => i += 1,
            _ => {
                i += 1;
                continue;
            }
        }
        // Inside a string.
        loop {
            let rest = b.get(i..).unwrap_or_default();
            let Some(j) = find_in_string(rest) else {
                out.truncate(start);
                return false;
            };
            i += j;
            match rest.get(j).copied().unwrap_or(b'"') {
                b'"' => {
                    i += 1;
                    break;
                }
                b'\\' => match rest.get(j + 1).copied() {
                    // The writer's own short escapes stay as they are.
                    Some(l) if escape::is_canonical_short(l) => i += 2,
                    Some(b'/') => {
                        out.extend_from_slice(b.get(flushed..i).unwrap_or_default());
                        out.push(b'/');
                        i += 2;
                        flushed = i;
                    }
                    Some(b'u') => match escape::decode_escape(rest, j) {
                        Some((ch, len)) => {
                            out.extend_from_slice(b.get(flushed..i).unwrap_or_default());
                            escape::write_char(out, ch);
                            i += len;
                            flushed = i;
                        }
                        None => {
                            out.truncate(start);
                            return false;
                        }
                    },
                    _ => {
                        out.truncate(start);
                        return false;
                    }
                },
                _ => match (rest.get(j + 1), rest.get(j + 2)) {
                    // U+2028 / U+2029 are always written as escapes.
                    (Some(0x80), Some(&l @ (0xA8 | 0xA9))) => {
                        out.extend_from_slice(b.get(flushed..i).unwrap_or_default());
                        escape::write_char(out, if l == 0xA8 { '\u{2028}' } else { '\u{2029}' });
                        i += 3;
                        flushed = i;
                    }
                    _ => i += 1,
                },
            }
        }
    }
    out.extend_from_slice(b.get(flushed..).unwrap_or_default());
    true
}
