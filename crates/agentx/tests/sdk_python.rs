//! The published Python Claude Agent SDK driving the built `agentx` (PROFILE §15, §16): one test
//! per flow of tests/sdk/driver.py, the list and the checks shared with the other SDK's tests
//! (`every_flow!` in tests/sdk_support). Skips with a printed reason when the SDK cannot be
//! installed, except under `CI`.

#[macro_use]
mod sdk_support;

every_flow!(sdk_support::Sdk::Python);
every_example!(sdk_support::Sdk::Python);
