//! The published Python Claude Agent SDK driving the built `agentx` (PROFILE §15): one test per
//! flow of tests/sdk/driver.py; the checks are shared with the other SDK's tests (tests/sdk_support).
//! Skips with a printed reason when the SDK cannot be installed, except under `CI`.

mod sdk_support;

use sdk_support::*;

fn flow(name: &str, check: fn(&Flow)) {
    if let Some(f) = run_flow(Sdk::Python, name) {
        check(&f);
    }
}

#[test]
fn prompt() {
    flow("prompt", check_prompt);
}

#[test]
fn can_use_tool() {
    flow("can_use_tool", check_can_use_tool);
}

#[test]
fn no_callback() {
    flow("no_callback", check_no_callback);
}

#[test]
fn bypass() {
    flow("bypass", check_bypass);
}

#[test]
fn interrupt() {
    flow("interrupt", check_interrupt);
}

#[test]
fn tasks() {
    flow("tasks", check_tasks);
}

#[test]
fn partial() {
    flow("partial", check_partial);
}

#[test]
fn system_prompt() {
    flow("system_prompt", check_system_prompt);
}

#[test]
fn controls() {
    flow("controls", check_controls);
}

#[test]
fn close_persists() {
    flow("close_persists", check_close_persists);
}

#[test]
fn structured_output() {
    flow("structured_output", check_structured_output);
}
