//! Shared test support: where the conformance corpora live.

use std::path::PathBuf;

/// The conformance directory: `$AGENTX_CONFORMANCE_DIR`, else `../shared/conformance` beside
/// the crate. `None` (with a printed reason) when it is absent; absent while `CI` is set is a
/// test failure, because CI must run the suites.
pub fn conformance_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("AGENTX_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("../shared/conformance"));
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "conformance data missing at {} while CI is set",
            dir.display()
        );
    }
    eprintln!(
        "SKIP: conformance data not found at {} (set AGENTX_CONFORMANCE_DIR)",
        dir.display()
    );
    None
}

/// Runs every checked-in seed of fuzz target `target` (`corpus/<target>/`) through `run`, the
/// same entry point the fuzzer calls; returns how many seeds ran. A target without seeds fails.
pub fn replay_seeds(target: &str, run: fn(&[u8])) -> usize {
    let dir = crate::workspace_root().join("corpus").join(target);
    let mut seeds = 0;
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_file() {
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            run(&data);
            seeds += 1;
        }
    }
    eprintln!("{target}: {seeds} seeds replayed");
    assert!(seeds > 0, "no seeds in {}", dir.display());
    seeds
}
