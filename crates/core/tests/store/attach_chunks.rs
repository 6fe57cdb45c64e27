//! Chunk admission (WIRE-018): strict base64 against `base64_cases.tsv`, the incremental
//! SHA-256 against FIPS 180 and NIST CAVP vectors under random chunkings, and every chunk
//! limit at and one past its edge.

use crate::common;

use agentx_core::attach::chunk::decode_canonical;
use agentx_core::attach::limits::Limits;
use agentx_core::attach::{ChunkedPayload, IncrementalDigest, ReasonCode, Sha256Digest};
use base64_simd::STANDARD;

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// xorshift64*: deterministic chunkings without another crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn base64_cases_strict_padded_canonical() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("base64/base64_cases.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (c_id, c_hex, c_exp, c_dec) = (
        col("id"),
        col("input_hex"),
        col("strict_padded_canonical_expected"),
        col("decoded_hex_if_accept"),
    );
    let limits = Limits::default();
    let (mut accepted, mut rejected) = (0, 0);
    for line in lines.filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let input = unhex(f[c_hex]);
        let got = decode_canonical(&input);
        match f[c_exp] {
            "accept" => {
                assert_eq!(got.as_deref(), Ok(&unhex(f[c_dec])[..]), "{}", f[c_id]);
                accepted += 1;
            }
            "reject" => {
                assert_eq!(got, Err(ReasonCode::NoncanonicalBase64), "{}", f[c_id]);
                rejected += 1;
            }
            other => panic!("{}: unknown verdict {other}", f[c_id]),
        }
        // The same text as a chunk: admitted iff accepted and nonempty (WIRE-018 requires a
        // nonempty chunk).
        let decoded = got.clone().unwrap_or_default();
        let size = decoded.len().max(1) as u64;
        let mut p = ChunkedPayload::new(size, Sha256Digest::of(&decoded), &limits).unwrap();
        let admitted = p.admit_chunk(0, &input);
        if input.is_empty() || got.is_err() {
            assert_eq!(admitted, Err(ReasonCode::NoncanonicalBase64), "{}", f[c_id]);
        } else {
            assert_eq!(admitted, Ok(()), "{}", f[c_id]);
            assert_eq!(p.finish().unwrap(), decoded, "{}", f[c_id]);
        }
    }
    eprintln!("base64 cases: {accepted} accepted, {rejected} rejected");
    assert_eq!(accepted + rejected, 132);
}

/// Feeds `msg` through the incremental digest and through chunk admission under several
/// random chunkings; both must give `want`.
fn check_digest(msg: &[u8], want: &Sha256Digest, rng: &mut Rng, rounds: usize) {
    let limits = Limits::default();
    for _ in 0..rounds {
        let mut d = IncrementalDigest::new();
        let mut at = 0;
        while at < msg.len() {
            let cap = 1 + rng.below(4096);
            let n = 1 + rng.below((msg.len() - at).min(cap));
            d.update(&msg[at..at + n]);
            at += n;
        }
        assert_eq!(&d.finish(), want);
    }
    if msg.is_empty() || msg.len() as u64 > limits.max_item_bytes {
        return;
    }
    // Through base64 chunks: chunk sizes are multiples of 3 bytes except the last.
    let mut p = ChunkedPayload::new(msg.len() as u64, *want, &limits).unwrap();
    let mut at = 0;
    let mut seq = 0;
    while at < msg.len() {
        let n = (3 * (1 + rng.below(limits.max_chunk_decoded_bytes / 3))).min(msg.len() - at);
        let text = STANDARD.encode_to_string(&msg[at..at + n]);
        p.admit_chunk(seq, text.as_bytes()).unwrap();
        at += n;
        seq += 1;
    }
    assert_eq!(p.finish().unwrap(), msg);
}

#[test]
fn sha256_vectors_under_random_chunkings() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut count = 0;
    let text = std::fs::read_to_string(dir.join("sha256/sha256_vectors.tsv")).unwrap();
    for line in text.lines().skip(1).filter(|l| !l.is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let unit = if f[1] == "<EMPTY>" { "" } else { f[1] };
        let msg = unit.repeat(f[2].parse().unwrap()).into_bytes();
        assert_eq!(msg.len(), f[3].parse::<usize>().unwrap(), "{}", f[0]);
        let want = Sha256Digest::from_hex(f[4]).unwrap();
        check_digest(&msg, &want, &mut rng, 4);
        count += 1;
    }
    for file in ["SHA256ShortMsg.rsp", "SHA256LongMsg.rsp"] {
        let text = std::fs::read_to_string(dir.join("sha256/nist_cavp_shavs").join(file)).unwrap();
        let mut len_bits = None;
        let mut msg = None;
        for line in text.lines() {
            if let Some(v) = line.strip_prefix("Len = ") {
                len_bits = Some(v.trim().parse::<usize>().unwrap());
            } else if let Some(v) = line.strip_prefix("Msg = ") {
                msg = Some(unhex(v.trim()));
            } else if let Some(v) = line.strip_prefix("MD = ") {
                let bits = len_bits.take().unwrap();
                let mut m = msg.take().unwrap();
                m.truncate(bits / 8); // Len = 0 carries Msg = 00
                let want = Sha256Digest::from_hex(v.trim()).unwrap();
                check_digest(&m, &want, &mut rng, 3);
                count += 1;
            }
        }
    }
    eprintln!("sha256 vectors: {count} checked under random chunkings");
    assert_eq!(count, 4 + 65 + 64);
}

fn payload(size: u64) -> ChunkedPayload {
    ChunkedPayload::new(size, Sha256Digest([0; 32]), &Limits::default()).unwrap()
}

#[test]
fn chunk_limits_at_and_past_the_edge() {
    // 349,528 encoded characters decoding to exactly 262,144 bytes: accepted.
    let max = vec![0xA5u8; 262_144];
    let text = STANDARD.encode_to_string(&max);
    assert_eq!(text.len(), 349_528);
    let mut p = payload(1 << 20);
    assert_eq!(p.admit_chunk(0, text.as_bytes()), Ok(()));
    // 349,528 characters can also decode to 262,145 or 262,146 bytes: chunk_too_large.
    for n in [262_145, 262_146] {
        let over = STANDARD.encode_to_string(vec![1u8; n]);
        assert_eq!(over.len(), 349_528);
        assert_eq!(
            payload(1 << 20).admit_chunk(0, over.as_bytes()),
            Err(ReasonCode::ChunkTooLarge)
        );
    }
    // 262,147 bytes encode to 349,532 characters: chunk_too_large (encoded limit).
    let over = STANDARD.encode_to_string(vec![1u8; 262_147]);
    assert_eq!(over.len(), 349_532);
    assert_eq!(
        payload(1 << 20).admit_chunk(0, over.as_bytes()),
        Err(ReasonCode::ChunkTooLarge)
    );
    // One character past the encoded limit, even if it is not base64: chunk_too_large.
    assert_eq!(
        payload(1 << 20).admit_chunk(0, &vec![b'A'; 349_529]),
        Err(ReasonCode::ChunkTooLarge)
    );
    // Empty chunk: not a canonical nonempty chunk.
    assert_eq!(
        payload(1).admit_chunk(0, b""),
        Err(ReasonCode::NoncanonicalBase64)
    );
}

#[test]
fn sequence_size_and_digest() {
    let data = b"attachment bytes!";
    let digest = Sha256Digest::of(data);
    let l = Limits::default();
    let enc = |b: &[u8]| STANDARD.encode_to_string(b);
    // Gap, repeat and reorder are sequence_gap; a failed chunk admits nothing.
    let mut p = ChunkedPayload::new(data.len() as u64, digest, &l).unwrap();
    assert_eq!(
        p.admit_chunk(1, enc(&data[..3]).as_bytes()),
        Err(ReasonCode::SequenceGap)
    );
    assert_eq!(p.admit_chunk(0, enc(&data[..3]).as_bytes()), Ok(()));
    assert_eq!(
        p.admit_chunk(0, enc(&data[3..6]).as_bytes()),
        Err(ReasonCode::SequenceGap)
    );
    assert_eq!(
        p.admit_chunk(1, b"AB=="),
        Err(ReasonCode::NoncanonicalBase64)
    );
    assert_eq!(p.received_bytes(), 3);
    assert_eq!(p.admit_chunk(1, enc(&data[3..]).as_bytes()), Ok(()));
    assert_eq!(p.next_sequence(), 2);
    assert_eq!(p.finish().as_deref(), Ok(&data[..]));
    // Short: size_mismatch at commit.
    let mut p = ChunkedPayload::new(data.len() as u64, digest, &l).unwrap();
    p.admit_chunk(0, enc(&data[..6]).as_bytes()).unwrap();
    assert_eq!(p.finish(), Err(ReasonCode::SizeMismatch));
    // Long: size_mismatch at the chunk that passes the declaration.
    let mut p = ChunkedPayload::new(4, digest, &l).unwrap();
    assert_eq!(
        p.admit_chunk(0, enc(&data[..6]).as_bytes()),
        Err(ReasonCode::SizeMismatch)
    );
    // Same size, other bytes: digest_mismatch.
    let mut p = ChunkedPayload::new(data.len() as u64, digest, &l).unwrap();
    p.admit_chunk(0, enc(b"attachment bytes?").as_bytes())
        .unwrap();
    assert_eq!(p.finish(), Err(ReasonCode::DigestMismatch));
    // Declarations: zero is not positive; 20 MiB is the item edge.
    assert!(matches!(
        ChunkedPayload::new(0, digest, &l),
        Err(ReasonCode::SchemaInvalid)
    ));
    assert!(ChunkedPayload::new(20_971_520, digest, &l).is_ok());
    assert!(matches!(
        ChunkedPayload::new(20_971_521, digest, &l),
        Err(ReasonCode::ItemTooLarge)
    ));
}
