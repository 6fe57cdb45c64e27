#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| agentx_core::fuzzing::attach::pdf(data));
