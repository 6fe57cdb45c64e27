//! The output line limit (PROFILE §2a: 8,388,608 bytes, LF excluded) for records the agent
//! produces, through the session core: a record of exactly the limit is written; one byte more
//! is not written, and what the host sees instead is per record kind. A turn's record ends the
//! turn with an `error_during_execution` result carrying the output error (never the whole
//! session: later turns work); a `tool_result` is replaced by an error `tool_result` so its
//! tool use stays paired (PERM-053); a result falls back to its error form; a control
//! response falls back to a correlated error, and when even that cannot fit, a stderr line.

use crate::session_sim;

use agentx_core::model::{Message, ModelEvent};
use agentx_core::session::ToolOutcome;
use agentx_wire::wire::permission::PermissionMode;
use serde_json::json;
use session_sim::*;

const MAX: usize = 8 * 1024 * 1024;
const LIMIT_ERROR: &str = "output error: record exceeds the 8388608-byte line limit";

fn a(n: usize) -> String {
    "a".repeat(n)
}

/// The frame of the last record labelled `label` and its length.
fn frame_len(sim: &Sim, from: usize, prefix: &str) -> usize {
    let i = (from..sim.out.len())
        .find(|&i| label(&sim.out[i]).starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} in {:?}", sim.labels_from(from)));
    sim.lens[i]
}

/// Runs one prompt whose model answers `text` in one block (message id `msg_N`, N one digit).
fn turn(sim: &mut Sim, n: u32, text: &str) -> usize {
    let before = sim.out.len();
    sim.script(text_reply(&format!("msg_{n}"), text, None));
    sim.send(&user(&format!("prompt {n}")));
    before
}

/// The error result of a turn that lost a record: `error_during_execution`, no result text,
/// the output error, unknown cost.
fn assert_line_limit_result(r: &serde_json::Value) {
    assert_eq!(r["type"], "result");
    assert_eq!(r["subtype"], "error_during_execution");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["errors"], json!([LIMIT_ERROR]));
    assert!(r.get("result").is_none(), "no success text: {r}");
    assert_eq!(r["session_id"], SID);
}

/// An `assistant` record of exactly the limit is written; one byte more is not: the turn ends
/// (model cancelled) with the output error, nothing of the dropped block reaches the model's
/// context, exit status stays open, and the next turn works.
#[test]
fn assistant_record_at_the_output_line_limit() {
    let mut sim = Sim::local();
    let from = turn(&mut sim, 1, "x");
    let overhead = frame_len(&sim, from, "assistant") - 1;

    // At the limit: written. The result carries the same text with more around it, so it
    // falls back to its error form (tested on its own edge below).
    let from = turn(&mut sim, 2, &a(MAX - overhead));
    assert_eq!(
        sim.labels_from(from)
            .iter()
            .map(|l| l.split(':').take(2).collect::<Vec<_>>().join(":"))
            .collect::<Vec<_>>(),
        [
            "state:running",
            "assistant:text",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_eq!(sim.lens[from + 1], MAX);
    assert_line_limit_result(&sim.out[from + 2]);
    assert_eq!(sim.out[from + 2]["stop_reason"], "end_turn");
    assert_eq!(sim.out[from + 2]["usage"]["output_tokens"], 4);

    // One byte more: not written; the turn is cut while the model call is open.
    let from = turn(&mut sim, 3, &a(MAX - overhead + 1));
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    let r = &sim.out[from + 1];
    assert_line_limit_result(r);
    assert_eq!(r["stop_reason"], json!(null));
    assert_eq!(r["total_cost_usd"], json!(null), "WIRE-012");
    assert_eq!(r["num_turns"], 1);
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
    assert!(sim.s.is_done().is_none());

    // The session goes on; the dropped block is not in the model's context.
    let from = turn(&mut sim, 4, "fine");
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "assistant:text:fine",
            "result:success",
            "state:idle"
        ]
    );
    let assistants = |m: &Message| matches!(m, Message::Assistant { .. });
    let req = sim.requests.last().unwrap();
    assert_eq!(req.messages.iter().filter(|m| assistants(m)).count(), 2);
    assert!(sim.s.is_done().is_none());
}

/// A `result` of exactly the limit is written as a success; one byte more falls back to the
/// error form (the assistant record, smaller, was written).
#[test]
fn result_record_at_the_output_line_limit() {
    let mut sim = Sim::local();
    let from = turn(&mut sim, 1, "x");
    let overhead = frame_len(&sim, from, "result") - 1;

    let text = a(MAX - overhead);
    let from = turn(&mut sim, 2, &text);
    assert_eq!(sim.labels_from(from)[2], "result:success");
    assert_eq!(sim.lens[from + 2], MAX);
    assert_eq!(sim.out[from + 2]["result"].as_str(), Some(text.as_str()));

    let from = turn(&mut sim, 3, &a(MAX - overhead + 1));
    assert_eq!(sim.labels_from(from)[0], "state:running");
    assert!(sim.labels_from(from)[1].starts_with("assistant:text:aaa"));
    assert_eq!(
        sim.labels_from(from)[2..],
        ["result:error_during_execution", "state:idle"]
    );
    let r = &sim.out[from + 2];
    assert_line_limit_result(r);
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["usage"]["input_tokens"], 3);
    assert_eq!(r["modelUsage"]["agentx-echo"]["outputTokens"], 4);

    let from = turn(&mut sim, 4, "fine");
    assert_eq!(sim.labels_from(from)[2], "result:success");
}

/// A `tool_result` (the user record carrying a tool's output) of exactly the limit is written
/// and the turn goes on; one byte more is replaced by an error `tool_result` with the output
/// error (the tool use stays paired, PERM-053), no next model request starts, and the turn
/// ends with the output error. The model's context holds what was written.
#[test]
fn tool_result_at_the_output_line_limit() {
    let mut c = config();
    c.permission_mode = PermissionMode::BypassPermissions;
    let mut sim = Sim::new(c);
    sim.hold_tools = true;
    let tool_turn = |sim: &mut Sim, id: &str, content: String| {
        sim.script(tool_reply("msg_t", &[(id, "Bash", r#"{"command":"ls"}"#)]))
            .script(text_reply("msg_d", "done", None));
        let from = sim.out.len();
        let requests = sim.requests.len();
        sim.send(&user("run it"));
        sim.finish_tool(id, ToolOutcome::ok(content));
        (from, sim.requests.len() - requests)
    };
    let (from, _) = tool_turn(&mut sim, "toolu_1", "x".into());
    let overhead = frame_len(&sim, from, "tool_result") - 1;

    let (from, calls) = tool_turn(&mut sim, "toolu_2", a(MAX - overhead));
    assert_eq!(calls, 2);
    assert_eq!(frame_len(&sim, from, "tool_result:toolu_2"), MAX);
    assert_eq!(sim.last_of("result")["subtype"], "success");

    sim.scripts.clear();
    let (from, calls) = tool_turn(&mut sim, "toolu_3", a(MAX - overhead + 1));
    assert_eq!(calls, 1, "no model request after the lost tool result");
    assert_eq!(
        sim.labels_from(from),
        [
            "state:running",
            "assistant:tool_use:toolu_3",
            &format!("tool_result:toolu_3:{LIMIT_ERROR}"),
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_eq!(sim.out[from + 2]["message"]["content"][0]["is_error"], true);
    let r = &sim.out[from + 3];
    assert_line_limit_result(r);
    assert_eq!(r["stop_reason"], "tool_use");
    assert!(sim.s.is_resolved("toolu_3"));

    sim.scripts.clear();
    sim.send(&user("next"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
    let req = sim.requests.last().unwrap();
    let lost = req.messages.iter().find_map(|m| match m {
        Message::ToolResult {
            tool_use_id,
            content,
            is_error,
        } if tool_use_id == "toolu_3" => Some((content.clone(), *is_error)),
        _ => None,
    });
    assert_eq!(lost, Some((LIMIT_ERROR.to_string(), true)));
}

/// A `stream_event` (partial messages on) too large for a line ends the turn like any other
/// record of it: the delta is not written, nor the assistant record after it.
#[test]
fn stream_event_over_the_output_line_limit() {
    let mut c = config();
    c.include_partial_messages = true;
    let mut sim = Sim::new(c);
    let from = turn(&mut sim, 1, &a(MAX));
    let labels = sim.labels_from(from);
    assert_eq!(
        labels,
        [
            "init",
            "state:running",
            "stream_event",
            "stream_event",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_eq!(sim.out[from + 2]["event"]["type"], "message_start");
    assert_eq!(sim.out[from + 3]["event"]["type"], "content_block_start");
    assert_line_limit_result(&sim.out[from + 4]);
    let from = turn(&mut sim, 2, "ok");
    assert_eq!(sim.labels_from(from).last().unwrap(), "state:idle");
    assert_eq!(sim.of("result").last().unwrap()["subtype"], "success");
}

/// A suggestion too large for a line is measured before the result: the result becomes the
/// error form and no `prompt_suggestion` follows, instead of a success whose suggestion
/// silently vanished.
#[test]
fn suggestion_over_the_output_line_limit() {
    let mut sim = Sim::local();
    let mut script = vec![ev(ModelEvent::Suggestion { text: a(MAX) })];
    script.extend(text_reply("msg_1", "answer", None));
    sim.script(script);
    sim.send(&user("go"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:text:answer",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_line_limit_result(&sim.out[3]);
}

/// A control response too large for a line becomes a correlated error with the output error
/// (the host's waiter settles); at the limit the success is written; when the `request_id`
/// alone leaves no room for any response, a stderr line says so. The session goes on.
#[test]
fn control_response_at_the_output_line_limit() {
    let usage = |id: &str| control(id, json!({"subtype":"get_context_usage"}));
    let mut sim = Sim::local();
    sim.send(&usage("x"));
    let overhead = sim.lens[0] - 1;

    let mut sim = Sim::local();
    let id = a(MAX - overhead);
    sim.send(&usage(&id));
    assert_eq!(sim.lens, [MAX]);
    assert_eq!(sim.out[0]["response"]["subtype"], "success");

    let mut sim = Sim::local();
    let id = a(MAX - overhead + 1);
    sim.send(&usage(&id));
    assert_eq!(sim.out.len(), 1);
    let r = &sim.out[0]["response"];
    assert_eq!(r["subtype"], "error");
    assert_eq!(r["request_id"].as_str(), Some(id.as_str()));
    assert_eq!(r["error"], LIMIT_ERROR);
    assert!(sim.diagnostics.is_empty());

    // The longest request line the input accepts: no response fits.
    let mut sim = Sim::local();
    let line_overhead = usage("").len();
    sim.send(&usage(&a(MAX - line_overhead)));
    assert!(sim.out.is_empty());
    assert_eq!(
        sim.diagnostics,
        ["agentx: output refused: a control_response record exceeds the output line limit; not written"]
    );
    sim.send(&user("hi"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
    assert!(sim.s.is_done().is_none());
}

/// A `can_use_tool` request (PERM-020) can outgrow its `assistant` record: its `description`
/// repeats a `Read` path (PERM-021). The request is not written; nobody was asked, so the tool
/// use is not a denial: it gets an error `tool_result` with the output error, and the turn
/// ends with it. `requires_action` had been published and is followed by `running`.
#[test]
fn can_use_tool_request_over_the_output_line_limit() {
    let mut sim = Sim::local();
    let path = format!("/elsewhere/{}", a(MAX / 2));
    let input = json!({ "file_path": path }).to_string();
    sim.script(tool_reply("msg_1", &[("toolu_1", "Read", &input)]));
    sim.send(&user("read it"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:tool_use:toolu_1",
            "state:requires_action",
            "state:running",
            &format!("tool_result:toolu_1:{LIMIT_ERROR}"),
            "result:error_during_execution",
            "state:idle"
        ]
    );
    let r = &sim.out[6];
    assert_line_limit_result(r);
    assert_eq!(r["permission_denials"], json!([]));
    assert!(sim.s.pending_requests().is_empty());
    assert!(sim.s.open_prompts().is_empty());
    assert!(sim.run_tools().is_empty());
    sim.send(&user("hi"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// `SessionConfig::max_record_len` sets the limit; a record refused when a queued turn starts
/// (here `system/init`, under a limit one byte below its length) ends that turn at once, before
/// its model says anything, and the next turn runs (without a second init: PROFILE §8).
#[test]
fn a_turn_whose_first_record_is_refused_ends_at_once() {
    let mut sim = Sim::local();
    sim.send(&user("hi"));
    let init_len = sim.lens[0];
    let mut c = config();
    c.max_record_len = init_len - 1;
    let mut sim = Sim::new(c);
    sim.send(&user("hi"));
    assert_eq!(
        sim.labels(),
        [
            "state:running",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_eq!(
        sim.out[1]["errors"],
        json!([format!(
            "output error: record exceeds the {}-byte line limit",
            init_len - 1
        )])
    );
    assert!(sim
        .actions
        .iter()
        .any(|a| matches!(a, agentx_core::session::Action::CancelModel { .. })));
    sim.send(&user("again"));
    assert_eq!(
        sim.labels_from(3),
        [
            "state:running",
            "assistant:text:echo: again",
            "result:success",
            "state:idle"
        ]
    );
}

/// A model failure whose provider message makes the `assistant` error record too long for a
/// line: the record is written without the message (its `error` category and `model error:
/// <category>` text stay visible, as for a message holding a credential, PROFILE §14), and
/// the turn ends with both errors in its result.
#[test]
fn model_failure_message_over_the_output_line_limit() {
    use agentx_wire::wire::output::AssistantError;
    let mut sim = Sim::local();
    sim.script(vec![
        ev(ModelEvent::MessageStart {
            message_id: "msg_1".into(),
        }),
        ev(ModelEvent::Failed {
            category: AssistantError::ServerError,
            message: Some(a(MAX)),
        }),
    ]);
    sim.send(&user("go"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:text:model error: server_error",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_eq!(sim.out[2]["error"], "server_error");
    assert_eq!(
        sim.out[3]["errors"],
        json!(["model error: server_error", LIMIT_ERROR])
    );
    sim.send(&user("hi"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// WIRE-PERM-004 / PERM-022: a sandbox network request whose `can_use_tool` record (the host
/// is in its `input` and its `description`) is exactly the limit is written and its allow
/// resumes the model; one byte more is not written: nobody was asked, so it is neither an
/// allow nor a denial (no `permission_denials` entry, the model is cancelled, not resumed),
/// and the turn ends with the output error. The next turn works.
#[test]
fn network_request_at_the_output_line_limit() {
    use agentx_core::model::NetworkDecision;
    use agentx_core::session::Action;
    let net = |host: &str, port: u16| {
        let mut script = vec![ev(ModelEvent::NetworkAccess {
            host: host.into(),
            port: Some(port),
        })];
        script.extend(text_reply("msg_a", "network: allowed", None));
        let mut sim = Sim::local();
        sim.script(script);
        sim.send(&user("net"));
        sim
    };
    let request_len = |host: &str, port: u16| {
        let sim = net(host, port);
        assert_eq!(sim.last()["request"]["subtype"], "can_use_tool");
        *sim.lens.last().unwrap()
    };
    assert_eq!(
        request_len("hh", 443) - request_len("h", 443),
        2,
        "host in input and description"
    );
    // A host of n bytes: `one + 2 (n - 1)`; the port's digits set the parity.
    let port = if (MAX - request_len("h", 443)).is_multiple_of(2) {
        443
    } else {
        44
    };
    let one = request_len("h", port);
    let host = a((MAX - one) / 2 + 1);

    // At the limit: written, and the host's allow resumes the model.
    let mut sim = net(&host, port);
    assert_eq!(*sim.lens.last().unwrap(), MAX);
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "state:requires_action",
            "control_request:can_use_tool:agentx-perm-1"
        ]
    );
    sim.send(&allow("agentx-perm-1"));
    assert_eq!(sim.network, [NetworkDecision::Allowed]);
    assert_eq!(sim.last_of("result")["subtype"], "success");

    // One byte more: not written; no allow, no denial; the turn ends with the output error.
    let mut sim = net(&format!("{host}a"), port);
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "state:requires_action",
            "state:running",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert!(
        sim.lens.iter().all(|&l| l < MAX / 2),
        "nothing of the host was written"
    );
    let r = &sim.out[4];
    assert_line_limit_result(r);
    assert_eq!(r["permission_denials"], json!([]));
    assert!(
        sim.network.is_empty(),
        "the model was neither allowed nor denied"
    );
    assert!(sim
        .actions
        .iter()
        .any(|a| matches!(a, Action::CancelModel { .. })));
    assert!(sim.s.pending_requests().is_empty());
    assert!(sim.s.open_prompts().is_empty());
    assert!(sim.diagnostics.is_empty(), "{:?}", sim.diagnostics);
    assert!(sim.s.is_done().is_none());
    sim.send(&user("hi"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// Two tool uses of one message: the first `can_use_tool` request is written (its prompt
/// open), the second's is too large. The open prompt is cancelled first (WIRE-011 order),
/// each tool use gets exactly one terminal `tool_result` (PERM-053), nothing is a denial, and
/// a late answer to the cancelled request changes nothing.
#[test]
fn second_can_use_tool_request_over_the_limit_cancels_the_first() {
    let mut sim = Sim::local();
    let small = json!({ "file_path": "/elsewhere/x" }).to_string();
    let big = json!({ "file_path": format!("/elsewhere/{}", a(MAX / 2)) }).to_string();
    sim.script(tool_reply(
        "msg_1",
        &[("toolu_1", "Read", &small), ("toolu_2", "Read", &big)],
    ));
    sim.send(&user("read both"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "assistant:tool_use:toolu_1",
            "assistant:tool_use:toolu_2",
            "state:requires_action",
            "control_request:can_use_tool:agentx-perm-1",
            "control_cancel_request:agentx-perm-1",
            &format!("tool_result:toolu_1:{LIMIT_ERROR}"),
            &format!("tool_result:toolu_2:{LIMIT_ERROR}"),
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_line_limit_result(&sim.out[9]);
    assert_eq!(sim.out[9]["permission_denials"], json!([]));
    assert!(sim.s.pending_requests().is_empty());
    assert!(sim.s.open_prompts().is_empty());
    let before = sim.out.len();
    sim.send(&allow("agentx-perm-1"));
    assert!(sim.run_tools().is_empty());
    assert_eq!(sim.out.len(), before, "{:?}", sim.labels_from(before));
    sim.send(&user("hi"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// A `result` that fits in none of its forms (possible only with a configured limit below
/// the default or a model name near it: every form names the model in `modelUsage`): the turn
/// still ends with `idle`, and the lost result is said on stderr, never lost silently.
#[test]
fn a_result_that_fits_in_no_form_is_said_on_stderr() {
    let mut c = config();
    c.projection.init.model = format!("m{}", a(2000));
    c.max_record_len = 1900;
    let mut sim = Sim::new(c);
    sim.send(&user("hi"));
    assert_eq!(
        sim.labels(),
        ["state:running", "state:idle"],
        "{:?}",
        sim.diagnostics
    );
    assert_eq!(
        sim.diagnostics,
        ["agentx: output refused: a result record exceeds the output line limit; not written"]
    );
    assert!(sim.s.is_done().is_none());
}

/// PROFILE §8 Replay: the echo of a resolving `control_response` whose re-encoding outgrows
/// one line (raw U+2028, 3 bytes each, are written `\u2028`, 6) is not written and is said on
/// stderr; the response still resolves its waiter (the tool runs, paired once) and the turn
/// ends normally.
#[test]
fn control_response_echo_over_the_output_line_limit() {
    let mut c = config();
    c.replay_user_messages = true;
    let mut sim = Sim::new(c);
    sim.script(tool_reply(
        "msg_a",
        &[("toolu_1", "Bash", r#"{"command":"ls"}"#)],
    ))
    .script(text_reply("msg_b", "done", None));
    sim.send(&user("list"));
    assert_eq!(sim.last()["request"]["subtype"], "can_use_tool");
    let pad = "\u{2028}".repeat(MAX / 3 - 100);
    let line = json!({"type":"control_response","response":{"subtype":"success",
        "request_id":"agentx-perm-1","response":{"behavior":"allow",
        "updatedInput":{"command":format!("ls #{pad}")}}}})
    .to_string();
    assert!(line.len() <= MAX, "the inbound line itself fits");
    let before = sim.out.len();
    sim.send(&line);
    assert_eq!(
        sim.diagnostics,
        ["agentx: output refused: a control_response echo record exceeds the output line limit; not written"]
    );
    assert_eq!(
        sim.labels_from(before),
        [
            "state:running",
            "tool_result:toolu_1:ran Bash",
            "assistant:text:done",
            "result:success",
            "state:idle"
        ]
    );
    assert_eq!(sim.run_tools(), ["toolu_1"]);
}

/// WIRE-010 / WIRE-015: an `interrupt` whose `request_id` alone makes its acknowledgement too
/// long for a line: the turn is still interrupted in the protocol's order (its pending
/// permission request cancelled first), the acknowledgement is not written and a stderr line
/// says so; nothing latches and the session goes on.
#[test]
fn interrupt_acknowledgement_over_the_output_line_limit() {
    let mut sim = Sim::local();
    let path = json!({ "file_path": "/elsewhere/x" }).to_string();
    sim.script(tool_reply("msg_1", &[("toolu_1", "Read", &path)]));
    sim.send(&user("read"));
    assert_eq!(sim.last()["request"]["subtype"], "can_use_tool");
    let id = format!("int-{}", "\u{2028}".repeat(MAX / 3 - 100));
    let line = control(&id, json!({"subtype":"interrupt"}));
    assert!(line.len() <= MAX);
    let before = sim.out.len();
    sim.send(&line);
    assert_eq!(
        sim.labels_from(before),
        [
            "control_cancel_request:agentx-perm-1",
            "tool_result:toolu_1:interrupted",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_eq!(
        sim.diagnostics,
        ["agentx: output refused: a control_response (interrupt) record exceeds the output line limit; not written"]
    );
    assert!(sim.s.is_done().is_none());
    sim.send(&user("hi"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// With a permission hook configured (PROFILE §10), a `can_use_tool` request too large for a
/// line: the race never starts, so no hook runs either (nobody decides), the tool use gets one
/// error `tool_result` with the output error, and a stray hook answer changes nothing
/// (PERM-053).
#[test]
fn can_use_tool_request_over_the_limit_starts_no_hook() {
    let mut c = config();
    c.hook_configured = true;
    let mut sim = Sim::new(c);
    let path = format!("/elsewhere/{}", a(MAX / 2));
    let input = json!({ "file_path": path }).to_string();
    sim.script(tool_reply("msg_1", &[("toolu_1", "Read", &input)]));
    sim.send(&user("read it"));
    assert_eq!(
        sim.labels_from(2),
        [
            "assistant:tool_use:toolu_1",
            "state:requires_action",
            "state:running",
            &format!("tool_result:toolu_1:{LIMIT_ERROR}"),
            "result:error_during_execution",
            "state:idle"
        ]
    );
    let hook_actions: Vec<_> = sim
        .actions
        .iter()
        .filter_map(|a| match a {
            agentx_core::session::Action::StartHook { tool_use_id, .. } => {
                Some(format!("start {tool_use_id}"))
            }
            agentx_core::session::Action::KillHook { tool_use_id } => {
                Some(format!("kill {tool_use_id}"))
            }
            _ => None,
        })
        .collect();
    assert!(hook_actions.is_empty(), "{hook_actions:?}");
    assert!(sim.s.open_prompts().is_empty());
    let before = sim.out.len();
    sim.hook(
        "toolu_1",
        agentx_core::session::HookOutcome::Allow {
            updated_input: None,
        },
    );
    assert_eq!(sim.out.len(), before);
    assert!(sim.run_tools().is_empty());
}

/// A `task_started` too large for a line (a long description) ends the turn like any record
/// of it; the host never saw the task start, so no `task_notification` for it follows either
/// (a terminal event of an unknown task would be a record about nothing).
#[test]
fn task_started_over_the_output_line_limit() {
    let mut sim = Sim::local();
    sim.script(vec![
        ev(ModelEvent::MessageStart {
            message_id: "msg_1".into(),
        }),
        ev(ModelEvent::TaskStarted {
            task_id: "t1".into(),
            description: a(MAX),
        }),
    ]);
    sim.send(&user("go"));
    assert_eq!(
        sim.labels(),
        [
            "init",
            "state:running",
            "result:error_during_execution",
            "state:idle"
        ]
    );
    assert_line_limit_result(&sim.out[2]);
    sim.send(&user("hi"));
    assert_eq!(sim.last_of("result")["subtype"], "success");
}

/// PROFILE §8 Replay at the line limit: a user record whose text is raw U+2028 (3 bytes in,
/// `\u2028`, 6 bytes, out) is measured in its final form. One whose replay form cannot fit is
/// refused up front with an input-error result (WIRE-021); it is never run with its replay
/// echo missing.
#[test]
fn replay_of_separator_heavy_user_record_is_measured_in_final_form() {
    let mut c = config();
    c.replay_user_messages = true;
    let mut sim = Sim::new(c);
    let text = "\u{2028}".repeat(MAX / 5);
    let line = user(&text);
    assert!(line.len() <= MAX);
    sim.send(&line);
    let labels = sim.labels();
    assert_eq!(
        labels,
        ["result:error_during_execution"],
        "diagnostics {:?}",
        sim.diagnostics
    );
    assert_eq!(
        sim.out[0]["errors"],
        json!(["input error: the record's replay form would exceed the output line limit"])
    );
}

/// A task whose `task_started` fits but whose `task_notification` would not (its summary
/// `task <id> <status>` repeats a long ID): the notification is written with the summary
/// `task <status>`, so every task the host saw start also ends (PROFILE §8), and the turn
/// ends with the output error.
#[test]
fn task_notification_over_the_output_line_limit_keeps_the_task_paired() {
    use agentx_core::model::TaskStatus;
    let mut sim = Sim::local();
    let id = format!("t{}", a(MAX / 2));
    sim.script(vec![
        ev(ModelEvent::MessageStart {
            message_id: "msg_1".into(),
        }),
        ev(ModelEvent::TaskStarted {
            task_id: id.clone(),
            description: "d".into(),
        }),
        ev(ModelEvent::TaskNotification {
            task_id: id.clone(),
            status: TaskStatus::Completed,
        }),
    ]);
    sim.send(&user("go"));
    let labels = sim.labels();
    assert_eq!(&labels[..2], ["init", "state:running"], "{labels:?}");
    let notes = sim.of("system");
    let started: Vec<_> = notes
        .iter()
        .filter(|v| v["subtype"] == "task_started")
        .collect();
    let ended: Vec<_> = notes
        .iter()
        .filter(|v| v["subtype"] == "task_notification")
        .collect();
    assert_eq!(started.len(), 1);
    assert_eq!(ended.len(), 1, "{labels:?}");
    assert_eq!(ended[0]["task_id"], id.as_str());
    assert_eq!(ended[0]["status"], "completed");
    assert_eq!(ended[0]["summary"], "task completed");
    assert_line_limit_result(sim.last_of("result"));
    assert_eq!(labels.last().unwrap(), "state:idle");
}
