//! Replays the checked-in seeds of the `session` fuzz target through the same entry point
//! the fuzzer calls (random interleavings with the session invariants checked each step).

mod common;

#[test]
fn session_seeds() {
    common::replay_seeds("session", agentx_wire::fuzzing::session::interleavings);
}
