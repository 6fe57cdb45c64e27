//! WIRE-022 on the output side: an output `user` record (ordinary or replay) exposes media only
//! as the complete bounded manifest, never as bytes.
//!
//! Owns the check of the API content blocks an output user record keeps as raw JSON (an
//! `image` or `document` block, also nested in a `tool_result`'s `content`): a `base64` source,
//! a source carrying `data`, or a `data:` URL is a decode error. The manifest's opaque
//! content-addressed `storage_id` is checked where manifests are decoded (`manifest`).
//! Never rewrites or redacts: a record that would leak is rejected whole.

use crate::json::Value;

use super::decode::Path;
use super::error::Error;

const RULE: &str = "WIRE-022";

/// Checks one output content block (and the blocks nested in its `content`).
pub(crate) fn check_block(v: Value<'_, '_>, at: &Path<'_>) -> Result<(), Error> {
    if let Some(items) = v.as_array() {
        for (i, item) in items.iter().enumerate() {
            check_block(item, &at.index(i))?;
        }
        return Ok(());
    }
    let Some(obj) = v.as_object() else {
        return Ok(());
    };
    let is_media = obj
        .get("type")
        .and_then(|t| t.as_str())
        .is_some_and(|t| t.eq_str("image") || t.eq_str("document"));
    if is_media {
        if let Some(source) = obj.get("source").and_then(|s| s.as_object()) {
            let source_at = at.key("source");
            let base64 = source
                .get("type")
                .and_then(|t| t.as_str())
                .is_some_and(|t| t.eq_str("base64"));
            if base64 || source.get("data").is_some() {
                return Err(Error::invalid(
                    &source_at,
                    "an attachment_ref manifest, never inline media bytes",
                    RULE,
                ));
            }
            let data_url = source
                .get("url")
                .and_then(|u| u.as_str())
                .is_some_and(|u| is_data_url(&u.decode()));
            if data_url {
                return Err(Error::invalid(
                    &source_at.key("url"),
                    "a URL that is not a data: URL",
                    RULE,
                ));
            }
        }
    }
    match obj.get("content") {
        Some(content) => check_block(content, &at.key("content")),
        None => Ok(()),
    }
}

/// `data:` in any case, after leading whitespace a lenient consumer would skip.
fn is_data_url(url: &str) -> bool {
    url.trim_start()
        .get(..5)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("data:"))
}
