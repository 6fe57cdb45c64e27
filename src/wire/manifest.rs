//! Closed decoding of the committed attachment manifest (WIRE-017 `attachment_ref` block,
//! WIRE-019 `attachment` object).
//!
//! Owns the decoder only; the value and its canonical encoder are
//! [`AttachmentRef`](super::attachment_ref::AttachmentRef) in `attachment_ref.rs`. Every
//! manifest member is required and no other member is accepted (WIRE-017, WIRE-021); the
//! grammars are those of WIRE-018 and the capability limits of WIRE-023
//! (`max_display_name_bytes` 255, `max_mime_type_bytes` 64). Never does I/O.

use crate::json::{Object, Value};

use super::attachment_ref::{AttachmentRef, BLOCK_TYPE};
use super::decode::{object, req, take, Closed, IntoOwned, Path, Text, WireValue};
use super::error::Error;
use super::grammar::{AttachmentId, Sha256Hex};

/// `max_display_name_bytes` of WIRE-023.
pub const MAX_NAME_BYTES: usize = 255;
/// `max_mime_type_bytes` of WIRE-023.
pub const MAX_MIME_TYPE_BYTES: usize = 64;

const RULE: &str = "WIRE-017";

/// The prefix of the opaque content-addressed storage id (`attach::Sha256Digest::storage_id`).
pub const STORAGE_PREFIX: &str = "blob_sha256_";

/// Decodes the members of a manifest object. `with_type`: the object is a content block and
/// carries `"type":"attachment_ref"` (already checked by the caller); the WIRE-019
/// `attachment` object of a committed result is the same manifest, and the block `type`
/// member is accepted there too.
pub(crate) fn decode_manifest(obj: Object<'_, '_>, at: &Path<'_>) -> Result<AttachmentRef, Error> {
    const NAMES: &[&str] = &[
        "attachment_id",
        "kind",
        "name",
        "mime_type",
        "size_bytes",
        "sha256",
        "storage_id",
        "type",
    ];
    let mut s: [Option<Value<'_, '_>>; 8] = [None; 8];
    take(obj, NAMES, &mut s, Closed::Yes("WIRE-021"), at)?;
    let [id, kind, name, mime, size, sha, storage, ty] = s;
    if let Some(ty) = ty {
        let ok = ty.as_str().is_some_and(|t| t.eq_str(BLOCK_TYPE));
        if !ok {
            return Err(Error::invalid(&at.key("type"), "\"attachment_ref\"", RULE));
        }
    }
    let attachment_id: AttachmentId<'_> = req(id, &at.key("attachment_id"), RULE)?;
    let kind_at = at.key("kind");
    let kind: Text<'_> = req(kind, &kind_at, RULE)?;
    if kind != "image" && kind != "document" {
        return Err(Error::invalid(&kind_at, "\"image\" or \"document\"", RULE));
    }
    let name_at = at.key("name");
    let name: Text<'_> = req(name, &name_at, RULE)?;
    if name.is_empty() || name.len() > MAX_NAME_BYTES {
        return Err(Error::invalid(
            &name_at,
            "a name of 1 to 255 bytes",
            "WIRE-023",
        ));
    }
    let mime_at = at.key("mime_type");
    let mime_type: Text<'_> = req(mime, &mime_at, RULE)?;
    if mime_type.is_empty() || mime_type.len() > MAX_MIME_TYPE_BYTES {
        return Err(Error::invalid(
            &mime_at,
            "a MIME type of 1 to 64 bytes",
            "WIRE-023",
        ));
    }
    let size_at = at.key("size_bytes");
    let size_bytes: u64 = req(size, &size_at, RULE)?;
    if size_bytes == 0 {
        return Err(Error::invalid(&size_at, "a positive size", RULE));
    }
    let sha256: Sha256Hex<'_> = req(sha, &at.key("sha256"), RULE)?;
    let storage_at = at.key("storage_id");
    let storage_id: Text<'_> = req(storage, &storage_at, RULE)?;
    // WIRE-022: the opaque content-addressed form, `blob_sha256_` + the manifest's digest
    // (never a path or another store's name).
    let addressed = storage_id
        .strip_prefix(STORAGE_PREFIX)
        .is_some_and(|hex| hex == sha256.as_str());
    if !addressed {
        return Err(Error::invalid(
            &storage_at,
            "blob_sha256_ followed by the manifest's sha256",
            "WIRE-022",
        ));
    }
    Ok(AttachmentRef {
        attachment_id: attachment_id.as_str().to_owned(),
        kind: kind.into_owned(),
        name: name.into_owned(),
        mime_type: mime_type.into_owned(),
        size_bytes,
        sha256: sha256.as_str().to_owned(),
        storage_id: storage_id.into_owned(),
    })
}

impl<'a> WireValue<'a> for AttachmentRef {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        decode_manifest(object(v, at, RULE)?, at)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        AttachmentRef::encode(self, out)
    }
}

impl IntoOwned for AttachmentRef {
    type Owned = AttachmentRef;
    fn into_owned(self) -> AttachmentRef {
        self
    }
}
