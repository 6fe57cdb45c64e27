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
//! [`IGNORED`]). `agentx_args` does the scanning; this module only knows the SDK options.

use std::path::PathBuf;

use crate::session::SettingSource;

/// The honoured options of the SDK profile that the standalone grammar lacks, parsed. Present
/// only with `--verbose` ([`AgentxArgs::SdkSession`](super::agentx_args::AgentxArgs)).
///
/// The semantics of `model`, `effort`, `max_turns`, `max_budget_usd`, `tools`,
/// `allowed_tools`, `disallowed_tools`, `add_dirs`, `continue_session`, `fork_session`,
/// `session_id` and `setting_sources` belong to the session core, the store and startup
/// (PROFILE §15, the "sdkopts" work of issue 20): this module only types them.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SdkArgs {
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
    pub max_budget_usd: Option<BudgetUsd>,
    /// `--tools LIST|default`: the tools offered (semantics: sdkopts).
    pub tools: Option<ToolSelection>,
    /// `--allowedTools LIST`: rules allowed without asking (semantics: sdkopts).
    pub allowed_tools: Option<Vec<String>>,
    /// `--disallowedTools LIST`: tools removed from `tools` and the model's list (semantics:
    /// sdkopts).
    pub disallowed_tools: Option<Vec<String>>,
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

/// `--max-budget-usd X`: the value as given (for messages) and as a number.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetUsd {
    /// The argument, verbatim (a JSON-like decimal: `1.5`, `0.25`, `1e-05`).
    pub text: String,
    /// Its value, finite and ≥ 0.
    pub usd: f64,
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
        "--mcp-config",
        true,
        Disposition::Refused("MCP servers are not supported yet"),
    ),
    (
        "--json-schema",
        true,
        Disposition::Refused("structured output is not supported yet"),
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

/// A list option's value: names separated by commas or spaces, where a separator inside
/// parentheses belongs to the name (`Bash(git log:*)`), empty names dropped.
pub fn split_tool_list(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => {
                depth += 1;
                current.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            ',' | ' ' | '\t' if depth == 0 => {
                let name = current.trim();
                if !name.is_empty() {
                    out.push(name.to_owned());
                }
                current.clear();
            }
            _ => current.push(c),
        }
    }
    let name = current.trim();
    if !name.is_empty() {
        out.push(name.to_owned());
    }
    out
}

/// `--tools`: `default`, or a list (empty: none).
pub(super) fn tool_selection(value: &str) -> ToolSelection {
    if value.trim() == "default" {
        ToolSelection::Default
    } else {
        ToolSelection::Listed(split_tool_list(value))
    }
}

/// `--max-turns`: a positive decimal integer that fits `u32`.
pub(super) fn max_turns(value: &str) -> Option<u32> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse::<u32>().ok().filter(|&n| n >= 1)
}

/// `--max-budget-usd`: a decimal as Python's `str(float)` or JavaScript's `String(number)`
/// spells it (`1.5`, `0.1`, `1e-05`, `2e-7`), finite and ≥ 0; no sign, `inf` or `nan`.
pub(super) fn budget_usd(value: &str) -> Option<BudgetUsd> {
    let b = value.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    let int = digits(&mut i);
    let mut frac = false;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        frac = digits(&mut i);
    }
    if !int && !frac {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        if !digits(&mut i) {
            return None;
        }
    }
    if i != b.len() {
        return None;
    }
    let usd: f64 = value.parse().ok()?;
    usd.is_finite().then(|| BudgetUsd {
        text: value.to_owned(),
        usd,
    })
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
    fn tool_lists_split_on_commas_and_spaces_outside_parentheses() {
        assert_eq!(split_tool_list(""), Vec::<String>::new());
        assert_eq!(split_tool_list("Read"), ["Read"]);
        assert_eq!(split_tool_list("Read,Write"), ["Read", "Write"]);
        assert_eq!(
            split_tool_list("Read Write, Bash"),
            ["Read", "Write", "Bash"]
        );
        assert_eq!(
            split_tool_list("Bash(git log:*),Read"),
            ["Bash(git log:*)", "Read"]
        );
        assert_eq!(split_tool_list(" , ,"), Vec::<String>::new());
        assert_eq!(tool_selection("default"), ToolSelection::Default);
        assert_eq!(tool_selection(""), ToolSelection::Listed(vec![]));
        assert_eq!(
            tool_selection("Read"),
            ToolSelection::Listed(vec!["Read".into()])
        );
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
    fn budgets_take_python_and_javascript_number_spellings() {
        for (text, usd) in [
            ("1.5", 1.5),
            ("0", 0.0),
            ("0.25", 0.25),
            ("1e-05", 1e-5),
            ("2e-7", 2e-7),
            ("3E+2", 300.0),
            (".5", 0.5),
            ("5.", 5.0),
        ] {
            assert_eq!(budget_usd(text).map(|b| b.usd), Some(usd), "{text}");
        }
        for bad in [
            "", ".", "-1", "+1", "inf", "nan", "Infinity", "1e", "1e+", "1x", "1e999", " 1", "0x1",
        ] {
            assert_eq!(budget_usd(bad), None, "{bad:?}");
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
            "--mcp-config",
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
