//! The scalar references for [`super::find_special`] (eight bytes at a time through a SWAR
//! test), [`super::StringMasks`] and the simple-escape bits (a byte at a time). Every SIMD backend must agree with them.

/// SWAR: a mask whose lowest set bit is the high bit of the first byte of `w` (little-endian)
/// that is `"` or `\` or below 0x20; zero when there is none. Borrows can set bits above the
/// first hit, never below it, so only the lowest bit is exact.
#[inline]
pub(crate) fn special_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = has_zero(w ^ (ONES * b'"' as u64));
    let backslash = has_zero(w ^ (ONES * b'\\' as u64));
    // A byte below 0x20 borrows when 0x20 is subtracted; bytes >= 0x80 are excluded by `!w`.
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    quote | backslash | control
}

#[inline]
fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// See [`super::find_special`].
pub(crate) fn find_special(hay: &[u8], from: usize) -> usize {
    let mut i = from.min(hay.len());
    while let Some(chunk) = hay.get(i..i + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = special_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = hay.get(i) {
        if is_special(b) {
            return i;
        }
        i += 1;
    }
    hay.len()
}

/// See [`super::string_masks`].
pub(crate) fn string_masks(hay: &[u8], at: usize) -> super::StringMasks {
    let mut m = super::StringMasks {
        quote: 0,
        backslash: 0,
        control: 0,
        high: 0,
    };
    for (k, &b) in hay.get(at..).unwrap_or(&[]).iter().take(64).enumerate() {
        let bit = 1u64 << k;
        match b {
            b'"' => m.quote |= bit,
            b'\\' => m.backslash |= bit,
            0..=0x1f => m.control |= bit,
            0x80..=0xff => m.high |= bit,
            _ => {}
        }
    }
    m
}

/// See [`super::simple_escapes_with`]: the bits of the bytes at `at..at + 64` that are in
/// [`super::SIMPLE_ESCAPES`] (bytes past the end are in no class).
pub(crate) fn simple_escapes(hay: &[u8], at: usize) -> u64 {
    let mut m = 0;
    for (k, b) in hay.get(at..).unwrap_or(&[]).iter().take(64).enumerate() {
        if super::SIMPLE_ESCAPES.contains(b) {
            m |= 1u64 << k;
        }
    }
    m
}

/// JSON whitespace (RFC 8259 §2: space, tab, LF, CR).
#[inline(always)]
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The whitespace bits of the 64 bytes at `at` (bytes past the end are not whitespace): the
/// reference for the vector backends' window bits.
#[cfg(test)]
pub(crate) fn space_mask(hay: &[u8], at: usize) -> u64 {
    let mut m = 0;
    for (k, &b) in hay.get(at..).unwrap_or(&[]).iter().take(64).enumerate() {
        if is_space(b) {
            m |= 1u64 << k;
        }
    }
    m
}

/// See [`super::Kernel::space_run`]: the first byte at or after `i` that is not JSON
/// whitespace (`b.len()` if none). Runs are mostly indentation, so the first byte that is not
/// a space is found eight bytes at a time (an exact per-byte SWAR test, no carries between
/// bytes); a tab, CR or LF there is skipped and the search goes on.
#[inline(never)]
pub(crate) fn skip_space(b: &[u8], mut i: usize) -> usize {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const SPACES: u64 = 0x2020_2020_2020_2020;
    loop {
        while let Some(chunk) = b.get(i..i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let t = u64::from_le_bytes(word) ^ SPACES;
            // The high bit of every byte that is not a space.
            let other = (((t & LOW7) + LOW7) | t) & HIGH;
            if other != 0 {
                i += (other.trailing_zeros() / 8) as usize;
                break;
            }
            i += 8;
        }
        match b.get(i) {
            Some(&c) if is_space(c) => i += 1,
            _ => return i.min(b.len()),
        }
    }
}
