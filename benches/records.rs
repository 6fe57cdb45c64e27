//! Typed record decoding and encoding against serde_json with `#[derive]`d borrowed structs,
//! on the same bytes, in the same criterion run.
//!
//! Input: `agentx_wire::sample::realistic_stream(1, 8 MiB)` (tool results full of escapes,
//! `stream_event` deltas, non-ASCII, emoji). Its `system/init` records carry an abbreviated
//! `input_capabilities` that WIRE-023's exact shape rejects; they are replaced with the
//! native capability before measuring, so every line is a valid output record.
//!
//! Group `records_decode` (Throughput::Bytes of the stream):
//! - `wire`: `OutputRecord::decode_line` per line with a reused parser — strict JSON with
//!   duplicate detection at every depth, typed records, model payloads kept as validated
//!   bytes;
//! - `serde_json_derived`: `serde_json::from_slice` into an equivalent
//!   `#[serde(tag = "type")]` enum of borrowed structs (`Cow<str>` with `#[serde(borrow)]`),
//!   model payloads as `IgnoredAny` (validated, not kept: less work than ours, since
//!   `serde_json/raw_value` is not enabled).
//!
//! Group `records_encode` (Throughput::Bytes of the stream):
//! - `wire`: `OutputRecord::encode` of the pre-decoded records into a reused buffer + `\n`;
//! - `serde_json_to_writer`: `serde_json::to_writer` of the same records as the derived
//!   structs, with payloads pre-built as `serde_json::Value`, into a reused buffer + `\n`.
//!
//! Run: `cargo bench --bench records -- --warm-up-time 1 --measurement-time 3`

use std::borrow::Cow;
use std::hint::black_box;

use agentx_wire::json::Parser;
use agentx_wire::wire::system_init::InputCapabilities;
use agentx_wire::wire::{OutputRecord, WireValue};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

const SIZE: usize = 8 << 20;

/// The sample stream with every abbreviated `input_capabilities` replaced by WIRE-023's.
fn stream() -> Vec<u8> {
    let raw = agentx_wire::sample::realistic_stream(1, SIZE);
    let mut native = Vec::new();
    InputCapabilities::native().encode(&mut native);
    let key = b",\"input_capabilities\":";
    let mut out = Vec::with_capacity(raw.len() + 4096);
    for line in raw.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        match find(line, key) {
            Some(at) => {
                // The capability object ends where its braces balance (no braces in its strings).
                let start = at + key.len();
                let mut depth = 0usize;
                let mut end = start;
                for (i, &c) in line[start..].iter().enumerate() {
                    match c {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = start + i + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                out.extend_from_slice(&line[..start]);
                out.extend_from_slice(&native);
                out.extend_from_slice(&line[end..]);
            }
            None => out.extend_from_slice(line),
        }
        out.push(b'\n');
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

// ---- the serde peer: the same records as derived borrowed structs ----------------------

#[derive(Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[serde(bound(deserialize = "P: Deserialize<'de>", serialize = "P: Serialize"))]
enum SRecord<'a, P> {
    User(#[serde(borrow)] SUser<'a, P>),
    Assistant(#[serde(borrow)] SAssistant<'a, P>),
    StreamEvent(#[serde(borrow)] SStreamEvent<'a, P>),
    Result(#[serde(borrow)] SResult<'a, P>),
    System(#[serde(borrow)] SSystem<'a, P>),
    ControlRequest(#[serde(borrow)] SControlRequest<'a, P>),
    RateLimitEvent(#[serde(borrow)] SRateLimitEvent<'a>),
    ToolProgress(#[serde(borrow)] SToolProgress<'a>),
    KeepAlive,
}

#[derive(Deserialize, Serialize)]
#[serde(untagged)]
enum SUserMessage<'a, P> {
    Plain(#[serde(borrow)] Cow<'a, str>),
    Object {
        #[serde(borrow)]
        role: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        content_version: Option<u64>,
        #[serde(borrow)]
        content: SContent<'a, P>,
    },
}

#[derive(Deserialize, Serialize)]
#[serde(untagged)]
enum SContent<'a, P> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Blocks(Vec<P>),
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct SUser<'a, P> {
    #[serde(borrow)]
    message: SUserMessage<'a, P>,
    #[serde(borrow)]
    parent_tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Option<Cow<'a, str>>,
    #[serde(borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(rename = "isSynthetic", skip_serializing_if = "Option::is_none")]
    is_synthetic: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_use_result: Option<P>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    priority: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "isReplay", skip_serializing_if = "Option::is_none")]
    is_replay: Option<bool>,
}

#[derive(Deserialize, Serialize)]
struct SAssistant<'a, P> {
    message: P,
    #[serde(borrow)]
    parent_tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    error: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Serialize)]
struct SStreamEvent<'a, P> {
    event: P,
    #[serde(borrow)]
    parent_tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct SModelUsage {
    #[serde(rename = "inputTokens")]
    input_tokens: u64,
    #[serde(rename = "outputTokens")]
    output_tokens: u64,
    #[serde(rename = "cacheReadInputTokens")]
    cache_read_input_tokens: u64,
    #[serde(rename = "cacheCreationInputTokens")]
    cache_creation_input_tokens: u64,
    #[serde(rename = "webSearchRequests", skip_serializing_if = "Option::is_none")]
    web_search_requests: Option<u64>,
    #[serde(rename = "costUSD")]
    cost_usd: Option<f64>,
    #[serde(rename = "contextWindow", skip_serializing_if = "Option::is_none")]
    context_window: Option<u64>,
    #[serde(rename = "maxOutputTokens", skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
}

#[derive(Deserialize, Serialize)]
struct SDenial<'a, P> {
    #[serde(borrow)]
    tool_name: Cow<'a, str>,
    #[serde(borrow)]
    tool_use_id: Cow<'a, str>,
    tool_input: P,
}

#[derive(Deserialize, Serialize)]
struct SResult<'a, P> {
    #[serde(borrow)]
    subtype: Cow<'a, str>,
    is_error: bool,
    duration_ms: u64,
    duration_api_ms: u64,
    num_turns: i64,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    result: Option<Cow<'a, str>>,
    #[serde(borrow)]
    stop_reason: Option<Cow<'a, str>>,
    total_cost_usd: Option<f64>,
    usage: P,
    #[serde(rename = "modelUsage", borrow, skip_serializing_if = "Option::is_none")]
    model_usage: Option<std::collections::BTreeMap<Cow<'a, str>, SModelUsage>>,
    #[serde(borrow, default = "Vec::new")]
    permission_denials: Vec<SDenial<'a, P>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    errors: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
enum SSystem<'a, P> {
    Init(#[serde(borrow)] SInit<'a, P>),
    SessionStateChanged(#[serde(borrow)] SState<'a>),
    Status(#[serde(borrow)] SStatus<'a>),
    TaskProgress(#[serde(borrow)] STaskProgress<'a, P>),
    TaskNotification(#[serde(borrow)] STaskNotification<'a, P>),
    HookResponse(#[serde(borrow)] SHookResponse<'a>),
    CompactBoundary(#[serde(borrow)] SCompactBoundary<'a, P>),
}

#[derive(Deserialize, Serialize)]
struct SNameStatus<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow)]
    status: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct SInit<'a, P> {
    #[serde(
        rename = "apiKeySource",
        borrow,
        skip_serializing_if = "Option::is_none"
    )]
    api_key_source: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    claude_code_version: Option<Cow<'a, str>>,
    #[serde(borrow)]
    cwd: Cow<'a, str>,
    #[serde(borrow)]
    tools: Vec<Cow<'a, str>>,
    #[serde(borrow)]
    mcp_servers: Vec<SNameStatus<'a>>,
    #[serde(borrow)]
    model: Cow<'a, str>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    provider: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    provider_type: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_capabilities: Option<P>,
    #[serde(rename = "permissionMode", borrow)]
    permission_mode: Cow<'a, str>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    slash_commands: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    output_style: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    skills: Option<Vec<Cow<'a, str>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    plugins: Option<P>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_capabilities: Option<P>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct SState<'a> {
    #[serde(borrow)]
    state: Cow<'a, str>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct SStatus<'a> {
    #[serde(borrow)]
    status: Option<Cow<'a, str>>,
    #[serde(
        rename = "permissionMode",
        borrow,
        skip_serializing_if = "Option::is_none"
    )]
    permission_mode: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct STaskProgress<'a, P> {
    #[serde(borrow)]
    task_id: Cow<'a, str>,
    #[serde(borrow)]
    description: Cow<'a, str>,
    usage: P,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    last_tool_name: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    summary: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct STaskNotification<'a, P> {
    #[serde(borrow)]
    task_id: Cow<'a, str>,
    #[serde(borrow)]
    status: Cow<'a, str>,
    #[serde(borrow)]
    output_file: Cow<'a, str>,
    #[serde(borrow)]
    summary: Cow<'a, str>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<P>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct SHookResponse<'a> {
    #[serde(borrow)]
    hook_id: Cow<'a, str>,
    #[serde(borrow)]
    hook_name: Cow<'a, str>,
    #[serde(borrow)]
    hook_event: Cow<'a, str>,
    #[serde(borrow)]
    output: Cow<'a, str>,
    #[serde(borrow)]
    stdout: Cow<'a, str>,
    #[serde(borrow)]
    stderr: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i64>,
    #[serde(borrow)]
    outcome: Cow<'a, str>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct SCompactBoundary<'a, P> {
    compact_metadata: P,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct SControlRequest<'a, P> {
    #[serde(borrow)]
    request_id: Cow<'a, str>,
    #[serde(borrow)]
    request: SCanUseTool<'a, P>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct SCanUseTool<'a, P> {
    #[serde(borrow)]
    subtype: Cow<'a, str>,
    #[serde(borrow)]
    tool_name: Cow<'a, str>,
    input: P,
    #[serde(borrow)]
    tool_use_id: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permission_suggestions: Option<P>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    blocked_path: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    decision_reason: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    title: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    display_name: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    description: Option<Cow<'a, str>>,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    agent_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Serialize)]
struct SRateLimitInfo<'a> {
    #[serde(borrow)]
    status: Cow<'a, str>,
    #[serde(rename = "resetsAt", skip_serializing_if = "Option::is_none")]
    resets_at: Option<i64>,
    #[serde(
        rename = "rateLimitType",
        borrow,
        skip_serializing_if = "Option::is_none"
    )]
    rate_limit_type: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    utilization: Option<f64>,
}

#[derive(Deserialize, Serialize)]
struct SRateLimitEvent<'a> {
    #[serde(borrow)]
    rate_limit_info: SRateLimitInfo<'a>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

#[derive(Deserialize, Serialize)]
struct SToolProgress<'a> {
    #[serde(borrow)]
    tool_use_id: Cow<'a, str>,
    #[serde(borrow)]
    tool_name: Cow<'a, str>,
    #[serde(borrow)]
    parent_tool_use_id: Option<Cow<'a, str>>,
    elapsed_time_seconds: f64,
    #[serde(borrow, skip_serializing_if = "Option::is_none")]
    task_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    uuid: Cow<'a, str>,
    #[serde(borrow)]
    session_id: Cow<'a, str>,
}

// ---- benchmarks -----------------------------------------------------------------------

fn lines(stream: &[u8]) -> Vec<&[u8]> {
    stream
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect()
}

fn bench_decode(c: &mut Criterion) {
    let stream = stream();
    let lines = lines(&stream);
    // Both sides must accept every line, or the comparison means nothing.
    let mut parser = Parser::new();
    for (i, l) in lines.iter().enumerate() {
        if let Err(e) = OutputRecord::decode_line(l, &mut parser) {
            panic!("line {i}: wire rejects the sample: {e}");
        }
        if let Err(e) = serde_json::from_slice::<SRecord<'_, IgnoredAny>>(l) {
            panic!(
                "line {i}: serde rejects the sample: {e}: {}",
                String::from_utf8_lossy(&l[..l.len().min(200)])
            );
        }
    }
    let mut g = c.benchmark_group("records_decode");
    g.throughput(Throughput::Bytes(stream.len() as u64));
    g.bench_function("wire", |b| {
        let mut parser = Parser::new();
        b.iter(|| {
            for l in &lines {
                let r = OutputRecord::decode_line(black_box(l), &mut parser);
                black_box(&r);
            }
        })
    });
    g.bench_function("serde_json_derived", |b| {
        b.iter(|| {
            for l in &lines {
                let r = serde_json::from_slice::<SRecord<'_, IgnoredAny>>(black_box(l));
                black_box(&r);
            }
        })
    });
    g.finish();
}

fn bench_encode(c: &mut Criterion) {
    let stream = stream();
    let lines = lines(&stream);
    let mut parser = Parser::new();
    let ours: Vec<OutputRecord<'_>> = lines
        .iter()
        .map(|l| OutputRecord::decode_line(l, &mut parser).expect("sample decodes"))
        .collect();
    let theirs: Vec<SRecord<'_, serde_json::Value>> = lines
        .iter()
        .map(|l| serde_json::from_slice(l).expect("sample decodes"))
        .collect();
    let mut g = c.benchmark_group("records_encode");
    g.throughput(Throughput::Bytes(stream.len() as u64));
    g.bench_function("wire", |b| {
        let mut buf = Vec::with_capacity(1 << 20);
        b.iter(|| {
            for r in &ours {
                buf.clear();
                r.encode(&mut buf);
                buf.push(b'\n');
                black_box(&buf);
            }
        })
    });
    g.bench_function("serde_json_to_writer", |b| {
        let mut buf = Vec::with_capacity(1 << 20);
        b.iter(|| {
            for r in &theirs {
                buf.clear();
                serde_json::to_writer(&mut buf, r).expect("serializes");
                buf.push(b'\n');
                black_box(&buf);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench_decode, bench_encode);
criterion_main!(benches);
