//! The strict one-pass parser: UTF-8, RFC 8259 grammar, PROFILE §2a rules, depth limit and
//! duplicate member names, all checked while the tape is built.
//!
//! Owns grammar and limits. A [`Parser`] keeps its tape, stack and scratch buffers between
//! documents, so parsing a line allocates nothing in steady state. Incomplete input is an
//! error here (the framer decides what a complete line is). This module never decodes
//! strings except member names that carry escapes, and never looks at record types.
//!
//! One pass over the bytes: the grammar is generic over the scan backend's kernel and runs
//! inside the function `scan::dispatch` compiles for that backend (chosen once per parser).
//! UTF-8 is checked inside the string walk (non-ASCII bytes are only legal in strings); a
//! rejected document is re-checked as a whole so an input that is not UTF-8 reports
//! [`ErrorKind::InvalidUtf8`] at its first bad byte, exactly as a separate pre-pass would.

use super::error::{Error, ErrorKind, Malformed};
use super::members::{self, Name, NameFilter};
use super::scan::string::string_body;
use super::scan::{self, skip_ws, Backend, Checked, Kernel, Window, WithKernel};
use super::tape::{Document, Node, Tag, Value};

/// Parser limits (STYLE #7: every limit explicit and configurable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Deepest allowed nesting of arrays and objects; one more is [`ErrorKind::TooDeep`].
    pub max_depth: u32,
}

/// PROFILE §2a: nesting deeper than 128 arrays/objects is rejected.
pub const DEFAULT_MAX_DEPTH: u32 = 128;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: DEFAULT_MAX_DEPTH,
        }
    }
}

/// An open array or object.
#[derive(Clone, Copy)]
struct Open {
    node: u32,
    /// Arrays: elements so far. Objects: set when they close, from their keys.
    count: u32,
    /// Index into `keys` of this object's first member name; `u32::MAX` for arrays.
    names_from: u32,
    /// Objects: the filter of the keys of their names so far.
    names: NameFilter,
}

impl Open {
    #[inline]
    fn is_object(&self) -> bool {
        self.names_from != u32::MAX
    }
}

/// Proof that [`Parser::run`] accepted an input, which `scan::validated_text` requires before
/// it treats the input as UTF-8. Only this module can make one; it has no size, so returning it
/// costs what returning `()` does.
pub(crate) struct Accepted(());

/// A reusable strict JSON parser.
pub struct Parser {
    limits: Limits,
    backend: Checked,
    tape: Vec<Node>,
    stack: Vec<Open>,
    /// Duplicate-detection keys of the member names of every open object (`members::key`).
    keys: Vec<u64>,
    scratch: members::Scratch,
    /// The predicted length (at most 63) of the gap before a member or element at each depth,
    /// the depth taken mod 64; a closing bracket's gap uses the slot of the depth around it.
    /// Kept across documents ([`Kernel::gap`]). A hint only: no answer depends on it.
    gaps: [u8; 64],
}

impl Default for Parser {
    fn default() -> Parser {
        Parser {
            limits: Limits::default(),
            backend: scan::selected_checked(),
            tape: Vec::new(),
            stack: Vec::new(),
            keys: Vec::new(),
            scratch: members::Scratch::default(),
            gaps: [1; 64],
        }
    }
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser")
            .field("limits", &self.limits)
            .field("backend", &self.backend.backend())
            .finish_non_exhaustive()
    }
}

/// One parse, handed to `scan::dispatch` to run with a backend's kernel.
struct Grammar<'p, 'b> {
    parser: &'p mut Parser,
    input: &'b [u8],
}

impl WithKernel for Grammar<'_, '_> {
    type Out = Result<(), Error>;

    #[inline(always)]
    fn run<K: Kernel>(self, kernel: K) -> Result<(), Error> {
        self.parser.document(kernel, self.input)
    }
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Parses one complete JSON text into a document that owns its tape.
pub fn parse(input: &[u8]) -> Result<Document<'_>, Error> {
    let mut p = Parser::new();
    let accepted = p.run(input)?;
    Ok(Document {
        input: scan::validated_text(input, accepted),
        tape: std::mem::take(&mut p.tape),
    })
}

/// The byte at `b[i]`, or 0 at or past the end: 0 starts no token and is no separator, so
/// the grammar's fast paths need no separate end test (its error paths tell the two apart by
/// comparing `i` with the length).
#[inline(always)]
fn byte_at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

/// `{"type":` as a [`members::word_at`] word.
const TYPE_FIRST: u64 = u64::from_le_bytes(*b"{\"type\":");

/// The duplicate-detection key of the name `type` (a name of at most 8 bytes is its own
/// zero-padded word; `members::key`).
const TYPE_KEY: u64 = u32::from_le_bytes(*b"type") as u64;

/// [`skip_ws`] and the byte where it stops (see [`byte_at`]). Compact JSON has a token byte
/// (above 0x20) at `i`: one load and one comparison.
#[inline(always)]
fn skip_ws_at<K: Kernel>(k: K, b: &[u8], i: usize, w: &mut Window) -> (usize, u8) {
    let c = byte_at(b, i);
    if c > b' ' {
        return (i, c);
    }
    let j = skip_ws(k, b, i, w);
    (j, byte_at(b, j))
}

impl Parser {
    /// A parser with the profile's default limits.
    pub fn new() -> Parser {
        Parser::default()
    }

    /// A parser with the given limits.
    pub fn with_limits(limits: Limits) -> Parser {
        Parser {
            limits,
            ..Parser::default()
        }
    }

    /// The parser's limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// A parser on an explicit scan backend, or `None` when this CPU cannot run it. Every
    /// backend accepts and rejects exactly the same documents; for differential tests.
    #[doc(hidden)]
    pub fn with_backend(limits: Limits, backend: Backend) -> Option<Parser> {
        scan::checked(backend).map(|backend| Parser {
            limits,
            backend,
            ..Parser::default()
        })
    }

    /// The scan backend this parser runs (the fastest this CPU supports, unless chosen).
    pub fn backend(&self) -> Backend {
        self.backend.backend()
    }

    /// Parses one complete JSON text (any value at the top, JSON whitespace around it) and
    /// returns its root. The tape is reused by the next call.
    ///
    /// Inlined into the caller, which then builds the root in its own registers: returned from
    /// a call, the root was written as 8-byte words and read back by callers that move it as
    /// 16-byte loads, a failed store forward on every document (≈ 40 % of the time of parsing
    /// `{}` in a loop that keeps each root, perf).
    #[inline]
    pub fn parse<'p, 'a>(&'p mut self, input: &'a [u8]) -> Result<Value<'p, 'a>, Error> {
        let accepted = self.run(input)?;
        Ok(Value {
            tape: &self.tape,
            input: scan::validated_text(input, accepted),
            idx: 0,
        })
    }

    /// Parses `input` into the tape; an accepted input is UTF-8, and the [`Accepted`] returned
    /// lets `scan::validated_text` say so. Returns no text: a `&str` in the result was written
    /// as two words and read back as one 16-byte load, a store-forwarding stall on every line
    /// (`Parser::parse` held ≈ 4 % of the samples of `stream_event` lines; the time moved
    /// within the noise).
    fn run(&mut self, input: &[u8]) -> Result<Accepted, Error> {
        if input.len() >= u32::MAX as usize {
            return Err(Error::new(ErrorKind::TooLarge, 0));
        }
        self.tape.clear();
        self.stack.clear();
        self.keys.clear();
        let result = if input.starts_with(BOM) {
            Err(Error::malformed(Malformed::ByteOrderMark, 0))
        } else {
            let backend = self.backend;
            scan::dispatch(
                backend,
                Grammar {
                    parser: self,
                    input,
                },
            )
        };
        match result {
            Ok(()) => Ok(Accepted(())),
            Err(e) => Err(self.rejected(input, e)),
        }
    }

    /// The error for a rejected document: not UTF-8 comes first, at its first bad byte (as the
    /// separate UTF-8 pass this parser no longer makes reported it), then the grammar's error.
    #[cold]
    #[inline(never)]
    fn rejected(&mut self, input: &[u8], e: Error) -> Error {
        // Keep allocations bounded by what a valid document would use next time.
        self.stack.clear();
        self.keys.clear();
        match simdutf8::compat::from_utf8(input) {
            Ok(_) => e,
            Err(bad) => Error::new(ErrorKind::InvalidUtf8, bad.valid_up_to()),
        }
    }

    #[inline(always)]
    fn document<K: Kernel>(&mut self, k: K, b: &[u8]) -> Result<(), Error> {
        // The 64-byte view of the short-string step and of whitespace runs, kept across the
        // tokens of this document.
        let mut w = Window::default();
        // `c` is always the byte at `i` (0 at the end, see `byte_at`), read once: the step
        // that finds a token's offset hands its first byte on with it.
        let (mut i, mut c) = skip_ws_at(k, b, 0, &mut w);
        if i == b.len() {
            return Err(Error::malformed(Malformed::EmptyInput, i));
        }
        // The byte that closes the innermost open container (`}` or `]`), 0 outside all: the
        // step after a value needs no look at the stack but to count an array's elements.
        let mut closer = 0u8;
        'value: loop {
            // A value starts at `i` (whitespace already skipped); strings are the most
            // common, so they are tested first.
            if c == b'"' {
                let (end, escaped) = string_body(k, b, i + 1, &mut w)?;
                self.tape
                    .push(Node::scalar(Tag::String, escaped, i + 1, end));
                i = end + 1;
            } else {
                match c {
                    b'{' | b'[' => {
                        if self.stack.len() >= self.limits.max_depth as usize {
                            return Err(Error::new(ErrorKind::TooDeep, i));
                        }
                        let is_object = c == b'{';
                        let node = self.tape.len() as u32;
                        let tag = if is_object { Tag::Object } else { Tag::Array };
                        self.tape.push(Node::scalar(tag, false, i, i));
                        let names_from = if is_object {
                            self.keys.len() as u32
                        } else {
                            u32::MAX
                        };
                        self.stack.push(Open {
                            node,
                            count: 0,
                            names_from,
                            names: NameFilter::default(),
                        });
                        // `{` + 2 is `}`, `[` + 2 is `]`.
                        closer = c + 2;
                        if is_object && members::word_at(b, i) == TYPE_FIRST {
                            // `{"type":`, how every agent-stream record and most of their nested
                            // objects begin: the member name without the string walk, its key
                            // known (`members::key` of `type`, tested). An object's member
                            // count is taken from its keys when it closes.
                            self.tape
                                .push(Node::scalar(Tag::String, false, i + 2, i + 6));
                            self.keys.push(TYPE_KEY);
                            if let Some(top) = self.stack.last_mut() {
                                top.names.add(TYPE_KEY);
                            }
                            (i, c) = skip_ws_at(k, b, i + 8, &mut w);
                            continue 'value;
                        }
                        let (j, d) = self.gap_at(k, b, i + 1, &mut w, false);
                        i = j;
                        if d == closer {
                            (i, closer) = self.close(b, i)?;
                        } else {
                            (i, c) = if is_object {
                                self.member_name(k, b, i, d, &mut w)?
                            } else {
                                if let Some(top) = self.stack.last_mut() {
                                    top.count = 1;
                                }
                                (i, d)
                            };
                            continue 'value;
                        }
                    }
                    b'-' | b'0'..=b'9' => {
                        let (end, integer) = number(b, i)?;
                        self.tape.push(Node::scalar(Tag::Number, integer, i, end));
                        i = end;
                    }
                    b't' => i = self.literal(b, i, b"true", Tag::True)?,
                    b'f' => i = self.literal(b, i, b"false", Tag::False)?,
                    b'n' => i = self.literal(b, i, b"null", Tag::Null)?,
                    _ => return Err(ended_or(b, i, Malformed::UnexpectedByte)),
                }
            }
            // After a complete value: a separator, a close, or the end of the document.
            loop {
                // A gap here ends the container: its bracket is indented as the members of
                // the container around it are.
                let (j, d) = self.gap_at(k, b, i, &mut w, true);
                i = j;
                if d == b',' && closer != 0 {
                    let (j, d) = self.gap_at(k, b, i + 1, &mut w, false);
                    (i, c) = if closer == b'}' {
                        self.member_name(k, b, j, d, &mut w)?
                    } else {
                        if let Some(top) = self.stack.last_mut() {
                            top.count += 1;
                        }
                        (j, d)
                    };
                    continue 'value;
                }
                // `closer` is 0 only outside all containers, where `d` 0 is the end.
                if d == closer && d != 0 {
                    (i, closer) = self.close(b, i)?;
                    continue;
                }
                if closer == 0 {
                    if i == b.len() {
                        return Ok(());
                    }
                    return Err(Error::malformed(Malformed::TrailingCharacters, i));
                }
                return Err(ended_or(b, i, Malformed::ExpectedCommaOrEnd));
            }
        }
    }

    /// [`skip_ws_at`] where a gap of predicted length ([`Kernel::gap`]) may start: after a
    /// separator or an opening bracket (the gap before a member or element of the innermost
    /// container), and after a value (`outer`: before a closing bracket, indented as the
    /// members of the container around it). Compact JSON pays one comparison, as before.
    #[inline(always)]
    fn gap_at<K: Kernel>(
        &mut self,
        k: K,
        b: &[u8],
        i: usize,
        w: &mut Window,
        outer: bool,
    ) -> (usize, u8) {
        let c = byte_at(b, i);
        // 0 is the end (or a NUL, which the grammar rejects). Any other byte up to a space
        // goes to the gap, which ends at once where that byte is not whitespace.
        if c > b' ' || c == 0 {
            return (i, c);
        }
        let depth = self.stack.len().wrapping_sub(outer as usize);
        let j = k.gap(b, i, w, &mut self.gaps[depth & 63]);
        (j, byte_at(b, j))
    }

    /// Closes the innermost container at `b[i]` (its closing bracket); returns the offset
    /// after it and the byte that closes the container around it (0 outside all). Objects are
    /// checked for duplicate names here (WIRE-014, WIRE-021) when their name filter says two
    /// keys may be equal, and counted by their keys.
    #[inline(always)]
    fn close(&mut self, b: &[u8], i: usize) -> Result<(usize, u8), Error> {
        let Some(mut open) = self.stack.pop() else {
            return Err(Error::malformed(Malformed::UnexpectedByte, i));
        };
        if open.is_object() {
            let from = open.names_from as usize;
            let keys = self.keys.get(from..).unwrap_or(&[]);
            open.count = keys.len() as u32;
            if open.names.may_repeat(keys.len()) && !members::keys_differ(keys, &mut self.scratch) {
                if let Some(at) = self.duplicate_in(b, open) {
                    return Err(Error::new(ErrorKind::DuplicateMember, at));
                }
            }
            self.keys.truncate(from);
        }
        let next = self.tape.len() as u32;
        if let Some(node) = self.tape.get_mut(open.node as usize) {
            node.end = (i + 1) as u32;
            node.count = open.count;
            node.next = next;
        }
        let closer = match self.stack.last() {
            Some(outer) if outer.is_object() => b'}',
            Some(_) => b']',
            None => 0,
        };
        Ok((i + 1, closer))
    }

    /// The exact duplicate check of an object whose keys collide, over its names read back
    /// from the tape; returns the offset of the later duplicate's opening quote.
    #[cold]
    #[inline(never)]
    fn duplicate_in(&mut self, b: &[u8], open: Open) -> Option<usize> {
        let mut names = std::mem::take(&mut self.scratch.names);
        names.clear();
        let mut idx = open.node as usize + 1;
        for _ in 0..open.count {
            let (Some(name), Some(value)) = (self.tape.get(idx), self.tape.get(idx + 1)) else {
                break;
            };
            names.push(Name {
                start: name.start,
                end: name.end,
                escaped: name.flag,
            });
            idx = match value.tag {
                Tag::Array | Tag::Object => value.next as usize,
                _ => idx + 2,
            };
        }
        let dup = members::find_duplicate(b, &names, &mut self.scratch)
            .and_then(|d| names.get(d))
            .map(|n| n.start as usize - 1);
        self.scratch.names = names;
        dup
    }

    /// Parses `"name" :` at `b[i]` (whose byte is `c`); returns the offset of the member's
    /// value and its first byte.
    #[inline(always)]
    fn member_name<K: Kernel>(
        &mut self,
        k: K,
        b: &[u8],
        i: usize,
        c: u8,
        w: &mut Window,
    ) -> Result<(usize, u8), Error> {
        if c != b'"' {
            return Err(ended_or(b, i, Malformed::ExpectedMemberName));
        }
        let (end, escaped) = string_body(k, b, i + 1, w)?;
        self.tape
            .push(Node::scalar(Tag::String, escaped, i + 1, end));
        let key = members::key(b, i + 1, end, escaped, &mut self.scratch);
        self.keys.push(key);
        if let Some(top) = self.stack.last_mut() {
            top.names.add(key);
        }
        let (j, c) = skip_ws_at(k, b, end + 1, w);
        if c != b':' {
            return Err(ended_or(b, j, Malformed::ExpectedColon));
        }
        Ok(skip_ws_at(k, b, j + 1, w))
    }

    #[inline]
    fn literal(&mut self, b: &[u8], i: usize, word: &[u8], tag: Tag) -> Result<usize, Error> {
        let end = i + word.len();
        if b.get(i..end) != Some(word) {
            let reason = if b.len() < end && word.starts_with(&b[i..]) {
                Malformed::UnexpectedEnd
            } else {
                Malformed::InvalidLiteral
            };
            return Err(Error::malformed(reason, i));
        }
        if b.get(end).is_some_and(|c| c.is_ascii_alphanumeric()) {
            return Err(Error::malformed(Malformed::InvalidLiteral, i));
        }
        self.tape.push(Node::scalar(tag, false, i, end));
        Ok(end)
    }
}

/// The error at `b[i]`: [`Malformed::UnexpectedEnd`] when the input ends there, else
/// `reason` (`i` is at most the input's length).
#[cold]
fn ended_or(b: &[u8], i: usize, reason: Malformed) -> Error {
    Error::malformed(
        if i >= b.len() {
            Malformed::UnexpectedEnd
        } else {
            reason
        },
        i,
    )
}

/// Validates a number at `b[i]`; returns its end and whether it is an integer lexeme.
///
/// The common case, a non-negative integer lexeme (`0` or `[1-9][0-9]*`) followed by a
/// separator, a close, whitespace or the end, is settled inline; anything else (a sign, a
/// fraction, an exponent, an error) is read again from its start by [`number_general`], so
/// every result and error is the general one's.
#[inline(always)]
fn number(b: &[u8], start: usize) -> Result<(usize, bool), Error> {
    let mut i = start;
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_end(b, i + 1),
        _ => return number_general(b, start),
    }
    match b.get(i) {
        None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') => Ok((i, true)),
        Some(_) => number_general(b, start),
    }
}

/// The offset of the first byte at or after `j` that is not an ASCII digit (`b.len()` if
/// none): one byte, then eight at a time (an exact per-byte SWAR test) for long runs such as
/// the fractions of coordinates.
#[inline(always)]
fn digits_end(b: &[u8], mut j: usize) -> usize {
    if !b.get(j).is_some_and(u8::is_ascii_digit) {
        return j;
    }
    j += 1;
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    while let Some(chunk) = b.get(j..j + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let x = w & LOW7;
        // High bit set: `x >= 0x30`, and `x >= 0x3A` (no carries: x + 0x50 <= 0xCF).
        let at_least_0 = x + ONES * 0x50;
        let above_9 = x + ONES * 0x46;
        let digit = at_least_0 & !above_9 & !w & HIGH;
        let other = !digit & HIGH;
        if other != 0 {
            return j + (other.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while b.get(j).is_some_and(u8::is_ascii_digit) {
        j += 1;
    }
    j
}

/// [`number`] for every lexeme: sign, fraction, exponent and the exact error.
#[inline(never)]
fn number_general(b: &[u8], start: usize) -> Result<(usize, bool), Error> {
    let digits = |j: usize| digits_end(b, j);
    let bad = |j: usize| ended_or(b, j, Malformed::InvalidNumber);
    let mut i = start;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(i + 1),
        _ => return Err(bad(i)),
    }
    let mut integer = true;
    if b.get(i) == Some(&b'.') {
        integer = false;
        let j = digits(i + 1);
        if j == i + 1 {
            return Err(bad(j));
        }
        i = j;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        integer = false;
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let j = digits(i);
        if j == i {
            return Err(bad(j));
        }
        i = j;
    }
    // "01", "1.2.3", "1e5e" and "-Infinity"-like tails are number errors, not separators.
    if b.get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-'))
    {
        return Err(Error::malformed(Malformed::InvalidNumber, i));
    }
    Ok((i, integer))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `skip_ws` at each of `starts` in order on one backend, with one window kept across
    /// the calls as the grammar keeps it.
    struct Skips<'a>(&'a [u8], &'a [usize]);

    impl scan::WithKernel for Skips<'_> {
        type Out = Vec<usize>;
        fn run<K: Kernel>(self, k: K) -> Vec<usize> {
            let mut w = Window::default();
            self.1
                .iter()
                .map(|&i| skip_ws(k, self.0, i, &mut w))
                .collect()
        }
    }

    /// The four JSON whitespace bytes.
    const WS: [u8; 4] = [b' ', b'\n', b'\t', b'\r'];

    /// The end of the whitespace run at `b[i]`, a byte at a time: the reference of the skips.
    fn ws_end(b: &[u8], mut i: usize) -> usize {
        while b.get(i).is_some_and(|&c| scan::scalar::is_space(c)) {
            i += 1;
        }
        i
    }

    /// The scalar twin of the vector gaps (`scan::gap_from_bits` over the reference bits) at
    /// `b[i]` with `predicted`: the gap's end and the prediction it leaves.
    fn twin_gap(b: &[u8], i: usize, predicted: u8) -> (usize, u8) {
        let mut learned = predicted;
        let space = scan::scalar::space_mask(b, i);
        let end = scan::gap_from_bits(b, i, space, &mut learned, scan::scalar::space_mask);
        (end, learned)
    }

    /// `Kernel::gap` at each `(start, prediction)` in order on one backend, with one window
    /// kept across the calls as the grammar keeps it; each call's end and the prediction it
    /// leaves.
    struct Gaps<'a>(&'a [u8], &'a [(usize, u8)]);

    impl scan::WithKernel for Gaps<'_> {
        type Out = Vec<(usize, u8)>;
        fn run<K: Kernel>(self, k: K) -> Vec<(usize, u8)> {
            let mut w = Window::default();
            self.1
                .iter()
                .map(|&(i, mut predicted)| (k.gap(self.0, i, &mut w, &mut predicted), predicted))
                .collect()
        }
    }

    /// A gap (a whitespace run starting at a whitespace byte) ends where a byte loop says on
    /// every backend, whatever length was predicted: too short, exact, too long, 0, past 63
    /// and past the input's end; gaps across 64-byte windows, up to the input's end, of every
    /// whitespace byte, followed by every byte. A wrong prediction leaves the gap's length
    /// capped at 63 on the vector backends, as in their twin; the portable ones never change
    /// it; and the scalar twin of the vector check (`scan::gap_from_bits` over the reference
    /// bits) gives the same end and learns exactly when it was wrong.
    #[test]
    fn gaps_end_where_a_byte_loop_ends_whatever_was_predicted() {
        let predictions: Vec<u8> = (0..=66).chain([127, 128, 255]).collect();
        for len in (1..70usize).chain([100, 127, 128, 129, 200]) {
            let stops: &[u8] = if len < 20 {
                &[
                    b'"', b'x', 0x0b, 0x0c, 0x00, 0x80, 0xff, b'}', 0x1f, 0x21, b',',
                ]
            } else {
                &[b'"', 0x0b, 0x80]
            };
            for &stop in stops {
                for lead in [0usize, 1, 5, 63] {
                    let mut b = vec![b'{'; lead];
                    b.extend((0..len).map(|k| WS[(k * 5 + len) % 4]));
                    b.push(stop);
                    b.extend_from_slice(b" x");
                    let whole = b.len();
                    for end_cut in [whole, lead + len] {
                        let b = &b[..end_cut];
                        let want = ws_end(b, lead);
                        let calls: Vec<(usize, u8)> =
                            predictions.iter().map(|&p| (lead, p)).collect();
                        // The prediction a gap leaves: kept when right, else the length found (capped).
                        let expected_learned = |i: usize, p: u8| {
                            let right = (p & 63) as usize == want - i;
                            if right {
                                p
                            } else {
                                (want - i).min(63) as u8
                            }
                        };
                        for &(i, p) in &calls {
                            let (got, learned) = twin_gap(b, i, p);
                            assert_eq!(got, want, "twin {b:?} predicted {p}");
                            let expect = expected_learned(i, p);
                            assert_eq!(learned, expect, "twin learned {b:?} predicted {p}");
                        }
                        for backend in scan::available() {
                            let checked = scan::checked(backend).unwrap();
                            let got = scan::dispatch(checked, Gaps(b, &calls));
                            for (&(i, p), &(end, learned)) in calls.iter().zip(&got) {
                                assert_eq!(end, want, "{backend:?} {b:?} predicted {p}");
                                // The vector backends learn as their twin does; the portable
                                // ones leave the prediction alone.
                                let expect = match backend {
                                    Backend::Avx512 | Backend::Avx2 => expected_learned(i, p),
                                    _ => p,
                                };
                                assert_eq!(
                                    learned, expect,
                                    "{backend:?} {b:?} predicted {p} learned {learned}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// A gap asked at a byte that is not whitespace (a control byte or NUL the grammar then
    /// rejects, or any token byte) ends where it starts, on every backend and in the twin,
    /// whatever was predicted.
    #[test]
    fn a_gap_at_a_token_byte_is_empty() {
        for stop in (0u8..=255).filter(|&c| !scan::scalar::is_space(c)) {
            for len in [1usize, 2, 40, 64, 65, 100] {
                let mut b = vec![b' '; len];
                b[0] = stop;
                let calls: Vec<(usize, u8)> = [0u8, 1, 5, 63, 64, 255].map(|p| (0, p)).to_vec();
                for &(i, p) in &calls {
                    assert_eq!(twin_gap(&b, i, p).0, 0, "twin {stop:#x} predicted {p}");
                }
                for backend in scan::available() {
                    let checked = scan::checked(backend).unwrap();
                    for (end, _) in scan::dispatch(checked, Gaps(&b, &calls)) {
                        assert_eq!(end, 0, "{backend:?} {stop:#x} of {len}");
                    }
                }
            }
        }
    }

    /// The whitespace skip of every backend (the SWAR twin, the vector windows) stops where a
    /// byte-at-a-time skip stops, for runs of every length (across 64-byte windows) and every
    /// byte after them, with the window kept across calls in order and out of order.
    #[test]
    fn skip_ws_matches_a_byte_loop() {
        let lens = (0..70usize).chain([100, 127, 128, 129, 191, 200]);
        for len in lens {
            let stops: Vec<u8> = if len < 40 {
                (0..=255u8).collect()
            } else {
                vec![b'"', b'x', 0x0b, 0x0c, 0x80, 0xff, b'}', 0x1f, 0x21]
            };
            for stop in stops {
                for lead in 0..3usize {
                    let mut b = vec![b'{'; lead];
                    b.extend((0..len).map(|k| WS[(k * 7 + len) % 4]));
                    b.push(stop);
                    b.extend_from_slice(b"  x");
                    b.extend(std::iter::repeat_n(b' ', len % 5));
                    let forward: Vec<usize> = (0..b.len() + 1).collect();
                    let backward: Vec<usize> = forward.iter().rev().copied().collect();
                    let want: Vec<usize> = forward.iter().map(|&i| ws_end(&b, i)).collect();
                    let want_back: Vec<usize> = want.iter().rev().copied().collect();
                    for backend in scan::available() {
                        let checked = scan::checked(backend).unwrap();
                        let got = scan::dispatch(checked, Skips(&b, &forward));
                        assert_eq!(got, want, "{backend:?} {b:?}");
                        let got = scan::dispatch(checked, Skips(&b, &backward));
                        assert_eq!(got, want_back, "{backend:?} backward {b:?}");
                    }
                    b.truncate(lead + len);
                    for backend in scan::available() {
                        let checked = scan::checked(backend).unwrap();
                        let got = scan::dispatch(checked, Skips(&b, &[lead]));
                        assert_eq!(got, [ws_end(&b, lead)], "{backend:?} {b:?} to the end");
                    }
                }
            }
        }
    }

    /// The `{"type":` step pushes the key `members::key` gives the name `type`, wherever the
    /// name sits (the key's fast path needs 8 readable bytes, its slow path does not).
    #[test]
    fn the_type_key_is_the_key_of_type() {
        let mut scratch = members::Scratch::default();
        for doc in [&b"{\"type\":1}"[..], b"{\"type\":\"stream_event\",\"a\":1}"] {
            assert_eq!(members::word_at(doc, 0), TYPE_FIRST);
            assert_eq!(members::key(doc, 2, 6, false, &mut scratch), TYPE_KEY);
        }
        assert_eq!(
            members::key(b"\"type\"", 1, 5, false, &mut scratch),
            TYPE_KEY
        );
    }

    /// The `{"type":` step and the walk agree: each document, and each of its prefixes, parses
    /// as the same document spelled `{ "type":` (one space, so the walk reads the name) does,
    /// with the same error at the same byte (moved by the spaces before it); a `type` read by the step collides with a later
    /// `type` or `\u0074ype` read by the walk (WIRE-014, WIRE-021).
    #[test]
    fn the_type_step_agrees_with_the_walk() {
        let docs: [&[u8]; 6] = [
            br#"{"type":"stream_event","event":{"type":"message_stop"},"n":1}"#,
            br#"{"type":{"type":[]},"x":null}"#,
            br#"{"type":1,"type":2}"#,
            br#"{"type":1,"\u0074ype":2}"#,
            br#"{"type":  "x" , "y":[{"type":true}]}"#,
            br#"[{"type":"a"},{"type":}]"#,
        ];
        let spaced = |d: &[u8]| -> Vec<u8> {
            let mut out = Vec::new();
            for (k, &c) in d.iter().enumerate() {
                out.push(c);
                if c == b'{' && d[k + 1..].starts_with(b"\"type\":") {
                    out.push(b' ');
                }
            }
            out
        };
        let mut written = (Vec::new(), Vec::new());
        for doc in docs {
            for n in 0..=doc.len() {
                let (fast, walked) = (&doc[..n], spaced(&doc[..n]));
                match (parse(fast), parse(&walked)) {
                    (Ok(a), Ok(b)) => {
                        written.0.clear();
                        written.1.clear();
                        crate::json::write_value(&mut written.0, a.root());
                        crate::json::write_value(&mut written.1, b.root());
                        assert_eq!(written.0, written.1, "{:?}", String::from_utf8_lossy(fast));
                    }
                    (Err(a), Err(b)) => {
                        let text = String::from_utf8_lossy(fast);
                        assert_eq!(a.kind(), b.kind(), "{text:?}");
                        // Moved by the spaces inserted at or before the error's byte.
                        let moved = (0..fast.len())
                            .filter(|&k| {
                                fast[k] == b'{'
                                    && fast[k + 1..].starts_with(b"\"type\":")
                                    && k < a.offset()
                            })
                            .count();
                        assert_eq!(b.offset(), a.offset() + moved, "{text:?}");
                    }
                    (a, b) => panic!("{:?}: {a:?} vs {b:?}", String::from_utf8_lossy(fast)),
                }
            }
        }
        assert!(parse(docs[2]).unwrap_err().is_duplicate_member());
        assert!(parse(docs[3]).unwrap_err().is_duplicate_member());
    }

    #[test]
    fn digits_end_matches_a_byte_loop() {
        for len in 0..30usize {
            for stop in 0..=255u8 {
                let mut b: Vec<u8> = (0..len).map(|k| b'0' + (k * 3 % 10) as u8).collect();
                b.push(stop);
                b.extend_from_slice(b"12");
                for j in 0..b.len() + 1 {
                    let mut want = j;
                    while b.get(want).is_some_and(u8::is_ascii_digit) {
                        want += 1;
                    }
                    assert_eq!(digits_end(&b, j), want, "{b:?} at {j}");
                }
            }
        }
    }

    /// The inline integer path gives exactly the general reader's answer (end, integer flag,
    /// error kind and offset) for every lexeme and every byte that may follow it.
    #[test]
    fn number_fast_path_matches_the_general_reader() {
        let lexemes = [
            "0",
            "7",
            "10",
            "123456789012345678901234567890",
            "-0",
            "-1",
            "01",
            "00",
            "1.5",
            "0.",
            "1e5",
            "1E+5",
            "0e-1",
            "-",
            "1.",
            "1e",
            "9x",
            "0x1",
        ];
        let tails = [
            "", ",", "}", "]", " ", "\n", "\r", "\t", "a", ".", "e", "E", "+", "-", "0", ":", "\"",
            "/", "\u{e9}",
        ];
        for lexeme in lexemes {
            for tail in tails {
                let text = format!("{lexeme}{tail}");
                let b = text.as_bytes();
                let want = number_general(b, 0);
                assert_eq!(number(b, 0), want, "{text:?}");
            }
        }
    }
}
