//! Replays the checked-in seeds of the `provider_registry` fuzz target through the same entry
//! point the fuzzer calls, and checks the seeds reach every outcome (rejected registry, refused
//! catalog, listed catalog, refused discovery framing).

use agentx_core::fuzzing::provider::{registry_outcome, Outcome};

#[test]
fn provider_registry_seeds() {
    let dir = agentx_test_support::workspace_root().join("corpus/provider_registry");
    let mut outcomes = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("entry").path();
        if path.is_file() {
            let data = std::fs::read(&path).expect("seed");
            let outcome = registry_outcome(&data);
            eprintln!("{}: {outcome:?}", path.display());
            outcomes.push(outcome);
        }
    }
    eprintln!("provider_registry: {} seeds replayed", outcomes.len());
    assert!(outcomes.len() >= 10, "too few seeds");
    assert!(outcomes.contains(&Outcome::Rejected));
    assert!(outcomes.contains(&Outcome::Refused));
    assert!(outcomes.contains(&Outcome::Listed { listed: 2 }));
    assert!(
        outcomes
            .iter()
            .any(|o| matches!(o, Outcome::Listed { listed } if *listed < 2)),
        "no seed exercises a refused discovery frame"
    );
}

/// Hand-picked hostile inputs beyond the seeds: truncations of every seed at every byte.
#[test]
fn truncated_seeds_never_panic() {
    let dir = agentx_test_support::workspace_root().join("corpus/provider_registry");
    let mut runs = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus") {
        let data = std::fs::read(entry.expect("entry").path()).expect("seed");
        for end in 0..data.len() {
            let _ = registry_outcome(&data[..end]);
            runs += 1;
        }
    }
    eprintln!("{runs} truncated inputs");
}
