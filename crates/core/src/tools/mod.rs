//! The catalog of the tools of PROFILE §10 that the model may call: `Read`, `Write` and `Bash`.
//!
//! Owns each tool's input grammar ([`ToolCall::parse`]: closed objects; an unknown tool or
//! invalid input is an `is_error` `tool_result` without a permission prompt), its JSON schema
//! ([`specs`], advertised in `system/init` `tools` and sent to providers), the safe permission
//! summary (PERM-021, WIRE-PERM-003), path resolution against `--cwd` and the lexical
//! "inside the cwd" test the evaluation uses.
//!
//! Pure: running a call (files, processes) is the `agentx` binary's `tools` module. Must never
//! touch the file system or spawn.

mod input;

pub use input::{ToolCall, ToolError};

use std::path::{Path, PathBuf};

use crate::model::ToolSpec;

/// The tool names, in the order of `system/init` `tools`.
pub const NAMES: [&str; 3] = ["Read", "Write", "Bash"];

/// `Bash`'s default timeout (PROFILE §10: 120 s).
pub const BASH_DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The largest `timeout_ms` a `Bash` call may ask for (10 minutes).
pub const BASH_MAX_TIMEOUT_MS: u64 = 600_000;
/// `Bash` output (stdout and stderr together) is capped at this many bytes (PROFILE §10).
pub const BASH_OUTPUT_CAP: usize = 30_000;
/// `Read` returns at most this many lines when `limit` is absent.
pub const READ_DEFAULT_LIMIT: u64 = 2_000;

/// What a tool call produced: the `tool_result` content and its `is_error` flag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutput {
    /// The `tool_result` content.
    pub content: String,
    /// Whether the call failed.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful output.
    pub fn ok(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed output.
    pub fn error(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: true,
        }
    }
}

/// The [`ToolSpec`]s of the three tools, in [`NAMES`] order.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "Read".into(),
            description: "Read a UTF-8 text file; lines are returned numbered from 1. \
                          offset is the first line (1-based), limit the number of lines \
                          (default 2000). Relative paths resolve against the session cwd."
                .into(),
            input_schema: r#"{"type":"object","properties":{"file_path":{"type":"string","description":"The file to read"},"offset":{"type":"integer","minimum":1,"description":"First line to read (1-based)"},"limit":{"type":"integer","minimum":1,"description":"Number of lines to read"}},"required":["file_path"],"additionalProperties":false}"#.into(),
        },
        ToolSpec {
            name: "Write".into(),
            description: "Write content to a file, replacing it. Relative paths resolve \
                          against the session cwd."
                .into(),
            input_schema: r#"{"type":"object","properties":{"file_path":{"type":"string","description":"The file to write"},"content":{"type":"string","description":"The complete new content"}},"required":["file_path","content"],"additionalProperties":false}"#.into(),
        },
        ToolSpec {
            name: "Bash".into(),
            description: "Run a shell command with /bin/sh -c in the session cwd. Output \
                          (stdout and stderr) is capped at 30000 bytes; the exit code is \
                          reported. Default timeout 120000 ms."
                .into(),
            input_schema: r#"{"type":"object","properties":{"command":{"type":"string","description":"The command line"},"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"Timeout in milliseconds (default 120000)"}},"required":["command"],"additionalProperties":false}"#.into(),
        },
    ]
}

/// `path` resolved against `cwd` when relative (no filesystem access: `..` is kept).
pub fn resolve(cwd: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// Whether `path` (resolved against `cwd`) lies inside `cwd`, judged lexically after removing
/// `.` and `..` components: a path that climbs out is outside (PROFILE §10 "inside the cwd").
pub fn is_inside(cwd: &Path, path: &str) -> bool {
    let normal = |p: &Path| -> Option<PathBuf> {
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::ParentDir => {
                    if !out.pop() {
                        return None;
                    }
                }
                std::path::Component::CurDir => {}
                other => out.push(other.as_os_str()),
            }
        }
        Some(out)
    };
    match (normal(&resolve(cwd, path)), normal(cwd)) {
        (Some(p), Some(c)) => p.starts_with(&c),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_valid_json_objects_in_name_order() {
        let specs = specs();
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, NAMES);
        for s in &specs {
            let doc = agentx_wire::json::parse(s.input_schema.as_bytes()).expect("schema parses");
            assert!(doc.root().as_object().is_some());
        }
    }

    #[test]
    fn inside_the_cwd_is_lexical() {
        let cwd = Path::new("/work/project");
        assert!(is_inside(cwd, "a.txt"));
        assert!(is_inside(cwd, "./src/../b.txt"));
        assert!(is_inside(cwd, "/work/project/x"));
        assert!(!is_inside(cwd, "../other/x"));
        assert!(!is_inside(cwd, "/etc/passwd"));
        assert!(!is_inside(cwd, "/work/projectile"));
        assert!(!is_inside(cwd, "src/../../x"));
    }
}
