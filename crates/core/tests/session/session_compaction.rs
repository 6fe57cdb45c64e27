//! PROFILE §19 on virtual time: automatic compaction as a step of the turn. The threshold at
//! its edge (at PCT % no compaction, one token over compacts) for 90, 50 and 98, the
//! variable's range, the summarization request (no tools; the conversation before the
//! preserved segment), the records (`status` compacting, `compact_boundary` with
//! `trigger` auto, `pre_tokens` and the segment, `status` null), an interrupt and a failure
//! during the summary (the context stays as it was), a compaction in the middle of a tool
//! loop (every `tool_use` keeps its `tool_result`), `context_length_exceeded` (compact once and
//! retry; twice ends the turn), `/compact` with instructions, `get_context_usage`, and the
//! resumed context equal to the live one after each.

use crate::session_sim;

use agentx_core::model::{Block, Message, ModelEvent, SUMMARY_REQUEST};
use agentx_core::session::{autocompact_pct, Action, SessionConfig};
use agentx_core::transcript::context::prior_context;
use agentx_wire::wire::output::AssistantError;
use serde_json::json;
use session_sim::*;

const WINDOW: u32 = 10_000;

fn compaction_config(window: u32, pct: u8) -> SessionConfig {
    let mut c = config();
    // No tools and no system message: the estimate is the messages alone.
    c.tools = Vec::new();
    c.projection.context_window = Some(window);
    c.autocompact_pct = pct;
    c
}

/// Turn 1 answers `echo: one` (usage 3/4); turn 2 answers with `heavy` prompt tokens; the
/// third prompt `abcd` is one token: the third request's estimate is `heavy + 1`.
fn two_turns(sim: &mut Sim, heavy: u64) {
    sim.send(&user("one"));
    sim.script(text_reply_usage("msg_2", "two done", usage(heavy, 0), None));
    sim.send(&user("two"));
}

fn persisted_lines(sim: &Sim) -> Vec<Vec<u8>> {
    sim.persisted()
        .into_iter()
        .map(|l| l.trim_end_matches('\n').as_bytes().to_vec())
        .collect()
}

/// PROFILE §11: the context a resume rebuilds equals the live one, and every `tool_use` has
/// its `tool_result`.
fn assert_resumable(sim: &Sim) {
    let rebuilt = prior_context(&persisted_lines(sim)).expect("resumable");
    assert_eq!(rebuilt, sim.s.history(), "resumed context = live context");
    for (i, m) in rebuilt.iter().enumerate() {
        if let Message::Assistant { blocks, .. } = m {
            for b in blocks {
                if let Block::ToolUse { id, .. } = b {
                    assert!(
                        rebuilt[i + 1..].iter().any(
                            |n| matches!(n, Message::ToolResult { tool_use_id, .. } if tool_use_id == id)
                        ),
                        "tool_use {id} without its tool_result: {rebuilt:#?}"
                    );
                }
            }
        }
    }
}

fn summary_requests(sim: &Sim) -> usize {
    sim.requests
        .iter()
        .filter(|r| is_summary_request(r))
        .count()
}

#[test]
fn profile_19_threshold_at_90_percent_is_not_over_it() {
    let mut sim = Sim::new(compaction_config(WINDOW, 90));
    two_turns(&mut sim, 8_999);
    let from = sim.out.len();
    sim.send(&user("abcd"));
    // 8,999 + 1 = 9,000 = 90 % of 10,000: no compaction.
    assert_eq!(summary_requests(&sim), 0);
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "assistant:text:echo: abcd",
            "result:success",
            "state:idle"
        ]
    );
}

#[test]
fn profile_19_one_token_over_the_threshold_compacts() {
    let mut sim = Sim::new(compaction_config(WINDOW, 90));
    two_turns(&mut sim, 9_000);
    let from = sim.out.len();
    sim.send(&user("abcd"));
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "status:compacting",
            "compact_boundary",
            "status:null",
            "assistant:text:echo: abcd",
            "result:success",
            "state:idle"
        ]
    );
    let boundary = sim
        .out
        .iter()
        .find(|r| r["subtype"] == "compact_boundary")
        .unwrap();
    let meta = &boundary["compact_metadata"];
    assert_eq!(meta["trigger"], "auto");
    assert_eq!(meta["pre_tokens"], 9_001);
    assert_eq!(meta["summary"], "summary of 2 messages");
    assert_eq!(meta["preserved_segment"]["anchor_uuid"], boundary["uuid"]);
    // The summarization request: the conversation before the preserved segment (turn 1),
    // then the request for a summary; no tools.
    let n = sim.requests.len();
    let summary = &sim.requests[n - 2];
    assert!(is_summary_request(summary));
    assert!(summary.tools.is_empty());
    assert_eq!(summary.messages.len(), 3);
    assert_eq!(summary.messages[0], Message::user("one".to_string()));
    assert!(matches!(&summary.messages[1], Message::Assistant { .. }));
    assert_eq!(
        summary.messages[2],
        Message::user(SUMMARY_REQUEST.to_string())
    );
    // The next request starts with the summary, keeps the preserved exchange (turn 2), and
    // ends with the prompt that triggered the compaction.
    let next = &sim.requests[n - 1];
    assert_eq!(next.messages.len(), 4);
    assert_eq!(
        next.messages[0],
        Message::user("summary of 2 messages".to_string())
    );
    assert_eq!(next.messages[1], Message::user("two".to_string()));
    assert!(
        matches!(&next.messages[2], Message::Assistant { blocks, .. } if blocks == &[Block::Text("two done".into())])
    );
    assert_eq!(next.messages[3], Message::user("abcd".to_string()));
    // The summary counts in neither num_turns nor anything the model saw as a turn.
    assert_eq!(sim.last_of("result")["num_turns"], 1);
    // Stored after the boundary: the resume rebuilds the same context.
    assert_resumable(&sim);
}

#[test]
fn profile_19_autocompact_pct_50_and_98_at_their_edges() {
    for (pct, at) in [(50u8, 5_000u64), (98, 9_800)] {
        let mut sim = Sim::new(compaction_config(WINDOW, pct));
        two_turns(&mut sim, at - 1);
        sim.send(&user("abcd"));
        assert_eq!(summary_requests(&sim), 0, "pct {pct}: at the threshold");
        let mut sim = Sim::new(compaction_config(WINDOW, pct));
        two_turns(&mut sim, at);
        sim.send(&user("abcd"));
        assert_eq!(summary_requests(&sim), 1, "pct {pct}: one token over");
        assert_resumable(&sim);
    }
}

#[test]
fn profile_19_autocompact_pct_range() {
    assert_eq!(autocompact_pct(None), Ok(90));
    assert_eq!(autocompact_pct(Some("50")), Ok(50));
    assert_eq!(autocompact_pct(Some("98")), Ok(98));
    for bad in [
        "49", "99", "0", "100", "-90", "+90", "90.0", "9e1", "", " 90", "ninety", "256",
    ] {
        assert_eq!(
            autocompact_pct(Some(bad)),
            Err("AGENTX_AUTOCOMPACT_PCT must be an integer from 50 to 98".to_string()),
            "{bad:?}"
        );
    }
}

#[test]
fn profile_19_interrupt_during_the_summary_leaves_the_context_unchanged() {
    let mut sim = Sim::new(compaction_config(WINDOW, 90));
    two_turns(&mut sim, 9_000);
    let before = sim.s.history().to_vec();
    let mut stalled = vec![Step::Pause];
    stalled.extend(summary_script_text("never"));
    sim.summaries.push_back(stalled);
    let from = sim.out.len();
    sim.send(&user("abcd"));
    sim.send(&control("int-1", json!({"subtype":"interrupt"})));
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "status:compacting",
            "control_response:success:int-1",
            "status:null",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    let r = sim.last_of("result");
    assert_eq!(r["stop_reason"], "cancelled");
    assert_eq!(r["num_turns"], 0);
    assert!(sim
        .actions
        .iter()
        .any(|a| matches!(a, Action::CancelModel { .. })));
    // Unchanged: the prompt joined it, nothing was summarized.
    let mut expected = before;
    expected.push(Message::user("abcd".to_string()));
    assert_eq!(sim.s.history(), &expected[..]);
    assert_resumable(&sim);
    // The late answer of the cancelled summary is ignored; the next turn compacts again.
    sim.resume_model();
    sim.send(&user("efgh"));
    assert_eq!(summary_requests(&sim), 2);
    assert_resumable(&sim);
}

fn summary_script_text(text: &str) -> Script {
    text_reply_usage("msg_sum", text, usage(1, 1), None)
}

#[test]
fn profile_19_failed_summary_ends_the_turn_and_leaves_the_context() {
    let mut sim = Sim::new(compaction_config(WINDOW, 90));
    two_turns(&mut sim, 9_000);
    let before = sim.s.history().to_vec();
    sim.summaries.push_back(vec![ev(ModelEvent::Failed {
        category: AssistantError::ServerError,
        message: None,
    })]);
    let from = sim.out.len();
    sim.send(&user("abcd"));
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "status:compacting",
            "status:null",
            "assistant:text:model error: server_error",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert!(sim.out[from..]
        .iter()
        .all(|r| r["subtype"] != "compact_boundary"));
    let history = sim.s.history();
    assert_eq!(&history[..before.len()], &before[..]);
    assert_eq!(history[before.len()], Message::user("abcd".to_string()));
    assert_resumable(&sim);
}

#[test]
fn profile_19_compaction_in_the_middle_of_a_tool_loop_keeps_every_tool_result() {
    let mut sim = Sim::new(compaction_config(WINDOW, 90));
    sim.send(&user("one"));
    // Turn 2 calls a tool; its answer reports 9,500 tokens, so the follow-up compacts.
    let mut tools = tool_reply(
        "msg_t",
        &[("toolu_1", "Read", r#"{"file_path":"/work/project/a"}"#)],
    );
    if let Some(Step::Event(ModelEvent::MessageStop { usage: u, .. })) = tools.last_mut() {
        *u = usage(9_500, 0);
    }
    sim.script(tools);
    sim.script(text_reply("msg_after", "after tools", None));
    let from = sim.out.len();
    sim.send(&user_with(
        "two",
        json!({"uuid":"6f1c7a52-1d1e-4f1a-9c44-0c8a3f5e2b10"}),
    ));
    let labels = sim.labels_from(from);
    let at = labels
        .iter()
        .position(|l| l == "status:compacting")
        .expect("compacted");
    assert_eq!(
        labels[at..],
        [
            "status:compacting",
            "compact_boundary",
            "status:null",
            "assistant:text:after tools",
            "result:success",
            "state:idle"
        ]
    );
    assert!(labels[..at]
        .iter()
        .any(|l| l.starts_with("tool_result:toolu_1")));
    // The follow-up request: the summary, then the segment (the prompt, the tool use and
    // its result).
    let last = sim.requests.last().unwrap();
    assert_eq!(
        last.messages[0],
        Message::user("summary of 2 messages".to_string())
    );
    assert_eq!(last.messages[1], Message::user("two".to_string()));
    assert!(
        matches!(&last.messages[2], Message::Assistant { blocks, .. }
        if matches!(&blocks[0], Block::ToolUse { id, .. } if id == "toolu_1"))
    );
    assert!(
        matches!(&last.messages[3], Message::ToolResult { tool_use_id, .. } if tool_use_id == "toolu_1")
    );
    assert_eq!(last.messages.len(), 4);
    assert_eq!(sim.last_of("result")["num_turns"], 2);
    assert_resumable(&sim);
    // A later turn goes on from the compacted context and still resumes.
    sim.send(&user("three"));
    assert_resumable(&sim);
}

#[test]
fn profile_19_context_length_exceeded_once_compacts_and_retries() {
    // No window declared: the refusal alone compacts.
    let mut c = config();
    c.tools = Vec::new();
    let mut sim = Sim::new(c);
    sim.send(&user("one"));
    sim.send(&user("two"));
    sim.script(vec![ev(ModelEvent::ContextLengthExceeded {
        message: Some("too long".into()),
    })]);
    sim.script(text_reply("msg_retry", "fits now", None));
    let from = sim.out.len();
    sim.send(&user("three"));
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "status:compacting",
            "compact_boundary",
            "status:null",
            "assistant:text:fits now",
            "result:success",
            "state:idle"
        ]
    );
    // A retry is the same request: num_turns counts it once.
    assert_eq!(sim.last_of("result")["num_turns"], 1);
    let last = sim.requests.last().unwrap();
    assert_eq!(
        last.messages.last(),
        Some(&Message::user("three".to_string()))
    );
    assert_eq!(
        last.messages[0],
        Message::user("summary of 2 messages".to_string())
    );
    assert_resumable(&sim);
}

#[test]
fn profile_19_context_length_exceeded_twice_ends_the_turn() {
    let mut c = config();
    c.tools = Vec::new();
    let mut sim = Sim::new(c);
    sim.send(&user("one"));
    sim.send(&user("two"));
    sim.script(vec![ev(ModelEvent::ContextLengthExceeded {
        message: None,
    })]);
    sim.script(vec![ev(ModelEvent::ContextLengthExceeded {
        message: None,
    })]);
    let from = sim.out.len();
    sim.send(&user("three"));
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "status:compacting",
            "compact_boundary",
            "status:null",
            "assistant:text:model error: invalid_request",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    let a = sim.last_of("assistant");
    assert_eq!(a["error"], "invalid_request");
    assert_eq!(summary_requests(&sim), 1);
    assert_resumable(&sim);
}

#[test]
fn profile_19_compact_command_with_instructions() {
    let mut sim = Sim::new(compaction_config(WINDOW, 90));
    sim.send(&user("one"));
    sim.send(&user("two"));
    let stored_before = sim.persisted().len();
    let from = sim.out.len();
    sim.send(&user("  /compact keep the file names  "));
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "status:compacting",
            "compact_boundary",
            "status:null",
            "result:success",
            "state:idle"
        ]
    );
    let summary = sim.requests.last().unwrap();
    assert!(summary.tools.is_empty());
    assert_eq!(
        summary.messages.last(),
        Some(&Message::user(format!(
            "{SUMMARY_REQUEST}\n\nkeep the file names"
        )))
    );
    let boundary = sim
        .of("system")
        .into_iter()
        .find(|r| r["subtype"] == "compact_boundary")
        .unwrap();
    assert_eq!(boundary["compact_metadata"]["trigger"], "manual");
    let r = sim.last_of("result");
    let pre = boundary["compact_metadata"]["pre_tokens"].as_u64().unwrap();
    let text = r["result"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("compacted: {pre} -> ")) && text.ends_with(" tokens"),
        "{text}"
    );
    assert_eq!(r["num_turns"], 0);
    // Not stored as a prompt: only the boundary and the result joined the store.
    let stored: Vec<String> = sim.persisted()[stored_before..].to_vec();
    assert!(stored.iter().all(|l| !l.contains("/compact")), "{stored:?}");
    assert_resumable(&sim);
}

#[test]
fn profile_19_compact_command_with_nothing_to_compact() {
    let mut sim = Sim::new(compaction_config(WINDOW, 90));
    sim.send(&user("/compact"));
    assert_eq!(
        sim.labels(),
        ["init", "state:running", "result:success", "state:idle"]
    );
    assert_eq!(sim.last_of("result")["result"], "nothing to compact");
    assert!(sim.requests.is_empty());
    // `/compactor` is a prompt, not the command.
    sim.send(&user("/compactor"));
    assert_eq!(sim.last_of("result")["result"], "echo: /compactor");
}

#[test]
fn profile_19_get_context_usage_reports_the_estimate() {
    let mut sim = Sim::new(compaction_config(WINDOW, 90));
    two_turns(&mut sim, 2_499);
    sim.send(&control("u", json!({"subtype":"get_context_usage"})));
    let p = &sim.last()["response"]["response"];
    // The last report (2,499 + 0), nothing appended since.
    assert_eq!(p["totalTokens"], 2_499);
    assert_eq!(p["maxTokens"], 10_000);
    assert_eq!(p["percentage"], 24.99);
    assert_eq!(p["categories"][0]["name"], "System prompt");
    assert_eq!(p["categories"][0]["tokens"], 0);
    assert_eq!(p["categories"][1]["tokens"], 0);
    assert_eq!(p["categories"][2]["name"], "Messages");
    assert_eq!(p["categories"][2]["tokens"], 2_499);
    // Without a window: maxTokens and percentage are null; before any report the estimate
    // is the whole request at 4 bytes a token (tools included).
    let mut sim = Sim::local();
    sim.send(&control("u", json!({"subtype":"get_context_usage"})));
    let p = &sim.last()["response"]["response"];
    assert_eq!(p["maxTokens"], serde_json::Value::Null);
    assert_eq!(p["percentage"], serde_json::Value::Null);
    let tools: u64 = config()
        .tools
        .iter()
        .map(|t| ((t.name.len() + t.description.len() + t.input_schema.len()) as u64).div_ceil(4))
        .sum();
    assert_eq!(p["totalTokens"], tools);
    assert_eq!(p["categories"][1]["tokens"], tools);
}

/// An SDK-profile session with a window whose initialize registered `hooks`.
fn sdk_with_hooks(hooks: serde_json::Value) -> Sim {
    let mut c = compaction_config(WINDOW, 90);
    c.profile = agentx_core::session::Profile::Sdk;
    c.transcript_path = "/home/x/sessions/s/transcript.ndjson".into();
    let mut sim = Sim::new(c);
    sim.send(&control(
        "init",
        json!({"subtype":"initialize","hooks":hooks}),
    ));
    assert_eq!(sim.last()["response"]["subtype"], "success");
    sim
}

fn hook_requests(sim: &Sim) -> Vec<serde_json::Value> {
    sim.out
        .iter()
        .filter(|v| v["type"] == "control_request" && v["request"]["subtype"] == "hook_callback")
        .cloned()
        .collect()
}

fn hook_answer(id: &str, payload: serde_json::Value) -> String {
    json!({"type":"control_response","response":{"subtype":"success","request_id":id,"response":payload}}).to_string()
}

#[test]
fn profile_19_pre_compact_is_awaited_before_the_summary() {
    let mut sim =
        sdk_with_hooks(json!({"PreCompact":[{"matcher":"auto","hookCallbackIds":["pc_0"]}]}));
    two_turns(&mut sim, 9_000);
    let from = sim.out.len();
    let before = sim.requests.len();
    sim.send(&user("abcd"));
    let hooks = hook_requests(&sim);
    assert_eq!(hooks.len(), 1);
    let input = &hooks[0]["request"]["input"];
    assert_eq!(hooks[0]["request"]["callback_id"], "pc_0");
    assert_eq!(input["hook_event_name"], "PreCompact");
    assert_eq!(input["trigger"], "auto");
    assert_eq!(input["custom_instructions"], serde_json::Value::Null);
    assert_eq!(
        input["transcript_path"],
        "/home/x/sessions/s/transcript.ndjson"
    );
    // Awaited: no summary request until it answers.
    assert_eq!(sim.requests.len(), before);
    let id = hooks[0]["request_id"].as_str().unwrap().to_string();
    sim.send(&hook_answer(&id, json!({})));
    let labels = sim.labels_from(from);
    assert_eq!(
        labels
            .iter()
            .filter(|l| !l.starts_with("user"))
            .cloned()
            .collect::<Vec<_>>(),
        [
            "state:running".to_string(),
            "status:compacting".into(),
            format!("control_request:hook_callback:{id}"),
            "compact_boundary".into(),
            "status:null".into(),
            "assistant:text:echo: abcd".into(),
            "result:success".into(),
            "state:idle".into(),
        ]
    );
    assert_eq!(summary_requests(&sim), 1);
    assert_resumable(&sim);
}

#[test]
fn profile_19_pre_compact_matcher_and_continue_false() {
    // A `manual` matcher is not called for an automatic compaction.
    let mut sim =
        sdk_with_hooks(json!({"PreCompact":[{"matcher":"manual","hookCallbackIds":["pc_m"]}]}));
    two_turns(&mut sim, 9_000);
    sim.send(&user("abcd"));
    assert!(hook_requests(&sim).is_empty());
    assert_eq!(summary_requests(&sim), 1);
    // It is called for `/compact`, with the instructions.
    sim.send(&user("/compact keep it"));
    let hooks = hook_requests(&sim);
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0]["request"]["input"]["trigger"], "manual");
    assert_eq!(
        hooks[0]["request"]["input"]["custom_instructions"],
        "keep it"
    );
    // `continue: false` ends the turn before the summary, the context unchanged.
    let before = sim.s.history().to_vec();
    let id = hooks[0]["request_id"].as_str().unwrap().to_string();
    sim.send(&hook_answer(
        &id,
        json!({"continue":false,"stopReason":"not now"}),
    ));
    assert_eq!(summary_requests(&sim), 1);
    let r = sim.last_of("result");
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["result"], "not now");
    assert_eq!(sim.s.history(), &before[..]);
    let labels = sim.labels();
    let n = labels.len();
    assert_eq!(
        labels[n - 3..],
        ["status:null", "result:success", "state:idle"]
    );
    assert_resumable(&sim);
}
