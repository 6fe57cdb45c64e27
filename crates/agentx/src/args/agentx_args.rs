//! The `agentx` command line (PROFILE §2), parsed once into a typed [`AgentxArgs`].
//!
//! Owns: the whole grammar of the `agentx` binary: the four modes (`--list-providers`, the
//! stream-json session, one-shot `-p`, `--version | --help`), which options each mode accepts,
//! their closed values, "any order, each at most once (`--attach` repeats)", and the usage
//! errors (an unknown or repeated option, a missing value, an operand, an option of another
//! mode: status 2).
//!
//! The Claude Agent SDK profile (PROFILE §15): `--verbose` in stream-json mode selects it
//! ([`AgentxArgs::SdkSession`]); the SDK options it adds are typed in [`super::sdk_args`], and
//! without `--verbose` each of them is a usage error, so the standalone grammar stays exactly as
//! strict as it was. `--opt=value` (and `--opt=`, an empty value) is accepted for every option
//! that takes a value in the session and one-shot grammars (PROFILE §15 "Option syntax");
//! `--list-providers` keeps its two-token grammar (WIRE-026 discovery is no profile's).
//!
//! Must never: exit the process, read the environment or the file system, or echo an argument
//! in a diagnostic (a misplaced prompt or key may hold anything): a [`UsageError`] names only
//! the option from its own table and the argument's position.

use std::path::PathBuf;

use super::sdk_args::{self, Disposition, PermissionPrompts, SdkArgs};
use agentx_core::registry::Format;
use agentx_core::session::structured::{OutputSchema, SchemaError};
use agentx_wire::wire::permission::PermissionMode;

/// The full `--help` text of `agentx` (PROFILE §2).
pub const HELP: &str = "\
usage:
  agentx --list-providers [--output-format text|json] [--]
  agentx [--provider ID] --input-format stream-json --output-format stream-json
         [--replay-user-messages] [--include-partial-messages]
         [--permission-mode default|acceptEdits|plan|bypassPermissions]
         [--resume SESSION_ID] [--cwd DIR] [--no-attachments]
  agentx [--provider ID] -p PROMPT [--attach PATH]... [--output-format text|json|stream-json]
         [--permission-mode MODE] [--include-partial-messages] [--resume SESSION_ID] [--cwd DIR]
         [--no-attachments]
  agentx [--provider ID] --input-format stream-json --output-format stream-json --verbose
         [SDK OPTIONS]   (the Claude Agent SDK profile: docs/sdk-options.md lists them)
  agentx --version | --help

Options may come in any order, each at most once (--attach and --add-dir repeat).
A value may also be given as --opt=value (--opt= is an empty value), except with
--list-providers.
Providers come from auth.json (version 2) in the AgentX home: $AGENTX_HOME, else $HOME/.agentx.
";

/// The short usage text printed after a usage error.
pub const USAGE: &str = "\
usage: agentx --list-providers [--output-format text|json] [--]
       agentx [--provider ID] --input-format stream-json --output-format stream-json [OPTIONS]
       agentx [--provider ID] -p PROMPT [--attach PATH]... [--output-format text|json|stream-json] [OPTIONS]
       agentx --version | --help";

/// What `agentx` was asked to do.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentxArgs {
    /// `--list-providers [--output-format text|json] [--]` (WIRE-026).
    ListProviders {
        /// The listing format.
        format: Format,
    },
    /// `--input-format stream-json --output-format stream-json` (PROFILE §8).
    Session(SessionArgs),
    /// `--input-format stream-json --output-format stream-json --verbose`: the Claude Agent SDK
    /// profile (PROFILE §15).
    SdkSession(Box<SdkSessionArgs>),
    /// `-p PROMPT` (PROFILE §13).
    OneShot(OneShotArgs),
    /// `--version`, alone.
    Version,
    /// `--help`, alone.
    Help,
}

/// The options the session and one-shot modes share.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct CommonArgs {
    /// `--provider ID`; `None` selects the registry's default (PROFILE §3).
    pub provider: Option<String>,
    /// `--permission-mode`; `default` when absent (PROFILE §10).
    pub permission_mode: Option<PermissionMode>,
    /// `--include-partial-messages`.
    pub include_partial_messages: bool,
    /// `--resume SESSION_ID`, verbatim (an unknown id is a startup error, PROFILE §11).
    pub resume: Option<String>,
    /// `--cwd DIR`; the process cwd when absent.
    pub cwd: Option<PathBuf>,
    /// `--no-attachments` (PROFILE §12).
    pub no_attachments: bool,
}

impl CommonArgs {
    /// The effective permission mode (`default` when not given).
    pub fn permission_mode(&self) -> PermissionMode {
        self.permission_mode.unwrap_or(PermissionMode::Default)
    }
}

/// The stream-json session mode.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SessionArgs {
    /// Provider, permission mode, resume, working directory, partial messages, attachments.
    pub common: CommonArgs,
    /// `--replay-user-messages` (PROFILE §8 Replay).
    pub replay_user_messages: bool,
    /// Every `--mcp-config` (PROFILE §18: both profiles; it may repeat), in argument order:
    /// JSON text already checked, or a file path read at startup.
    pub mcp_configs: Vec<sdk_args::McpConfigArg>,
}

/// The SDK profile's session mode (`--verbose`, PROFILE §15): the standalone session's options
/// plus the SDK's.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SdkSessionArgs {
    /// Everything the standalone session mode has.
    pub session: SessionArgs,
    /// The SDK options, typed.
    pub sdk: SdkArgs,
}

/// The one-shot output format (PROFILE §13; `text` is the default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OneShotFormat {
    /// `text`: the result text only.
    #[default]
    Text,
    /// `json`: the result record only.
    Json,
    /// `stream-json`: every record.
    StreamJson,
}

/// The one-shot mode.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct OneShotArgs {
    /// Provider, permission mode, resume, working directory, partial messages, attachments.
    pub common: CommonArgs,
    /// `-p PROMPT`, verbatim.
    pub prompt: String,
    /// Every `--attach PATH`, in order.
    pub attach: Vec<PathBuf>,
    /// `--output-format`.
    pub output_format: OneShotFormat,
}

pub use agentx_wire_cli::usage::UsageError;

/// A usage error at the argument `position`; its text names an option of the grammar, never
/// an argument's value.
#[cold]
fn usage_at(what: impl Into<String>, position: usize) -> UsageError {
    UsageError::at(what, position, USAGE)
}

/// A usage error of the command line as a whole.
#[cold]
fn usage_error(what: impl Into<String>) -> UsageError {
    UsageError::new(what, USAGE)
}

/// The options of the grammar. The discriminant indexes [`Scanned::seen`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    ListProviders,
    InputFormat,
    OutputFormat,
    Provider,
    Prompt,
    Attach,
    PermissionMode,
    IncludePartialMessages,
    ReplayUserMessages,
    Resume,
    Cwd,
    NoAttachments,
    Version,
    Help,
    // The honoured options of the SDK profile (PROFILE §15; `--verbose` only).
    Verbose,
    SystemPrompt,
    SystemPromptFile,
    AppendSystemPrompt,
    PermissionPromptTool,
    PermissionPrompts,
    Model,
    Effort,
    MaxTurns,
    MaxBudgetUsd,
    Tools,
    AllowedTools,
    DisallowedTools,
    AddDir,
    Continue,
    ForkSession,
    SessionId,
    SettingSources,
    NoSessionPersistence,
    StrictMcpConfig,
    AwaitInitialize,
    JsonSchema,
    McpConfig,
}

/// `(spelling, option, takes a value)`.
const OPTIONS: &[(&str, Opt, bool)] = &[
    ("--list-providers", Opt::ListProviders, false),
    ("--input-format", Opt::InputFormat, true),
    ("--output-format", Opt::OutputFormat, true),
    ("--provider", Opt::Provider, true),
    ("-p", Opt::Prompt, true),
    ("--attach", Opt::Attach, true),
    ("--permission-mode", Opt::PermissionMode, true),
    (
        "--include-partial-messages",
        Opt::IncludePartialMessages,
        false,
    ),
    ("--replay-user-messages", Opt::ReplayUserMessages, false),
    ("--resume", Opt::Resume, true),
    ("--cwd", Opt::Cwd, true),
    ("--no-attachments", Opt::NoAttachments, false),
    ("--version", Opt::Version, false),
    ("--help", Opt::Help, false),
    ("--verbose", Opt::Verbose, false),
    ("--system-prompt", Opt::SystemPrompt, true),
    ("--system-prompt-file", Opt::SystemPromptFile, true),
    ("--append-system-prompt", Opt::AppendSystemPrompt, true),
    ("--permission-prompt-tool", Opt::PermissionPromptTool, true),
    ("--permission-prompts", Opt::PermissionPrompts, true),
    ("--model", Opt::Model, true),
    ("--effort", Opt::Effort, true),
    ("--max-turns", Opt::MaxTurns, true),
    ("--max-budget-usd", Opt::MaxBudgetUsd, true),
    ("--tools", Opt::Tools, true),
    ("--allowedTools", Opt::AllowedTools, true),
    ("--disallowedTools", Opt::DisallowedTools, true),
    ("--add-dir", Opt::AddDir, true),
    ("--continue", Opt::Continue, false),
    ("--fork-session", Opt::ForkSession, false),
    ("--session-id", Opt::SessionId, true),
    ("--setting-sources", Opt::SettingSources, true),
    ("--no-session-persistence", Opt::NoSessionPersistence, false),
    // No MCP configuration is ever read but `--mcp-config`'s, so it holds by construction.
    ("--strict-mcp-config", Opt::StrictMcpConfig, false),
    // Nothing is written before the host's first record anyway (PROFILE §8).
    ("--await-initialize", Opt::AwaitInitialize, false),
    // PROFILE §16 structured output.
    ("--json-schema", Opt::JsonSchema, true),
    // PROFILE §18: the MCP servers (it may repeat).
    ("--mcp-config", Opt::McpConfig, true),
];

const OPT_COUNT: usize = OPTIONS.len();

/// The options only the SDK profile has (`--verbose` itself included).
const SDK_ONLY: [Opt; 22] = [
    Opt::Verbose,
    Opt::SystemPrompt,
    Opt::SystemPromptFile,
    Opt::AppendSystemPrompt,
    Opt::PermissionPromptTool,
    Opt::PermissionPrompts,
    Opt::Model,
    Opt::Effort,
    Opt::MaxTurns,
    Opt::MaxBudgetUsd,
    Opt::Tools,
    Opt::AllowedTools,
    Opt::DisallowedTools,
    Opt::AddDir,
    Opt::Continue,
    Opt::ForkSession,
    Opt::SessionId,
    Opt::SettingSources,
    Opt::NoSessionPersistence,
    Opt::StrictMcpConfig,
    Opt::AwaitInitialize,
    Opt::JsonSchema,
];

fn spelling(opt: Opt) -> &'static str {
    OPTIONS
        .iter()
        .find(|(_, o, _)| *o == opt)
        .map_or("?", |(s, _, _)| s)
}

/// One occurrence: the position of the option and its value (if it takes one).
#[derive(Clone, Debug)]
struct Given {
    position: usize,
    value: Option<String>,
    /// The position of the value: the next argument, or the option's own in `--opt=value`.
    value_position: usize,
}

/// The arguments after the generic scan: each option at most once (except `--attach` and
/// `--add-dir`).
struct Scanned {
    seen: [Option<Given>; OPT_COUNT],
    attach: Vec<PathBuf>,
    add_dirs: Vec<PathBuf>,
    /// Every `--mcp-config` value and its position.
    mcp_configs: Vec<(String, usize)>,
    /// The SDK options of [`sdk_args::OTHER`] given: `(index, position)`, in argument order.
    other: Vec<(usize, usize)>,
    /// The position of the first `--opt=value` argument.
    first_inline: Option<usize>,
    /// The position of a final bare `--`.
    terminator: Option<usize>,
}

impl Default for Scanned {
    fn default() -> Scanned {
        Scanned {
            seen: std::array::from_fn(|_| None),
            attach: Vec::new(),
            add_dirs: Vec::new(),
            mcp_configs: Vec::new(),
            other: Vec::new(),
            first_inline: None,
            terminator: None,
        }
    }
}

impl Scanned {
    fn get(&self, opt: Opt) -> Option<&Given> {
        self.seen[opt as usize].as_ref()
    }

    fn has(&self, opt: Opt) -> bool {
        self.get(opt).is_some()
    }

    fn value(&self, opt: Opt) -> Option<(&str, usize)> {
        self.get(opt)
            .and_then(|g| g.value.as_deref().map(|v| (v, g.value_position)))
    }

    /// The first SDK-only option given (of [`SDK_ONLY`] or [`sdk_args::OTHER`]), by position:
    /// its spelling and position.
    fn first_sdk_option(&self) -> Option<(&'static str, usize)> {
        let mut first: Option<(&'static str, usize)> =
            self.other.first().map(|&(i, p)| (sdk_args::OTHER[i].0, p));
        for opt in SDK_ONLY {
            if let Some(g) = self.get(opt) {
                if first.is_none_or(|(_, p)| g.position < p) {
                    first = Some((spelling(opt), g.position));
                }
            }
        }
        first
    }

    fn flag(&self, opt: Opt) -> bool {
        self.has(opt)
    }

    /// The first given option outside `allowed` (with its position), in argument order.
    fn first_outside(&self, allowed: &[Opt]) -> Option<(Opt, usize)> {
        let mut worst: Option<(Opt, usize)> = None;
        for &(_, opt, _) in OPTIONS {
            if allowed.contains(&opt) {
                continue;
            }
            if let Some(g) = self.get(opt) {
                if worst.is_none_or(|(_, p)| g.position < p) {
                    worst = Some((opt, g.position));
                }
            }
        }
        worst
    }
}

fn scan(args: &[String]) -> Result<Scanned, UsageError> {
    let mut out = Scanned::default();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let position = i + 1;
        if arg == "--" {
            if i + 1 != args.len() {
                return Err(usage_at("nothing may follow the final --", position + 1));
            }
            out.terminator = Some(position);
            break;
        }
        // PROFILE §15 "Option syntax": `--opt=value`, `--opt=` an empty value.
        let (key, inline) = match arg.strip_prefix("--").and_then(|rest| rest.split_once('=')) {
            Some((name, value)) => (&arg[..name.len() + 2], Some(value)),
            None => (arg.as_str(), None),
        };
        if inline.is_some() {
            out.first_inline.get_or_insert(position);
        }
        if let Some(index) = sdk_args::OTHER.iter().position(|(s, _, _)| *s == key) {
            let (name, takes_value, _) = sdk_args::OTHER[index];
            take_value(args, &mut i, name, takes_value, inline, position)?;
            if out.other.iter().any(|&(j, _)| j == index) {
                return Err(usage_at(format!("{name} given more than once"), position));
            }
            out.other.push((index, position));
            i += 1;
            continue;
        }
        let Some(&(name, opt, takes_value)) = OPTIONS.iter().find(|(s, _, _)| *s == key) else {
            return Err(if arg.starts_with('-') {
                usage_at("unknown option", position)
            } else {
                usage_at("unexpected operand", position)
            });
        };
        let (value, value_position) =
            take_value(args, &mut i, name, takes_value, inline, position)?;
        let slot = &mut out.seen[opt as usize];
        if opt == Opt::McpConfig {
            // PROFILE §18: an exception to the once rule.
            out.mcp_configs
                .push((value.unwrap_or_default(), value_position));
            slot.get_or_insert(Given {
                position,
                value: None,
                value_position,
            });
        } else if opt == Opt::AddDir {
            out.add_dirs.push(PathBuf::from(value.unwrap_or_default()));
            slot.get_or_insert(Given {
                position,
                value: None,
                value_position,
            });
        } else if opt == Opt::Attach {
            // `--attach` repeats: the slot keeps the first position, the list every path.
            out.attach.push(PathBuf::from(value.unwrap_or_default()));
            slot.get_or_insert(Given {
                position,
                value: None,
                value_position,
            });
        } else if slot.is_some() {
            return Err(usage_at(format!("{name} given more than once"), position));
        } else {
            *slot = Some(Given {
                position,
                value,
                value_position,
            });
        }
        i += 1;
    }
    Ok(out)
}

/// The value of the option at `args[*i]`: the inline one of `--opt=value`, else the next
/// argument (taken verbatim, even when it looks like an option; `*i` moves to it), with its
/// position. A flag given as `--flag=…` is a usage error.
fn take_value(
    args: &[String],
    i: &mut usize,
    name: &str,
    takes_value: bool,
    inline: Option<&str>,
    position: usize,
) -> Result<(Option<String>, usize), UsageError> {
    match (takes_value, inline) {
        (false, None) => Ok((None, position)),
        (false, Some(_)) => Err(usage_at(format!("{name} takes no value"), position)),
        (true, Some(v)) => Ok((Some(v.to_owned()), position)),
        (true, None) => {
            *i += 1;
            match args.get(*i) {
                Some(v) => Ok((Some(v.clone()), position + 1)),
                None => Err(usage_at(format!("{name} needs a value"), position)),
            }
        }
    }
}

/// Parses the `agentx` arguments (without the program name) (PROFILE §2).
pub fn parse(args: &[String]) -> Result<AgentxArgs, UsageError> {
    let s = scan(args)?;
    for alone in [Opt::Version, Opt::Help] {
        if let Some(g) = s.get(alone) {
            if args.len() != 1 {
                return Err(usage_at(
                    format!("{} takes no other arguments", spelling(alone)),
                    g.position,
                ));
            }
            return Ok(if alone == Opt::Version {
                AgentxArgs::Version
            } else {
                AgentxArgs::Help
            });
        }
    }
    if s.has(Opt::ListProviders) {
        return list_providers(&s);
    }
    if let Some(p) = s.terminator {
        return Err(usage_at("-- is only valid with --list-providers", p));
    }
    if s.has(Opt::Prompt) {
        return one_shot(s);
    }
    if s.has(Opt::InputFormat) || s.has(Opt::OutputFormat) {
        return session(s);
    }
    if let Some(g) = s.get(Opt::Attach) {
        return Err(usage_at("--attach needs -p PROMPT", g.position));
    }
    Err(usage_error(
        "no mode given: use --list-providers, --input-format stream-json --output-format \
         stream-json, -p PROMPT, --version or --help",
    ))
}

fn not_valid(opt: Opt, position: usize, mode: &str) -> UsageError {
    usage_at(format!("{} is not valid {mode}", spelling(opt)), position)
}

/// An SDK option of [`sdk_args::OTHER`] outside the SDK profile.
fn reject_other(s: &Scanned, mode: &str) -> Result<(), UsageError> {
    match s.other.first() {
        Some(&(i, p)) => Err(usage_at(
            format!("{} is not valid {mode}", sdk_args::OTHER[i].0),
            p,
        )),
        None => Ok(()),
    }
}

fn list_providers(s: &Scanned) -> Result<AgentxArgs, UsageError> {
    // `--list-providers` keeps its two-token grammar: `--output-format=json` is no option of
    // it (its tests pin this).
    if let Some(p) = s.first_inline {
        return Err(usage_at("unknown option", p));
    }
    if let Some((opt, p)) = s.first_outside(&[Opt::ListProviders, Opt::OutputFormat]) {
        return Err(not_valid(opt, p, "with --list-providers"));
    }
    reject_other(s, "with --list-providers")?;
    let format = match s.value(Opt::OutputFormat) {
        None => Format::Text,
        Some(("text", _)) => Format::Text,
        Some(("json", _)) => Format::Json,
        Some((_, p)) => {
            return Err(usage_at(
                "--output-format takes text or json with --list-providers",
                p,
            ))
        }
    };
    Ok(AgentxArgs::ListProviders { format })
}

/// Every `--mcp-config` (PROFILE §18): JSON text is checked here; a file is read at startup.
fn mcp_configs(s: &Scanned) -> Result<Vec<sdk_args::McpConfigArg>, UsageError> {
    let mut out = Vec::new();
    for (v, p) in &s.mcp_configs {
        out.push(if v.starts_with('{') {
            sdk_args::McpConfigArg::Servers(
                agentx_core::session::mcp_config::servers_of_config(v)
                    .map_err(|e| usage_at(format!("--mcp-config: {e}"), *p))?,
            )
        } else {
            sdk_args::McpConfigArg::File(PathBuf::from(v), *p)
        });
    }
    Ok(out)
}

fn common(s: &Scanned) -> Result<CommonArgs, UsageError> {
    let permission_mode = match s.value(Opt::PermissionMode) {
        None => None,
        Some((v, p)) => Some(PermissionMode::from_name(v).ok_or_else(|| {
            usage_at(
                "--permission-mode takes default, acceptEdits, plan or bypassPermissions",
                p,
            )
        })?),
    };
    let owned = |opt| s.value(opt).map(|(v, _)| v.to_owned());
    Ok(CommonArgs {
        provider: owned(Opt::Provider),
        permission_mode,
        include_partial_messages: s.flag(Opt::IncludePartialMessages),
        resume: owned(Opt::Resume),
        cwd: owned(Opt::Cwd).map(PathBuf::from),
        no_attachments: s.flag(Opt::NoAttachments),
    })
}

/// Options both modes share.
const COMMON: [Opt; 6] = [
    Opt::Provider,
    Opt::PermissionMode,
    Opt::IncludePartialMessages,
    Opt::Resume,
    Opt::Cwd,
    Opt::NoAttachments,
];

fn one_shot(s: Scanned) -> Result<AgentxArgs, UsageError> {
    let mut allowed = COMMON.to_vec();
    allowed.extend([Opt::Prompt, Opt::Attach, Opt::OutputFormat]);
    if let Some((opt, p)) = s.first_outside(&allowed) {
        return Err(not_valid(opt, p, "with -p"));
    }
    reject_other(&s, "with -p")?;
    let output_format = match s.value(Opt::OutputFormat) {
        None | Some(("text", _)) => OneShotFormat::Text,
        Some(("json", _)) => OneShotFormat::Json,
        Some(("stream-json", _)) => OneShotFormat::StreamJson,
        Some((_, p)) => {
            return Err(usage_at(
                "--output-format takes text, json or stream-json with -p",
                p,
            ))
        }
    };
    let common = common(&s)?;
    let prompt = s
        .value(Opt::Prompt)
        .map(|(v, _)| v.to_owned())
        .unwrap_or_default();
    Ok(AgentxArgs::OneShot(OneShotArgs {
        common,
        prompt,
        attach: s.attach,
        output_format,
    }))
}

fn session(s: Scanned) -> Result<AgentxArgs, UsageError> {
    let mut allowed = COMMON.to_vec();
    allowed.extend([
        Opt::InputFormat,
        Opt::OutputFormat,
        Opt::ReplayUserMessages,
        // PROFILE §18: the user's MCP servers in both profiles.
        Opt::McpConfig,
    ]);
    allowed.extend(SDK_ONLY);
    if let Some((opt, p)) = s.first_outside(&allowed) {
        return Err(not_valid(opt, p, "in stream-json mode"));
    }
    let verbose = s.flag(Opt::Verbose);
    if !verbose {
        // The standalone profile stays exactly as strict (PROFILE §15).
        if let Some((name, p)) = s.first_sdk_option() {
            return Err(usage_at(
                format!("{name} is only valid with --verbose (the Claude Agent SDK profile)"),
                p,
            ));
        }
    }
    for opt in [Opt::InputFormat, Opt::OutputFormat] {
        match s.value(opt) {
            Some(("stream-json", _)) => {}
            Some((_, p)) => {
                return Err(usage_at(
                    format!("{} takes stream-json without -p", spelling(opt)),
                    p,
                ))
            }
            None => {
                return Err(usage_error(format!(
                    "stream-json mode needs {} stream-json",
                    spelling(opt)
                )))
            }
        }
    }
    let session = SessionArgs {
        common: common(&s)?,
        replay_user_messages: s.flag(Opt::ReplayUserMessages),
        mcp_configs: mcp_configs(&s)?,
    };
    if !verbose {
        return Ok(AgentxArgs::Session(session));
    }
    Ok(AgentxArgs::SdkSession(Box::new(SdkSessionArgs {
        session,
        sdk: sdk(s)?,
    })))
}

/// The SDK options (PROFILE §15), typed; a refused one is a usage error naming it and why.
fn sdk(s: Scanned) -> Result<SdkArgs, UsageError> {
    let mut ignored = Vec::new();
    for &(i, p) in &s.other {
        match sdk_args::OTHER[i] {
            (name, _, Disposition::Refused(why)) => {
                return Err(usage_at(format!("{name} is not supported: {why}"), p))
            }
            (name, _, Disposition::Ignored) => ignored.push(name),
        }
    }
    if let (Some(_), Some(g)) = (s.get(Opt::SystemPrompt), s.get(Opt::SystemPromptFile)) {
        return Err(usage_at(
            "--system-prompt-file and --system-prompt exclude each other",
            g.position,
        ));
    }
    let owned = |opt| s.value(opt).map(|(v, _)| v.to_owned());
    let parsed = |opt, what: &str, f: &dyn Fn(&str) -> bool| match s.value(opt) {
        Some((v, p)) if !f(v) => Err(usage_at(format!("{} takes {what}", spelling(opt)), p)),
        other => Ok(other.map(|(v, _)| v.to_owned())),
    };
    let permission_prompt_tool = parsed(
        Opt::PermissionPromptTool,
        "stdio (MCP permission-prompt tools are not supported)",
        &|v| v == "stdio",
    )?
    .is_some();
    let permission_prompts = match s.value(Opt::PermissionPrompts) {
        None => None,
        Some(("host", _)) => Some(PermissionPrompts::Host),
        Some(("none", _)) => Some(PermissionPrompts::None),
        Some((_, p)) => {
            return Err(usage_at("--permission-prompts takes host or none", p));
        }
    };
    let nonempty = |v: &str| !v.is_empty();
    let model = parsed(Opt::Model, "a model name", &nonempty)?;
    let effort = parsed(Opt::Effort, "an effort name", &nonempty)?;
    let max_turns = match s.value(Opt::MaxTurns) {
        None => None,
        Some((v, p)) => Some(
            sdk_args::max_turns(v)
                .ok_or_else(|| usage_at("--max-turns takes a positive integer", p))?,
        ),
    };
    let max_budget_usd =
        match s.value(Opt::MaxBudgetUsd) {
            None => None,
            Some((v, p)) => Some(agentx_core::session::Budget::parse(v).ok_or_else(|| {
                usage_at("--max-budget-usd takes a decimal number of US dollars", p)
            })?),
        };
    let session_id = parsed(
        Opt::SessionId,
        "a canonical UUID",
        &agentx_wire::wire::grammar::is_canonical_uuid,
    )?;
    let setting_sources = match s.value(Opt::SettingSources) {
        None => None,
        Some((v, p)) => Some(sdk_args::setting_sources(v).ok_or_else(|| {
            usage_at(
                "--setting-sources takes a comma-separated list of user, project and local",
                p,
            )
        })?),
    };
    let list = |opt| match s.value(opt) {
        None => Ok(None),
        Some((v, p)) => agentx_core::session::tool_rules::parse_rules(v)
            .map(Some)
            .map_err(|e| usage_at(format!("{}: {e}", spelling(opt)), p)),
    };
    let tools = match s.value(Opt::Tools) {
        None => None,
        Some((v, p)) => {
            Some(sdk_args::tool_selection(v).map_err(|e| usage_at(format!("--tools: {e}"), p))?)
        }
    };
    // PROFILE §16: the schema is checked and compiled here, so a bad one is a usage error that
    // names the option (never its value).
    let json_schema = match s.value(Opt::JsonSchema) {
        None => None,
        Some((v, p)) => Some(OutputSchema::compile(v).map_err(|e| {
            let why = match e {
                SchemaError::NotJson(_) => "it is not JSON",
                SchemaError::Invalid(_) => "it is not a valid schema",
            };
            usage_at(
                format!("--json-schema takes a JSON Schema (drafts 7 and 2020-12): {why}"),
                p,
            )
        })?),
    };
    Ok(SdkArgs {
        json_schema,
        system_prompt: owned(Opt::SystemPrompt),
        system_prompt_file: owned(Opt::SystemPromptFile).map(PathBuf::from),
        append_system_prompt: owned(Opt::AppendSystemPrompt),
        permission_prompt_tool,
        permission_prompts,
        model,
        effort,
        max_turns,
        max_budget_usd,
        tools,
        allowed_tools: list(Opt::AllowedTools)?,
        disallowed_tools: list(Opt::DisallowedTools)?,
        add_dirs: s.add_dirs.clone(),
        continue_session: s.flag(Opt::Continue),
        fork_session: s.flag(Opt::ForkSession),
        session_id,
        setting_sources,
        no_session_persistence: s.flag(Opt::NoSessionPersistence),
        ignored,
    })
}

#[cfg(test)]
#[path = "agentx_args_tests.rs"]
mod tests;
