//! Control round trips per second through the broker and the outbox: register a request,
//! encode its envelope through `encode::FrameEncoder` (the validating frame encoder) into
//! `control::Outbox`, take the frame out (what the writer does), decode the host's
//! `control_response` line with the strict reader, validate it with the waiter's schema and
//! resolve. Three shapes:
//! - `interrupt`: a fieldless request and a payload-less acknowledgement (WIRE-010);
//! - `can_use_tool`: a permission request and an allow decision with `updatedInput`, validated
//!   through `PermissionDecision` (PERM-040..053);
//! - `abort`: register, encode, then abort (one `control_cancel_request` frame, WIRE-007).
//!
//! `AGENTX_BENCH_CPU=1` measures the benchmark thread's CPU time instead of wall time (the
//! machine is shared), as `benches/decode.rs` does.

use std::hint::black_box;
use std::time::Instant;

use agentx_wire::control::{Broker, Dispatch, Emission, Outbox, Refused};
use agentx_wire::encode::FrameEncoder;
use agentx_wire::json::Parser;
use agentx_wire::wire::subtypes::Interrupt;
use agentx_wire::wire::{ControlRequestBody, InputRecord};
use criterion::measurement::Measurement;
use criterion::{Criterion, SamplingMode, Throughput};

use agentx_test_support::cpu_time;

/// The driver side of one session: frames go through the encoder into the outbox.
struct Out {
    encoder: FrameEncoder,
    outbox: Outbox,
    written: u64,
}

impl Out {
    fn emit(&mut self, e: Emission<'_>) -> Result<(), Refused> {
        let frame = self.encoder.encode(&e).map_err(|_| Refused)?;
        self.outbox.push(frame).map_err(|_| Refused)?;
        // The writer drains: one frame out, as bytes.
        if let Some(f) = self.outbox.pop() {
            self.written += f.len() as u64;
        }
        Ok(())
    }
}

const CAN_USE_TOOL: &[u8] = br#"{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"src/main.rs","content":"fn main() {}\n"},"tool_use_id":"toolu_01","description":"Write src/main.rs"}"#;

fn round_trip(
    broker: &mut Broker,
    out: &mut Out,
    parser: &mut Parser,
    line: &mut Vec<u8>,
    kind: u8,
) {
    let now = Instant::now();
    let mut emit = |_: &mut Broker, e: Emission<'_>| out.emit(e);
    let started = match kind {
        0 => broker.request(ControlRequestBody::Interrupt(Interrupt), now, &mut emit),
        _ => broker.request_raw(CAN_USE_TOOL, now, &mut emit),
    };
    let id = match started {
        Ok(s) => s.id().to_owned(),
        Err(e) => panic!("{e}"),
    };
    if kind == 2 {
        let r = broker.abort(&id, now, &mut emit);
        assert!(matches!(r, Ok(Some(_))));
        return;
    }
    line.clear();
    line.extend_from_slice(
        br#"{"type":"control_response","response":{"subtype":"success","request_id":""#,
    );
    line.extend_from_slice(id.as_bytes());
    match kind {
        0 => line.extend_from_slice(br#""}}"#),
        _ => line.extend_from_slice(
            br#"","response":{"behavior":"allow","updatedInput":{"file_path":"src/main.rs","content":"fn main() {}\n"},"toolUseID":"toolu_01"}}}"#,
        ),
    }
    let resp = match InputRecord::decode_line(line, parser) {
        Ok(InputRecord::ControlResponse(r)) => r,
        other => panic!("{other:?}"),
    };
    let d = broker.handle_response(&resp, now, &mut emit);
    assert!(matches!(d, Dispatch::Resolved(_)));
}

fn bench_control<M: Measurement>(c: &mut Criterion<M>) {
    let mut group = c.benchmark_group("control_round_trip");
    group
        .throughput(Throughput::Elements(1))
        .sampling_mode(SamplingMode::Flat);
    for (name, kind) in [("interrupt", 0u8), ("can_use_tool", 1), ("abort", 2)] {
        let mut broker = Broker::new();
        let mut out = Out {
            encoder: FrameEncoder::new(),
            outbox: Outbox::new(),
            written: 0,
        };
        let mut parser = Parser::new();
        let mut line = Vec::new();
        group.bench_function(name, |b| {
            b.iter(|| {
                round_trip(
                    &mut broker,
                    &mut out,
                    &mut parser,
                    &mut line,
                    black_box(kind),
                )
            })
        });
        black_box(out.written);
    }
    group.finish();
}

fn main() {
    cpu_time::run(bench_control, bench_control);
}
