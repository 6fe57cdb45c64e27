//! Lowercase hexadecimal: the one digit table, the spellers the layers above share (a
//! digest's 64 digits, a UUID's groups), and the reader of the canonical 64-digit form.
//!
//! Owns hex digits; never decides what a value means, and never allocates but the `String`
//! [`lower`] returns.

/// The lowercase hex digits, by value.
pub const LOWER: &[u8; 16] = b"0123456789abcdef";

/// `bytes` in lowercase hex, two digits a byte, most significant nibble first (the canonical
/// form of WIRE-017's `sha256` and of a route fingerprint).
pub fn lower(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(LOWER[usize::from(b >> 4)]));
        s.push(char::from(LOWER[usize::from(b & 0x0f)]));
    }
    s
}

/// The 32 bytes spelled by exactly 64 lowercase hex digits (the canonical form WIRE-018
/// declares for `sha256`, and a route fingerprint's); `None` for any other text.
pub fn parse32(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(b.chunks_exact(2)) {
        *o = (digit(pair[0])? << 4) | digit(pair[1])?;
    }
    Some(out)
}

/// `value`'s low `out.len()` hex digits, lowercase, most significant first.
pub fn spell(out: &mut [u8], mut value: u64) {
    for digit in out.iter_mut().rev() {
        *digit = LOWER[(value & 0xf) as usize];
        value >>= 4;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn lower_spells_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let expected: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(super::lower(&all), expected);
    }

    #[test]
    fn parse32_reads_only_the_canonical_form() {
        let bytes: [u8; 32] = std::array::from_fn(|i| (i * 37) as u8);
        let text = super::lower(&bytes);
        assert_eq!(super::parse32(&text), Some(bytes));
        assert_eq!(super::parse32(&text.to_uppercase()), None);
        assert_eq!(super::parse32(&text[..62]), None);
        assert_eq!(super::parse32(&format!("{text}00")), None);
        assert_eq!(super::parse32(&format!("g{}", &text[1..])), None);
    }

    #[test]
    fn spell_keeps_the_low_digits() {
        let mut out = [0u8; 5];
        super::spell(&mut out, 0xabc_def12);
        assert_eq!(&out, b"def12");
        super::spell(&mut out[..1], 0);
        assert_eq!(&out, b"0ef12");
    }
}
