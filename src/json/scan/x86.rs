//! x86_64 backends: the string masks with AVX-512BW, AVX2 and SSE2 (x86_64 baseline), the
//! dispatch entries that compile a whole parse for each, and the writer's `find_special`.
//!
//! Each `run_*` entry is a `#[target_feature]` function; the parse ([`WithKernel::run`]) is
//! inlined into it and gets that backend's kernel token, which only these entries construct.
//! The entries are reached only through [`dispatch`], whose [`Checked`] backend proves the
//! features were detected when it was made (once per process, not per document). Loads never leave the slice: the
//! AVX-512 tail is a masked load, the others copy the tail into a padded block.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

use super::string;
use super::{
    Backend, Checked, Kernel, ScalarKernel, StringMasks, Window, WithKernel, SIMPLE_ESCAPES,
};
use crate::json::error::Error;

#[inline]
pub(super) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("lzcnt")
}

#[inline]
fn has_avx512() -> bool {
    has_avx2()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
}

pub(super) fn is_available(backend: Backend) -> bool {
    match backend {
        Backend::Scalar | Backend::Sse2 => true,
        Backend::Avx2 => has_avx2(),
        Backend::Avx512 => has_avx512(),
    }
}

/// Inlined into its caller, so each backend's function receives the caller's `work` as the
/// caller wrote it. Out of line (it held the SSE2 and scalar grammars), it copied `work` into
/// its own frame with a 16-byte load of two 8-byte stores the caller had just made: a failed
/// store forward on every document, ≈ 20 % of the time of parsing `{}` (perf).
#[inline(always)]
pub(super) fn dispatch<W: WithKernel>(backend: Checked, work: W) -> W::Out {
    match backend.backend() {
        // SAFETY: a `Checked` backend is only made by `super::checked` after `is_available`
        // (`has_avx512`) confirmed every feature `run_avx512` is compiled for.
        Backend::Avx512 => unsafe { run_avx512(work) },
        // SAFETY: as above, `has_avx2` confirmed every feature `run_avx2` is compiled for.
        Backend::Avx2 => unsafe { run_avx2(work) },
        Backend::Sse2 => run_sse2(work),
        Backend::Scalar => run_scalar(work),
    }
}

/// The SSE2 grammar, out of line so that [`dispatch`] stays small enough to inline (as the
/// AVX-512 and AVX2 grammars are, in their `#[target_feature]` functions).
#[inline(never)]
fn run_sse2<W: WithKernel>(work: W) -> W::Out {
    work.run(Sse2Kernel(()))
}

/// The scalar grammar, out of line for the same reason as [`run_sse2`].
#[inline(never)]
fn run_scalar<W: WithKernel>(work: W) -> W::Out {
    work.run(ScalarKernel)
}

#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,popcnt,lzcnt")]
fn run_avx512<W: WithKernel>(work: W) -> W::Out {
    work.run(Avx512Kernel(()))
}

#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,lzcnt")]
fn run_avx2<W: WithKernel>(work: W) -> W::Out {
    work.run(Avx2Kernel(()))
}

/// Proof that AVX-512BW (and the AVX2 set) may run: only `run_avx512` constructs it.
#[derive(Clone, Copy)]
struct Avx512Kernel(());

/// Proof that AVX2, BMI1/2, POPCNT and LZCNT may run: only `run_avx2` constructs it.
#[derive(Clone, Copy)]
struct Avx2Kernel(());

/// SSE2 is the x86_64 baseline: no proof needed.
#[derive(Clone, Copy)]
struct Sse2Kernel(());

impl Kernel for Avx512Kernel {
    #[inline(always)]
    fn string_short(self, b: &[u8], i: usize, window: &mut Window) -> Option<usize> {
        let utf8 = |s: &[u8]| self.utf8_tail(s);
        if let Some(answer) = window.cached(b, i, utf8) {
            return answer;
        }
        if let Some(next) = window.next_at(i) {
            // SAFETY: an `Avx512Kernel` exists only inside `run_avx512`, entered after
            // detection.
            let m = unsafe { avx512_masks(b, next) };
            return window.advance(b, i, m, utf8);
        }
        // SAFETY: an `Avx512Kernel` exists only inside `run_avx512`, entered after detection.
        let m = unsafe { avx512_masks(b, i) };
        window.reload(b, i, m, utf8)
    }

    #[inline(always)]
    fn utf8_tail(self, s: &[u8]) -> bool {
        utf8_avx512(self, s)
    }

    #[inline(always)]
    fn space_run(self, b: &[u8], i: usize, window: &mut Window) -> usize {
        space_run_avx512_call(self, b, i, window)
    }

    #[inline(always)]
    fn gap(self, b: &[u8], i: usize, window: &mut Window, predicted: &mut u8) -> usize {
        let _ = window;
        // SAFETY: an `Avx512Kernel` exists only inside `run_avx512`, entered after detection.
        unsafe { gap_avx512(b, i, predicted) }
    }

    #[inline(always)]
    fn string_blocks(self, b: &[u8], start: usize) -> Result<(usize, bool), Error> {
        // SAFETY: an `Avx512Kernel` exists only inside `run_avx512`, entered after detection.
        unsafe { blocks_avx512(b, start) }
    }
}

impl Kernel for Avx2Kernel {
    #[inline(always)]
    fn string_short(self, b: &[u8], i: usize, window: &mut Window) -> Option<usize> {
        let utf8 = |s: &[u8]| self.utf8_tail(s);
        if let Some(answer) = window.cached(b, i, utf8) {
            return answer;
        }
        if let Some(next) = window.next_at(i) {
            // SAFETY: an `Avx2Kernel` exists only inside `run_avx2`, entered after detection.
            let m = unsafe { avx2_masks(b, next) };
            return window.advance(b, i, m, utf8);
        }
        // SAFETY: an `Avx2Kernel` exists only inside `run_avx2`, entered after detection.
        let m = unsafe { avx2_masks(b, i) };
        // Whitespace runs take the SWAR twin (the default `space_run`): with a `vpshufb`
        // whitespace class in this kernel's window LLVM took the AVX2 movemask words apart
        // bit by bit (the grammar grew from 2,200 to 8,700 instructions, 2.1× the
        // instructions per `stream_event` line under callgrind).
        window.reload(b, i, m, utf8)
    }

    #[inline(always)]
    fn gap(self, b: &[u8], i: usize, window: &mut Window, predicted: &mut u8) -> usize {
        let _ = window;
        gap_avx2_call(self, b, i, predicted)
    }

    #[inline(always)]
    fn string_blocks(self, b: &[u8], start: usize) -> Result<(usize, bool), Error> {
        // SAFETY: an `Avx2Kernel` exists only inside `run_avx2`, entered after detection.
        unsafe { blocks_avx2(b, start) }
    }
}

/// [`Kernel::gap`] of the AVX2 kernel, out of line: inlined, it cost compact lines (which
/// never have a gap) 1-2 % more instructions under callgrind (the grammar's registers).
#[inline(never)]
fn gap_avx2_call(_proof: Avx2Kernel, b: &[u8], i: usize, predicted: &mut u8) -> usize {
    // SAFETY: `_proof` is an `Avx2Kernel`, which exists only inside `run_avx2`, entered after
    // detection.
    unsafe { gap_avx2(b, i, predicted) }
}

/// [`Kernel::gap`] of the AVX2 kernel, as the AVX-512 one with two 32-byte halves.
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,lzcnt")]
#[inline]
fn gap_avx2(b: &[u8], i: usize, predicted: &mut u8) -> usize {
    super::gap_from_bits(b, i, avx2_space(b, i), predicted, |hay, at| {
        avx2_space(hay, at)
    })
}

/// The whitespace bits of the 64 bytes at `at` (bytes past the end are not whitespace).
#[target_feature(enable = "avx2")]
#[inline]
fn avx2_space(hay: &[u8], at: usize) -> u64 {
    if at.checked_add(64).is_some_and(|end| end <= hay.len()) {
        return avx2_space_64(&hay[at..at + 64]);
    }
    // Fewer than 64 bytes left, and the padding spaces are whitespace: keep the real bytes'.
    let rest = hay.len().saturating_sub(at);
    avx2_space_64(&padded_tail(hay, at)) & ((1u64 << rest) - 1)
}

/// # Contract
/// `block.len() >= 64`.
#[target_feature(enable = "avx2")]
#[inline]
fn avx2_space_64(block: &[u8]) -> u64 {
    let (lo, hi) = avx2_halves(block);
    // SAFETY: reads the 16 bytes of a `static` array.
    let table = _mm256_broadcastsi128_si256(unsafe {
        _mm_loadu_si128(SPACE_TABLE.as_ptr() as *const __m128i)
    });
    let class = |v: __m256i| _mm256_cmpeq_epi8(_mm256_shuffle_epi8(table, v), v);
    avx2_bits(class(lo), class(hi))
}

/// The first 64 bytes of `block` as two 32-byte vectors.
///
/// # Contract
/// `block.len() >= 64`.
#[target_feature(enable = "avx2")]
#[inline]
fn avx2_halves(block: &[u8]) -> (__m256i, __m256i) {
    assert!(block.len() >= 64);
    // SAFETY: both 32-byte loads end at or before 64 <= block.len() (asserted above).
    unsafe {
        let p = block.as_ptr();
        (
            _mm256_loadu_si256(p as *const __m256i),
            _mm256_loadu_si256(p.add(32) as *const __m256i),
        )
    }
}

/// The byte masks of two 32-byte halves as the 64 bits of one block.
#[target_feature(enable = "avx2")]
#[inline]
fn avx2_bits(lo: __m256i, hi: __m256i) -> u64 {
    (_mm256_movemask_epi8(lo) as u32 as u64) | ((_mm256_movemask_epi8(hi) as u32 as u64) << 32)
}

impl Kernel for Sse2Kernel {
    #[inline]
    fn string_blocks(self, b: &[u8], start: usize) -> Result<(usize, bool), Error> {
        string::walk(b, start, sse2_masks, sse2_simple, string::utf8_portable)
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,popcnt,lzcnt")]
fn blocks_avx512(b: &[u8], start: usize) -> Result<(usize, bool), Error> {
    string::walk(
        b,
        start,
        |hay, at| avx512_masks(hay, at),
        |hay, at| avx512_simple(hay, at),
        |tail| utf8_avx512_checked(tail),
    )
}

/// [`Kernel::utf8_tail`] of the AVX-512 kernel: the DFA for the shortest tails (an emoji in a
/// delta), where setting up the vectors costs more than the bytes; vectors beyond.
#[inline(always)]
fn utf8_avx512(_proof: Avx512Kernel, s: &[u8]) -> bool {
    // SAFETY: `_proof` is an `Avx512Kernel`, which exists only inside `run_avx512`, entered
    // after detection.
    unsafe { utf8_avx512_checked(s) }
}

/// [`utf8_avx512`] for code compiled for AVX-512 (the block walk), which is the proof.
#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,popcnt,lzcnt")]
#[inline]
fn utf8_avx512_checked(s: &[u8]) -> bool {
    if s.len() <= UTF8_DFA_MAX {
        return super::is_utf8_short(s);
    }
    super::x86_utf8::is_utf8_avx512(s)
}

/// Tails up to this long take the DFA on the AVX-512 kernel.
const UTF8_DFA_MAX: usize = 8;

#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,lzcnt")]
fn blocks_avx2(b: &[u8], start: usize) -> Result<(usize, bool), Error> {
    string::walk(
        b,
        start,
        |hay, at| avx2_masks(hay, at),
        |hay, at| avx2_simple(hay, at),
        string::utf8_portable,
    )
}

/// The 64 bytes at `at` as one vector, with one masked load: bytes past the end of `hay` read
/// as spaces, which are in no class, so no mask needs trimming afterwards. `None` at the end.
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn avx512_load(hay: &[u8], at: usize) -> Option<__m512i> {
    let rest = hay.len().checked_sub(at).filter(|&r| r > 0)?;
    let valid = if rest >= 64 {
        !0u64
    } else {
        (1u64 << rest) - 1
    };
    // SAFETY: `at < hay.len()`, so the pointer is in bounds; the mask enables at most the
    // `rest` bytes left in `hay` (all 64 only when `rest >= 64`), and masked-off bytes are
    // neither read nor able to fault.
    Some(unsafe {
        _mm512_mask_loadu_epi8(
            _mm512_set1_epi8(b' ' as i8),
            valid,
            hay.as_ptr().add(at) as *const i8,
        )
    })
}

/// The masks of the bytes in `at..at + 64` with one 64-byte vector (masked load at the tail).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn avx512_masks(hay: &[u8], at: usize) -> StringMasks {
    avx512_masks_of(avx512_load(hay, at))
}

/// The whitespace lookup of `vpshufb` by low nibble: the one whitespace byte with that low
/// nibble (space 0x20, tab 0x09, LF 0x0A, CR 0x0D), else 0, which matches no byte with a
/// nonzero low nibble; so `shuffle(table, v) == v` exactly at whitespace (a byte >= 0x80
/// looks up 0 and differs from itself).
static SPACE_TABLE: [u8; 16] = [0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0x09, 0x0A, 0, 0, 0x0D, 0, 0];

/// The whitespace bits of the 64 bytes at `at`, for the parse's window and its gaps (a plain
/// load where 64 bytes remain, else a masked one whose fill spaces are masked out; nothing past
/// the end is whitespace).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn avx512_space(hay: &[u8], at: usize) -> u64 {
    // SAFETY: reads the 16 bytes of a `static` array.
    let table =
        _mm512_broadcast_i32x4(unsafe { _mm_loadu_si128(SPACE_TABLE.as_ptr() as *const __m128i) });
    if hay.len() >= 64 && at <= hay.len() - 64 {
        // SAFETY: `at + 64 <= hay.len()`: the 64-byte unaligned load stays inside `hay`.
        let v = unsafe { _mm512_loadu_si512(hay.as_ptr().add(at) as *const __m512i) };
        // Its own return (the class written twice): one class after a choice of vector and
        // mask measured ≈ 1 % slower on twitter.json, 7 alternating pairs (inlined in gaps).
        return _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(table, v), v);
    }
    let rest = hay.len().saturating_sub(at);
    let valid = if rest >= 64 {
        !0u64
    } else {
        (1u64 << rest) - 1
    };
    let Some(v) = avx512_load(hay, at) else {
        return 0;
    };
    _mm512_cmpeq_epi8_mask(_mm512_shuffle_epi8(table, v), v) & valid
}

/// [`Kernel::space_run`] of the AVX-512 kernel, kept out of line: inlined at the grammar's
/// whitespace gaps (five then; most gaps are [`Kernel::gap`]s now) it made the grammar a third
/// longer and compact `stream_event` lines, which never have a run, ≈ 8 % slower (`peer_decode`,
/// three alternating runs). A plain function (holding the kernel token as its proof), because rustc
/// 1.95 inlined the `#[target_feature]` one below into the grammar despite `#[inline(never)]`.
#[inline(never)]
fn space_run_avx512_call(_proof: Avx512Kernel, b: &[u8], i: usize, window: &mut Window) -> usize {
    // SAFETY: `_proof` is an `Avx512Kernel`, which exists only inside `run_avx512`, entered
    // after detection.
    unsafe { space_run_avx512(b, i, window) }
}

/// [`Kernel::gap`] of the AVX-512 kernel: the whitespace bits of the 64 bytes at the gap,
/// inlined at the grammar's gaps (the rare unpredicted gap goes out of line).
#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,popcnt,lzcnt")]
#[inline]
fn gap_avx512(b: &[u8], i: usize, predicted: &mut u8) -> usize {
    super::gap_from_bits(b, i, avx512_space(b, i), predicted, |hay, at| {
        avx512_space(hay, at)
    })
}

#[target_feature(enable = "avx512f,avx512bw,avx2,bmi1,bmi2,popcnt,lzcnt")]
#[inline]
fn space_run_avx512(b: &[u8], i: usize, window: &mut Window) -> usize {
    window.space_run(b, i, |hay, at| avx512_space(hay, at))
}

/// The string classes of a loaded vector (`None`: past the end, no bits).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn avx512_masks_of(v: Option<__m512i>) -> StringMasks {
    let Some(v) = v else {
        return StringMasks {
            quote: 0,
            backslash: 0,
            control: 0,
            high: 0,
        };
    };
    StringMasks {
        quote: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8)),
        backslash: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\\' as i8)),
        control: _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)),
        high: _mm512_movepi8_mask(v),
    }
}

/// The whitespace bits of the parse's window and gaps through a named backend the caller
/// checked is available; `None` for a backend whose whitespace runs use neither. For tests.
#[cfg(test)]
pub(super) fn space_with(backend: Backend, hay: &[u8], at: usize) -> Option<u64> {
    match backend {
        // SAFETY: the caller checked `is_available(Avx512)`.
        Backend::Avx512 if has_avx512() => Some(unsafe { avx512_space(hay, at) }),
        // SAFETY: the caller checked `is_available(Avx2)`.
        Backend::Avx2 if has_avx2() => Some(unsafe { avx2_space(hay, at) }),
        _ => None,
    }
}

/// The bits of the 64 bytes at `at` that are in `SIMPLE_ESCAPES` (bytes past the end, read as
/// spaces, are not).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
fn avx512_simple(hay: &[u8], at: usize) -> u64 {
    let Some(v) = avx512_load(hay, at) else {
        return 0;
    };
    SIMPLE_ESCAPES.iter().fold(0, |m, &c| {
        m | _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8))
    })
}

#[target_feature(enable = "avx2")]
#[inline]
fn avx2_simple(hay: &[u8], at: usize) -> u64 {
    if at.checked_add(64).is_none_or(|end| end > hay.len()) {
        let block = padded_tail(hay, at);
        return avx2_simple_64(&block);
    }
    avx2_simple_64(&hay[at..at + 64])
}

/// # Contract
/// `block.len() >= 64`.
#[target_feature(enable = "avx2")]
#[inline]
fn avx2_simple_64(block: &[u8]) -> u64 {
    let (lo, hi) = avx2_halves(block);
    let (mut l, mut h) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for &c in &SIMPLE_ESCAPES {
        let c = _mm256_set1_epi8(c as i8);
        l = _mm256_or_si256(l, _mm256_cmpeq_epi8(lo, c));
        h = _mm256_or_si256(h, _mm256_cmpeq_epi8(hi, c));
    }
    avx2_bits(l, h)
}

fn sse2_simple(hay: &[u8], at: usize) -> u64 {
    if at.checked_add(64).is_none_or(|end| end > hay.len()) {
        let block = padded_tail(hay, at);
        // SAFETY: SSE2 is part of the x86_64 baseline.
        return unsafe { sse2_simple_64(&block) };
    }
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { sse2_simple_64(&hay[at..at + 64]) }
}

/// # Contract
/// `block.len() >= 64`.
#[target_feature(enable = "sse2")]
#[inline]
fn sse2_simple_64(block: &[u8]) -> u64 {
    assert!(block.len() >= 64);
    let mut m = 0u64;
    for k in 0..4 {
        // SAFETY: `16 * k + 16 <= 64 <= block.len()` (asserted above); SSE2 is baseline.
        let v = unsafe { _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i) };
        let mut any = _mm_setzero_si128();
        for &c in &SIMPLE_ESCAPES {
            any = _mm_or_si128(any, _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8)));
        }
        m |= (_mm_movemask_epi8(any) as u16 as u64) << (16 * k);
    }
    m
}

/// The simple-escape bits through a named backend the caller checked is available. For tests.
pub(super) fn simple_escapes_with(backend: Backend, hay: &[u8], at: usize) -> u64 {
    match backend {
        // SAFETY: the caller checked `is_available(Avx512)`.
        Backend::Avx512 if has_avx512() => unsafe { avx512_simple(hay, at) },
        // SAFETY: the caller checked `is_available(Avx2)`.
        Backend::Avx2 if has_avx2() => unsafe { avx2_simple(hay, at) },
        Backend::Sse2 => sse2_simple(hay, at),
        _ => super::scalar::simple_escapes(hay, at),
    }
}

/// The bytes from `at` to the end (fewer than 64) in a block padded with spaces, which are in
/// no class, so the vector code can run on the tail of every line too.
#[inline]
fn padded_tail(hay: &[u8], at: usize) -> [u8; 64] {
    let mut block = [b' '; 64];
    let tail = hay.get(at..).unwrap_or(&[]);
    let n = tail.len().min(64);
    block[..n].copy_from_slice(&tail[..n]);
    block
}

#[target_feature(enable = "avx2")]
#[inline]
fn avx2_masks(hay: &[u8], at: usize) -> StringMasks {
    if at.checked_add(64).is_none_or(|end| end > hay.len()) {
        let block = padded_tail(hay, at);
        return avx2_masks_64(&block);
    }
    avx2_masks_64(&hay[at..at + 64])
}

/// # Contract
/// `block.len() >= 64`.
#[target_feature(enable = "avx2")]
#[inline]
fn avx2_masks_64(block: &[u8]) -> StringMasks {
    let (lo, hi) = avx2_halves(block);
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let max_control = _mm256_set1_epi8(0x1f);
    StringMasks {
        quote: avx2_bits(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote)),
        backslash: avx2_bits(
            _mm256_cmpeq_epi8(lo, backslash),
            _mm256_cmpeq_epi8(hi, backslash),
        ),
        control: avx2_bits(
            _mm256_cmpeq_epi8(_mm256_min_epu8(lo, max_control), lo),
            _mm256_cmpeq_epi8(_mm256_min_epu8(hi, max_control), hi),
        ),
        high: avx2_bits(lo, hi),
    }
}

#[inline]
fn sse2_masks(hay: &[u8], at: usize) -> StringMasks {
    if at.checked_add(64).is_none_or(|end| end > hay.len()) {
        let block = padded_tail(hay, at);
        // SAFETY: SSE2 is part of the x86_64 baseline.
        return unsafe { sse2_masks_64(&block) };
    }
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { sse2_masks_64(&hay[at..at + 64]) }
}

/// # Contract
/// `block.len() >= 64`.
#[target_feature(enable = "sse2")]
#[inline]
fn sse2_masks_64(block: &[u8]) -> StringMasks {
    assert!(block.len() >= 64);
    let quote = _mm_set1_epi8(b'"' as i8);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let max_control = _mm_set1_epi8(0x1f);
    let mut m = StringMasks {
        quote: 0,
        backslash: 0,
        control: 0,
        high: 0,
    };
    for k in 0..4 {
        // SAFETY: `16 * k + 16 <= 64 <= block.len()` (asserted above); SSE2 is baseline.
        let v = unsafe { _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i) };
        let bits = |x: __m128i| (_mm_movemask_epi8(x) as u16 as u64) << (16 * k);
        m.quote |= bits(_mm_cmpeq_epi8(v, quote));
        m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
        m.control |= bits(_mm_cmpeq_epi8(_mm_min_epu8(v, max_control), v));
        m.high |= bits(v);
    }
    m
}

/// The masks through a named backend the caller checked is available. For tests.
pub(super) fn string_masks_with(backend: Backend, hay: &[u8], at: usize) -> StringMasks {
    match backend {
        // SAFETY: the caller checked `is_available(Avx512)`.
        Backend::Avx512 if has_avx512() => unsafe { avx512_masks(hay, at) },
        // SAFETY: the caller checked `is_available(Avx2)`.
        Backend::Avx2 if has_avx2() => unsafe { avx2_masks(hay, at) },
        Backend::Sse2 => sse2_masks(hay, at),
        _ => super::scalar::string_masks(hay, at),
    }
}

/// The writer's search for the next `"`, `\` or control byte.
#[inline]
pub(super) fn find_special(hay: &[u8], from: usize) -> usize {
    if has_avx2() {
        find_special_avx2(hay, from)
    } else {
        find_special_sse2(hay, from)
    }
}

pub(super) fn find_special_sse2(hay: &[u8], from: usize) -> usize {
    // SAFETY: SSE2 is part of the x86_64 baseline, so the target feature is always present.
    unsafe { sse2(hay, from) }
}

pub(super) fn find_special_avx2(hay: &[u8], from: usize) -> usize {
    if !has_avx2() {
        return super::scalar::find_special(hay, from);
    }
    // SAFETY: the CPU reports AVX2 (checked just above).
    unsafe { avx2(hay, from) }
}

/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
unsafe fn sse2(hay: &[u8], from: usize) -> usize {
    let mut i = from.min(hay.len());
    let quote = _mm_set1_epi8(b'"' as i8);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let max_control = _mm_set1_epi8(0x1f);
    while i + 16 <= hay.len() {
        // SAFETY: `i + 16 <= hay.len()`, so the 16-byte unaligned load stays inside `hay`.
        let v = unsafe { _mm_loadu_si128(hay.as_ptr().add(i) as *const __m128i) };
        let q = _mm_cmpeq_epi8(v, quote);
        let b = _mm_cmpeq_epi8(v, backslash);
        // v <= 0x1f (unsigned) exactly when min(v, 0x1f) == v.
        let c = _mm_cmpeq_epi8(_mm_min_epu8(v, max_control), v);
        let mask = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), c)) as u32;
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += 16;
    }
    super::scalar::find_special(hay, i)
}

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn avx2(hay: &[u8], from: usize) -> usize {
    let mut i = from.min(hay.len());
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let max_control = _mm256_set1_epi8(0x1f);
    while i + 32 <= hay.len() {
        // SAFETY: `i + 32 <= hay.len()`, so the 32-byte unaligned load stays inside `hay`.
        let v = unsafe { _mm256_loadu_si256(hay.as_ptr().add(i) as *const __m256i) };
        let q = _mm256_cmpeq_epi8(v, quote);
        let b = _mm256_cmpeq_epi8(v, backslash);
        let c = _mm256_cmpeq_epi8(_mm256_min_epu8(v, max_control), v);
        let mask = _mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(q, b), c)) as u32;
        if mask != 0 {
            return i + mask.trailing_zeros() as usize;
        }
        i += 32;
    }
    // SAFETY: SSE2 is baseline; finishes the sub-32-byte tail with 16-byte steps and scalar.
    unsafe { sse2(hay, i) }
}
