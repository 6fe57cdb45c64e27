//! Recorded-shaped Chat Completions streams (the exact shape the API sends) through the SSE
//! parser and the mapper.

use super::*;
use agentx_core::model::{ModelEvent as E, StopReason, Usage};

const HEAD: &str = r#"{"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_f33640a400","#;

fn chunk(choices: &str) -> String {
    format!("data: {HEAD}\"choices\":[{choices}],\"usage\":null}}\n\n")
}

fn delta(d: &str, finish: &str) -> String {
    chunk(&format!(
        r#"{{"index":0,"delta":{d},"logprobs":null,"finish_reason":{finish}}}"#
    ))
}

fn usage(prompt: u64, completion: u64) -> String {
    format!(
        "data: {HEAD}\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":{completion},\"total_tokens\":{},\"prompt_tokens_details\":{{\"cached_tokens\":0,\"audio_tokens\":0}},\"completion_tokens_details\":{{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}}}}\n\n",
        prompt + completion
    )
}

fn run(stream: &str) -> Vec<E> {
    run_split(stream, usize::MAX)
}

/// Feeds the stream in pieces of `piece` bytes; stops at the first terminal event.
fn run_split(stream: &str, piece: usize) -> Vec<E> {
    let mut parser = sse::Parser::new();
    let mut mapper = Mapper::new("msg_test".into());
    let mut events = Vec::new();
    let mut out = Vec::new();
    for part in stream.as_bytes().chunks(piece.min(stream.len().max(1))) {
        parser.feed(part, &mut events).unwrap();
        for e in events.drain(..) {
            if mapper.event(&e, &mut out) == Step::Finished {
                return out;
            }
        }
    }
    mapper.end_of_stream(&mut out);
    out
}

fn start() -> E {
    E::MessageStart {
        message_id: "msg_test".into(),
    }
}

fn text(index: u32, t: &str) -> E {
    E::TextDelta {
        index,
        text: t.into(),
    }
}

fn args(index: u32, j: &str) -> E {
    E::InputJsonDelta {
        index,
        partial_json: j.into(),
    }
}

fn stop(reason: StopReason, input: u64, output: u64) -> E {
    E::MessageStop {
        stop_reason: reason,
        usage: Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        },
        cost: None,
    }
}

fn text_stream() -> String {
    [
        delta(
            r#"{"role":"assistant","content":"","refusal":null}"#,
            "null",
        ),
        delta(r#"{"content":"Hello"}"#, "null"),
        delta(r#"{"content":" wor\u006cd"}"#, "null"),
        delta("{}", r#""stop""#),
        usage(12, 3),
        "data: [DONE]\n\n".into(),
    ]
    .concat()
}

#[test]
fn profile_14_text_only_stream_wire_012_null_cost() {
    let want = vec![
        start(),
        E::TextStart { index: 0 },
        text(0, "Hello"),
        text(0, " world"),
        E::BlockStop { index: 0 },
        stop(StopReason::EndTurn, 12, 3),
    ];
    let stream = text_stream();
    assert_eq!(run(&stream), want);
    for piece in [1, 2, 7, 64] {
        assert_eq!(run_split(&stream, piece), want, "piece {piece}");
    }
}

fn one_tool_stream() -> String {
    [
        delta(
            r#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function","function":{"name":"Read","arguments":""}}],"refusal":null}"#,
            "null",
        ),
        delta(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}"#, "null"),
        delta(r#"{"tool_calls":[{"index":0,"function":{"arguments":"file_path"}}]}"#, "null"),
        delta(r#"{"tool_calls":[{"index":0,"function":{"arguments":"\":\"a.txt\"}"}}]}"#, "null"),
        delta("{}", r#""tool_calls""#),
        usage(80, 17),
        "data: [DONE]\n\n".into(),
    ]
    .concat()
}

#[test]
fn profile_14_one_tool_call_streamed_in_pieces() {
    assert_eq!(
        run(&one_tool_stream()),
        vec![
            start(),
            E::ToolUseStart {
                index: 0,
                id: "call_DdmO9pD3xa9XTPNJ32zg2hcA".into(),
                name: "Read".into()
            },
            args(0, "{\""),
            args(0, "file_path"),
            args(0, "\":\"a.txt\"}"),
            E::BlockStop { index: 0 },
            stop(StopReason::ToolUse, 80, 17),
        ]
    );
}

fn parallel_stream() -> String {
    [
        delta(r#"{"role":"assistant","content":"Checking both."}"#, "null"),
        delta(
            r#"{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Bash","arguments":""}}]}"#,
            "null",
        ),
        delta(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]}"#, "null"),
        delta(r#"{"tool_calls":[{"index":0,"function":{"arguments":"and\":\"ls\"}"}}]}"#, "null"),
        delta(
            r#"{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"Read","arguments":""}}]}"#,
            "null",
        ),
        delta(r#"{"tool_calls":[{"index":1,"function":{"arguments":"{\"file_"}}]}"#, "null"),
        delta(r#"{"tool_calls":[{"index":1,"function":{"arguments":"path\":\"b\"}"}}]}"#, "null"),
        delta("{}", r#""tool_calls""#),
        usage(100, 40),
        "data: [DONE]\n\n".into(),
    ]
    .concat()
}

#[test]
fn profile_14_two_parallel_tool_calls_with_split_arguments() {
    let want = vec![
        start(),
        E::TextStart { index: 0 },
        text(0, "Checking both."),
        E::BlockStop { index: 0 },
        E::ToolUseStart {
            index: 1,
            id: "call_a".into(),
            name: "Bash".into(),
        },
        args(1, "{\"comm"),
        args(1, "and\":\"ls\"}"),
        E::BlockStop { index: 1 },
        E::ToolUseStart {
            index: 2,
            id: "call_b".into(),
            name: "Read".into(),
        },
        args(2, "{\"file_"),
        args(2, "path\":\"b\"}"),
        E::BlockStop { index: 2 },
        stop(StopReason::ToolUse, 100, 40),
    ];
    assert_eq!(run(&parallel_stream()), want);
    assert_eq!(run_split(&parallel_stream(), 5), want);
}

#[test]
fn two_calls_in_one_chunk_and_servers_that_send_stop_after_tool_calls() {
    let stream = [
        delta(
            r#"{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"A","arguments":"{}"}},{"index":1,"id":"c2","type":"function","function":{"name":"B","arguments":"{}"}}]}"#,
            "null",
        ),
        delta("{}", r#""stop""#),
        "data: [DONE]\n\n".into(),
    ]
    .concat();
    assert_eq!(
        run(&stream),
        vec![
            start(),
            E::ToolUseStart {
                index: 0,
                id: "c1".into(),
                name: "A".into()
            },
            args(0, "{}"),
            E::BlockStop { index: 0 },
            E::ToolUseStart {
                index: 1,
                id: "c2".into(),
                name: "B".into()
            },
            args(1, "{}"),
            E::BlockStop { index: 1 },
            stop(StopReason::ToolUse, 0, 0),
        ]
    );
}

#[test]
fn profile_14_length_truncates_an_open_tool_call_which_is_not_stopped() {
    let stream = [
        delta(r#"{"content":"x"}"#, "null"),
        delta(
            r#"{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"Bash","arguments":"{\"comm"}}]}"#,
            "null",
        ),
        delta("{}", r#""length""#),
        usage(5, 4096),
        "data: [DONE]\n\n".into(),
    ]
    .concat();
    assert_eq!(
        run(&stream),
        vec![
            start(),
            E::TextStart { index: 0 },
            text(0, "x"),
            E::BlockStop { index: 0 },
            E::ToolUseStart {
                index: 1,
                id: "c1".into(),
                name: "Bash".into()
            },
            args(1, "{\"comm"),
            stop(StopReason::MaxTokens, 5, 4096),
        ]
    );
    // A text block cut by length is closed.
    let stream = [
        delta(r#"{"content":"abc"}"#, r#""length""#),
        "data: [DONE]\n\n".into(),
    ]
    .concat();
    assert_eq!(
        run(&stream),
        vec![
            start(),
            E::TextStart { index: 0 },
            text(0, "abc"),
            E::BlockStop { index: 0 },
            stop(StopReason::MaxTokens, 0, 0),
        ]
    );
}

#[test]
fn profile_14_content_filter_is_refusal_and_refusal_text_is_shown() {
    let stream = [
        delta(r#"{"refusal":"I can't help with that."}"#, "null"),
        delta("{}", r#""content_filter""#),
        "data: [DONE]\n\n".into(),
    ]
    .concat();
    assert_eq!(
        run(&stream),
        vec![
            start(),
            E::TextStart { index: 0 },
            text(0, "I can't help with that."),
            E::BlockStop { index: 0 },
            stop(StopReason::Refusal, 0, 0),
        ]
    );
}

#[test]
fn profile_14_error_event_in_stream_is_server_error_with_message() {
    let stream = [
        delta(r#"{"content":"Hi"}"#, "null"),
        "data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n".into(),
    ]
    .concat();
    assert_eq!(
        run(&stream),
        vec![
            start(),
            E::TextStart { index: 0 },
            text(0, "Hi"),
            E::Failed {
                category: AssistantError::ServerError,
                message: Some("The server had an error while processing your request.".into())
            },
        ]
    );
}

#[test]
fn profile_14_dropped_stream_is_unknown() {
    let mut stream = text_stream();
    stream.truncate(stream.find("data: [DONE]").unwrap());
    let events = run(&stream);
    assert_eq!(
        events.last(),
        Some(&E::Failed {
            category: AssistantError::Unknown,
            message: None
        })
    );
    assert!(!events.iter().any(|e| matches!(e, E::MessageStop { .. })));
}

#[test]
fn malformed_chunks_are_unknown_failures_never_panics() {
    let unknown = E::Failed {
        category: AssistantError::Unknown,
        message: None,
    };
    for bad in [
        "data: {not json}\n\n",
        "data: [1]\n\n",
        "data: {\"choices\":{}}\n\n",
        "data: {\"choices\":[{\"delta\":{\"content\":5}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"usage\":{\"prompt_tokens\":-1}}\n\n",
        "data: {\"a\":1,\"a\":2}\n\n",
        // [DONE] without any finish_reason.
        "data: [DONE]\n\n",
    ] {
        assert_eq!(run(bad).last(), Some(&unknown), "{bad}");
    }
    // Arguments for a call that was already closed (interleaved calls).
    let stream = [
        delta(
            r#"{"tool_calls":[{"index":0,"id":"c1","function":{"name":"A","arguments":"{"}}]}"#,
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":1,"id":"c2","function":{"name":"B","arguments":"{"}}]}"#,
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"}"}}]}"#,
            "null",
        ),
    ]
    .concat();
    assert_eq!(run(&stream).last(), Some(&unknown));
}

#[test]
fn nothing_after_the_terminal_event() {
    let mut parser = sse::Parser::new();
    let mut mapper = Mapper::new("m".into());
    let mut events = Vec::new();
    parser
        .feed(
            format!("{}data: [DONE]\n\n", delta("{}", "\"stop\"")).as_bytes(),
            &mut events,
        )
        .unwrap();
    let mut out = Vec::new();
    for e in &events {
        mapper.event(e, &mut out);
    }
    let n = out.len();
    assert_eq!(mapper.event(&events[0], &mut out), Step::Finished);
    assert_eq!(mapper.end_of_stream(&mut out), Step::Finished);
    assert_eq!(out.len(), n);
}

#[test]
fn error_bodies_give_their_message() {
    assert_eq!(
        error_body_message(br#"{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#),
        Some("Rate limit reached".into())
    );
    assert_eq!(error_body_message(b"<html>502</html>"), None);
    assert_eq!(
        error_body_message(br#"{"error":"plain"}"#),
        Some("plain".into())
    );
}

/// `n` bytes of text in 1 MiB deltas (the last one shorter), then a normal end.
fn long_text_stream(n: usize) -> String {
    let mut s = delta(r#"{"role":"assistant","content":""}"#, "null");
    let mut left = n;
    while left > 0 {
        let k = left.min(1 << 20);
        s += &delta(&format!(r#"{{"content":"{}"}}"#, "x".repeat(k)), "null");
        left -= k;
    }
    s += &delta("{}", r#""stop""#);
    s += &usage(1, 1);
    s + "data: [DONE]\n\n"
}

fn text_bytes(events: &[E]) -> usize {
    events
        .iter()
        .map(|e| match e {
            E::TextDelta { text, .. } => text.len(),
            _ => 0,
        })
        .sum()
}

#[test]
fn a_response_of_max_response_bytes_ends_normally_and_one_byte_more_is_cut_for_length() {
    let at = run(&long_text_stream(MAX_RESPONSE_BYTES));
    assert_eq!(text_bytes(&at), MAX_RESPONSE_BYTES);
    assert_eq!(at.last(), Some(&stop(StopReason::EndTurn, 1, 1)));

    let over = run(&long_text_stream(MAX_RESPONSE_BYTES + 1));
    // The delta that passes the bound is not shown; the message ends as cut for length, with
    // no usage reported (its cost unknown, WIRE-012).
    assert_eq!(text_bytes(&over), MAX_RESPONSE_BYTES);
    let n = over.len();
    assert_eq!(over[n - 2], E::BlockStop { index: 0 });
    assert_eq!(over[n - 1], stop(StopReason::MaxTokens, 0, 0));
}

fn calls_stream(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        s += &delta(
            &format!(
                r#"{{"tool_calls":[{{"index":{i},"id":"call_{i}","type":"function","function":{{"name":"Read","arguments":"{{}}"}}}}]}}"#
            ),
            "null",
        );
    }
    s += &delta("{}", r#""tool_calls""#);
    s + "data: [DONE]\n\n"
}

#[test]
fn a_response_of_max_tool_calls_runs_them_all_and_one_call_more_is_cut_for_length() {
    let starts = |events: &[E]| {
        events
            .iter()
            .filter(|e| matches!(e, E::ToolUseStart { .. }))
            .count()
    };
    let stops = |events: &[E]| {
        events
            .iter()
            .filter(|e| matches!(e, E::BlockStop { .. }))
            .count()
    };
    let at = run(&calls_stream(MAX_TOOL_CALLS));
    assert_eq!((starts(&at), stops(&at)), (MAX_TOOL_CALLS, MAX_TOOL_CALLS));
    assert_eq!(at.last(), Some(&stop(StopReason::ToolUse, 0, 0)));

    let over = run(&calls_stream(MAX_TOOL_CALLS + 1));
    // The 128 calls before it are complete (each closed); the 129th is not made.
    assert_eq!(
        (starts(&over), stops(&over)),
        (MAX_TOOL_CALLS, MAX_TOOL_CALLS)
    );
    assert_eq!(over.last(), Some(&stop(StopReason::MaxTokens, 0, 0)));
}

#[test]
fn arguments_that_pass_the_bound_drop_their_open_call_as_truncated() {
    let big = "a".repeat(1 << 20);
    let mut s = delta(
        r#"{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Write","arguments":""}}]}"#,
        "null",
    );
    for _ in 0..=MAX_RESPONSE_BYTES >> 20 {
        s += &delta(
            &format!(r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":"{big}"}}}}]}}"#),
            "null",
        );
    }
    s += &delta("{}", r#""tool_calls""#);
    s += "data: [DONE]\n\n";
    let out = run(&s);
    assert!(!out.iter().any(|e| matches!(e, E::BlockStop { .. })));
    assert_eq!(out.last(), Some(&stop(StopReason::MaxTokens, 0, 0)));
}
