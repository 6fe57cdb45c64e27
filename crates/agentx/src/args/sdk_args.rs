//! The options of the Claude Agent SDK profile (`--verbose`, PROFILE §15), as typed values.
//!
//! Owns: the table of every option that the two SDKs' command builders can emit (Python
//! `claude-agent-sdk` 0.2.189 `_internal/transport/subprocess_cli.py`, TypeScript
//! `@anthropic-ai/claude-agent-sdk` 0.3.333 `sdk.mjs`) that the standalone grammar does not
//! have, each one honoured (a typed field of [`SdkArgs`]), accepted and ignored (its WARN line,
//! [`SdkArgs::ignored`]) or refused (a usage error that names it and says why); the value
//! grammars of the honoured ones (lists, numbers, closed values).
//!
//! Must never: echo a value in a diagnostic, read a file or the environment, or ignore an
//! option that changes what the agent may do (those are honoured or refused, never in
//! the ignored ones of `OTHER`). `agentx_args` does the scanning; this module only knows the SDK options.

use std::path::PathBuf;

use agentx_core::session::tool_rules::{self, ListError, ToolRule};
use agentx_core::session::{Budget, SettingSource};

/// The honoured options of the SDK profile that the standalone grammar lacks, parsed. Present
/// only with `--verbose` ([`AgentxArgs::SdkSession`](super::agentx_args::AgentxArgs)).
///
/// The semantics of `model`, `effort`, `max_turns`, `max_budget_usd`, `tools`,
/// `allowed_tools`, `disallowed_tools`, `add_dirs`, `continue_session`, `fork_session`,
/// `session_id` and `setting_sources` belong to the session core, the store and startup
/// (PROFILE §15,): this module only types them.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SdkArgs {
    /// `--json-schema SCHEMA` (PROFILE §16), checked and compiled: the final text of every
    /// turn must be one JSON value valid against it.
    pub json_schema: Option<agentx_core::session::structured::OutputSchema>,
    /// `--system-prompt S` (it may be empty: no system prompt, PROFILE §16).
    pub system_prompt: Option<String>,
    /// `--system-prompt-file PATH`: the system prompt read from a file at startup.
    pub system_prompt_file: Option<PathBuf>,
    /// `--append-system-prompt S`: joined after the system prompt by a blank line.
    pub append_system_prompt: Option<String>,
    /// `--permission-prompt-tool stdio`: asks reach the host as `can_use_tool` (PROFILE §15);
    /// without it an ask is decided by the hook alone, or denied.
    pub permission_prompt_tool: bool,
    /// `--permission-prompts host|none` (TypeScript): `none` means no ask reaches the host,
    /// whatever `--permission-prompt-tool` says.
    pub permission_prompts: Option<PermissionPrompts>,
    /// `--model M`: must equal the selected provider's model, or selects the provider serving
    /// it (PROFILE §15; semantics: sdkopts).
    pub model: Option<String>,
    /// `--effort E`: one of the selected provider's declared efforts (semantics: sdkopts).
    pub effort: Option<String>,
    /// `--max-turns N` (N ≥ 1): `error_max_turns` after N model requests (semantics: sdkopts).
    pub max_turns: Option<u32>,
    /// `--max-budget-usd X`: `error_max_budget_usd` once the known cost reaches X
    /// (semantics: sdkopts).
    pub max_budget_usd: Option<Budget>,
    /// `--tools LIST|default`: the tools offered (semantics: sdkopts).
    pub tools: Option<ToolSelection>,
    /// `--allowedTools LIST`: rules allowed without asking (semantics: sdkopts).
    pub allowed_tools: Option<Vec<ToolRule>>,
    /// `--disallowedTools LIST`: tools removed from `tools` and the model's list (semantics:
    /// sdkopts).
    pub disallowed_tools: Option<Vec<ToolRule>>,
    /// Every `--add-dir DIR`, in order: inside the cwd for PROFILE §10 (semantics: sdkopts).
    pub add_dirs: Vec<PathBuf>,
    /// `--continue`: the most recently updated session of this home (semantics: sdkopts).
    pub continue_session: bool,
    /// `--fork-session`: with `--resume`/`--continue`, a new session id over a copy
    /// (semantics: sdkopts).
    pub fork_session: bool,
    /// `--session-id UUID` (canonical, PROFILE §2b): a new session with that id (semantics:
    /// sdkopts).
    pub session_id: Option<String>,
    /// `--setting-sources LIST` (`user`, `project`, `local`; empty: none): `settings.json`
    /// is read only when it names `user` (semantics: sdkopts).
    pub setting_sources: Option<Vec<SettingSource>>,
    /// `--no-session-persistence`: the session store is not written.
    pub no_session_persistence: bool,
    /// The accepted-and-ignored options, in argument order, by spelling: the driver writes
    /// `agentx: WARN <option> is not supported; ignored` for each ([`warn_line`]).
    pub ignored: Vec<&'static str>,
}

/// `--permission-prompts` (TypeScript `permissionPrompts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PermissionPrompts {
    /// `host`: this process answers (through `--permission-prompt-tool stdio`).
    Host,
    /// `none`: nobody; what would ask is denied.
    None,
}

/// `--tools`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolSelection {
    /// `default`: the tools of PROFILE §10.
    Default,
    /// The named tools, in order (an empty list offers none).
    Listed(Vec<String>),
}

/// The WARN line for an ignored option (PROFILE §15).
pub fn warn_line(option: &str) -> String {
    format!("agentx: WARN {option} is not supported; ignored")
}

/// How the scanner treats an option of this module's tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Disposition {
    /// Accepted with its WARN line.
    Ignored,
    /// A usage error: `<option> is not supported: <why>`.
    Refused(&'static str),
}

/// `(spelling, takes a value, disposition)`: every SDK option agentx does not honour. The
/// ignored ones change nothing about what the agent may do; everything that would (settings,
/// MCP servers, plugins, agents, managed policy) is refused.
pub(super) const OTHER: &[(&str, bool, Disposition)] = &[
    // Model-side tuning that agentx's providers do not have (PROFILE §14).
    ("--fallback-model", true, Disposition::Ignored),
    ("--betas", true, Disposition::Ignored),
    ("--task-budget", true, Disposition::Ignored),
    ("--thinking", true, Disposition::Ignored),
    ("--thinking-display", true, Disposition::Ignored),
    ("--max-thinking-tokens", true, Disposition::Ignored),
    // Diagnostics and output extras.
    ("--debug", false, Disposition::Ignored),
    ("--debug-file", true, Disposition::Ignored),
    ("--include-hook-events", false, Disposition::Ignored),
    // The precondition for switching into bypassPermissions later; agentx has no live mode
    // change (PROFILE §5), so it grants nothing.
    (
        "--allow-dangerously-skip-permissions",
        false,
        Disposition::Ignored,
    ),
    // Where project settings would come from; agentx reads none.
    ("--project-config-root", true, Disposition::Ignored),
    (
        "--settings",
        true,
        Disposition::Refused(
            "Claude Code settings are not read (agentx reads settings.json in AgentX home)",
        ),
    ),
    (
        "--agent",
        true,
        Disposition::Refused("agent definitions are not supported"),
    ),
    (
        "--plugin-dir",
        true,
        Disposition::Refused("plugins are not supported"),
    ),
    (
        "--plugin-dir-no-mcp",
        true,
        Disposition::Refused("plugins are not supported"),
    ),
    (
        "--channels",
        true,
        Disposition::Refused("channels need MCP servers, which are not supported"),
    ),
    (
        "--session-mirror",
        false,
        Disposition::Refused("mirroring the transcript to an SDK session store is not supported"),
    ),
    (
        "--resume-session-at",
        true,
        Disposition::Refused("resuming at a message is not supported"),
    ),
    (
        "--resume-drops-turn",
        true,
        Disposition::Refused("resuming at a message is not supported"),
    ),
    (
        "--managed-settings",
        true,
        Disposition::Refused("managed settings are not supported"),
    ),
    (
        "--managed-settings-in-initialize",
        false,
        Disposition::Refused("managed settings are not supported"),
    ),
    (
        "--initialize-fields",
        true,
        Disposition::Refused("settings and disallowedTools in initialize are not supported"),
    ),
];

/// `--tools`: `default`, or a LIST (PROFILE §15; empty: none).
pub(super) fn tool_selection(value: &str) -> Result<ToolSelection, ListError> {
    if value.trim() == "default" {
        return Ok(ToolSelection::Default);
    }
    let names = tool_rules::split_list(value)?;
    Ok(ToolSelection::Listed(
        names.into_iter().map(str::to_owned).collect(),
    ))
}

/// `--max-turns`: a positive decimal integer that fits `u32`.
pub(super) fn max_turns(value: &str) -> Option<u32> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse::<u32>().ok().filter(|&n| n >= 1)
}

/// `--setting-sources`: comma-separated `user`, `project`, `local` (empty: none).
pub(super) fn setting_sources(value: &str) -> Option<Vec<SettingSource>> {
    let mut out = Vec::new();
    for name in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let source = match name {
            "user" => SettingSource::User,
            "project" => SettingSource::Project,
            "local" => SettingSource::Local,
            _ => return None,
        };
        if !out.contains(&source) {
            out.push(source);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_is_default_or_a_list() {
        assert_eq!(tool_selection("default"), Ok(ToolSelection::Default));
        assert_eq!(tool_selection(""), Ok(ToolSelection::Listed(vec![])));
        assert_eq!(
            tool_selection("Read, Write"),
            Ok(ToolSelection::Listed(vec!["Read".into(), "Write".into()]))
        );
        assert_eq!(tool_selection("Read("), Err(ListError::Unbalanced));
    }

    #[test]
    fn max_turns_is_a_positive_u32() {
        assert_eq!(max_turns("1"), Some(1));
        assert_eq!(max_turns("4294967295"), Some(u32::MAX));
        for bad in ["", "0", "-1", "+1", "1.0", "4294967296", " 1", "x"] {
            assert_eq!(max_turns(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn setting_sources_are_a_closed_list() {
        assert_eq!(setting_sources(""), Some(vec![]));
        assert_eq!(
            setting_sources("user,project"),
            Some(vec![SettingSource::User, SettingSource::Project])
        );
        assert_eq!(
            setting_sources("local,user,local"),
            Some(vec![SettingSource::Local, SettingSource::User])
        );
        assert_eq!(setting_sources("user,policy"), None);
        assert_eq!(setting_sources("User"), None);
    }

    #[test]
    fn nothing_that_widens_permissions_is_ignored() {
        // PROFILE §15: options that change what the agent may do are never ignored.
        for name in [
            "--settings",
            "--agent",
            "--plugin-dir",
            "--plugin-dir-no-mcp",
            "--channels",
            "--managed-settings",
            "--managed-settings-in-initialize",
            "--initialize-fields",
        ] {
            let (_, _, d) = OTHER.iter().find(|(s, _, _)| *s == name).unwrap();
            assert!(matches!(d, Disposition::Refused(_)), "{name}");
        }
        assert_eq!(
            warn_line("--betas"),
            "agentx: WARN --betas is not supported; ignored"
        );
    }
}

/// One `--mcp-config` value (PROFILE §18: a value starting with `{` is JSON text, anything else
/// a file path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpConfigArg {
    /// JSON text: its servers, in order.
    Servers(Vec<agentx_core::session::mcp_config::ServerDef>),
    /// A file path, read at startup, and the argument's position.
    File(std::path::PathBuf, usize),
}
