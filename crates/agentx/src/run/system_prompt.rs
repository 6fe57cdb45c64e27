//! agentx's own coding-agent system message (PROFILE §17): what agentx is, how to use each
//! offered built-in tool, and the environment block (the cwd, whether it is a git repository,
//! the platform, today's date). The session sends it when neither `--system-prompt` nor
//! initialize `systemPrompt` sets one (the SDKs' `claude_code` preset sets neither);
//! `--append-system-prompt` adds to it. Built once at startup, here, because the core reads no
//! clock and no file system. Must never carry a credential or an environment variable.

use std::fmt::Write as _;
use std::path::Path;
use std::time::SystemTime;

/// Per tool: what the model should know beyond its schema.
const GUIDE: [(&str, &str); 7] = [
    (
        "Read",
        "Read a file before you change it; read only the lines you need with offset and limit.",
    ),
    (
        "Write",
        "Create new files, or rewrite a file whole. An existing file must be read first. \
         Prefer Edit for changes to an existing file.",
    ),
    (
        "Bash",
        "Run commands: builds, tests, git. Do not use it to find or search files (use Glob \
         and Grep) or to read and change them (use Read, Edit and Write).",
    ),
    (
        "Edit",
        "The way to change a file: replace an exact old_string (unique, with enough \
         surrounding context) by new_string. Read the file first.",
    ),
    (
        "Glob",
        "Find files by name pattern (for example **/*.rs); results are newest first.",
    ),
    (
        "Grep",
        "Search file contents with a regular expression; output_mode content shows the \
         matching lines, files_with_matches (the default) the files.",
    ),
    (
        "TodoWrite",
        "Plan multi-step work as a todo list and keep it current: one item in_progress at a \
         time, mark items completed as soon as they are done.",
    ),
];

/// The message for a session in `cwd` offering `tools` (their names), dated `now`.
pub fn default_system_prompt(cwd: &Path, tools: &[&str], now: SystemTime) -> String {
    let mut s = String::from(
        "You are agentx, a coding agent working in the user's repository through tools. \
         Do the task you are given: inspect the code, make the changes, and verify them \
         when you can. Be concise; report what you did and what you could not do.\n",
    );
    let offered: Vec<&(&str, &str)> = GUIDE.iter().filter(|(n, _)| tools.contains(n)).collect();
    if !offered.is_empty() {
        s.push_str("\n# Tools\n");
        for (name, how) in offered {
            let _ = writeln!(s, "- {name}: {how}");
        }
        s.push_str(
            "Paths may be absolute or relative to the working directory. Prefer Edit to \
             Write for changes, and Glob and Grep to Bash for search.\n",
        );
    }
    let _ = write!(
        s,
        "\n# Environment\nWorking directory: {}\nIs a git repository: {}\nPlatform: {}\n\
         Today's date: {}\n",
        cwd.display(),
        if in_git_repo(cwd) { "yes" } else { "no" },
        std::env::consts::OS,
        date(now)
    );
    s
}

/// Whether `cwd` or one of its parents holds `.git`.
fn in_git_repo(cwd: &Path) -> bool {
    cwd.ancestors().any(|d| d.join(".git").exists())
}

/// `YYYY-MM-DD` (UTC) of `now`.
pub fn date(now: SystemTime) -> String {
    let days = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as i64;
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates() {
        let at = |s: u64| date(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01");
        assert_eq!(at(951_782_400), "2000-02-29");
        assert_eq!(at(1_798_761_599), "2026-12-31");
        assert_eq!(at(1_798_761_600), "2027-01-01");
    }

    #[test]
    fn lists_only_the_offered_tools_and_the_environment() {
        let p = default_system_prompt(
            Path::new("/nonexistent/dir"),
            &["Read", "Grep"],
            SystemTime::UNIX_EPOCH,
        );
        assert!(p.contains("- Read: "));
        assert!(p.contains("- Grep: "));
        assert!(!p.contains("- Edit: "));
        assert!(p.contains("Working directory: /nonexistent/dir\n"));
        assert!(p.contains("Is a git repository: no\n"));
        assert!(p.contains("Today's date: 1970-01-01\n"));
    }
}
