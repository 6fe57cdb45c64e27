//! String-body scanning and the parser's one backend dispatch.
//!
//! Owns two things. First, the byte classes the string walk and the grammar's gaps need for 64
//! bytes at a time ([`StringMasks`]: quote, backslash, control, non-ASCII; whitespace), and the
//! UTF-8 check of string tails, answered by a SIMD backend (`x86`: AVX-512BW, AVX2, SSE2;
//! `x86_utf8`) or the scalar twins ([`scalar`], [`gap_from_bits`], `utf8`) that every backend is
//! tested against. Second, the dispatch: [`dispatch`] runs a whole parse ([`WithKernel`]) once per
//! document inside a function compiled for the chosen backend's CPU features, so the grammar, the
//! short-string path and the string walk are all built for that CPU and no feature test sits on a
//! hot path. The backend is detected once and cached; the choice is the shared [`Backend`] of
//! `frame::split`, held as a [`Checked`] token so that a document's dispatch is one `match`, not a
//! feature test.
//!
//! Soundness: a [`Checked`] backend is only constructed after its features were detected, and
//! an x86 [`Kernel`] token only inside a function entered through a [`Checked`] backend, so
//! holding either is proof that its vector code may run.
//!
//! This module never decides what a special byte *means*: the string walk does.

pub(crate) mod scalar;
pub(crate) mod string;
mod utf8;
#[cfg(target_arch = "x86_64")]
mod x86;
#[cfg(target_arch = "x86_64")]
mod x86_utf8;

use std::sync::OnceLock;

use super::error::Error;

pub use crate::frame::Backend;
pub(crate) use utf8::{is_utf8_short, validated_text};

/// The bytes that may follow a backslash to form a complete two-byte escape (RFC 8259 §7).
pub(crate) const SIMPLE_ESCAPES: [u8; 8] = *b"\"\\/bfnrt";

/// The four byte classes of the 64 bytes at `at` (bit `k` ↔ `hay[at + k]`; bytes past the end
/// read as zero bits in every mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StringMasks {
    pub(crate) quote: u64,
    pub(crate) backslash: u64,
    /// Bytes below 0x20.
    pub(crate) control: u64,
    /// Bytes 0x80 and above (only legal inside strings, as UTF-8 sequences).
    pub(crate) high: u64,
}

/// One backend's string walk (`string::walk` compiled for its CPU features).
pub(crate) trait Kernel: Copy {
    /// The string walk's fast path, inlined into the grammar: the offset of the closing quote
    /// when the string body at `b[i..]` ends with no `\`, control or non-ASCII byte before it
    /// within the bytes one step looks at (8 for the SWAR step, 64 for a vector backend);
    /// `None` sends the body to [`Kernel::string_blocks`]. A vector backend answers from the
    /// parse's [`Window`] when it still covers the body's end, so the short strings of one
    /// 64-byte stretch (names, enum values, ids) cost one vector load between them.
    #[inline(always)]
    fn string_short(self, b: &[u8], i: usize, window: &mut Window) -> Option<usize> {
        let _ = window;
        find_special_short(b, i).filter(|&at| b.get(at) == Some(&b'"'))
    }

    /// See `string::walk`.
    fn string_blocks(self, b: &[u8], start: usize) -> Result<(usize, bool), Error>;

    /// Whether `s`, the tail of a string body in the parse's [`Window`] from its first
    /// non-ASCII byte to its closing quote, is UTF-8 (under 128 bytes: after
    /// [`Window::advance`] the tail may begin in the window before). The portable answer is
    /// the DFA, [`utf8::is_utf8_short`]; a vector backend may answer longer tails with vectors.
    #[inline(always)]
    fn utf8_tail(self, s: &[u8]) -> bool {
        utf8::is_utf8_short(s)
    }

    /// The offset of the first byte at or after `i` that is not JSON whitespace (`b.len()` if
    /// none); the grammar calls it for runs (indentation). The portable answer is the SWAR
    /// twin, [`scalar::skip_space`]; a vector backend answers from the parse's [`Window`] (its
    /// whitespace bits), reloading it 64 bytes further on while the run goes on, so the
    /// indentation of pretty-printed JSON costs a shift and a bit scan between tokens of one
    /// 64-byte stretch, and the string after it usually finds its bytes in the same window.
    #[inline(always)]
    fn space_run(self, b: &[u8], i: usize, window: &mut Window) -> usize {
        let _ = window;
        scalar::skip_space(b, i)
    }

    /// The offset of the first byte at or after `i` that is not JSON whitespace (`b.len()` if
    /// none), where `i < b.len()` (`b[i]` is usually whitespace): the gap between two
    /// tokens. `predicted` is the length this gap is expected to have (the last one seen at
    /// the same depth: a pretty printer indents every member of one depth alike) and is set
    /// to the length found, capped at 63, when it differs. A
    /// vector backend checks the prediction off the walk's serial chain, so a predicted gap
    /// costs the walk one addition; the prediction never changes the answer. The portable
    /// answer ignores it: [`skip_ws`].
    #[inline(always)]
    fn gap(self, b: &[u8], i: usize, window: &mut Window, predicted: &mut u8) -> usize {
        let _ = predicted;
        skip_ws(self, b, i, window)
    }
}

/// The offset of the first non-whitespace byte at or after `i` (`b.len()` if none). Compact
/// JSON has no whitespace: one comparison; one space, two. A longer run (a newline and
/// indentation in pretty-printed JSON) goes to the kernel's [`Kernel::space_run`], which
/// answers from the parse's 64-byte window.
#[inline(always)]
pub(crate) fn skip_ws<K: Kernel>(k: K, b: &[u8], i: usize, w: &mut Window) -> usize {
    match b.get(i) {
        Some(&c) if scalar::is_space(c) => match b.get(i + 1) {
            // One space (`"name": value`): no run.
            Some(&c) if scalar::is_space(c) => k.space_run(b, i + 2, w),
            _ => i + 1,
        },
        _ => i,
    }
}

/// [`Kernel::gap`] from `space`, the whitespace bits of the 64 bytes at `i` (bytes past the end of
/// `b` clear; bit 0 clear answers `i`): `i + predicted` when bits `0..predicted` are set and bit
/// `predicted` is clear, else the gap's true end, with `predicted` updated to its length (at most
/// 63). `more(b, at)` gives the whitespace bits of the 64 bytes at `at < b.len()` for a gap that
/// runs past these 64 bytes. The scalar twin of the vector backends' gaps: they call it with their
/// own bits, and the tests call it with `scalar::space_mask` (a test helper).
#[inline(always)]
pub(crate) fn gap_from_bits(
    b: &[u8],
    i: usize,
    space: u64,
    predicted: &mut u8,
    more: impl Fn(&[u8], usize) -> u64,
) -> usize {
    debug_assert!(i < b.len(), "a gap starts at a byte of the input");
    let want = (1u64 << (*predicted & 63)) - 1;
    // A mask test, not `(!space).trailing_zeros() == predicted`: with the bit scan LLVM took the
    // offset from it on the equal branch, which put the vector check back on the walk's serial
    // chain (twitter.json −18 %, citm_catalog.json −31 %; benches/README).
    if space & (want << 1 | 1) == want {
        return i + (*predicted & 63) as usize;
    }
    gap_found(b, i, space, predicted, more)
}

/// [`gap_from_bits`] when the prediction failed: the gap's end from the bits, 64 bytes further
/// on while it goes on, and the new prediction.
#[cold]
#[inline(never)]
fn gap_found(
    b: &[u8],
    i: usize,
    space: u64,
    predicted: &mut u8,
    more: impl Fn(&[u8], usize) -> u64,
) -> usize {
    let mut at = i;
    let mut bits = space;
    let end = loop {
        if bits != u64::MAX {
            break (at + (!bits).trailing_zeros() as usize).min(b.len());
        }
        at += 64;
        if at >= b.len() {
            break b.len();
        }
        bits = more(b, at);
    };
    *predicted = (end - i).min(63) as u8;
    end
}

/// The quote, hard-stop (`"`, `\`, control) and non-ASCII bits of the 64 input bytes at `at`,
/// kept by one parse between strings: every bit is a fact about the (unchanging) input, so a
/// body starting inside the window whose first hard stop is inside it too needs no new load.
/// Beside it, for whitespace runs, the whitespace bits of the 64 bytes at `space_at` (loaded
/// only by runs, so compact JSON never pays for them). Bytes past the end of the input are in
/// no class.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    at: usize,
    quote: u64,
    hard: u64,
    high: u64,
    space_at: usize,
    /// JSON whitespace (space, tab, LF, CR) of the bytes at `space_at`.
    space: u64,
}

impl Default for Window {
    /// A window that covers no offset a document can have (inputs are below 4 GiB), so the
    /// first question of a parse loads one.
    fn default() -> Window {
        Window {
            at: usize::MAX >> 1,
            quote: 0,
            hard: 0,
            high: 0,
            space_at: usize::MAX >> 1,
            space: 0,
        }
    }
}

impl Window {
    /// [`Kernel::string_short`] from this window alone: `Some(answer)` when a hard stop at or
    /// after `i` lies inside it, `None` when it must be reloaded at `i` ([`Window::reload`]).
    #[inline(always)]
    pub(crate) fn cached(
        &self,
        b: &[u8],
        i: usize,
        utf8: impl Fn(&[u8]) -> bool,
    ) -> Option<Option<usize>> {
        let off = i.wrapping_sub(self.at);
        let rest = if off < 64 { self.hard >> off } else { 0 };
        (rest != 0)
            .then(|| Self::answer(b, i, rest, self.quote >> off, self.high >> off, None, utf8))
    }

    /// Makes the string classes of the 64 bytes at `i` (`m`) this window's and answers
    /// [`Kernel::string_short`] from them.
    #[inline(always)]
    pub(crate) fn reload(
        &mut self,
        b: &[u8],
        i: usize,
        m: StringMasks,
        utf8: impl Fn(&[u8]) -> bool,
    ) -> Option<usize> {
        self.hold(i, m);
        Self::answer(b, i, self.hard, m.quote, m.high, None, utf8)
    }

    /// Makes `m`, the string classes of the 64 bytes at `at`, this window's.
    #[inline(always)]
    fn hold(&mut self, at: usize, m: StringMasks) {
        self.at = at;
        self.quote = m.quote;
        self.hard = m.quote | m.backslash | m.control;
        self.high = m.high;
    }

    /// Where a body at `i` goes on when [`Window::cached`] could not answer it although it
    /// starts inside this window (no hard stop after it here): the next 64 bytes, at an
    /// offset known long before `i` is, so their load need not wait for the walk to reach
    /// `i`. `None` when `i` is outside the window (reload at `i`).
    #[inline(always)]
    pub(crate) fn next_at(&self, i: usize) -> Option<usize> {
        (i.wrapping_sub(self.at) < 64).then_some(self.at + 64)
    }

    /// Makes the string classes `m` of the 64 bytes at [`Window::next_at`] this window's and
    /// answers [`Kernel::string_short`] for the body at `i` (in the old window, with no hard
    /// stop after it there) from them; the UTF-8 check starts at the body's first non-ASCII
    /// byte in either window.
    #[inline(always)]
    pub(crate) fn advance(
        &mut self,
        b: &[u8],
        i: usize,
        m: StringMasks,
        utf8: impl Fn(&[u8]) -> bool,
    ) -> Option<usize> {
        let high_before = self.high >> (i.wrapping_sub(self.at) & 63);
        let first_high = (high_before != 0).then(|| i + high_before.trailing_zeros() as usize);
        let at = self.at + 64;
        self.hold(at, m);
        Self::answer(b, at, self.hard, m.quote, m.high, first_high, utf8)
    }

    /// [`Kernel::space_run`] from the whitespace bits, with `load(b, at)` giving the
    /// whitespace bits of the 64 bytes at `at` (`at < b.len()`; bytes past the end not
    /// whitespace) whenever the run reaches past the bits held.
    #[inline(always)]
    pub(crate) fn space_run(
        &mut self,
        b: &[u8],
        mut i: usize,
        load: impl Fn(&[u8], usize) -> u64,
    ) -> usize {
        loop {
            let off = i.wrapping_sub(self.space_at);
            if off < 64 {
                // Past the input's end every bit of `!space` is set, so bits that reach the
                // end always answer, with at most `b.len()`.
                let rest = !self.space >> off;
                if rest != 0 {
                    return (i + rest.trailing_zeros() as usize).min(b.len());
                }
                // Whitespace up to the end of the bits held: go on at the next 64 bytes.
                i = self.space_at + 64;
            }
            if i >= b.len() {
                return b.len();
            }
            self.space = load(b, i);
            self.space_at = i;
        }
    }

    /// The closing quote at `i + k` when the lowest bit `k` of `hard` is a quote bit and the
    /// non-ASCII bytes before it, if any, are UTF-8 (by the kernel's check, `utf8`); `None`
    /// sends the body to the block walk
    /// (which also reports the error of a body that is not UTF-8).
    ///
    /// A body that began before `i` (in the previous window, [`Window::advance`]) passes
    /// `first_high`, its first non-ASCII byte there, if any: the UTF-8 check starts from it;
    /// otherwise from the first non-ASCII byte in these bits.
    #[inline(always)]
    fn answer(
        b: &[u8],
        i: usize,
        hard: u64,
        quote: u64,
        high: u64,
        first_high: Option<usize>,
        utf8: impl Fn(&[u8]) -> bool,
    ) -> Option<usize> {
        let first = hard & hard.wrapping_neg();
        if first & quote == 0 {
            return None;
        }
        let end = i + first.trailing_zeros() as usize;
        let high = high & (first - 1);
        let from = match first_high {
            Some(from) => from,
            None if high != 0 => i + high.trailing_zeros() as usize,
            None => return Some(end),
        };
        if !utf8(b.get(from..end)?) {
            return None;
        }
        Some(end)
    }
}

/// A computation that [`dispatch`] runs with one backend's [`Kernel`], compiled (inlined)
/// into a function built for that backend's features.
pub(crate) trait WithKernel {
    type Out;
    fn run<K: Kernel>(self, kernel: K) -> Self::Out;
}

/// The portable kernel: the scalar twin, byte by byte.
#[derive(Clone, Copy)]
pub(crate) struct ScalarKernel;

impl Kernel for ScalarKernel {
    #[inline]
    fn string_blocks(self, b: &[u8], start: usize) -> Result<(usize, bool), Error> {
        string::walk(
            b,
            start,
            scalar::string_masks,
            scalar::simple_escapes,
            string::utf8_portable,
        )
    }
}

/// Whether this CPU (and target) can run `backend`.
pub fn is_available(backend: Backend) -> bool {
    match backend {
        Backend::Scalar => true,
        #[cfg(target_arch = "x86_64")]
        _ => x86::is_available(backend),
        #[cfg(not(target_arch = "x86_64"))]
        _ => false,
    }
}

/// Every backend this CPU can run, fastest first (always ends with the scalar twin).
pub fn available() -> Vec<Backend> {
    Backend::ALL
        .into_iter()
        .filter(|&b| is_available(b))
        .collect()
}

/// A backend this CPU was checked to run. Only [`checked`] makes one, after the feature test,
/// so [`dispatch`] enters the backend's code with no feature test per document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Checked(Backend);

impl Checked {
    /// The backend.
    pub(crate) fn backend(self) -> Backend {
        self.0
    }
}

/// `backend` as a [`Checked`] one, or `None` when this CPU cannot run it.
pub(crate) fn checked(backend: Backend) -> Option<Checked> {
    is_available(backend).then_some(Checked(backend))
}

/// The fastest backend this CPU can run, detected on first use and cached.
pub(crate) fn selected_checked() -> Checked {
    static SELECTED: OnceLock<Checked> = OnceLock::new();
    *SELECTED.get_or_init(|| {
        Backend::ALL
            .into_iter()
            .find_map(checked)
            .unwrap_or(Checked(Backend::Scalar))
    })
}

/// Runs `work` with `backend`'s kernel, compiled for that backend's CPU features (inlined:
/// see `x86::dispatch`).
#[inline(always)]
pub(crate) fn dispatch<W: WithKernel>(backend: Checked, work: W) -> W::Out {
    #[cfg(target_arch = "x86_64")]
    {
        x86::dispatch(backend, work)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = backend;
        work.run(ScalarKernel)
    }
}

/// Index of the first byte at or after `from` that is `"`, `\` or below 0x20; `hay.len()` when
/// there is none (or `from >= hay.len()`). Used by the writer.
#[inline]
pub(crate) fn find_special(hay: &[u8], from: usize) -> usize {
    // Most JSON strings are short (member names, enum values): answer them with one inline
    // SWAR word before paying for a call into the vector loop.
    if let Some(chunk) = hay.get(from..from + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = scalar::special_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return from + (mask.trailing_zeros() / 8) as usize;
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        x86::find_special(hay, from)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        scalar::find_special(hay, from)
    }
}

/// The string walk's first step: the first byte among the 8 at `from` that is `"`, `\`, below
/// 0x20 or non-ASCII, or `None` when those 8 bytes hold none (or fewer than 8 remain).
#[inline(always)]
pub(crate) fn find_special_short(hay: &[u8], from: usize) -> Option<usize> {
    let chunk = hay.get(from..from + 8)?;
    let mut word = [0u8; 8];
    word.copy_from_slice(chunk);
    let w = u64::from_le_bytes(word);
    let mask = scalar::special_mask(w) | (w & 0x8080_8080_8080_8080);
    (mask != 0).then(|| from + (mask.trailing_zeros() / 8) as usize)
}

/// [`StringMasks`] through a named backend as `(quote, backslash, control, high)`; a backend
/// the CPU lacks falls back to scalar. For differential tests.
#[doc(hidden)]
pub fn string_masks_with(backend: Backend, hay: &[u8], at: usize) -> (u64, u64, u64, u64) {
    let m = match backend {
        #[cfg(target_arch = "x86_64")]
        Backend::Sse2 | Backend::Avx2 | Backend::Avx512 if is_available(backend) => {
            x86::string_masks_with(backend, hay, at)
        }
        _ => scalar::string_masks(hay, at),
    };
    (m.quote, m.backslash, m.control, m.high)
}

/// The bits of the bytes at `at..at + 64` that are in [`SIMPLE_ESCAPES`] through a named
/// backend; a backend the CPU lacks falls back to scalar. For differential tests.
#[doc(hidden)]
pub fn simple_escapes_with(backend: Backend, hay: &[u8], at: usize) -> u64 {
    match backend {
        #[cfg(target_arch = "x86_64")]
        Backend::Sse2 | Backend::Avx2 | Backend::Avx512 if is_available(backend) => {
            x86::simple_escapes_with(backend, hay, at)
        }
        _ => scalar::simple_escapes(hay, at),
    }
}

/// [`find_special`] through a named backend; a backend the CPU lacks falls back to scalar.
#[doc(hidden)]
pub fn find_special_with(backend: Backend, hay: &[u8], from: usize) -> usize {
    match backend {
        #[cfg(target_arch = "x86_64")]
        Backend::Sse2 => x86::find_special_sse2(hay, from),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 | Backend::Avx512 if x86::has_avx2() => x86::find_special_avx2(hay, from),
        _ => scalar::find_special(hay, from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_all(hay: &[u8]) {
        for at in 0..=hay.len() + 1 {
            let pick = |f: fn(u8) -> bool| -> u64 {
                (0..64)
                    .filter(|&k| hay.get(at + k).is_some_and(|&c| f(c)))
                    .map(|k| 1u64 << k)
                    .sum()
            };
            let want = StringMasks {
                quote: pick(|c| c == b'"'),
                backslash: pick(|c| c == b'\\'),
                control: pick(|c| c < 0x20),
                high: pick(|c| c >= 0x80),
            };
            assert_eq!(scalar::string_masks(hay, at), want);
            let simple = pick(|c| SIMPLE_ESCAPES.contains(&c));
            assert_eq!(scalar::simple_escapes(hay, at), simple);
            for b in available() {
                assert_eq!(
                    simple_escapes_with(b, hay, at),
                    simple,
                    "simple {b:?} at {at}"
                );
            }
            for b in available() {
                let (quote, backslash, control, high) = string_masks_with(b, hay, at);
                let got = StringMasks {
                    quote,
                    backslash,
                    control,
                    high,
                };
                assert_eq!(got, want, "string_masks {b:?} at {at}");
            }
            #[cfg(target_arch = "x86_64")]
            for b in available() {
                if let Some(space) = x86::space_with(b, hay, at) {
                    assert_eq!(space, scalar::space_mask(hay, at), "space {b:?} at {at}");
                }
            }
            let short = (0..8)
                .map(|k| at + k)
                .find(|&k| {
                    hay.get(k)
                        .is_some_and(|&c| c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c))
                })
                .filter(|_| at + 8 <= hay.len());
            assert_eq!(find_special_short(hay, at), short, "short at {at}");
        }
        for from in 0..=hay.len() + 1 {
            let want = scalar::find_special(hay, from);
            for b in available() {
                assert_eq!(find_special_with(b, hay, from), want, "{b:?} from {from}");
            }
            assert_eq!(find_special(hay, from), want);
        }
    }

    #[test]
    fn every_special_at_every_offset_matches_scalar() {
        for special in [
            b'"', b'\\', 0x00, 0x1f, b'\n', 0x80, 0xc3, 0xff, b'/', b'b', b'f', b'n', b'r', b't',
            b'u', b' ', b'\t', b'\r', 0x0b, 0x0c, 0xa0, 0x89, 0x8d,
        ] {
            for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 130] {
                for at in 0..len {
                    let mut hay = vec![b'a'; len];
                    hay[at] = special;
                    check_all(&hay);
                }
            }
        }
    }

    #[test]
    fn boundary_values_are_classified_exactly() {
        let hay: Vec<u8> = (0u8..=0xff).collect();
        check_all(&hay);
        let hay: Vec<u8> = (0x20u8..=0xff)
            .filter(|&b| b != b'"' && b != b'\\')
            .collect();
        assert_eq!(scalar::find_special(&hay, 0), hay.len());
        check_all(&hay);
    }

    #[test]
    fn pseudo_random_inputs_match_scalar() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 200) as usize;
            let hay: Vec<u8> = (0..len)
                .map(|i| {
                    let r = x.rotate_left(i as u32 % 64) as u8;
                    if r.is_multiple_of(23) {
                        [b'"', b'\\', 0x01, 0x1f, 0xe2][(r as usize / 23) % 5]
                    } else {
                        0x20 | (r & 0x7f)
                    }
                })
                .collect();
            check_all(&hay);
        }
    }

    /// `Kernel::utf8_tail` of each backend at the given tails.
    struct Tails<'a>(&'a [Vec<u8>]);

    impl WithKernel for Tails<'_> {
        type Out = Vec<bool>;
        fn run<K: Kernel>(self, k: K) -> Vec<bool> {
            self.0.iter().map(|t| k.utf8_tail(t)).collect()
        }
    }

    /// Every backend's check of a string tail agrees with `core::str::from_utf8` at every
    /// length to 127 (the longest a window's tail can be), across the AVX-512 kernel's switch
    /// from the DFA to vectors (8 and 9 bytes): tails of 2-, 3- and 4-byte characters, whole,
    /// cut before their last byte, and with a surrogate or an overlong form at the end.
    #[test]
    fn string_tails_are_checked_alike_on_every_backend_at_every_length() {
        let mut tails = Vec::new();
        for len in 1..=127usize {
            for ch in ["é", "€", "😋"] {
                let mut t: Vec<u8> = ch.bytes().cycle().take(len).collect();
                tails.push(t.clone());
                t.truncate(len - 1);
                tails.push(t.clone());
                for bad in [
                    &[0xED, 0xA0, 0x80][..],
                    &[0xC0, 0x80],
                    &[0xF4, 0x90, 0x80, 0x80],
                ] {
                    let mut t = t.clone();
                    t.truncate(len.saturating_sub(bad.len()));
                    t.extend_from_slice(bad);
                    tails.push(t);
                }
            }
        }
        let want: Vec<bool> = tails
            .iter()
            .map(|t| std::str::from_utf8(t).is_ok())
            .collect();
        assert!(want.iter().any(|&ok| ok) && want.iter().any(|&ok| !ok));
        for backend in available() {
            let got = dispatch(checked(backend).unwrap(), Tails(&tails));
            for ((t, g), w) in tails.iter().zip(&got).zip(&want) {
                assert_eq!(g, w, "{backend:?} {t:x?}");
            }
        }
    }

    #[test]
    fn the_selected_backend_is_available() {
        assert!(is_available(selected_checked().backend()));
        assert_eq!(available().last(), Some(&Backend::Scalar));
        assert_eq!(available().first(), Some(&selected_checked().backend()));
    }
}
