//! Streamed deltas and credentials (PROFILE §8, WIRE-013 across records): the state of one
//! content block's delta stream, so that no credential can be rebuilt by joining what the
//! host read.
//!
//! Owns: [`DeltaGuard`], the part of a block's stream not yet released (a tail that could be
//! the start of a credential) and, for tool-argument fragments, where the JSON lexer stands
//! at its start; the decision, for each new delta, of what may be written now, what is held
//! back until the next delta settles it, and whether the joined stream would complete a
//! credential ([`CredentialCompleted`]). The views checked are what a host can rebuild: the
//! joined `text_delta` texts of one block; the joined `partial_json` fragments, both as raw
//! JSON text and with every JSON string decoded (names and values, `\u` escapes and
//! surrogate pairs included, each string on its own).
//!
//! The credentials are the encoder's own union ([`CredentialSet`]); the caller is
//! [`FrameEncoder::guard_delta`](super::FrameEncoder::guard_delta), and every frame is still
//! validated whole when it is encoded. Must never: keep a credential's bytes past the delta
//! that completed it, reveal one in `Debug`, or release a byte that could start a credential.
//!
//! Why holding back the earliest possible start is enough: a credential that occurs in the
//! joined stream either lies inside what is held plus the new delta (checked), or begins at a
//! position whose suffix is a proper prefix of it; the earliest such position is held back,
//! so everything released before it can never start one.

use std::borrow::Cow;
use std::fmt;

use super::credentials::CredentialSet;

/// The decoded window of one JSON string is checked and cut back to its last
/// `longest − 1` bytes once it grows past this, so a huge string costs bounded memory.
const WINDOW: usize = 64 << 10;

/// Which view a block's deltas build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `text_delta` texts, joined as they are.
    Text,
    /// `input_json_delta` fragments, joined into one JSON text.
    Json,
}

/// The delta stream of one content block. `Debug` shows only how much is held.
#[derive(Clone)]
pub struct DeltaGuard {
    kind: Kind,
    /// Not yet released: a tail that could be the start of a credential.
    held: String,
    /// For [`Kind::Json`]: the lexer at the start of `held`.
    lex: Lex,
}

impl fmt::Debug for DeltaGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaGuard")
            .field("kind", &self.kind)
            .field("held", &self.held.len())
            .finish_non_exhaustive()
    }
}

/// Joining the stream with this delta would complete a credential: the delta must not be
/// written (the turn ends with the output error, PROFILE §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CredentialCompleted;

impl DeltaGuard {
    /// The stream of a text block's `text_delta`s.
    pub fn text() -> DeltaGuard {
        DeltaGuard {
            kind: Kind::Text,
            held: String::new(),
            lex: Lex::default(),
        }
    }

    /// The stream of a `tool_use` block's `input_json_delta` fragments.
    pub fn json() -> DeltaGuard {
        DeltaGuard {
            kind: Kind::Json,
            held: String::new(),
            lex: Lex::default(),
        }
    }

    /// Bytes held back so far.
    pub fn held_len(&self) -> usize {
        self.held.len()
    }

    /// The next delta: what may be written now (possibly empty), the rest held back. What is
    /// released is borrowed from `piece` unless an earlier tail was held (then it is that
    /// tail joined with `piece`): no copy per delta in the common case.
    pub(crate) fn next<'p>(
        &mut self,
        credentials: &CredentialSet,
        piece: &'p str,
    ) -> Result<Cow<'p, str>, CredentialCompleted> {
        if credentials.is_empty() {
            return Ok(Cow::Borrowed(piece));
        }
        let joined = match self.held.is_empty() {
            true => None,
            false => {
                let mut s = std::mem::take(&mut self.held);
                s.push_str(piece);
                Some(s)
            }
        };
        let s: &str = joined.as_deref().unwrap_or(piece);
        let result = match self.kind {
            Kind::Text => text_cut(credentials, s.as_bytes()),
            Kind::Json => json_cut(credentials, self.lex, s.as_bytes()),
        };
        let Ok(mut cut) = result else {
            // Forget the stream: nothing of it is written again.
            self.lex = Lex::default();
            return Err(CredentialCompleted);
        };
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        if self.kind == Kind::Json {
            let mut lex = self.lex;
            let mut at = 0;
            for (i, &b) in s.as_bytes()[..cut].iter().enumerate() {
                lex.step(i, b, &mut at, &mut NoStrings);
            }
            self.lex = lex;
        }
        Ok(match joined {
            Some(mut s) => {
                self.held = s.split_off(cut);
                Cow::Owned(s)
            }
            None => {
                self.held.push_str(&piece[cut..]);
                Cow::Borrowed(&piece[..cut])
            }
        })
    }

    /// The block ended: the held tail, which completes nothing, is released.
    pub(crate) fn finish(&mut self) -> String {
        self.lex = Lex::default();
        std::mem::take(&mut self.held)
    }
}

/// Joined texts: a credential anywhere is completed; the earliest open prefix is held.
fn text_cut(credentials: &CredentialSet, s: &[u8]) -> Result<usize, CredentialCompleted> {
    if credentials.occurs_in(s) {
        return Err(CredentialCompleted);
    }
    Ok(credentials.open_prefix_at(s).unwrap_or(s.len()))
}

/// Joined JSON fragments: the raw text and every decoded string.
fn json_cut(credentials: &CredentialSet, lex: Lex, s: &[u8]) -> Result<usize, CredentialCompleted> {
    if credentials.occurs_in(s) {
        return Err(CredentialCompleted);
    }
    let mut strings = Strings {
        credentials,
        keep: credentials.longest().saturating_sub(1),
        decoded: Vec::new(),
        at: Vec::new(),
        completed: false,
    };
    let mut lex = lex;
    let mut esc_at = 0;
    for (i, &b) in s.iter().enumerate() {
        lex.step(i, b, &mut esc_at, &mut strings);
        if strings.completed {
            return Err(CredentialCompleted);
        }
    }
    let mut cut = credentials.open_prefix_at(s).unwrap_or(s.len());
    if lex.in_string() {
        if credentials.occurs_in(&strings.decoded) {
            return Err(CredentialCompleted);
        }
        if let Some(d) = credentials.open_prefix_at(&strings.decoded) {
            cut = cut.min(strings.at[d]);
        }
        if lex.in_escape() {
            // An escape not yet complete: its character is unknown.
            cut = cut.min(esc_at);
        }
    }
    Ok(cut)
}

/// What the lexer reports: decoded string bytes with the raw position they came from.
trait StringSink {
    fn start(&mut self);
    fn byte(&mut self, b: u8, raw: usize);
    fn end(&mut self);
}

struct NoStrings;

impl StringSink for NoStrings {
    fn start(&mut self) {}
    fn byte(&mut self, _: u8, _: usize) {}
    fn end(&mut self) {}
}

/// The decoded content of the current string (a bounded window) and its raw positions.
struct Strings<'c> {
    credentials: &'c CredentialSet,
    keep: usize,
    decoded: Vec<u8>,
    at: Vec<usize>,
    completed: bool,
}

impl StringSink for Strings<'_> {
    fn start(&mut self) {
        self.decoded.clear();
        self.at.clear();
    }

    fn byte(&mut self, b: u8, raw: usize) {
        self.decoded.push(b);
        self.at.push(raw);
        if self.decoded.len() > WINDOW + self.keep {
            self.completed |= self.credentials.occurs_in(&self.decoded);
            let drop = self.decoded.len() - self.keep;
            self.decoded.drain(..drop);
            self.at.drain(..drop);
        }
    }

    fn end(&mut self) {
        self.completed |= self.credentials.occurs_in(&self.decoded);
        self.decoded.clear();
        self.at.clear();
    }
}

/// Where a JSON lexer stands, only as far as strings go (the fragments of one tool input;
/// invalid JSON is lexed leniently: the final input is validated whole at the block's end).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Lex {
    #[default]
    Outside,
    Str,
    /// After `\`.
    Esc,
    /// After `\u` and `n` hex digits of value `v`.
    Hex {
        n: u8,
        v: u16,
    },
    /// A high surrogate `hi` was read: expecting `\`.
    PairEsc {
        hi: u16,
    },
    /// Expecting `u`.
    PairU {
        hi: u16,
    },
    /// The low half's `n` hex digits of value `v`.
    PairHex {
        hi: u16,
        n: u8,
        v: u16,
    },
}

const REPLACEMENT: [u8; 3] = [0xEF, 0xBF, 0xBD];

impl Lex {
    fn in_string(self) -> bool {
        self != Lex::Outside
    }

    fn in_escape(self) -> bool {
        !matches!(self, Lex::Outside | Lex::Str)
    }

    /// One raw byte at position `i`. `esc_at` is where the current escape began (a pair's
    /// first backslash); an escape begun before this walk counts from 0.
    fn step(&mut self, i: usize, b: u8, esc_at: &mut usize, out: &mut impl StringSink) {
        *self = match *self {
            Lex::Outside => {
                if b == b'"' {
                    out.start();
                    Lex::Str
                } else {
                    Lex::Outside
                }
            }
            Lex::Str => match b {
                b'"' => {
                    out.end();
                    Lex::Outside
                }
                b'\\' => {
                    *esc_at = i;
                    Lex::Esc
                }
                _ => {
                    out.byte(b, i);
                    Lex::Str
                }
            },
            Lex::Esc => {
                let simple = match b {
                    b'"' | b'\\' | b'/' => Some(b),
                    b'b' => Some(0x08),
                    b'f' => Some(0x0C),
                    b'n' => Some(b'\n'),
                    b'r' => Some(b'\r'),
                    b't' => Some(b'\t'),
                    _ => None,
                };
                match (simple, b) {
                    (Some(c), _) => {
                        out.byte(c, *esc_at);
                        Lex::Str
                    }
                    (None, b'u') => Lex::Hex { n: 0, v: 0 },
                    // Not an escape: no strict reader decodes it; lex on.
                    (None, _) => Lex::Str,
                }
            }
            Lex::Hex { n, v } => match hex(b) {
                Some(d) => {
                    let v = (v << 4) | d;
                    if n < 3 {
                        Lex::Hex { n: n + 1, v }
                    } else {
                        match v {
                            0xD800..=0xDBFF => Lex::PairEsc { hi: v },
                            0xDC00..=0xDFFF => {
                                emit(out, &REPLACEMENT, *esc_at);
                                Lex::Str
                            }
                            _ => {
                                emit_char(out, u32::from(v), *esc_at);
                                Lex::Str
                            }
                        }
                    }
                }
                None => {
                    let mut lex = Lex::Str;
                    lex.step(i, b, esc_at, out);
                    lex
                }
            },
            Lex::PairEsc { hi } => {
                if b == b'\\' {
                    Lex::PairU { hi }
                } else {
                    emit(out, &REPLACEMENT, *esc_at);
                    let mut lex = Lex::Str;
                    lex.step(i, b, esc_at, out);
                    lex
                }
            }
            Lex::PairU { hi } => {
                if b == b'u' {
                    Lex::PairHex { hi, n: 0, v: 0 }
                } else {
                    // A lone high surrogate, then an ordinary escape begun at `i - 1`.
                    emit(out, &REPLACEMENT, *esc_at);
                    *esc_at = i.saturating_sub(1);
                    let mut lex = Lex::Esc;
                    lex.step(i, b, esc_at, out);
                    lex
                }
            }
            Lex::PairHex { hi, n, v } => match hex(b) {
                Some(d) => {
                    let v = (v << 4) | d;
                    if n < 3 {
                        Lex::PairHex { hi, n: n + 1, v }
                    } else if (0xDC00..=0xDFFF).contains(&v) {
                        let c =
                            0x10000 + ((u32::from(hi) - 0xD800) << 10) + (u32::from(v) - 0xDC00);
                        emit_char(out, c, *esc_at);
                        Lex::Str
                    } else {
                        // A lone high surrogate, then a complete second escape (5 bytes back).
                        emit(out, &REPLACEMENT, *esc_at);
                        *esc_at = i.saturating_sub(5);
                        let mut lex = Lex::Hex { n: 3, v: v >> 4 };
                        lex.step(i, b, esc_at, out);
                        lex
                    }
                }
                None => {
                    emit(out, &REPLACEMENT, *esc_at);
                    let mut lex = Lex::Str;
                    lex.step(i, b, esc_at, out);
                    lex
                }
            },
        };
    }
}

fn hex(b: u8) -> Option<u16> {
    (b as char).to_digit(16).map(|d| d as u16)
}

fn emit(out: &mut impl StringSink, bytes: &[u8], raw: usize) {
    for &b in bytes {
        out.byte(b, raw);
    }
}

fn emit_char(out: &mut impl StringSink, c: u32, raw: usize) {
    let c = char::from_u32(c).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    emit(out, c.encode_utf8(&mut buf).as_bytes(), raw);
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-live-7Hq2";

    fn set() -> CredentialSet {
        CredentialSet::new([KEY]).unwrap()
    }

    /// Feeds `pieces`, returns what was released (one string per piece, then the finish) or
    /// the index of the piece that completed the key.
    fn run(guard: DeltaGuard, pieces: &[&str]) -> Result<Vec<String>, usize> {
        let set = set();
        let mut g = guard;
        let mut out = Vec::new();
        for (i, p) in pieces.iter().enumerate() {
            out.push(g.next(&set, p).map_err(|_| i)?.into_owned());
        }
        out.push(g.finish());
        Ok(out)
    }

    #[test]
    fn text_holds_an_open_prefix_and_refuses_the_completing_delta() {
        assert_eq!(
            run(
                DeltaGuard::text(),
                &["the key is sk", "-live", "-7H", "q2 ok"]
            ),
            Err(3)
        );
        // Held until settled, then released whole: the joined text is the model's.
        let out = run(DeltaGuard::text(), &["the key is sk", "-lime", " done"]).unwrap();
        assert_eq!(out, ["the key is ", "sk-lime", " done", ""]);
        // A tail still open at the block's end is released (it completes nothing).
        let out = run(DeltaGuard::text(), &["ends with sk-li"]).unwrap();
        assert_eq!(out, ["ends with ", "sk-li"]);
        assert_eq!(run(DeltaGuard::text(), &[KEY]), Err(0));
    }

    #[test]
    fn json_decodes_escapes_across_fragments() {
        // `\u`-escaped key in one fragment.
        assert_eq!(
            run(DeltaGuard::json(), &[r#"{"k":"sk-live-\u0037Hq2"}"#]),
            Err(0)
        );
        // Split inside the escape, and across fragments.
        assert_eq!(
            run(
                DeltaGuard::json(),
                &[
                    r#"{"k":"s"#,
                    r#"k\u002"#,
                    r#"dlive-7"#,
                    r#"\u0048q"#,
                    r#"2"}"#
                ]
            ),
            Err(4)
        );
        // Escaped in the member name.
        assert_eq!(
            run(DeltaGuard::json(), &[r#"{"\u0073k-live-7Hq2":1}"#]),
            Err(0)
        );
        // Raw in the JSON text (a number, not a string: the raw view).
        let cred = CredentialSet::new(["12345678"]).unwrap();
        let mut g = DeltaGuard::json();
        assert_eq!(g.next(&cred, r#"{"n":1234"#).unwrap(), r#"{"n":"#);
        assert_eq!(g.next(&cred, "5678}"), Err(CredentialCompleted));
        // Across two strings is not one credential.
        let out = run(DeltaGuard::json(), &[r#"{"a":"sk-live","b":"-7Hq2"}"#]).unwrap();
        assert_eq!(out.concat(), r#"{"a":"sk-live","b":"-7Hq2"}"#);
        // A surrogate pair decodes to one character; a lone one to U+FFFD.
        let cred = CredentialSet::new(["x\u{1F600}y"]).unwrap();
        let mut g = DeltaGuard::json();
        assert_eq!(g.next(&cred, r#"["x\ud83d"#).unwrap(), r#"[""#);
        assert_eq!(g.next(&cred, r#"\ude00y"]"#), Err(CredentialCompleted));
        let mut g = DeltaGuard::json();
        let released = g.next(&cred, r#"["x\ud83d\u0041y"]"#).unwrap();
        assert_eq!(released.into_owned() + &g.finish(), r#"["x\ud83d\u0041y"]"#);
    }

    #[test]
    fn held_back_tails_stay_small_and_everything_else_flows() {
        let set = set();
        let mut g = DeltaGuard::json();
        let mut joined = String::new();
        for _ in 0..1000 {
            joined += &g.next(&set, r#"{"path":"a.txt","s":"sk-"}"#).unwrap();
            assert!(g.held_len() < KEY.len() + 12);
        }
        joined += &g.finish();
        assert_eq!(joined, r#"{"path":"a.txt","s":"sk-"}"#.repeat(1000));
        // The empty set releases everything at once.
        let mut g = DeltaGuard::text();
        assert_eq!(g.next(&CredentialSet::empty(), KEY).unwrap(), KEY);
        assert!(!format!("{g:?}").contains("sk-"));
    }
}
