//! Replays the checked-in seeds of the `session` fuzz target through the same entry point
//! the fuzzer calls (random interleavings with the session invariants checked each step).

use crate::common;

#[test]
fn session_seeds() {
    common::replay_seeds("session", agentx_core::fuzzing::session::interleavings);
}

/// The same seeds under a small output line limit (the per-turn output error of PROFILE §2a
/// on every record kind), then a deterministic batch of random cases through both entry
/// points: the session invariants hold when records are refused for their length.
#[test]
fn session_seeds_and_random_cases_under_a_small_line_limit() {
    common::replay_seeds(
        "session",
        agentx_core::fuzzing::session::interleavings_small_lines,
    );
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut byte = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    };
    for case in 0..1500 {
        let data: Vec<u8> = (0..64 + case % 400).map(|_| byte()).collect();
        agentx_core::fuzzing::session::interleavings_small_lines(&data);
        agentx_core::fuzzing::session::interleavings(&data);
    }
}

/// PROFILE §16: the seeds, then a deterministic batch of random cases, through the SDK-hooks
/// entry point (random `hook_callback` answers and timeouts; every tool use settled once,
/// every callback request removed once, cancels before an interrupt's acknowledgement).
#[test]
fn session_seeds_and_random_cases_with_sdk_hook_callbacks() {
    common::replay_seeds(
        "session",
        agentx_core::fuzzing::session::interleavings_sdk_hooks,
    );
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut byte = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    };
    for case in 0..2000 {
        let data: Vec<u8> = (0..64 + case % 400).map(|_| byte()).collect();
        agentx_core::fuzzing::session::interleavings_sdk_hooks(&data);
    }
}

/// PROFILE §16: the `session` seeds and the `session_sdk_mcp` ones, then a deterministic batch
/// of random cases, through the SDK-MCP entry point (random `mcp_message` answers to the
/// listing and the calls, and timeouts; every tool use settled once, every request removed
/// once, a call's cancel before an interrupt's acknowledgement).
#[test]
fn session_seeds_and_random_cases_with_an_sdk_mcp_server() {
    common::replay_seeds(
        "session",
        agentx_core::fuzzing::session::interleavings_sdk_mcp,
    );
    common::replay_seeds(
        "session_sdk_mcp",
        agentx_core::fuzzing::session::interleavings_sdk_mcp,
    );
    let mut x = 0x6a09_e667_f3bc_c908u64;
    let mut byte = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    };
    for case in 0..2000 {
        let data: Vec<u8> = (0..64 + case % 400).map(|_| byte()).collect();
        agentx_core::fuzzing::session::interleavings_sdk_mcp(&data);
    }
}
