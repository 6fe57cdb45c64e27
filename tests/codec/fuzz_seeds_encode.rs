//! Replays the checked-in seeds of the `encode_credentials` fuzz target through the same entry
//! point the fuzzer calls, then a deterministic pseudo-random sweep biased towards JSON
//! punctuation and escapes (a smoke run of the same property, not a fuzzer).

use agentx_wire::fuzzing::encode::credential_frame;

#[test]
fn encode_credentials_seeds() {
    let dir = agentx_test_support::workspace_root().join("corpus/encode_credentials");
    let mut seeds = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_file() {
            credential_frame(&std::fs::read(&path).unwrap());
            seeds += 1;
        }
    }
    eprintln!("encode_credentials: {seeds} seeds replayed");
    assert!(seeds >= 10, "too few seeds in {}", dir.display());
}

#[test]
fn encode_credentials_random_sweep() {
    const ALPHABET: &[u8] = b"{}[]\",:\\\\\\unu00e9abc\n/ \xe2\x80\xa8\xa9\xff\xffd8dc0123x";
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // AGENTX_ENCODE_SWEEP overrides the number of generated cases (default 20,000).
    let cases: usize = std::env::var("AGENTX_ENCODE_SWEEP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    for _ in 0..cases {
        let len = (next() % 96) as usize;
        let mut data = vec![(next() % 8) as u8];
        for _ in 0..len {
            let r = next();
            data.push(if r % 5 == 0 {
                r as u8 >> 3
            } else {
                ALPHABET[(r >> 8) as usize % ALPHABET.len()]
            });
        }
        credential_frame(&data);
        // A parseable record too, so the canonical re-encoding path (our writer's escaping,
        // where the validator may skip decoding) sees the same credentials.
        const CHARS: [&str; 12] = [
            "a", "b", "\n", "\"", "\\", "\u{2028}", "é", "A", "/", ",", "}", "\u{1}",
        ];
        let n = next() % 4;
        let mut doc = vec![n as u8];
        for _ in 0..n {
            let mut cred = Vec::new();
            for _ in 0..=(next() % 3) {
                cred.extend_from_slice(CHARS[next() as usize % CHARS.len()].as_bytes());
            }
            doc.push(cred.len() as u8 - 1);
            doc.extend_from_slice(&cred);
        }
        doc.extend_from_slice(b"{\"k\":[\"");
        for _ in 0..(next() % 48) {
            let r = next();
            let piece: &str = match r % 12 {
                0 => "\\n",
                1 => "\\\"",
                2 => "\\\\",
                3 => "\\u2028",
                4 => "\\u0001",
                5 => "\\u0041",
                6 => "\\/",
                7 => "é",
                8 => "\",\"",
                _ => ["a", "b", ",", "}", "x"][(r >> 8) as usize % 5],
            };
            doc.extend_from_slice(piece.as_bytes());
        }
        doc.extend_from_slice(b"\"]}");
        credential_frame(&doc);
    }
    eprintln!("encode_credentials: {cases} generated cases (x2)");
}
