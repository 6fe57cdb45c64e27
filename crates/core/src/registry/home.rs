//! The AgentX home and the registry's place in it (PROFILE §3).
//!
//! Owns: the resolution rule (`$AGENTX_HOME`, else `$HOME/.agentx`; an empty value counts as
//! unset) over values the caller read from the environment, and the loading rule over
//! `auth.json` bytes the caller read (absent file: the built-in `local` provider).
//!
//! Must never: read the environment or a file itself, or print a path (a credential path is
//! never emitted, WIRE-016/WIRE-024).

use std::ffi::OsStr;
use std::path::PathBuf;

use super::error::{Error, ErrorKind};
use super::parse::{parse_auth_json, EnvLookup};
use super::providers::Registry;

/// The registry file's name inside the AgentX home.
pub const AUTH_JSON: &str = "auth.json";

/// The one-line stderr notice printed when `auth.json` is absent (PROFILE §3). It names no
/// path.
pub const BUILT_IN_NOTICE: &str =
    "agentx: no auth.json in the AgentX home; using the built-in provider \"local\" (scripted, agentx-echo)";

/// The AgentX home from the values of `AGENTX_HOME` and `HOME`.
pub fn agentx_home(agentx_home: Option<&OsStr>, home: Option<&OsStr>) -> Result<PathBuf, Error> {
    match (agentx_home, home) {
        (Some(h), _) if !h.is_empty() => Ok(PathBuf::from(h)),
        (_, Some(h)) if !h.is_empty() => Ok(PathBuf::from(h).join(".agentx")),
        _ => Err(Error::simple(ErrorKind::Home)),
    }
}

/// The registry from `auth.json`'s bytes, or the built-in one when the file is absent
/// (`None`). The caller prints [`BUILT_IN_NOTICE`] in that case.
pub fn load_registry(auth_json: Option<&[u8]>, env: EnvLookup<'_>) -> Result<Registry, Error> {
    match auth_json {
        None => Ok(Registry::built_in()),
        Some(bytes) => parse_auth_json(bytes, env),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn resolution_order() {
        let a = OsStr::new("/a");
        let h = OsStr::new("/h");
        let empty = OsStr::new("");
        assert_eq!(
            agentx_home(Some(a), Some(h)).ok(),
            Some(PathBuf::from("/a"))
        );
        assert_eq!(
            agentx_home(None, Some(h)).ok().as_deref(),
            Some(Path::new("/h/.agentx"))
        );
        assert_eq!(
            agentx_home(Some(empty), Some(h)).ok().as_deref(),
            Some(Path::new("/h/.agentx"))
        );
        assert_eq!(
            agentx_home(None, None).err().map(|e| e.kind()),
            Some(ErrorKind::Home)
        );
        assert_eq!(
            agentx_home(Some(empty), Some(empty))
                .err()
                .map(|e| e.kind()),
            Some(ErrorKind::Home)
        );
    }
}
