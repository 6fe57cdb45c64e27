//! Plain-text content of generated strings: source files as tools print them, command output,
//! assistant prose, model tokens.
//!
//! Owns: building the unescaped text (into reused `String`s) that record builders then write as
//! JSON strings. Never: writes JSON itself or chooses record structure.

use super::pools;
use super::rng::SplitMix64;

/// Which pool a file's lines come from, chosen by its extension.
pub(crate) fn pool_for(path: &str) -> &'static [&'static str] {
    if path.ends_with(".rs") {
        pools::RUST
    } else if path.ends_with(".py") {
        pools::PYTHON
    } else if path.ends_with(".tsx") || path.ends_with(".ts") {
        pools::TYPESCRIPT
    } else if path.ends_with(".go") {
        pools::GO
    } else {
        pools::PROSE
    }
}

/// How the Read tool numbers lines: `cat -n` with a tab, or the newer `→` arrow.
#[derive(Clone, Copy)]
pub(crate) enum Numbering {
    Tab,
    Arrow,
}

/// Appends `n` consecutive lines of `pool` (wrapping) starting at a random line; when
/// `numbered` is given, also appends the line-numbered form to `numbered` (what Read returns),
/// while `plain` gets the bare file content (what `tool_use_result.file.content` holds).
pub(crate) fn source_lines(
    rng: &mut SplitMix64,
    pool: &[&str],
    n: usize,
    plain: &mut String,
    numbered: Option<(&mut String, Numbering)>,
) {
    let start = rng.below(pool.len());
    let mut numbered = numbered;
    for k in 0..n {
        let line = pool
            .get((start + k) % pool.len().max(1))
            .copied()
            .unwrap_or("");
        if k > 0 {
            plain.push('\n');
        }
        plain.push_str(line);
        if let Some((out, style)) = numbered.as_mut() {
            if k > 0 {
                out.push('\n');
            }
            let no = k + 1;
            let mut digits = itoa::Buffer::new();
            let digits = digits.format(no);
            for _ in digits.len()..6 {
                out.push(' ');
            }
            out.push_str(digits);
            out.push(match style {
                Numbering::Tab => '\t',
                Numbering::Arrow => '→',
            });
            out.push_str(line);
        }
    }
}

/// Command output for the Bash tool: build logs, grep hits, diffs, listings.
pub(crate) fn command_output(rng: &mut SplitMix64, n: usize, out: &mut String) {
    // Indices 2 and 3 are source pools printed the way `grep -n` prints hits.
    const POOLS: [&[&str]; 4] = [pools::SHELL, pools::DIFF, pools::RUST, pools::GO];
    let mut which = rng.below(POOLS.len());
    let mut start = rng.below(256);
    for k in 0..n {
        if k % 16 == 15 {
            which = rng.below(POOLS.len());
            start = rng.below(256);
        }
        if k > 0 {
            out.push('\n');
        }
        let pool = POOLS.get(which).copied().unwrap_or(pools::SHELL);
        if which >= 2 {
            out.push_str(rng.pick_str(pools::FILES));
            out.push(':');
            out.push_str(itoa::Buffer::new().format(rng.range(1, 900)));
            out.push(':');
        }
        out.push_str(
            pool.get((start + k) % pool.len().max(1))
                .copied()
                .unwrap_or(""),
        );
    }
}

/// One to `max` prose sentences joined by spaces or paragraph breaks.
pub(crate) fn prose(rng: &mut SplitMix64, max: usize, out: &mut String) {
    let n = rng.range(1, max);
    for k in 0..n {
        if k > 0 {
            out.push_str(if rng.chance(300) { "\n\n" } else { " " });
        }
        out.push_str(rng.pick_str(pools::PROSE));
    }
}

/// `n` model tokens; `cuts` receives the byte offsets where a new `text_delta` starts (a delta
/// carries one to four tokens, as streamed model output does).
pub(crate) fn tokens(rng: &mut SplitMix64, n: usize, out: &mut String, cuts: &mut Vec<usize>) {
    let mut next_cut = 0;
    for k in 0..n {
        if k == next_cut {
            cuts.push(out.len());
            next_cut = k + rng.range(1, 4);
        }
        out.push_str(rng.pick_str(pools::TOKENS));
    }
}

/// Splits `s` into pieces of `lo..=hi` bytes at character boundaries (for `input_json_delta`).
pub(crate) fn chunk_offsets(
    rng: &mut SplitMix64,
    s: &str,
    lo: usize,
    hi: usize,
    cuts: &mut Vec<usize>,
) {
    let mut at = 0;
    while at < s.len() {
        cuts.push(at);
        let mut next = (at + rng.range(lo, hi)).min(s.len());
        while !s.is_char_boundary(next) {
            next += 1;
        }
        at = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_lines_match_plain_lines() {
        let mut rng = SplitMix64::new(3);
        let (mut plain, mut numbered) = (String::new(), String::new());
        source_lines(
            &mut rng,
            pools::GO,
            40,
            &mut plain,
            Some((&mut numbered, Numbering::Tab)),
        );
        assert_eq!(plain.lines().count(), numbered.lines().count());
        assert!(numbered.starts_with("     1\t"));
        assert!(numbered.contains("    40\t"));
    }

    #[test]
    fn chunks_cover_the_text_at_char_boundaries() {
        let mut rng = SplitMix64::new(5);
        let s = "{\"a\":\"é😀→\\\\\"}".repeat(20);
        let mut cuts = Vec::new();
        chunk_offsets(&mut rng, &s, 3, 9, &mut cuts);
        assert_eq!(cuts.first(), Some(&0));
        assert!(cuts.windows(2).all(|w| w[0] < w[1]));
        assert!(cuts.iter().all(|&c| s.is_char_boundary(c)));
    }
}
