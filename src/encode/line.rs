//! The physical transformations of a marshaled record before validation: Unicode line and
//! paragraph separators escaped, the record proven to be one physical line, the `\n` appended.
//!
//! Owns: turning marshaled bytes into the exact final frame (WIRE-013: "apply every physical
//! transformation including separator escaping and the terminating newline in memory").
//! Must never: write anything, or change a byte of a record that holds no raw separator (the
//! JSON writer already escapes them, so for its output this is a scan and nothing else).

use std::sync::OnceLock;

use memchr::{memchr, memmem};

/// Why marshaled bytes cannot become one frame.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum LineFault {
    /// A raw `\n` before the terminator would split the record into two physical lines.
    RawLineFeed,
}

/// Rewrites raw U+2028 / U+2029 (`E2 80 A8` / `E2 80 A9`) as `\u2028` / `\u2029`, using
/// `spare` as the temporary buffer (both are reused allocations). A raw separator can only
/// legally sit inside a JSON string, where the escape means the same character.
pub(crate) fn escape_separators(buf: &mut Vec<u8>, spare: &mut Vec<u8>) {
    let first = match find_separator(buf, 0) {
        Some(i) => i,
        None => return,
    };
    spare.clear();
    spare.extend_from_slice(&buf[..first]);
    let mut i = first;
    while let Some(at) = find_separator(buf, i) {
        spare.extend_from_slice(&buf[i..at]);
        spare.extend_from_slice(if buf[at + 2] == 0xA8 {
            b"\\u2028"
        } else {
            b"\\u2029"
        });
        i = at + 3;
    }
    spare.extend_from_slice(&buf[i..]);
    std::mem::swap(buf, spare);
}

/// Finds the next `E2 80 A8` / `E2 80 A9`. Searching the two-byte prefix `E2 80` skips the
/// common `E2 86 92` (→) and similar characters that a one-byte `E2` search would stop at.
pub(crate) fn find_separator(buf: &[u8], from: usize) -> Option<usize> {
    static PREFIX: OnceLock<memmem::Finder<'static>> = OnceLock::new();
    let finder = PREFIX.get_or_init(|| memmem::Finder::new(b"\xE2\x80"));
    // `find` in a loop rather than `find_iter`: the iterator copies the finder's searcher
    // (256 bytes) for every record.
    let mut at = from;
    while let Some(i) = finder.find(buf.get(at..)?) {
        if matches!(buf.get(at + i + 2), Some(0xA8 | 0xA9)) {
            return Some(at + i);
        }
        at += i + 2;
    }
    None
}

/// Turns marshaled bytes into the final frame in place: separators escaped, one physical line
/// checked, `\n` appended.
pub(crate) fn finish_frame(buf: &mut Vec<u8>, spare: &mut Vec<u8>) -> Result<(), LineFault> {
    escape_separators(buf, spare);
    if memchr(b'\n', buf).is_some() {
        return Err(raw_line_feed());
    }
    buf.push(b'\n');
    Ok(())
}

#[cold]
fn raw_line_feed() -> LineFault {
    LineFault::RawLineFeed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_escaped() {
        let mut b = "[\"a\u{2028}b\u{2029}\u{2028}\"]".as_bytes().to_vec();
        let mut s = Vec::new();
        finish_frame(&mut b, &mut s).expect("frame");
        assert_eq!(b, b"[\"a\\u2028b\\u2029\\u2028\"]\n".to_vec());
    }

    #[test]
    fn other_e2_sequences_untouched() {
        let src = "\"\u{2027}\u{202A}\u{20AC}\u{2018}\"".as_bytes().to_vec();
        let mut b = src.clone();
        let mut s = Vec::new();
        finish_frame(&mut b, &mut s).expect("frame");
        assert_eq!(&b[..b.len() - 1], &src[..]);
    }

    #[test]
    fn raw_newline_rejected() {
        let mut b = b"{\"a\":\n1}".to_vec();
        assert_eq!(
            finish_frame(&mut b, &mut Vec::new()),
            Err(LineFault::RawLineFeed)
        );
    }

    #[test]
    fn truncated_e2_at_end() {
        let mut b = vec![b'"', 0xE2, 0x80];
        finish_frame(&mut b, &mut Vec::new()).expect("frame");
        assert_eq!(b, vec![b'"', 0xE2, 0x80, b'\n']);
    }

    #[test]
    fn find_separator_agrees_with_a_naive_search() {
        // Every start offset over inputs where `E2 80` is followed by a non-separator, by
        // another `E2`, by the end, and by each separator.
        let inputs: [&[u8]; 6] = [
            b"\xE2\x80\xE2\x80\xA8",
            b"a\xE2\x80\x99\xE2\x80\xA9b",
            b"\xE2\xE2\x80\xA8\xE2\x80",
            b"\xE2\x80",
            b"no separator here \xE2\x86\x92",
            "x\u{2029}\u{2028}y\u{2019}\u{2028}".as_bytes(),
        ];
        for input in inputs {
            for from in 0..=input.len() + 1 {
                let naive = (from..input.len().saturating_sub(2)).find(|&i| {
                    input[i] == 0xE2 && input[i + 1] == 0x80 && matches!(input[i + 2], 0xA8 | 0xA9)
                });
                assert_eq!(find_separator(input, from), naive, "{input:?} from {from}");
            }
        }
    }
}
