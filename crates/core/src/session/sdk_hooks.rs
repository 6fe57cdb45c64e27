//! SDK hook callbacks (PROFILE §16, the SDK profile): the registered `hooks` map, and each
//! *run* of one event's callbacks through correlated `hook_callback` control requests on the
//! session's one [`Broker`] and output FIFO (the ones `can_use_tool` uses, WIRE-003/006).
//!
//! Owns: which callbacks an event calls (matchers in the map's order, each callback ID in
//! order, one at a time); HOOK_INPUT (`session_id`, `transcript_path`, `cwd`,
//! `hook_event_name`, `permission_mode` and the event's fields); the per-callback deadline
//! (the matcher's `timeout`, default 60 s) as a value the driver's timer reaches through
//! [`Session::poll_timeout`] / [`Session::handle_timeout`]; failures (an error answer, a
//! timeout, a malformed answer, the stream closed) following the matcher's `onFailure`
//! (`continue`: no decision; `block`: per event); combining the answers of one run
//! ([`Combined`]); cancelling every pending callback with `control_cancel_request` before an
//! interrupt's acknowledgement (WIRE-011, called by `prompts`); a late answer to a cancelled
//! callback is known-late in the broker and changes nothing (WIRE-007).
//!
//! Must never: read a clock (deadlines are `now` + timeout, `now` given by the driver), decide
//! what a combined answer does to the turn (`turn::hooks` does), or turn a failure into an
//! allow.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::model::TurnId;
use agentx_wire::control::{EmissionFailure, Outcome, Payload, Resolved, Started};
use agentx_wire::json::write_str;
use agentx_wire::wire::sdk_hooks::{matches_tool, HookEvent, HookMap, OnFailure};
use agentx_wire::wire::subtypes::HookCallback;
use agentx_wire::wire::{ControlRequestBody, RawJson, Text};

use super::hook_answer::{self, Answer, Permission, TopDecision};
use super::prompts::SessionEmitter;
use super::Session;

/// PROFILE §16 `onFailure: block`: the denial / block reason of a failed callback.
pub const HOOK_CALLBACK_FAILED: &str = "hook failed";

/// What a run is for (and in which turn), so its result lands where it was asked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `PreToolUse` of this tool use.
    Pre(String),
    /// `PostToolUse` of this tool use.
    Post(String),
    /// `UserPromptSubmit` of the turn.
    Prompt,
    /// `Stop` of the turn.
    Stop,
    /// `PreCompact` of the turn's compaction (PROFILE §19).
    Compact,
}

/// One callback to call.
#[derive(Clone, Debug)]
struct Callback {
    id: String,
    timeout: Duration,
    on_failure: OnFailure,
}

/// The callback of a run whose request is pending.
#[derive(Debug)]
struct Pending {
    request_id: Box<str>,
    deadline: Option<Instant>,
    callback: Callback,
}

/// One event's callbacks for one target, called in order.
#[derive(Debug)]
struct Run {
    turn: TurnId,
    target: Target,
    event: HookEvent,
    input: RawJson<'static>,
    tool_use_id: Option<String>,
    queue: VecDeque<Callback>,
    pending: Option<Pending>,
    combined: Combined,
}

/// The PreToolUse permission outcome of a run (deny is [`Combined::block`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PrePermission {
    /// `allow` (or the deprecated `decision: approve`): skip the ask.
    Allow,
    /// `ask`: force the ask.
    Ask,
}

/// What a run's answers add up to (PROFILE §16). The first block or denial ends the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Combined {
    /// A denial (PreToolUse) or block (the other events), with its reason.
    pub(crate) block: Option<String>,
    /// PreToolUse: `ask` wins over `allow`.
    pub(crate) permission: Option<PrePermission>,
    /// PreToolUse: the first `updatedInput` (compact JSON of an object).
    pub(crate) updated_input: Option<String>,
    /// `additionalContext`s in callback order, each word for word.
    pub(crate) contexts: Vec<String>,
    /// `continue: false`: end the turn before its next model request with this result text.
    pub(crate) halt: Option<String>,
}

/// The registered hooks and the runs in progress.
#[derive(Debug, Default)]
pub(crate) struct SdkHooks {
    map: HookMap,
    runs: Vec<Run>,
}

impl SdkHooks {
    /// Registers an initialize `hooks` map (PROFILE §16).
    pub(crate) fn register(&mut self, map: HookMap) {
        self.map = map;
    }

    /// True when `event` has a callback for `tool` (`None`: an event without a tool).
    pub(crate) fn wants(&self, event: HookEvent, tool: Option<&str>) -> bool {
        !self.callbacks(event, tool).is_empty()
    }

    fn callbacks(&self, event: HookEvent, tool: Option<&str>) -> VecDeque<Callback> {
        let mut out = VecDeque::new();
        for m in self.map.matchers(event) {
            // The matcher names a tool for tool events only; other events call every matcher.
            if let Some(tool) = tool.filter(|_| event.is_matched()) {
                if !matches_tool(m.pattern.as_deref(), tool) {
                    continue;
                }
            }
            for id in &m.callback_ids {
                out.push_back(Callback {
                    id: id.clone(),
                    timeout: Duration::from_secs_f64(m.timeout_s),
                    on_failure: m.on_failure,
                });
            }
        }
        out
    }

    /// The earliest callback deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.runs
            .iter()
            .filter_map(|r| r.pending.as_ref()?.deadline)
            .min()
    }

    /// Pending `hook_callback` request IDs, oldest run first.
    pub(crate) fn pending_requests(&self) -> Vec<Box<str>> {
        self.runs
            .iter()
            .filter_map(|r| r.pending.as_ref().map(|p| p.request_id.clone()))
            .collect()
    }

    /// True while `target` of `turn` waits for a callback.
    pub(crate) fn is_running(&self, turn: TurnId, target: &Target) -> bool {
        self.runs
            .iter()
            .any(|r| r.turn == turn && r.target == *target)
    }
}

/// Why a callback failed (the WARN line says this, never the host's own text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Failure {
    Error,
    Timeout,
    Malformed(hook_answer::Malformed),
    StreamClosed,
    Emission,
}

impl Failure {
    fn as_str(self) -> &'static str {
        match self {
            Failure::Error => "the callback answered an error",
            Failure::Timeout => "timed out",
            Failure::Malformed(m) => m,
            Failure::StreamClosed => "control stream closed",
            Failure::Emission => "the request could not be written",
        }
    }
}

/// The HOOK_INPUT fields every event carries (PROFILE §16), then `extra` (members of the
/// event, already `,"name":value` encoded).
fn hook_input(s: &Session, event: HookEvent, extra: &[u8]) -> RawJson<'static> {
    let c = &s.config;
    let mut b = Vec::with_capacity(256 + extra.len());
    b.extend_from_slice(b"{\"session_id\":");
    write_str(&mut b, s.stamp.session_id.as_str());
    b.extend_from_slice(b",\"transcript_path\":");
    write_str(&mut b, &c.transcript_path);
    b.extend_from_slice(b",\"cwd\":");
    write_str(&mut b, &c.cwd);
    b.extend_from_slice(b",\"hook_event_name\":");
    write_str(&mut b, event.as_str());
    b.extend_from_slice(b",\"permission_mode\":");
    write_str(&mut b, c.permission_mode.as_str());
    b.extend_from_slice(extra);
    b.push(b'}');
    RawJson::parse_owned(b).unwrap_or_else(|_| RawJson::empty_object())
}

/// `,"name":"text"`.
pub(crate) fn member_str(out: &mut Vec<u8>, name: &str, text: &str) {
    out.push(b',');
    write_str(out, name);
    out.push(b':');
    write_str(out, text);
}

/// A bound on what a `hook_callback` request adds around its hook input besides the callback
/// ID and the tool-use ID: `{"type":"control_request","request_id":…,"request":{"subtype":
/// "hook_callback","callback_id":…,"input":…,"tool_use_id":…}}` and a broker's request ID.
const CALLBACK_ENVELOPE: usize = 256;

/// The `tool_response` of a PostToolUse callback for tool `name`: `content`, or, when the
/// callback request would not fit one output line with it, its head cut with the
/// `tool_result`'s visible marker (PROFILE §15) so that it does. `fields` are the hook
/// input's tool members (`tool_name`, `tool_input`, `tool_use_id`) of use `tool_use_id`.
pub(crate) fn post_tool_response(
    s: &Session,
    name: &str,
    tool_use_id: &str,
    fields: &[u8],
    content: &str,
) -> String {
    let limit = s.config.max_record_len;
    // The longest callback ID and the request's own `tool_use_id`, escaped at worst.
    let longest_id = s
        .sdk_hooks
        .callbacks(HookEvent::PostToolUse, Some(name))
        .iter()
        .map(|c| c.id.len())
        .max()
        .unwrap_or(0);
    let ids = (longest_id + tool_use_id.len()) * 6;
    let fixed = hook_input(s, HookEvent::PostToolUse, fields)
        .as_bytes()
        .len()
        + ids
        + CALLBACK_ENVELOPE
        + ",\"tool_response\":".len();
    let escaped = |t: &str| {
        let mut b = Vec::with_capacity(t.len() + 2);
        write_str(&mut b, t);
        b.len()
    };
    super::fit::cut_to_fit(content, |t| (fixed + escaped(t)).saturating_sub(limit))
}

/// `,"name":JSON` for validated compact JSON.
pub(crate) fn member_raw(out: &mut Vec<u8>, name: &str, json: &str) {
    out.push(b',');
    write_str(out, name);
    out.push(b':');
    out.extend_from_slice(json.as_bytes());
}

impl Session {
    /// Starts `event`'s callbacks for `target` of the active turn. `Some` when the run ended
    /// at once (no callback matched, or each failed before it could be sent); `None` while a
    /// callback is pending: its end reaches [`Session::hook_run_done`] later.
    pub(crate) fn start_hook_run(
        &mut self,
        turn: TurnId,
        target: Target,
        event: HookEvent,
        tool: Option<&str>,
        extra: &[u8],
        now: Instant,
    ) -> Option<Combined> {
        let queue = self.sdk_hooks.callbacks(event, tool);
        if queue.is_empty() {
            return Some(Combined::default());
        }
        let tool_use_id = match &target {
            Target::Pre(id) | Target::Post(id) => Some(id.clone()),
            Target::Prompt | Target::Stop | Target::Compact => None,
        };
        let run = Run {
            turn,
            target,
            event,
            input: hook_input(self, event, extra),
            tool_use_id,
            queue,
            pending: None,
            combined: Combined::default(),
        };
        self.pump(run, now)
    }

    /// Sends the run's next callback; `None` when one is pending (the run is kept).
    fn pump(&mut self, mut run: Run, now: Instant) -> Option<Combined> {
        while run.combined.block.is_none() {
            let Some(cb) = run.queue.pop_front() else {
                break;
            };
            let body = ControlRequestBody::HookCallback(HookCallback {
                callback_id: Text::Owned(cb.id.clone()),
                input: run.input.clone(),
                tool_use_id: run.tool_use_id.clone().map(Text::Owned),
            });
            let started = self.with_race(|_, broker, emit| broker.request(body, now, emit));
            match started {
                Ok(Started::Pending { id }) => {
                    run.pending = Some(Pending {
                        request_id: id,
                        deadline: now.checked_add(cb.timeout),
                        callback: cb,
                    });
                    self.sdk_hooks.runs.push(run);
                    return None;
                }
                // Answered during its own emission (a loopback host).
                Ok(Started::Resolved(r)) => self.absorb(&mut run, &cb, &r.outcome),
                Err(agentx_wire::control::RequestError::StreamClosed) => {
                    self.fail(&mut run, &cb, Failure::StreamClosed)
                }
                Err(_) => self.fail(&mut run, &cb, Failure::Emission),
            }
        }
        Some(run.combined)
    }

    /// A broker resolution: `true` when it was a pending hook callback's (then handled).
    pub(crate) fn hook_resolved(&mut self, r: &Resolved, now: Instant) -> bool {
        let Some(i) = self
            .sdk_hooks
            .runs
            .iter()
            .position(|run| run.pending.as_ref().is_some_and(|p| p.request_id == r.id))
        else {
            return false;
        };
        let mut run = self.sdk_hooks.runs.remove(i);
        if let Some(p) = run.pending.take() {
            self.absorb(&mut run, &p.callback, &r.outcome);
        }
        self.continue_run(run, now);
        true
    }

    /// The pending hook callback `id` was answered by a line the strict reader rejected: a
    /// malformed answer (PROFILE §16). `true` when `id` was one.
    pub(crate) fn hook_rejected(
        &mut self,
        id: &str,
        error: &agentx_wire::wire::Error,
        now: Instant,
    ) -> bool {
        if !self.sdk_hooks.pending_requests().iter().any(|p| &**p == id) {
            return false;
        }
        match self.prompts.broker.handle_rejected_response(id, error) {
            Some(r) => self.hook_resolved(&r, now),
            None => false,
        }
    }

    /// Timer (PROFILE §16: the matcher's `timeout`): every callback whose deadline passed is
    /// cancelled with `control_cancel_request` (WIRE-007: its late answer is ignored) and
    /// fails.
    pub(crate) fn hooks_timeout(&mut self, now: Instant) {
        loop {
            let Some(i) = self.sdk_hooks.runs.iter().position(|r| {
                r.pending
                    .as_ref()
                    .and_then(|p| p.deadline)
                    .is_some_and(|d| d <= now)
            }) else {
                return;
            };
            let mut run = self.sdk_hooks.runs.remove(i);
            let Some(p) = run.pending.take() else {
                continue;
            };
            let failure = self.abort_requests(&[&p.request_id], now);
            self.fail(&mut run, &p.callback, Failure::Timeout);
            self.continue_run(run, now);
            if let Some(f) = failure {
                self.emission_failed(f, now);
            }
        }
    }

    /// Interrupt or a cut turn (WIRE-011): one `control_cancel_request` per pending callback,
    /// oldest first, before the caller's acknowledgement; every run is dropped (the
    /// hard-interrupt order writes the `interrupted` tool results).
    ///
    /// The pending `tools/call` requests of SDK MCP tools are cancelled with them, all in the
    /// order they were sent (`mcp_calls`).
    pub(crate) fn hooks_cancel_all(&mut self, now: Instant) -> Option<EmissionFailure> {
        let mut ids = self.sdk_hooks.pending_requests();
        self.sdk_hooks.runs.clear();
        ids.extend(self.mcp_take_calls());
        // PROFILE §18: an interrupt resolves a pending elicitation as `cancel`.
        ids.extend(self.mcp_take_elicitations());
        // An interrupt stops an SDK server's listing too.
        ids.extend(self.mcp_take_listings());
        if ids.is_empty() {
            return None;
        }
        let order = self.prompts.broker.pending_ids();
        ids.sort_by_key(|id| order.iter().position(|o| o == id));
        let refs: Vec<&str> = ids.iter().map(|s| &**s).collect();
        let failure = self.abort_requests(&refs, now);
        // PROFILE §18: the SDK servers of the cancelled calls get `notifications/cancelled`.
        self.mcp_send_cancel_notices(now);
        failure
    }

    /// A fatal stop: the broker was shut down; the runs are dropped silently.
    pub(crate) fn hooks_shutdown(&mut self) {
        self.sdk_hooks.runs.clear();
    }

    /// Input EOF (WIRE-008): the broker rejected every pending request; those of callbacks
    /// fail (`control stream closed`) and their runs go on (a later callback cannot be sent
    /// either, so it fails the same way).
    pub(crate) fn hooks_eof(&mut self, resolved: Vec<Resolved>, now: Instant) {
        for r in resolved {
            // PROFILE §16: MCP listing requests and calls end the same way.
            if !self.hook_resolved(&r, now) {
                self.mcp_resolved(&r, now);
            }
        }
    }

    fn abort_requests(&mut self, ids: &[&str], now: Instant) -> Option<EmissionFailure> {
        let Session {
            prompts,
            out,
            stamp,
            state,
            ..
        } = self;
        let mut emit = SessionEmitter { out, stamp, state };
        prompts.broker.abort_many(ids, now, &mut emit, None).failure
    }

    fn emission_failed(&mut self, f: EmissionFailure, now: Instant) {
        if !self.out.failed() {
            self.fatal(format!("agentx: output failed: {}", f.message()), now);
        }
    }

    /// After a callback ended: the next one, or the run's end.
    fn continue_run(&mut self, run: Run, now: Instant) {
        let (turn, target) = (run.turn, run.target.clone());
        if let Some(combined) = self.pump(run, now) {
            self.hook_run_done(turn, target, combined, now);
        }
    }

    /// One callback's outcome folded into its run.
    fn absorb(&mut self, run: &mut Run, cb: &Callback, outcome: &Outcome) {
        let answer = match outcome {
            Outcome::Success(Payload::Json(raw)) => hook_answer::parse(Some(raw.as_bytes())),
            Outcome::Success(_) => hook_answer::parse(None),
            Outcome::Error { .. } => return self.fail(run, cb, Failure::Error),
            Outcome::Invalid(_) => {
                return self.fail(run, cb, Failure::Malformed("an invalid control_response"))
            }
            Outcome::Aborted | Outcome::StreamClosed | Outcome::Shutdown => {
                return self.fail(run, cb, Failure::StreamClosed)
            }
        };
        match answer {
            Ok(a) => fold(run.event, &mut run.combined, a),
            Err(m) => self.fail(run, cb, Failure::Malformed(m)),
        }
    }

    /// PROFILE §16: a failure follows the matcher's `onFailure`. `continue` is no decision;
    /// `block` blocks what the event guards (Stop: ignored, as both SDKs document).
    fn fail(&mut self, run: &mut Run, cb: &Callback, why: Failure) {
        let policy = match cb.on_failure {
            OnFailure::Continue => "continue",
            OnFailure::Block => "block",
        };
        self.out.diagnostic(format!(
            "agentx: WARN {} hook callback {} failed: {}; onFailure {policy}",
            run.event.as_str(),
            super::policy::cut(&cb.id, 64),
            why.as_str()
        ));
        // Stop ignores `block` (both SDKs); PreCompact's failure is no decision (PROFILE §19).
        if cb.on_failure == OnFailure::Block
            && !matches!(run.event, HookEvent::Stop | HookEvent::PreCompact)
        {
            run.combined.block = Some(HOOK_CALLBACK_FAILED.to_string());
        }
    }
}

/// One answer into the run's total (PROFILE §16).
fn fold(event: HookEvent, c: &mut Combined, a: Answer) {
    if let Some(text) = a.context {
        c.contexts.push(text);
    }
    if c.halt.is_none() {
        c.halt = a.halt;
    }
    match event {
        HookEvent::PreToolUse => {
            let deny_reason = || {
                a.permission_reason
                    .clone()
                    .or_else(|| a.reason.clone())
                    .unwrap_or_else(|| "denied by PreToolUse hook".to_string())
            };
            if a.permission == Some(Permission::Deny) || a.decision == Some(TopDecision::Block) {
                c.block = Some(deny_reason());
                return;
            }
            let p = match (a.permission, a.decision) {
                (Some(Permission::Ask), _) => Some(PrePermission::Ask),
                (Some(Permission::Allow), _) | (None, Some(TopDecision::Approve)) => {
                    Some(PrePermission::Allow)
                }
                _ => None,
            };
            if p.is_some() && c.updated_input.is_none() {
                c.updated_input = a.updated_input;
            }
            // `ask` wins over `allow`.
            if c.permission != Some(PrePermission::Ask) && p.is_some() {
                c.permission = p;
            }
        }
        // PROFILE §19: PreCompact has no decision of its own; `continue: false` ends the turn.
        HookEvent::PreCompact => {}
        HookEvent::PostToolUse | HookEvent::UserPromptSubmit | HookEvent::Stop => {
            if a.decision == Some(TopDecision::Block) {
                c.block = Some(a.reason.unwrap_or_default());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(s: &str) -> Answer {
        hook_answer::parse(Some(s.as_bytes())).unwrap()
    }

    #[test]
    fn pre_tool_use_answers_combine_deny_over_ask_over_allow() {
        let mut c = Combined::default();
        fold(
            HookEvent::PreToolUse,
            &mut c,
            answer(
                r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"x":1}}}"#,
            ),
        );
        assert_eq!(c.permission, Some(PrePermission::Allow));
        assert_eq!(c.updated_input.as_deref(), Some(r#"{"x":1}"#));
        fold(
            HookEvent::PreToolUse,
            &mut c,
            answer(
                r#"{"hookSpecificOutput":{"permissionDecision":"ask","additionalContext":"a"}}"#,
            ),
        );
        assert_eq!(c.permission, Some(PrePermission::Ask));
        fold(
            HookEvent::PreToolUse,
            &mut c,
            answer(r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#),
        );
        assert_eq!(c.permission, Some(PrePermission::Ask), "ask stays");
        assert_eq!(c.block, None);
        fold(
            HookEvent::PreToolUse,
            &mut c,
            answer(r#"{"decision":"block","reason":"no"}"#),
        );
        assert_eq!(c.block.as_deref(), Some("no"));
        assert_eq!(c.contexts, ["a"]);
        // defer, async and the deprecated approve.
        let mut d = Combined::default();
        fold(
            HookEvent::PreToolUse,
            &mut d,
            answer(r#"{"hookSpecificOutput":{"permissionDecision":"defer"}}"#),
        );
        fold(HookEvent::PreToolUse, &mut d, answer(r#"{"async":true}"#));
        assert_eq!(d, Combined::default());
        fold(
            HookEvent::PreToolUse,
            &mut d,
            answer(r#"{"decision":"approve"}"#),
        );
        assert_eq!(d.permission, Some(PrePermission::Allow));
        let mut e = Combined::default();
        fold(
            HookEvent::PreToolUse,
            &mut e,
            answer(r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#),
        );
        assert_eq!(e.block.as_deref(), Some("denied by PreToolUse hook"));
    }

    #[test]
    fn other_events_block_with_their_reason_and_halt_keeps_the_first() {
        for event in [
            HookEvent::PostToolUse,
            HookEvent::UserPromptSubmit,
            HookEvent::Stop,
        ] {
            let mut c = Combined::default();
            fold(
                event,
                &mut c,
                answer(r#"{"continue":false,"stopReason":"one"}"#),
            );
            fold(
                event,
                &mut c,
                answer(r#"{"continue":false,"stopReason":"two"}"#),
            );
            assert_eq!(c.halt.as_deref(), Some("one"));
            // A permission decision means nothing outside PreToolUse.
            fold(
                event,
                &mut c,
                answer(r#"{"hookSpecificOutput":{"permissionDecision":"deny"}}"#),
            );
            assert_eq!(c.block, None);
            fold(
                event,
                &mut c,
                answer(r#"{"decision":"block","reason":"r"}"#),
            );
            assert_eq!(c.block.as_deref(), Some("r"));
        }
    }
}
