//! Replays the checked-in seeds of the `json_decode` and `json_write` fuzz targets through the
//! same entry points the fuzzer calls (with the serde_json oracle enabled).

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut seeds = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_file() {
            run(&std::fs::read(&path).unwrap());
            seeds += 1;
        }
    }
    eprintln!("{target}: {seeds} seeds replayed");
    assert!(seeds > 0, "no seeds in {}", dir.display());
}

#[test]
fn json_decode_seeds() {
    replay("json_decode", agentx_wire::fuzzing::json::decode);
}

#[test]
fn json_write_seeds() {
    replay("json_write", agentx_wire::fuzzing::json::write_round_trip);
    // The decode seeds are documents too: every one must survive the writer's round trip.
    replay("json_decode", agentx_wire::fuzzing::json::write_round_trip);
}
