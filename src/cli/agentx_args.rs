//! The `agentx` command line (PROFILE §2), parsed once into a typed [`AgentxArgs`].
//!
//! Owns: the whole grammar of the `agentx` binary: the four modes (`--list-providers`, the
//! stream-json session, one-shot `-p`, `--version | --help`), which options each mode accepts,
//! their closed values, "any order, each at most once (`--attach` repeats)", and the usage
//! errors (an unknown or repeated option, a missing value, an operand, an option of another
//! mode: status 2).
//!
//! Must never: exit the process, read the environment or the file system, or echo an argument
//! in a diagnostic (a misplaced prompt or key may hold anything): a [`UsageError`] names only
//! the option from its own table and the argument's position.

use std::fmt;
use std::path::PathBuf;

use crate::provider::Format;
use crate::wire::permission::PermissionMode;

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
  agentx --version | --help

Options may come in any order, each at most once (--attach repeats).
Providers come from auth.json (version 2) in the AgentX home: $AGENTX_HOME, else $HOME/.agentx.
";

/// The short usage text printed after a usage error.
pub const USAGE: &str = "\
usage: agentx --list-providers [--output-format text|json] [--]
       agentx [--provider ID] --input-format stream-json --output-format stream-json [OPTIONS]
       agentx [--provider ID] -p PROMPT [--attach PATH]... [--output-format text|json|stream-json] [OPTIONS]
       agentx --version | --help";

/// What `agentx` was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentxArgs {
    /// `--list-providers [--output-format text|json] [--]` (WIRE-026).
    ListProviders {
        /// The listing format.
        format: Format,
    },
    /// `--input-format stream-json --output-format stream-json` (PROFILE §8).
    Session(SessionArgs),
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

/// A usage error (status 2). Its text names an option of the grammar and an argument position
/// (1-based, after the program name), never an argument's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError {
    what: String,
    position: Option<usize>,
}

impl UsageError {
    #[cold]
    fn at(what: impl Into<String>, position: usize) -> UsageError {
        UsageError {
            what: what.into(),
            position: Some(position),
        }
    }

    #[cold]
    fn general(what: impl Into<String>) -> UsageError {
        UsageError {
            what: what.into(),
            position: None,
        }
    }

    /// What was wrong, without the position.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// The 1-based position of the offending argument, when one is to blame.
    pub fn position(&self) -> Option<usize> {
        self.position
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "{} (argument {p})", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for UsageError {}

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
];

const OPT_COUNT: usize = 14;

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
}

/// The arguments after the generic scan: each option at most once (except `--attach`).
#[derive(Default)]
struct Scanned {
    seen: [Option<Given>; OPT_COUNT],
    attach: Vec<PathBuf>,
    /// The position of a final bare `--`.
    terminator: Option<usize>,
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
            .and_then(|g| g.value.as_deref().map(|v| (v, g.position + 1)))
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
                return Err(UsageError::at(
                    "nothing may follow the final --",
                    position + 1,
                ));
            }
            out.terminator = Some(position);
            break;
        }
        let Some(&(name, opt, takes_value)) = OPTIONS.iter().find(|(s, _, _)| *s == arg) else {
            return Err(if arg.starts_with('-') {
                UsageError::at("unknown option", position)
            } else {
                UsageError::at("unexpected operand", position)
            });
        };
        let value = if takes_value {
            i += 1;
            match args.get(i) {
                Some(v) => Some(v.clone()),
                None => return Err(UsageError::at(format!("{name} needs a value"), position)),
            }
        } else {
            None
        };
        let slot = &mut out.seen[opt as usize];
        if opt == Opt::Attach {
            // `--attach` repeats: the slot keeps the first position, the list every path.
            out.attach.push(PathBuf::from(value.unwrap_or_default()));
            slot.get_or_insert(Given {
                position,
                value: None,
            });
        } else if slot.is_some() {
            return Err(UsageError::at(
                format!("{name} given more than once"),
                position,
            ));
        } else {
            *slot = Some(Given { position, value });
        }
        i += 1;
    }
    Ok(out)
}

/// Parses the `agentx` arguments (without the program name) (PROFILE §2).
pub fn parse(args: &[String]) -> Result<AgentxArgs, UsageError> {
    let s = scan(args)?;
    for alone in [Opt::Version, Opt::Help] {
        if let Some(g) = s.get(alone) {
            if args.len() != 1 {
                return Err(UsageError::at(
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
        return Err(UsageError::at("-- is only valid with --list-providers", p));
    }
    if s.has(Opt::Prompt) {
        return one_shot(s);
    }
    if s.has(Opt::InputFormat) || s.has(Opt::OutputFormat) {
        return session(s);
    }
    if let Some(g) = s.get(Opt::Attach) {
        return Err(UsageError::at("--attach needs -p PROMPT", g.position));
    }
    Err(UsageError::general(
        "no mode given: use --list-providers, --input-format stream-json --output-format \
         stream-json, -p PROMPT, --version or --help",
    ))
}

fn not_valid(opt: Opt, position: usize, mode: &str) -> UsageError {
    UsageError::at(format!("{} is not valid {mode}", spelling(opt)), position)
}

fn list_providers(s: &Scanned) -> Result<AgentxArgs, UsageError> {
    if let Some((opt, p)) = s.first_outside(&[Opt::ListProviders, Opt::OutputFormat]) {
        return Err(not_valid(opt, p, "with --list-providers"));
    }
    let format = match s.value(Opt::OutputFormat) {
        None => Format::Text,
        Some(("text", _)) => Format::Text,
        Some(("json", _)) => Format::Json,
        Some((_, p)) => {
            return Err(UsageError::at(
                "--output-format takes text or json with --list-providers",
                p,
            ))
        }
    };
    Ok(AgentxArgs::ListProviders { format })
}

fn common(s: &Scanned) -> Result<CommonArgs, UsageError> {
    let permission_mode = match s.value(Opt::PermissionMode) {
        None => None,
        Some((v, p)) => Some(PermissionMode::from_name(v).ok_or_else(|| {
            UsageError::at(
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
    let output_format = match s.value(Opt::OutputFormat) {
        None | Some(("text", _)) => OneShotFormat::Text,
        Some(("json", _)) => OneShotFormat::Json,
        Some(("stream-json", _)) => OneShotFormat::StreamJson,
        Some((_, p)) => {
            return Err(UsageError::at(
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
    allowed.extend([Opt::InputFormat, Opt::OutputFormat, Opt::ReplayUserMessages]);
    if let Some((opt, p)) = s.first_outside(&allowed) {
        return Err(not_valid(opt, p, "in stream-json mode"));
    }
    for opt in [Opt::InputFormat, Opt::OutputFormat] {
        match s.value(opt) {
            Some(("stream-json", _)) => {}
            Some((_, p)) => {
                return Err(UsageError::at(
                    format!("{} takes stream-json without -p", spelling(opt)),
                    p,
                ))
            }
            None => {
                return Err(UsageError::general(format!(
                    "stream-json mode needs {} stream-json",
                    spelling(opt)
                )))
            }
        }
    }
    Ok(AgentxArgs::Session(SessionArgs {
        common: common(&s)?,
        replay_user_messages: s.flag(Opt::ReplayUserMessages),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn ok(a: &[&str]) -> AgentxArgs {
        parse(&v(a)).unwrap_or_else(|e| panic!("{a:?}: {e}"))
    }

    fn err(a: &[&str]) -> String {
        match parse(&v(a)) {
            Ok(parsed) => panic!("{a:?} parsed as {parsed:?}"),
            Err(e) => e.to_string(),
        }
    }

    const STREAM: [&str; 4] = [
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    ];

    #[test]
    fn version_and_help_stand_alone() {
        assert_eq!(ok(&["--version"]), AgentxArgs::Version);
        assert_eq!(ok(&["--help"]), AgentxArgs::Help);
        assert_eq!(
            err(&["--version", "--help"]),
            "--version takes no other arguments (argument 1)"
        );
        assert_eq!(
            err(&["--provider", "x", "--help"]),
            "--help takes no other arguments (argument 3)"
        );
        assert_eq!(
            err(&["--version", "--version"]),
            "--version given more than once (argument 2)"
        );
        assert_eq!(err(&["-h"]), "unknown option (argument 1)");
        assert_eq!(
            err(&["--version", "--"]),
            "--version takes no other arguments (argument 1)"
        );
    }

    #[test]
    fn list_providers_grammar() {
        let f = |format| AgentxArgs::ListProviders { format };
        assert_eq!(ok(&["--list-providers"]), f(Format::Text));
        assert_eq!(ok(&["--list-providers", "--"]), f(Format::Text));
        assert_eq!(
            ok(&["--list-providers", "--output-format", "json"]),
            f(Format::Json)
        );
        assert_eq!(
            ok(&["--output-format", "json", "--list-providers", "--"]),
            f(Format::Json)
        );
        assert_eq!(
            ok(&["--output-format", "text", "--list-providers"]),
            f(Format::Text)
        );
        for (bad, msg) in [
            (
                &["--list-providers", "--list-providers"][..],
                "--list-providers given more than once (argument 2)",
            ),
            (
                &["--list-providers", "--output-format"],
                "--output-format needs a value (argument 2)",
            ),
            (
                &["--list-providers", "--output-format", "stream-json"],
                "--output-format takes text or json with --list-providers (argument 3)",
            ),
            (
                &[
                    "--list-providers",
                    "--output-format",
                    "json",
                    "--output-format",
                    "json",
                ],
                "--output-format given more than once (argument 4)",
            ),
            (
                &["--list-providers", "hello"],
                "unexpected operand (argument 2)",
            ),
            (
                &["--list-providers", "--", "hello"],
                "nothing may follow the final -- (argument 3)",
            ),
            (
                &["--list-providers", "--", "--"],
                "nothing may follow the final -- (argument 3)",
            ),
            (
                &["--list-providers", "--help"],
                "--help takes no other arguments (argument 2)",
            ),
            (
                &["--list-providers", "--provider", "a"],
                "--provider is not valid with --list-providers (argument 2)",
            ),
            (
                &["--list-providers", "--attach", "a"],
                "--attach is not valid with --list-providers (argument 2)",
            ),
            (
                &["--list-providers", "-p", "a"],
                "-p is not valid with --list-providers (argument 2)",
            ),
            (
                &["--list-providers", "--output-format=json"],
                "unknown option (argument 2)",
            ),
            (
                &["--", "--list-providers"],
                "nothing may follow the final -- (argument 2)",
            ),
            (
                &["--list-providers", "--version"],
                "--version takes no other arguments (argument 2)",
            ),
            (
                &["--output-format", "json"],
                "stream-json mode needs --input-format stream-json",
            ),
        ] {
            assert_eq!(err(bad), msg, "{bad:?}");
        }
    }

    #[test]
    fn stream_json_session_with_every_option_in_any_order() {
        assert_eq!(ok(&STREAM), AgentxArgs::Session(SessionArgs::default()));
        let full = ok(&[
            "--cwd",
            "/w",
            "--no-attachments",
            "--output-format",
            "stream-json",
            "--resume",
            "0b5e0c2e-8f7a-4b1c-9d3e-2a6f4c8b1d7e",
            "--replay-user-messages",
            "--permission-mode",
            "acceptEdits",
            "--include-partial-messages",
            "--input-format",
            "stream-json",
            "--provider",
            "local",
        ]);
        assert_eq!(
            full,
            AgentxArgs::Session(SessionArgs {
                common: CommonArgs {
                    provider: Some("local".into()),
                    permission_mode: Some(PermissionMode::AcceptEdits),
                    include_partial_messages: true,
                    resume: Some("0b5e0c2e-8f7a-4b1c-9d3e-2a6f4c8b1d7e".into()),
                    cwd: Some(PathBuf::from("/w")),
                    no_attachments: true,
                },
                replay_user_messages: true,
            })
        );
        for mode in PermissionMode::ALL {
            let mut a = STREAM.to_vec();
            a.extend(["--permission-mode", mode.as_str()]);
            let AgentxArgs::Session(s) = ok(&a) else {
                panic!("not a session")
            };
            assert_eq!(s.common.permission_mode(), *mode);
        }
        let AgentxArgs::Session(s) = ok(&STREAM) else {
            panic!("not a session")
        };
        assert_eq!(s.common.permission_mode(), PermissionMode::Default);
    }

    #[test]
    fn stream_json_session_usage_errors() {
        let with = |extra: &[&'static str]| {
            let mut a = STREAM.to_vec();
            a.extend_from_slice(extra);
            err(&a)
        };
        assert_eq!(
            with(&["--attach", "f"]),
            "--attach is not valid in stream-json mode (argument 5)"
        );
        assert_eq!(
            with(&["--"]),
            "-- is only valid with --list-providers (argument 5)"
        );
        assert_eq!(with(&["prompt"]), "unexpected operand (argument 5)");
        assert_eq!(with(&["--bogus"]), "unknown option (argument 5)");
        assert_eq!(
            with(&["--replay-user-messages", "--replay-user-messages"]),
            "--replay-user-messages given more than once (argument 6)"
        );
        assert_eq!(with(&["--cwd"]), "--cwd needs a value (argument 5)");
        assert_eq!(
            with(&["--permission-mode", "auto"]),
            "--permission-mode takes default, acceptEdits, plan or bypassPermissions (argument 6)"
        );
        assert_eq!(
            with(&["--permission-mode", "Plan"]),
            "--permission-mode takes default, acceptEdits, plan or bypassPermissions (argument 6)"
        );
        assert_eq!(
            err(&["--input-format", "stream-json"]),
            "stream-json mode needs --output-format stream-json"
        );
        assert_eq!(
            err(&["--output-format", "stream-json"]),
            "stream-json mode needs --input-format stream-json"
        );
        assert_eq!(
            err(&["--input-format", "text", "--output-format", "stream-json"]),
            "--input-format takes stream-json without -p (argument 2)"
        );
        assert_eq!(
            err(&["--input-format", "stream-json", "--output-format", "json"]),
            "--output-format takes stream-json without -p (argument 4)"
        );
        assert_eq!(
            err(&["--provider", "local"]),
            "no mode given: use --list-providers, --input-format stream-json --output-format \
             stream-json, -p PROMPT, --version or --help"
        );
        assert_eq!(err(&[]), err(&["--provider", "local"]));
    }

    #[test]
    fn one_shot_with_repeated_attach_and_every_option() {
        assert_eq!(
            ok(&["-p", "hi"]),
            AgentxArgs::OneShot(OneShotArgs {
                prompt: "hi".into(),
                ..OneShotArgs::default()
            })
        );
        let full = ok(&[
            "--attach",
            "a.png",
            "--output-format",
            "stream-json",
            "-p",
            "--list-providers",
            "--attach",
            "b.pdf",
            "--provider",
            "openai",
            "--permission-mode",
            "plan",
            "--include-partial-messages",
            "--resume",
            "id",
            "--cwd",
            "/tmp",
            "--no-attachments",
            "--attach",
            "a.png",
        ]);
        assert_eq!(
            full,
            AgentxArgs::OneShot(OneShotArgs {
                common: CommonArgs {
                    provider: Some("openai".into()),
                    permission_mode: Some(PermissionMode::Plan),
                    include_partial_messages: true,
                    resume: Some("id".into()),
                    cwd: Some(PathBuf::from("/tmp")),
                    no_attachments: true,
                },
                // A value is taken verbatim, even when it looks like an option.
                prompt: "--list-providers".into(),
                attach: ["a.png", "b.pdf", "a.png"].map(PathBuf::from).to_vec(),
                output_format: OneShotFormat::StreamJson,
            })
        );
        for (text, format) in [
            ("text", OneShotFormat::Text),
            ("json", OneShotFormat::Json),
            ("stream-json", OneShotFormat::StreamJson),
        ] {
            let AgentxArgs::OneShot(o) = ok(&["-p", "x", "--output-format", text]) else {
                panic!("not one-shot")
            };
            assert_eq!(o.output_format, format);
        }
        let AgentxArgs::OneShot(o) = ok(&["-p", ""]) else {
            panic!("not one-shot")
        };
        assert_eq!(o.prompt, "");
    }

    #[test]
    fn one_shot_usage_errors() {
        for (bad, msg) in [
            (&["-p"][..], "-p needs a value (argument 1)"),
            (
                &["-p", "a", "-p", "b"],
                "-p given more than once (argument 3)",
            ),
            (
                &["-p", "a", "--attach"],
                "--attach needs a value (argument 3)",
            ),
            (
                &["-p", "a", "--output-format", "yaml"],
                "--output-format takes text, json or stream-json with -p (argument 4)",
            ),
            (
                &["-p", "a", "--input-format", "stream-json"],
                "--input-format is not valid with -p (argument 3)",
            ),
            (
                &["--replay-user-messages", "-p", "a"],
                "--replay-user-messages is not valid with -p (argument 1)",
            ),
            (&["-p", "a", "extra"], "unexpected operand (argument 3)"),
            (
                &["-p", "a", "--"],
                "-- is only valid with --list-providers (argument 3)",
            ),
            (&["--prompt", "a"], "unknown option (argument 1)"),
            (&["-p=a"], "unknown option (argument 1)"),
            (&["--attach", "f"], "--attach needs -p PROMPT (argument 1)"),
            (
                &["--resume", "a", "-p", "x", "--resume", "b"],
                "--resume given more than once (argument 5)",
            ),
        ] {
            assert_eq!(err(bad), msg, "{bad:?}");
        }
    }

    #[test]
    fn usage_errors_echo_no_argument() {
        for bad in [
            &["sk-secret-operand"][..],
            &["--sk-secret-option"],
            &["-p", "x", "--output-format", "sk-secret-format"],
            &["--permission-mode", "sk-secret-mode", "-p", "x"],
            &["--list-providers", "sk-secret-prompt"],
        ] {
            let e = err(bad);
            assert!(!e.contains("sk-secret"), "{e}");
        }
    }
}
