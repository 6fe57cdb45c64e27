//! `Bash {command, timeout_ms?}` (PROFILE §10): `/bin/sh -c` in the session cwd, its own
//! process group, default timeout 120 s, stdout and stderr together capped at 30,000 bytes,
//! the exit code reported; killed (the whole group) on interrupt or cancellation.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::env::EnvOverrides;
use super::process::{self, Capture, KillSwitch};
use super::{ToolOutput, BASH_DEFAULT_TIMEOUT_MS, BASH_OUTPUT_CAP};

/// Runs the command to its end (blocking). The content is the output, then
/// `[output truncated at 30000 bytes]` when capped, then `exit code: N`; a nonzero exit, a
/// timeout or a kill is an error result.
/// `env` holds the session's `update_environment_variables` overrides.
pub fn run(
    cwd: &Path,
    command: &str,
    timeout_ms: Option<u64>,
    env: &EnvOverrides,
    kill: &KillSwitch,
) -> ToolOutput {
    let timeout = timeout_ms.unwrap_or(BASH_DEFAULT_TIMEOUT_MS);
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(command).current_dir(cwd);
    env.apply(&mut cmd);
    let out = match process::run(
        cmd,
        None,
        Capture::Combined,
        BASH_OUTPUT_CAP,
        Duration::from_millis(timeout),
        kill,
    ) {
        Ok(o) => o,
        Err(_) => return ToolOutput::error("cannot start /bin/sh"),
    };
    let mut content = String::from_utf8_lossy(&out.output).into_owned();
    if out.truncated {
        if !content.ends_with('\n') && !content.is_empty() {
            content.push('\n');
        }
        content.push_str(&format!("[output truncated at {BASH_OUTPUT_CAP} bytes]\n"));
    } else if !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    if out.timed_out {
        content.push_str(&format!("timed out after {timeout} ms"));
        return ToolOutput::error(content);
    }
    if out.killed {
        content.push_str("interrupted");
        return ToolOutput::error(content);
    }
    match out.code() {
        Some(code) => {
            content.push_str(&format!("exit code: {code}"));
            ToolOutput {
                content,
                is_error: code != 0,
            }
        }
        None => {
            content.push_str("exit code: unknown");
            ToolOutput::error(content)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cwd() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("agentx-bash-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn output_and_exit_code() {
        let k = KillSwitch::new();
        assert_eq!(
            run(
                &cwd(),
                "echo hi; echo oops >&2",
                None,
                &EnvOverrides::default(),
                &k
            ),
            ToolOutput::ok("hi\noops\nexit code: 0")
        );
        assert_eq!(
            run(
                &cwd(),
                "printf x; exit 7",
                None,
                &EnvOverrides::default(),
                &k
            ),
            ToolOutput::error("x\nexit code: 7")
        );
    }

    #[test]
    fn runs_in_the_cwd() {
        let d = cwd();
        let out = run(
            &d,
            "pwd",
            None,
            &EnvOverrides::default(),
            &KillSwitch::new(),
        );
        let want = format!("{}\nexit code: 0", d.canonicalize().unwrap().display());
        assert_eq!(out.content, want);
    }

    #[test]
    fn cap_at_the_edge() {
        let k = KillSwitch::new();
        let at = run(
            &cwd(),
            "head -c 30000 /dev/zero | tr '\\0' a",
            None,
            &EnvOverrides::default(),
            &k,
        );
        assert_eq!(at.content, format!("{}\nexit code: 0", "a".repeat(30_000)));
        let past = run(
            &cwd(),
            "head -c 30001 /dev/zero | tr '\\0' a",
            None,
            &EnvOverrides::default(),
            &k,
        );
        assert_eq!(
            past.content,
            format!(
                "{}\n[output truncated at 30000 bytes]\nexit code: 0",
                "a".repeat(30_000)
            )
        );
    }

    #[test]
    fn timeout_is_an_error() {
        let out = run(
            &cwd(),
            "sleep 30",
            Some(100),
            &EnvOverrides::default(),
            &KillSwitch::new(),
        );
        assert_eq!(out, ToolOutput::error("timed out after 100 ms"));
    }
}
