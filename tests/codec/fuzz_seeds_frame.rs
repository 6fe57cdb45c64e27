//! Replays the checked-in seeds of the `frame_reader` and `frame_split` fuzz targets through
//! the same entry points the fuzzer calls.

use crate::common;

use common::replay_seeds;

#[test]
fn frame_reader_seeds() {
    replay_seeds("frame_reader", agentx_wire::fuzzing::frame::reader_chunking);
}

#[test]
fn frame_split_seeds() {
    replay_seeds("frame_split", agentx_wire::fuzzing::frame::splitter);
    // The reader seeds are haystacks too.
    replay_seeds("frame_reader", agentx_wire::fuzzing::frame::splitter);
}

#[test]
fn reference_splitter_matches_the_documented_rules() {
    use agentx_wire::fuzzing::frame::{reference_split, split_all};
    let stream = b"{}\n \r\n0123456789\n\nx";
    let got = reference_split(stream, 5);
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], Ok((1, b"{}".to_vec())));
    assert_eq!(got[1].as_ref().map_err(|e| e.line()), Err(3));
    assert_eq!(got[2], Ok((5, b"x".to_vec())));
    assert_eq!(split_all(&[&stream[..4], &stream[4..]], 5), got);
}

#[test]
fn generated_streams_through_the_fuzz_properties() {
    // Deterministic smoke run of both entry points on streams from a framing-heavy alphabet
    // (LF, CR, space, tab, and a few others): not a fuzzer, but it runs on every `cargo test`.
    let alphabet = b"\n\n\r \t{}a\"\x0b";
    let mut state = 0x0dd_ba11_u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 16
    };
    let mut runs = 0;
    for _ in 0..1500 {
        let len = (next() % 300) as usize;
        let mut data = vec![(next() % 256) as u8, (next() % 256) as u8];
        data.extend((0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]));
        agentx_wire::fuzzing::frame::reader_chunking(&data);
        agentx_wire::fuzzing::frame::splitter(&data);
        runs += 1;
    }
    eprintln!("generated_streams: {runs} streams checked");
}
