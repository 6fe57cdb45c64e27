//! The tools' [`ToolSpec`]s: name, description and JSON schema, advertised in `system/init`
//! `tools` and sent to model-backed providers as function tools. The schemas follow the input
//! shapes of the Claude Agent SDKs' `sdk-tools.d.ts` (PROFILE §17) and are closed
//! (`additionalProperties: false`), as [`super::ToolCall::parse`] is.

use crate::model::ToolSpec;

fn spec(name: &str, description: &str, input_schema: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: input_schema.into(),
    }
}

/// The [`ToolSpec`]s of the built-in tools, in [`super::NAMES`] order.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        spec(
            "Read",
            "Read a UTF-8 text file; lines are returned numbered from 1. offset is the first \
             line (1-based), limit the number of lines (default 2000). Relative paths resolve \
             against the session cwd. Read a file before you Edit or overwrite it.",
            r#"{"type":"object","properties":{"file_path":{"type":"string","description":"The file to read"},"offset":{"type":"integer","minimum":1,"description":"First line to read (1-based)"},"limit":{"type":"integer","minimum":1,"description":"Number of lines to read"}},"required":["file_path"],"additionalProperties":false}"#,
        ),
        spec(
            "Write",
            "Write content to a file, creating it or replacing it whole. An existing file must \
             have been read first. Prefer Edit for changes to an existing file. Relative paths \
             resolve against the session cwd.",
            r#"{"type":"object","properties":{"file_path":{"type":"string","description":"The file to write"},"content":{"type":"string","description":"The complete new content"}},"required":["file_path","content"],"additionalProperties":false}"#,
        ),
        spec(
            "Bash",
            "Run a shell command with /bin/sh -c in the session cwd. Output (stdout and \
             stderr) is capped at 30000 bytes; the exit code is reported. Default timeout \
             120000 ms. Prefer Glob and Grep to find and search files.",
            r#"{"type":"object","properties":{"command":{"type":"string","description":"The command line"},"timeout_ms":{"type":"integer","minimum":1,"maximum":600000,"description":"Timeout in milliseconds (default 120000)"},"description":{"type":"string","description":"What the command does, in a few words"}},"required":["command"],"additionalProperties":false}"#,
        ),
        spec(
            "Edit",
            "Replace old_string by new_string in a file that was read first. old_string must \
             occur exactly once unless replace_all is true; include enough context to make it \
             unique. An empty old_string creates a new file with new_string. The file's other \
             bytes, line endings and permissions are kept.",
            r#"{"type":"object","properties":{"file_path":{"type":"string","description":"The file to modify"},"old_string":{"type":"string","description":"The text to replace"},"new_string":{"type":"string","description":"The text to replace it with (must differ from old_string)"},"replace_all":{"type":"boolean","default":false,"description":"Replace every occurrence of old_string"}},"required":["file_path","old_string","new_string"],"additionalProperties":false}"#,
        ),
        spec(
            "Glob",
            "Find files by glob pattern (*, **, ?, [...], {a,b}); a pattern without / matches \
             file names at any depth. Honours .gitignore, includes hidden files, skips .git. \
             Returns at most 100 absolute paths, newest first.",
            r#"{"type":"object","properties":{"pattern":{"type":"string","description":"The glob pattern to match files against"},"path":{"type":"string","description":"The directory to search in (default the session cwd)"}},"required":["pattern"],"additionalProperties":false}"#,
        ),
        spec(
            "Grep",
            "Search file contents with a regular expression (ripgrep). output_mode \
             files_with_matches (default) lists matching files newest first, content prints \
             matching lines (path:line:text, with -A/-B/-C context), count prints path:N. \
             Narrow with glob or type; head_limit (default 250, 0 = none) and offset page the \
             output.",
            r#"{"type":"object","properties":{"pattern":{"type":"string","description":"The regular expression to search for"},"path":{"type":"string","description":"File or directory to search in (default the session cwd)"},"glob":{"type":"string","description":"Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\")"},"type":{"type":"string","description":"File type to search (rg --type), e.g. js, py, rust"},"output_mode":{"type":"string","enum":["content","files_with_matches","count"],"description":"Output mode (default files_with_matches)"},"-i":{"type":"boolean","description":"Case insensitive search"},"-n":{"type":"boolean","description":"Show line numbers in content mode (default true)"},"-o":{"type":"boolean","description":"Print only the matched parts of lines (content mode)"},"-A":{"type":"integer","minimum":0,"maximum":10000,"description":"Lines to show after each match (content mode)"},"-B":{"type":"integer","minimum":0,"maximum":10000,"description":"Lines to show before each match (content mode)"},"-C":{"type":"integer","minimum":0,"maximum":10000,"description":"Lines to show before and after each match (content mode)"},"context":{"type":"integer","minimum":0,"maximum":10000,"description":"Same as -C"},"multiline":{"type":"boolean","description":"Let . match newlines and patterns span lines (rg -U --multiline-dotall)"},"head_limit":{"type":"integer","minimum":0,"maximum":4294967295,"description":"Keep at most this many output lines (default 250; 0 = no limit)"},"offset":{"type":"integer","minimum":0,"maximum":4294967295,"description":"Skip this many output lines first (default 0)"}},"required":["pattern"],"additionalProperties":false}"#,
        ),
        spec(
            "TodoWrite",
            "Replace the session's todo list: use it to plan and track multi-step work. Keep \
             exactly one item in_progress while working; mark items completed as soon as they \
             are done.",
            r#"{"type":"object","properties":{"todos":{"type":"array","maxItems":100,"items":{"type":"object","properties":{"content":{"type":"string","minLength":1},"status":{"type":"string","enum":["pending","in_progress","completed"]},"activeForm":{"type":"string","minLength":1}},"required":["content","status","activeForm"],"additionalProperties":false},"description":"The updated todo list"}},"required":["todos"],"additionalProperties":false}"#,
        ),
    ]
}
