//! The credential union and its whole-frame scan (WIRE-013, PROFILE §3).
//!
//! Owns: the set of secret byte strings an encoder must never emit, the multi-pattern searcher
//! over them, and the decision "does this exact final frame carry a credential".
//!
//! Must never: reveal a credential through `Debug`, `Display`, an error or a panic; accept an
//! empty credential (it would match everything); depend on the frame being valid JSON.
//!
//! A frame is rejected when a credential occurs
//! (a) anywhere in its raw final bytes, across field boundaries and the trailing `\n` included;
//! (b) in the JSON-escaped spelling our writer would give it (added as an extra pattern when it
//!     differs from the raw bytes);
//! (c) inside the decoded value of any JSON string of the frame, names and values, every
//!     duplicate occurrence, whatever escape spelling a foreign writer used (`\u002f`, `\u00E9`,
//!     surrogate pairs). Strings without escapes decode to their raw bytes, already covered by
//!     (a), so only strings holding a backslash are decoded (see `scan`). A string whose escapes
//!     no strict parser accepts fails the frame closed.

use std::fmt;
use std::sync::Arc;

use aho_corasick::{packed, AhoCorasick, MatchKind};

use super::error::CredentialError;
use memchr::memchr;

use super::frame_walk::{canonically_escaped, normalize_into, walk_escaped_strings, Walk};

/// Most credentials in one set.
pub const MAX_CREDENTIALS: usize = 1024;
/// Longest credential, in bytes.
pub const MAX_CREDENTIAL_LEN: usize = 4096;

/// An immutable union of credentials and the searcher over their raw and escaped spellings.
///
/// `Debug` shows only the count, never a value.
#[derive(Clone)]
pub struct CredentialSet {
    count: usize,
    /// `None` when the set is empty: validation is then a no-op.
    searchers: Option<Searchers>,
}

/// The two searchers: raw frames are searched for every spelling (rules a and b), decoded
/// string content for the credentials themselves (rule c).
#[derive(Clone)]
struct Searchers {
    raw: Scanner,
    decoded: Scanner,
    /// Every credential is valid UTF-8 without LF, so a canonically escaped frame needs no
    /// decoding (see `scan::canonically_escaped`).
    canonical_shortcut: bool,
    /// The credentials themselves, sorted: which text could be the start of one (the held
    /// tail of a streamed delta, PROFILE §8; see `delta`).
    prefixes: Arc<Prefixes>,
}

/// The sorted credentials and what a prefix test needs.
struct Prefixes {
    sorted: Vec<Vec<u8>>,
    /// Bit `b` set when some credential starts with byte `b`.
    first: [u64; 4],
    max_len: usize,
}

impl Prefixes {
    fn new(sorted: Vec<Vec<u8>>) -> Prefixes {
        let mut first = [0u64; 4];
        let mut max_len = 0;
        for c in &sorted {
            let b = usize::from(c[0]);
            first[b / 64] |= 1 << (b % 64);
            max_len = max_len.max(c.len());
        }
        Prefixes {
            sorted,
            first,
            max_len,
        }
    }

    /// Whether `t` (nonempty, itself no credential) is a proper prefix of some credential: the
    /// least credential not below `t` starts with `t` if any does.
    fn opens(&self, t: &[u8]) -> bool {
        let b = usize::from(t[0]);
        if self.first[b / 64] & (1 << (b % 64)) == 0 {
            return false;
        }
        let i = self.sorted.partition_point(|c| c.as_slice() < t);
        self.sorted.get(i).is_some_and(|c| c.starts_with(t))
    }
}

/// A multi-pattern "does any occur" search. The packed SIMD searcher (Teddy) is used directly
/// when it can be built (up to 64 patterns on a CPU with SSSE3/AVX2): measured here at
/// ~3.2 GB/s with 8 and ~1.5 GB/s with 64 registry-shaped credentials, against ~0.43 GB/s for
/// `AhoCorasick::is_match`, whose own prefilter choice did not pick Teddy for these patterns.
/// Otherwise the full automaton.
#[derive(Clone)]
enum Scanner {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl Scanner {
    fn build(patterns: &[Vec<u8>]) -> Result<Self, CredentialError> {
        let packed = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(patterns)
            .build();
        if let Some(p) = packed {
            return Ok(Scanner::Packed(p));
        }
        // LeftmostFirst: the kind under which aho-corasick considers its packed prefilter.
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(patterns)
            .map(Scanner::Automaton)
            .map_err(|_| cold_err(CredentialError::Searcher))
    }

    #[inline]
    fn hit(&self, haystack: &[u8]) -> bool {
        match self {
            Scanner::Packed(p) => p.find(haystack).is_some(),
            Scanner::Automaton(a) => a.is_match(haystack),
        }
    }
}

impl CredentialSet {
    /// The empty set: validation is a no-op and output is byte-identical to plain JSON.
    pub fn empty() -> Self {
        CredentialSet {
            count: 0,
            searchers: None,
        }
    }

    /// Builds the set from secret byte strings of any length from 1 to [`MAX_CREDENTIAL_LEN`]
    /// (JSON punctuation such as `","` or `}\n` included). Duplicates count once.
    pub fn new<I, B>(credentials: I) -> Result<Self, CredentialError>
    where
        I: IntoIterator<Item = B>,
        B: AsRef<[u8]>,
    {
        let mut raw: Vec<Vec<u8>> = Vec::new();
        for c in credentials {
            let c = c.as_ref();
            if c.is_empty() {
                return Err(cold_err(CredentialError::Empty));
            }
            if c.len() > MAX_CREDENTIAL_LEN {
                return Err(cold_err(CredentialError::TooLong));
            }
            if raw.len() >= MAX_CREDENTIALS * 4 {
                // Even with duplicates, do not buffer without bound.
                return Err(cold_err(CredentialError::TooMany));
            }
            raw.push(c.to_vec());
        }
        raw.sort_unstable();
        raw.dedup();
        if raw.len() > MAX_CREDENTIALS {
            return Err(cold_err(CredentialError::TooMany));
        }
        if raw.is_empty() {
            return Ok(Self::empty());
        }
        let count = raw.len();
        // A credential containing LF can end in the frame's own terminator, which is raw even
        // when every escape is canonical: an unterminated last string plus the final `\n`
        // decodes to it (found by `fuzz/encode_credentials`). Such sets always decode.
        let canonical_shortcut = raw
            .iter()
            .all(|c| std::str::from_utf8(c).is_ok() && !c.contains(&b'\n'));
        let decoded = Scanner::build(&raw)?;
        let prefixes = Arc::new(Prefixes::new(raw.clone()));
        let mut patterns = raw.clone();
        for c in &raw {
            let escaped = escaped_spelling(c);
            if escaped != *c {
                patterns.push(escaped);
            }
        }
        patterns.sort_unstable();
        patterns.dedup();
        let raw = if patterns.len() == count {
            decoded.clone()
        } else {
            Scanner::build(&patterns)?
        };
        Ok(CredentialSet {
            count,
            searchers: Some(Searchers {
                raw,
                decoded,
                canonical_shortcut,
                prefixes,
            }),
        })
    }

    /// How many distinct credentials the set holds.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True for the empty set.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// True when `frame` carries a credential by rule (a), (b) or (c) of the module docs, or
    /// holds a string no strict parser can decode. `scratch` is reused for decoded strings.
    pub fn matches(&self, frame: &[u8], scratch: &mut Vec<u8>) -> bool {
        let s = match &self.searchers {
            Some(s) => s,
            None => return false,
        };
        // (a), (b): the raw final bytes, every spelling.
        if s.raw.hit(frame) {
            return true;
        }
        // (c): strings without a backslash decode to their raw bytes, already searched.
        if memchr(b'\\', frame).is_none() {
            return false;
        }
        // Our writer's own escaping: the escaped spelling searched above covers rule (c).
        if s.canonical_shortcut && canonically_escaped(frame) {
            return false;
        }
        // One pass: the frame with every escaped string decoded in place, one search.
        if !normalize_into(frame, scratch) {
            return true; // undecodable: fail closed
        }
        if !s.decoded.hit(scratch) {
            return false;
        }
        // A hit may span a string delimiter: confirm string by string.
        match walk_escaped_strings(frame, scratch, |d| s.decoded.hit(d)) {
            Walk::Clean => false,
            Walk::Found | Walk::Undecodable => true,
        }
    }

    /// Whether a credential occurs, byte for byte, in `text`: a decoded view of what a host
    /// can rebuild (the joined texts of a streamed block, or the decoded content of one JSON
    /// string of joined fragments, PROFILE §8).
    pub(crate) fn occurs_in(&self, text: &[u8]) -> bool {
        self.searchers.as_ref().is_some_and(|s| s.decoded.hit(text))
    }

    /// The earliest position `i` from which `text[i..]` is a nonempty proper prefix of some
    /// credential: what more text could complete into one. Only the last
    /// [`longest`](Self::longest) − 1 positions can qualify. The caller checked
    /// [`occurs_in`](Self::occurs_in) first (a whole credential is not a prefix).
    pub(crate) fn open_prefix_at(&self, text: &[u8]) -> Option<usize> {
        let p = &self.searchers.as_ref()?.prefixes;
        let from = text.len().saturating_sub(p.max_len.saturating_sub(1));
        (from..text.len()).find(|&i| p.opens(&text[i..]))
    }

    /// The longest credential's length in bytes (0 for the empty set).
    pub(crate) fn longest(&self) -> usize {
        self.searchers.as_ref().map_or(0, |s| s.prefixes.max_len)
    }

    /// Parses a credentials file (PROFILE §2): one credential a line, taken verbatim without
    /// its LF; in a line `\n` stands for a newline and `\\` for a backslash (any other
    /// backslash is kept as it is). Empty lines are skipped (an empty credential would match
    /// everything). A final line without LF counts.
    pub fn from_file_bytes(file: &[u8]) -> Result<Self, CredentialError> {
        let mut creds: Vec<Vec<u8>> = Vec::new();
        for line in file.split(|&b| b == b'\n') {
            if line.is_empty() {
                continue;
            }
            if creds.len() >= MAX_CREDENTIALS * 4 {
                return Err(cold_err(CredentialError::TooMany));
            }
            creds.push(unescape_file_line(line));
        }
        Self::new(creds)
    }
}

impl Default for CredentialSet {
    fn default() -> Self {
        Self::empty()
    }
}

impl fmt::Debug for CredentialSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CredentialSet")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

#[cold]
fn cold_err(e: CredentialError) -> CredentialError {
    e
}

fn unescape_file_line(line: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len());
    let mut i = 0;
    while i < line.len() {
        match (line[i], line.get(i + 1)) {
            (b'\\', Some(b'n')) => {
                out.push(b'\n');
                i += 2;
            }
            (b'\\', Some(b'\\')) => {
                out.push(b'\\');
                i += 2;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// The spelling our JSON writer gives `credential` inside a string: the writer's own table
/// (`json::escape`), so the two cannot disagree; every byte it does not escape is kept as it
/// is (a non-UTF-8 credential keeps its bytes).
pub fn escaped_spelling(credential: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(credential.len() + 8);
    crate::json::escape::write_body(&mut out, credential);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_only_count() {
        let set = CredentialSet::new(["sk-very-secret"]).expect("set");
        let d = format!("{set:?}");
        assert!(!d.contains("sk-very-secret"), "{d}");
        assert!(d.contains("count: 1"), "{d}");
    }

    #[test]
    fn escaped_spelling_table() {
        assert_eq!(escaped_spelling(b"a\"b\\c"), b"a\\\"b\\\\c".to_vec());
        assert_eq!(
            escaped_spelling(b"\n\x01\x1f"),
            b"\\n\\u0001\\u001f".to_vec()
        );
        assert_eq!(
            escaped_spelling("x\u{2028}y\u{2029}".as_bytes()),
            b"x\\u2028y\\u2029".to_vec()
        );
        assert_eq!(escaped_spelling(b"a/b"), b"a/b".to_vec());
    }

    #[test]
    fn file_line_unescaping() {
        assert_eq!(unescape_file_line(br"a\nb\\c\x"), b"a\nb\\c\\x".to_vec());
        assert_eq!(unescape_file_line(br"}\n"), b"}\n".to_vec());
        assert_eq!(unescape_file_line(br"\\n"), b"\\n".to_vec());
    }

    #[test]
    fn limits_at_edge() {
        let at = vec![b'x'; MAX_CREDENTIAL_LEN];
        assert!(CredentialSet::new([&at]).is_ok());
        let past = vec![b'x'; MAX_CREDENTIAL_LEN + 1];
        assert_eq!(
            CredentialSet::new([&past]).err(),
            Some(CredentialError::TooLong)
        );
        assert_eq!(
            CredentialSet::new([b"".as_slice()]).err(),
            Some(CredentialError::Empty)
        );
        let many: Vec<Vec<u8>> = (0..MAX_CREDENTIALS)
            .map(|i| format!("c{i:05}").into_bytes())
            .collect();
        assert_eq!(
            CredentialSet::new(&many).map(|s| s.len()),
            Ok(MAX_CREDENTIALS)
        );
        let mut more = many.clone();
        more.push(b"one-more".to_vec());
        assert_eq!(
            CredentialSet::new(&more).err(),
            Some(CredentialError::TooMany)
        );
    }

    #[test]
    fn packed_and_automaton_paths_agree() {
        // 8 credentials: the packed searcher; 100: past Teddy's limit, the automaton.
        for n in [8usize, 100] {
            let creds: Vec<String> = (0..n).map(|i| format!("tok-{i:03}-x")).collect();
            let set = CredentialSet::new(&creds).expect("set");
            let packed = matches!(
                set.searchers.as_ref().map(|s| &s.raw),
                Some(Scanner::Packed(_))
            );
            assert_eq!(packed, n <= 64, "n = {n}");
            let mut s = Vec::new();
            for c in &creds {
                assert!(set.matches(format!(r#"{{"a":"..{c}.."}}"#).as_bytes(), &mut s));
                let escaped = c.replace('-', "\\u002d");
                assert!(set.matches(format!(r#"{{"a":"{escaped}"}}"#).as_bytes(), &mut s));
            }
            assert!(!set.matches(br#"{"a":"tok-999-y"}"#, &mut s));
        }
    }

    /// What a streamed delta's hold-back asks (PROFILE §8).
    #[test]
    fn open_prefixes_and_occurrences() {
        let set = CredentialSet::new(["sk-abc", "sk-xyz9", "q"]).expect("set");
        assert_eq!(set.longest(), 7);
        assert_eq!(set.open_prefix_at(b"hello s"), Some(6));
        assert_eq!(set.open_prefix_at(b"hello sk-"), Some(6));
        assert_eq!(set.open_prefix_at(b"hello sk-xy"), Some(6));
        assert_eq!(set.open_prefix_at(b"hello sk-ab"), Some(6));
        assert_eq!(set.open_prefix_at(b"hello sk-r"), None);
        assert_eq!(set.open_prefix_at(b"hello"), None);
        assert_eq!(set.open_prefix_at(b""), None);
        // The earliest position wins: "sk-s" is no prefix, its tail "s" is.
        assert_eq!(set.open_prefix_at(b"sk-s"), Some(3));
        assert!(set.occurs_in(b"..sk-abc.."));
        assert!(set.occurs_in(b"q"));
        assert!(!set.occurs_in(b"sk-ab"));
        let none = CredentialSet::empty();
        assert_eq!(none.open_prefix_at(b"sk-"), None);
        assert!(!none.occurs_in(b"sk-abc"));
        assert_eq!(none.longest(), 0);
    }

    #[test]
    fn three_rules() {
        let set = CredentialSet::new(["se/cr\"et"]).expect("set");
        let mut s = Vec::new();
        // (a) raw
        assert!(set.matches(b"xxse/cr\"etxx", &mut s));
        // (b) our escaped spelling
        assert!(set.matches(br#"{"a":"se/cr\"et"}"#, &mut s));
        // (c) a foreign spelling
        assert!(set.matches(br#"{"a":"se\/cr\u0022et"}"#, &mut s));
        assert!(!set.matches(br#"{"a":"se\/cr\u0022ex"}"#, &mut s));
        // fail closed on an undecodable string
        assert!(set.matches(br#"{"a":"\x"}"#, &mut s));
        // A hit that only exists across a string delimiter after decoding is not a leak.
        let quote = CredentialSet::new(["A\","]).expect("set");
        assert!(!quote.matches(br#"{"x":"\u0041","y":1}"#, &mut s));
        assert!(quote.matches(br#"{"x":"A","y":1}"#, &mut s));
        assert!(quote.matches(br#"{"x":"\u0041\",","y":1}"#, &mut s));
        // empty set: never
        assert!(!CredentialSet::empty().matches(br#""\x""#, &mut s));
    }
}
