//! Deterministic generator of realistic agent output streams (NDJSON), for benchmarks, the
//! whole-process comparison and tests.
//!
//! Owns: producing, from a seed, byte-identical streams of compact, valid, duplicate-free JSON
//! records, one per line, shaped like what a coding agent writes on stdout with
//! `--output-format stream-json --include-partial-messages`: `system/init` per session,
//! `stream_event` partial messages, one `assistant` record per finished content block (text,
//! thinking, `tool_use` with its input object), `control_request` can_use_tool (PERM-020),
//! `user` records carrying tool results, lighter system events (`session_state_changed`,
//! `status`, `task_progress`, `task_notification`, `hook_response`, `compact_boundary`),
//! `tool_progress`, `rate_limit_event`, and a `result` per turn (`total_cost_usd`/`costUSD`
//! sometimes `null`, WIRE-012).
//!
//! Never: reads a clock, the environment or any file; uses the library's own JSON code (the
//! benchmark input must not share code with the code under test); emits whitespace between
//! tokens, a raw U+2028/U+2029 (always `\u2028`/`\u2029`, framing rule), a lone surrogate, or a
//! repeated member name (WIRE-014).
//!
//! # Content
//! Strings are dense in what a decoder must unescape: source files as the Read tool prints them
//! (`     1→` or `     1\t` line numbers, so `\n`, `\t`, `\"`, `\\` escapes throughout), command
//! output, diffs, Windows paths and regexes, tool inputs re-sent as `input_json_delta` JSON text
//! (escaped JSON inside a string). Prose and tokens include accents, Greek, Cyrillic, CJK and
//! emoji as raw UTF-8; about 9% of model responses and records are spelled the way Python's
//! `ensure_ascii` does, so non-ASCII text appears as `\u00e9` and emoji as surrogate-pair escapes
//! (`\ud83d\ude00`, `\uD83D\uDE00`); a prose sentence carries a U+2028, written as `\u2028`.
//!
//! # Byte mix of [`realistic_stream`]
//! Measured on seed 1, 64 MiB (83,613 records; `tests/codec/sample_stream.rs` asserts each share
//! loosely on 16 MiB):
//!
//! | records | share of bytes | share of records |
//! | --- | --- | --- |
//! | `user` (tool results)          | 62.9% | 3.2% |
//! | `stream_event`                 | 29.0% | 86.8% |
//! | `assistant`                    | 5.7%  | 5.9% |
//! | `system`, `tool_progress`, `rate_limit_event` | 1.1% | 3.0% |
//! | `control_request`              | 0.6%  | 0.5% |
//! | `result`                       | 0.6%  | 0.5% |
//!
//! Record sizes range from ~150 bytes (a `stream_event` delta) to ~270 KB (a 1,500-line file
//! read, whose text appears twice: in the `tool_result` with line numbers and in
//! `tool_use_result.file.content` without); the median record is ~250 bytes, the mean ~800.
//! Escapes in 64 MiB: ~1.0 M `\n`, ~0.67 M `\"`, ~0.34 M `\\`, ~0.41 M `\t`, ~0.18 M `\uXXXX`.
//!
//! # Speed
//! Generation is linear and allocation-light (reused scratch buffers): 64 MiB takes well under a
//! second in a release build.

mod content;
mod events;
mod pools;
mod records;
mod rng;
mod writer;

use events::ResponsePlan;
use records::{Gen, ToolCall};

/// A realistic agent output stream of at least `target_bytes` bytes (when `target_bytes > 0`):
/// whole records, each terminated by LF, ending with the first record that reaches
/// `target_bytes`. The same seed always yields the same bytes.
pub fn realistic_stream(seed: u64, target_bytes: usize) -> Vec<u8> {
    let mut gen = Gen::new(seed, target_bytes.saturating_add(1 << 20));
    let mut calls: Vec<ToolCall> = Vec::with_capacity(4);
    while gen.out.buf.len() < target_bytes {
        session(&mut gen, &mut calls, target_bytes);
    }
    cut_after_target(gen.out.buf, target_bytes)
}

/// A stream of only small `stream_event` records (message_start, content block start/stop, many
/// `text_delta`s, some `thinking_delta`/`input_json_delta`, message_delta, message_stop), at
/// least `target_bytes` long, ending with the record that reaches it. Deterministic per seed.
pub fn stream_events(seed: u64, target_bytes: usize) -> Vec<u8> {
    let mut gen = Gen::new(
        seed ^ 0x5EED_57E4_0000_0001,
        target_bytes.saturating_add(1 << 20),
    );
    let mut calls: Vec<ToolCall> = Vec::with_capacity(4);
    while gen.out.buf.len() < target_bytes {
        let plan = ResponsePlan {
            thinking: gen.rng.chance(150),
            text_tokens: gen.rng.log_size(5, 300),
            tools: usize::from(gen.rng.chance(300)),
        };
        let start = gen.out.buf.len();
        gen.response(&plan, &mut calls);
        calls.clear();
        keep_only_stream_events(&mut gen.out.buf, start);
    }
    cut_after_target(gen.out.buf, target_bytes)
}

/// One session: `system/init`, then turns until the target is reached or the session ends.
fn session(gen: &mut Gen, calls: &mut Vec<ToolCall>, target: usize) {
    gen.system_init();
    let turns = gen.rng.range(1, 6);
    for _ in 0..turns {
        if gen.out.buf.len() >= target {
            return;
        }
        turn(gen, calls, target);
    }
}

/// One turn: model responses with tool calls, each call's permission request (sometimes) and
/// result, light system events in between, a final text response and the `result`.
fn turn(gen: &mut Gen, calls: &mut Vec<ToolCall>, target: usize) {
    gen.session_state("running");
    let steps = gen.rng.range(1, 10);
    let mut num_turns = 1;
    for _ in 0..steps {
        if gen.out.buf.len() >= target {
            return;
        }
        let plan = ResponsePlan {
            thinking: gen.rng.chance(200),
            text_tokens: if gen.rng.chance(600) {
                gen.rng.log_size(4, 120)
            } else {
                0
            },
            tools: if gen.rng.chance(150) { 2 } else { 1 },
        };
        calls.clear();
        gen.response(&plan, calls);
        num_turns += 1;
        for call in calls.iter() {
            if matches!(call.name, "Bash" | "Edit" | "Write") && gen.rng.chance(350) {
                gen.session_state("requires_action");
                gen.tool_input(call);
                gen.can_use_tool(call);
                gen.session_state("running");
            }
            if gen.rng.chance(250) {
                gen.minor_event(call);
            }
            gen.choose_spelling();
            gen.tool_result(call);
            gen.out.spelling = writer::Spelling::Raw;
        }
    }
    let plan = ResponsePlan {
        thinking: false,
        text_tokens: gen.rng.log_size(10, 250),
        tools: 0,
    };
    gen.response(&plan, calls);
    calls.clear();
    gen.result(num_turns);
    gen.session_state("idle");
}

/// Drops every record after `start` that is not a `stream_event` (the assistant records that
/// `Gen::response` writes after each block).
fn keep_only_stream_events(buf: &mut Vec<u8>, start: usize) {
    const HEAD: &[u8] = b"{\"type\":\"stream_event\"";
    let tail = buf.split_off(start.min(buf.len()));
    for line in tail.split_inclusive(|&b| b == b'\n') {
        if line.starts_with(HEAD) {
            buf.extend_from_slice(line);
        }
    }
}

/// Truncates after the LF of the record that reaches `target` bytes.
fn cut_after_target(mut buf: Vec<u8>, target: usize) -> Vec<u8> {
    if target == 0 {
        buf.clear();
        return buf;
    }
    let from = target.saturating_sub(1).min(buf.len());
    if let Some(rel) = buf.get(from..).and_then(|rest| memchr::memchr(b'\n', rest)) {
        buf.truncate(from + rel + 1);
    }
    buf
}
