//! What the MCP suites share (`mcp_servers.rs`, `mcp_network.rs`, the SDK flows of
//! `sdk_support/mcp_servers.rs`): the test assets' folder and the official Python MCP SDK installed
//! pinned into `target/tmp` on first use (skipped with a printed reason when it cannot be
//! installed, failed under `CI`).

use std::path::{Path, PathBuf};
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
