//! SSE2 backend of the newline finder: 16-byte vectors, four per 64-byte block.
//!
//! Owns only the vector code; must never be reachable without the `sse2` check in [`ops`].
//! Reads stay inside the haystack: full vectors only where 16 bytes remain, an overlapping
//! load ending at the last byte for a short tail, and plain bytes when the haystack is
//! shorter than one vector.
#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m128i, _mm_add_epi64, _mm_cmpeq_epi8, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_movemask_epi8,
    _mm_or_si128, _mm_sad_epu8, _mm_set1_epi8, _mm_setzero_si128, _mm_srli_si128, _mm_sub_epi8,
};

use super::{scalar, Backend, Ops};

static OPS: Ops = Ops {
    backend: Backend::Sse2,
    find: find_entry,
    count: count_entry,
    next_mask: next_mask_entry,
};

/// The SSE2 table, when this CPU has SSE2 (every x86_64 CPU does; checked anyway).
pub(super) fn ops() -> Option<&'static Ops> {
    if std::is_x86_feature_detected!("sse2") {
        Some(&OPS)
    } else {
        None
    }
}

fn find_entry(hay: &[u8]) -> Option<usize> {
    // SAFETY: OPS is only handed out by `ops()` after SSE2 was detected.
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

/// LF bits of the 16 bytes at `hay[at..at + 16]`.
///
/// # Safety
/// The CPU must support SSE2 and `at + 16 <= hay.len()`.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn mask16(hay: &[u8], at: usize) -> u32 {
    debug_assert!(at + 16 <= hay.len());
    // SAFETY: the caller guarantees 16 readable bytes at `at`; loadu has no alignment need.
    let v = unsafe { _mm_loadu_si128(hay.as_ptr().add(at).cast::<__m128i>()) };
    _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8))) as u32
}

/// LF bits of the 64 bytes at `hay[at..at + 64]`.
///
/// # Safety
/// The CPU must support SSE2 and `at + 64 <= hay.len()`.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn mask64(hay: &[u8], at: usize) -> u64 {
    // SAFETY: four 16-byte loads inside the 64 bytes the caller guarantees.
    unsafe {
        u64::from(mask16(hay, at))
            | u64::from(mask16(hay, at + 16)) << 16
            | u64::from(mask16(hay, at + 32)) << 32
            | u64::from(mask16(hay, at + 48)) << 48
    }
}

/// LF bits of `hay[at..]`, fewer than 64 bytes.
///
/// # Safety
/// The CPU must support SSE2 and `at <= hay.len() < at + 64`.
#[target_feature(enable = "sse2")]
unsafe fn tail_mask(hay: &[u8], at: usize) -> u64 {
    let len = hay.len();
    if len < 16 {
        return scalar::mask64(hay.get(at..).unwrap_or_default());
    }
    let mut mask = 0u64;
    let mut i = at;
    while i + 16 <= len {
        // SAFETY: `i + 16 <= len`.
        mask |= u64::from(unsafe { mask16(hay, i) }) << (i - at);
        i += 16;
    }
    if i < len {
        // Overlapping load of the last 16 bytes; drop the bits before `i`.
        // SAFETY: `len >= 16`, so `len - 16 .. len` is in bounds.
        let last = unsafe { mask16(hay, len - 16) } >> (i - (len - 16));
        mask |= u64::from(last) << (i - at);
    }
    mask
}

/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
unsafe fn find(hay: &[u8]) -> Option<usize> {
    let len = hay.len();
    let nl = _mm_set1_epi8(b'\n' as i8);
    let ptr = hay.as_ptr();
    let mut i = 0;
    while i + 64 <= len {
        // SAFETY: `i + 64 <= len`: four loads inside the haystack.
        let (a, b, c, d) = unsafe {
            (
                _mm_loadu_si128(ptr.add(i).cast::<__m128i>()),
                _mm_loadu_si128(ptr.add(i + 16).cast::<__m128i>()),
                _mm_loadu_si128(ptr.add(i + 32).cast::<__m128i>()),
                _mm_loadu_si128(ptr.add(i + 48).cast::<__m128i>()),
            )
        };
        let any = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(a, nl), _mm_cmpeq_epi8(b, nl)),
            _mm_or_si128(_mm_cmpeq_epi8(c, nl), _mm_cmpeq_epi8(d, nl)),
        );
        if _mm_movemask_epi8(any) != 0 {
            // SAFETY: `i + 64 <= len`.
            let m = unsafe { mask64(hay, i) };
            return Some(i + m.trailing_zeros() as usize);
        }
        i += 64;
    }
    // SAFETY: `i <= len < i + 64`.
    let m = unsafe { tail_mask(hay, i) };
    (m != 0).then(|| i + m.trailing_zeros() as usize)
}

/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
unsafe fn count(hay: &[u8]) -> usize {
    let len = hay.len();
    let nl = _mm_set1_epi8(b'\n' as i8);
    let zero = _mm_setzero_si128();
    let ptr = hay.as_ptr();
    let mut total = _mm_setzero_si128();
    let mut i = 0;
    // Byte counters: subtracting an all-ones compare result adds one. A round adds at most
    // four to a lane, so 63 rounds (252) cannot wrap; then SAD sums them into 64-bit lanes.
    while i + 64 <= len {
        let rounds = ((len - i) / 64).min(63);
        let mut acc = _mm_setzero_si128();
        for _ in 0..rounds {
            // SAFETY: `rounds` blocks of 64 bytes fit before `len`.
            let (a, b, c, d) = unsafe {
                (
                    _mm_loadu_si128(ptr.add(i).cast::<__m128i>()),
                    _mm_loadu_si128(ptr.add(i + 16).cast::<__m128i>()),
                    _mm_loadu_si128(ptr.add(i + 32).cast::<__m128i>()),
                    _mm_loadu_si128(ptr.add(i + 48).cast::<__m128i>()),
                )
            };
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(a, nl));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(b, nl));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(c, nl));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(d, nl));
            i += 64;
        }
        total = _mm_add_epi64(total, _mm_sad_epu8(acc, zero));
    }
    let lanes = _mm_add_epi64(total, _mm_srli_si128::<8>(total));
    // SAFETY: `i <= len < i + 64`.
    let tail = unsafe { tail_mask(hay, i) };
    _mm_cvtsi128_si64(lanes) as usize + tail.count_ones() as usize
}

/// # Safety
/// The CPU must support SSE2, and `from <= hay.len()` (checked: a larger `from` finds nothing).
#[target_feature(enable = "sse2")]
unsafe fn next_mask(hay: &[u8], from: usize) -> (usize, u64) {
    let len = hay.len();
    let mut i = from;
    while i + 64 <= len {
        // SAFETY: `i + 64 <= len`.
        let m = unsafe { mask64(hay, i) };
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
