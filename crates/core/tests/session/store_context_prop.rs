//! PROFILE §11 as a property of the sans-IO session and the store's rebuild: for random
//! sequences of prompts, tool calls (run at once or held), prompts queued while a turn runs,
//! interrupts mid-stream and mid-tool, model failures and compactions at any turn (WIRE-005),
//! the prior context that `--resume` rebuilds from the persisted transcript
//! (`store::context::prior_context`) equals the session's live context, every persisted turn
//! ends with its result (nothing a load would drop), and no `tool_use` lacks its
//! `tool_result`. The simulator (`tests/session_sim`) drives the session on virtual time.

use crate::session_sim;

use agentx_core::model::{Block, Message, ModelEvent, StopReason};
use agentx_core::session::Action;
use agentx_core::transcript::{context, split_transcript};
use agentx_wire::wire::output::AssistantError;
use proptest::prelude::*;
use session_sim::*;

#[derive(Clone, Debug)]
enum Reply {
    Echo,
    /// `n` tool uses, then a text reply.
    Tools(usize),
    /// Text, a compaction, more text (`compact_first`: the compaction first).
    Compact {
        compact_first: bool,
    },
    /// A text block, then the call fails.
    Fail,
    /// A text block, then the stream stalls until resumed (or interrupted).
    Stall,
    /// PROFILE §19: the answer reports more tokens than the window, so the next request
    /// compacts automatically (`tools`: after that many tool uses, mid tool loop).
    Heavy {
        tools: usize,
    },
    /// PROFILE §19: the provider refuses the request as too long once (compact, retry).
    TooLong,
}

#[derive(Clone, Debug)]
enum Op {
    /// A prompt whose model call answers with `Reply` (sent while a turn runs, it queues).
    Prompt(Reply, bool),
    /// An `interrupt` control.
    Interrupt,
    /// Held tools finish.
    FinishTools,
    /// A stalled stream goes on.
    Resume,
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        3 => Just(Reply::Echo),
        3 => (1usize..3).prop_map(Reply::Tools),
        2 => any::<bool>().prop_map(|compact_first| Reply::Compact { compact_first }),
        1 => Just(Reply::Fail),
        2 => Just(Reply::Stall),
        2 => (0usize..3).prop_map(|tools| Reply::Heavy { tools }),
        1 => Just(Reply::TooLong),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (reply(), any::<bool>()).prop_map(|(r, hold)| Op::Prompt(r, hold)),
        2 => Just(Op::Interrupt),
        2 => Just(Op::FinishTools),
        2 => Just(Op::Resume),
    ]
}

fn text_events(id: &str, text: &str) -> Vec<Step> {
    vec![
        ev(ModelEvent::MessageStart {
            message_id: id.into(),
        }),
        ev(ModelEvent::TextStart { index: 0 }),
        ev(ModelEvent::TextDelta {
            index: 0,
            text: text.into(),
        }),
        ev(ModelEvent::BlockStop { index: 0 }),
    ]
}

fn stop() -> Step {
    ev(ModelEvent::MessageStop {
        stop_reason: StopReason::EndTurn,
        usage: usage(1, 1),
        cost: None,
    })
}

/// The scripts of one prompt's model calls.
fn scripts(reply: &Reply, n: usize) -> Vec<Script> {
    let id = format!("msg_p{n}");
    match reply {
        Reply::Echo => vec![text_reply(&id, &format!("echo {n}"), None)],
        Reply::Tools(k) => {
            let ids: Vec<String> = (0..*k).map(|i| format!("toolu_{n}_{i}")).collect();
            let tools: Vec<(&str, &str, &str)> = ids
                .iter()
                .map(|i| (i.as_str(), "Read", r#"{"file_path":"/work/project/a.txt"}"#))
                .collect();
            vec![
                tool_reply(&id, &tools),
                text_reply(&format!("{id}_b"), "after tools", None),
            ]
        }
        Reply::Compact { compact_first } => {
            let mut s = Vec::new();
            if *compact_first {
                s.push(ev(ModelEvent::Compact));
                s.extend(text_events(&id, "compacted"));
            } else {
                s.extend(text_events(&id, "before"));
                s.push(ev(ModelEvent::Compact));
                s.push(ev(ModelEvent::TextStart { index: 1 }));
                s.push(ev(ModelEvent::TextDelta {
                    index: 1,
                    text: "after".into(),
                }));
                s.push(ev(ModelEvent::BlockStop { index: 1 }));
            }
            s.push(stop());
            vec![s]
        }
        Reply::Fail => {
            let mut s = text_events(&id, "partial");
            s.push(ev(ModelEvent::Failed {
                category: AssistantError::ServerError,
                message: None,
            }));
            vec![s]
        }
        Reply::Heavy { tools } => {
            let heavy = |mut s: Script| {
                if let Some(Step::Event(ModelEvent::MessageStop { usage: u, .. })) = s.last_mut() {
                    *u = usage(2_000, 0);
                }
                s
            };
            if *tools == 0 {
                return vec![heavy(text_reply(&id, "heavy", None))];
            }
            let ids: Vec<String> = (0..*tools).map(|i| format!("toolu_{n}_{i}")).collect();
            let uses: Vec<(&str, &str, &str)> = ids
                .iter()
                .map(|i| (i.as_str(), "Read", r#"{"file_path":"/work/project/a.txt"}"#))
                .collect();
            vec![
                heavy(tool_reply(&id, &uses)),
                text_reply(&format!("{id}_b"), "after heavy tools", None),
            ]
        }
        Reply::TooLong => vec![
            vec![ev(ModelEvent::ContextLengthExceeded { message: None })],
            text_reply(&id, "retried", None),
        ],
        Reply::Stall => {
            let mut s = text_events(&id, "one");
            s.push(Step::Pause);
            s.push(ev(ModelEvent::TextStart { index: 1 }));
            s.push(ev(ModelEvent::TextDelta {
                index: 1,
                text: "two".into(),
            }));
            s.push(ev(ModelEvent::BlockStop { index: 1 }));
            s.push(stop());
            vec![s]
        }
    }
}

/// Every persisted line so far, without its LF.
fn persisted(sim: &Sim) -> Vec<Vec<u8>> {
    sim.actions
        .iter()
        .filter_map(|a| match a {
            Action::Persist { lines, .. } => Some(lines),
            _ => None,
        })
        .flatten()
        .map(|l| {
            assert_eq!(l.last(), Some(&b'\n'));
            l[..l.len() - 1].to_vec()
        })
        .collect()
}

fn assert_paired(ctx: &[Message]) {
    for (i, m) in ctx.iter().enumerate() {
        if let Message::Assistant { blocks, .. } = m {
            for b in blocks {
                if let Block::ToolUse { id, .. } = b {
                    let ok = ctx[i + 1..]
                        .iter()
                        .take_while(|n| matches!(n, Message::ToolResult { .. }))
                        .any(|n| matches!(n, Message::ToolResult { tool_use_id, .. } if tool_use_id == id));
                    assert!(ok, "tool_use {id} unpaired: {ctx:#?}");
                }
            }
        }
    }
}

/// The rebuilt context equals the live one whenever the session is idle.
fn check(sim: &Sim) {
    if sim.s.turn_active() {
        return;
    }
    let lines = persisted(sim);
    let mut bytes = Vec::new();
    for l in &lines {
        bytes.extend_from_slice(l);
        bytes.push(b'\n');
    }
    let loaded = split_transcript(&bytes);
    assert_eq!(
        loaded.lines, lines,
        "every persisted turn ends with its result"
    );
    let rebuilt = context::prior_context(&lines).expect("resumable");
    assert_eq!(rebuilt, sim.s.history(), "resumed context = live context");
    assert_paired(&rebuilt);
}

fn run(ops: &[Op]) {
    // PROFILE §19: a declared window, so heavy answers compact the next request.
    let mut config = config();
    config.projection.context_window = Some(1_024);
    let mut sim = Sim::new(config);
    let mut n = 0usize;
    let mut int = 0usize;
    for op in ops {
        match op {
            Op::Prompt(reply, hold) => {
                n += 1;
                for s in scripts(reply, n) {
                    sim.script(s);
                }
                sim.hold_tools = *hold;
                sim.send(&user(&format!("prompt {n}")));
            }
            Op::Interrupt => {
                int += 1;
                sim.send(&control(
                    &format!("int-{int}"),
                    serde_json::json!({"subtype":"interrupt"}),
                ));
            }
            Op::FinishTools => {
                let ids: Vec<String> = sim.running_tools.iter().map(|t| t.0.clone()).collect();
                for id in ids {
                    sim.finish_tool(&id, agentx_core::session::ToolOutcome::ok("file"));
                }
            }
            Op::Resume => sim.resume_model(),
        }
        check(&sim);
    }
    // Let everything finish, then EOF.
    sim.hold_tools = false;
    for _ in 0..64 {
        let ids: Vec<String> = sim.running_tools.iter().map(|t| t.0.clone()).collect();
        for id in ids {
            sim.finish_tool(&id, agentx_core::session::ToolOutcome::ok("file"));
        }
        sim.resume_model();
        check(&sim);
    }
    sim.eof();
    check(&sim);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn profile_11_resumed_context_equals_the_live_one(ops in proptest::collection::vec(op(), 1..24)) {
        run(&ops);
    }
}

/// The issue's own sequences, fixed: compaction in turn 3; a prompt queued while a tool runs.
#[test]
fn profile_11_fixed_sequences() {
    use Op::*;
    use Reply::*;
    run(&[
        Prompt(Echo, false),
        Prompt(Echo, false),
        Prompt(
            Compact {
                compact_first: true,
            },
            false,
        ),
        Prompt(Echo, false),
    ]);
    run(&[
        Prompt(Tools(1), true),
        Prompt(Echo, false),
        FinishTools,
        Prompt(
            Compact {
                compact_first: false,
            },
            false,
        ),
    ]);
    run(&[
        Prompt(Stall, false),
        Prompt(Tools(2), true),
        Interrupt,
        Interrupt,
    ]);
}
