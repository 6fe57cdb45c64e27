//! One permission-hook process per prompt (PROFILE §10): started with `AGENTX_SESSION_ID`,
//! one JSON line on stdin, one JSON line expected on stdout, killed at its timeout or when the
//! host wins the race.

use std::process::Command;
use std::time::Duration;

use super::decision::{parse_answer, request_line, HookDecision};
use super::settings::PermissionHook;
use crate::tools::env::EnvOverrides;
use crate::tools::process::{self, Capture, KillSwitch};

/// The hook's stdout is read up to this many bytes; more is a malformed answer.
const MAX_ANSWER: usize = 64 * 1024;

/// Runs the hook to its end (blocking; run it on its own thread) and returns its decision.
/// A spawn failure, nonzero exit, timeout, kill or malformed answer is
/// [`HookDecision::Failed`] (WIRE-PERM-002); the caller ignores the result of a killed hook.
pub fn run_hook(
    hook: &PermissionHook,
    session_id: &str,
    tool_name: &str,
    tool_use_id: &str,
    input: &str,
    env: &EnvOverrides,
    kill: &KillSwitch,
) -> HookDecision {
    let Some((program, args)) = hook.command.split_first() else {
        return HookDecision::Failed;
    };
    let mut cmd = Command::new(program);
    cmd.args(args);
    env.apply(&mut cmd);
    cmd.env("AGENTX_SESSION_ID", session_id);
    let line = request_line(session_id, tool_name, tool_use_id, input);
    let out = match process::run(
        cmd,
        Some(line),
        Capture::Stdout,
        MAX_ANSWER + 1,
        Duration::from_millis(hook.timeout_ms),
        kill,
    ) {
        Ok(o) => o,
        Err(_) => return HookDecision::Failed,
    };
    if out.timed_out || out.killed || out.truncated || out.code() != Some(0) {
        return HookDecision::Failed;
    }
    parse_answer(&out.output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(script: &str, timeout_ms: u64) -> PermissionHook {
        PermissionHook {
            command: vec!["/bin/sh".into(), "-c".into(), script.into()],
            timeout_ms,
        }
    }

    fn run(script: &str, timeout_ms: u64) -> HookDecision {
        run_hook(
            &hook(script, timeout_ms),
            "sess-1",
            "Bash",
            "toolu_9",
            r#"{"command":"ls"}"#,
            &EnvOverrides::default(),
            &KillSwitch::new(),
        )
    }

    #[test]
    fn the_hook_sees_its_env_and_line() {
        // Deny with a message built from what the hook received.
        let d = run(
            r#"read line; case "$line" in *'"tool_use_id":"toolu_9"'*) ok=yes;; *) ok=no;; esac; printf '{"decision":"deny","message":"%s %s"}\n' "$AGENTX_SESSION_ID" "$ok""#,
            10_000,
        );
        assert_eq!(
            d,
            HookDecision::Deny {
                message: "sess-1 yes".into()
            }
        );
    }

    #[test]
    fn failures_are_failed() {
        assert_eq!(
            run("echo '{\"decision\":\"allow\"}'; exit 1", 10_000),
            HookDecision::Failed
        );
        assert_eq!(run("echo nonsense", 10_000), HookDecision::Failed);
        assert_eq!(run("sleep 30", 100), HookDecision::Failed);
        assert_eq!(
            run_hook(
                &PermissionHook {
                    command: vec!["/nonexistent/hook".into()],
                    timeout_ms: 1000
                },
                "s",
                "Read",
                "t",
                "{}",
                &EnvOverrides::default(),
                &KillSwitch::new()
            ),
            HookDecision::Failed
        );
        assert_eq!(
            run("echo '{\"decision\":\"pass\"}'", 10_000),
            HookDecision::Pass
        );
    }
}
