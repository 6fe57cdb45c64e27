//! Everything a session is built from ([`SessionConfig`]): identity, command-line switches,
//! the frozen provider projection (WIRE-023/024), the tools, the credential union (WIRE-013)
//! and an optional installed reference profile ([`ReferenceProfile`]).
//!
//! Owns the checks done once at construction. Must never: read a file, the environment or a
//! clock (the driver passes values in).

use crate::model::ToolSpec;
use crate::registry::{InitProvider, Selection};
use agentx_wire::encode::CredentialSet;
use agentx_wire::wire::initialize::{ModelDescriptor, ProviderDescriptor};
use agentx_wire::wire::permission::PermissionMode;
use agentx_wire::wire::RawJson;

use super::tool_rules::ToolRules;

/// A `--max-budget-usd X` budget (PROFILE §15, §16): the amount and X as given, which the
/// result's `errors` repeat (`budget reached: X USD`).
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    /// The budget in USD: finite and not negative.
    pub usd: f64,
    /// The option's value as given.
    pub text: String,
}

impl Budget {
    /// Parses X: a finite, non-negative decimal (`0`, `0.05`, `1e-3`); `None` otherwise.
    pub fn parse(text: &str) -> Option<Budget> {
        let t = text.trim();
        // Rust's float grammar also takes `inf`, `NaN` and a leading `+`: refused here.
        let plain = !t.is_empty()
            && t.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
            && t.as_bytes()[0] != b'+';
        let usd: f64 = t.parse().ok().filter(|_| plain)?;
        (usd.is_finite() && usd >= 0.0 && !t.starts_with('-')).then(|| Budget {
            usd,
            text: t.to_string(),
        })
    }
}

/// The turn limits of PROFILE §15.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TurnLimits {
    /// `--max-turns N` (N ≥ 1): a model request beyond the N-th of a turn is not made; the
    /// turn ends `error_max_turns`.
    pub max_turns: Option<u32>,
    /// `--max-budget-usd X`: once the known cost since this process started reaches X, no
    /// model request starts; the turn ends `error_max_budget_usd`. An unknown cost (`null`,
    /// WIRE-012) never counts.
    pub max_budget: Option<Budget>,
}

/// The public projection of the process-frozen provider selection (WIRE-023, WIRE-024,
/// WIRE-025): what `system/init` and the `initialize` response say about it.
#[derive(Clone, Debug)]
pub struct Projection {
    /// The selected provider's `system/init` members and `apiKeySource` (WIRE-016).
    pub init: InitProvider,
    /// `initialize.models`: one element.
    pub models: Vec<ModelDescriptor<'static>>,
    /// `initialize.providers`: the complete catalog, exactly one `selected`.
    pub providers: Vec<ProviderDescriptor<'static>>,
    /// The selected provider's declared `default_effort` (PROFILE §14).
    pub effort: Option<String>,
    /// PROFILE §19: the selected provider's declared `context_window`, in tokens.
    pub context_window: Option<u32>,
    /// PROFILE §19: the selected provider declares `pricing`, so a request that failed, was
    /// cancelled or retried costs nothing (rather than making the total unknown).
    pub priced: bool,
}

impl Projection {
    /// The projection of a selection.
    pub fn of(selection: &Selection) -> Projection {
        Projection {
            init: selection.init_provider(),
            models: selection.models(),
            providers: selection.providers(),
            effort: selection.provider().reasoning.default_effort.clone(),
            context_window: selection.provider().context_window(),
            priced: selection.provider().pricing().is_some(),
        }
    }
}

/// The Claude Code CLI version whose SDK protocol the pinned SDKs were tested against
/// (`@anthropic-ai/claude-agent-sdk` 0.3.333's `claudeCodeVersion`; Python
/// `claude-agent-sdk` 0.2.189 bundles 2.1.332): system/init `claude_code_version` in the SDK
/// profile (PROFILE §16; the Python SDK warns on every session without it).
pub const CLAUDE_CODE_VERSION: &str = "2.1.333";

/// Which profile the session speaks (PROFILE §15): the standalone one of §8–§14, or the Claude
/// Agent SDK profile that `--verbose` selects. Nothing of §15 applies in `Standalone`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// PROFILE §8–§14, strictness included.
    #[default]
    Standalone,
    /// PROFILE §15/§16 (`--verbose`): the SDK's initialize members, any user `session_id`,
    /// `sdk_host_only` state records, 1 MiB output lines.
    Sdk,
}

/// A settings source of `get_settings`, low to high priority (Control operations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SettingSource {
    /// The user's settings.
    User,
    /// The project's settings.
    Project,
    /// The project's local settings.
    Local,
    /// Command-line flags.
    Flag,
    /// Managed policy.
    Policy,
}

impl SettingSource {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SettingSource::User => "user",
            SettingSource::Project => "project",
            SettingSource::Local => "local",
            SettingSource::Flag => "flag",
            SettingSource::Policy => "policy",
        }
    }
}

/// The reference operations a profile may install beside the standalone dispatcher
/// (Control operations: "Other rows ... require a profile which explicitly installs
/// them"). Enough for scenario 8 (`mcp_set_servers`) and scenario 10 (`get_settings`).
#[derive(Clone, Debug, Default)]
pub struct ReferenceProfile {
    /// Raw settings objects by source; `get_settings` reports them low to high priority
    /// whatever order they are given in, and merges them (later sources win, per top-level
    /// member).
    pub settings: Vec<(SettingSource, RawJson<'static>)>,
    /// The dynamic MCP servers currently configured, by name (`mcp_set_servers` replaces
    /// them).
    pub mcp_servers: Vec<(String, RawJson<'static>)>,
}

/// How to build a [`Session`](super::Session).
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The canonical session UUID (fixed for the process, kept on `--resume`).
    pub session_id: String,
    /// Seed of the record UUIDs the session mints (the driver passes a random one; tests a
    /// fixed one, so runs are reproducible).
    pub uuid_seed: u64,
    /// `--cwd` (absolute).
    pub cwd: String,
    /// The profile (`--verbose` selects [`Profile::Sdk`], PROFILE §15).
    pub profile: Profile,
    /// `--system-prompt` (or `--system-prompt-file`'s text), the SDK profile only; initialize
    /// `systemPrompt` replaces it (PROFILE §15).
    pub system_prompt: Option<String>,
    /// `--append-system-prompt`, the SDK profile only; initialize `appendSystemPrompt`
    /// replaces it.
    pub append_system_prompt: Option<String>,
    /// The driver's default coding-agent system message (PROFILE §17): sent when neither
    /// `system_prompt` nor initialize `systemPrompt` sets one, in both profiles.
    pub default_system_prompt: Option<String>,
    /// The driver's canonical path function for "inside the cwd" (PROFILE §17); `None`:
    /// paths are judged as written.
    pub resolve_links: Option<super::policy::LinkResolver>,
    /// `--json-schema` (PROFILE §16, the SDK profile only): the final text of every turn must
    /// be one JSON value valid against it; initialize `jsonSchema` replaces it.
    pub output_schema: Option<super::structured::OutputSchema>,
    /// `--permission-mode`.
    pub permission_mode: PermissionMode,
    /// `--replay-user-messages`.
    pub replay_user_messages: bool,
    /// `--include-partial-messages`.
    pub include_partial_messages: bool,
    /// `input_capabilities` advertised and `attachment_import` accepted (not
    /// `--no-attachments`, PROFILE §12).
    pub attachments_enabled: bool,
    /// The provider projection (WIRE-023/024).
    pub projection: Projection,
    /// The tools offered to the model and listed in `system/init` (PROFILE §10).
    pub tools: Vec<ToolSpec>,
    /// The credential union, installed in the encoder before the first frame (WIRE-013).
    pub credentials: CredentialSet,
    /// A permission hook is configured in `settings.json` (PROFILE §10).
    pub hook_configured: bool,
    /// The host can answer permission requests (false in one-shot `-p` mode: ask = deny
    /// without a hook).
    pub host_permissions: bool,
    /// `initialize.pid`.
    pub pid: u32,
    /// The product version (`system/init` `claude_code_version`).
    pub version: String,
    /// Prior conversation (a resumed transcript), oldest first.
    pub history: Vec<crate::model::Message>,
    /// Installed reference operations (none in the standalone profile).
    pub reference: Option<ReferenceProfile>,
    /// `--add-dir` (absolute paths): inside the cwd for PROFILE §10's evaluation (§15).
    pub add_dirs: Vec<String>,
    /// `--allowedTools` / `--disallowedTools` (PROFILE §15; empty in the standalone profile).
    /// A plainly disallowed tool must also be left out of [`SessionConfig::tools`]
    /// ([`tool_rules::offered`](super::tool_rules::offered) does both).
    pub tool_rules: ToolRules,
    /// `--max-turns` / `--max-budget-usd` (PROFILE §15; none in the standalone profile).
    pub limits: TurnLimits,
    /// The longest output record, LF excluded (PROFILE §2a: 8,388,608 bytes). A record of
    /// the agent's that would be longer is not written: a per-turn error, never the end of the
    /// session. Smaller values exist for tests and fuzzing.
    pub max_record_len: usize,
    /// HOOK_INPUT `transcript_path` (PROFILE §16): `<home>/sessions/<id>/transcript.ndjson`
    /// (the driver sets it; empty without a store).
    pub transcript_path: String,
    /// PROFILE §16 in-process MCP servers (`--mcp-config`'s; initialize adds its own) and
    /// their timeouts.
    pub mcp: super::McpConfig,
    /// PROFILE §19 `AGENTX_AUTOCOMPACT_PCT` (50..=98, default 90): compact before a request
    /// whose estimate is over this share of the declared `context_window`.
    pub autocompact_pct: u8,
}

impl SessionConfig {
    /// A configuration with the built-in `local` provider, the three tools of PROFILE §10,
    /// `default` permissions and no credentials: what tests and examples start from.
    pub fn local(session_id: impl Into<String>, cwd: impl Into<String>) -> SessionConfig {
        let selection = Selection::select(crate::registry::Registry::built_in(), None)
            .expect("the built-in registry has one provider");
        SessionConfig {
            session_id: session_id.into(),
            uuid_seed: 0x5eed,
            cwd: cwd.into(),
            profile: Profile::Standalone,
            system_prompt: None,
            append_system_prompt: None,
            default_system_prompt: None,
            resolve_links: None,
            output_schema: None,
            permission_mode: PermissionMode::Default,
            replay_user_messages: false,
            include_partial_messages: false,
            attachments_enabled: true,
            projection: Projection::of(&selection),
            tools: default_tools(),
            credentials: selection.credentials().clone(),
            hook_configured: false,
            host_permissions: true,
            pid: 0,
            version: env!("CARGO_PKG_VERSION").to_string(),
            history: Vec::new(),
            reference: None,
            add_dirs: Vec::new(),
            tool_rules: ToolRules::default(),
            limits: TurnLimits::default(),
            max_record_len: agentx_wire::encode::DEFAULT_MAX_RECORD_LEN,
            transcript_path: String::new(),
            mcp: Default::default(),
            autocompact_pct: super::DEFAULT_AUTOCOMPACT_PCT,
        }
    }
}

/// The tools of PROFILE §10 with their input schemas.
pub fn default_tools() -> Vec<ToolSpec> {
    let tool = |name: &str, description: &str, schema: &str| ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        input_schema: schema.to_string(),
    };
    vec![
        tool(
            "Read",
            "Read a UTF-8 text file; lines are numbered.",
            r#"{"type":"object","properties":{"file_path":{"type":"string"},"offset":{"type":"integer"},"limit":{"type":"integer"}},"required":["file_path"],"additionalProperties":false}"#,
        ),
        tool(
            "Write",
            "Write a file.",
            r#"{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}"#,
        ),
        tool(
            "Bash",
            "Run a shell command in the working directory.",
            r#"{"type":"object","properties":{"command":{"type":"string"},"timeout_ms":{"type":"integer"}},"required":["command"],"additionalProperties":false}"#,
        ),
    ]
}

/// Why a session cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// `session_id` is not a canonical UUID (PROFILE §2b).
    SessionId,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::SessionId => f.write_str("session id is not a canonical UUID"),
        }
    }
}

impl std::error::Error for ConfigError {}
