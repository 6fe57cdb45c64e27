//! The committed manifest: the `attachment_ref` content block of WIRE-017.
//!
//! Owns the value and its canonical JSON encoding, members in WIRE-017 order. By WIRE-022 it
//! has no member that could hold bytes, base64, a data URL or a path: type, stable attachment
//! ID, kind, bounded name, MIME, decoded size, digest and the opaque content-addressed
//! storage ID, nothing else. Decoding (closed, unknown members rejected) belongs to the
//! user-content decoder.

use crate::json::{write_str, write_u64};

/// The `type` of the block.
pub const BLOCK_TYPE: &str = "attachment_ref";

/// One committed attachment manifest (WIRE-017, WIRE-019 `attachment`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AttachmentRef {
    /// `att_[A-Za-z0-9][A-Za-z0-9_-]{0,62}` (WIRE-018).
    pub attachment_id: String,
    /// `image` or `document`.
    pub kind: String,
    /// Display name, at most 255 bytes (`max_display_name_bytes`).
    pub name: String,
    /// `image/png`, `image/jpeg` or `application/pdf`.
    pub mime_type: String,
    /// Decoded size of the normalized bytes.
    pub size_bytes: u64,
    /// Lowercase hex SHA-256 of the normalized bytes.
    pub sha256: String,
    /// `blob_sha256_<sha256>`.
    pub storage_id: String,
}

impl AttachmentRef {
    /// Appends the canonical compact JSON object, members in WIRE-017 order:
    /// `type, attachment_id, kind, name, mime_type, size_bytes, sha256, storage_id`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"type\":");
        write_str(out, BLOCK_TYPE);
        out.extend_from_slice(b",\"attachment_id\":");
        write_str(out, &self.attachment_id);
        out.extend_from_slice(b",\"kind\":");
        write_str(out, &self.kind);
        out.extend_from_slice(b",\"name\":");
        write_str(out, &self.name);
        out.extend_from_slice(b",\"mime_type\":");
        write_str(out, &self.mime_type);
        out.extend_from_slice(b",\"size_bytes\":");
        write_u64(out, self.size_bytes);
        out.extend_from_slice(b",\"sha256\":");
        write_str(out, &self.sha256);
        out.extend_from_slice(b",\"storage_id\":");
        write_str(out, &self.storage_id);
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_wire_017_order_and_escapes_the_name() {
        let r = AttachmentRef {
            attachment_id: "att_image1".into(),
            kind: "image".into(),
            name: "a \"b\"\n.png".into(),
            mime_type: "image/png".into(),
            size_bytes: 12345,
            sha256: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef".into(),
            storage_id:
                "blob_sha256_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
                    .into(),
        };
        let mut out = Vec::new();
        r.encode(&mut out);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            concat!(
                r#"{"type":"attachment_ref","attachment_id":"att_image1","kind":"image","#,
                r#""name":"a \"b\"\n.png","mime_type":"image/png","size_bytes":12345,"#,
                r#""sha256":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","#,
                r#""storage_id":"blob_sha256_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}"#
            )
        );
    }
}
