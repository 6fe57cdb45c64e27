#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| agentx_wire::fuzzing::session::interleavings_sdk_mcp(data));
