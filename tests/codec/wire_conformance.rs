//! Real streams from other agent CLIs (`sdk-streams/claude-cli-and-codex-samples.ndjson`):
//! every line decodes as an output record, a preserved Unknown (WIRE-002), or a record-level
//! error where Claude's CLI breaks this protocol (`apiKeySource` `none`, WIRE-016; an init
//! without `provider`, WIRE-023; a success result without `modelUsage`, PROFILE §8), never a
//! panic; the table below states which line is which. Each decoded record then
//! round-trips: `decode(encode(r)) == r` and encoding is idempotent.

use crate::common;

use agentx_wire::json::Parser;
use agentx_wire::wire::{ControlRequestBody, OutputRecord, SystemEvent};

/// Line number (1-based) → expected variant label.
const EXPECTED: &[(usize, &str)] = &[
    (1, "control_request/can_use_tool"),
    (2, "rejected:apiKeySource:WIRE-016"),
    (3, "assistant"),
    (4, "rejected:modelUsage:Core output records: success result"),
    (5, "rejected:modelUsage:Core output records: success result"),
    (6, "assistant"),
    (7, "user"),
    (8, "rejected:apiKeySource:WIRE-016"),
    (9, "user"),
    (
        10,
        "rejected:modelUsage:Core output records: success result",
    ),
    (11, "unknown:thread.started"),
    (12, "unknown:turn.started"),
    (13, "unknown:item.completed"),
    (14, "unknown:item.started"),
    (15, "unknown:item.completed"),
    (16, "unknown:turn.completed"),
    (17, "unknown:item.completed"),
    (18, "rejected:provider:WIRE-023"),
    (19, "assistant"),
    (
        20,
        "rejected:modelUsage:Core output records: success result",
    ),
    (21, "result/success"),
    (22, "user"),
    (23, "system/unknown:thinking_tokens"),
    (24, "system/task_started"),
    (25, "system/task_progress"),
    (26, "rate_limit_event"),
    (27, "assistant"),
    (28, "system/unknown:task_updated"),
    (29, "system/task_notification"),
    (30, "user"),
    (31, "system/unknown:background_tasks_changed"),
];

fn label(r: &OutputRecord<'_>) -> String {
    match r {
        OutputRecord::Unknown(u) => format!("unknown:{}", u.record_type),
        OutputRecord::System(SystemEvent::Unknown(u)) => format!("system/unknown:{}", u.subtype),
        OutputRecord::System(e) => format!("system/{}", e.subtype_name()),
        OutputRecord::ControlRequest(c) => format!("control_request/{}", c.request.subtype_name()),
        OutputRecord::Result(res) => format!("result/{}", res.subtype.as_str()),
        other => other.record_type().to_owned(),
    }
}

#[test]
fn claude_cli_and_codex_samples_decode_as_output_records() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let path = dir.join("sdk-streams/claude-cli-and-codex-samples.ndjson");
    let text = std::fs::read(&path).expect("read samples");
    let mut parser = Parser::new();
    let mut checked = 0;
    let mut unknown = 0;
    let mut rejected = 0;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let n = i + 1;
        let expected = EXPECTED.iter().find(|(l, _)| *l == n).map(|(_, e)| *e);
        let record = match OutputRecord::decode_line(line, &mut parser) {
            Ok(r) => r,
            Err(e) => {
                // Claude-CLI captures break rules of this protocol that Claude's own CLI does
                // not follow (WIRE-016, WIRE-023, PROFILE §8): a record-level error naming
                // the member and the rule, never a panic or a fatal error.
                assert!(!e.is_fatal(), "line {n}: {e}");
                let got = format!("rejected:{}:{}", e.path(), e.rule());
                assert_eq!(Some(got.as_str()), expected, "line {n}: {e}");
                rejected += 1;
                checked += 1;
                continue;
            }
        };
        assert_eq!(Some(label(&record).as_str()), expected, "line {n}");
        if record.warning().is_some() {
            unknown += 1;
        }
        if let OutputRecord::ControlRequest(c) = &record {
            // The real can_use_tool line satisfies the closed PERM-020 request.
            assert!(matches!(c.request, ControlRequestBody::CanUseTool(_)));
        }
        // Round trip through canonical encoding.
        let mut once = Vec::new();
        record.encode(&mut once);
        let mut p2 = Parser::new();
        let again = OutputRecord::decode_line(&once, &mut p2).unwrap_or_else(|e| {
            panic!(
                "line {n}: re-decode failed: {e}: {}",
                String::from_utf8_lossy(&once)
            )
        });
        let mut twice = Vec::new();
        again.encode(&mut twice);
        assert_eq!(once, twice, "line {n}: encoding is not idempotent");
        assert_eq!(
            again.clone().into_owned(),
            again,
            "line {n}: owned form differs"
        );
        checked += 1;
    }
    assert_eq!(checked, EXPECTED.len(), "every line of the table was seen");
    eprintln!(
        "wire conformance: {checked} lines ({unknown} preserved unknown, {rejected} rejected, {} typed)",
        checked - unknown - rejected
    );
}

#[test]
fn samples_with_typed_details() {
    let Some(dir) = common::conformance_dir() else {
        return;
    };
    let text =
        std::fs::read(dir.join("sdk-streams/claude-cli-and-codex-samples.ndjson")).expect("read");
    let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    let mut parser = Parser::new();
    // Lines 5 and 10 lack the `modelUsage` a success result requires (PROFILE §8): given
    // one, their other details decode.
    let with_usage = |line: &[u8]| {
        let mut l = b"{\"modelUsage\":{},".to_vec();
        l.extend_from_slice(&line[1..]);
        l
    };
    let (line5, line10) = (with_usage(lines[4]), with_usage(lines[9]));
    // Line 5: num_turns -1 decodes (signed) and the cost stays a number.
    match OutputRecord::decode_line(&line5, &mut parser).unwrap() {
        OutputRecord::Result(r) => {
            assert_eq!(r.num_turns, -1);
            assert!(r.total_cost_usd.is_some());
        }
        other => panic!("{other:?}"),
    }
    // Line 10: two permission denials with tool input kept as JSON.
    match OutputRecord::decode_line(&line10, &mut parser).unwrap() {
        OutputRecord::Result(r) => {
            assert_eq!(r.permission_denials.len(), 2);
            assert_eq!(r.permission_denials[0].tool_name, "Bash");
            assert!(r.permission_denials[1]
                .tool_input
                .as_bytes()
                .starts_with(b"{\"command\""));
        }
        other => panic!("{other:?}"),
    }
    // Line 21: per-model usage with a numeric costUSD.
    match OutputRecord::decode_line(lines[20], &mut parser).unwrap() {
        OutputRecord::Result(r) => {
            let mu = r.model_usage.expect("modelUsage");
            assert_eq!(mu.0.len(), 1);
            assert_eq!(mu.0[0].0, "claude-opus-4-5-20251101");
            assert_eq!(mu.0[0].1.cost_usd, Some(0.22844625));
        }
        other => panic!("{other:?}"),
    }
}
