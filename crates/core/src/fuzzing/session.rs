//! Fuzzing the session core: random interleavings of host records, hook
//! results, model events, tool completions, timer firings, SIGINT and EOF, driven from the
//! fuzzer's bytes on a virtual clock, with the protocol's invariants checked after every step.
//!
//! Invariants (each a panic when broken):
//! - every frame is one valid output record (strict decode, one physical line);
//! - every pending permission request is removed exactly once: a request ID leaves the
//!   pending set once and never comes back, at most one `control_cancel_request` is written
//!   per ID, and none is left pending after EOF;
//! - each tool-use ID settles once: at most one `tool_result` per `tool_use` block, and every
//!   `tool_use` has its `tool_result` before the turn's `result`;
//! - no allow without a decisive allow: a `Bash` use (which `default` mode always asks for)
//!   runs only after the host or the hook allowed it;
//! - cancellations precede the interrupt acknowledgement: every request pending when an
//!   `interrupt` arrives gets its `control_cancel_request` before the acknowledgement;
//! - `idle` comes last and only when nothing is held: at `idle` the turn's result was
//!   written and every task it started has its terminal event;
//! - no panic, and the session ends (exit 0 after EOF once idle, or 1 after a fatal input);
//! - no frame is longer than the output line limit; under a small limit
//!   ([`interleavings_small_lines`]) the invariants above hold although records are refused;
//! - with SDK hook callbacks registered ([`interleavings_sdk_hooks`], PROFILE §16): random
//!   `hook_callback` answers (decisions, blocks, contexts, `continue: false`, errors, malformed
//!   answers, late answers) and timeouts keep every invariant above; a callback request is
//!   removed once, its cancel precedes an interrupt's acknowledgement, and a Bash use runs
//!   only after a decisive allow of the host, the settings hook or a PreToolUse callback;
//! - with an SDK MCP server as well ([`interleavings_sdk_mcp`], PROFILE §16): random
//!   `mcp_message` answers to the listing and to `tools/call` (results, `isError`, JSON-RPC
//!   errors, error answers, malformed and late ones, wrong ids) and timeouts keep every
//!   invariant above: an MCP request is removed once, a call's cancel precedes an interrupt's
//!   acknowledgement, and each MCP tool use is settled once before its turn's result.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use crate::model::{ModelEvent, NetworkDecision, StopReason, TaskStatus, TurnId, Usage};
use crate::session::{Action, HookOutcome, Session, SessionConfig, ToolOutcome};
use agentx_wire::json::Parser;
use agentx_wire::wire::output::AssistantError;
use agentx_wire::wire::{OutputRecord, PeerProfile, SystemEvent};

const SID: &str = "0b6f1c1e-6c59-4c1e-9a55-3f1e7948c27b";

/// The fuzzer's bytes as a stream of small choices.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn below(&mut self, n: usize) -> usize {
        self.byte().map_or(0, |b| usize::from(b) % n.max(1))
    }
}

/// The scripted model: each call gets a script generated from the fuzzer's bytes; one event
/// is released per "model step" so events interleave with everything else.
struct Model {
    turn: TurnId,
    events: VecDeque<ModelEvent>,
    /// Waiting for the session's answer to a network request.
    waiting: bool,
    /// Tasks started and not finished (they may outlive the message).
    tasks: Vec<(String, u32)>,
}

fn script(
    b: &mut Bytes<'_>,
    turn: TurnId,
    index: u32,
    tool_seq: &mut u32,
    mcp: bool,
) -> VecDeque<ModelEvent> {
    let mut ev = VecDeque::new();
    ev.push_back(ModelEvent::MessageStart {
        message_id: format!("msg_{turn}_{index}"),
    });
    let blocks = 1 + b.below(3);
    let mut tools = 0;
    // Follow-up calls answer in text more often, so turns end.
    let tool_bias = if index == 0 { 2 } else { 5 };
    for i in 0..blocks as u32 {
        match b.below(tool_bias + 4) {
            0 | 1 => {
                *tool_seq += 1;
                tools += 1;
                let (name, input) = match b.below(if mcp { 6 } else { 4 }) {
                    4 | 5 => ("mcp__calc__add", r#"{"a":1}"#.to_string()),
                    0 => ("Read", r#"{"file_path":"a.txt"}"#.to_string()),
                    1 => ("Nope", "{}".to_string()),
                    2 => ("Bash", "[1]".to_string()),
                    _ => ("Bash", format!(r#"{{"command":"c{}"}}"#, tool_seq)),
                };
                ev.push_back(ModelEvent::ToolUseStart {
                    index: i,
                    id: format!("toolu_{tool_seq}"),
                    name: name.into(),
                });
                let (a, c) = input.split_at(input.len() / 2);
                ev.push_back(ModelEvent::InputJsonDelta {
                    index: i,
                    partial_json: a.into(),
                });
                ev.push_back(ModelEvent::InputJsonDelta {
                    index: i,
                    partial_json: c.into(),
                });
                ev.push_back(ModelEvent::BlockStop { index: i });
            }
            2 => {
                let id = format!("task_{turn}_{index}_{i}");
                ev.push_back(ModelEvent::TaskStarted {
                    task_id: id,
                    description: "work".into(),
                });
            }
            3 => ev.push_back(ModelEvent::Suggestion {
                text: "next?".into(),
            }),
            4 => ev.push_back(ModelEvent::NetworkAccess {
                host: "example.com".into(),
                port: Some(443),
            }),
            5 => ev.push_back(ModelEvent::Compact),
            _ => {
                ev.push_back(ModelEvent::TextStart { index: i });
                ev.push_back(ModelEvent::TextDelta {
                    index: i,
                    text: "hello \u{2028} world".into(),
                });
                ev.push_back(ModelEvent::BlockStop { index: i });
            }
        }
    }
    match b.below(12) {
        0 => ev.push_back(ModelEvent::Failed {
            category: AssistantError::ServerError,
            message: None,
        }),
        1 => ev.push_back(ModelEvent::Cancelled),
        _ => ev.push_back(ModelEvent::MessageStop {
            stop_reason: if tools > 0 {
                StopReason::ToolUse
            } else {
                StopReason::EndTurn
            },
            usage: Usage {
                input_tokens: 1,
                output_tokens: 2,
                ..Usage::default()
            },
            cost: if b.below(2) == 0 { None } else { Some(0.0) },
        }),
    }
    ev
}

/// What the checker knows.
#[derive(Default)]
struct Checker {
    parser: Parser,
    /// Requests seen pending, and those removed (never pending again).
    pending: HashSet<String>,
    removed: HashSet<String>,
    cancels: HashSet<String>,
    /// request ID → tool-use ID, from the `can_use_tool` frames.
    request_tool: HashMap<String, String>,
    /// `hook_callback` request ID → (hook event, tool-use ID) (PROFILE §16).
    hook_requests: HashMap<String, (String, Option<String>)>,
    /// `mcp_message` request ID → its JSON-RPC id (`0` for a notification) (PROFILE §16).
    mcp_requests: HashMap<String, u64>,
    tool_uses: HashSet<String>,
    tool_results: HashSet<String>,
    /// Tool uses the host or hook allowed (decisive allows sent by the fuzzer).
    allowed: HashSet<String>,
    /// Tool uses the policy allows without a prompt (`Read` inside the cwd).
    bash_uses: HashSet<String>,
    /// Since the last idle: a result was written; tasks started and finished.
    result_since_idle: bool,
    open_tasks: HashSet<String>,
    frames: u64,
    /// The session's output line limit.
    max_record_len: usize,
}

impl Checker {
    /// A new callback request's ID: never one in use, removed, or seen before.
    fn fresh_request_id(&self, id: &str) -> String {
        assert!(
            !self.removed.contains(id)
                && !self.pending.contains(id)
                && !self.mcp_requests.contains_key(id)
                && !self.hook_requests.contains_key(id),
            "request id reused"
        );
        id.to_string()
    }

    fn frame(&mut self, f: &[u8]) {
        assert_eq!(f.last(), Some(&b'\n'));
        let body = &f[..f.len() - 1];
        assert!(!body.contains(&b'\n'), "one physical line");
        assert!(
            body.len() <= self.max_record_len,
            "a record over the line limit"
        );
        let rec = match OutputRecord::decode_line_as(body, &mut self.parser, PeerProfile::Strict) {
            Ok(r) => r.into_owned(),
            Err(e) => panic!("invalid output record: {e}"),
        };
        // Every record round-trips through `wire` — re-encoded byte for byte, and
        // every payload agentx writes typed reads back strictly as its closed shape.
        let mut again = Vec::with_capacity(body.len());
        rec.encode(&mut again);
        assert!(
            again == body,
            "an output record that does not re-encode to its own bytes"
        );
        if let Err(e) = agentx_wire::wire::api::check_agentx_payloads(&rec) {
            panic!("an output payload that is not its typed shape: {e}");
        }
        self.frames += 1;
        match &rec {
            OutputRecord::Assistant(a) => {
                let doc = a.message.raw().expect("decoded").document().expect("valid");
                let block = doc.root().as_object().and_then(|o| o.get("content"));
                if let Some(b) = block.and_then(|c| c.as_array()).and_then(|c| c.get(0)) {
                    let b = b.as_object().expect("block object");
                    if b.get("type")
                        .and_then(|t| t.as_str())
                        .map(|s| s.decode())
                        .as_deref()
                        == Some("tool_use")
                    {
                        let id = b.get("id").and_then(|v| v.as_str()).expect("id").decode();
                        let name = b
                            .get("name")
                            .and_then(|v| v.as_str())
                            .expect("name")
                            .decode();
                        assert!(
                            self.tool_uses.insert(id.to_string()),
                            "duplicate tool_use id"
                        );
                        if name == "Bash" {
                            self.bash_uses.insert(id.to_string());
                        }
                    }
                }
            }
            OutputRecord::User(u) => {
                if let agentx_wire::wire::UserMessage::Object {
                    content: agentx_wire::wire::UserContent::Blocks(blocks),
                    ..
                } = &u.message
                {
                    for b in blocks {
                        if let agentx_wire::wire::ContentBlock::Other(block) = b {
                            let doc = block.raw().expect("decoded").document().expect("valid");
                            let o = doc.root().as_object().expect("block");
                            if let Some(id) = o.get("tool_use_id").and_then(|v| v.as_str()) {
                                let id = id.decode().to_string();
                                assert!(
                                    self.tool_uses.contains(&id),
                                    "tool_result without tool_use"
                                );
                                assert!(
                                    self.tool_results.insert(id),
                                    "a tool-use ID settled twice"
                                );
                            }
                        }
                    }
                }
            }
            OutputRecord::ControlRequest(r) => {
                if let agentx_wire::wire::ControlRequestBody::McpMessage(m) = &r.request {
                    let id = self.fresh_request_id(r.request_id.as_str());
                    let doc = m.message.document().expect("valid");
                    let rpc = doc
                        .root()
                        .as_object()
                        .and_then(|o| o.get("id"))
                        .and_then(|v| v.as_number())
                        .and_then(|n| n.as_u64())
                        .unwrap_or(0);
                    self.mcp_requests.insert(id, rpc);
                }
                if let agentx_wire::wire::ControlRequestBody::HookCallback(h) = &r.request {
                    let id = self.fresh_request_id(r.request_id.as_str());
                    let doc = h.input.document().expect("valid");
                    let event = doc
                        .root()
                        .as_object()
                        .and_then(|o| o.get("hook_event_name"))
                        .and_then(|v| v.as_str())
                        .expect("HOOK_INPUT hook_event_name")
                        .decode()
                        .into_owned();
                    self.hook_requests
                        .insert(id, (event, h.tool_use_id.as_ref().map(|t| t.to_string())));
                }
                if let agentx_wire::wire::ControlRequestBody::CanUseTool(c) = &r.request {
                    let id = r.request_id.as_str().to_string();
                    assert!(
                        !self.removed.contains(&id) && !self.pending.contains(&id),
                        "request id reused"
                    );
                    self.request_tool
                        .insert(id, c.tool_use_id.as_str().to_string());
                }
            }
            OutputRecord::ControlCancelRequest(c) => {
                let id = c.request_id.as_str().to_string();
                assert!(
                    self.cancels.insert(id.clone()),
                    "two cancellations for one request"
                );
                assert!(
                    self.request_tool.contains_key(&id)
                        || self.hook_requests.contains_key(&id)
                        || self.mcp_requests.contains_key(&id),
                    "cancel of an unknown request"
                );
            }
            // PROFILE §8 / WIRE-020: an input-error result (a rejected user record, e.g. the
            // queue is full) is not a turn's result: it may come while a turn is active.
            OutputRecord::Result(r)
                if r.errors
                    .as_ref()
                    .is_some_and(|e| e.iter().any(|m| m.starts_with("input error: "))) =>
            {
                assert_eq!(r.num_turns, 0, "an input-error result runs no turn");
                // PROFILE §16: a UserPromptSubmit block is its turn's result (then `idle`).
                if r.errors.as_ref().is_some_and(|e| {
                    e.iter()
                        .any(|m| m.starts_with("input error: blocked by UserPromptSubmit hook"))
                }) {
                    self.result_since_idle = true;
                }
            }
            OutputRecord::Result(_) => {
                // Every tool use of the turn is paired before its result.
                for id in &self.tool_uses {
                    assert!(
                        self.tool_results.contains(id),
                        "result before a tool_result"
                    );
                }
                self.result_since_idle = true;
            }
            OutputRecord::System(SystemEvent::TaskStarted(t)) => {
                self.open_tasks.insert(t.task_id.to_string());
            }
            OutputRecord::System(SystemEvent::TaskNotification(t)) => {
                self.open_tasks.remove(t.task_id.as_ref());
            }
            OutputRecord::System(SystemEvent::SessionStateChanged(s))
                if s.state == agentx_wire::wire::system::SessionState::Idle =>
            {
                assert!(self.result_since_idle, "idle without a result");
                assert!(self.open_tasks.is_empty(), "idle while a task is held");
                self.result_since_idle = false;
            }
            _ => {}
        }
    }

    /// The session's pending set after a step.
    fn pending(&mut self, now: Vec<String>) {
        let now: HashSet<String> = now.into_iter().collect();
        for id in &now {
            assert!(
                !self.removed.contains(id),
                "a removed request is pending again"
            );
        }
        for id in self.pending.difference(&now) {
            self.removed.insert(id.clone());
        }
        self.pending = now;
    }
}

struct Run {
    s: Session,
    now: Instant,
    line: u64,
    model: Option<Model>,
    tools: Vec<String>,
    hooks: Vec<String>,
    tool_seq: u32,
    /// An SDK MCP server is configured (PROFILE §16).
    mcp: bool,
    check: Checker,
    /// Under a small line limit: tool outputs of varied length, some too long for a line.
    long_outputs: bool,
}

impl Run {
    fn drain(&mut self, b: &mut Bytes<'_>) {
        loop {
            let mut moved = false;
            while let Some(f) = self.s.poll_transmit() {
                moved = true;
                self.check.frame(&f);
            }
            while self.s.poll_diagnostic().is_some() {
                moved = true;
            }
            while let Some(a) = self.s.poll_action() {
                moved = true;
                match a {
                    Action::StartModel(req) => {
                        self.model = Some(Model {
                            turn: req.turn,
                            events: script(b, req.turn, req.index, &mut self.tool_seq, self.mcp),
                            waiting: false,
                            tasks: self.model.take().map(|m| m.tasks).unwrap_or_default(),
                        });
                    }
                    Action::CancelModel { turn }
                        if self.model.as_ref().is_some_and(|m| m.turn == turn) =>
                    {
                        self.model = None;
                    }
                    Action::ResumeModel { turn, .. } => {
                        if let Some(m) = self.model.as_mut().filter(|m| m.turn == turn) {
                            m.waiting = false;
                        }
                    }
                    Action::RunTool { tool_use_id, .. } => {
                        if self.check.bash_uses.contains(&tool_use_id) {
                            assert!(
                                self.check.allowed.contains(&tool_use_id),
                                "a Bash use ran without a decisive allow"
                            );
                        }
                        self.tools.push(tool_use_id);
                    }
                    Action::CancelTool { tool_use_id } => self.tools.retain(|t| *t != tool_use_id),
                    Action::StartHook { tool_use_id, .. } => self.hooks.push(tool_use_id),
                    Action::KillHook { tool_use_id } => self.hooks.retain(|t| *t != tool_use_id),
                    _ => {}
                }
            }
            if !moved {
                break;
            }
        }
        let mut every = self.pending_all();
        every.extend(self.s.pending_mcp_messages());
        every.sort();
        every.dedup();
        self.check.pending(every);
    }

    /// Pending `can_use_tool`, `hook_callback` and `tools/call` requests (what an interrupt
    /// cancels; an MCP server's listing is not a turn's and goes on).
    fn pending_all(&self) -> Vec<String> {
        let mut p = self.s.pending_requests();
        p.extend(self.s.pending_hook_callbacks());
        p.extend(self.s.pending_mcp_calls());
        p
    }

    /// A tool's output: `out`, or under a small line limit `out` and up to 2,999 more bytes
    /// (from the tool-use ID, so no fuzzer byte is consumed).
    fn output(&self, tool_use_id: &str) -> ToolOutcome {
        let mut content = String::from("out");
        if self.long_outputs {
            let n = tool_use_id
                .bytes()
                .fold(0usize, |a, b| a.wrapping_mul(31).wrapping_add(b.into()));
            content.extend(std::iter::repeat_n('x', n % 3000));
        }
        ToolOutcome::ok(content)
    }

    fn send(&mut self, line: &[u8], b: &mut Bytes<'_>) {
        self.line += 1;
        self.s.handle_line(line, self.line, self.now);
        self.drain(b);
    }

    fn model_step(&mut self, b: &mut Bytes<'_>) {
        let Some(m) = self.model.as_mut() else { return };
        if m.waiting {
            return;
        }
        let turn = m.turn;
        let ev = match m.events.pop_front() {
            Some(e) => e,
            None => {
                // After the message: the background tasks' events.
                let Some((id, step)) = m.tasks.first().cloned() else {
                    return;
                };
                if step >= 2 || b.below(3) == 0 {
                    m.tasks.remove(0);
                    ModelEvent::TaskNotification {
                        task_id: id,
                        status: TaskStatus::Completed,
                    }
                } else {
                    m.tasks[0].1 += 1;
                    ModelEvent::TaskProgress { task_id: id, step }
                }
            }
        };
        match &ev {
            ModelEvent::TaskStarted { task_id, .. } => m.tasks.push((task_id.clone(), 0)),
            ModelEvent::NetworkAccess { .. } => m.waiting = true,
            _ => {}
        }
        self.s.handle_model(turn, ev, self.now);
        self.drain(b);
    }
}

/// One fuzz case.
pub fn interleavings(data: &[u8]) {
    run_case(
        data,
        agentx_wire::encode::DEFAULT_MAX_RECORD_LEN,
        Mode::Plain,
    );
}

/// Which SDK callbacks a case registers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Hooks,
    /// Hooks, and the SDK MCP server `calc` (listing and calls by `mcp_message`).
    Mcp,
}

/// One fuzz case with the hooks of [`interleavings_sdk_hooks`] and an SDK MCP server `calc`
/// (PROFILE §16; listing and call timeouts of 1 s), fed random `mcp_message` answers.
pub fn interleavings_sdk_mcp(data: &[u8]) {
    run_case(data, agentx_wire::encode::DEFAULT_MAX_RECORD_LEN, Mode::Mcp);
}

/// The answers the fuzzer gives `mcp_message` requests: `{id}` is the request's JSON-RPC id,
/// `ERROR` an error response.
const MCP_ANSWERS: &[&str] = &[
    r#"{"mcp_response":{"jsonrpc":"2.0","id":{id},"result":{"capabilities":{"tools":{}}}}}"#,
    r#"{"mcp_response":{"jsonrpc":"2.0","result":{},"id":0}}"#,
    r#"{"mcp_response":{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"name":"add","inputSchema":{"type":"object"}}]}}}"#,
    r#"{"mcp_response":{"jsonrpc":"2.0","id":{id},"result":{"tools":[{"name":"add","inputSchema":{"type":"object"}}],"nextCursor":"c"}}}"#,
    r#"{"mcp_response":{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"3"}]}}}"#,
    r#"{"mcp_response":{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"no"}],"isError":true}}}"#,
    r#"{"mcp_response":{"jsonrpc":"2.0","id":{id},"error":{"code":-32601,"message":"not found"}}}"#,
    r#"{"mcp_response":{"jsonrpc":"2.0","id":999999,"result":{}}}"#,
    r#"{"mcp_response":{"jsonrpc":"2.0","id":{id}}}"#,
    r#"{"mcp_response":[1]}"#,
    "{}",
    "ERROR",
];

/// One fuzz case in the SDK profile with hook callbacks registered for PreToolUse,
/// PostToolUse, UserPromptSubmit and Stop (PROFILE §16; `onFailure` and the matcher timeout
/// of 1 s chosen from the data), fed random `hook_callback` answers and timer firings.
pub fn interleavings_sdk_hooks(data: &[u8]) {
    run_case(
        data,
        agentx_wire::encode::DEFAULT_MAX_RECORD_LEN,
        Mode::Hooks,
    );
}

/// The answers the fuzzer gives hook callbacks (`ERROR` is an error response).
const HOOK_ANSWERS: &[&str] = &[
    "{}",
    r#"{"async":true}"#,
    r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#,
    r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"y"}}}"#,
    r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"no"}}"#,
    r#"{"hookSpecificOutput":{"permissionDecision":"ask"}}"#,
    r#"{"hookSpecificOutput":{"permissionDecision":"defer","additionalContext":"ctx"}}"#,
    r#"{"hookSpecificOutput":{"permissionDecision":"maybe"}}"#,
    r#"{"hookSpecificOutput":{"updatedInput":"x","permissionDecision":"allow"}}"#,
    r#"{"decision":"block","reason":"r"}"#,
    r#"{"decision":"approve"}"#,
    r#"{"continue":false,"stopReason":"s"}"#,
    r#"{"hookSpecificOutput":{"additionalContext":"more"}}"#,
    "[1]",
    "ERROR",
];

/// One fuzz case under a small output line limit (700 to 2,699 bytes, from the data), so
/// that every kind of record the session writes is sometimes too long for a line: the same
/// invariants must hold (every tool use paired before its result, `idle` only after a result,
/// requests removed once, the session ends), and no record may be lost silently: a turn that
/// lost one still ends with its result.
pub fn interleavings_small_lines(data: &[u8]) {
    let sum = data
        .iter()
        .fold(0usize, |a, &b| a.wrapping_mul(31).wrapping_add(b.into()));
    run_case(data, 700 + sum % 2000, Mode::Plain);
}

fn run_case(data: &[u8], max_record_len: usize, mode: Mode) {
    let sdk_hooks = mode != Mode::Plain;
    let mcp = mode == Mode::Mcp;
    let mut b = Bytes { data, at: 0 };
    let mut config = SessionConfig::local(SID, "/work/p");
    if sdk_hooks {
        config.profile = crate::session::Profile::Sdk;
    }
    if mcp {
        config.mcp.servers = vec![crate::session::mcp_config::ServerDef {
            name: "calc".into(),
            kind: crate::session::mcp_config::ServerKind::Sdk,
        }];
        config.mcp.list_timeout = Duration::from_secs(1);
        config.mcp.call_timeout = Duration::from_secs(1);
    }
    config.max_record_len = max_record_len;
    config.hook_configured = b.below(2) == 0;
    config.replay_user_messages = b.below(2) == 0;
    config.include_partial_messages = b.below(2) == 0;
    let now = Instant::now();
    let mut run = Run {
        s: Session::new(config, now).expect("valid config"),
        now,
        line: 0,
        model: None,
        tools: Vec::new(),
        hooks: Vec::new(),
        tool_seq: 0,
        mcp,
        check: Checker {
            max_record_len,
            ..Checker::default()
        },
        long_outputs: max_record_len < agentx_wire::encode::DEFAULT_MAX_RECORD_LEN,
    };
    if sdk_hooks {
        let on_failure = ["continue", "block"][b.below(2)];
        let matcher = |ids: &str| {
            format!(
                r#"[{{"matcher":null,"hookCallbackIds":[{ids}],"timeout":1,"onFailure":"{on_failure}"}}]"#
            )
        };
        // PreToolUse and PostToolUse always; UserPromptSubmit and Stop (which gate every
        // turn) only sometimes, so tool uses are reached often.
        let prompt = match b.below(3) {
            0 => format!(r#","UserPromptSubmit":{}"#, matcher(r#""h3""#)),
            _ => String::new(),
        };
        let stop = match b.below(2) {
            0 => format!(r#","Stop":{}"#, matcher(r#""h4""#)),
            _ => String::new(),
        };
        let line = format!(
            r#"{{"type":"control_request","request_id":"init","request":{{"subtype":"initialize","hooks":{{"PreToolUse":{},"PostToolUse":{}{prompt}{stop}}}}}}}"#,
            matcher(r#""h0","h1""#),
            matcher(r#""h2""#),
        );
        run.send(line.as_bytes(), &mut b);
    }
    let mut eof = false;
    let mut steps = 0;
    while let Some(op) = b.byte() {
        steps += 1;
        if steps > 400 || run.s.is_done().is_some() {
            break;
        }
        match op % 16 {
            2 if !eof && mcp && b.below(2) == 0 => {
                // PROFILE §16: a random answer to a pending (or stale) `mcp_message`.
                let pending = run.s.pending_mcp_messages();
                let id = match pending.get(b.below(pending.len() + 1)) {
                    Some(id) => id.clone(),
                    None => "stale".to_string(),
                };
                let rpc = run
                    .check
                    .mcp_requests
                    .get(&id)
                    .map_or("0".to_string(), |r| r.to_string());
                let answer = MCP_ANSWERS[b.below(MCP_ANSWERS.len())].replace("{id}", &rpc);
                let line = if answer == "ERROR" {
                    format!(
                        r#"{{"type":"control_response","response":{{"subtype":"error","request_id":"{id}","error":"raised"}}}}"#
                    )
                } else {
                    format!(
                        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{answer}}}}}"#
                    )
                };
                run.send(line.as_bytes(), &mut b);
            }
            0 | 1 if !eof => {
                let priority = ["", r#","priority":"now""#, r#","priority":"later""#][b.below(3)];
                let line = format!(
                    r#"{{"type":"user","message":"p{}","parent_tool_use_id":null{priority}}}"#,
                    run.line
                );
                run.send(line.as_bytes(), &mut b);
            }
            2 if !eof
                && sdk_hooks
                && match run.s.pending_hook_callbacks().is_empty() {
                    false => b.below(4) != 0,
                    true => b.below(8) == 0,
                } =>
            {
                // PROFILE §16: a random answer to a pending (or stale) hook callback.
                let pending = run.s.pending_hook_callbacks();
                let id = match pending.get(b.below(pending.len() + 1)) {
                    Some(id) => id.clone(),
                    None => "stale".to_string(),
                };
                let answer = HOOK_ANSWERS[b.below(HOOK_ANSWERS.len())];
                let decisive_allow = answer.contains("\"allow\"") || answer.contains("approve");
                if let Some((event, Some(tool))) = run.check.hook_requests.get(&id) {
                    if decisive_allow && event == "PreToolUse" && pending.contains(&id) {
                        run.check.allowed.insert(tool.clone());
                    }
                }
                let line = if answer == "ERROR" {
                    format!(
                        r#"{{"type":"control_response","response":{{"subtype":"error","request_id":"{id}","error":"raised"}}}}"#
                    )
                } else {
                    format!(
                        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{answer}}}}}"#
                    )
                };
                run.send(line.as_bytes(), &mut b);
            }
            2 if !eof => {
                let pending = run.s.pending_requests();
                let (id, allow) = match pending.get(b.below(pending.len() + 1)) {
                    Some(id) => (id.clone(), b.below(2) == 0),
                    None => ("stale".to_string(), true),
                };
                let response = match b.below(4) {
                    0 if allow => r#"{"behavior":"allow"}"#,
                    1 => r#"{"behavior":"deny","message":"no"}"#,
                    2 => r#"{"behavior":"maybe"}"#,
                    _ if allow => r#"{"behavior":"allow","updatedInput":{"command":"x"}}"#,
                    _ => r#"{"behavior":"deny","interrupt":true}"#,
                };
                if response.contains("\"allow\"") {
                    if let Some(t) = run.check.request_tool.get(&id) {
                        if run.s.pending_requests().contains(&id) {
                            run.check.allowed.insert(t.clone());
                        }
                    }
                }
                let line = format!(
                    r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{response}}}}}"#
                );
                run.send(line.as_bytes(), &mut b);
            }
            3 if !eof => {
                let id = format!("c{}", run.line);
                let sub = [
                    "interrupt",
                    "initialize",
                    "mcp_status",
                    "set_model",
                    "set_provider",
                    "get_context_usage",
                ][b.below(6)];
                let pending = run.pending_all();
                let line = format!(
                    r#"{{"type":"control_request","request_id":"{id}","request":{{"subtype":"{sub}"}}}}"#
                );
                let before = run.check.frames;
                let mut order = Vec::new();
                run.line += 1;
                run.s.handle_line(line.as_bytes(), run.line, run.now);
                while let Some(f) = run.s.poll_transmit() {
                    run.check.frame(&f);
                    order.push(f);
                }
                run.drain(&mut b);
                if sub == "interrupt" {
                    // WIRE-011: every pending request's cancel precedes the acknowledgement.
                    let ack = format!(r#""request_id":"{id}""#);
                    let ack_at = order
                        .iter()
                        .position(|f| f.windows(ack.len()).any(|w| w == ack.as_bytes()))
                        .expect("an interrupt acknowledgement");
                    for p in &pending {
                        let cancel =
                            format!(r#"{{"type":"control_cancel_request","request_id":"{p}"}}"#);
                        let at = order
                            .iter()
                            .position(|f| f.starts_with(cancel.as_bytes()))
                            .expect("a cancel per pending request");
                        assert!(at < ack_at, "cancellation after the acknowledgement");
                    }
                    let _ = before;
                }
            }
            4 | 5 => {
                if !run.hooks.is_empty() {
                    let id = run.hooks.remove(b.below(run.hooks.len()));
                    let outcome = match b.below(5) {
                        0 => HookOutcome::Allow {
                            updated_input: None,
                        },
                        1 => HookOutcome::Deny { message: None },
                        2 => HookOutcome::Pass,
                        3 => HookOutcome::Failed,
                        _ => HookOutcome::Allow {
                            updated_input: Some("not json".into()),
                        },
                    };
                    if matches!(
                        &outcome,
                        HookOutcome::Allow {
                            updated_input: None
                        }
                    ) && run.s.open_prompts().contains(&id)
                    {
                        run.check.allowed.insert(id.clone());
                    }
                    run.s.handle_hook_done(&id, outcome, run.now);
                    run.drain(&mut b);
                }
            }
            6..=10 => run.model_step(&mut b),
            11 | 12 => {
                if !run.tools.is_empty() {
                    let id = run.tools.remove(b.below(run.tools.len()));
                    run.s.handle_tool_done(&id, run.output(&id), run.now);
                    run.drain(&mut b);
                }
            }
            13 => {
                run.now += Duration::from_millis(b.below(2000) as u64);
                run.s.handle_timeout(run.now);
                run.drain(&mut b);
            }
            14 if !eof => {
                if b.below(4) == 0 {
                    run.s.handle_signal_interrupt(run.now);
                    run.drain(&mut b);
                } else {
                    // A raw line from the fuzzer's bytes.
                    let n = b.below(64);
                    let start = b.at.min(data.len());
                    let end = (start + n).min(data.len());
                    b.at = end;
                    let line: Vec<u8> = data[start..end]
                        .iter()
                        .copied()
                        .filter(|c| *c != b'\n')
                        .collect();
                    run.send(&line, &mut b);
                }
            }
            15 if !eof => {
                eof = true;
                run.s.handle_eof(run.now);
                run.drain(&mut b);
                assert!(run.pending_all().is_empty(), "pending after EOF");
                assert!(run.s.pending_mcp_messages().is_empty(), "pending after EOF");
            }
            _ => run.model_step(&mut b),
        }
    }
    // Let the session finish: finish every tool, hook and model step, then EOF.
    let mut rounds = 0;
    while run.s.is_done().is_none() && rounds < 10_000 {
        rounds += 1;
        if !eof {
            eof = true;
            run.s.handle_eof(run.now);
            run.drain(&mut b);
        }
        if let Some(id) = run.hooks.pop() {
            run.s.handle_hook_done(&id, HookOutcome::Failed, run.now);
            run.drain(&mut b);
        } else if let Some(id) = run.tools.pop() {
            run.s.handle_tool_done(&id, run.output(&id), run.now);
            run.drain(&mut b);
        } else if run.model.is_some() {
            let before = run.check.frames;
            let had = run
                .model
                .as_ref()
                .map(|m| (m.events.len(), m.tasks.len(), m.waiting));
            run.model_step(&mut b);
            if had
                == run
                    .model
                    .as_ref()
                    .map(|m| (m.events.len(), m.tasks.len(), m.waiting))
                && run.check.frames == before
            {
                // The model has nothing left to say.
                run.model = None;
            }
        } else {
            break;
        }
    }
    let _ = NetworkDecision::Allowed;
    assert!(
        run.s.is_done().is_some(),
        "the session did not end after EOF with all work finished"
    );
}
