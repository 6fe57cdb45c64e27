//! Replays the checked-in seeds of the `wire_decode` and `wire_round_trip` fuzz targets
//! through the same entry points the fuzzer calls.

use crate::common;

use common::replay_seeds;

#[test]
fn wire_decode_seeds() {
    replay_seeds("wire_decode", agentx_wire::fuzzing::wire::decode_any);
}

#[test]
fn wire_round_trip_seeds() {
    replay_seeds("wire_round_trip", agentx_wire::fuzzing::wire::round_trip);
    // The decode seeds drive the generator too.
    replay_seeds("wire_decode", agentx_wire::fuzzing::wire::round_trip);
}

#[test]
fn decode_seeds_that_are_records_decode() {
    // Seeds other than the deliberately broken ones decode in at least one direction.
    let dir = agentx_test_support::workspace_root().join("corpus/wire_decode");
    let broken = ["duplicate_escaped", "not_an_object", "truncated"];
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let bytes = std::fs::read(&path).unwrap();
        let mut p = agentx_wire::json::Parser::new();
        let input = agentx_wire::wire::InputRecord::decode_line(&bytes, &mut p).is_ok();
        let output = agentx_wire::wire::OutputRecord::decode_line(&bytes, &mut p).is_ok();
        assert_eq!(input || output, !broken.contains(&name.as_str()), "{name}");
        if name == "import_commit_extra_member" {
            // An import schema violation is fatal on input (it is an unknown type on output).
            let e = agentx_wire::wire::InputRecord::decode_line(&bytes, &mut p).unwrap_err();
            assert!(e.is_fatal(), "{e}");
        }
        checked += 1;
    }
    eprintln!("{checked} decode seeds classified");
}
