//! Duplicate member detection (WIRE-014, WIRE-021, PROFILE §2a).
//!
//! Owns the question "do two names of one object decode to the same bytes?", asked once per
//! object when it closes, over the names the parser collected in the same pass. Names are
//! compared after unescaping, byte for byte, so `"é"`, `"\u00e9"` and `"\u00E9"` collide and
//! `"e\u0301"` does not.
//!
//! Each name gets a 64-bit fingerprint of its decoded bytes; only names with equal
//! fingerprints are compared byte for byte. Small objects compare fingerprints pairwise; larger
//! ones sort them. The fingerprint is not keyed, so an attacker can make names collide, but a
//! run of equal fingerprints is then sorted by its bytes: the worst case stays O(n log n)
//! comparisons and nothing degrades to quadratic. This module never builds the tape.

/// A member name as found by the parser: the raw body span and whether it has escapes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Name {
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) escaped: bool,
}

/// A name's fingerprint and where its decoded bytes live.
#[derive(Clone, Copy)]
struct Print {
    fp: u64,
    in_scratch: bool,
    start: u32,
    end: u32,
    /// Position of the name in its object, to report the later of two duplicates.
    order: u32,
}

/// Up to this many names, pairwise fingerprint comparison beats sorting.
const PAIRWISE_MAX: usize = 16;

/// Reused buffers for [`find_duplicate`].
#[derive(Default)]
pub(crate) struct Scratch {
    decoded: Vec<u8>,
    prints: Vec<Print>,
}

/// Fingerprint of decoded name bytes: length and content mixed a word at a time.
#[inline]
fn fingerprint(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(23) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// Up to this many names without escapes, compare spans directly: length first, then bytes.
const DIRECT_MAX: usize = 8;

/// Equality of two names of equal length; names up to 8 bytes (most of them: `type`,
/// `index`, `delta`) compare as one word instead of a call to `memcmp`.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() <= 8 && b.len() <= 8 {
        let word = |s: &[u8]| {
            let mut w = [0u8; 8];
            w[..s.len()].copy_from_slice(s);
            u64::from_le_bytes(w)
        };
        word(a) == word(b) && a.len() == b.len()
    } else {
        a == b
    }
}

/// The index (into `names`) of a name that repeats an earlier one, if any.
#[inline]
pub(crate) fn find_duplicate(input: &[u8], names: &[Name], scratch: &mut Scratch) -> Option<usize> {
    if names.len() < 2 {
        return None;
    }
    if names.len() <= DIRECT_MAX && !names.iter().any(|n| n.escaped) {
        let raw = |n: &Name| input.get(n.start as usize..n.end as usize).unwrap_or(&[]);
        for (i, a) in names.iter().enumerate().skip(1) {
            let len = a.end - a.start;
            for b in &names[..i] {
                if b.end - b.start == len && same_bytes(raw(a), raw(b)) {
                    return Some(i);
                }
            }
        }
        return None;
    }
    find_duplicate_by_fingerprint(input, names, scratch)
}

#[cold]
#[inline(never)]
fn find_duplicate_by_fingerprint(
    input: &[u8],
    names: &[Name],
    scratch: &mut Scratch,
) -> Option<usize> {
    scratch.decoded.clear();
    scratch.prints.clear();
    for (order, n) in names.iter().enumerate() {
        let raw = input.get(n.start as usize..n.end as usize).unwrap_or(&[]);
        let print = if n.escaped {
            let start = scratch.decoded.len();
            super::unescape::decode_into(raw, &mut scratch.decoded);
            let fp = fingerprint(scratch.decoded.get(start..).unwrap_or(&[]));
            Print {
                fp,
                in_scratch: true,
                start: start as u32,
                end: scratch.decoded.len() as u32,
                order: order as u32,
            }
        } else {
            Print {
                fp: fingerprint(raw),
                in_scratch: false,
                start: n.start,
                end: n.end,
                order: order as u32,
            }
        };
        scratch.prints.push(print);
    }
    let decoded = scratch.decoded.as_slice();
    let bytes = |p: &Print| {
        let src = if p.in_scratch { decoded } else { input };
        src.get(p.start as usize..p.end as usize).unwrap_or(&[])
    };
    let prints = &mut scratch.prints;

    if prints.len() <= PAIRWISE_MAX {
        for i in 1..prints.len() {
            for j in 0..i {
                if prints[i].fp == prints[j].fp && bytes(&prints[i]) == bytes(&prints[j]) {
                    return Some(i);
                }
            }
        }
        return None;
    }

    prints.sort_unstable_by_key(|p| p.fp);
    let mut first_dup: Option<usize> = None;
    let mut run_start = 0;
    while run_start < prints.len() {
        let fp = prints[run_start].fp;
        let run_len = prints[run_start..]
            .iter()
            .take_while(|p| p.fp == fp)
            .count();
        if run_len > 1 {
            let run = &mut prints[run_start..run_start + run_len];
            // Equal fingerprints: order by bytes (then position) so equal names are adjacent.
            run.sort_unstable_by(|a, b| bytes(a).cmp(bytes(b)).then(a.order.cmp(&b.order)));
            for w in run.windows(2) {
                if bytes(&w[0]) == bytes(&w[1]) {
                    let later = w[1].order as usize;
                    first_dup = Some(first_dup.map_or(later, |d| d.min(later)));
                }
            }
        }
        run_start += run_len;
    }
    first_dup
}
