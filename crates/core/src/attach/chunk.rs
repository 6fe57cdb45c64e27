//! Chunk admission: strict base64 chunks, a running byte count and an incremental SHA-256
//! across chunks, checked against the `begin` declaration at commit (WIRE-018).
//!
//! Owns `ChunkedPayload`. It never accepts forgiving base64 (no whitespace, no missing or
//! surplus padding, no non-zero padding bits: base64-simd's `STANDARD` decoder), never buffers
//! more than the declared size, and knows nothing of images or storage.

use base64_simd::{Out, STANDARD};

use super::digest::{IncrementalDigest, Sha256Digest};
use super::limits::Limits;
use super::reason::ReasonCode;

/// The bytes of one upload as its chunks arrive, with the declaration they must meet.
pub struct ChunkedPayload {
    declared_size: u64,
    declared_sha256: Sha256Digest,
    next_sequence: u64,
    max_encoded: usize,
    max_decoded: usize,
    bytes: Vec<u8>,
    digest: IncrementalDigest,
}

impl ChunkedPayload {
    /// Starts a payload for a `begin` that declared `size_bytes` raw decoded bytes with digest
    /// `sha256`. A declared size of zero is not a positive size (`schema_invalid`); one above
    /// the item limit is `item_too_large` before any byte is admitted.
    pub fn new(
        size_bytes: u64,
        sha256: Sha256Digest,
        limits: &Limits,
    ) -> Result<ChunkedPayload, ReasonCode> {
        if size_bytes == 0 {
            return Err(ReasonCode::SchemaInvalid);
        }
        if size_bytes > limits.max_item_bytes {
            return Err(ReasonCode::ItemTooLarge);
        }
        Ok(ChunkedPayload {
            declared_size: size_bytes,
            declared_sha256: sha256,
            next_sequence: 0,
            max_encoded: limits.max_chunk_encoded_bytes,
            max_decoded: limits.max_chunk_decoded_bytes,
            bytes: Vec::new(),
            digest: IncrementalDigest::new(),
        })
    }

    /// Admits chunk `sequence` carrying `data` (the JSON string's bytes, unescaped).
    ///
    /// WIRE-018: sequence starts at 0 and increases by exactly one (`sequence_gap`); a chunk is
    /// nonempty canonical padded standard base64 (`noncanonical_base64`) of at most 349,528
    /// characters decoding to at most 262,144 bytes (`chunk_too_large`); the running total may
    /// not pass the declared size (`size_mismatch`, at the chunk that passes it).
    /// On error nothing is admitted; the caller ends the upload.
    pub fn admit_chunk(&mut self, sequence: u64, data: &[u8]) -> Result<(), ReasonCode> {
        if sequence != self.next_sequence {
            return Err(ReasonCode::SequenceGap);
        }
        if data.len() > self.max_encoded {
            return Err(ReasonCode::ChunkTooLarge);
        }
        if data.is_empty() {
            return Err(ReasonCode::NoncanonicalBase64);
        }
        let decoded_len = STANDARD
            .decoded_length(data)
            .map_err(|_| ReasonCode::NoncanonicalBase64)?;
        if decoded_len > self.max_decoded {
            return Err(ReasonCode::ChunkTooLarge);
        }
        if self.bytes.capacity() == 0 {
            // Bounded: the declaration passed the item limit in `new`.
            self.bytes
                .reserve_exact(usize::try_from(self.declared_size).unwrap_or(0));
        }
        // Decode first (so a malformed chunk is `noncanonical_base64` whatever its length),
        // then hold the running total to the declaration.
        let start = self.bytes.len();
        self.bytes.resize(start + decoded_len, 0);
        let decoded = match STANDARD.decode(data, Out::from_slice(&mut self.bytes[start..])) {
            Ok(d) => d.len(),
            Err(_) => {
                self.bytes.truncate(start);
                return Err(ReasonCode::NoncanonicalBase64);
            }
        };
        if (start + decoded) as u64 > self.declared_size {
            self.bytes.truncate(start);
            return Err(ReasonCode::SizeMismatch);
        }
        self.bytes.truncate(start + decoded);
        self.digest.update(&self.bytes[start..]);
        self.next_sequence = self.next_sequence.saturating_add(1);
        Ok(())
    }

    /// The sequence number the next chunk must carry.
    pub fn next_sequence(&self) -> u64 {
        self.next_sequence
    }

    /// Decoded bytes admitted so far.
    pub fn received_bytes(&self) -> u64 {
        self.digest.len()
    }

    /// The SHA-256 declared at `begin`: the raw bytes' digest once [`finish`](Self::finish)
    /// succeeded.
    pub fn declared_sha256(&self) -> Sha256Digest {
        self.declared_sha256
    }

    /// Ends the payload at commit: the decoded size and the SHA-256 must equal the
    /// declaration (`size_mismatch`, then `digest_mismatch`). Returns the raw bytes.
    pub fn finish(self) -> Result<Vec<u8>, ReasonCode> {
        if self.digest.len() != self.declared_size {
            return Err(ReasonCode::SizeMismatch);
        }
        if self.digest.finish() != self.declared_sha256 {
            return Err(ReasonCode::DigestMismatch);
        }
        Ok(self.bytes)
    }
}

/// Strictly decodes one canonical padded standard base64 text (the conformance check of
/// `base64_cases.tsv`, column `strict_padded_canonical_expected`). The empty text decodes to
/// nothing here; chunk admission separately requires a nonempty chunk.
pub fn decode_canonical(data: &[u8]) -> Result<Vec<u8>, ReasonCode> {
    STANDARD
        .decode_to_vec(data)
        .map_err(|_| ReasonCode::NoncanonicalBase64)
}
