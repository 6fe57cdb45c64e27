//! Property tests: generated records of every input and output type (hostile strings,
//! extreme numbers, nested payloads) satisfy `decode(encode(r)) == r`, encode to one
//! physical line, and encode idempotently; arbitrary bytes and mutated canonical records
//! never panic the decoder. The generator is `agentx_wire::fuzzing::wire::Gen`, shared with
//! the fuzz targets.

use agentx_wire::fuzzing::wire::{
    check_input, check_output, decode_any, Gen, INPUT_KINDS, OUTPUT_KINDS,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_input_record_type_round_trips(seed in proptest::collection::vec(any::<u8>(), 0..600)) {
        for kind in 0..INPUT_KINDS {
            let mut g = Gen::new(&seed);
            check_input(&g.input_record(kind));
        }
    }

    #[test]
    fn every_output_record_type_round_trips(seed in proptest::collection::vec(any::<u8>(), 0..600)) {
        for kind in 0..OUTPUT_KINDS {
            let mut g = Gen::new(&seed);
            check_output(&g.output_record(kind));
        }
    }

    #[test]
    fn mutated_canonical_records_never_panic(
        seed in proptest::collection::vec(any::<u8>(), 0..300),
        cut in any::<usize>(),
        flip in any::<u8>(),
    ) {
        let mut g = Gen::new(&seed);
        let which = g.u8();
        let mut bytes = Vec::new();
        g.output_record(which).encode(&mut bytes);
        decode_any(&bytes);
        if !bytes.is_empty() {
            let i = cut % bytes.len();
            bytes[i] ^= flip;
            decode_any(&bytes);
            bytes.truncate(i);
            decode_any(&bytes);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        decode_any(&data);
    }
}

#[test]
fn generator_covers_every_kind_with_empty_seed() {
    // Zero bytes still build a valid record of every kind.
    for kind in 0..INPUT_KINDS {
        check_input(&Gen::new(&[]).input_record(kind));
    }
    for kind in 0..OUTPUT_KINDS {
        check_output(&Gen::new(&[]).output_record(kind));
    }
    eprintln!("{} input and {} output kinds", INPUT_KINDS, OUTPUT_KINDS);
}

#[test]
fn generator_reaches_every_control_and_system_subtype() {
    use agentx_wire::wire::{
        ControlSubtype, InputRecord, OutputRecord, SystemEvent, SystemSubtype,
    };
    use std::collections::HashSet;
    let mut control = HashSet::new();
    let mut system = HashSet::new();
    let mut unknown_system = false;
    for n in 0u32..4000 {
        let seed: Vec<u8> = (0..64u32)
            .map(|i| (n.wrapping_mul(2654435761).rotate_left(i) >> 3) as u8)
            .collect();
        for kind in 0..INPUT_KINDS {
            if let InputRecord::ControlRequest(c) = Gen::new(&seed).input_record(kind) {
                control.extend(c.request.subtype());
            }
        }
        for kind in 0..OUTPUT_KINDS {
            if let OutputRecord::System(e) = Gen::new(&seed).output_record(kind) {
                system.extend(e.subtype());
                unknown_system |= matches!(e, SystemEvent::Unknown(_));
            }
        }
    }
    let missing_control: Vec<_> = ControlSubtype::ALL
        .iter()
        .filter(|s| !control.contains(s))
        .collect();
    let missing_system: Vec<_> = SystemSubtype::ALL
        .iter()
        .filter(|s| !system.contains(s))
        .collect();
    assert!(missing_control.is_empty(), "{missing_control:?}");
    assert!(missing_system.is_empty(), "{missing_system:?}");
    assert!(unknown_system);
    eprintln!(
        "{} control and {} system subtypes generated",
        control.len(),
        system.len()
    );
}
