//! AVX2 backend of the newline finder: 32-byte vectors, two per 64-byte block.
//!
//! Owns only the vector code; must never be reachable without the `avx2` check in [`ops`].
//! Reads stay inside the haystack: full vectors only where 32 bytes remain, an overlapping
//! load ending at the last byte for a short tail, and plain bytes when the haystack is
//! shorter than one vector.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm256_add_epi64, _mm256_castsi256_si128, _mm256_cmpeq_epi8, _mm256_extracti128_si256,
    _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_or_si256, _mm256_sad_epu8, _mm256_set1_epi8,
    _mm256_setzero_si256, _mm256_sub_epi8, _mm_add_epi64, _mm_cvtsi128_si64, _mm_srli_si128,
};

use super::{scalar, Backend, Ops};

static OPS: Ops = Ops {
    backend: Backend::Avx2,
    find: find_entry,
    count: count_entry,
    next_mask: next_mask_entry,
};

/// The AVX2 table, when this CPU has AVX2.
pub(super) fn ops() -> Option<&'static Ops> {
    if std::is_x86_feature_detected!("avx2") {
        Some(&OPS)
    } else {
        None
    }
}

fn find_entry(hay: &[u8]) -> Option<usize> {
    // SAFETY: OPS is only handed out by `ops()` after AVX2 was detected.
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

/// Loads the 32 bytes at `hay[at..at + 32]`.
///
/// # Safety
/// The CPU must support AVX2 and `at + 32 <= hay.len()`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn load(hay: &[u8], at: usize) -> __m256i {
    debug_assert!(at + 32 <= hay.len());
    // SAFETY: the caller guarantees 32 readable bytes at `at`; loadu has no alignment need.
    unsafe { _mm256_loadu_si256(hay.as_ptr().add(at).cast::<__m256i>()) }
}

/// LF bits of the 32 bytes at `hay[at..at + 32]`.
///
/// # Safety
/// The CPU must support AVX2 and `at + 32 <= hay.len()`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn mask32(hay: &[u8], at: usize) -> u32 {
    // SAFETY: forwarded from the caller.
    let v = unsafe { load(hay, at) };
    _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\n' as i8))) as u32
}

/// LF bits of `hay[at..]`, fewer than 64 bytes.
///
/// # Safety
/// The CPU must support AVX2 and `at <= hay.len() < at + 64`.
#[target_feature(enable = "avx2")]
unsafe fn tail_mask(hay: &[u8], at: usize) -> u64 {
    let len = hay.len();
    if len < 32 {
        return scalar::mask64(hay.get(at..).unwrap_or_default());
    }
    let mut mask = 0u64;
    let mut i = at;
    if i + 32 <= len {
        // SAFETY: `i + 32 <= len`.
        mask = u64::from(unsafe { mask32(hay, i) });
        i += 32;
    }
    if i < len {
        // Overlapping load of the last 32 bytes; drop the bits before `i`.
        // SAFETY: `len >= 32`, so `len - 32 .. len` is in bounds.
        let last = unsafe { mask32(hay, len - 32) } >> (i - (len - 32));
        mask |= u64::from(last) << (i - at);
    }
    mask
}

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn find(hay: &[u8]) -> Option<usize> {
    let len = hay.len();
    let nl = _mm256_set1_epi8(b'\n' as i8);
    let mut i = 0;
    while i + 64 <= len {
        // SAFETY: `i + 64 <= len`: two loads inside the haystack.
        let (a, b) = unsafe { (load(hay, i), load(hay, i + 32)) };
        let (ea, eb) = (_mm256_cmpeq_epi8(a, nl), _mm256_cmpeq_epi8(b, nl));
        if _mm256_movemask_epi8(_mm256_or_si256(ea, eb)) != 0 {
            let m = u64::from(_mm256_movemask_epi8(ea) as u32)
                | u64::from(_mm256_movemask_epi8(eb) as u32) << 32;
            return Some(i + m.trailing_zeros() as usize);
        }
        i += 64;
    }
    // SAFETY: `i <= len < i + 64`.
    let m = unsafe { tail_mask(hay, i) };
    (m != 0).then(|| i + m.trailing_zeros() as usize)
}

/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
unsafe fn count(hay: &[u8]) -> usize {
    let len = hay.len();
    let nl = _mm256_set1_epi8(b'\n' as i8);
    let zero = _mm256_setzero_si256();
    let mut total = _mm256_setzero_si256();
    let mut i = 0;
    // Byte counters: subtracting an all-ones compare result adds one. A round adds at most
    // two to a lane, so 127 rounds (254) cannot wrap; then SAD sums them into 64-bit lanes.
    while i + 64 <= len {
        let rounds = ((len - i) / 64).min(127);
        let mut acc = _mm256_setzero_si256();
        for _ in 0..rounds {
            // SAFETY: `rounds` blocks of 64 bytes fit before `len`.
            let (a, b) = unsafe { (load(hay, i), load(hay, i + 32)) };
            acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(a, nl));
            acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(b, nl));
            i += 64;
        }
        total = _mm256_add_epi64(total, _mm256_sad_epu8(acc, zero));
    }
    let halves = _mm_add_epi64(
        _mm256_castsi256_si128(total),
        _mm256_extracti128_si256::<1>(total),
    );
    let lanes = _mm_add_epi64(halves, _mm_srli_si128::<8>(halves));
    // SAFETY: `i <= len < i + 64`.
    let tail = unsafe { tail_mask(hay, i) };
    _mm_cvtsi128_si64(lanes) as usize + tail.count_ones() as usize
}

/// # Safety
/// The CPU must support AVX2, and `from <= hay.len()` (checked: a larger `from` finds nothing).
#[target_feature(enable = "avx2")]
unsafe fn next_mask(hay: &[u8], from: usize) -> (usize, u64) {
    let len = hay.len();
    let nl = _mm256_set1_epi8(b'\n' as i8);
    let mut i = from;
    while i + 64 <= len {
        // SAFETY: `i + 64 <= len`: two loads inside the haystack.
        let (a, b) = unsafe { (load(hay, i), load(hay, i + 32)) };
        let (ea, eb) = (_mm256_cmpeq_epi8(a, nl), _mm256_cmpeq_epi8(b, nl));
        let m = u64::from(_mm256_movemask_epi8(ea) as u32)
            | u64::from(_mm256_movemask_epi8(eb) as u32) << 32;
        if m != 0 {
            return (i, m);
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
