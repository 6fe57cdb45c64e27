//! `Bash {command, timeout_ms?}` (PROFILE §10): `/bin/sh -c` in the session cwd, its own
//! process group, default timeout 120 s, the exit code reported; killed (the whole group) on
//! interrupt or cancellation. stdout and stderr are read from a pipe each: the text result is
//! stdout then stderr, together capped at 30,000 bytes, and `tool_use_result` (PROFILE §17)
//! carries each stream on its own.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::env::EnvOverrides;
use super::process::{self, Capture, KillSwitch};
use super::{ToolOutput, BASH_DEFAULT_TIMEOUT_MS, BASH_OUTPUT_CAP};

/// What a call gave: the `tool_result`, and each stream (its first 30,000 bytes).
#[derive(Debug, PartialEq, Eq)]
pub struct Ran {
    /// The text result and `is_error`.
    pub out: ToolOutput,
    /// The command's stdout.
    pub stdout: String,
    /// The command's stderr.
    pub stderr: String,
}

/// Runs the command to its end (blocking). The content is stdout then stderr, then
/// `[output truncated at 30000 bytes]` when capped, then `exit code: N`; a nonzero exit, a
/// timeout or a kill is an error result.
/// `env` holds the session's `update_environment_variables` overrides.
pub fn run(
    cwd: &Path,
    command: &str,
    timeout_ms: Option<u64>,
    env: &EnvOverrides,
    kill: &KillSwitch,
) -> Ran {
    let (mut stdout, mut stderr) = (String::new(), String::new());
    let out = run_streams(
        cwd,
        command,
        timeout_ms,
        env,
        kill,
        &mut stdout,
        &mut stderr,
    );
    Ran {
        out,
        stdout,
        stderr,
    }
}

fn run_streams(
    cwd: &Path,
    command: &str,
    timeout_ms: Option<u64>,
    env: &EnvOverrides,
    kill: &KillSwitch,
    stdout: &mut String,
    stderr: &mut String,
) -> ToolOutput {
    let timeout = timeout_ms.unwrap_or(BASH_DEFAULT_TIMEOUT_MS);
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c").arg(command).current_dir(cwd);
    env.apply(&mut cmd);
    let mut out = match process::run(
        cmd,
        None,
        Capture::Separate,
        BASH_OUTPUT_CAP,
        Duration::from_millis(timeout),
        kill,
    ) {
        Ok(o) => o,
        Err(_) => return ToolOutput::error("cannot start /bin/sh"),
    };
    *stdout = String::from_utf8_lossy(&out.output).into_owned();
    *stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut both = std::mem::take(&mut out.output);
    both.extend_from_slice(&out.stderr);
    let truncated = out.truncated || out.stderr_truncated || both.len() > BASH_OUTPUT_CAP;
    both.truncate(BASH_OUTPUT_CAP);
    let mut content = String::from_utf8_lossy(&both).into_owned();
    if truncated {
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
            )
            .out,
            ToolOutput::ok("hi\noops\nexit code: 0")
        );
        assert_eq!(
            run(
                &cwd(),
                "printf x; exit 7",
                None,
                &EnvOverrides::default(),
                &k
            )
            .out,
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
        )
        .out;
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
        )
        .out;
        assert_eq!(at.content, format!("{}\nexit code: 0", "a".repeat(30_000)));
        let past = run(
            &cwd(),
            "head -c 30001 /dev/zero | tr '\\0' a",
            None,
            &EnvOverrides::default(),
            &k,
        )
        .out;
        assert_eq!(
            past.content,
            format!(
                "{}\n[output truncated at 30000 bytes]\nexit code: 0",
                "a".repeat(30_000)
            )
        );
    }

    /// stderr follows stdout in the text whatever the order written; each stream is kept
    /// apart; the cap counts both, one byte past it truncates.
    #[test]
    fn streams_apart_and_stdout_first() {
        let k = KillSwitch::new();
        let env = EnvOverrides::default();
        let ran = run(&cwd(), "echo err >&2; echo out", None, &env, &k);
        assert_eq!(ran.out, ToolOutput::ok("out\nerr\nexit code: 0"));
        assert_eq!(
            (ran.stdout.as_str(), ran.stderr.as_str()),
            ("out\n", "err\n")
        );
        let cmd = "head -c 29999 /dev/zero | tr '\\0' a; printf b >&2";
        let at = run(&cwd(), cmd, None, &env, &k);
        assert_eq!(
            at.out.content,
            format!("{}b\nexit code: 0", "a".repeat(29_999))
        );
        let cmd = "head -c 29999 /dev/zero | tr '\\0' a; printf bc >&2";
        let past = run(&cwd(), cmd, None, &env, &k);
        assert_eq!(
            past.out.content,
            format!(
                "{}b\n[output truncated at 30000 bytes]\nexit code: 0",
                "a".repeat(29_999)
            )
        );
        assert_eq!(past.stderr, "bc");
    }

    #[test]
    fn timeout_is_an_error() {
        let out = run(
            &cwd(),
            "sleep 30",
            Some(100),
            &EnvOverrides::default(),
            &KillSwitch::new(),
        )
        .out;
        assert_eq!(out, ToolOutput::error("timed out after 100 ms"));
    }
}
