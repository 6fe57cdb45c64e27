//! The SDK examples under `examples/` run as their users run them, through the installed real
//! SDK against the built agentx, so the README's examples cannot rot: `every_example!` makes one
//! `#[test]` per example and SDK, and each check asserts what the example printed.

use super::{installed, run_script, Sdk, TempDir};

/// One `#[test]` per example in `$sdk` (`examples/<name>.py` or `.mjs`), skipped as the flows are.
macro_rules! every_example {
    ($sdk:expr) => {
        #[test]
        fn example_sdk_callbacks() {
            if let Some(out) = sdk_support::examples::run_example($sdk, "sdk_callbacks") {
                sdk_support::examples::check_sdk_callbacks(&out);
            }
        }
    };
}

/// Runs `examples/<name>` with `sdk`'s interpreter; its stdout, or `None` when skipped.
pub fn run_example(sdk: Sdk, name: &str) -> Option<String> {
    let installed = installed(sdk)?;
    let file = match sdk {
        Sdk::Python => format!("{name}.py"),
        Sdk::TypeScript => format!("{name}.mjs"),
    };
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(file);
    let what = format!("{sdk:?} example {name}");
    let home = TempDir::new("example-home");
    let cwd = TempDir::new("example-cwd");
    let (status, stdout, stderr) = run_script(
        installed,
        &[script.as_os_str()],
        home.path(),
        ("EXAMPLE_CWD", cwd.path()),
        &what,
    );
    assert!(
        status.success(),
        "{what} failed ({status}); stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    Some(stdout)
}

/// `examples/sdk_callbacks.*`: the MCP tool ran in the example's process and its sum is the
/// `tool_result`; the hook denied the shell (PROFILE §16 PreToolUse before §10); the schema'd
/// answer came back as `structured_output`.
pub fn check_sdk_callbacks(out: &str) {
    let lines: Vec<&str> = out.lines().collect();
    let find = |what: &str| {
        lines
            .iter()
            .position(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no line with {what:?} in:\n{out}"))
    };
    let call = find("tool_use mcp__calc__add");
    let sum = find("tool_result 5");
    assert!(call < sum, "{out}");
    assert!(!lines[sum].contains("(error)"), "{out}");
    let hook = find("hook: PreToolUse Bash");
    let denied = find("tool_result (error) no shell in this example");
    assert!(sum < hook && hook < denied, "{out}");
    // The first two turns have no schema: their results carry no structured output.
    let structured = find("structured_output={");
    assert!(lines[structured].contains("result: success"), "{out}");
    assert!(
        lines[structured]
            .replace(' ', "")
            .contains(r#"{"answer":42}"#)
            || lines[structured].contains("{'answer': 42}"),
        "{out}"
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains("result: success"))
            .count(),
        3,
        "three turns, each a success: {out}"
    );
}
