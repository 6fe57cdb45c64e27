//! PROFILE §8 (WIRE-013 across records) as a property of `FrameEncoder::guard_delta`: for any
//! split of a stream into deltas, what is released never rebuilds a credential (joined text;
//! joined JSON fragments, raw and decoded), a stream that holds one is refused at the delta
//! that completes it, and a stream that holds none is released exactly, in order.

use agentx_wire::encode::{CredentialSet, DeltaGuard, FrameEncoder};
use proptest::prelude::*;

const KEY: &str = "sk-proj-Zq9w";

fn encoder() -> FrameEncoder {
    let mut e = FrameEncoder::new();
    e.set_credentials(CredentialSet::new([KEY, "tok_77"]).unwrap())
        .unwrap();
    e
}

/// Splits `s` at the given fractions (on char boundaries).
fn split(s: &str, cuts: &[u16]) -> Vec<String> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| {
            let mut i = usize::from(*c) * s.len() / usize::from(u16::MAX);
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            i
        })
        .collect();
    at.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for i in at.into_iter().chain([s.len()]) {
        out.push(s[from..i].to_string());
        from = i;
    }
    out
}

/// Feeds `pieces`: the released text, and whether some delta was refused.
fn feed(guard: &mut DeltaGuard, pieces: &[String]) -> (String, bool) {
    let mut e = encoder();
    let mut out = String::new();
    for p in pieces {
        match e.guard_delta(guard, p) {
            Ok(r) => out.push_str(&r),
            Err(_) => return (out, true),
        }
    }
    out.push_str(&e.finish_delta(guard));
    (out, false)
}

/// `\u` escapes for every character of `s` (both spellings of hex digits).
fn escape_all(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            if upper {
                format!("\\u{:04X}", c as u32)
            } else {
                format!("\\u{:04x}", c as u32)
            }
        })
        .collect()
}

fn words() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("sk-".to_string()),
            Just("sk-proj".to_string()),
            Just("-Zq9".to_string()),
            Just("w".to_string()),
            Just("tok_".to_string()),
            Just("7".to_string()),
            Just(" ".to_string()),
            Just("é".to_string()),
            "[a-z]{1,4}",
        ],
        0..12,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn text_deltas_never_rebuild_a_credential(text in words(), cuts in prop::collection::vec(any::<u16>(), 0..8)) {
        let pieces = split(&text, &cuts);
        let (released, refused) = feed(&mut DeltaGuard::text(), &pieces);
        prop_assert!(!released.contains(KEY) && !released.contains("tok_77"));
        let holds = text.contains(KEY) || text.contains("tok_77");
        prop_assert_eq!(refused, holds);
        if !holds {
            prop_assert_eq!(released, text);
        }
    }

    #[test]
    fn json_fragments_never_rebuild_a_credential(
        value in words(),
        escaped in any::<bool>(),
        upper in any::<bool>(),
        cuts in prop::collection::vec(any::<u16>(), 0..8),
    ) {
        let body = if escaped { escape_all(&value, upper) } else { value.clone() };
        let json = format!(r#"{{"command":"{body}","n":1}}"#);
        let pieces = split(&json, &cuts);
        let (released, refused) = feed(&mut DeltaGuard::json(), &pieces);
        prop_assert!(!released.contains(KEY));
        // Decoded as JSON (closing a cut stream by hand), no string holds it either.
        for close in ["", "\"}", "}"] {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&format!("{released}{close}")) {
                prop_assert!(!v.to_string().contains(KEY));
                if let Some(c) = v.get("command").and_then(|c| c.as_str()) {
                    prop_assert!(!c.contains(KEY) && !c.contains("tok_77"));
                }
            }
        }
        let holds = value.contains(KEY) || value.contains("tok_77");
        prop_assert_eq!(refused, holds);
        if !holds {
            prop_assert_eq!(released, json);
        }
    }
}
