//! Startup of a session or one-shot run (PROFILE §8): registry and selection (§3), then
//! `settings.json` (§10), then with `--resume` the stored binding compared first (§11, WIRE-025),
//! then the credential union installed in the session's encoder (WIRE-013). Any failure is one
//! stderr line and status 1 with stdout empty; the caller prints it.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::args::agentx_args::CommonArgs;
use crate::args::sdk_args::{PermissionPrompts, SdkArgs};
use crate::hook::{PermissionHook, Settings, MAX_SETTINGS_LEN, SETTINGS_JSON};
use agentx_core::model::scripted::{Script, ScriptedModel};
use agentx_core::registry::{
    agentx_home, load_registry, Route, Selection, AUTH_JSON, BUILT_IN_NOTICE, MAX_AUTH_JSON_LEN,
};
use agentx_core::session::{Profile, Projection, SessionConfig};
use agentx_home::store::SessionStore;

use super::identity::random_u64;
use super::model::{ModelRunner, ScriptedRunner};
use super::sdk_options;

/// A `--system-prompt-file` larger than this is refused.
const MAX_SYSTEM_PROMPT_FILE: u64 = 1024 * 1024;

/// The longest output line of the SDK profile, LF excluded (PROFILE §15).
pub const SDK_MAX_RECORD_LEN: usize = 1_048_576;

/// A script file larger than this is refused.
const MAX_SCRIPT_LEN: u64 = 16 * 1024 * 1024;

/// Everything the loop needs, built before the first byte of output.
pub struct Startup {
    /// The session core's configuration (selection, tools, modes).
    pub config: SessionConfig,
    /// The AgentX home (auth.json, sessions, blobs).
    pub home: PathBuf,
    /// The working directory for tools.
    pub cwd: PathBuf,
    /// The selected provider (WIRE-025).
    pub selection: Selection,
    /// The permission hook from `settings.json`, if any.
    pub hook: Option<PermissionHook>,
    /// Starts the model calls.
    pub model: Box<dyn ModelRunner>,
    /// Open when resuming; created at the first persisted turn otherwise.
    pub store: Option<SessionStore>,
    /// Turns are written to the store (not `--no-session-persistence`, PROFILE §15).
    pub persist: bool,
    /// The stderr lines of a successful startup (PROFILE §15's WARN lines, §3's notice of the
    /// built-in registry), in order: the caller writes them with [`Startup::say_notices`]
    /// once its own checks passed too, so a failed start writes its one line (PROFILE §8).
    pub notices: Vec<String>,
}

pub use super::startup_error::StartupError;

impl Startup {
    /// Writes the startup's notices on stderr ([`Startup::notices`]), once.
    pub fn say_notices(&mut self) {
        for line in std::mem::take(&mut self.notices) {
            eprintln!("{line}");
        }
    }
}

/// Runs the startup sequence. `host_permissions` is false in one-shot mode; `sdk` is the SDK
/// profile's options (`--verbose`, PROFILE §15), `None` in the standalone profile.
pub fn start(
    common: &CommonArgs,
    replay_user_messages: bool,
    host_permissions: bool,
    sdk: Option<&SdkArgs>,
    mcp_configs: &[crate::args::sdk_args::McpConfigArg],
) -> Result<Startup, StartupError> {
    // PROFILE §15: in the SDK profile an ask reaches the host only with
    // `--permission-prompt-tool stdio` (and not `--permission-prompts none`).
    let host_permissions = match sdk {
        None => host_permissions,
        Some(sdk) => {
            host_permissions
                && sdk.permission_prompt_tool
                && sdk.permission_prompts != Some(PermissionPrompts::None)
        }
    };
    let home = home()?;
    // Registry and selection (PROFILE §3).
    let auth = read_auth_json(&home)?;
    // PROFILE §3's notice of the built-in registry is written once startup succeeded: a
    // startup that fails later writes its one stderr line only (PROFILE §8).
    let built_in = auth.is_none();
    let env = |name: &str| std::env::var_os(name);
    let registry = load_registry(auth.as_deref(), &env)?;
    // PROFILE §15: `--model` selects or checks the provider.
    let selection = sdk_options::select(registry, common, sdk)?;
    // settings.json (PROFILE §10), unless `--setting-sources` leaves out `user` (§15).
    let settings_path = home.join(SETTINGS_JSON);
    let read = if sdk_options::reads_user_settings(sdk) {
        read_capped(&settings_path, MAX_SETTINGS_LEN as u64)
    } else {
        Ok(None)
    };
    let settings = match read {
        Ok(None) => Settings::default(),
        Ok(Some(bytes)) => Settings::parse(&bytes)?,
        Err(HomeFileError::NotRegular) => {
            return Err(StartupError::NotRegularFile {
                name: SETTINGS_JSON,
            })
        }
        Err(HomeFileError::Io(_)) => return Err(StartupError::SettingsUnreadable),
    };
    // Resume: the binding first (PROFILE §11, WIRE-025), before any output or provider I/O;
    // in the SDK profile also --continue, --fork-session and --session-id (PROFILE §15).
    let mut persist = !sdk.is_some_and(|s| s.no_session_persistence);
    let opened = sdk_options::open_session(&home, common, sdk, &selection, persist)?;
    let unstored = opened.unstored.as_ref().map(|text| {
        persist = false;
        format!("agentx: session store: {text}; this session will not be stored")
    });
    let (session_id, store, history) = (opened.session_id, opened.store, opened.history);
    // Declared after `store`, so dropped before it: a session this startup created is removed
    // while its store still holds the lock, whenever a later check returns early.
    let mut undo = DiscardOnFailure(opened.created.then(|| (home.clone(), session_id.clone())));
    // The stderr lines of a successful start, in order: PROFILE §15's WARN line of each
    // accepted-and-ignored option, `sdk_options::apply`'s (an unknown `--tools` name), then
    // §3's notice; the caller writes them once everything succeeded (§8).
    let mut notices: Vec<String> = sdk
        .map_or(&[][..], |s| &s.ignored[..])
        .iter()
        .map(|o| crate::args::sdk_args::warn_line(o))
        .collect();
    let cwd = match &common.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|_| StartupError::CurrentDirUnusable)?,
    };
    let cwd = cwd
        .canonicalize()
        .ok()
        .filter(|p| p.is_dir())
        .ok_or(StartupError::CwdNotDirectory)?;
    // PROFILE §19: the automatic-compaction threshold, checked before any output.
    let autocompact_pct = match std::env::var_os("AGENTX_AUTOCOMPACT_PCT") {
        None => agentx_core::session::DEFAULT_AUTOCOMPACT_PCT,
        Some(v) => agentx_core::session::autocompact_pct(Some(
            v.to_str().ok_or(StartupError::AutocompactPct)?,
        ))
        .map_err(|_| StartupError::AutocompactPct)?,
    };
    let model = model_runner(&selection, &home)?;
    // PROFILE §15: `--system-prompt-file` is read once, here (UTF-8, at most 1 MiB).
    let system_prompt = match sdk {
        Some(SdkArgs {
            system_prompt_file: Some(path),
            ..
        }) => {
            let bytes = read_capped(path, MAX_SYSTEM_PROMPT_FILE)
                .ok()
                .flatten()
                .ok_or(StartupError::SystemPromptUnreadable)?;
            if bytes.len() as u64 > MAX_SYSTEM_PROMPT_FILE {
                return Err(StartupError::SystemPromptTooLarge);
            }
            Some(String::from_utf8(bytes).map_err(|_| StartupError::SystemPromptUnreadable)?)
        }
        Some(sdk) => sdk.system_prompt.clone(),
        None => None,
    };
    // PROFILE §18: the `--mcp-config` servers (the run resolved every file already).
    let mcp_servers = crate::mcp::config::resolve(mcp_configs).unwrap_or_default();
    let secrets: Vec<String> = mcp_servers
        .iter()
        .filter_map(|d| match &d.kind {
            agentx_core::session::mcp_config::ServerKind::User(u) => Some(u.secrets()),
            agentx_core::session::mcp_config::ServerKind::Sdk => None,
        })
        .flatten()
        .collect();
    let credentials = selection
        .credentials_with(&secrets)
        .unwrap_or_else(|| selection.credentials().clone());
    let mut config = SessionConfig {
        session_id,
        uuid_seed: random_u64(),
        cwd: cwd.to_string_lossy().into_owned(),
        profile: if sdk.is_some() {
            Profile::Sdk
        } else {
            Profile::Standalone
        },
        system_prompt,
        append_system_prompt: sdk.and_then(|s| s.append_system_prompt.clone()),
        default_system_prompt: None,
        resolve_links: None,
        output_schema: sdk.and_then(|s| s.json_schema.clone()),
        permission_mode: common.permission_mode(),
        replay_user_messages,
        include_partial_messages: common.include_partial_messages,
        attachments_enabled: !common.no_attachments,
        projection: Projection::of(&selection),
        tools: crate::tools::specs(),
        // WIRE-013: the union goes into the session's encoder at construction, with the
        // `--mcp-config` servers' secrets (PROFILE §18).
        credentials,
        hook_configured: settings.permission_hook.is_some(),
        host_permissions,
        pid: std::process::id(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        history,
        reference: None,
        add_dirs: Vec::new(),
        tool_rules: Default::default(),
        limits: Default::default(),
        // PROFILE §15: no output line over 1,048,576 bytes in the SDK profile (the Python
        // SDK's default buffer).
        max_record_len: if sdk.is_some() {
            SDK_MAX_RECORD_LEN
        } else {
            agentx_wire::encode::DEFAULT_MAX_RECORD_LEN
        },
        transcript_path: String::new(),
        mcp: agentx_core::session::McpConfig {
            servers: mcp_servers,
            connect_timeout: crate::mcp::config::connect_timeout(),
            tool_timeout: crate::mcp::config::tool_timeout(),
            ..Default::default()
        },
        autocompact_pct,
    };
    if let Some(sdk) = sdk {
        sdk_options::apply(&mut config, sdk, &selection, &cwd, &mut notices)?;
    }
    // PROFILE §17: "inside" is judged on canonical paths too (a link that points out is out).
    config.resolve_links = Some(agentx_core::session::policy::LinkResolver(
        std::sync::Arc::new(crate::tools::fsx::canonical),
    ));
    // PROFILE §17: the default system message names the tools offered (after `--tools`).
    let offered: Vec<&str> = config.tools.iter().map(|t| t.name.as_str()).collect();
    config.default_system_prompt = Some(super::system_prompt::default_system_prompt(
        &cwd,
        &offered,
        std::time::SystemTime::now(),
    ));
    // PROFILE §16 HOOK_INPUT `transcript_path`.
    config.transcript_path = home
        .join(agentx_home::store::SESSIONS_DIR)
        .join(&config.session_id)
        .join(agentx_home::store::TRANSCRIPT_FILE)
        .to_string_lossy()
        .into_owned();
    if built_in {
        notices.push(BUILT_IN_NOTICE.to_string());
    }
    notices.extend(unstored);
    undo.0 = None;
    Ok(Startup {
        config,
        home,
        cwd,
        selection,
        hook: settings.permission_hook,
        model,
        store,
        persist,
        notices,
    })
}

/// Removes the session a failing startup created (`store::discard_new`) when dropped with
/// its home and id: every early return of [`start`] after the session was opened.
struct DiscardOnFailure(Option<(PathBuf, String)>);

impl Drop for DiscardOnFailure {
    fn drop(&mut self) {
        if let Some((home, id)) = self.0.take() {
            agentx_home::store::discard_new(&home, &id);
        }
    }
}

fn model_runner(selection: &Selection, home: &Path) -> Result<Box<dyn ModelRunner>, StartupError> {
    let provider = selection.provider();
    match provider.route() {
        Route::Scripted { script } => {
            let script = match script {
                None => None,
                Some(path) => {
                    // The path is private (PROFILE §3): never printed.
                    let unreadable = || StartupError::ScriptUnreadable {
                        provider: provider.id().to_string(),
                    };
                    let path = path.expose_str().ok_or_else(unreadable)?;
                    let bytes = read_capped(Path::new(path), MAX_SCRIPT_LEN)
                        .ok()
                        .flatten()
                        .ok_or_else(unreadable)?;
                    let text = String::from_utf8(bytes).map_err(|_| unreadable())?;
                    Some(Script::parse(&text))
                }
            };
            Ok(Box::new(ScriptedRunner::new(ScriptedModel::new(
                script,
                random_u64() as u32,
            ))))
        }
        _ => http_runner(selection, home),
    }
}

fn http_runner(selection: &Selection, home: &Path) -> Result<Box<dyn ModelRunner>, StartupError> {
    use agentx_openai::{BlockingClient, Endpoint};
    let provider = selection.provider();
    let endpoint = Endpoint::of(provider).map_err(|error| StartupError::Endpoint {
        provider: provider.id().to_string(),
        error,
    })?;
    // PROFILE §14: request bodies read the committed blobs of AgentX home.
    let blobs = std::sync::Arc::new(agentx_home::blobs::FsBlobs::new(home));
    // PROFILE §19: the operator's prices cost every completed request.
    let client = BlockingClient::priced(endpoint, blobs, provider.pricing()).map_err(|_| {
        StartupError::HttpClient {
            provider: provider.id().to_string(),
        }
    })?;
    Ok(Box::new(super::model::HttpRunner::new(client)))
}

/// AgentX home (PROFILE §3): `$AGENTX_HOME`, else `$HOME/.agentx`. One that exists must be a
/// directory; a missing one is created when something is first stored.
pub fn home() -> Result<PathBuf, StartupError> {
    let home = agentx_home(
        std::env::var_os("AGENTX_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )?;
    match std::fs::metadata(&home) {
        Ok(m) if !m.is_dir() => Err(StartupError::HomeNotDirectory { path: home }),
        _ => Ok(home),
    }
}

/// `auth.json` of `home` (PROFILE §3): `None` when absent. A failed open or read names its
/// errno text, never the path; at most one byte past the limit is read, so an oversized file
/// is reported by the registry's own size rule.
pub fn read_auth_json(home: &Path) -> Result<Option<Vec<u8>>, StartupError> {
    match read_capped(&home.join(AUTH_JSON), MAX_AUTH_JSON_LEN as u64) {
        Ok(auth) => Ok(auth),
        Err(HomeFileError::NotRegular) => Err(StartupError::NotRegularFile { name: AUTH_JSON }),
        Err(HomeFileError::Io(e)) => Err(agentx_core::registry::Error::unreadable_because(
            agentx_home::store::errno_text(&e),
        )
        .into()),
    }
}

/// Why a file of AgentX home could not be read.
#[derive(Debug)]
enum HomeFileError {
    /// It exists but is not a regular file (a FIFO, a directory, a device: PROFILE §3).
    NotRegular,
    /// Opening or reading it failed.
    Io(io::Error),
}

/// `None` when the file does not exist; at most one byte past `limit` is read, so an
/// oversized file fails its own size rule. The open never blocks (`O_NONBLOCK`: a FIFO with no
/// writer opens at once), and anything but a regular file is refused before a read.
fn read_capped(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, HomeFileError> {
    let file = match File::options()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(HomeFileError::Io(e)),
    };
    if !file.metadata().map_err(HomeFileError::Io)?.is_file() {
        return Err(HomeFileError::NotRegular);
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(HomeFileError::Io)?;
    Ok(Some(bytes))
}
