//! The scalar reference for [`super::find_special`]: a table lookup per byte, eight bytes at a
//! time through a SWAR test. Every SIMD backend must agree with it.

/// SWAR: does any byte of `w` equal `"` or `\`, or lie below 0x20?
#[inline]
fn has_special(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = has_zero(w ^ (ONES * b'"' as u64));
    let backslash = has_zero(w ^ (ONES * b'\\' as u64));
    // A byte below 0x20 borrows when 0x20 is subtracted; bytes >= 0x80 are excluded by `!w`.
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    (quote | backslash | control) != 0
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
        if has_special(u64::from_le_bytes(word)) {
            break;
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
