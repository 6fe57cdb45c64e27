//! The `apiKeySource` discriminator (WIRE-016) and the privacy shape of output (WIRE-022).
//!
//! Owns: the closed vocabulary `user | temporary` and the provenance rule that picks one.
//! Must never: carry the credential path, the field name or the value: the type has two
//! unit variants and nothing else, so source metadata cannot leak through it.
//!
//! WIRE-022 is made structural the same way elsewhere: the output attachment types
//! (`src/wire/attachment_ref.rs`, owned by the wire layer) have fields for the type, stable
//! attachment ID, kind, bounded name, MIME, decoded size, digest and opaque storage ID only;
//! there is no field that could hold bytes, base64, a source/temporary/storage path or a data
//! URL, so no encoder path can emit one.

use std::fmt;

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

/// The closed `apiKeySource` vocabulary (WIRE-016).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ApiKeySource {
    /// `"user"`: file-backed or absent provenance.
    User,
    /// `"temporary"`: transient process or flag provenance.
    Temporary,
}

impl ApiKeySource {
    /// WIRE-016: file → `user`; transient process/flag → `temporary`; absent → `user`.
    pub fn from_provenance(provenance: Option<Provenance>) -> Self {
        match provenance {
            Some(Provenance::File) | None => ApiKeySource::User,
            Some(Provenance::ProcessEnvironment | Provenance::Flag) => ApiKeySource::Temporary,
        }
    }

    /// The wire spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            ApiKeySource::User => "user",
            ApiKeySource::Temporary => "temporary",
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
