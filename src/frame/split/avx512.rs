//! AVX-512BW backend of the newline finder: one 64-byte vector per block, compared into a
//! 64-bit mask register directly.
//!
//! Owns only the vector code; must never be reachable without the `avx512bw` and `popcnt`
//! checks in [`ops`]. The tail uses a masked load: bytes outside the mask are neither read
//! into the result nor able to fault (AVX-512 fault suppression), so no read leaves the
//! haystack's memory in effect, and no scalar tail is needed.
#![allow(unsafe_code)]
// AVX-512 intrinsics and `target_feature(enable = "avx512bw")` are stable since Rust 1.89;
// Cargo.toml's `rust-version` (1.85) must be raised to 1.89 for this module (asked of the lead).

use core::arch::x86_64::{
    __m512i, _mm512_cmpeq_epi8_mask, _mm512_loadu_si512, _mm512_maskz_loadu_epi8, _mm512_set1_epi8,
};

use super::{Backend, Ops};

static OPS: Ops = Ops {
    backend: Backend::Avx512,
    find: find_entry,
    count: count_entry,
    next_mask: next_mask_entry,
};

/// The AVX-512BW table, when this CPU has AVX-512BW and POPCNT.
pub(super) fn ops() -> Option<&'static Ops> {
    if std::is_x86_feature_detected!("avx512bw") && std::is_x86_feature_detected!("popcnt") {
        Some(&OPS)
    } else {
        None
    }
}

fn find_entry(hay: &[u8]) -> Option<usize> {
    // SAFETY: OPS is only handed out by `ops()` after AVX-512BW and POPCNT were detected.
    unsafe { find(hay) }
}

fn count_entry(hay: &[u8]) -> usize {
    // SAFETY: as in `find_entry`.
    unsafe { count(hay) }
}

fn next_mask_entry(hay: &[u8], from: usize) -> (usize, u64) {
    // SAFETY: as in `find_entry`.
    unsafe { next_mask(hay, from) }
}

/// LF bits of the 64 bytes at `hay[at..at + 64]`.
///
/// # Safety
/// The CPU must support AVX-512BW and `at + 64 <= hay.len()`.
#[inline]
#[target_feature(enable = "avx512bw")]
unsafe fn mask64(hay: &[u8], at: usize) -> u64 {
    debug_assert!(at + 64 <= hay.len());
    // SAFETY: the caller guarantees 64 readable bytes at `at`; loadu has no alignment need.
    let v = unsafe { _mm512_loadu_si512(hay.as_ptr().add(at).cast::<__m512i>()) };
    _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\n' as i8))
}

/// LF bits of `hay[at..]`, fewer than 64 bytes.
///
/// # Safety
/// The CPU must support AVX-512BW and `at <= hay.len() < at + 64`.
#[inline]
#[target_feature(enable = "avx512bw")]
unsafe fn tail_mask(hay: &[u8], at: usize) -> u64 {
    let rest = hay.len() - at;
    if rest == 0 {
        return 0;
    }
    let keep: u64 = (1u64 << rest) - 1;
    // SAFETY: only the `rest` bytes selected by `keep` are read, all inside the haystack
    // (`at + rest == hay.len()`); masked-off lanes are not accessed and cannot fault.
    let v = unsafe { _mm512_maskz_loadu_epi8(keep, hay.as_ptr().add(at).cast::<i8>()) };
    _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\n' as i8)) & keep
}

/// # Safety
/// The CPU must support AVX-512BW.
#[target_feature(enable = "avx512bw")]
unsafe fn find(hay: &[u8]) -> Option<usize> {
    let len = hay.len();
    let mut i = 0;
    while i + 128 <= len {
        // SAFETY: `i + 128 <= len`: two 64-byte blocks inside the haystack.
        let (a, b) = unsafe { (mask64(hay, i), mask64(hay, i + 64)) };
        if a | b != 0 {
            return Some(if a != 0 {
                i + a.trailing_zeros() as usize
            } else {
                i + 64 + b.trailing_zeros() as usize
            });
        }
        i += 128;
    }
    if i + 64 <= len {
        // SAFETY: `i + 64 <= len`.
        let a = unsafe { mask64(hay, i) };
        if a != 0 {
            return Some(i + a.trailing_zeros() as usize);
        }
        i += 64;
    }
    // SAFETY: `i <= len < i + 64`.
    let m = unsafe { tail_mask(hay, i) };
    (m != 0).then(|| i + m.trailing_zeros() as usize)
}

/// # Safety
/// The CPU must support AVX-512BW and POPCNT.
#[target_feature(enable = "avx512bw,popcnt")]
unsafe fn count(hay: &[u8]) -> usize {
    let len = hay.len();
    let mut total = 0usize;
    let mut i = 0;
    if len >= 64 {
        // Count the bytes before the first 64-byte aligned address from one unaligned block,
        // so the main loop never splits a load across cache lines (as memchr's count does).
        let head = 64 - ((hay.as_ptr() as usize) & 63);
        if head < 64 {
            // SAFETY: `64 <= len`.
            let first = unsafe { mask64(hay, 0) };
            total = (first & ((1u64 << head) - 1)).count_ones() as usize;
            i = head;
        }
    }
    while i + 128 <= len {
        // SAFETY: `i + 128 <= len`: two 64-byte blocks inside the haystack.
        let (a, b) = unsafe { (mask64(hay, i), mask64(hay, i + 64)) };
        total += (a.count_ones() + b.count_ones()) as usize;
        i += 128;
    }
    while i + 64 <= len {
        // SAFETY: `i + 64 <= len`.
        total += unsafe { mask64(hay, i) }.count_ones() as usize;
        i += 64;
    }
    // SAFETY: `i <= len < i + 64`.
    total + unsafe { tail_mask(hay, i) }.count_ones() as usize
}

/// # Safety
/// The CPU must support AVX-512BW, and `from <= hay.len()` (checked: a larger `from` finds
/// nothing).
#[target_feature(enable = "avx512bw")]
unsafe fn next_mask(hay: &[u8], from: usize) -> (usize, u64) {
    let len = hay.len();
    let mut i = from;
    while i + 128 <= len {
        // SAFETY: `i + 128 <= len`: two 64-byte blocks inside the haystack.
        let (a, b) = unsafe { (mask64(hay, i), mask64(hay, i + 64)) };
        if a != 0 {
            return (i, a);
        }
        if b != 0 {
            return (i + 64, b);
        }
        i += 128;
    }
    if i + 64 <= len {
        // SAFETY: `i + 64 <= len`.
        let a = unsafe { mask64(hay, i) };
        if a != 0 {
            return (i, a);
        }
        i += 64;
    }
    if i >= len {
        return (len, 0);
    }
    // SAFETY: `i < len < i + 64`.
    let m = unsafe { tail_mask(hay, i) };
    if m == 0 {
        (len, 0)
    } else {
        (i, m)
    }
}
