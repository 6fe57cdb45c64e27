//! Every directive of PROFILE §9 on a virtual clock.

use super::*;
use crate::model::{Block, ModelRequest};

fn req(turn: u64, index: u32, messages: Vec<Message>) -> ModelRequest {
    ModelRequest {
        turn,
        index,
        model: "agentx-echo".into(),
        effort: None,
        messages: messages.into(),
        tools: Vec::new(),
        system: None,
        output_schema: None,
    }
}

fn tool_use(id: &str) -> Block {
    Block::ToolUse {
        id: id.into(),
        name: "Read".into(),
        input: "{}".into(),
    }
}

/// One answered tool group: its assistant message and the tool's result.
fn answered(id: &str) -> [Message; 2] {
    [
        Message::Assistant {
            message_id: format!("msg_{id}"),
            blocks: vec![tool_use(id)],
        },
        Message::ToolResult {
            tool_use_id: id.into(),
            content: "x".into(),
            is_error: false,
        },
    ]
}

fn user(text: &str) -> Message {
    Message::user(text)
}

/// Runs a call to completion on virtual time, jumping to every wake-up; `(ms, event)` pairs.
fn run_all(model: &ScriptedModel, r: &ModelRequest) -> Vec<(u64, ModelEvent)> {
    let t0 = Instant::now();
    let mut run = model.start(r, t0);
    let mut now = t0;
    let mut out = Vec::new();
    for _ in 0..100_000 {
        match run.poll(now) {
            Step::Event(e) => out.push(((now - t0).as_millis() as u64, e)),
            Step::Pending(Some(t)) => {
                assert!(t > now, "a wake-up must be in the future");
                now = t;
            }
            Step::Pending(None) => panic!("waits for a network decision"),
            Step::Done => return out,
        }
    }
    panic!("run does not end");
}

fn events(text: &str) -> Vec<ModelEvent> {
    run_all(&ScriptedModel::new(None, 7), &req(1, 0, vec![user(text)]))
        .into_iter()
        .map(|(_, e)| e)
        .collect()
}

fn texts(evs: &[ModelEvent]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in evs {
        match e {
            ModelEvent::TextStart { .. } => out.push(String::new()),
            ModelEvent::TextDelta { text, .. } => out.last_mut().unwrap().push_str(text),
            _ => {}
        }
    }
    out
}

fn stop(evs: &[ModelEvent]) -> (StopReason, Usage, Option<f64>) {
    evs.iter()
        .find_map(|e| match e {
            ModelEvent::MessageStop {
                stop_reason,
                usage,
                cost,
            } => Some((*stop_reason, *usage, *cost)),
            _ => None,
        })
        .expect("MessageStop")
}

fn usage(i: u64, o: u64) -> Usage {
    Usage {
        input_tokens: i,
        output_tokens: o,
        ..Usage::default()
    }
}

#[test]
fn echo_is_one_text_block_streamed_by_word() {
    let evs = events("hello there  world");
    assert_eq!(
        evs,
        vec![
            ModelEvent::MessageStart {
                message_id: "msg_00000007_1_0".into()
            },
            ModelEvent::TextStart { index: 0 },
            ModelEvent::TextDelta {
                index: 0,
                text: "echo: ".into()
            },
            ModelEvent::TextDelta {
                index: 0,
                text: "hello ".into()
            },
            ModelEvent::TextDelta {
                index: 0,
                text: "there  ".into()
            },
            ModelEvent::TextDelta {
                index: 0,
                text: "world".into()
            },
            ModelEvent::BlockStop { index: 0 },
            ModelEvent::MessageStop {
                stop_reason: StopReason::EndTurn,
                usage: usage(3, 4),
                cost: None
            },
        ]
    );
}

#[test]
fn echo_lists_attachments_in_order() {
    let att = |id: &str, mime: &str, size: u64, sha: char| AttachmentRef {
        attachment_id: id.into(),
        kind: "image".into(),
        name: "x".into(),
        mime_type: mime.into(),
        size_bytes: size,
        sha256: sha.to_string().repeat(64),
        storage_id: format!("blob_sha256_{}", sha.to_string().repeat(64)),
    };
    let m = Message::User {
        text: "see".into(),
        attachments: vec![
            att("att_a", "image/png", 12, 'a'),
            att("att_b", "application/pdf", 9, 'b'),
        ],
        layout: Vec::new(),
    };
    let evs: Vec<_> = run_all(&ScriptedModel::new(None, 0), &req(1, 0, vec![m]))
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    assert_eq!(
        texts(&evs),
        vec![format!(
            "echo: see\n[attachment att_a image/png 12 {}]\n[attachment att_b application/pdf 9 {}]",
            "a".repeat(64),
            "b".repeat(64)
        )]
    );
}

#[test]
fn say_blocks_in_order_other_lines_ignored() {
    let evs = events("ignored\n!say one two\nalso ignored\n!say three");
    assert_eq!(texts(&evs), vec!["one two", "three"]);
    let idx: Vec<u32> = evs
        .iter()
        .filter_map(|e| match e {
            ModelEvent::BlockStop { index } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(idx, vec![0, 1]);
    assert_eq!(stop(&evs), (StopReason::EndTurn, usage(8, 3), None));
}

#[test]
fn consecutive_tools_are_one_message_and_followups_continue() {
    let prompt = "!say before\n!tool Read {\"file_path\": \"a.txt\"}\n!tool Bash {\"command\":\"ls\"}\n!say after\n!tool Write {\"file_path\":\"b\",\"content\":\"x\"}\n!say done";
    let model = ScriptedModel::new(None, 1);
    let c0: Vec<_> = run_all(&model, &req(4, 0, vec![user(prompt)]))
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    assert_eq!(
        c0,
        vec![
            ModelEvent::MessageStart {
                message_id: "msg_00000001_4_0".into()
            },
            ModelEvent::TextStart { index: 0 },
            ModelEvent::TextDelta {
                index: 0,
                text: "before".into()
            },
            ModelEvent::BlockStop { index: 0 },
            ModelEvent::ToolUseStart {
                index: 1,
                id: "toolu_00000001_4_0_0".into(),
                name: "Read".into()
            },
            ModelEvent::InputJsonDelta {
                index: 1,
                partial_json: "{\"file_path\":\"a.txt\"}".into()
            },
            ModelEvent::BlockStop { index: 1 },
            ModelEvent::ToolUseStart {
                index: 2,
                id: "toolu_00000001_4_0_1".into(),
                name: "Bash".into()
            },
            ModelEvent::InputJsonDelta {
                index: 2,
                partial_json: "{\"command\":\"ls\"}".into()
            },
            ModelEvent::BlockStop { index: 2 },
            ModelEvent::MessageStop {
                stop_reason: StopReason::ToolUse,
                usage: usage(16, 1),
                cost: None
            },
        ]
    );
    let mut history = vec![
        user(prompt),
        Message::Assistant {
            message_id: "msg_00000001_4_0".into(),
            blocks: vec![
                Block::Text("before".into()),
                tool_use("toolu_00000001_4_0_0"),
            ],
        },
        Message::ToolResult {
            tool_use_id: "toolu_00000001_4_0_0".into(),
            content: "x".into(),
            is_error: false,
        },
    ];
    let c1: Vec<_> = run_all(&model, &req(4, 1, history.clone()))
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    assert_eq!(texts(&c1), vec!["after"]);
    assert!(c1.contains(&ModelEvent::ToolUseStart {
        index: 1,
        id: "toolu_00000001_4_1_0".into(),
        name: "Write".into()
    }));
    assert_eq!(stop(&c1).0, StopReason::ToolUse);
    history.extend(answered("toolu_00000001_4_1_0"));
    let c2: Vec<_> = run_all(&model, &req(4, 2, history.clone()))
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    assert_eq!(texts(&c2), vec!["done"]);
    assert_eq!(stop(&c2), (StopReason::EndTurn, usage(0, 1), None));
    // Past the end (more groups answered than the prompt has): an empty end_turn message.
    history.extend(answered("toolu_extra"));
    let c3: Vec<_> = run_all(&model, &req(4, 3, history))
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    assert_eq!(c3.len(), 2);
    assert_eq!(stop(&c3).0, StopReason::EndTurn);
}

#[test]
fn trailing_tool_group_gets_an_empty_final_call() {
    let model = ScriptedModel::new(None, 1);
    let r0 = req(1, 0, vec![user("!tool Read {\"file_path\":\"x\"}")]);
    assert_eq!(stop(&events_of(&model, &r0)).0, StopReason::ToolUse);
    let mut history = vec![user("!tool Read {\"file_path\":\"x\"}")];
    history.extend(answered("toolu_1"));
    let r1 = req(1, 1, history);
    let c1 = events_of(&model, &r1);
    assert_eq!(c1.len(), 2);
    assert_eq!(stop(&c1).0, StopReason::EndTurn);
}

fn events_of(model: &ScriptedModel, r: &ModelRequest) -> Vec<ModelEvent> {
    run_all(model, r).into_iter().map(|(_, e)| e).collect()
}

#[test]
fn sleep_stalls_the_stream() {
    let out = run_all(
        &ScriptedModel::new(None, 0),
        &req(1, 0, vec![user("!say a\n!sleep 250\n!say b")]),
    );
    let at_b = out
        .iter()
        .find(|(_, e)| matches!(e, ModelEvent::TextStart { index: 1 }))
        .unwrap()
        .0;
    assert_eq!(at_b, 250);
    assert!(out
        .iter()
        .take_while(|(_, e)| !matches!(e, ModelEvent::TextStart { index: 1 }))
        .all(|(t, _)| *t == 0));
}

#[test]
fn sleep_is_ended_by_cancel() {
    let t0 = Instant::now();
    let mut run =
        ScriptedModel::new(None, 0).start(&req(1, 0, vec![user("!sleep 600000\n!say late")]), t0);
    assert!(matches!(
        run.poll(t0),
        Step::Event(ModelEvent::MessageStart { .. })
    ));
    assert_eq!(
        run.poll(t0),
        Step::Pending(Some(t0 + Duration::from_millis(600_000)))
    );
    run.cancel();
    assert_eq!(run.poll(t0), Step::Event(ModelEvent::Cancelled));
    assert_eq!(run.poll(t0), Step::Done);
}

#[test]
fn task_runs_beside_the_directives_and_outlives_the_message() {
    let out = run_all(
        &ScriptedModel::new(None, 0),
        &req(
            1,
            0,
            vec![user("!task t1 2 100\n!say go\n!sleep 150\n!say end")],
        ),
    );
    let seq: Vec<(u64, String)> = out
        .iter()
        .filter_map(|(t, e)| {
            let s = match e {
                ModelEvent::TaskStarted {
                    task_id,
                    description,
                } => {
                    format!("started {task_id} {description}")
                }
                ModelEvent::TaskProgress { task_id, step } => format!("progress {task_id} {step}"),
                ModelEvent::TaskNotification { task_id, status } => {
                    format!("notify {task_id} {}", status.as_str())
                }
                ModelEvent::TextStart { index } => format!("text {index}"),
                ModelEvent::MessageStop { .. } => "stop".into(),
                _ => return None,
            };
            Some((*t, s))
        })
        .collect();
    assert_eq!(
        seq,
        vec![
            (0, "started t1 scripted task t1".into()),
            (0, "text 0".into()),
            (100, "progress t1 1".into()),
            (150, "text 1".into()),
            (150, "stop".into()),
            (200, "progress t1 2".into()),
            (200, "notify t1 completed".into()),
        ]
    );
}

#[test]
fn cancel_stops_running_tasks_after_the_cancelled_message() {
    let t0 = Instant::now();
    let mut run = ScriptedModel::new(None, 0).start(
        &req(
            1,
            0,
            vec![user("!task a 5 1000\n!task b 5 1000\n!sleep 10000")],
        ),
        t0,
    );
    let mut evs = Vec::new();
    while let Step::Event(e) = run.poll(t0) {
        evs.push(e);
    }
    run.cancel();
    loop {
        match run.poll(t0) {
            Step::Event(e) => evs.push(e),
            Step::Done => break,
            s => panic!("{s:?}"),
        }
    }
    let tail = &evs[evs.len() - 3..];
    assert_eq!(
        tail,
        &[
            ModelEvent::Cancelled,
            ModelEvent::TaskNotification {
                task_id: "a".into(),
                status: TaskStatus::Stopped
            },
            ModelEvent::TaskNotification {
                task_id: "b".into(),
                status: TaskStatus::Stopped
            },
        ]
    );
}

#[test]
fn cancel_after_the_message_stops_only_tasks() {
    let t0 = Instant::now();
    let mut run =
        ScriptedModel::new(None, 0).start(&req(1, 0, vec![user("!task a 1 1000\n!say x")]), t0);
    let mut saw_stop = false;
    while let Step::Event(e) = run.poll(t0) {
        saw_stop |= matches!(e, ModelEvent::MessageStop { .. });
    }
    assert!(saw_stop);
    run.cancel();
    assert_eq!(
        run.poll(t0),
        Step::Event(ModelEvent::TaskNotification {
            task_id: "a".into(),
            status: TaskStatus::Stopped
        })
    );
    assert_eq!(run.poll(t0), Step::Done);
}

#[test]
fn suggest_is_an_event_in_place() {
    let evs = events("!say hi\n!suggest try again later");
    assert!(evs.contains(&ModelEvent::Suggestion {
        text: "try again later".into()
    }));
}

#[test]
fn cost_null_and_zero_and_decimal() {
    assert_eq!(stop(&events("!cost null\n!say a")).2, None);
    assert_eq!(stop(&events("!cost 0\n!say a")).2, Some(0.0));
    assert_eq!(stop(&events("!say a\n!cost 0.0125")).2, Some(0.0125));
    assert_eq!(stop(&events("!say a")).2, None);
}

#[test]
fn cost_and_usage_ride_on_the_last_call() {
    let model = ScriptedModel::new(None, 0);
    let p = "!cost 1.5\n!usage 10 20\n!tool Read {\"file_path\":\"x\"}\n!say ok";
    let c0 = events_of(&model, &req(1, 0, vec![user(p)]));
    assert_eq!(
        stop(&c0),
        (StopReason::ToolUse, Usage::default(), Some(0.0))
    );
    let mut history = vec![user(p)];
    history.extend(answered("toolu_1"));
    let c1 = events_of(&model, &req(1, 1, history));
    assert_eq!(stop(&c1), (StopReason::EndTurn, usage(10, 20), Some(1.5)));
}

#[test]
fn usage_overrides_word_counts() {
    assert_eq!(stop(&events("!usage 123 456\n!say x")).1, usage(123, 456));
}

#[test]
fn error_ends_the_call_with_its_category() {
    let evs = events("!say before\n!error rate_limit\n!say never");
    assert_eq!(texts(&evs), vec!["before"]);
    assert_eq!(
        evs.last().unwrap(),
        &ModelEvent::Failed {
            category: AssistantError::RateLimit,
            message: Some("scripted error: rate_limit".into())
        }
    );
    for c in AssistantError::ALL {
        let evs = events(&format!("!error {}", c.as_str()));
        assert!(matches!(evs.last(), Some(ModelEvent::Failed { category, .. }) if category == c));
    }
}

#[test]
fn bad_directives_name_their_line() {
    for (prompt, line) in [
        ("!nope", 1),
        ("text\n!say ok\n!sleep", 3),
        ("!sleep 600001", 1),
        ("!sleep -1", 1),
        ("!sleep 1.5", 1),
        ("!tool Read [1]", 1),
        ("!tool Read {\"a\":1,\"a\":2}", 1),
        ("!tool Read", 1),
        ("!task t 1", 1),
        ("!task t 1 600001", 1),
        ("!cost -1", 1),
        ("!cost 1e3", 1),
        ("!cost .5", 1),
        ("!usage 1", 1),
        ("!error teapot", 1),
        ("!network host 65536", 1),
        ("!network host", 1),
        ("!history now", 1),
        ("!compact x", 1),
        ("a\nb\n!say\n", 3),
        ("!suggest ", 1),
        ("!mcp calc add", 1),
        ("!mcp calc {}", 1),
        ("!mcp calc add [1]", 1),
    ] {
        let evs = events(prompt);
        assert_eq!(
            evs,
            vec![
                ModelEvent::MessageStart {
                    message_id: "msg_00000007_1_0".into()
                },
                ModelEvent::Failed {
                    category: AssistantError::Unknown,
                    message: Some(format!("scripted error: bad directive line {line}")),
                }
            ],
            "{prompt:?}"
        );
    }
    // At the limits: accepted.
    assert_eq!(texts(&events("!sleep 600000\n!say ok")), vec!["ok"]);
    let t0 = Instant::now();
    let mut run = ScriptedModel::new(None, 0).start(&req(1, 0, vec![user("!network h 65535")]), t0);
    let _ = run.poll(t0);
    assert_eq!(
        run.poll(t0),
        Step::Event(ModelEvent::NetworkAccess {
            host: "h".into(),
            port: Some(65535)
        })
    );
}

#[test]
fn network_waits_for_the_decision() {
    for (decision, verdict) in [
        (NetworkDecision::Allowed, "allowed"),
        (NetworkDecision::Denied, "denied"),
    ] {
        let t0 = Instant::now();
        let mut run = ScriptedModel::new(None, 0).start(
            &req(1, 0, vec![user("!network example.com 443\n!say after")]),
            t0,
        );
        assert!(matches!(
            run.poll(t0),
            Step::Event(ModelEvent::MessageStart { .. })
        ));
        assert_eq!(
            run.poll(t0),
            Step::Event(ModelEvent::NetworkAccess {
                host: "example.com".into(),
                port: Some(443)
            })
        );
        assert!(run.awaits_network());
        assert_eq!(run.poll(t0), Step::Pending(None));
        run.network_decision(decision, t0);
        let mut rest = Vec::new();
        loop {
            match run.poll(t0) {
                Step::Event(e) => rest.push(e),
                Step::Done => break,
                s => panic!("{s:?}"),
            }
        }
        assert_eq!(
            texts(&rest),
            vec![format!("network example.com: {verdict}"), "after".into()]
        );
    }
    let evs: Vec<ModelEvent> = {
        let t0 = Instant::now();
        let mut run =
            ScriptedModel::new(None, 0).start(&req(1, 0, vec![user("!network h null")]), t0);
        let _ = run.poll(t0);
        vec![match run.poll(t0) {
            Step::Event(e) => e,
            s => panic!("{s:?}"),
        }]
    };
    assert_eq!(
        evs,
        vec![ModelEvent::NetworkAccess {
            host: "h".into(),
            port: None
        }]
    );
}

#[test]
fn history_counts_prior_user_and_assistant_messages() {
    let prior = vec![
        user("first"),
        Message::Assistant {
            message_id: "m1".into(),
            blocks: vec![Block::Text("echo: first".into())],
        },
        Message::ToolResult {
            tool_use_id: "t".into(),
            content: String::new(),
            is_error: false,
        },
        user("second"),
        Message::Assistant {
            message_id: "m2".into(),
            blocks: vec![Block::Text("echo: second".into())],
        },
        user("!history"),
    ];
    let evs = events_of(&ScriptedModel::new(None, 0), &req(3, 0, prior));
    assert_eq!(texts(&evs), vec!["history: 4 messages"]);
    assert_eq!(texts(&events("!history")), vec!["history: 0 messages"]);
}

#[test]
fn compact_is_an_event() {
    let evs = events("!compact\n!say after");
    assert!(evs.contains(&ModelEvent::Compact));
    assert_eq!(texts(&evs), vec!["after"]);
}

#[test]
fn script_blocks_by_turn_and_the_last_repeats() {
    let script = Script::parse("!say one\n---\n!say two\r\n---\nplain text\n");
    let model = ScriptedModel::new(Some(script), 0);
    let mut msgs = Vec::new();
    let mut seen = Vec::new();
    for k in 1..=4u64 {
        msgs.push(user("hello"));
        seen.push(texts(&events_of(&model, &req(k, 0, msgs.clone()))));
    }
    assert_eq!(
        seen,
        vec![
            vec!["one".to_string()],
            vec!["two".to_string()],
            vec!["echo: plain text\n".to_string()],
            vec!["echo: plain text\n".to_string()],
        ]
    );
    // A prompt with directives of its own ignores the script.
    msgs.push(user("!say mine"));
    assert_eq!(texts(&events_of(&model, &req(5, 0, msgs))), vec!["mine"]);
}

#[test]
fn profile_16_json_writes_the_value_as_the_text_block() {
    let evs = events("!json  {\"answer\": [1, 2]} \n!json \"two words\"");
    assert_eq!(texts(&evs), vec!["{\"answer\": [1, 2]}", "\"two words\""]);
    assert_eq!(stop(&evs).0, StopReason::EndTurn);
    // Not one strict JSON value: a bad directive (PROFILE §9).
    for bad in [
        "!json",
        "!json ",
        "!json {",
        "!json 1 2",
        "!json {\"a\":1,\"a\":2}",
        "!json nope",
    ] {
        let evs = events(bad);
        assert!(
            matches!(evs.last(), Some(ModelEvent::Failed { message: Some(m), .. }) if m == "scripted error: bad directive line 1"),
            "{bad:?}: {evs:?}"
        );
    }
}

/// PROFILE §16: a user message the session adds within the turn (structured output's
/// corrective prompt) is a prompt of its own: its directives (or the script's block) run from
/// the first segment, whatever the call's `index`.
#[test]
fn profile_16_a_prompt_within_the_turn_starts_at_its_first_segment() {
    let script = Script::parse("!json \"one\"\n---\n!tool Read {}\n!json [2]");
    let model = ScriptedModel::new(Some(script), 0);
    let mut history = vec![user("first")];
    assert_eq!(
        texts(&events_of(&model, &req(1, 0, history.clone()))),
        vec!["\"one\""]
    );
    history.push(Message::Assistant {
        message_id: "m0".into(),
        blocks: vec![Block::Text("\"one\"".into())],
    });
    history.push(user("structured output: not an object"));
    let c1 = events_of(&model, &req(1, 1, history.clone()));
    assert!(c1
        .iter()
        .any(|e| matches!(e, ModelEvent::ToolUseStart { name, .. } if name == "Read")));
    history.extend(answered("toolu_r"));
    assert_eq!(texts(&events_of(&model, &req(1, 2, history))), vec!["[2]"]);
}

/// PROFILE §8 "Memory": the first `WORD_DELTAS` words are one delta each; after them a delta
/// gathers whole words up to `DELTA_BYTES` (at the bound exactly, not one byte more); a longer
/// word is one delta; joined they give the reply back.
#[test]
fn a_long_reply_streams_in_bounded_deltas_of_whole_words() {
    let long = "x".repeat(DELTA_BYTES + 10);
    let words = WORD_DELTAS + 2048 + 100;
    let text = "a ".repeat(words) + &long + " b";
    let deltas: Vec<String> = events(&text)
        .into_iter()
        .filter_map(|e| match e {
            ModelEvent::TextDelta { text, .. } => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(deltas.concat(), format!("echo: {text}"));
    // "echo: " and the first one-letter words, one delta each.
    assert_eq!(deltas[0], "echo: ");
    assert!(deltas[1..WORD_DELTAS].iter().all(|d| d == "a "));
    // The other 2,149 words: 2,048 of them fill 4,096 bytes exactly; the next delta (101
    // words) stops before the long word, which is a delta of its own, then "b".
    let rest: Vec<usize> = deltas[WORD_DELTAS..].iter().map(String::len).collect();
    assert_eq!(rest, [DELTA_BYTES, 2 * 101, long.len() + 1, 1]);
    assert_eq!(deltas[WORD_DELTAS + 2], format!("{long} "));
}

/// PROFILE §16 `!last_tool_result`: the content of the last tool result the model saw (the
/// joined text blocks), or `(none)`.
#[test]
fn last_tool_result_reports_what_the_model_saw() {
    let model = ScriptedModel::new(None, 7);
    let prompt = user("!tool Read {\"file_path\":\"a\"}\n!last_tool_result");
    let call2 = req(
        1,
        1,
        vec![
            prompt.clone(),
            Message::Assistant {
                message_id: "m".into(),
                blocks: vec![Block::ToolUse {
                    id: "t1".into(),
                    name: "Read".into(),
                    input: "{}".into(),
                }],
            },
            Message::ToolResult {
                tool_use_id: "t1".into(),
                content: "out\nctx".into(),
                is_error: false,
            },
        ],
    );
    assert_eq!(
        texts(&events_of(&model, &call2)),
        ["last tool result: out\nctx"]
    );
    assert_eq!(
        texts(&events("!last_tool_result")),
        ["last tool result: (none)"]
    );
    // An argument is a bad directive.
    assert!(events("!last_tool_result x").iter().any(|e| matches!(
        e,
        ModelEvent::Failed { message: Some(m), .. } if m == "scripted error: bad directive line 1"
    )));
}

#[test]
fn profile_16_mcp_is_one_tool_use_named_mcp_server_tool() {
    let evs = events("!mcp calc add {\"a\": 1, \"b\": 2}\n!mcp calc mul {}");
    let tools: Vec<(String, String)> = evs
        .iter()
        .filter_map(|e| match e {
            ModelEvent::ToolUseStart { name, .. } => Some(name.clone()),
            _ => None,
        })
        .zip(evs.iter().filter_map(|e| match e {
            ModelEvent::InputJsonDelta { partial_json, .. } => Some(partial_json.clone()),
            _ => None,
        }))
        .collect();
    assert_eq!(
        tools,
        [
            ("mcp__calc__add".to_string(), r#"{"a":1,"b":2}"#.to_string()),
            ("mcp__calc__mul".to_string(), "{}".to_string()),
        ]
    );
}
