//! Outside packages a test or bench needs (a pinned Python venv from a `requirements.txt`, a
//! pinned npm tree from a `package.json` + `package-lock.json`), installed once per target
//! directory under the caller's `CARGO_TARGET_TMPDIR` into `<name>-<hash of the pin files>`.
//! An install is built in a temporary sibling and renamed into place when complete, so a
//! half-finished one is never used, a changed pin installs afresh, and concurrent runs do not
//! clash. Without the tool (python3, node/npm) or a reachable registry the caller gets the
//! reason: [`unavailable`] prints `SKIP: <reason>`, or panics when env `CI` is set.
//!
//! It never installs anything outside the given target directory and never runs unpinned.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Skips (prints `SKIP: {what} unavailable: <reason>` and returns `None`) or, when env `CI`
/// is set, panics with the reason.
pub fn unavailable<T>(what: &str, reason: &str) -> Option<T> {
    if std::env::var_os("CI").is_some() {
        panic!("{what} prerequisites unavailable while CI is set: {reason}");
    }
    eprintln!("SKIP: {what} unavailable: {reason}");
    None
}

/// Runs `cmd` with its stdin closed; an error names the command, its status and the last
/// 2,000 characters of its stderr.
pub fn run_quiet(cmd: &mut Command) -> Result<(), String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{cmd:?} could not start: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let skip = err.chars().count().saturating_sub(2000);
    let tail: String = err.chars().skip(skip).collect();
    Err(format!("{cmd:?} failed ({}): {tail}", out.status))
}

/// FNV-1a over the bytes of `files` (a missing one counts as empty), as 16 hex digits.
pub fn pin_hash(files: &[PathBuf]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in files {
        for b in std::fs::read(f).unwrap_or_default() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// The folder `<tmpdir>/<name>-<pin_hash(pins)>`, made by `install` (given an empty
/// temporary folder) unless a complete one is already there.
pub fn install_once(
    tmpdir: &Path,
    name: &str,
    pins: &[PathBuf],
    install: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<PathBuf, String> {
    // Tests of one binary run on threads: one installs while the others wait for it, then
    // find it complete. Other processes are kept apart by the temporary folder's name and the
    // rename.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tmpdir.join(format!("{name}-{}", pin_hash(pins)));
    if dir.join(".complete").exists() {
        return Ok(dir);
    }
    let tmp = tmpdir.join(format!("{name}-partial-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    eprintln!(
        "installing the pinned {name} into {} (once per target directory)",
        dir.display()
    );
    let done = install(&tmp)
        .and_then(|()| std::fs::write(tmp.join(".complete"), b"").map_err(|e| e.to_string()));
    if let Err(e) = done {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another run finished first: use its install.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dir.join(".complete").exists() {
        Ok(dir)
    } else {
        Err(format!("{} did not appear", dir.display()))
    }
}

/// The `python` of a venv `<tmpdir>/<name>-<hash>` with `requirements` installed by pip
/// (python3 3.10 or newer).
pub fn python_venv(tmpdir: &Path, name: &str, requirements: &Path) -> Result<PathBuf, String> {
    let ok = Command::new("python3")
        .args(["-c", "import sys; assert sys.version_info >= (3, 10)"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return Err("python3 (3.10 or newer) is not available".into());
    }
    let dir = install_once(tmpdir, name, &[requirements.to_path_buf()], |tmp| {
        run_quiet(
            Command::new("python3")
                .args(["-m", "venv"])
                .arg(tmp.join("venv")),
        )?;
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
                .arg(requirements),
        )
    })?;
    Ok(dir.join("venv/bin/python"))
}

/// The folder `<tmpdir>/<name>-<hash>` holding `node_modules` as `npm ci --omit=optional`
/// makes it from `project`'s `package.json` and `package-lock.json` (node 18 or newer).
pub fn npm_tree(tmpdir: &Path, name: &str, project: &Path) -> Result<PathBuf, String> {
    let ok = Command::new("node")
        .args([
            "-e",
            "process.exit(Number(process.versions.node.split('.')[0]) >= 18 ? 0 : 1)",
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        return Err("node (18 or newer) is not available".into());
    }
    let pins = ["package.json", "package-lock.json"].map(|f| project.join(f));
    install_once(tmpdir, name, &pins, |tmp| {
        for pin in &pins {
            let to = tmp.join(pin.file_name().expect("a file name"));
            std::fs::copy(pin, to).map_err(|e| format!("{}: {e}", pin.display()))?;
        }
        run_quiet(
            Command::new("npm")
                .args([
                    "ci",
                    "--omit=optional",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                ])
                .current_dir(tmp),
        )
    })
}
