//! Startup of the Claude Agent SDK profile's options (PROFILE §15), between the typed command
//! line (`args::sdk_args`) and the session core's configuration: `--model`/`--effort` through
//! the provider selection, `--setting-sources`, the session options (`--resume`,
//! `--continue`, `--fork-session`, `--session-id`) through the store, and the tool options,
//! `--add-dir` and the turn limits into [`SessionConfig`]. Every failure is one stderr line,
//! status 1, before any output.
//!
//! Must never: hold a protocol rule (the session, policy, store and provider layers do), or
//! print more than 64 bytes of a command-line value.

use std::path::{Path, PathBuf};

use crate::args::agentx_args::CommonArgs;
use crate::args::sdk_args::{SdkArgs, ToolSelection};
use agentx_core::model::Message;
use agentx_core::registry::{Registry, Selection};
use agentx_core::session::tool_rules::{self, ToolRules};
use agentx_core::session::{SessionConfig, SettingSource, TurnLimits};
use agentx_home::store::{self, SessionStore};

use super::identity::{meta, random_uuid};
use super::startup_error::StartupError;

/// PROFILE §3 selection, with `--model` in the SDK profile (PROFILE §15).
pub(super) fn select(
    registry: Registry,
    common: &CommonArgs,
    sdk: Option<&SdkArgs>,
) -> Result<Selection, StartupError> {
    let model = sdk.and_then(|s| s.model.as_deref());
    Selection::select_with_model(registry, common.provider.as_deref(), model)
        .map_err(StartupError::Choice)
}

/// `--setting-sources LIST`: `settings.json` is read only when LIST names `user` (empty: not
/// read); without the option (and in the standalone profile) it is read.
pub(super) fn reads_user_settings(sdk: Option<&SdkArgs>) -> bool {
    match sdk.and_then(|s| s.setting_sources.as_ref()) {
        None => true,
        Some(list) => list.contains(&SettingSource::User),
    }
}

/// The session this process speaks for: its id, its store when one is open already, and the
/// prior context.
pub(super) struct Opened {
    pub(super) session_id: String,
    pub(super) store: Option<SessionStore>,
    pub(super) history: Vec<Message>,
    /// This startup created the session's directory (`--session-id` or `--fork-session` with
    /// persistence): `startup::start` removes it again when a later check fails, so a failed
    /// startup leaves no session behind (an empty or copied one would refuse the id as
    /// existing and be picked by `--continue`). A resumed session is never touched.
    pub(super) created: bool,
    /// The resumed session's home is read-only (PROFILE §11): the errno text; nothing of this
    /// process is stored.
    pub(super) unstored: Option<String>,
}

fn context_of(id: &str, lines: &[Vec<u8>]) -> Result<Vec<Message>, StartupError> {
    store::context::prior_context(lines).map_err(|error| StartupError::Transcript {
        id: id.to_string(),
        error,
    })
}

/// `--resume ID` (both profiles), and in the SDK profile `--continue` (the session updated
/// last), `--fork-session` (a new id over a copy; the original untouched) and `--session-id
/// UUID` (a new session with that id; an existing one exits 1). `persist` false
/// (`--no-session-persistence`) writes nothing: a fork then only reads its original.
pub(super) fn open_session(
    home: &Path,
    common: &CommonArgs,
    sdk: Option<&SdkArgs>,
    selection: &Selection,
    persist: bool,
) -> Result<Opened, StartupError> {
    let (continue_session, fork, new_id) = match sdk {
        Some(s) => (s.continue_session, s.fork_session, s.session_id.as_deref()),
        None => (false, false, None),
    };
    let resume = match (&common.resume, continue_session) {
        (Some(_), true) => return Err(StartupError::ResumeAndContinue),
        (Some(id), false) => Some(id.clone()),
        (None, true) => match store::most_recent(home)? {
            Some(id) => Some(id),
            None => return Err(StartupError::NothingToContinue),
        },
        (None, false) => None,
    };
    if let Some(id) = new_id {
        if !agentx_wire::wire::grammar::is_canonical_uuid(id) {
            return Err(StartupError::SessionIdNotUuid);
        }
    }
    match (resume, fork) {
        (None, true) => Err(StartupError::ForkWithoutResume),
        (Some(from), true) => {
            let session_id = new_id.map_or_else(random_uuid, str::to_string);
            if persist {
                let (s, transcript) =
                    SessionStore::fork(home, &from, &meta(&session_id, selection))?;
                let history = match context_of(&from, &transcript.lines) {
                    Ok(h) => h,
                    Err(e) => {
                        // Removed while `s` still holds the session's lock.
                        store::discard_new(home, &session_id);
                        drop(s);
                        return Err(e);
                    }
                };
                Ok(Opened {
                    history,
                    store: Some(s),
                    session_id,
                    created: true,
                    unstored: None,
                })
            } else {
                if store::exists(home, &session_id) {
                    return Err(store::StoreError::Exists { id: session_id }.into());
                }
                let (_, transcript) = store::load(home, &from, selection.binding())?;
                Ok(Opened {
                    history: context_of(&from, &transcript.lines)?,
                    store: None,
                    session_id,
                    created: false,
                    unstored: None,
                })
            }
        }
        (Some(id), false) => {
            if new_id.is_some() {
                return Err(StartupError::SessionIdWithoutFork);
            }
            // PROFILE §11, WIRE-025: the binding first, before any output or provider I/O.
            let (store, transcript, unstored) =
                match SessionStore::resume(home, &id, selection.binding()) {
                    Ok((s, _meta, transcript)) => (Some(s), transcript, None),
                    // PROFILE §11: a home that cannot be written at all still resumes, unstored.
                    Err(e) if e.is_read_only() => {
                        let (_, transcript) = store::load(home, &id, selection.binding())?;
                        (None, transcript, e.errno_text().map(str::to_string))
                    }
                    Err(e) => return Err(e.into()),
                };
            Ok(Opened {
                history: context_of(&id, &transcript.lines)?,
                store,
                session_id: id,
                created: false,
                unstored,
            })
        }
        (None, false) => match new_id {
            None => Ok(Opened {
                session_id: random_uuid(),
                store: None,
                history: Vec::new(),
                created: false,
                unstored: None,
            }),
            Some(id) => {
                // PROFILE §15: an existing id exits 1; the directory is claimed now.
                let store = if persist {
                    Some(SessionStore::create_new(home, &meta(id, selection))?)
                } else if store::exists(home, id) {
                    return Err(store::StoreError::Exists { id: id.to_string() }.into());
                } else {
                    None
                };
                Ok(Opened {
                    session_id: id.to_string(),
                    created: store.is_some(),
                    store,
                    history: Vec::new(),
                    unstored: None,
                })
            }
        },
    }
}

/// At most 64 bytes of a value, on one line.
fn shown(s: &str) -> String {
    agentx_wire::wire::responses::cut(s, 64)
        .escape_debug()
        .to_string()
}

/// The SDK profile's options of the session core: `--effort` (a declared effort replaces the
/// default one), `--tools`/`--allowedTools`/`--disallowedTools` (a `--tools` name that names
/// no tool gets one WARN line), `--add-dir` (each an existing directory, relative ones
/// against `cwd`), `--max-turns` and `--max-budget-usd`.
pub(super) fn apply(
    config: &mut SessionConfig,
    sdk: &SdkArgs,
    selection: &Selection,
    cwd: &Path,
    notices: &mut Vec<String>,
) -> Result<(), StartupError> {
    if let Some(e) = &sdk.effort {
        config.projection.effort = Some(selection.declared_effort(e)?);
    }
    let tool_rules = ToolRules {
        allowed: sdk.allowed_tools.clone().unwrap_or_default(),
        disallowed: sdk.disallowed_tools.clone().unwrap_or_default(),
    };
    let listed = match &sdk.tools {
        None | Some(ToolSelection::Default) => None,
        Some(ToolSelection::Listed(names)) => Some(names.as_slice()),
    };
    let (tools, unknown) = tool_rules::offered(
        std::mem::take(&mut config.tools),
        listed,
        &tool_rules.disallowed,
    );
    for name in unknown {
        notices.push(format!(
            "agentx: WARN --tools names no tool \"{}\"; it is not offered",
            shown(&name)
        ));
    }
    config.tools = tools;
    config.tool_rules = tool_rules;
    let mut dirs = Vec::with_capacity(sdk.add_dirs.len());
    for d in &sdk.add_dirs {
        let joined: PathBuf = if d.is_absolute() {
            d.clone()
        } else {
            cwd.join(d)
        };
        let dir = joined
            .canonicalize()
            .ok()
            .filter(|p| p.is_dir())
            .ok_or(StartupError::AddDirNotDirectory)?;
        dirs.push(dir.to_string_lossy().into_owned());
    }
    config.add_dirs = dirs;
    config.limits = TurnLimits {
        max_turns: sdk.max_turns,
        max_budget: sdk.max_budget_usd.clone(),
    };
    Ok(())
}
