//! Replays the checked-in seeds of the `encode_credentials` fuzz target through the same entry
//! point the fuzzer calls, then a deterministic pseudo-random sweep biased towards JSON
//! punctuation and escapes (a smoke run of the same property, not a fuzzer).

use std::path::Path;

use agentx_wire::fuzzing::encode::credential_frame;

#[test]
fn encode_credentials_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/encode_credentials");
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
    let cases = 20_000;
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
    }
    eprintln!("encode_credentials: {cases} generated cases");
}
