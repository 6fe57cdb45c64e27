//! String-body scanning: find the next byte that ends the fast path inside a JSON string.
//!
//! Owns one question, asked once per string run: where is the next `"`, `\` or control byte
//! (`< 0x20`) at or after `from`? The answer drives the parser's string loop.
//!
//! SIMD backends (`x86`) are accelerated copies of [`scalar::find_special`]; the choice is made
//! at run time (AVX2 when the CPU has it, SSE2 otherwise on x86_64, scalar elsewhere) and every
//! backend is tested against the scalar twin on the same inputs. This module never decides
//! what a special byte *means*: the parser does.

pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

/// Which implementation answers [`find_special`]; exposed for differential tests and benches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Scalar,
    Sse2,
    Avx2,
}

impl Backend {
    /// Every backend this CPU can run, scalar first.
    pub fn available() -> Vec<Backend> {
        let mut all = vec![Backend::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            all.push(Backend::Sse2);
            if x86::has_avx2() {
                all.push(Backend::Avx2);
            }
        }
        all
    }

    /// The backend [`find_special`] uses on this CPU.
    pub fn selected() -> Backend {
        #[cfg(target_arch = "x86_64")]
        {
            if x86::has_avx2() {
                return Backend::Avx2;
            }
            Backend::Sse2
        }
        #[cfg(not(target_arch = "x86_64"))]
        Backend::Scalar
    }
}

/// Index of the first byte at or after `from` that is `"`, `\` or below 0x20; `hay.len()` when
/// there is none (or `from >= hay.len()`).
#[inline]
pub(crate) fn find_special(hay: &[u8], from: usize) -> usize {
    // Most JSON strings are short (member names, enum values): answer them with one inline
    // SWAR word before paying for a call into the vector loop.
    if let Some(chunk) = hay.get(from..from + 8) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = scalar::special_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return from + (mask.trailing_zeros() / 8) as usize;
        }
    }
    #[cfg(target_arch = "x86_64")]
    {
        x86::find_special(hay, from)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        scalar::find_special(hay, from)
    }
}

/// [`find_special`]'s first step alone: the first special byte among the 8 bytes at `from`, or
/// `None` when those 8 bytes hold none (or fewer than 8 remain).
#[inline]
pub(crate) fn find_special_short(hay: &[u8], from: usize) -> Option<usize> {
    let chunk = hay.get(from..from + 8)?;
    let mut word = [0u8; 8];
    word.copy_from_slice(chunk);
    let mask = scalar::special_mask(u64::from_le_bytes(word));
    (mask != 0).then(|| from + (mask.trailing_zeros() / 8) as usize)
}

/// The three masks the string walk needs for the 64 bytes at `at` (bit `k` ↔ `hay[at + k]`;
/// bytes past the end read as zero bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StringMasks {
    pub(crate) quote: u64,
    pub(crate) backslash: u64,
    /// Bytes below 0x20.
    pub(crate) control: u64,
}

#[inline]
pub(crate) fn string_masks(hay: &[u8], at: usize) -> StringMasks {
    #[cfg(target_arch = "x86_64")]
    {
        x86::string_masks(hay, at)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        scalar::string_masks(hay, at)
    }
}

/// [`string_masks`] through a named backend; a backend the CPU lacks falls back to scalar.
#[doc(hidden)]
pub fn string_masks_with(backend: Backend, hay: &[u8], at: usize) -> (u64, u64, u64) {
    let m = match backend {
        Backend::Scalar => scalar::string_masks(hay, at),
        #[cfg(target_arch = "x86_64")]
        Backend::Sse2 => x86::string_masks_sse2(hay, at),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => x86::string_masks_avx2(hay, at),
        #[allow(unreachable_patterns)]
        _ => scalar::string_masks(hay, at),
    };
    (m.quote, m.backslash, m.control)
}

/// [`find_special`] through a named backend; a backend the CPU lacks falls back to scalar.
#[doc(hidden)]
pub fn find_special_with(backend: Backend, hay: &[u8], from: usize) -> usize {
    match backend {
        Backend::Scalar => scalar::find_special(hay, from),
        #[cfg(target_arch = "x86_64")]
        Backend::Sse2 => x86::find_special_sse2(hay, from),
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 if x86::has_avx2() => x86::find_special_avx2(hay, from),
        #[allow(unreachable_patterns)]
        _ => scalar::find_special(hay, from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_all(hay: &[u8]) {
        for at in 0..=hay.len() + 1 {
            let want: u64 = (0..64)
                .filter(|&k| {
                    hay.get(at + k)
                        .is_some_and(|&c| c == b'"' || c == b'\\' || c < 0x20)
                })
                .map(|k| 1u64 << k)
                .sum();
            let masks = scalar::string_masks(hay, at);
            assert_eq!(masks.quote | masks.backslash | masks.control, want);
            for b in Backend::available() {
                let (q, bs, c) = string_masks_with(b, hay, at);
                assert_eq!(
                    StringMasks {
                        quote: q,
                        backslash: bs,
                        control: c
                    },
                    masks,
                    "string_masks {b:?} at {at}"
                );
            }
            assert_eq!(string_masks(hay, at), masks);
        }
        for from in 0..=hay.len() + 1 {
            let want = scalar::find_special(hay, from);
            for b in Backend::available() {
                assert_eq!(find_special_with(b, hay, from), want, "{b:?} from {from}");
            }
            assert_eq!(find_special(hay, from), want);
        }
    }

    #[test]
    fn every_special_at_every_offset_matches_scalar() {
        for special in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
            for len in [0usize, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100] {
                for at in 0..len {
                    let mut hay = vec![b'a'; len];
                    hay[at] = special;
                    check_all(&hay);
                }
            }
        }
    }

    #[test]
    fn high_bytes_and_boundary_values_are_not_special() {
        let hay: Vec<u8> = (0x20u8..=0xff)
            .filter(|&b| b != b'"' && b != b'\\')
            .collect();
        assert_eq!(scalar::find_special(&hay, 0), hay.len());
        check_all(&hay);
    }

    #[test]
    fn pseudo_random_inputs_match_scalar() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..300 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 200) as usize;
            let hay: Vec<u8> = (0..len)
                .map(|i| {
                    let r = x.rotate_left(i as u32 % 64) as u8;
                    if r.is_multiple_of(23) {
                        [b'"', b'\\', 0x01, 0x1f][(r as usize / 23) % 4]
                    } else {
                        0x20 | r
                    }
                })
                .collect();
            check_all(&hay);
        }
    }
}
