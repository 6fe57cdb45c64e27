//! x86_64 backends for [`super::find_special`]: SSE2 (baseline on x86_64) and AVX2 (detected
//! at run time; std caches the CPUID answer). The tail shorter than one vector goes to the
//! scalar twin, so no load ever reads past the slice.
#![allow(unsafe_code)]

use core::arch::x86_64::*;

#[inline]
pub(super) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
}

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

#[inline]
pub(super) fn string_masks(hay: &[u8], at: usize) -> super::StringMasks {
    if has_avx2() {
        string_masks_avx2(hay, at)
    } else {
        string_masks_sse2(hay, at)
    }
}

/// The bytes from `at` to the end (fewer than 64) in a block padded with spaces, which are
/// never special, so the vector code can run on the tail of every line too.
#[inline]
fn padded_tail(hay: &[u8], at: usize) -> [u8; 64] {
    let mut block = [b' '; 64];
    let tail = hay.get(at..).unwrap_or(&[]);
    let n = tail.len().min(64);
    block[..n].copy_from_slice(&tail[..n]);
    block
}

pub(super) fn string_masks_sse2(hay: &[u8], at: usize) -> super::StringMasks {
    if at.checked_add(64).is_none_or(|end| end > hay.len()) {
        let block = padded_tail(hay, at);
        // SAFETY: SSE2 is baseline on x86_64, and the padded block holds exactly 64 bytes.
        return unsafe { sse2_string_masks(&block, 0) };
    }
    // SAFETY: SSE2 is baseline on x86_64, and `at + 64 <= hay.len()` (checked above).
    unsafe { sse2_string_masks(hay, at) }
}

pub(super) fn string_masks_avx2(hay: &[u8], at: usize) -> super::StringMasks {
    if !has_avx2() {
        return super::scalar::string_masks(hay, at);
    }
    if at.checked_add(64).is_none_or(|end| end > hay.len()) {
        let block = padded_tail(hay, at);
        // SAFETY: the CPU reports AVX2, and the padded block holds exactly 64 bytes.
        return unsafe { avx2_string_masks(&block, 0) };
    }
    // SAFETY: the CPU reports AVX2, and `at + 64 <= hay.len()` (both checked above).
    unsafe { avx2_string_masks(hay, at) }
}

/// # Safety
/// The CPU must support SSE2 and `at + 64 <= hay.len()`.
#[target_feature(enable = "sse2")]
unsafe fn sse2_string_masks(hay: &[u8], at: usize) -> super::StringMasks {
    let quote = _mm_set1_epi8(b'"' as i8);
    let backslash = _mm_set1_epi8(b'\\' as i8);
    let max_control = _mm_set1_epi8(0x1f);
    let mut m = super::StringMasks {
        quote: 0,
        backslash: 0,
        control: 0,
    };
    for k in 0..4 {
        // SAFETY: `at + 16 * k + 16 <= at + 64 <= hay.len()` by the caller's contract.
        let v = unsafe { _mm_loadu_si128(hay.as_ptr().add(at + 16 * k) as *const __m128i) };
        let bits = |x: __m128i| (_mm_movemask_epi8(x) as u16 as u64) << (16 * k);
        m.quote |= bits(_mm_cmpeq_epi8(v, quote));
        m.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
        m.control |= bits(_mm_cmpeq_epi8(_mm_min_epu8(v, max_control), v));
    }
    m
}

/// # Safety
/// The CPU must support AVX2 and `at + 64 <= hay.len()`.
#[target_feature(enable = "avx2")]
unsafe fn avx2_string_masks(hay: &[u8], at: usize) -> super::StringMasks {
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let max_control = _mm256_set1_epi8(0x1f);
    // SAFETY: both 32-byte loads end at or before `at + 64 <= hay.len()`.
    let (lo, hi) = unsafe {
        let p = hay.as_ptr().add(at);
        (
            _mm256_loadu_si256(p as *const __m256i),
            _mm256_loadu_si256(p.add(32) as *const __m256i),
        )
    };
    let bits = |l: __m256i, h: __m256i| {
        (_mm256_movemask_epi8(l) as u32 as u64) | ((_mm256_movemask_epi8(h) as u32 as u64) << 32)
    };
    super::StringMasks {
        quote: bits(_mm256_cmpeq_epi8(lo, quote), _mm256_cmpeq_epi8(hi, quote)),
        backslash: bits(
            _mm256_cmpeq_epi8(lo, backslash),
            _mm256_cmpeq_epi8(hi, backslash),
        ),
        control: bits(
            _mm256_cmpeq_epi8(_mm256_min_epu8(lo, max_control), lo),
            _mm256_cmpeq_epi8(_mm256_min_epu8(hi, max_control), hi),
        ),
    }
}
