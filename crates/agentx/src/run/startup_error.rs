//! [`StartupError`]: why a session or one-shot run could not start (PROFILE §8), one variant
//! per failure, classifiable without formatting.
//!
//! Owns the startup diagnostics: `Display` is the complete stderr line (no newline) the caller
//! prints before it exits 1 with stdout empty; black-box tests compare these texts byte for
//! byte. Must never: hold or show a private value (a credential, a script path, a file's
//! content), or more than 64 bytes of a command-line value (the layers below cut theirs).

use std::fmt;

use crate::hook::SettingsError;
use agentx_core::registry::{ChoiceError, Error as ProviderError};
use agentx_home::store::context::ContextError;
use agentx_home::store::StoreError;

/// A startup failure.
#[derive(Debug)]
pub enum StartupError {
    /// AgentX home, an unreadable `auth.json` or the registry (PROFILE §3).
    Provider(ProviderError),
    /// The selection, with `--model` or `--effort` in the SDK profile (PROFILE §3, §15).
    Choice(ChoiceError),
    /// `settings.json` breaks its schema (PROFILE §10).
    Settings(SettingsError),
    /// `settings.json` exists and cannot be read.
    SettingsUnreadable,
    /// The session store: resume, continue, fork or `--session-id` (PROFILE §11, §15).
    Store(StoreError),
    /// A stored transcript line the prior context cannot be rebuilt from (PROFILE §11).
    Transcript {
        /// The session resumed (or forked from).
        id: String,
        /// The line and what is wrong with it.
        error: ContextError,
    },
    /// `--resume` together with `--continue` (PROFILE §15).
    ResumeAndContinue,
    /// `--continue` in a home with no stored session.
    NothingToContinue,
    /// `--session-id` is not a canonical UUID.
    SessionIdNotUuid,
    /// `--fork-session` without `--resume` or `--continue`.
    ForkWithoutResume,
    /// `--session-id` with `--resume` or `--continue` but without `--fork-session`.
    SessionIdWithoutFork,
    /// The process's current directory cannot be used as the tools' directory.
    CurrentDirUnusable,
    /// PROFILE §19: `AGENTX_AUTOCOMPACT_PCT` is not an integer from 50 to 98.
    AutocompactPct,
    /// `--cwd` names no directory.
    CwdNotDirectory,
    /// `--add-dir` names no directory.
    AddDirNotDirectory,
    /// `--system-prompt-file` cannot be read, or is not UTF-8.
    SystemPromptUnreadable,
    /// `--system-prompt-file` is over 1 MiB.
    SystemPromptTooLarge,
    /// A scripted provider's script file cannot be read (its path is private: never shown).
    ScriptUnreadable {
        /// The provider's id.
        provider: String,
    },
    /// An HTTP provider's configuration is not a usable endpoint (PROFILE §14).
    Endpoint {
        /// The provider's id.
        provider: String,
        /// Which field is wrong (never its value).
        error: agentx_openai::EndpointError,
    },
    /// The HTTP client could not be built.
    HttpClient {
        /// The provider's id.
        provider: String,
    },
    /// AgentX home exists but is not a directory (PROFILE §3).
    HomeNotDirectory {
        /// The home's path (the user's own setting, not a private value).
        path: std::path::PathBuf,
    },
    /// `auth.json` or `settings.json` exists but is not a regular file (PROFILE §3).
    NotRegularFile {
        /// The file's name in AgentX home.
        name: &'static str,
    },
}

impl fmt::Display for StartupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use StartupError as E;
        let fixed = match self {
            E::Provider(e) => return write!(f, "agentx: {e}"),
            E::Choice(e) => return write!(f, "{e}"),
            E::Settings(e) => return write!(f, "agentx: {e}"),
            E::Store(e) => return write!(f, "{e}"),
            E::Transcript { id, error } => {
                return write!(
                    f,
                    "agentx: cannot resume {id}: transcript line {}: {}",
                    error.line, error.what
                )
            }
            E::ScriptUnreadable { provider } => {
                return write!(
                    f,
                    "agentx: the script file of provider \"{provider}\" cannot be read"
                )
            }
            E::Endpoint { provider, error } => {
                return write!(f, "agentx: provider \"{provider}\": {error}")
            }
            E::HomeNotDirectory { path } => {
                return write!(
                    f,
                    "agentx: AgentX home {} is not a directory",
                    path.display()
                )
            }
            E::NotRegularFile { name } => return write!(f, "agentx: {name} is not a regular file"),
            E::HttpClient { provider } => {
                return write!(
                    f,
                    "agentx: provider \"{provider}\": the HTTP client cannot start"
                )
            }
            E::SettingsUnreadable => "agentx: settings.json cannot be read",
            E::ResumeAndContinue => "agentx: --resume and --continue name two sessions; give one",
            E::NothingToContinue => "agentx: no session to continue in this home",
            E::SessionIdNotUuid => "agentx: --session-id is not a canonical UUID",
            E::ForkWithoutResume => "agentx: --fork-session needs --resume or --continue",
            E::SessionIdWithoutFork => {
                "agentx: --session-id with --resume or --continue needs --fork-session"
            }
            E::CurrentDirUnusable => "agentx: the current directory is unusable",
            E::AutocompactPct => "agentx: AGENTX_AUTOCOMPACT_PCT must be an integer from 50 to 98",
            E::CwdNotDirectory => "agentx: --cwd is not a directory",
            E::AddDirNotDirectory => "agentx: --add-dir is not a directory",
            E::SystemPromptUnreadable => {
                "agentx: --system-prompt-file cannot be read as UTF-8 text"
            }
            E::SystemPromptTooLarge => "agentx: --system-prompt-file is larger than 1 MiB",
        };
        f.write_str(fixed)
    }
}

impl std::error::Error for StartupError {}

/// The typed errors of the layers below, kept whole (their `Display` is the line's text).
macro_rules! kept {
    ($($variant:ident($error:ty)),* $(,)?) => {$(
        impl From<$error> for StartupError {
            #[cold]
            fn from(e: $error) -> Self {
                StartupError::$variant(e)
            }
        }
    )*};
}

kept!(
    Provider(ProviderError),
    Choice(ChoiceError),
    Settings(SettingsError),
    Store(StoreError),
);

#[cfg(test)]
mod tests {
    use super::*;

    /// PROFILE §8, §11, §15: the fixed startup lines, byte for byte (the black-box suites
    /// assert them on stderr).
    #[test]
    fn fixed_lines() {
        let cases: &[(StartupError, &str)] = &[
            (
                StartupError::SettingsUnreadable,
                "agentx: settings.json cannot be read",
            ),
            (
                StartupError::ResumeAndContinue,
                "agentx: --resume and --continue name two sessions; give one",
            ),
            (
                StartupError::NothingToContinue,
                "agentx: no session to continue in this home",
            ),
            (
                StartupError::SessionIdNotUuid,
                "agentx: --session-id is not a canonical UUID",
            ),
            (
                StartupError::ForkWithoutResume,
                "agentx: --fork-session needs --resume or --continue",
            ),
            (
                StartupError::SessionIdWithoutFork,
                "agentx: --session-id with --resume or --continue needs --fork-session",
            ),
            (
                StartupError::CurrentDirUnusable,
                "agentx: the current directory is unusable",
            ),
            (
                StartupError::AutocompactPct,
                "agentx: AGENTX_AUTOCOMPACT_PCT must be an integer from 50 to 98",
            ),
            (
                StartupError::CwdNotDirectory,
                "agentx: --cwd is not a directory",
            ),
            (
                StartupError::AddDirNotDirectory,
                "agentx: --add-dir is not a directory",
            ),
            (
                StartupError::SystemPromptUnreadable,
                "agentx: --system-prompt-file cannot be read as UTF-8 text",
            ),
            (
                StartupError::SystemPromptTooLarge,
                "agentx: --system-prompt-file is larger than 1 MiB",
            ),
            (
                StartupError::ScriptUnreadable {
                    provider: "echo".into(),
                },
                "agentx: the script file of provider \"echo\" cannot be read",
            ),
            (
                StartupError::Transcript {
                    id: "s1".into(),
                    error: ContextError {
                        line: 3,
                        what: "not a transcript record",
                    },
                },
                "agentx: cannot resume s1: transcript line 3: not a transcript record",
            ),
            (
                StartupError::Provider(ProviderError::unreadable()),
                &format!("agentx: {}", ProviderError::unreadable()),
            ),
            (
                StartupError::Store(StoreError::Exists { id: "s2".into() }),
                "agentx: session s2 already exists",
            ),
        ];
        for (e, text) in cases {
            assert_eq!(e.to_string(), *text, "{e:?}");
        }
    }
}
