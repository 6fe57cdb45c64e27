//! `meta.json` of a stored session (PROFILE §11): closed, strict, written by us only.
//!
//! `{"version":1,"session_id":UUID,"binding":{…WIRE-025 binding record…},"created_unix_ms":N}`.
//! The binding record is the provider's id, type, model and opaque route fingerprint
//! (`provider::ProviderBinding`): no key, endpoint, deployment or API version is stored.

use super::{shown, StoreError};
use agentx_core::registry::ProviderBinding;
use agentx_wire::json::{self, write_str};

/// What a stored session records about itself.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionMeta {
    /// The session id, fixed for the process and kept on resume.
    pub session_id: String,
    /// The frozen provider selection (WIRE-025).
    pub binding: ProviderBinding,
    /// When the session was created, milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
}

const NAMES: [&str; 4] = ["version", "session_id", "binding", "created_unix_ms"];

impl SessionMeta {
    /// The exact bytes of `meta.json` (compact JSON and a final LF).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"{\"version\":1,\"session_id\":");
        write_str(&mut out, &self.session_id);
        out.extend_from_slice(b",\"binding\":");
        self.binding.encode(&mut out);
        out.extend_from_slice(b",\"created_unix_ms\":");
        out.extend_from_slice(itoa::Buffer::new().format(self.created_unix_ms).as_bytes());
        out.extend_from_slice(b"}\n");
        out
    }

    /// The checks every reader of a stored session makes before it trusts `meta.json`
    /// (resume, `--fork-session`, `--continue`): `bytes` decode, they name `session_id`, and
    /// the recorded binding is `current`'s (WIRE-025). Errors are PROFILE §11's diagnostics.
    pub fn verify(
        bytes: &[u8],
        session_id: &str,
        current: &ProviderBinding,
    ) -> Result<SessionMeta, StoreError> {
        let corrupt = |what| StoreError::Corrupt {
            id: shown(session_id),
            what,
        };
        let meta = SessionMeta::decode(bytes).map_err(corrupt)?;
        if meta.session_id != session_id {
            return Err(corrupt("meta.json names another session"));
        }
        if current.check_resume(&meta.binding).is_err() {
            return Err(StoreError::ProviderMismatch {
                id: shown(session_id),
            });
        }
        Ok(meta)
    }

    /// Decodes what [`encode`](Self::encode) wrote; anything else fails closed with a short
    /// reason (never a value).
    pub fn decode(bytes: &[u8]) -> Result<SessionMeta, &'static str> {
        const BAD: &str = "meta.json is not a valid session record";
        let doc = json::parse(bytes).map_err(|_| BAD)?;
        let obj = doc.root().as_object().ok_or(BAD)?;
        if obj.len() != NAMES.len() || obj.unknown_member(&NAMES).is_some() {
            return Err(BAD);
        }
        let version = obj.get("version").and_then(|v| v.as_number()).ok_or(BAD)?;
        if version.as_u64() != Some(1) {
            return Err("meta.json has an unknown version");
        }
        let session_id = obj
            .get("session_id")
            .and_then(|v| v.as_str())
            .map(|s| s.decode().into_owned())
            .ok_or(BAD)?;
        let binding = obj.get("binding").ok_or(BAD)?;
        let binding = ProviderBinding::decode(binding.raw()).map_err(|_| BAD)?;
        let created_unix_ms = obj
            .get("created_unix_ms")
            .and_then(|v| v.as_number())
            .and_then(|n| n.as_u64())
            .ok_or(BAD)?;
        Ok(SessionMeta {
            session_id,
            binding,
            created_unix_ms,
        })
    }
}
