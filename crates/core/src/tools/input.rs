//! Tool input grammar: the model's `tool_use` input (compact JSON text) → a [`ToolCall`].
//! Closed objects: an unknown member, a wrong type or a missing required member is invalid
//! input (PROFILE §10, §17), reported as an `is_error` `tool_result` without a permission
//! prompt. The coding tools' members are parsed in [`super::coding`].

use std::fmt;

use super::coding::{self, GrepInput, Todo};
use super::members::{nonempty_string, string};
use super::{BASH_MAX_TIMEOUT_MS, NAMES};
use agentx_wire::json::{self, Kind, Object};

/// One validated tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolCall {
    /// `Read`: a file, or part of it.
    Read {
        /// The file, absolute or relative to the working directory.
        file_path: String,
        /// The first line to read, from 1.
        offset: Option<u64>,
        /// How many lines to read.
        limit: Option<u64>,
    },
    /// `Write`: create or replace a file.
    Write {
        /// The file, absolute or relative to the working directory.
        file_path: String,
        /// The new content.
        content: String,
    },
    /// `Bash`: one shell command in its own process group.
    Bash {
        /// The command line.
        command: String,
        /// The timeout in milliseconds (default and cap in `tools::bash`).
        timeout_ms: Option<u64>,
        /// What the command does (PROFILE §17: kept in the input, shown in nothing).
        description: Option<String>,
    },
    /// `Edit`: replace `old_string` by `new_string` in a file (PROFILE §17).
    Edit {
        /// The file, absolute or relative to the working directory.
        file_path: String,
        /// The text to replace (empty: create the file).
        old_string: String,
        /// The replacement.
        new_string: String,
        /// Replace every occurrence (default: exactly one must exist).
        replace_all: bool,
    },
    /// `Glob`: files whose path matches a pattern, newest first (PROFILE §17).
    Glob {
        /// The glob pattern.
        pattern: String,
        /// The directory to search (default the cwd).
        path: Option<String>,
    },
    /// `Grep`: ripgrep's search (PROFILE §17).
    Grep(Box<GrepInput>),
    /// `TodoWrite`: replaces the session's todo list (PROFILE §17).
    TodoWrite {
        /// The new list.
        todos: Vec<Todo>,
    },
}

/// Why a `tool_use` cannot run; its `Display` is the `tool_result` content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolError {
    /// Not one of [`NAMES`] (the name is echoed at most 64 bytes, PROFILE §5).
    UnknownTool(String),
    /// The input is not a valid object for the tool.
    InvalidInput {
        /// The tool's name.
        tool: &'static str,
        /// What is wrong with the input.
        reason: String,
    },
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::UnknownTool(name) => write!(f, "unknown tool \"{}\"", clip(name, 64)),
            ToolError::InvalidInput { tool, reason } => {
                write!(f, "invalid input for {tool}: {reason}")
            }
        }
    }
}

/// At most `max` bytes of `s`, cut at a character boundary (PROFILE §5, one definition).
pub(crate) use agentx_wire::wire::responses::cut as clip;

impl ToolCall {
    /// Validates `input` (JSON text) for tool `name`.
    pub fn parse(name: &str, input: &str) -> Result<ToolCall, ToolError> {
        let tool: &'static str = NAMES
            .iter()
            .copied()
            .find(|n| *n == name)
            .ok_or_else(|| ToolError::UnknownTool(name.to_owned()))?;
        let bad = |reason: &str| ToolError::InvalidInput {
            tool,
            reason: reason.to_owned(),
        };
        let doc = json::parse(input.as_bytes()).map_err(|_| bad("not valid JSON"))?;
        let root = doc.root();
        let obj = root.as_object().ok_or_else(|| bad("not an object"))?;
        let allowed: &[&str] = match tool {
            "Read" => &["file_path", "offset", "limit"],
            "Write" => &["file_path", "content"],
            "Edit" => &["file_path", "old_string", "new_string", "replace_all"],
            "Glob" => &["pattern", "path"],
            "Grep" => &[
                "pattern",
                "path",
                "glob",
                "type",
                "output_mode",
                "-i",
                "-n",
                "-o",
                "-A",
                "-B",
                "-C",
                "context",
                "multiline",
                "head_limit",
                "offset",
            ],
            "TodoWrite" => &["todos"],
            _ => &["command", "timeout_ms", "description"],
        };
        if obj.unknown_member(allowed).is_some() {
            return Err(bad("unknown member"));
        }
        match tool {
            "Read" => Ok(ToolCall::Read {
                file_path: nonempty_string(&obj, "file_path").map_err(|r| bad(&r))?,
                offset: positive(&obj, "offset", u64::MAX).map_err(|r| bad(&r))?,
                limit: positive(&obj, "limit", u64::MAX).map_err(|r| bad(&r))?,
            }),
            "Write" => Ok(ToolCall::Write {
                file_path: nonempty_string(&obj, "file_path").map_err(|r| bad(&r))?,
                content: string(&obj, "content").map_err(|r| bad(&r))?,
            }),
            "Edit" => Ok(ToolCall::Edit {
                file_path: nonempty_string(&obj, "file_path").map_err(|r| bad(&r))?,
                old_string: string(&obj, "old_string").map_err(|r| bad(&r))?,
                new_string: string(&obj, "new_string").map_err(|r| bad(&r))?,
                replace_all: coding::flag(&obj, "replace_all")
                    .map_err(|r| bad(&r))?
                    .unwrap_or(false),
            }),
            "Glob" => Ok(ToolCall::Glob {
                pattern: nonempty_string(&obj, "pattern").map_err(|r| bad(&r))?,
                path: optional_path(&obj).map_err(|r| bad(&r))?,
            }),
            "Grep" => Ok(ToolCall::Grep(Box::new(
                coding::parse_grep(&obj).map_err(|r| bad(&r))?,
            ))),
            "TodoWrite" => Ok(ToolCall::TodoWrite {
                todos: coding::parse_todos(&obj).map_err(|r| bad(&r))?,
            }),
            _ => Ok(ToolCall::Bash {
                command: nonempty_string(&obj, "command").map_err(|r| bad(&r))?,
                timeout_ms: positive(&obj, "timeout_ms", BASH_MAX_TIMEOUT_MS)
                    .map_err(|r| bad(&r))?,
                description: coding::opt_string(&obj, "description").map_err(|r| bad(&r))?,
            }),
        }
    }

    /// The tool's name.
    pub fn name(&self) -> &'static str {
        match self {
            ToolCall::Read { .. } => "Read",
            ToolCall::Write { .. } => "Write",
            ToolCall::Bash { .. } => "Bash",
            ToolCall::Edit { .. } => "Edit",
            ToolCall::Glob { .. } => "Glob",
            ToolCall::Grep(_) => "Grep",
            ToolCall::TodoWrite { .. } => "TodoWrite",
        }
    }

    /// The file a `Read`, `Write` or `Edit` touches, or the directory (or file) a `Glob` or
    /// `Grep` searches when given (as given, unresolved).
    pub fn file_path(&self) -> Option<&str> {
        match self {
            ToolCall::Read { file_path, .. }
            | ToolCall::Write { file_path, .. }
            | ToolCall::Edit { file_path, .. } => Some(file_path),
            ToolCall::Glob { path, .. } => path.as_deref(),
            ToolCall::Grep(g) => g.path.as_deref(),
            ToolCall::Bash { .. } | ToolCall::TodoWrite { .. } => None,
        }
    }

    /// The safe summary of a permission prompt (PERM-021, PROFILE §10): `Read <file_path>`,
    /// `Write <file_path>`, `Bash: <first 64 bytes of the command>`.
    pub fn description(&self) -> String {
        match self {
            ToolCall::Read { file_path, .. } => format!("Read {file_path}"),
            ToolCall::Write { file_path, .. } => format!("Write {file_path}"),
            ToolCall::Bash { command, .. } => format!("Bash: {}", clip(command, 64)),
            ToolCall::Edit { file_path, .. } => format!("Edit {file_path}"),
            ToolCall::Glob { pattern, .. } => format!("Glob {}", clip(pattern, 64)),
            ToolCall::Grep(g) => format!("Grep {}", clip(&g.pattern, 64)),
            ToolCall::TodoWrite { .. } => "TodoWrite".into(),
        }
    }
}

/// `path` of `Glob`: optional, nonempty; `null` is absent.
fn optional_path(obj: &Object<'_, '_>) -> Result<Option<String>, String> {
    match obj.get("path") {
        None => Ok(None),
        Some(v) if v.kind() == Kind::Null => Ok(None),
        Some(_) => nonempty_string(obj, "path").map(Some),
    }
}

/// An optional integer in `1..=max`; `null` is absent.
fn positive(obj: &Object<'_, '_>, name: &str, max: u64) -> Result<Option<u64>, String> {
    let Some(v) = obj.get(name) else {
        return Ok(None);
    };
    if v.kind() == Kind::Null {
        return Ok(None);
    }
    match v.as_number().and_then(|n| n.as_u64()) {
        Some(n) if (1..=max).contains(&n) => Ok(Some(n)),
        _ => Err(format!("{name} must be an integer from 1 to {max}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_inputs() {
        assert_eq!(
            ToolCall::parse("Read", r#"{"file_path":"a.txt","offset":2,"limit":3}"#),
            Ok(ToolCall::Read {
                file_path: "a.txt".into(),
                offset: Some(2),
                limit: Some(3)
            })
        );
        assert_eq!(
            ToolCall::parse("Write", r#"{"file_path":"b","content":"x\ny"}"#),
            Ok(ToolCall::Write {
                file_path: "b".into(),
                content: "x\ny".into()
            })
        );
        assert_eq!(
            ToolCall::parse("Bash", r#"{"command":"ls","timeout_ms":600000}"#),
            Ok(ToolCall::Bash {
                command: "ls".into(),
                timeout_ms: Some(600_000),
                description: None,
            })
        );
        assert_eq!(
            ToolCall::parse("Read", r#"{"file_path":"a","offset":null}"#),
            Ok(ToolCall::Read {
                file_path: "a".into(),
                offset: None,
                limit: None
            })
        );
    }

    #[test]
    fn invalid_inputs_name_the_reason() {
        for (tool, input, msg) in [
            ("Fetch", "{}", "unknown tool \"Fetch\""),
            (
                "Read",
                "{}",
                "invalid input for Read: file_path is required",
            ),
            (
                "Read",
                r#"{"file_path":1}"#,
                "invalid input for Read: file_path must be a string",
            ),
            (
                "Read",
                r#"{"file_path":""}"#,
                "invalid input for Read: file_path must not be empty",
            ),
            (
                "Read",
                r#"{"file_path":"a","x":1}"#,
                "invalid input for Read: unknown member",
            ),
            (
                "Read",
                r#"{"file_path":"a","offset":0}"#,
                "invalid input for Read: offset must be an integer from 1 to 18446744073709551615",
            ),
            (
                "Read",
                r#"{"file_path":"a","limit":1.0}"#,
                "invalid input for Read: limit must be an integer from 1 to 18446744073709551615",
            ),
            (
                "Write",
                r#"{"file_path":"a"}"#,
                "invalid input for Write: content is required",
            ),
            (
                "Bash",
                r#"{"command":"ls","timeout_ms":600001}"#,
                "invalid input for Bash: timeout_ms must be an integer from 1 to 600000",
            ),
            ("Bash", "[]", "invalid input for Bash: not an object"),
            (
                "Bash",
                r#"{"command":"a","command":"b"}"#,
                "invalid input for Bash: not valid JSON",
            ),
        ] {
            assert_eq!(
                ToolCall::parse(tool, input).unwrap_err().to_string(),
                msg,
                "{input}"
            );
        }
        let long = "x".repeat(100);
        assert_eq!(
            ToolCall::parse(&long, "{}").unwrap_err().to_string(),
            format!("unknown tool \"{}\"", "x".repeat(64))
        );
    }

    #[test]
    fn descriptions() {
        let bash = ToolCall::Bash {
            command: "é".repeat(40),
            timeout_ms: None,
            description: None,
        };
        assert_eq!(bash.description(), format!("Bash: {}", "é".repeat(32)));
        let w = ToolCall::parse("Write", r#"{"file_path":"out.txt","content":""}"#).unwrap();
        assert_eq!(w.description(), "Write out.txt");
    }
}
