//! Black-box: PROFILE §3's home and file types. A home that is not a directory, and an
//! `auth.json` or `settings.json` that is not a regular file (a FIFO, a directory), are one
//! stderr line and status 1 in every mode, with stdout empty, and never block startup; an
//! `auth.json` that cannot be opened keeps the registry's line with its errno text.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::harness;

use harness::*;

/// Far above a normal startup; reached only if agentx blocks (on a FIFO, say).
const DEADLINE: Duration = Duration::from_secs(30);

/// `agentx ARGS` with `AGENTX_HOME=home`, no stdin: (status, stdout, stderr). A run that does
/// not end by [`DEADLINE`] is killed and fails the test.
fn run_bounded(home: &Path, args: &[&str]) -> (Option<i32>, Vec<u8>, String) {
    let child = agentx_command(home)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agentx");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(out) => {
            let out = out.expect("wait");
            (
                out.status.code(),
                out.stdout,
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("agentx {args:?} did not end within {DEADLINE:?}");
        }
    }
}

/// The three ways agentx starts with a home: stream-json, one-shot, discovery.
const MODES: [&[&str]; 3] = [
    &[
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    ],
    &["-p", "hello"],
    &["--list-providers"],
];

fn assert_refused(home: &Path, line: &str) {
    for mode in MODES {
        let (status, out, err) = run_bounded(home, mode);
        assert_eq!(status, Some(1), "{mode:?}: {err}");
        assert!(
            out.is_empty(),
            "{mode:?}: {}",
            String::from_utf8_lossy(&out)
        );
        assert_eq!(err, format!("{line}\n"), "{mode:?}");
    }
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

#[test]
fn a_home_that_is_a_file_is_one_line() {
    let dir = TempDir::new("home-file");
    let home = dir.path().join("home");
    std::fs::write(&home, b"not a directory").unwrap();
    assert_refused(
        &home,
        &format!("agentx: AgentX home {} is not a directory", home.display()),
    );
}

#[test]
fn an_auth_json_fifo_or_directory_is_refused_without_blocking() {
    let home = TempDir::new("auth-fifo");
    mkfifo(&home.path().join("auth.json"));
    assert_refused(home.path(), "agentx: auth.json is not a regular file");

    let home = TempDir::new("auth-dir");
    std::fs::create_dir(home.path().join("auth.json")).unwrap();
    assert_refused(home.path(), "agentx: auth.json is not a regular file");
}

#[test]
fn a_settings_json_fifo_or_directory_is_refused_without_blocking() {
    for kind in ["fifo", "dir"] {
        let home = TempDir::new(&format!("settings-{kind}"));
        let path = home.path().join("settings.json");
        if kind == "fifo" {
            mkfifo(&path);
        } else {
            std::fs::create_dir(&path).unwrap();
        }
        // Discovery reads no settings; the two modes that run a session do.
        for mode in &MODES[..2] {
            let (status, out, err) = run_bounded(home.path(), mode);
            assert_eq!(status, Some(1), "{kind} {mode:?}: {err}");
            assert!(out.is_empty(), "{kind} {mode:?}");
            assert_eq!(
                err.lines().last(),
                Some("agentx: settings.json is not a regular file"),
                "{kind} {mode:?}: {err}"
            );
        }
    }
}

/// An `auth.json` that cannot be opened at all (here a symbolic link to itself, which even
/// root cannot open: `ELOOP`) keeps the registry's line with the errno text, never the path.
#[test]
fn an_auth_json_that_cannot_be_opened_names_its_errno_text() {
    let home = TempDir::new("auth-loop");
    std::os::unix::fs::symlink("auth.json", home.path().join("auth.json")).unwrap();
    assert_refused(
        home.path(),
        "agentx: invalid registry: auth.json could not be read: Too many levels of symbolic links",
    );
}
