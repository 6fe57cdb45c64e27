//! The blob store as the model interface sees it: a user prompt's attachments are WIRE-017
//! manifests (references), and a driver that sends media to a model reads their committed
//! bytes through [`BlobSource`] when it builds a request (PROFILE §14). The session core never
//! reads a blob, so it stays free of I/O.
//!
//! Implemented by the attachment store's backends (`attach::FsBackend` under AgentX home,
//! `attach::MemoryBackend` its in-memory twin). The caller checks the size and the SHA-256 of
//! what it read against the manifest; a source only hands bytes over.
//!
//! Must never: expose a path, in an error or in `Debug` (WIRE-022).

/// The blob is missing or could not be read (no path, no OS error text: WIRE-022).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlobUnavailable;

/// Read access to committed attachment blobs, shared by the threads of a driver.
pub trait BlobSource: Send + Sync {
    /// Hands the bytes of the blob `storage_id` (`blob_sha256_<64 hex>`, WIRE-017) to `sink`
    /// in order, in pieces, and stops after at most `limit + 1` bytes (so a blob longer than
    /// its manifest says is noticed without reading it whole). A malformed `storage_id`, a
    /// missing blob or a read error is [`BlobUnavailable`]; pieces already handed over then
    /// are to be discarded by the caller.
    fn read_blob(
        &self,
        storage_id: &str,
        limit: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BlobUnavailable>;
}

/// A source that holds nothing: every blob is unavailable (a driver with no blob store).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoBlobs;

impl BlobSource for NoBlobs {
    fn read_blob(
        &self,
        _storage_id: &str,
        _limit: u64,
        _sink: &mut dyn FnMut(&[u8]),
    ) -> Result<(), BlobUnavailable> {
        Err(BlobUnavailable)
    }
}
