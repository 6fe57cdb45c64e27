//! Duplicate member detection (WIRE-014, WIRE-021, PROFILE §2a).
//!
//! Owns the question "do two names of one object decode to the same bytes?", answered once per
//! object when it closes. Names are compared after unescaping, byte for byte, so `"é"`,
//! `"\u00e9"` and `"\u00E9"` collide and `"e\u0301"` does not.
//!
//! The parser gives each name a 64-bit [`key`] as it reads it (a plain name of at most 8 bytes,
//! most of them, is its own word: one load and a mask; up to 32 bytes, a mix of two or four
//! words) and adds it to the object's [`NameFilter`]; an object whose filter saw no two keys
//! share a bit is done at its close with no further work. Otherwise, keys that all differ
//! settle the question (pairwise without branches up to 16 members, in a hash set with a probe limit up to 1024,
//! sorted beyond); only equal keys lead to the exact check, [`find_duplicate`], over names
//! rebuilt from the tape: a 64-bit fingerprint of each decoded name, and byte comparison of
//! equal fingerprints (pairwise for small objects, sorted for larger ones). Neither keys nor
//! fingerprints are keyed, so an attacker can make names collide, but a run of equal
//! fingerprints is then sorted by its bytes: the worst case stays O(n log n) comparisons and
//! nothing degrades to quadratic. This module never builds the tape.

/// A one-hash Bloom filter over the keys of one open object (64 bits, one per key's hash):
/// the parser adds each name's [`key`] as it reads it, with no branch. Equal keys set the same
/// bit, so an object whose keys set as many bits as it has keys holds no two equal keys and
/// needs no check at its close; fewer bits (equal keys, or unequal ones sharing a bit: about 5 % of
/// three-member objects, 15 % of five-member ones, nearly every object of 20 members or more)
/// sends the object to [`keys_differ`] as before. It only ever asks for the check, so what the
/// parser accepts, its errors and their offsets do not depend on it.
///
/// Measured (`benches/peers` `decode_once`, medians of 7 alternating runs against the parser
/// without it): `stream_event` lines 12.6 % and the realistic agent stream 6.2 % less CPU,
/// twitter.json, citm_catalog.json and canada.json within 1.5 % (twitter's objects of 20 to 40
/// members always reach the check). With `keys_differ` still inlined into the grammar the filter made it slower:
/// the gain is that code leaving the grammar's loop, not the comparisons it skips.
#[derive(Clone, Copy, Default)]
pub(crate) struct NameFilter {
    seen: u64,
}

impl NameFilter {
    /// Adds one member's key.
    #[inline(always)]
    pub(crate) fn add(&mut self, key: u64) {
        self.seen |= filter_bit(key);
    }

    /// Whether two of the `count` keys added may be equal: they set fewer than `count` bits
    /// (if not, each set its own bit, so they all differ).
    #[inline(always)]
    pub(crate) fn may_repeat(&self, count: usize) -> bool {
        self.seen.count_ones() as usize != count
    }
}

/// The filter bit of a key: the top six bits of a multiplicative hash (every key bit moves
/// them, so names that differ in one byte rarely share a bit).
#[inline(always)]
const fn filter_bit(key: u64) -> u64 {
    1u64 << (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)
}

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

/// Reused buffers for keys and [`find_duplicate`].
#[derive(Default)]
pub(crate) struct Scratch {
    decoded: Vec<u8>,
    prints: Vec<Print>,
    keys: Vec<u64>,
    /// The open-addressing set of [`keys_differ_hashed`].
    table: Vec<u64>,
    /// The names of the object under the exact check (rebuilt from the tape).
    pub(crate) names: Vec<Name>,
    /// Key lists [`keys_differ`] proved distinct, one per slot ([`proven_slot`]), kept across
    /// objects and documents.
    proven: [Vec<u64>; PROVEN_SLOTS],
}

/// Slots of remembered key lists, so that objects of different shapes that nest or alternate
/// (twitter.json's users inside statuses of three shapes) do not evict each other.
const PROVEN_SLOTS: usize = 8;

/// The slot of a key list: a hash of its length and last key.
#[inline]
fn proven_slot(keys: &[u64]) -> usize {
    let last = keys.last().copied().unwrap_or(0);
    let bits = PROVEN_SLOTS.trailing_zeros();
    ((last ^ keys.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// The longest key list remembered: the slots of one parser hold at most 16 KiB (a host keeps
/// a parser per agent), and objects of more members rarely repeat a shape.
const PROVEN_MAX: usize = 256;

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

/// A word with the low `len` bytes of `w` (`len <= 8`).
#[inline(always)]
fn low_bytes(w: u64, len: usize) -> u64 {
    if len >= 8 {
        w
    } else {
        w & ((1u64 << (8 * len)) - 1)
    }
}

/// The 8 bytes at `bytes[at..]` as a little-endian word (0 when fewer remain).
#[inline(always)]
pub(crate) fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(chunk) = bytes.get(at..at + 8) {
        w.copy_from_slice(chunk);
    }
    u64::from_le_bytes(w)
}

/// The key of a 9- to 16-byte name from its first and last 8 bytes.
#[inline(always)]
fn mix16(first: u64, last: u64, len: usize) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    ((first.wrapping_mul(K).rotate_left(29) ^ last).wrapping_mul(K) ^ len as u64) | (1 << 63)
}

/// The key of a 17- to 32-byte name from its first 16 and last 16 bytes (four words, the
/// middle ones overlapping for names under 32 bytes).
#[inline(always)]
fn mix32(w0: u64, w1: u64, w2: u64, w3: u64, len: usize) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let h = (w0.wrapping_mul(K).rotate_left(29) ^ w1).wrapping_mul(K);
    let h = (h.rotate_left(29) ^ w2).wrapping_mul(K);
    ((h.rotate_left(29) ^ w3).wrapping_mul(K) ^ len as u64) | (1 << 63)
}

/// The duplicate-detection key of decoded name bytes: names of at most 8 bytes are their own
/// zero-padded word (exact: a raw name holds no NUL, and a decoded `\u0000` only makes a
/// false collision, which the exact check settles); longer names a 64-bit mix (of two words
/// up to 16 bytes, four up to 32, all bytes beyond). Equal names have equal keys, so unequal
/// keys prove unequal names.
#[inline]
fn key_of(bytes: &[u8]) -> u64 {
    match bytes.len() {
        0..=8 => {
            let mut w = [0u8; 8];
            w[..bytes.len()].copy_from_slice(bytes);
            u64::from_le_bytes(w)
        }
        n @ 9..=16 => mix16(word_at(bytes, 0), word_at(bytes, n - 8), n),
        n @ 17..=32 => mix32(
            word_at(bytes, 0),
            word_at(bytes, 8),
            word_at(bytes, n - 16),
            word_at(bytes, n - 8),
            n,
        ),
        _ => fingerprint(bytes) | (1 << 63),
    }
}

/// The key of the name whose raw body is `input[start..end]` (see [`key_of`]). A plain name
/// of at most 8 bytes is one load and a mask, up to 32 bytes two or four loads and a mix; an
/// escaped one is decoded into `scratch` first.
#[inline(always)]
pub(crate) fn key(
    input: &[u8],
    start: usize,
    end: usize,
    escaped: bool,
    scratch: &mut Scratch,
) -> u64 {
    let len = end.wrapping_sub(start);
    if !escaped && len <= 8 && start + 8 <= input.len() {
        // Most names: one load and a mask.
        return low_bytes(word_at(input, start), len);
    }
    if !escaped && len <= 16 && start + 16 <= input.len() {
        return mix16(word_at(input, start), word_at(input, end - 8), len);
    }
    if !escaped && len > 16 && len <= 32 && start + 32 <= input.len() {
        // 17 to 32 bytes (shorter names near the end of the input take the slow path).
        return mix32(
            word_at(input, start),
            word_at(input, start + 8),
            word_at(input, end - 16),
            word_at(input, end - 8),
            len,
        );
    }
    key_slow(input, start, end, escaped, scratch)
}

#[inline(never)]
fn key_slow(input: &[u8], start: usize, end: usize, escaped: bool, scratch: &mut Scratch) -> u64 {
    let raw = input.get(start..end).unwrap_or(&[]);
    if !escaped {
        return key_of(raw);
    }
    scratch.decoded.clear();
    super::unescape::decode_into(raw, &mut scratch.decoded);
    key_of(&scratch.decoded)
}

/// Up to this many members, keys are compared pairwise (without early exits); more go to a
/// hash set (up to [`HASHED_MAX`]) or are sorted.
const PAIRWISE_MAX: usize = 16;

/// Up to this many members, keys go into an open-addressing hash set; more are sorted.
const HASHED_MAX: usize = 1024;

/// A key that needs more probes than this sends the object to the sorted check, so keys
/// crafted to collide cost at most this many probes each plus one sort: never quadratic.
const MAX_PROBES: u32 = 8;

/// Whether all `keys` differ, which proves the names differ. `false` only means "maybe": the
/// caller then runs the exact check ([`find_duplicate`]). Out of line: the parser asks only for
/// objects its [`NameFilter`] flagged, and inlined its branches cost the grammar registers.
#[inline(never)]
pub(crate) fn keys_differ(keys: &[u64], scratch: &mut Scratch) -> bool {
    match *keys {
        [] | [_] => true,
        // The sizes of most agent-stream objects, every pair written out (no loop).
        [a, b] => a != b,
        [a, b, c] => (a != b) & (a != c) & (b != c),
        [a, b, c, d] => (a != b) & (a != c) & (a != d) & (b != c) & (b != d) & (c != d),
        [a, b, c, d, e] => {
            (a != b)
                & (a != c)
                & (a != d)
                & (a != e)
                & (b != c)
                & (b != d)
                & (b != e)
                & (c != d)
                & (c != e)
                & (d != e)
        }
        _ => {
            // Objects of one shape repeat (the records of a stream, the users of a timeline):
            // keys equal one by one to a list already proved distinct are distinct too.
            let slot = proven_slot(keys);
            if scratch.proven[slot][..] == *keys {
                return true;
            }
            let differ = if keys.len() <= PAIRWISE_MAX {
                keys_differ_pairwise(keys)
            } else if keys.len() <= HASHED_MAX {
                keys_differ_hashed(keys, scratch)
            } else {
                keys_differ_sorted(keys, scratch)
            };
            if differ && keys.len() <= PROVEN_MAX {
                let proven = &mut scratch.proven[slot];
                proven.clear();
                proven.extend_from_slice(keys);
            }
            differ
        }
    }
}

/// [`keys_differ`] for 6 to [`PAIRWISE_MAX`] keys: every pair, without early exits.
#[inline]
fn keys_differ_pairwise(keys: &[u64]) -> bool {
    let mut same = false;
    for i in 1..keys.len() {
        let k = keys[i];
        same |= keys[..i]
            .iter()
            .fold(false, |acc, &other| acc | (other == k));
    }
    !same
}

/// [`keys_differ`] for 17 to [`HASHED_MAX`] keys: an open-addressing set with at least twice
/// as many slots as keys (linear probing; zero marks an empty slot, so the key 0, the empty
/// name, is tracked apart). A key found in the set is a possible duplicate. O(n) where
/// sorting was O(n log n) with a larger constant (objects of 20–60 members: twitter.json's
/// users, citm_catalog's maps); a probe run longer than [`MAX_PROBES`] falls back to sorting.
#[inline(never)]
fn keys_differ_hashed(keys: &[u64], scratch: &mut Scratch) -> bool {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let bits = (keys.len() * 2).next_power_of_two().trailing_zeros().max(5);
    let mask = (1usize << bits) - 1;
    let table = &mut scratch.table;
    table.clear();
    table.resize(mask + 1, 0);
    let mut zero_seen = false;
    let mut crowded = false;
    'keys: for &k in keys {
        if k == 0 {
            if zero_seen {
                return false;
            }
            zero_seen = true;
            continue;
        }
        let mut h = ((k ^ (k >> 29)).wrapping_mul(K) >> (64 - bits)) as usize;
        for _ in 0..MAX_PROBES {
            let Some(slot) = table.get_mut(h & mask) else {
                break;
            };
            if *slot == 0 {
                *slot = k;
                continue 'keys;
            }
            if *slot == k {
                return false;
            }
            h += 1;
        }
        crowded = true;
        break;
    }
    !crowded || keys_differ_sorted(keys, scratch)
}

#[inline(never)]
fn keys_differ_sorted(keys: &[u64], scratch: &mut Scratch) -> bool {
    scratch.keys.clear();
    scratch.keys.extend_from_slice(keys);
    scratch.keys.sort_unstable();
    !scratch.keys.windows(2).any(|w| w[0] == w[1])
}

/// The index (into `names`) of the first name that repeats an earlier one, if any: the exact
/// check, comparing decoded bytes.
#[cold]
pub(crate) fn find_duplicate(input: &[u8], names: &[Name], scratch: &mut Scratch) -> Option<usize> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The key of the body `raw` (between quotes) as the parser computes it, with `pad` bytes
    /// after the closing quote (a name near the end of the input takes the slow path).
    fn key_padded(raw: &str, pad: usize) -> u64 {
        let input = format!("\"{raw}\"{}", " ".repeat(pad));
        let escaped = raw.contains('\\');
        key(
            input.as_bytes(),
            1,
            1 + raw.len(),
            escaped,
            &mut Scratch::default(),
        )
    }

    fn key_at(raw: &str) -> u64 {
        let near_end = key_padded(raw, 9);
        assert_eq!(
            near_end,
            key_padded(raw, 40),
            "fast and slow key of {raw:?}"
        );
        near_end
    }

    #[test]
    fn equal_decoded_names_have_equal_keys_at_every_length() {
        for len in 0..70 {
            let plain: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let mut escaped = plain.clone();
            if len > 0 {
                escaped.replace_range(
                    len - 1..len,
                    &format!("\\u{:04x}", plain.as_bytes()[len - 1]),
                );
            }
            assert_eq!(key_at(&plain), key_at(&escaped), "len {len}");
            assert_eq!(key_at(&plain), key_of(plain.as_bytes()), "len {len}");
        }
    }

    #[test]
    fn short_names_are_their_own_word() {
        let names = ["", "a", "ab", "type", "abcdefg", "abcdefgh", "é"];
        let keys: Vec<u64> = names.iter().map(|n| key_at(n)).collect();
        assert!(keys_differ(&keys, &mut Scratch::default()));
        assert_eq!(key_at("type"), u64::from_le_bytes(*b"type\0\0\0\0"));
    }

    /// The written-out sizes (2 to 5 keys) and the loop just above them find a repeat at
    /// every pair of positions, and none among distinct keys.
    #[test]
    fn small_objects_find_a_repeat_at_every_pair() {
        let mut s = Scratch::default();
        for n in 2..=7usize {
            let distinct: Vec<u64> = (0..n as u64).map(|k| k * 0x0101 + 7).collect();
            assert!(keys_differ(&distinct, &mut s), "n {n}");
            for i in 0..n {
                for j in i + 1..n {
                    let mut keys = distinct.clone();
                    keys[j] = keys[i];
                    assert!(!keys_differ(&keys, &mut s), "n {n} pair {i} {j}");
                }
            }
        }
    }

    /// Every size (pairwise, hashed, sorted) agrees with a naive check, with and without a
    /// repeated key, the key 0 among them, and keys crafted to land in one hash slot.
    #[test]
    fn keys_differ_matches_a_naive_check_at_every_size() {
        let naive = |keys: &[u64]| (0..keys.len()).all(|i| (0..i).all(|j| keys[i] != keys[j]));
        let mut s = Scratch::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in (0..80).chain([127, 128, 129, 500, 1024, 1025, 3000]) {
            for round in 0..6 {
                let mut keys: Vec<u64> = (0..n).map(|_| next()).collect();
                if round >= 2 && n > 0 {
                    keys[(next() % n as u64) as usize] = 0;
                }
                if round >= 4 && n > 1 {
                    let (a, b) = ((next() % n as u64) as usize, (next() % n as u64) as usize);
                    keys[a] = keys[b];
                }
                if round == 5 && n > 2 {
                    keys[0] = 0;
                    keys[n - 1] = 0;
                }
                assert_eq!(
                    keys_differ(&keys, &mut s),
                    naive(&keys),
                    "n {n} round {round}"
                );
            }
        }
        // Keys that all hash to slot 0 of a 128-slot table (40 keys): the probe limit sends
        // them to the sorted check, which must still answer exactly.
        let bits = 7;
        let mut crafted = Vec::new();
        let mut k = 1u64;
        while crafted.len() < 40 {
            k += 1;
            if (k ^ (k >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits) == 0 {
                crafted.push(k);
            }
        }
        assert!(keys_differ(&crafted, &mut s));
        crafted[39] = crafted[3];
        assert!(!keys_differ(&crafted, &mut s));
    }

    /// A key list proved distinct is remembered and answers the same list again; a list that
    /// differs from it in one key, to a repeat, is still caught (at every size and position),
    /// a list with a repeat is never remembered, and lists whose lengths share a slot evict
    /// each other without a wrong answer.
    #[test]
    fn remembered_key_lists_never_hide_a_repeat() {
        let mut s = Scratch::default();
        for n in [6usize, 7, 16, 17, 40, 44, 256, 257, 1024, 1025] {
            let proven: Vec<u64> = (0..n as u64).map(|k| k * 0x9E37_79B9 + 11).collect();
            assert!(keys_differ(&proven, &mut s), "{n}");
            // Remembered up to PROVEN_MAX keys, not beyond.
            let kept = s.proven.contains(&proven);
            assert_eq!(kept, n <= PROVEN_MAX, "{n} remembered");
            assert!(keys_differ(&proven, &mut s), "{n} again");
            for at in [0, 1, n / 2, n - 1] {
                let mut repeat = proven.clone();
                repeat[at] = repeat[(at + 1) % n];
                assert!(!keys_differ(&repeat, &mut s), "{n} repeat at {at}");
                assert!(!keys_differ(&repeat, &mut s), "{n} repeat at {at} again");
            }
            assert!(keys_differ(&proven, &mut s), "{n} after the repeats");
            // Other keys in the same slot: both still answered exactly.
            let other: Vec<u64> = (1..)
                .map(|seed: u64| (0..n as u64 + 4).map(|k| k * 0x51 + seed).collect())
                .find(|o: &Vec<u64>| proven_slot(o) == proven_slot(&proven))
                .unwrap();
            assert!(keys_differ(&other, &mut s));
            assert!(keys_differ(&proven, &mut s));
            let mut other_repeat = other.clone();
            other_repeat[n] = other_repeat[0];
            assert!(!keys_differ(&other_repeat, &mut s));
        }
    }

    #[test]
    fn keys_differ_finds_equal_keys_pairwise_and_sorted() {
        let mut s = Scratch::default();
        for n in [2usize, 8, 16, 17, 40, 1024, 1025, 2000] {
            let mut keys: Vec<u64> = (0..n as u64).map(|k| k * 0x1234_5678_9abc).collect();
            assert!(keys_differ(&keys, &mut s), "{n} distinct");
            keys[n - 1] = keys[n / 2 - 1];
            assert!(!keys_differ(&keys, &mut s), "{n} with a repeat");
        }
    }

    /// The filter never lets a repeated key through: after any keys, adding one of them again
    /// flags the object (as do more keys than bits); distinct keys flag it only when two share a bit, and then the rate
    /// stays near the one-hash Bloom filter's (5 members: about 15 %).
    #[test]
    fn the_name_filter_flags_every_repeat() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut flagged_distinct = 0;
        for _ in 0..2000 {
            let n = (next() % 40) as usize + 1;
            let keys: Vec<u64> = (0..n).map(|_| next() >> (next() % 64)).collect();
            let mut f = NameFilter::default();
            for &k in &keys {
                f.add(k);
            }
            let distinct = keys.iter().enumerate().all(|(i, k)| !keys[..i].contains(k));
            assert!(distinct || f.may_repeat(n), "{keys:?}");
            let again = keys[(next() % n as u64) as usize];
            f.add(again);
            assert!(f.may_repeat(n + 1), "{keys:?} then {again}");
        }
        for _ in 0..10_000 {
            let mut f = NameFilter::default();
            for k in 0..5u64 {
                f.add(k.wrapping_mul(0x0101_0101) ^ next());
            }
            flagged_distinct += f.may_repeat(5) as u32;
        }
        assert!(
            (1000..2000).contains(&flagged_distinct),
            "{flagged_distinct}"
        );
        let mut f = NameFilter::default();
        assert!(!f.may_repeat(0));
        f.add(0);
        assert!(!f.may_repeat(1));
        f.add(0);
        assert!(f.may_repeat(2));
        // More keys than bits: always checked.
        let mut f = NameFilter::default();
        (0..64).for_each(|k| f.add(k));
        assert!(f.may_repeat(65));
    }
}
