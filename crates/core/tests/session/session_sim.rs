//! The session simulator (quinn's `Pair::step` style): a scripted host (the test), a scripted
//! model answering each `StartModel` with the next script, tools that finish at once unless
//! held, hooks answered by the test, and a virtual clock. Every frame is decoded back with
//! `wire::OutputRecord` (it must be a valid output record) and kept as JSON for assertions.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use agentx_core::model::{ModelEvent, ModelRequest, NetworkDecision, StopReason, TurnId, Usage};
use agentx_core::session::{Action, HookOutcome, Session, SessionConfig, ToolOutcome};
use agentx_wire::json::Parser;
use agentx_wire::wire::OutputRecord;
use serde_json::Value;

pub const SID: &str = "0b6f1c1e-6c59-4c1e-9a55-3f1e7948c27b";
pub const CWD: &str = "/work/project";

/// One step of a model script.
#[derive(Clone, Debug)]
pub enum Step {
    Event(ModelEvent),
    /// Stop feeding until the test calls [`Sim::resume_model`].
    Pause,
    /// Advance the virtual clock.
    Sleep(u64),
}

/// A scripted model call.
pub type Script = Vec<Step>;

pub struct Sim {
    pub s: Session,
    pub now: Instant,
    line_no: u64,
    /// Every frame written, decoded as JSON, in order.
    pub out: Vec<Value>,
    /// The byte length of each frame of `out`, its LF excluded.
    pub lens: Vec<usize>,
    /// Every action polled, in order.
    pub actions: Vec<Action>,
    /// For each action of `actions`, how many frames had been transmitted when it was
    /// polled (PROFILE §11: a persist is taken before its turn's result is transmitted).
    pub action_frames: Vec<usize>,
    pub diagnostics: Vec<String>,
    /// Scripts for the next model calls, in order.
    pub scripts: VecDeque<Script>,
    /// Scripts for the next summarization requests (PROFILE §19), in order.
    pub summaries: VecDeque<Script>,
    /// The requests the model received.
    pub requests: Vec<ModelRequest>,
    /// The rest of the current call's script (after a pause) and its turn.
    current: Option<(TurnId, VecDeque<Step>)>,
    /// Tools are completed at once with `ran <name>` unless this is set.
    pub hold_tools: bool,
    /// Tools queued and not finished: (id, name, input).
    pub running_tools: Vec<(String, String, String)>,
    /// Hooks started and not answered.
    pub hooks: Vec<String>,
    /// Network decisions the model received.
    pub network: Vec<NetworkDecision>,
    parser: Parser,
}

impl Sim {
    /// Every transcript line handed to the store so far (`Action::Persist`), as text with its
    /// LF.
    pub fn persisted(&self) -> Vec<String> {
        self.actions
            .iter()
            .filter_map(|a| match a {
                Action::Persist { lines, .. } => Some(lines),
                _ => None,
            })
            .flatten()
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
            .collect()
    }

    pub fn new(config: SessionConfig) -> Sim {
        let now = Instant::now();
        Sim {
            s: Session::new(config, now).expect("valid config"),
            now,
            line_no: 0,
            out: Vec::new(),
            lens: Vec::new(),
            actions: Vec::new(),
            action_frames: Vec::new(),
            diagnostics: Vec::new(),
            scripts: VecDeque::new(),
            summaries: VecDeque::new(),
            requests: Vec::new(),
            current: None,
            hold_tools: false,
            running_tools: Vec::new(),
            hooks: Vec::new(),
            network: Vec::new(),
            parser: Parser::new(),
        }
    }

    pub fn local() -> Sim {
        Sim::new(config())
    }

    /// Adds a model script for a later call.
    pub fn script(&mut self, s: Script) -> &mut Self {
        self.scripts.push_back(s);
        self
    }

    /// Sends one input line and steps until quiet.
    pub fn send(&mut self, line: &str) {
        self.line_no += 1;
        self.s.handle_line(line.as_bytes(), self.line_no, self.now);
        self.step();
    }

    pub fn eof(&mut self) {
        self.s.handle_eof(self.now);
        self.step();
    }

    pub fn advance(&mut self, ms: u64) {
        self.now += Duration::from_millis(ms);
    }

    pub fn hook(&mut self, tool_use_id: &str, outcome: HookOutcome) {
        self.hooks.retain(|h| h != tool_use_id);
        self.s.handle_hook_done(tool_use_id, outcome, self.now);
        self.step();
    }

    pub fn finish_tool(&mut self, tool_use_id: &str, outcome: ToolOutcome) {
        self.running_tools.retain(|(id, _, _)| id != tool_use_id);
        self.s.handle_tool_done(tool_use_id, outcome, self.now);
        self.step();
    }

    pub fn interrupt_signal(&mut self) {
        self.s.handle_signal_interrupt(self.now);
        self.step();
    }

    /// Feeds the rest of a paused script.
    pub fn resume_model(&mut self) {
        self.feed();
        self.step();
    }

    /// Drains frames, diagnostics and actions until nothing moves.
    pub fn step(&mut self) {
        loop {
            let mut moved = false;
            while let Some(f) = self.s.poll_transmit() {
                moved = true;
                assert_eq!(f.last(), Some(&b'\n'), "a frame ends with LF");
                let body = &f[..f.len() - 1];
                assert!(!body.contains(&b'\n'), "one physical line");
                let rec = OutputRecord::decode_line(body, &mut self.parser).unwrap_or_else(|e| {
                    panic!(
                        "invalid output record {e}: {}",
                        String::from_utf8_lossy(body)
                    )
                });
                assert!(rec.warning().is_none(), "known record type");
                self.out.push(serde_json::from_slice(body).unwrap());
                self.lens.push(body.len());
            }
            while let Some(d) = self.s.poll_diagnostic() {
                moved = true;
                self.diagnostics.push(d);
            }
            while let Some(a) = self.s.poll_action() {
                moved = true;
                self.actions.push(a.clone());
                self.action_frames.push(self.out.len());
                self.act(a);
            }
            if !moved {
                break;
            }
        }
    }

    fn act(&mut self, a: Action) {
        match a {
            Action::StartModel(req) => {
                // PROFILE §19: a summarization request takes the next summary script (else
                // `summary of N messages`), never a turn's script.
                let script = if is_summary_request(&req) {
                    self.summaries
                        .pop_front()
                        .unwrap_or_else(|| summary_script(&req))
                } else {
                    self.scripts
                        .pop_front()
                        .unwrap_or_else(|| echo_script(&req))
                };
                self.current = Some((req.turn, script.into()));
                self.requests.push(req);
                self.feed();
            }
            Action::CancelModel { turn }
                if self.current.as_ref().is_some_and(|(t, _)| *t == turn) =>
            {
                self.current = None;
            }
            Action::ResumeModel { decision, .. } => {
                self.network.push(decision);
                self.feed();
            }
            Action::RunTool {
                tool_use_id,
                name,
                input_json,
            } => {
                if self.hold_tools {
                    self.running_tools.push((tool_use_id, name, input_json));
                } else {
                    let content = format!("ran {name}");
                    self.s
                        .handle_tool_done(&tool_use_id, ToolOutcome::ok(content), self.now);
                }
            }
            Action::CancelTool { tool_use_id } => {
                self.running_tools.retain(|(id, _, _)| *id != tool_use_id);
            }
            Action::StartHook { tool_use_id, .. } => self.hooks.push(tool_use_id),
            Action::KillHook { tool_use_id } => self.hooks.retain(|h| *h != tool_use_id),
            _ => {}
        }
    }

    /// Feeds the current script until a pause, a network request or its end.
    fn feed(&mut self) {
        while let Some((turn, steps)) = self.current.as_mut() {
            let turn = *turn;
            let Some(step) = steps.pop_front() else {
                self.current = None;
                break;
            };
            match step {
                Step::Pause => break,
                Step::Sleep(ms) => self.advance(ms),
                Step::Event(ev) => {
                    let wait = matches!(ev, ModelEvent::NetworkAccess { .. });
                    self.s.handle_model(turn, ev, self.now);
                    if wait {
                        break;
                    }
                }
            }
        }
    }

    /// The frames of `type` (and `subtype`, for system records) as JSON.
    pub fn of(&self, ty: &str) -> Vec<&Value> {
        self.out.iter().filter(|v| v["type"] == ty).collect()
    }

    /// A compact label per frame: `type[/subtype|state]`, for order assertions.
    pub fn labels(&self) -> Vec<String> {
        self.out.iter().map(label).collect()
    }

    /// Labels from frame `from` on.
    pub fn labels_from(&self, from: usize) -> Vec<String> {
        self.out[from..].iter().map(label).collect()
    }

    /// The last frame of `type`.
    pub fn last_of(&self, ty: &str) -> &Value {
        self.out
            .iter()
            .rev()
            .find(|v| v["type"] == ty)
            .expect("a frame of that type")
    }

    /// Tool-use IDs the session asked to run, in order.
    pub fn run_tools(&self) -> Vec<String> {
        self.actions
            .iter()
            .filter_map(|a| match a {
                Action::RunTool { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            })
            .collect()
    }

    pub fn last(&self) -> &Value {
        self.out.last().expect("a frame")
    }

    /// The can_use_tool request IDs written, in order.
    pub fn permission_requests(&self) -> Vec<(String, String)> {
        self.out
            .iter()
            .filter(|v| v["type"] == "control_request")
            .map(|v| {
                (
                    v["request_id"].as_str().unwrap().to_string(),
                    v["request"]["tool_use_id"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }
}

pub fn label(v: &Value) -> String {
    let ty = v["type"].as_str().unwrap_or("?");
    match ty {
        "system" => match v["subtype"].as_str().unwrap_or("?") {
            "session_state_changed" => format!("state:{}", v["state"].as_str().unwrap()),
            "status" => format!("status:{}", v["status"].as_str().unwrap_or("null")),
            st => st.to_string(),
        },
        "control_response" => format!(
            "control_response:{}:{}",
            v["response"]["subtype"].as_str().unwrap(),
            v["response"]["request_id"].as_str().unwrap()
        ),
        "control_request" => format!(
            "control_request:{}:{}",
            v["request"]["subtype"].as_str().unwrap(),
            v["request_id"].as_str().unwrap()
        ),
        "control_cancel_request" => {
            format!(
                "control_cancel_request:{}",
                v["request_id"].as_str().unwrap()
            )
        }
        "assistant" => {
            let b = &v["message"]["content"][0];
            match b["type"].as_str().unwrap() {
                "text" => format!("assistant:text:{}", b["text"].as_str().unwrap()),
                _ => format!("assistant:tool_use:{}", b["id"].as_str().unwrap()),
            }
        }
        "user" => {
            if v["isReplay"] == true {
                "user:replay".to_string()
            } else {
                let b = &v["message"]["content"][0];
                format!(
                    "tool_result:{}:{}",
                    b["tool_use_id"].as_str().unwrap_or("?"),
                    b["content"].as_str().unwrap_or("?")
                )
            }
        }
        "result" => format!("result:{}", v["subtype"].as_str().unwrap()),
        t => t.to_string(),
    }
}

pub fn config() -> SessionConfig {
    SessionConfig::local(SID, CWD)
}

/// What the built-in model answers without directives: `echo: <text>`.
pub fn echo_script(req: &ModelRequest) -> Script {
    let text = match req.messages.last() {
        Some(agentx_core::model::Message::User { text, .. }) => format!("echo: {text}"),
        _ => "done".to_string(),
    };
    text_reply(&format!("msg_{}_{}", req.turn, req.index), &text, None)
}

/// PROFILE §19: the request is a compaction's summarization request.
pub fn is_summary_request(req: &ModelRequest) -> bool {
    matches!(req.messages.last(), Some(agentx_core::model::Message::User { text, .. })
        if text.starts_with(agentx_core::model::SUMMARY_REQUEST))
}

/// The default summary: `summary of N messages`, usage 1/1.
pub fn summary_script(req: &ModelRequest) -> Script {
    let text = format!("summary of {} messages", req.messages.len() - 1);
    text_reply_usage(
        &format!("msg_sum_{}_{}", req.turn, req.index),
        &text,
        usage(1, 1),
        None,
    )
}

/// A message with one text block and the given usage.
pub fn text_reply_usage(message_id: &str, text: &str, u: Usage, cost: Option<f64>) -> Script {
    let mut s = text_reply(message_id, text, cost);
    if let Some(Step::Event(ModelEvent::MessageStop { usage, .. })) = s.last_mut() {
        *usage = u;
    }
    s
}

pub fn ev(e: ModelEvent) -> Step {
    Step::Event(e)
}

/// A message with one text block.
pub fn text_reply(message_id: &str, text: &str, cost: Option<f64>) -> Script {
    vec![
        ev(ModelEvent::MessageStart {
            message_id: message_id.into(),
        }),
        ev(ModelEvent::TextStart { index: 0 }),
        ev(ModelEvent::TextDelta {
            index: 0,
            text: text.into(),
        }),
        ev(ModelEvent::BlockStop { index: 0 }),
        ev(ModelEvent::MessageStop {
            stop_reason: StopReason::EndTurn,
            usage: usage(3, 4),
            cost,
        }),
    ]
}

/// A message with tool-use blocks `(id, name, input)`, in order.
pub fn tool_reply(message_id: &str, tools: &[(&str, &str, &str)]) -> Script {
    let mut s = vec![ev(ModelEvent::MessageStart {
        message_id: message_id.into(),
    })];
    for (i, (id, name, input)) in tools.iter().enumerate() {
        let index = i as u32;
        s.push(ev(ModelEvent::ToolUseStart {
            index,
            id: (*id).into(),
            name: (*name).into(),
        }));
        s.push(ev(ModelEvent::InputJsonDelta {
            index,
            partial_json: (*input).into(),
        }));
        s.push(ev(ModelEvent::BlockStop { index }));
    }
    s.push(ev(ModelEvent::MessageStop {
        stop_reason: StopReason::ToolUse,
        usage: usage(1, 1),
        cost: None,
    }));
    s
}

pub fn usage(i: u64, o: u64) -> Usage {
    Usage {
        input_tokens: i,
        output_tokens: o,
        ..Usage::default()
    }
}

pub fn user(text: &str) -> String {
    serde_json::json!({"type":"user","message":text,"parent_tool_use_id":null}).to_string()
}

pub fn user_with(text: &str, extra: Value) -> String {
    let mut v = serde_json::json!({"type":"user","message":text,"parent_tool_use_id":null});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v.to_string()
}

pub fn control(id: &str, request: Value) -> String {
    serde_json::json!({"type":"control_request","request_id":id,"request":request}).to_string()
}

pub fn allow(request_id: &str) -> String {
    serde_json::json!({"type":"control_response","response":{"subtype":"success","request_id":request_id,"response":{"behavior":"allow"}}}).to_string()
}

pub fn deny(request_id: &str, message: &str) -> String {
    serde_json::json!({"type":"control_response","response":{"subtype":"success","request_id":request_id,"response":{"behavior":"deny","message":message}}}).to_string()
}
