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
