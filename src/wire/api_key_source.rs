//! The `apiKeySource` discriminator (WIRE-016) and the privacy shape of output (WIRE-022).
//!
//! Owns: the closed vocabulary `user | temporary` and the provenance rule that picks one.
//! Must never: carry the credential path, the field name or the value: the type has two
//! unit variants and nothing else, so source metadata cannot leak through it.
//!
//! It lives in `wire` because records carry it (`system/init`, the `initialize` account);
//! `encode` re-exports it for older callers.

use std::fmt;

use super::table::wire_enum;

/// Where the API key in use came from.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Provenance {
    /// A file: the AgentX-home `auth.json` registry (also when its entry names an
    /// `api_key_env` variable: the profile is file-backed, PROFILE §3 / WIRE-016).
    File,
    /// A transient process environment variable supplied outside any file.
    ProcessEnvironment,
    /// A command-line flag.
    Flag,
}

wire_enum! {
    /// The closed `apiKeySource` vocabulary (WIRE-016): decoding anything else (`none`, other
    /// CLIs' values) is an error.
    pub enum ApiKeySource : "\"user\" or \"temporary\"", "WIRE-016" {
        /// `"user"`: file-backed or absent provenance.
        User = "user",
        /// `"temporary"`: transient process or flag provenance.
        Temporary = "temporary",
    }
}

impl ApiKeySource {
    /// WIRE-016: file → `user`; transient process/flag → `temporary`; absent → `user`.
    pub fn from_provenance(provenance: Option<Provenance>) -> Self {
        match provenance {
            Some(Provenance::File) | None => ApiKeySource::User,
            Some(Provenance::ProcessEnvironment | Provenance::Flag) => ApiKeySource::Temporary,
        }
    }
}

impl fmt::Display for ApiKeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_016_provenance_rule() {
        assert_eq!(
            ApiKeySource::from_provenance(Some(Provenance::File)).as_str(),
            "user"
        );
        assert_eq!(ApiKeySource::from_provenance(None).as_str(), "user");
        assert_eq!(
            ApiKeySource::from_provenance(Some(Provenance::ProcessEnvironment)).as_str(),
            "temporary"
        );
        assert_eq!(
            ApiKeySource::from_provenance(Some(Provenance::Flag)).as_str(),
            "temporary"
        );
    }
}
