//! `Glob {pattern, path?}` (PROFILE §17): the files under `path` (default the cwd, a
//! directory) whose name or relative path matches, newest first, at most
//! [`GLOB_MAX_RESULTS`]; `tool_use_result` `{durationMs, numFiles, filenames, truncated,
//! totalMatches, countIsComplete}`.

use std::path::Path;
use std::time::Instant;

use agentx_core::session::ToolOutcome;

use super::fsx::{absolute, failed, succeeded};
use super::result_json::Obj;
use super::walk::{self, Pattern};
use super::GLOB_MAX_RESULTS;

/// The line after a result cut to [`GLOB_MAX_RESULTS`] paths.
pub const TRUNCATED: &str =
    "(Results are truncated. Consider using a more specific path or pattern.)";

/// Runs the search.
pub fn glob(cwd: &Path, pattern: &str, path: Option<&str>) -> ToolOutcome {
    let started = Instant::now();
    let root = absolute(cwd, path.unwrap_or("."));
    match std::fs::metadata(&root) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return failed(format!("{} is not a directory", root.display())),
        Err(_) => return failed(format!("{} does not exist", root.display())),
    }
    let pattern = match Pattern::new(pattern) {
        Ok(p) => p,
        Err(e) => return failed(e),
    };
    let (files, total) = walk::files(&root, Some(&pattern), GLOB_MAX_RESULTS);
    let truncated = total > GLOB_MAX_RESULTS;
    let names: Vec<String> = files
        .iter()
        .map(|(p, _)| p.to_string_lossy().into_owned())
        .collect();
    let mut text = if names.is_empty() {
        "No files found".to_string()
    } else {
        names.join("\n")
    };
    if truncated {
        text.push('\n');
        text.push_str(TRUNCATED);
    }
    let result = Obj::new()
        .num("durationMs", started.elapsed().as_millis() as u64)
        .num("numFiles", names.len() as u64)
        .strs("filenames", names.iter().map(String::as_str))
        .bool("truncated", truncated)
        .num("totalMatches", total as u64)
        .bool("countIsComplete", true)
        .end();
    succeeded(text, [result])
}
