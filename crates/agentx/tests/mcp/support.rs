//! What the MCP suites share (`mcp_servers.rs`, `mcp_network.rs`): the test assets' folder
//! and the official Python MCP SDK installed pinned into `target/tmp` on first use (skipped
//! with a printed reason when it cannot be installed, failed under `CI`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

/// Skips (or, under `CI`, fails) with `reason`.
fn unavailable(reason: String) -> Option<PathBuf> {
    if std::env::var_os("CI").is_some() {
        panic!("MCP test prerequisites unavailable while CI is set: {reason}");
    }
    eprintln!("SKIP: {reason}");
    None
}

fn run_quiet(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd:?} could not start: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: String = err
            .chars()
            .rev()
            .take(2000)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        Err(format!("{cmd:?} failed ({}): {tail}", out.status))
    }
}

/// The venv's python with the pinned official MCP SDK, installed once per target directory
/// (`target/tmp/mcp-python-<hash of the pins>`, renamed into place when complete).
pub fn python() -> Option<PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        let pins = std::fs::read(assets().join("requirements.txt")).unwrap_or_default();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in pins {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let dir = base.join(format!("mcp-python-{h:016x}"));
        if !dir.join(".complete").exists() {
            let tmp = base.join(format!("mcp-python-partial-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&tmp);
            eprintln!(
                "installing the pinned Python MCP SDK into {}",
                dir.display()
            );
            let installed = run_quiet(
                Command::new("python3")
                    .args(["-m", "venv"])
                    .arg(tmp.join("venv")),
            )
            .and_then(|()| {
                run_quiet(
                    Command::new(tmp.join("venv/bin/python"))
                        .args([
                            "-m",
                            "pip",
                            "install",
                            "--quiet",
                            "--disable-pip-version-check",
                            "-r",
                        ])
                        .arg(assets().join("requirements.txt")),
                )
            })
            .and_then(|()| std::fs::write(tmp.join(".complete"), b"").map_err(|e| e.to_string()));
            if let Err(e) = installed {
                let _ = std::fs::remove_dir_all(&tmp);
                return unavailable(format!("the Python MCP SDK could not be installed: {e}"));
            }
            if std::fs::rename(&tmp, &dir).is_err() {
                let _ = std::fs::remove_dir_all(&tmp);
            }
        }
        Some(dir.join("venv/bin/python"))
    })
    .clone()
}
