//! Our own newline finder: the one place the crate searches bytes for LF.
//!
//! Owns the run-time choice of backend (AVX-512BW, AVX2 or SSE2 on x86_64, each in its own
//! module; the safe SWAR `scalar` twin everywhere else), made once and cached, and the
//! block-bitmask iteration that turns one 64-byte comparison into up to 64 line ends.
//! It must never know what a line means (blank lines, limits, JSON): that is `reader`'s job.
//!
//! Every backend implements the same three operations (`Ops`) and is tested against the
//! scalar twin and against `memchr` (`tests/codec/frame_split.rs`, `fuzzing::frame::splitter`).
//!
//! Soundness of the dispatch: an ISA module hands out its `Ops` table only from a
//! constructor that has just checked the CPU features it needs, so holding a [`Splitter`]
//! is proof that its backend may run on this CPU.

use std::iter::FusedIterator;
use std::sync::OnceLock;

mod scalar;

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
#[cfg(target_arch = "x86_64")]
mod sse2;

/// One implementation of the newline search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// SWAR over `u64` words; safe code, every target.
    Scalar,
    /// 16-byte vectors; x86_64 baseline.
    Sse2,
    /// 32-byte vectors; x86_64 with AVX2 (and POPCNT).
    Avx2,
    /// 64-byte vectors with mask registers; x86_64 with AVX-512BW (and POPCNT).
    Avx512,
}

impl Backend {
    /// Every backend, fastest first.
    pub const ALL: [Backend; 4] = [
        Backend::Avx512,
        Backend::Avx2,
        Backend::Sse2,
        Backend::Scalar,
    ];

    /// The backend's short name (`"avx512bw"`, `"avx2"`, `"sse2"`, `"scalar"`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Sse2 => "sse2",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512bw",
        }
    }
}

/// The operations one backend provides. Private to `split`: a table is only reachable
/// through a [`Splitter`], which is only built after feature detection.
pub(crate) struct Ops {
    backend: Backend,
    /// Index of the first LF in the haystack.
    find: fn(&[u8]) -> Option<usize>,
    /// Number of LF bytes in the haystack.
    count: fn(&[u8]) -> usize,
    /// `next_mask(hay, from)` with `from <= hay.len()` returns `(base, mask)`:
    /// `mask == 0` means `hay[from..]` holds no LF (and `base == hay.len()`); otherwise
    /// `from <= base`, `hay[from..base]` holds no LF, `mask != 0`, and bit `i` of `mask` is
    /// set iff `base + i < hay.len()` and `hay[base + i] == b'\n'`, for every `i < 64`.
    next_mask: fn(&[u8], usize) -> (usize, u64),
}

/// A handle to one backend that this CPU supports. `Copy`, cheap to pass around.
#[derive(Clone, Copy)]
pub struct Splitter {
    ops: &'static Ops,
}

impl std::fmt::Debug for Splitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Splitter").field(&self.ops.backend).finish()
    }
}

static DETECTED: OnceLock<Splitter> = OnceLock::new();

impl Splitter {
    /// The fastest backend this CPU supports, detected on first use and cached.
    pub fn detect() -> Splitter {
        *DETECTED.get_or_init(|| {
            Backend::ALL
                .into_iter()
                .find_map(Splitter::for_backend)
                .unwrap_or(Splitter { ops: &scalar::OPS })
        })
    }

    /// The given backend, or `None` when this CPU (or target) cannot run it.
    pub fn for_backend(backend: Backend) -> Option<Splitter> {
        let ops: Option<&'static Ops> = match backend {
            Backend::Scalar => Some(&scalar::OPS),
            #[cfg(target_arch = "x86_64")]
            Backend::Sse2 => sse2::ops(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx2 => avx2::ops(),
            #[cfg(target_arch = "x86_64")]
            Backend::Avx512 => avx512::ops(),
            #[cfg(not(target_arch = "x86_64"))]
            _ => None,
        };
        ops.map(|ops| Splitter { ops })
    }

    /// Every backend this CPU supports, fastest first (always ends with the scalar twin).
    pub fn available() -> Vec<Splitter> {
        Backend::ALL
            .into_iter()
            .filter_map(Splitter::for_backend)
            .collect()
    }

    /// Which backend this handle runs.
    pub fn backend(self) -> Backend {
        self.ops.backend
    }

    /// Index of the first LF in `hay`.
    #[inline]
    pub fn find(self, hay: &[u8]) -> Option<usize> {
        (self.ops.find)(hay)
    }

    /// Number of LF bytes in `hay`.
    #[inline]
    pub fn count(self, hay: &[u8]) -> usize {
        (self.ops.count)(hay)
    }

    /// The positions of every LF in `hay`, in order.
    #[inline]
    pub fn newlines(self, hay: &[u8]) -> Newlines<'_> {
        Newlines {
            splitter: self,
            hay,
            cursor: Cursor::default(),
        }
    }

    /// Appends the position of every LF in `hay` to `out`.
    pub fn newline_positions(self, hay: &[u8], out: &mut Vec<usize>) {
        out.extend(self.newlines(hay));
    }
}

/// Index of the first LF in `hay`, with the detected backend.
#[inline]
pub fn find_newline(hay: &[u8]) -> Option<usize> {
    Splitter::detect().find(hay)
}

/// Number of LF bytes in `hay`, with the detected backend.
#[inline]
pub fn count_newlines(hay: &[u8]) -> usize {
    Splitter::detect().count(hay)
}

/// The positions of every LF in `hay`, in order, with the detected backend.
#[inline]
pub fn newlines(hay: &[u8]) -> Newlines<'_> {
    Splitter::detect().newlines(hay)
}

/// Appends the position of every LF in `hay` to `out`, with the detected backend.
pub fn newline_positions(hay: &[u8], out: &mut Vec<usize>) {
    Splitter::detect().newline_positions(hay, out);
}

/// The name of the backend chosen for this CPU (e.g. `"avx512bw"`).
pub fn backend_name() -> &'static str {
    Splitter::detect().backend().name()
}

/// Runs `find` on an explicit backend; `None` when the CPU cannot run it. For tests.
#[doc(hidden)]
pub fn find_newline_with(backend: Backend, hay: &[u8]) -> Option<Option<usize>> {
    Splitter::for_backend(backend).map(|s| s.find(hay))
}

/// Iteration state over one haystack that does not borrow it, so the reader can keep it
/// next to the chunk it owns. Yields every LF position at or after where it started.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Cursor {
    /// Start of the block `mask` describes.
    base: usize,
    /// LF bits of the current block not yet yielded.
    mask: u64,
    /// Where the next block search starts.
    next_from: usize,
}

impl Cursor {
    /// The next LF position in `hay`; `hay` must be the same slice on every call.
    #[inline]
    pub(crate) fn next(&mut self, splitter: Splitter, hay: &[u8]) -> Option<usize> {
        if self.mask == 0 {
            if self.next_from >= hay.len() {
                return None;
            }
            let (base, mask) = (splitter.ops.next_mask)(hay, self.next_from);
            if mask == 0 {
                self.next_from = hay.len();
                return None;
            }
            self.base = base;
            self.mask = mask;
            self.next_from = base.saturating_add(64);
        }
        let bit = self.mask.trailing_zeros() as usize;
        self.mask &= self.mask - 1;
        Some(self.base + bit)
    }
}

/// Iterator over the LF positions of one haystack (see [`Splitter::newlines`]).
///
/// Each backend call compares a whole 64-byte block and returns its bitmask; the iterator
/// then yields the set bits without calling back into the backend, which is where it beats
/// `memchr_iter` on short lines. `Debug` shows the haystack's length, never its bytes.
#[derive(Clone)]
pub struct Newlines<'a> {
    splitter: Splitter,
    hay: &'a [u8],
    cursor: Cursor,
}

impl std::fmt::Debug for Newlines<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Newlines")
            .field("backend", &self.splitter.backend())
            .field("hay_len", &self.hay.len())
            .field("cursor", &self.cursor)
            .finish()
    }
}

impl Iterator for Newlines<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        self.cursor.next(self.splitter, self.hay)
    }
}

impl FusedIterator for Newlines<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_is_always_available_and_last() {
        let all = Splitter::available();
        assert_eq!(all.last().map(|s| s.backend()), Some(Backend::Scalar));
        assert_eq!(Splitter::detect().backend(), all[0].backend());
        assert_eq!(backend_name(), all[0].backend().name());
    }

    #[test]
    fn cursor_yields_each_position_once() {
        let hay = b"a\nbb\n\n\nccc\n";
        for s in Splitter::available() {
            let got: Vec<usize> = s.newlines(hay).collect();
            assert_eq!(got, vec![1, 4, 5, 6, 10], "{:?}", s.backend());
            let mut c = Cursor::default();
            for want in [1, 4, 5, 6, 10] {
                assert_eq!(c.next(s, hay), Some(want));
            }
            assert_eq!(c.next(s, hay), None);
            assert_eq!(c.next(s, hay), None);
        }
    }
}
