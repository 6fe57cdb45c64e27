//! A new session's identity: its random version-4 UUID (PROFILE §2b), the random bits that
//! seed record UUIDs, and the metadata of a new stored session. Reads `/dev/urandom` and the
//! clock; never decides which session a process runs (that is `startup`'s and `sdk_options`').

use std::fs::File;
use std::io::Read;

use agentx_core::registry::Selection;
use agentx_home::store::SessionMeta;

/// The metadata of a new stored session.
pub fn meta(session_id: &str, selection: &Selection) -> SessionMeta {
    SessionMeta {
        session_id: session_id.to_owned(),
        binding: selection.binding().clone(),
        created_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0),
    }
}

/// A fresh version-4 session UUID, lowercase (PROFILE §2b).
pub fn random_uuid() -> String {
    uuid::Builder::from_random_bytes(random_bytes())
        .into_uuid()
        .hyphenated()
        .to_string()
}

/// 64 random bits (seeds of the session's record UUIDs and of the scripted model).
pub fn random_u64() -> u64 {
    let b = random_bytes();
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
}

fn random_bytes() -> [u8; 16] {
    let mut b = [0u8; 16];
    if File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .is_err()
    {
        // No urandom: time and pid still make the ids unique per process.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        b = (t ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    b
}
