//! The catalog of the built-in tools the model may call: `Read`, `Write`, `Bash` (PROFILE §10)
//! and the coding tools `Edit`, `Glob`, `Grep`, `TodoWrite` (PROFILE §17).
//!
//! Owns each tool's input grammar ([`ToolCall::parse`]: closed objects; an unknown tool or
//! invalid input is an `is_error` `tool_result` without a permission prompt), its JSON schema
//! ([`specs`], advertised in `system/init` `tools` and sent to providers), the safe permission
//! summary (PERM-021, WIRE-PERM-003), path resolution against `--cwd` and the lexical
//! "inside the cwd" test the evaluation uses.
//!
//! Pure: running a call (files, processes) is the `agentx` binary's `tools` module. Must never
//! touch the file system or spawn.

mod coding;
mod input;
mod members;
mod specs;

pub use coding::{
    GrepInput, GrepMode, Todo, TodoStatus, GREP_DEFAULT_HEAD_LIMIT, GREP_MAX_CONTEXT,
    TODO_MAX_ITEMS,
};
pub use input::{ToolCall, ToolError};
pub use specs::specs;

use std::path::{Path, PathBuf};

/// The tool names, in the order of `system/init` `tools` (PROFILE §17).
pub const NAMES: [&str; 7] = ["Read", "Write", "Bash", "Edit", "Glob", "Grep", "TodoWrite"];
/// `Glob` returns at most this many paths (PROFILE §17).
pub const GLOB_MAX_RESULTS: usize = 100;
/// `Grep`'s text result is capped at this many bytes, like `Bash`'s (PROFILE §17).
pub const GREP_OUTPUT_CAP: usize = 30_000;
/// `Edit`'s text result shows the changed region with this many lines around it.
pub const EDIT_CONTEXT_LINES: usize = 3;
/// `Edit`'s text result shows at most this many lines of the changed region.
pub const EDIT_MAX_SHOWN_LINES: usize = 40;

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
