//! Replays the checked-in seeds of the `json_decode` and `json_write` fuzz targets through the
//! same entry points the fuzzer calls (with the serde_json oracle enabled).

use crate::common;

use common::replay_seeds;

#[test]
fn json_decode_seeds() {
    replay_seeds("json_decode", agentx_wire::fuzzing::json::decode);
}

#[test]
fn json_write_seeds() {
    replay_seeds("json_write", agentx_wire::fuzzing::json::write_round_trip);
    // The decode seeds are documents too: every one must survive the writer's round trip.
    replay_seeds("json_decode", agentx_wire::fuzzing::json::write_round_trip);
}

#[test]
fn json_backends_seeds() {
    replay_seeds("json_backends", agentx_wire::fuzzing::json::backends);
    // Every decode seed must get the same verdict and document from every scan backend.
    replay_seeds("json_decode", agentx_wire::fuzzing::json::backends);
}
