//! Duplicate member detection (WIRE-014, WIRE-021, PROFILE §2a).
//!
//! Owns the question "do two names of one object decode to the same bytes?", asked once per
//! object when it closes, over the names the parser collected in the same pass. Names are
//! compared after unescaping, byte for byte, so `"é"`, `"\u00e9"` and `"\u00E9"` collide and
//! `"e\u0301"` does not. Small objects compare pairwise; large ones sort, so a million
//! members cost O(n log n) and no attacker-chosen hash can be flooded. This module never
//! builds the tape.

/// A member name as found by the parser: the raw body span and whether it has escapes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Name {
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) escaped: bool,
}

/// Where a resolved name's decoded bytes live.
#[derive(Clone, Copy)]
struct Resolved {
    in_scratch: bool,
    start: u32,
    end: u32,
    /// Position of the name in the object, to report the later of two duplicates.
    order: u32,
}

/// Up to this many names, pairwise comparison beats sorting.
const PAIRWISE_MAX: usize = 16;

/// Reused buffers for [`find_duplicate`].
#[derive(Default)]
pub(crate) struct Scratch {
    decoded: Vec<u8>,
    resolved: Vec<Resolved>,
}

/// The index (into `names`) of a name that repeats an earlier one, if any.
pub(crate) fn find_duplicate(input: &[u8], names: &[Name], scratch: &mut Scratch) -> Option<usize> {
    if names.len() < 2 {
        return None;
    }
    let raw = |n: &Name| input.get(n.start as usize..n.end as usize).unwrap_or(&[]);
    if names.len() <= PAIRWISE_MAX && !names.iter().any(|n| n.escaped) {
        for (i, a) in names.iter().enumerate().skip(1) {
            let a_raw = raw(a);
            for b in &names[..i] {
                if b.end - b.start == a.end - a.start && raw(b) == a_raw {
                    return Some(i);
                }
            }
        }
        return None;
    }

    scratch.decoded.clear();
    scratch.resolved.clear();
    for (order, n) in names.iter().enumerate() {
        let r = if n.escaped {
            let start = scratch.decoded.len() as u32;
            super::unescape::decode_into(raw(n), &mut scratch.decoded);
            Resolved { in_scratch: true, start, end: scratch.decoded.len() as u32, order: order as u32 }
        } else {
            Resolved { in_scratch: false, start: n.start, end: n.end, order: order as u32 }
        };
        scratch.resolved.push(r);
    }
    let decoded = &scratch.decoded;
    let bytes = |r: &Resolved| {
        let src = if r.in_scratch { decoded.as_slice() } else { input };
        src.get(r.start as usize..r.end as usize).unwrap_or(&[])
    };
    let resolved = &mut scratch.resolved;
    if resolved.len() <= PAIRWISE_MAX {
        for i in 1..resolved.len() {
            for j in 0..i {
                if bytes(&resolved[i]) == bytes(&resolved[j]) {
                    return Some(i);
                }
            }
        }
        return None;
    }
    resolved.sort_unstable_by(|a, b| bytes(a).cmp(bytes(b)).then(a.order.cmp(&b.order)));
    resolved
        .windows(2)
        .filter(|w| bytes(&w[0]) == bytes(&w[1]))
        .map(|w| w[1].order as usize)
        .min()
}
