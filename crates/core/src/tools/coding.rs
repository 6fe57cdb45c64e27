//! The input grammar of PROFILE §17's coding tools: `Edit`, `Glob`, `Grep` and `TodoWrite`.
//! Closed objects as in [`super::input`]: an unknown member, a wrong type, a value out of its
//! range (an unknown `output_mode`, a bad todo `status`) or a missing required member is
//! `invalid input for <tool>: <what>`. Must never touch the file system.

use agentx_wire::json::{Kind, Object, Value};

use super::members::{nonempty_string, string};

/// The most items a `TodoWrite` list may hold (PROFILE §17).
pub const TODO_MAX_ITEMS: usize = 100;
/// The largest context (`-A`, `-B`, `-C`, `context`) a `Grep` call may ask for.
pub const GREP_MAX_CONTEXT: u64 = 10_000;
/// `Grep`'s default `head_limit` (PROFILE §17).
pub const GREP_DEFAULT_HEAD_LIMIT: u64 = 250;

/// `Grep`'s `output_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrepMode {
    /// Matching files' paths, newest first (the default).
    FilesWithMatches,
    /// `path:line:text` lines with optional context.
    Content,
    /// `path:N` per matching file.
    Count,
}

impl GrepMode {
    /// The mode's name in the input and in `tool_use_result` `mode`.
    pub fn as_str(self) -> &'static str {
        match self {
            GrepMode::FilesWithMatches => "files_with_matches",
            GrepMode::Content => "content",
            GrepMode::Count => "count",
        }
    }
}

/// A validated `Grep` input (PROFILE §17).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrepInput {
    /// The regular expression (ripgrep's default engine).
    pub pattern: String,
    /// A directory or one file; default the cwd.
    pub path: Option<String>,
    /// A glob narrowing the files (Glob's pattern rule).
    pub glob: Option<String>,
    /// A ripgrep file type.
    pub file_type: Option<String>,
    /// What to print.
    pub output_mode: GrepMode,
    /// `-i`: case-insensitive.
    pub case_insensitive: bool,
    /// `-n`: line numbers in `content` (default true).
    pub line_numbers: bool,
    /// `-o`: only the matched parts.
    pub only_matching: bool,
    /// Lines after a match (`-A`, else `-C`/`context`).
    pub after: u64,
    /// Lines before a match (`-B`, else `-C`/`context`).
    pub before: u64,
    /// `rg -U --multiline-dotall`.
    pub multiline: bool,
    /// Output lines kept after `offset` (0: no limit).
    pub head_limit: u64,
    /// Output lines skipped first.
    pub offset: u64,
}

/// A todo's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

impl TodoStatus {
    /// The status's name in the input.
    pub fn as_str(self) -> &'static str {
        match self {
            TodoStatus::Pending => "pending",
            TodoStatus::InProgress => "in_progress",
            TodoStatus::Completed => "completed",
        }
    }
}

/// One `TodoWrite` item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Todo {
    /// What is to be done.
    pub content: String,
    /// Its state.
    pub status: TodoStatus,
    /// The present-continuous form shown while in progress.
    pub active_form: String,
}

pub(super) fn parse_grep(obj: &Object<'_, '_>) -> Result<GrepInput, String> {
    let output_mode = match opt_string(obj, "output_mode")?.as_deref() {
        None | Some("files_with_matches") => GrepMode::FilesWithMatches,
        Some("content") => GrepMode::Content,
        Some("count") => GrepMode::Count,
        Some(_) => {
            return Err("output_mode must be one of files_with_matches, content, count".to_string())
        }
    };
    let context = match nonneg(obj, "-C", GREP_MAX_CONTEXT)? {
        Some(c) => Some(c),
        None => nonneg(obj, "context", GREP_MAX_CONTEXT)?,
    };
    Ok(GrepInput {
        pattern: string(obj, "pattern")?,
        path: opt_nonempty(obj, "path")?,
        glob: opt_nonempty(obj, "glob")?,
        file_type: opt_nonempty(obj, "type")?,
        output_mode,
        case_insensitive: flag(obj, "-i")?.unwrap_or(false),
        line_numbers: flag(obj, "-n")?.unwrap_or(true),
        only_matching: flag(obj, "-o")?.unwrap_or(false),
        after: nonneg(obj, "-A", GREP_MAX_CONTEXT)?
            .or(context)
            .unwrap_or(0),
        before: nonneg(obj, "-B", GREP_MAX_CONTEXT)?
            .or(context)
            .unwrap_or(0),
        multiline: flag(obj, "multiline")?.unwrap_or(false),
        head_limit: nonneg(obj, "head_limit", u64::from(u32::MAX))?
            .unwrap_or(GREP_DEFAULT_HEAD_LIMIT),
        offset: nonneg(obj, "offset", u64::from(u32::MAX))?.unwrap_or(0),
    })
}

pub(super) fn parse_todos(obj: &Object<'_, '_>) -> Result<Vec<Todo>, String> {
    let arr = match obj.get("todos") {
        None => return Err("todos is required".into()),
        Some(v) => v.as_array().ok_or("todos must be an array")?,
    };
    let mut todos = Vec::new();
    for (i, item) in arr.iter().enumerate() {
        if i == TODO_MAX_ITEMS {
            return Err(format!("todos must have at most {TODO_MAX_ITEMS} items"));
        }
        todos.push(todo(item).map_err(|r| format!("todos[{i}]: {r}"))?);
    }
    Ok(todos)
}

fn todo(v: Value<'_, '_>) -> Result<Todo, String> {
    let obj = v.as_object().ok_or("not an object")?;
    if obj
        .unknown_member(&["content", "status", "activeForm"])
        .is_some()
    {
        return Err("unknown member".into());
    }
    let status = match string(&obj, "status")?.as_str() {
        "pending" => TodoStatus::Pending,
        "in_progress" => TodoStatus::InProgress,
        "completed" => TodoStatus::Completed,
        _ => return Err("status must be one of pending, in_progress, completed".into()),
    };
    Ok(Todo {
        content: nonempty_string(&obj, "content")?,
        status,
        active_form: nonempty_string(&obj, "activeForm")?,
    })
}

/// An optional string; `null` is absent.
pub(super) fn opt_string(obj: &Object<'_, '_>, name: &str) -> Result<Option<String>, String> {
    match obj.get(name) {
        None => Ok(None),
        Some(v) if v.kind() == Kind::Null => Ok(None),
        Some(_) => string(obj, name).map(Some),
    }
}

/// An optional nonempty string without NUL; `null` is absent.
fn opt_nonempty(obj: &Object<'_, '_>, name: &str) -> Result<Option<String>, String> {
    match obj.get(name) {
        None => Ok(None),
        Some(v) if v.kind() == Kind::Null => Ok(None),
        Some(_) => nonempty_string(obj, name).map(Some),
    }
}

/// An optional boolean; `null` is absent.
pub(super) fn flag(obj: &Object<'_, '_>, name: &str) -> Result<Option<bool>, String> {
    match obj.get(name) {
        None => Ok(None),
        Some(v) if v.kind() == Kind::Null => Ok(None),
        Some(v) => v
            .as_bool()
            .map(Some)
            .ok_or_else(|| format!("{name} must be a boolean")),
    }
}

/// An optional integer in `0..=max`; `null` is absent.
fn nonneg(obj: &Object<'_, '_>, name: &str, max: u64) -> Result<Option<u64>, String> {
    let Some(v) = obj.get(name) else {
        return Ok(None);
    };
    if v.kind() == Kind::Null {
        return Ok(None);
    }
    match v.as_number().and_then(|n| n.as_u64()) {
        Some(n) if n <= max => Ok(Some(n)),
        _ => Err(format!("{name} must be an integer from 0 to {max}")),
    }
}
