//! The prelaunch discovery command line (WIRE-026, PROFILE §2):
//! `agentx --list-providers [--output-format text|json] [--]`.
//!
//! Owns: the grammar (the selector and the optional format in either order, each once, an
//! optional final bare `--`, nothing else: no prompt, no `--help`, no `--version`) and the
//! pure discovery step from a loaded registry to the exact validated stdout bytes.
//!
//! Must never: construct a provider or a session, make a selection, or echo an argument (a
//! misplaced prompt may hold anything); usage errors name argument positions only.

use std::fmt;

use super::catalog::{Catalog, Format};
use super::error::Error;
use super::registry::Registry;

/// The selector that makes an invocation a discovery.
pub const LIST_PROVIDERS: &str = "--list-providers";

/// The usage line of discovery.
pub const USAGE: &str = "usage: agentx --list-providers [--output-format text|json] [--]";

/// A discovery usage error; the binary prints it after `agentx: ` with [`USAGE`] and exits 2.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct UsageError {
    what: &'static str,
    position: Option<usize>,
}

impl UsageError {
    #[cold]
    fn new(what: &'static str, position: Option<usize>) -> UsageError {
        UsageError { what, position }
    }

    /// What was wrong, without the position.
    pub fn what(&self) -> &'static str {
        self.what
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "{} (argument {p})", self.what),
            None => f.write_str(self.what),
        }
    }
}

impl std::error::Error for UsageError {}

/// True when `args` (without the program name) ask for discovery: `--list-providers` appears
/// before any `--` terminator. Such an invocation is judged by [`parse_args`] alone.
pub fn is_discovery(args: &[String]) -> bool {
    args.iter()
        .take_while(|a| a.as_str() != "--")
        .any(|a| a == LIST_PROVIDERS)
}

/// Parses a discovery invocation (without the program name) into its output format.
pub fn parse_args(args: &[String]) -> Result<Format, UsageError> {
    let mut listed = false;
    let mut format: Option<Format> = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let position = i + 1;
        match arg.as_str() {
            "--" => {
                if i + 1 != args.len() {
                    return Err(UsageError::new(
                        "nothing may follow the final --",
                        Some(position + 1),
                    ));
                }
            }
            LIST_PROVIDERS => {
                if listed {
                    return Err(UsageError::new(
                        "--list-providers given more than once",
                        Some(position),
                    ));
                }
                listed = true;
            }
            "--output-format" => {
                if format.is_some() {
                    return Err(UsageError::new(
                        "--output-format given more than once",
                        Some(position),
                    ));
                }
                i += 1;
                let value = args.get(i).map(String::as_str);
                format = Some(output_format(value).ok_or_else(|| {
                    UsageError::new("--output-format takes text or json", Some(position + 1))
                })?);
            }
            "--help" | "-h" | "--version" => {
                return Err(UsageError::new(
                    "--help and --version are not valid with --list-providers",
                    Some(position),
                ))
            }
            a if a.starts_with('-') => {
                return Err(UsageError::new(
                    "unknown option with --list-providers",
                    Some(position),
                ))
            }
            _ => {
                return Err(UsageError::new(
                    "--list-providers takes no prompt or operand",
                    Some(position),
                ))
            }
        }
        i += 1;
    }
    if !listed {
        return Err(UsageError::new("--list-providers is required", None));
    }
    Ok(format.unwrap_or_default())
}

fn output_format(value: Option<&str>) -> Option<Format> {
    match value {
        Some("text") => Some(Format::Text),
        Some("json") => Some(Format::Json),
        _ => None,
    }
}

/// The whole discovery step over a loaded registry: the complete catalog (credential union,
/// collision rule) and the exact final bytes, validated before the caller writes any of them.
/// Makes no selection and constructs no provider or session (WIRE-026).
pub fn discover(registry: &Registry, format: Format) -> Result<Vec<u8>, Error> {
    Catalog::build(registry)?.discovery(format)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn grammar() {
        let ok = |a: &[&str]| parse_args(&v(a));
        assert_eq!(ok(&["--list-providers"]), Ok(Format::Text));
        assert_eq!(ok(&["--list-providers", "--"]), Ok(Format::Text));
        assert_eq!(
            ok(&["--list-providers", "--output-format", "json"]),
            Ok(Format::Json)
        );
        assert_eq!(
            ok(&["--output-format", "json", "--list-providers", "--"]),
            Ok(Format::Json)
        );
        assert_eq!(
            ok(&["--output-format", "text", "--list-providers"]),
            Ok(Format::Text)
        );
        for bad in [
            &["--list-providers", "--list-providers"][..],
            &["--list-providers", "--output-format"],
            &["--list-providers", "--output-format", "stream-json"],
            &[
                "--list-providers",
                "--output-format",
                "json",
                "--output-format",
                "json",
            ],
            &["--list-providers", "hello"],
            &["--list-providers", "--", "hello"],
            &["--list-providers", "--", "--"],
            &["--list-providers", "--help"],
            &["--list-providers", "--version"],
            &["--list-providers", "--provider", "a"],
            &["--list-providers", "--output-format=json"],
            &["--", "--list-providers"],
            &["--output-format", "json"],
            &[],
        ] {
            assert!(ok(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn usage_errors_echo_no_argument() {
        let e = parse_args(&v(&["--list-providers", "sk-secret-prompt"])).unwrap_err();
        assert!(!e.to_string().contains("sk-secret"), "{e}");
        assert_eq!(
            e.to_string(),
            "--list-providers takes no prompt or operand (argument 2)"
        );
    }

    #[test]
    fn detection() {
        assert!(is_discovery(&v(&[
            "--output-format",
            "json",
            "--list-providers"
        ])));
        assert!(!is_discovery(&v(&["--", "--list-providers"])));
        assert!(!is_discovery(&v(&["--version"])));
    }
}
