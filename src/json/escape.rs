//! JSON string escapes: the writer's one spelling table and the one strict decoder.
//!
//! Owns: how the writer spells every character it escapes (`\"`, `\\`, `\b \f \n \r \t`,
//! `\u00xx` with lowercase hex for the other control characters, and always `\u2028`/`\u2029`
//! so a consumer splitting on Unicode line boundaries cannot cut a record), and the strict
//! decoding of one escape (the eight short escapes, `\uXXXX` with a surrogate pair joined into
//! one scalar, a lone or unpaired surrogate rejected, PROFILE §2a). Everything that writes or
//! reads escapes goes through here: the writer (`write`), the one-pass canonical copy
//! (`canonical`), decoded values (`unescape`), the credential scanner (`encode::frame_walk`) and the
//! escaped spellings of `encode::CredentialSet`. Copies of these rules that had to agree are
//! how the LF-credential leak got in (b299dcc); "canonical" is therefore *defined* here as
//! "the decoded character re-spelled by the table gives the same bytes" (
//! [`canonical_escape_len`]), not written out a second time.
//!
//! Must never: allocate (except into the caller's buffer), panic on any bytes, or decide where
//! a string ends (that is the parser's and the scanner's job).

use super::scan;
use super::scan::string::hex4;

use crate::hex::LOWER as HEX;

/// The writer's spelling of each ASCII character: `(length, bytes)`; length 0 means the
/// character is written as itself.
static ASCII: [(u8, [u8; 6]); 128] = ASCII_TABLE;

const fn ascii_table() -> [(u8, [u8; 6]); 128] {
    let mut t = [(0u8, [0u8; 6]); 128];
    let mut c = 0;
    while c < 0x20 {
        t[c] = (6, [b'\\', b'u', b'0', b'0', HEX[c >> 4], HEX[c & 0xf]]);
        c += 1;
    }
    let short: [(u8, u8); 7] = [
        (b'"', b'"'),
        (b'\\', b'\\'),
        (0x08, b'b'),
        (0x0c, b'f'),
        (b'\n', b'n'),
        (b'\r', b'r'),
        (b'\t', b't'),
    ];
    let mut k = 0;
    while k < short.len() {
        t[short[k].0 as usize] = (2, [b'\\', short[k].1, 0, 0, 0, 0]);
        k += 1;
    }
    t
}

/// `SHORT[x]`: `\x` is the writer's own two-byte spelling of the character it decodes to
/// (derived from [`ASCII`], not listed again).
static SHORT: [bool; 256] = short_table();

const fn short_table() -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 128 {
        let (len, bytes) = ASCII_TABLE[c];
        if len == 2 {
            t[bytes[1] as usize] = true;
        }
        c += 1;
    }
    t
}

const ASCII_TABLE: [(u8, [u8; 6]); 128] = ascii_table();

const LINE_SEPARATOR: &[u8] = b"\\u2028";
const PARAGRAPH_SEPARATOR: &[u8] = b"\\u2029";

/// The writer's escape for `c`, or `None` when the writer emits `c` as its UTF-8 bytes.
#[inline]
pub(crate) fn escape_of(c: char) -> Option<&'static [u8]> {
    match c as u32 {
        u @ 0..=0x7f => {
            let (len, bytes) = &ASCII[u as usize];
            (*len != 0).then(|| &bytes[..usize::from(*len)])
        }
        0x2028 => Some(LINE_SEPARATOR),
        0x2029 => Some(PARAGRAPH_SEPARATOR),
        _ => None,
    }
}

/// Appends the writer's escape of the ASCII byte `c` (a quote, a backslash or a control byte:
/// what `scan::find_special` stops at).
#[inline]
fn write_escaped_byte(out: &mut Vec<u8>, c: u8) {
    match ASCII.get(usize::from(c)) {
        Some((len, bytes)) if *len != 0 => out.extend_from_slice(&bytes[..usize::from(*len)]),
        _ => out.push(c),
    }
}

/// Appends one character as the writer spells it inside a string.
#[inline]
pub(crate) fn write_char(out: &mut Vec<u8>, c: char) {
    match escape_of(c) {
        Some(e) => out.extend_from_slice(e),
        None => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// The escape of a raw U+2028/U+2029 (E2 80 A8 / E2 80 A9) starting at `s[p]`, if one does.
#[inline]
fn separator_at(s: &[u8], p: usize) -> Option<&'static [u8]> {
    if s.get(p + 1) != Some(&0x80) {
        return None;
    }
    match s.get(p + 2) {
        Some(0xA8) => Some(LINE_SEPARATOR),
        Some(0xA9) => Some(PARAGRAPH_SEPARATOR),
        _ => None,
    }
}

/// Appends a run of bytes that holds no quote, backslash or control byte, escaping only the
/// raw U+2028/U+2029 it may hold.
#[inline]
pub(crate) fn write_plain_run(out: &mut Vec<u8>, run: &[u8]) {
    let mut flushed = 0;
    let mut k = 0;
    while let Some(off) = memchr::memchr(0xE2, run.get(k..).unwrap_or_default()) {
        let p = k + off;
        if let Some(sep) = separator_at(run, p) {
            out.extend_from_slice(run.get(flushed..p).unwrap_or_default());
            out.extend_from_slice(sep);
            flushed = p + 3;
        }
        k = p + 1;
    }
    out.extend_from_slice(run.get(flushed..).unwrap_or_default());
}

/// Appends the body of a JSON string (no quotes) holding the bytes `s` exactly as the writer
/// spells them. `s` need not be UTF-8: bytes that are not escaped are copied as they are (a
/// non-UTF-8 credential keeps its bytes).
pub(crate) fn write_body(out: &mut Vec<u8>, s: &[u8]) {
    let mut i = 0;
    loop {
        let j = scan::find_special(s, i);
        write_plain_run(out, s.get(i..j).unwrap_or_default());
        let Some(&c) = s.get(j) else { break };
        write_escaped_byte(out, c);
        i = j + 1;
    }
}

/// True when `\letter` is a short escape the writer itself writes (`\/` is not).
#[inline]
pub(crate) fn is_canonical_short(letter: u8) -> bool {
    SHORT[usize::from(letter)]
}

/// Decodes the escape whose backslash is `s[at]`, strictly: the character and the escape's
/// length (2, 6, or 12 for a surrogate pair), or `None` for anything a strict parser rejects
/// (an unknown escape, fewer than four hex digits, a lone or unpaired surrogate, the end).
#[inline]
pub(crate) fn decode_escape(s: &[u8], at: usize) -> Option<(char, usize)> {
    let c = match *s.get(at.checked_add(1)?)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => return decode_unicode(s, at),
        _ => return None,
    };
    Some((c, 2))
}

fn decode_unicode(s: &[u8], at: usize) -> Option<(char, usize)> {
    let unit = hex4(s, at + 2)?;
    match unit {
        0xD800..=0xDBFF => {
            if s.get(at + 6..at + 8)? != b"\\u" {
                return None;
            }
            let low = hex4(s, at + 8).filter(|l| (0xDC00..=0xDFFF).contains(l))?;
            let scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            char::from_u32(scalar).map(|c| (c, 12))
        }
        0xDC00..=0xDFFF => None,
        u => char::from_u32(u).map(|c| (c, 6)),
    }
}

/// [`decode_escape`] for bytes a strict parser already validated: an escape that does not
/// decode (a caller bug) gives U+FFFD and a length of 1, never a panic.
#[inline]
pub(crate) fn decode_escape_lossy(s: &[u8], at: usize) -> (char, usize) {
    decode_escape(s, at).unwrap_or(('\u{fffd}', 1))
}

/// The length of the escape at `s[at]` when it is spelled exactly as the writer spells the
/// character it decodes to (so `\/`, `\u0041`, `\u000a`, `\u001F` and surrogate pairs are
/// not); `None` otherwise, also for an escape that does not decode.
#[inline]
pub(crate) fn canonical_escape_len(s: &[u8], at: usize) -> Option<usize> {
    let letter = *s.get(at.checked_add(1)?)?;
    if SHORT[usize::from(letter)] {
        return Some(2);
    }
    if letter != b'u' {
        return None;
    }
    let (c, len) = decode_unicode(s, at)?;
    let spelled = escape_of(c)?;
    (s.get(at..at + len) == Some(spelled)).then_some(len)
}

/// Decodes a string body (the bytes between the quotes) into `out`, strictly: every escape
/// through [`decode_escape`], other bytes copied as they are. False on the first escape that
/// does not decode (what was decoded before it stays in `out`).
pub(crate) fn decode_body(content: &[u8], out: &mut Vec<u8>) -> bool {
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'\\', content.get(i..).unwrap_or_default()) {
        let at = i + off;
        out.extend_from_slice(content.get(i..at).unwrap_or_default());
        let Some((c, len)) = decode_escape(content, at) else {
            return false;
        };
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        i = at + len;
    }
    out.extend_from_slice(content.get(i..).unwrap_or_default());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(s: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_body(&mut out, s);
        out
    }

    #[test]
    fn the_spelling_table() {
        assert_eq!(body(b"a\"b\\c/d"), b"a\\\"b\\\\c/d");
        assert_eq!(
            body(b"\x08\x0c\n\r\t\x00\x01\x1f\x7f"),
            b"\\b\\f\\n\\r\\t\\u0000\\u0001\\u001f\x7f"
        );
        assert_eq!(
            body("x\u{2028}y\u{2029}z\u{2027}".as_bytes()),
            "x\\u2028y\\u2029z\u{2027}".as_bytes()
        );
        assert_eq!(body(b"\xff\xe2\x80"), b"\xff\xe2\x80");
        for c in ['\u{0}', '\u{1f}', '"', '\\', '\u{2028}'] {
            let mut one = Vec::new();
            write_char(&mut one, c);
            let mut buf = [0u8; 4];
            assert_eq!(one, body(c.encode_utf8(&mut buf).as_bytes()), "{c:?}");
        }
        assert_eq!(escape_of('a'), None);
        assert_eq!(escape_of('é'), None);
    }

    #[test]
    fn strict_decoding() {
        let d = |s: &[u8]| decode_escape(s, 0);
        assert_eq!(d(br#"\""#), Some(('"', 2)));
        assert_eq!(d(br"\/"), Some(('/', 2)));
        assert_eq!(d(br"\u00e9"), Some(('é', 6)));
        assert_eq!(d(br"\u00E9"), Some(('é', 6)));
        assert_eq!(d(br"\ud83d\ude00"), Some(('😀', 12)));
        assert_eq!(d(br"\uD83D\uDE00"), Some(('😀', 12)));
        for bad in [
            &br"\q"[..],
            br"\",
            br"\u12",
            br"\u12g4",
            br"\ud800",
            br"\udc00",
            br"\ud800\u0041",
            br"\ud800\n",
            br"\ud800\ud800",
            b"",
        ] {
            assert_eq!(d(bad), None, "{bad:?}");
        }
        assert_eq!(decode_escape_lossy(br"\q", 0), ('\u{fffd}', 1));
        assert_eq!(decode_escape(b"x", usize::MAX), None);
    }

    #[test]
    fn canonical_means_re_spelled_identically() {
        for yes in [
            &br#"\""#[..],
            br"\\",
            br"\n",
            br"\b",
            br"\u0001",
            br"\u001f",
            br"\u2028",
            br"\u2029",
        ] {
            assert_eq!(canonical_escape_len(yes, 0), Some(yes.len()), "{yes:?}");
        }
        for no in [
            &br"\/"[..],
            br"\u0041",
            br"\u000a",
            br"\u0022",
            br"\u001F",
            br"\u00e9",
            br"\ud83d\ude00",
            br"\u202A",
            br"\q",
        ] {
            assert_eq!(canonical_escape_len(no, 0), None, "{no:?}");
        }
    }

    /// Every byte string survives the writer's spelling and the strict decoder, and every
    /// escape the writer writes is canonical.
    #[test]
    fn write_then_decode_is_identity() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet: &[&[u8]] = &[
            b"a",
            b"\"",
            b"\\",
            b"\n",
            b"\x00",
            b"\x1f",
            b"/",
            "é".as_bytes(),
            "\u{2028}".as_bytes(),
            "\u{2029}".as_bytes(),
            b"\xe2",
            b"\x80",
            b"\xa8",
            b"u",
        ];
        for _ in 0..2000 {
            let len = (next() % 24) as usize;
            let s: Vec<u8> = (0..len)
                .flat_map(|_| {
                    alphabet[(next() % alphabet.len() as u64) as usize]
                        .iter()
                        .copied()
                })
                .collect();
            let spelled = body(&s);
            let mut back = Vec::new();
            assert!(decode_body(&spelled, &mut back), "{s:?}");
            assert_eq!(back, s);
            let mut i = 0;
            while let Some(off) = memchr::memchr(b'\\', &spelled[i..]) {
                let at = i + off;
                let len = canonical_escape_len(&spelled, at).expect("canonical");
                i = at + len;
            }
        }
    }
}
