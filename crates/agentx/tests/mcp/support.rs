//! What the MCP suites share (`mcp_servers.rs`, `mcp_network.rs`, the SDK flows of
//! `sdk_support/mcp_servers.rs`): the test assets' folder, the official Python MCP SDK installed
//! pinned into `target/tmp` on first use (skipped with a printed reason when it cannot be
//! installed, failed under `CI`), and starting a network server that says its port.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

use agentx_test_support::install;

pub fn assets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

/// The venv's python with the pinned official MCP SDK (`tests/mcp/requirements.txt`),
/// installed once per target directory (`target/tmp/mcp-python-<hash of the pins>`).
pub fn python() -> Option<PathBuf> {
    static PY: OnceLock<Option<PathBuf>> = OnceLock::new();
    PY.get_or_init(|| {
        let tmpdir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        match install::python_venv(tmpdir, "mcp-python", &assets().join("requirements.txt")) {
            Ok(python) => Some(python),
            Err(e) => install::unavailable("the Python MCP SDK", &e),
        }
    })
    .clone()
}

/// Starts `program assets/<script> <mode> <log>`, a server that prints `PORT <n>` once it
/// listens on a free loopback port; returns the process and the port.
#[allow(dead_code)] // `mcp_servers.rs` includes this file and starts none
pub fn start_port_server(program: &Path, script: &str, mode: &str, log: &Path) -> (Child, u16) {
    let mut child = Command::new(program)
        .arg(assets().join(script))
        .arg(mode)
        .arg(log)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port from {script}: {line:?}"));
    (child, port)
}

/// Every file under `dir` that `skip` does not name, concatenated (lossily): what a secret
/// must not be found in.
#[allow(dead_code)] // the SDK flows include this file and read no tree
pub fn files_text(dir: &Path, skip: &dyn Fn(&Path) -> bool) -> String {
    let mut out = String::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push_str(&files_text(&p, skip));
            } else if skip(&p) {
                continue;
            } else if let Ok(b) = std::fs::read(&p) {
                out.push_str(&String::from_utf8_lossy(&b));
            }
        }
    }
    out
}
