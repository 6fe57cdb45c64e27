//! Replays the seeds of the `upload_lifecycle` fuzz target (`corpus/upload_lifecycle/`)
//! through the entry point the fuzzer calls, which checks the invariants itself: at most one
//! terminal result per upload, claims and reservations balanced to zero once all settle,
//! nothing stored that no committed manifest references. `cargo test --test codec
//! fuzz_seeds_upload::write_seeds -- --ignored` rewrites the seeds from `fuzzing::upload::seeds()`.

use crate::common;

use agentx_core::fuzzing::upload;

#[test]
fn upload_lifecycle_seeds() {
    assert!(common::replay_seeds("upload_lifecycle", upload::lifecycle) >= 4);
}

#[test]
fn in_code_seeds_reach_every_path() {
    let mut total = upload::Reached::default();
    for (name, data) in upload::seeds() {
        let r = upload::run(&data);
        eprintln!("{name}: {r:?}");
        total.accepted += r.accepted;
        total.committed += r.committed;
        total.ended += r.ended;
        total.rejected += r.rejected;
        total.admitted += r.admitted;
    }
    assert!(total.committed >= 2, "{total:?}");
    assert!(total.admitted >= 1, "{total:?}");
    assert!(total.ended >= 8, "{total:?}");
    assert!(total.rejected >= 4, "{total:?}");
}

#[test]
#[ignore]
fn write_seeds() {
    let dir = agentx_test_support::workspace_root().join("corpus/upload_lifecycle");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, data) in upload::seeds() {
        std::fs::write(dir.join(name), data).unwrap();
    }
}
