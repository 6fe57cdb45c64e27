//! The scalar twin of the SIMD newline finder: SWAR over `u64` words, safe code only.
//!
//! Owns the reference behaviour every ISA backend is tested against, and is the backend on
//! targets other than x86_64. Must never use `unsafe` or read outside the haystack.

use super::{Backend, Ops};

/// The backend table for the scalar twin; available on every target.
pub(super) static OPS: Ops = Ops {
    backend: Backend::Scalar,
    find,
    count,
    next_mask,
};

const LF: u64 = 0x0a0a_0a0a_0a0a_0a0a;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
const HIGH: u64 = 0x8080_8080_8080_8080;
/// Gathers the bits at positions 0, 8, .., 56 into the top byte (see `gather`).
const GATHER: u64 = 0x0102_0408_1020_4080;

/// The high bit of each byte of the result is set exactly where `word` holds an LF byte.
///
/// Exact per byte (no borrow between lanes), unlike the classic `(x - 0x01..) & !x` test,
/// so it can be used for counting and masks, not only for the first match.
#[inline]
fn lf_high_bits(word: u64) -> u64 {
    let x = word ^ LF;
    !(((x & LOW7).wrapping_add(LOW7)) | x) & HIGH
}

/// Turns the per-byte high bits of `lf_high_bits` into an 8-bit mask (bit i = byte i).
///
/// Each bit 8k, multiplied by the bit 7(7-k)+7 of `GATHER`, lands at 56+k; the other
/// partial products land at distinct positions below 56 or above 63, so nothing carries.
#[inline]
fn gather(high_bits: u64) -> u64 {
    ((high_bits >> 7).wrapping_mul(GATHER)) >> 56
}

#[inline]
fn word_at(chunk: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(chunk);
    u64::from_le_bytes(bytes)
}

/// Index of the first LF in `hay`.
pub(super) fn find(hay: &[u8]) -> Option<usize> {
    let mut words = hay.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut words {
        let hits = lf_high_bits(word_at(chunk));
        if hits != 0 {
            return Some(offset + (hits.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&b| b == b'\n')
        .map(|i| offset + i)
}

/// Number of LF bytes in `hay`.
pub(super) fn count(hay: &[u8]) -> usize {
    let mut words = hay.chunks_exact(8);
    let mut total = 0usize;
    for chunk in &mut words {
        total += lf_high_bits(word_at(chunk)).count_ones() as usize;
    }
    total + words.remainder().iter().filter(|&&b| b == b'\n').count()
}

/// Bit i set iff `block[i]` is LF, for a block of at most 64 bytes.
pub(super) fn mask64(block: &[u8]) -> u64 {
    let mut mask = 0u64;
    let mut words = block.chunks_exact(8);
    let mut shift = 0;
    for chunk in &mut words {
        mask |= gather(lf_high_bits(word_at(chunk))) << shift;
        shift += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b == b'\n' {
            mask |= 1 << (shift + i);
        }
    }
    mask
}

/// See [`Ops::next_mask`]: the block starts at the first LF at or after `from`.
pub(super) fn next_mask(hay: &[u8], from: usize) -> (usize, u64) {
    let rest = hay.get(from..).unwrap_or_default();
    match find(rest) {
        None => (hay.len(), 0),
        Some(i) => {
            let base = from + i;
            let end = hay.len().min(base + 64);
            (base, mask64(hay.get(base..end).unwrap_or_default()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gather_is_exact_for_every_byte_pattern() {
        for pattern in 0u32..256 {
            let mut bytes = [b'a'; 8];
            for (i, b) in bytes.iter_mut().enumerate() {
                if pattern & (1 << i) != 0 {
                    *b = b'\n';
                }
            }
            assert_eq!(mask64(&bytes), u64::from(pattern), "pattern {pattern:08b}");
            assert_eq!(count(&bytes), pattern.count_ones() as usize);
        }
    }

    #[test]
    fn neighbours_of_lf_are_not_matched() {
        // 0x0b and 0x09 differ from LF in one bit; 0x8a has the high bit set.
        for b in [0x09u8, 0x0b, 0x8a, 0x0e, 0x02, 0xff, 0x00] {
            let bytes = [b; 16];
            assert_eq!(find(&bytes), None, "byte {b:#x}");
            assert_eq!(count(&bytes), 0);
            assert_eq!(mask64(&bytes), 0);
        }
    }

    #[test]
    fn next_mask_starts_at_first_lf() {
        let mut hay = vec![b'x'; 200];
        hay[70] = b'\n';
        hay[71] = b'\n';
        hay[133] = b'\n';
        hay[134] = b'\n';
        // The block runs from the first LF for 64 bytes: 70..134 holds 70, 71 and 133.
        assert_eq!(next_mask(&hay, 0), (70, 0b11 | 1 << 63));
        assert_eq!(next_mask(&hay, 72), (133, 0b11));
        assert_eq!(next_mask(&hay, 135), (200, 0));
        assert_eq!(next_mask(&hay, 200), (200, 0));
    }
}
