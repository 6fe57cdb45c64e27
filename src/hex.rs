//! Lowercase hexadecimal: the one digit table, and the spellers the layers above share (a
//! digest's 64 digits, a UUID's groups).
//!
//! Owns spelling values as hex digits; never parses hex (each reader checks its own grammar)
//! and never allocates but the `String` it returns.

/// The lowercase hex digits, by value.
pub(crate) const LOWER: &[u8; 16] = b"0123456789abcdef";

/// `bytes` in lowercase hex, two digits a byte, most significant nibble first (the canonical
/// form of WIRE-017's `sha256` and of a route fingerprint).
#[cfg(any(feature = "attach", feature = "provider"))]
pub(crate) fn lower(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(LOWER[usize::from(b >> 4)]));
        s.push(char::from(LOWER[usize::from(b & 0x0f)]));
    }
    s
}

/// `value`'s low `out.len()` hex digits, lowercase, most significant first.
#[cfg(feature = "agent")]
pub(crate) fn spell(out: &mut [u8], mut value: u64) {
    for digit in out.iter_mut().rev() {
        *digit = LOWER[(value & 0xf) as usize];
        value >>= 4;
    }
}

#[cfg(test)]
mod tests {
    #[cfg(any(feature = "attach", feature = "provider"))]
    #[test]
    fn lower_spells_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let expected: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(super::lower(&all), expected);
    }

    #[cfg(feature = "agent")]
    #[test]
    fn spell_keeps_the_low_digits() {
        let mut out = [0u8; 5];
        super::spell(&mut out, 0xabc_def12);
        assert_eq!(&out, b"def12");
        super::spell(&mut out[..1], 0);
        assert_eq!(&out, b"0ef12");
    }
}
