//! Which attachments one Chat Completions request carries, and their bytes as base64
//! (PROFILE §14, "Attachments reach the model"). Pure: the bytes come through the model
//! interface's [`BlobSource`].
//!
//! Owns: the per-request limits (`provider_limits` of `input_capabilities`: 100 media items,
//! 41,943,040 raw media bytes, 55,927,120 encoded bytes, a 67,108,864-byte body), the choice
//! of the newest attachments that fit ([`plan`]: older ones fall back to their metadata line,
//! the current message's always go), and [`Encoder`], which hashes a blob while it appends
//! its base64 straight into the body, so a request holds one encoded copy of its media and no
//! raw copy.
//!
//! Must never: read a blob itself, or let base64 go anywhere but the request body (WIRE-022).

use sha2::{Digest, Sha256};

use agentx_core::model::{BlobSource, BlobUnavailable};
use agentx_wire::wire::AttachmentRef;

/// The per-request limits of PROFILE §14 (`provider_limits`, `max_model_request_media_bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RequestLimits {
    /// `max_request_items`: media parts in one request.
    pub max_items: usize,
    /// `max_model_request_media_bytes`: raw bytes of the media of one request.
    pub max_media_bytes: u64,
    /// `max_encoded_media_bytes`: their base64 characters.
    pub max_encoded_bytes: u64,
    /// `max_request_bytes`: the whole JSON body.
    pub max_body_bytes: u64,
}

impl Default for RequestLimits {
    fn default() -> RequestLimits {
        RequestLimits {
            max_items: 100,
            max_media_bytes: 41_943_040,
            max_encoded_bytes: 55_927_120,
            max_body_bytes: 67_108_864,
        }
    }
}

/// The length of the padded base64 of `n` bytes.
pub fn encoded_len(n: u64) -> u64 {
    n.div_ceil(3).saturating_mul(4)
}

/// One attachment of the conversation, as the plan weighs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Its raw size (the manifest's `size_bytes`).
    pub size: u64,
    /// The body bytes its media part takes beyond its metadata line (may be negative for a
    /// tiny blob).
    pub extra: i64,
    /// Whether it belongs to the current message (the last user message), which always fits.
    pub current: bool,
}

/// Which candidates (in conversation order, oldest first) are sent as media parts, the rest
/// falling back to their metadata line. Newest first: the current message's attachments
/// always; then, going back, each older one while the request stays within every limit; the
/// first one that would pass a limit falls back, and so does every older one (the newest
/// are sent, PROFILE §14). `base_body` is the body's length with every attachment as its
/// metadata line.
pub fn plan(candidates: &[Candidate], base_body: u64, limits: &RequestLimits) -> Vec<bool> {
    let mut sent = vec![false; candidates.len()];
    let mut items = 0usize;
    let mut raw = 0u64;
    let mut encoded = 0u64;
    let mut body = base_body as i128;
    let mut open = true;
    for (i, c) in candidates.iter().enumerate().rev() {
        let next_items = items + 1;
        let next_raw = raw.saturating_add(c.size);
        let next_encoded = encoded.saturating_add(encoded_len(c.size));
        let next_body = body + i128::from(c.extra);
        let fits = next_items <= limits.max_items
            && next_raw <= limits.max_media_bytes
            && next_encoded <= limits.max_encoded_bytes
            && next_body <= i128::from(limits.max_body_bytes);
        if c.current || (open && fits) {
            sent[i] = true;
            items = next_items;
            raw = next_raw;
            encoded = next_encoded;
            body = next_body;
        } else {
            open = false;
        }
    }
    sent
}

/// Whether a provider's error message might echo the media of the request it answers: a
/// `base64` marker or a run of 64 or more base64 characters. Such a message is not quoted
/// (WIRE-022: no base64 or data URL on the output).
pub fn may_echo_media(message: &str) -> bool {
    if message.to_ascii_lowercase().contains("base64") {
        return true;
    }
    let mut run = 0usize;
    for b in message.bytes() {
        if b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'=' {
            run += 1;
            if run >= 64 {
                return true;
            }
        } else {
            run = 0;
        }
    }
    false
}

/// Appends `attachment`'s blob as base64 to `out`, checking its size and SHA-256 against the
/// manifest. On `Err` what was appended is to be cut off by the caller.
pub fn append_blob(
    out: &mut Vec<u8>,
    attachment: &AttachmentRef,
    blobs: &dyn BlobSource,
) -> Result<(), BlobUnavailable> {
    let mut encoder = Encoder::new(out, attachment.size_bytes);
    blobs.read_blob(
        &attachment.storage_id,
        attachment.size_bytes,
        &mut |piece| encoder.feed(piece),
    )?;
    encoder.finish(&attachment.sha256)
}

/// Streaming base64 into a body, with a running SHA-256 and byte count.
pub struct Encoder<'o> {
    out: &'o mut Vec<u8>,
    carry: [u8; 3],
    carried: usize,
    hasher: Sha256,
    total: u64,
    expected: u64,
}

impl<'o> Encoder<'o> {
    /// Encodes into `out` a blob the manifest says is `expected` bytes long.
    pub fn new(out: &'o mut Vec<u8>, expected: u64) -> Encoder<'o> {
        Encoder {
            out,
            carry: [0; 3],
            carried: 0,
            hasher: Sha256::new(),
            total: 0,
            expected,
        }
    }

    /// The next piece of the blob, any length. Bytes past the expected size are counted,
    /// not encoded (the blob changed; `finish` refuses it).
    pub fn feed(&mut self, mut piece: &[u8]) {
        self.total = self.total.saturating_add(piece.len() as u64);
        if self.total > self.expected {
            return;
        }
        self.hasher.update(piece);
        if self.carried > 0 {
            let take = (3 - self.carried).min(piece.len());
            self.carry[self.carried..self.carried + take].copy_from_slice(&piece[..take]);
            self.carried += take;
            piece = &piece[take..];
            if self.carried < 3 {
                return;
            }
            base64_simd::STANDARD.encode_append(self.carry, self.out);
            self.carried = 0;
        }
        // The base64 of whole 3-byte groups concatenates exactly.
        let whole = piece.len() / 3 * 3;
        base64_simd::STANDARD.encode_append(&piece[..whole], self.out);
        let rest = &piece[whole..];
        self.carry[..rest.len()].copy_from_slice(rest);
        self.carried = rest.len();
    }

    /// The last group (padded); `Err` when the size or the SHA-256 (lowercase hex, as the
    /// manifest spells it) differs from the manifest.
    pub fn finish(self, sha256_hex: &str) -> Result<(), BlobUnavailable> {
        if self.total != self.expected {
            return Err(BlobUnavailable);
        }
        base64_simd::STANDARD.encode_append(&self.carry[..self.carried], self.out);
        let hex: String = self
            .hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if hex == sha256_hex {
            Ok(())
        } else {
            Err(BlobUnavailable)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(size: u64) -> Candidate {
        Candidate {
            size,
            extra: encoded_len(size) as i64,
            current: false,
        }
    }

    fn current(size: u64) -> Candidate {
        Candidate {
            current: true,
            ..c(size)
        }
    }

    const L: RequestLimits = RequestLimits {
        max_items: 100,
        max_media_bytes: 41_943_040,
        max_encoded_bytes: 55_927_120,
        max_body_bytes: 67_108_864,
    };

    #[test]
    fn profile_14_the_default_limits_are_the_advertised_provider_limits() {
        assert_eq!(RequestLimits::default(), L);
        assert_eq!(encoded_len(0), 0);
        assert_eq!(encoded_len(1), 4);
        assert_eq!(encoded_len(3), 4);
        assert_eq!(encoded_len(4), 8);
        // 40 MiB of media, as one item, is within the encoded limit (base64 of 40 MiB).
        assert!(encoded_len(41_943_040) <= 55_927_120);
    }

    #[test]
    fn profile_14_exactly_100_items_are_sent_the_101st_oldest_falls_back() {
        let hundred = vec![c(10); 100];
        assert_eq!(plan(&hundred, 1000, &L), vec![true; 100]);
        let hundred_one = vec![c(10); 101];
        let sent = plan(&hundred_one, 1000, &L);
        assert!(!sent[0], "the oldest falls back");
        assert!(sent[1..].iter().all(|s| *s));
    }

    #[test]
    fn profile_14_exactly_41943040_raw_bytes_are_sent_one_more_falls_back() {
        // Two history items of 20 MiB and one of 1 byte... at the edge exactly.
        let exact = [c(20_971_520), c(20_971_519), current(1)];
        assert_eq!(plan(&exact, 1000, &L), vec![true, true, true]);
        let over = [c(20_971_520), c(20_971_520), current(1)];
        assert_eq!(plan(&over, 1000, &L), vec![false, true, true]);
    }

    #[test]
    fn profile_14_the_encoded_and_body_limits_at_their_edges() {
        // Encoded: a limit of exactly the base64 of the items accepts them; one less does not.
        let items = [c(30), c(30)];
        let enc = RequestLimits {
            max_encoded_bytes: 80,
            ..L
        };
        assert_eq!(plan(&items, 0, &enc), vec![true, true]);
        let enc = RequestLimits {
            max_encoded_bytes: 79,
            ..L
        };
        assert_eq!(plan(&items, 0, &enc), vec![false, true]);
        // Body: base + extras exactly at the limit is accepted; one byte more falls back.
        let body = RequestLimits {
            max_body_bytes: 1000 + 80,
            ..L
        };
        assert_eq!(plan(&items, 1000, &body), vec![true, true]);
        let body = RequestLimits {
            max_body_bytes: 1000 + 79,
            ..L
        };
        assert_eq!(plan(&items, 1000, &body), vec![false, true]);
    }

    #[test]
    fn profile_14_newest_first_stops_at_the_first_that_does_not_fit() {
        // The middle one does not fit: it and everything older fall back, although the oldest
        // alone would fit (the newest are sent, not a best packing).
        let limits = RequestLimits {
            max_media_bytes: 100,
            ..L
        };
        let sent = plan(&[c(5), c(90), c(20)], 0, &limits);
        assert_eq!(sent, vec![false, false, true]);
    }

    #[test]
    fn profile_14_the_current_message_always_fits() {
        let limits = RequestLimits {
            max_items: 1,
            max_media_bytes: 10,
            ..L
        };
        let sent = plan(&[c(5), current(20), current(20)], 0, &limits);
        assert_eq!(sent, vec![false, true, true]);
    }

    #[test]
    fn wire_022_a_provider_message_that_may_echo_media_is_recognized() {
        assert!(may_echo_media("bad url data:image/png;BASE64,iVBOR"));
        assert!(may_echo_media(&format!("got {}", "A".repeat(64))));
        assert!(!may_echo_media(&format!("got {}", "A".repeat(63))));
        assert!(!may_echo_media(
            "Invalid image: the file could not be decoded."
        ));
    }

    struct Pieces(Vec<u8>, usize);

    impl BlobSource for Pieces {
        fn read_blob(
            &self,
            _id: &str,
            limit: u64,
            sink: &mut dyn FnMut(&[u8]),
        ) -> Result<(), BlobUnavailable> {
            let end = (limit as usize + 1).min(self.0.len());
            for p in self.0[..end].chunks(self.1) {
                sink(p);
            }
            Ok(())
        }
    }

    fn att(bytes: &[u8]) -> AttachmentRef {
        let hex: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        AttachmentRef {
            attachment_id: "att_x".into(),
            kind: "image".into(),
            name: "x.png".into(),
            mime_type: "image/png".into(),
            size_bytes: bytes.len() as u64,
            storage_id: format!("blob_sha256_{hex}"),
            sha256: hex,
        }
    }

    #[test]
    fn base64_in_pieces_of_any_size_equals_the_whole_and_the_digest_is_checked() {
        let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        for len in [0usize, 1, 2, 3, 4, 5, 999, 1000] {
            let want = base64_simd::STANDARD.encode_to_string(&bytes[..len]);
            for piece in [1usize, 2, 3, 4, 7, 64, 1000] {
                let mut out = b"prefix".to_vec();
                let a = att(&bytes[..len]);
                append_blob(&mut out, &a, &Pieces(bytes[..len].to_vec(), piece)).unwrap();
                assert_eq!(&out[6..], want.as_bytes(), "len {len} piece {piece}");
            }
        }
        // A changed byte, a shorter and a longer blob: unavailable.
        let a = att(&bytes[..10]);
        let mut changed = bytes[..10].to_vec();
        changed[3] ^= 1;
        let mut out = Vec::new();
        assert_eq!(
            append_blob(&mut out, &a, &Pieces(changed, 4)),
            Err(BlobUnavailable)
        );
        assert_eq!(
            append_blob(&mut out, &a, &Pieces(bytes[..9].to_vec(), 4)),
            Err(BlobUnavailable)
        );
        assert_eq!(
            append_blob(&mut out, &a, &Pieces(bytes[..11].to_vec(), 4)),
            Err(BlobUnavailable)
        );
    }
}
