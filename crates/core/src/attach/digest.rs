//! SHA-256 digests: the incremental hasher fed chunk by chunk and the 32-byte value with its
//! lowercase-hex wire form (WIRE-017 `sha256`, `storage_id`).
//!
//! Owns hashing and hex; never reads or writes anything.

use core::fmt;

use sha2::{Digest as _, Sha256};

/// The prefix of every storage ID (WIRE-017) and of every blob file's name.
pub const BLOB_PREFIX: &str = "blob_sha256_";

/// A SHA-256 value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sha256Digest(pub [u8; 32]);

impl Sha256Digest {
    /// The digest of `bytes` in one call.
    pub fn of(bytes: &[u8]) -> Sha256Digest {
        let mut d = IncrementalDigest::new();
        d.update(bytes);
        d.finish()
    }

    /// Lowercase hex, 64 characters, as WIRE-017 writes `sha256`.
    pub fn to_hex(&self) -> String {
        agentx_wire::hex::lower(&self.0)
    }

    /// Parses exactly 64 lowercase hex digits (the canonical form WIRE-018 declares).
    pub fn from_hex(s: &str) -> Option<Sha256Digest> {
        agentx_wire::hex::parse32(s).map(Sha256Digest)
    }

    /// The opaque content-addressed storage ID: `blob_sha256_<hex>` (WIRE-017).
    pub fn storage_id(&self) -> String {
        let mut s = String::with_capacity(BLOB_PREFIX.len() + 64);
        s.push_str(BLOB_PREFIX);
        s.push_str(&self.to_hex());
        s
    }

    /// The digest of a well-formed `storage_id` (`blob_sha256_<64 lowercase hex>`); `None`
    /// for any other spelling, so a storage ID is never joined to a path as given.
    pub fn from_storage_id(storage_id: &str) -> Option<Sha256Digest> {
        let hex = storage_id.strip_prefix(BLOB_PREFIX)?;
        let digest = Sha256Digest::from_hex(hex)?;
        (digest.storage_id() == storage_id).then_some(digest)
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sha256Digest({})", self.to_hex())
    }
}

/// The running SHA-256 over every admitted chunk, in order.
#[derive(Clone, Default)]
pub struct IncrementalDigest {
    hasher: Sha256,
    len: u64,
}

impl IncrementalDigest {
    /// A digest of zero bytes so far.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.hasher.update(bytes);
        self.len = self.len.saturating_add(bytes.len() as u64);
    }

    /// Bytes fed so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True when nothing has been fed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The digest of everything fed.
    pub fn finish(self) -> Sha256Digest {
        let out = self.hasher.finalize();
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(out.as_slice());
        Sha256Digest(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_grammar() {
        let d = Sha256Digest::of(b"abc");
        let hex = d.to_hex();
        assert_eq!(
            hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Sha256Digest::from_hex(&hex), Some(d));
        assert_eq!(Sha256Digest::from_hex(&hex.to_uppercase()), None);
        assert_eq!(Sha256Digest::from_hex(&hex[..63]), None);
        assert_eq!(d.storage_id(), format!("blob_sha256_{hex}"));
    }
}
