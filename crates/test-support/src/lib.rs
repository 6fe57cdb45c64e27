//! Shared test support of the workspace (never shipping code): where the conformance corpora
//! live and the replay of fuzz seeds ([`conformance`]), the black-box harness of the real
//! `agentx` binary ([`harness`]), a real HTTP/1.1 + SSE server on loopback for the provider
//! tests ([`http`]), the pinned outside packages (Python venvs, npm trees) tests and benches
//! install into `target/` on first use ([`install`]), and what the whole-process benches share
//! ([`agentx_process`], [`proc_stat`]).
//!
//! It depends on none of the workspace's crates, so every crate can use it as a
//! dev-dependency without a cycle; the binaries it drives are found with [`bin`].

pub mod agentx_process;
pub mod conformance;
pub mod cpu_time;
pub mod harness;
pub mod http;
pub mod install;
pub mod proc_stat;

use std::path::PathBuf;

/// Every `.rs` file under `dir`, recursively, appended to `out` (the source scans of the
/// structural tests).
pub fn rust_files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The workspace's root folder (where `corpus/`, `target/` and `../shared` are found).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The path of the workspace binary `name` (`agentx`, `agentx-wire`) of the profile running
/// this test or bench: `$AGENTX_BIN_DIR/name` when set, else `target/<profile>/name` beside
/// the `deps/` folder of the running executable. `cargo test` and `cargo bench` from the root
/// build every binary before they run anything; a run of a single package (`-p`) that does
/// not build `name` gets a panic that says how to build it.
pub fn bin(name: &str) -> PathBuf {
    let dir = match std::env::var_os("AGENTX_BIN_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => {
            let exe = std::env::current_exe().expect("current exe");
            let mut dir = exe.parent().expect("exe dir").to_path_buf();
            if dir.ends_with("deps") || dir.ends_with("examples") {
                dir.pop();
            }
            dir
        }
    };
    let path = dir.join(name);
    assert!(
        path.is_file(),
        "{} is not built: run `cargo build --bins` (or the whole `cargo test` from the workspace root) first",
        path.display()
    );
    path
}
