//! The `agentx-wire` command line (PROFILE §2), parsed once into a typed [`WireArgs`]:
//!
//! ```text
//! agentx-wire check [--level json|records] [--direction input|output] [--json] [FILE|-]
//! agentx-wire canon [--direction input|output] [--credentials FILE] [FILE|-]
//! agentx-wire attach [--home DIR] [--mime TYPE] [--name NAME] FILE
//! agentx-wire --help | -h | help
//! ```
//!
//! Owns: the grammar of every subcommand: long options in any order, each at most once,
//! `--opt V` or `--opt=V`, an optional `--` after which everything is an operand, `-` as an
//! operand meaning stdin, and the closed values. Any other shape is a [`UsageError`] (status 2).
//!
//! Must never: exit the process, touch the file system or the environment, or echo more than
//! 64 bytes of an argument (PROFILE §5).

use std::path::PathBuf;

use agentx_wire::wire::Direction;

/// What `agentx-wire` was asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireArgs {
    /// `agentx-wire check`.
    Check(CheckArgs),
    /// `agentx-wire canon`.
    Canon(CanonArgs),
    /// `agentx-wire attach`.
    Attach(AttachArgs),
    /// `--help` or `help`.
    Help,
}

/// `check`: the level (default `records`), the direction (default `output`), the JSON summary
/// flag and the input (`None` = stdin, also for `-`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckArgs {
    /// `--level json|records`.
    pub level: Level,
    /// `--direction input|output`.
    pub direction: Direction,
    /// `--json`: a JSON summary instead of text.
    pub json: bool,
    /// The input file; `None` reads stdin.
    pub file: Option<PathBuf>,
}

/// `canon`: the direction (default `output`), the credentials file and the input (`None` =
/// stdin, also for `-`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CanonArgs {
    /// `--direction input|output`.
    pub direction: Direction,
    /// `--credentials FILE`: one credential per line, refused in the output.
    pub credentials: Option<PathBuf>,
    /// The input file; `None` reads stdin.
    pub file: Option<PathBuf>,
}

/// `attach`: the AgentX home, the claimed MIME type, the display name and the one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachArgs {
    /// `--home DIR`: the AgentX home (default: `$AGENTX_HOME`, else `$HOME/.agentx`).
    pub home: Option<PathBuf>,
    /// `--mime TYPE`: the claimed MIME type (default: from the file's magic).
    pub mime: Option<String>,
    /// `--name NAME`: the display name (default: the file name).
    pub name: Option<String>,
    /// The file to admit.
    pub file: PathBuf,
}

/// The whole tool's usage.
pub const USAGE: &str = "usage: agentx-wire <check|canon|attach> [options] [FILE|-]\n  \
agentx-wire check [--level json|records] [--direction input|output] [--json] [FILE|-]\n  \
agentx-wire canon [--direction input|output] [--credentials FILE] [FILE|-]\n  \
agentx-wire attach [--home DIR] [--mime TYPE] [--name NAME] FILE";

/// The usage of `check`.
pub const CHECK_USAGE: &str =
    "usage: agentx-wire check [--level json|records] [--direction input|output] [--json] [FILE|-]";
/// The usage of `canon`.
pub const CANON_USAGE: &str =
    "usage: agentx-wire canon [--direction input|output] [--credentials FILE] [FILE|-]";
/// The usage of `attach`.
pub const ATTACH_USAGE: &str =
    "usage: agentx-wire attach [--home DIR] [--mime TYPE] [--name NAME] FILE";

/// How deep a line is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Framing, UTF-8 and strict JSON; the top-level value must be an object.
    Json,
    /// Also decoded as a record of the chosen direction.
    Records,
}

pub use super::usage::UsageError;

/// A usage error followed by the whole tool's usage (a subcommand narrows it).
#[cold]
fn usage_error(what: impl Into<String>) -> UsageError {
    UsageError::new(what, USAGE)
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<WireArgs, UsageError> {
    let Some((command, rest)) = args.split_first() else {
        return Err(usage_error("missing command"));
    };
    match command.as_str() {
        "check" => check(rest)
            .map(WireArgs::Check)
            .map_err(|e| e.with_usage(CHECK_USAGE)),
        "canon" => canon(rest)
            .map(WireArgs::Canon)
            .map_err(|e| e.with_usage(CANON_USAGE)),
        "attach" => attach(rest)
            .map(WireArgs::Attach)
            .map_err(|e| e.with_usage(ATTACH_USAGE)),
        "--help" | "-h" | "help" if rest.is_empty() => Ok(WireArgs::Help),
        "--help" | "-h" | "help" => Err(usage_error("--help takes no other arguments")),
        _ => Err(usage_error("unknown command")),
    }
}

fn check(args: &[String]) -> Result<CheckArgs, UsageError> {
    let a = Scanned::scan(
        args,
        &[("--level", true), ("--direction", true), ("--json", false)],
    )?;
    let level = match a.value("--level") {
        None | Some("records") => Level::Records,
        Some("json") => Level::Json,
        Some(_) => return Err(usage_error("--level takes json or records")),
    };
    Ok(CheckArgs {
        level,
        direction: a.direction()?,
        json: a.flag("--json"),
        file: a.stdin_or_file()?,
    })
}

fn canon(args: &[String]) -> Result<CanonArgs, UsageError> {
    let a = Scanned::scan(args, &[("--direction", true), ("--credentials", true)])?;
    Ok(CanonArgs {
        direction: a.direction()?,
        credentials: a.value("--credentials").map(PathBuf::from),
        file: a.stdin_or_file()?,
    })
}

fn attach(args: &[String]) -> Result<AttachArgs, UsageError> {
    let a = Scanned::scan(
        args,
        &[("--home", true), ("--mime", true), ("--name", true)],
    )?;
    let file = match a.operands.as_slice() {
        [one] => PathBuf::from(one),
        [] => return Err(usage_error("FILE is required")),
        _ => return Err(usage_error("exactly one FILE is expected")),
    };
    Ok(AttachArgs {
        home: a.value("--home").map(PathBuf::from),
        mime: a.value("--mime").map(str::to_owned),
        name: a.value("--name").map(str::to_owned),
        file,
    })
}

/// Scanned arguments: `(option, value)` pairs in order and the operands.
#[derive(Debug, Default)]
struct Scanned {
    options: Vec<(&'static str, Option<String>)>,
    operands: Vec<String>,
}

impl Scanned {
    /// Scans `args` against `table` (`(option, takes a value)`). Anything else starting with
    /// `-` (except a lone `-`, an operand) is a usage error, and so is a repeated option.
    fn scan(args: &[String], table: &[(&'static str, bool)]) -> Result<Scanned, UsageError> {
        let mut out = Scanned::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if arg == "--" {
                out.operands.extend(it.by_ref().cloned());
                break;
            }
            if !arg.starts_with('-') || arg == "-" {
                out.operands.push(arg.clone());
                continue;
            }
            let (given, inline) = match arg.split_once('=') {
                Some((n, v)) => (n, Some(v.to_owned())),
                None => (arg.as_str(), None),
            };
            let Some(&(name, takes_value)) = table.iter().find(|(n, _)| *n == given) else {
                return Err(usage_error(format!("unknown option {}", clip(given))));
            };
            if out.options.iter().any(|(n, _)| *n == name) {
                return Err(usage_error(format!("option {name} given more than once")));
            }
            let value = match (takes_value, inline) {
                (true, Some(v)) => Some(v),
                (true, None) => Some(
                    it.next()
                        .cloned()
                        .ok_or_else(|| usage_error(format!("option {name} needs a value")))?,
                ),
                (false, None) => None,
                (false, Some(_)) => {
                    return Err(usage_error(format!("option {name} takes no value")))
                }
            };
            out.options.push((name, value));
        }
        Ok(out)
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| *n == name)
    }

    fn direction(&self) -> Result<Direction, UsageError> {
        match self.value("--direction") {
            None | Some("output") => Ok(Direction::Output),
            Some("input") => Ok(Direction::Input),
            Some(_) => Err(usage_error("--direction takes input or output")),
        }
    }

    /// The single optional input operand: `None` for stdin (absent or `-`).
    fn stdin_or_file(&self) -> Result<Option<PathBuf>, UsageError> {
        match self.operands.as_slice() {
            [] => Ok(None),
            [one] if one == "-" => Ok(None),
            [one] => Ok(Some(PathBuf::from(one))),
            _ => Err(usage_error("expected at most one input file")),
        }
    }
}

/// At most 64 bytes of an argument in a diagnostic (PROFILE §5).
fn clip(s: &str) -> &str {
    agentx_wire::wire::responses::cut(s, agentx_wire::wire::responses::MAX_ECHO_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    fn err(a: &[&str]) -> String {
        match parse(&v(a)) {
            Ok(p) => panic!("{a:?} parsed as {p:?}"),
            Err(e) => e.what().to_string(),
        }
    }

    #[test]
    fn usage_is_the_subcommand_s() {
        let usage = |a: &[&str]| parse(&v(a)).unwrap_err().usage();
        assert_eq!(usage(&["check", "-x"]), CHECK_USAGE);
        assert_eq!(usage(&["canon", "-x"]), CANON_USAGE);
        assert_eq!(usage(&["attach"]), ATTACH_USAGE);
        assert_eq!(usage(&["nope"]), USAGE);
        for sub in [CHECK_USAGE, CANON_USAGE, ATTACH_USAGE] {
            assert!(USAGE.contains(sub.trim_start_matches("usage: ")), "{sub}");
        }
    }

    #[test]
    fn commands_and_help() {
        assert_eq!(parse(&v(&["--help"])), Ok(WireArgs::Help));
        assert_eq!(parse(&v(&["-h"])), Ok(WireArgs::Help));
        assert_eq!(parse(&v(&["help"])), Ok(WireArgs::Help));
        assert_eq!(err(&[]), "missing command");
        assert_eq!(err(&["nope"]), "unknown command");
        assert_eq!(err(&["--help", "check"]), "--help takes no other arguments");
    }

    #[test]
    fn check_defaults_values_flags_and_operands() {
        let check = |a: &[&str]| match parse(&v(a)) {
            Ok(WireArgs::Check(c)) => c,
            other => panic!("{a:?}: {other:?}"),
        };
        assert_eq!(
            check(&["check"]),
            CheckArgs {
                level: Level::Records,
                direction: Direction::Output,
                json: false,
                file: None,
            }
        );
        assert_eq!(
            check(&[
                "check",
                "--json",
                "f",
                "--direction=input",
                "--level",
                "json"
            ]),
            CheckArgs {
                level: Level::Json,
                direction: Direction::Input,
                json: true,
                file: Some(PathBuf::from("f")),
            }
        );
        assert_eq!(check(&["check", "-"]).file, None);
        assert_eq!(
            check(&["check", "--", "--json"]).file,
            Some("--json".into())
        );
        assert!(!check(&["check", "--", "--json"]).json);
        assert_eq!(
            check(&["check", "--level", "records"]).level,
            Level::Records
        );
        assert_eq!(
            check(&["check", "--direction", "output"]).direction,
            Direction::Output
        );
        for (bad, msg) in [
            (
                &["check", "--json", "--json"][..],
                "option --json given more than once",
            ),
            (&["check", "--level"], "option --level needs a value"),
            (
                &["check", "--level", "xml"],
                "--level takes json or records",
            ),
            (
                &["check", "--direction", "both"],
                "--direction takes input or output",
            ),
            (&["check", "-x"], "unknown option -x"),
            (&["check", "--json=1"], "option --json takes no value"),
            (&["check", "a", "b"], "expected at most one input file"),
            (
                &["check", "--credentials", "c"],
                "unknown option --credentials",
            ),
        ] {
            assert_eq!(err(bad), msg, "{bad:?}");
        }
    }

    #[test]
    fn canon_arguments() {
        assert_eq!(
            parse(&v(&[
                "canon",
                "--credentials",
                "c",
                "--direction",
                "input",
                "in"
            ])),
            Ok(WireArgs::Canon(CanonArgs {
                direction: Direction::Input,
                credentials: Some("c".into()),
                file: Some("in".into()),
            }))
        );
        assert_eq!(
            parse(&v(&["canon"])),
            Ok(WireArgs::Canon(CanonArgs {
                direction: Direction::Output,
                credentials: None,
                file: None,
            }))
        );
        assert_eq!(err(&["canon", "--json"]), "unknown option --json");
        assert_eq!(
            err(&["canon", "--credentials"]),
            "option --credentials needs a value"
        );
    }

    #[test]
    fn attach_arguments() {
        assert_eq!(
            parse(&v(&[
                "attach",
                "--home",
                "/h",
                "--mime=image/png",
                "--name",
                "n",
                "f"
            ])),
            Ok(WireArgs::Attach(AttachArgs {
                home: Some("/h".into()),
                mime: Some("image/png".into()),
                name: Some("n".into()),
                file: "f".into(),
            }))
        );
        let Ok(WireArgs::Attach(a)) = parse(&v(&["attach", "--", "--f"])) else {
            panic!("attach")
        };
        assert_eq!(a.file, PathBuf::from("--f"));
        for (bad, msg) in [
            (&["attach"][..], "FILE is required"),
            (&["attach", "a", "b"], "exactly one FILE is expected"),
            (&["attach", "--bogus", "a"], "unknown option --bogus"),
            (&["attach", "--home"], "option --home needs a value"),
            (
                &["attach", "--name", "a", "--name", "b", "f"],
                "option --name given more than once",
            ),
        ] {
            assert_eq!(err(bad), msg, "{bad:?}");
        }
    }

    #[test]
    fn diagnostics_echo_at_most_64_bytes() {
        let long = format!("--{}", "é".repeat(100));
        let m = err(&["check", &long]);
        assert_eq!(m, format!("unknown option {}", clip(&long)));
        assert!(m.len() <= "unknown option ".len() + 64);
    }
}
