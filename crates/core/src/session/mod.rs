//! The agent side of the protocol as a deterministic state machine (sans-IO, like
//! quinn-proto): input records, model events, tool and hook outcomes and timer firings go in
//! with `now`; validated frames, stderr diagnostics and [`Action`]s for the driver come out.
//!
//! Owns PROFILE §8 (the `agentx` session): input dispatch (user, control_request,
//! control_response, keep_alive, update_environment_variables, the attachment_import hand-off),
//! fatal versus record-level input errors (WIRE-001, WIRE-002, WIRE-021, PROFILE §2b, §5), the
//! standalone control dispatcher, the user-record queue with priorities (WIRE-020), turns
//! (`system/init` once, `session_state_changed`, assistant and stream records, tool work and
//! the permission race through `permission::PermissionRace` over one `control::Broker`,
//! finite background tasks and the held result of WIRE-004, the
//! suggestion), the hard-interrupt order (WIRE-010, WIRE-011), EOF (WIRE-008, WIRE-EOF-001),
//! replay and result accounting (WIRE-012), and the output line limit per record
//! ([`SessionConfig::max_record_len`]): a record of a turn that would not fit one line is not
//! written and ends that turn with the output error; the session goes on.
//!
//! Must never: read a clock, sleep, spawn, lock or do I/O; parse bytes other than one
//! complete input line; write around its output queue.
//!
//! # Driving a session
//! ```
//! use std::time::Instant;
//! use agentx_core::session::{Action, Session, SessionConfig};
//! use agentx_core::model::{ModelEvent, StopReason, Usage};
//!
//! let now = Instant::now();
//! let config = SessionConfig::local("0b6f1c1e-6c59-4c1e-9a55-3f1e7948c27b", "/tmp");
//! let mut s = Session::new(config, now).unwrap();
//! s.handle_line(br#"{"type":"user","message":"hi","parent_tool_use_id":null}"#, 1, now);
//! let Some(Action::StartModel(req)) = s.poll_action() else { panic!() };
//! for ev in [
//!     ModelEvent::MessageStart { message_id: "msg_1".into() },
//!     ModelEvent::TextStart { index: 0 },
//!     ModelEvent::TextDelta { index: 0, text: "echo: hi".into() },
//!     ModelEvent::BlockStop { index: 0 },
//!     ModelEvent::MessageStop { stop_reason: StopReason::EndTurn, usage: Usage::default(), cost: None },
//! ] {
//!     s.handle_model(req.turn, ev, now);
//! }
//! let mut frames: Vec<_> = std::iter::from_fn(|| s.poll_transmit()).collect();
//! // system/init, running, assistant; the result waits for the turn's persist (PROFILE §11)
//! assert_eq!(frames.len(), 3);
//! let Some(Action::Persist { lines, before_frame }) = s.poll_action() else { panic!() };
//! assert_eq!(before_frame, 3);
//! assert!(lines.iter().any(|l| l.starts_with(br#"{"type":"result""#)));
//! frames.extend(std::iter::from_fn(|| s.poll_transmit()));
//! // … then the result and idle
//! assert_eq!(frames.len(), 5);
//! ```

mod action;
mod attachments;
mod config;
mod context;
mod controls;
mod environment;
mod fit;
mod hook_answer;
mod input;
mod interrupt;
pub mod mcp;
mod mcp_calls;
pub mod mcp_config;
mod mcp_elicit;
mod mcp_live;
mod mcp_sdk_live;
mod mcp_servers;
mod output;
pub mod permission;
pub mod policy;
mod prompts;
mod queue;
mod records;
mod rejected_line;
mod replayed;
mod sdk;
mod sdk_hooks;
pub mod structured;
pub mod tool_rules;
mod turn;

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;

pub use action::{Action, ExitStatus, HookOutcome, ToolOutcome};
pub use config::{
    default_tools, Budget, ConfigError, Profile, Projection, ReferenceProfile, SessionConfig,
    SettingSource, TurnLimits, CLAUDE_CODE_VERSION,
};
pub use environment::{MAX_SESSION_BYTES, MAX_SESSION_VARIABLES};
pub use mcp_elicit::ELICITATION_TIMEOUT;
pub use mcp_servers::{
    McpConfig, McpReport, DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, DEFAULT_LIST_TIMEOUT,
};
pub use prompts::{Settlement, REQUEST_ID_PREFIX, RESOLVED_CAPACITY};
pub use queue::{QUEUE_MAX_BYTES, QUEUE_MAX_RECORDS};
pub use replayed::{MAX_REPLAYED_BYTES, SHUTTING_DOWN};
pub use sdk_hooks::HOOK_CALLBACK_FAILED;
pub use turn::autocompact::{autocompact_pct, DEFAULT_AUTOCOMPACT_PCT};

use crate::model::{Message, ModelEvent, TurnId};
use agentx_wire::json::Parser;
use agentx_wire::wire::grammar::Uuid;
use agentx_wire::wire::system::SessionState;

use output::{Output, UuidMint};
use prompts::Prompts;
use queue::UserQueue;
use records::Stamp;
use turn::Turn;

/// The hand-off for `attachment_import` records and a user record's attachment references
/// (WIRE-018..020, PROFILE §12). The `uploads` integration implements it; without one, a
/// session with attachments disabled rejects every import with `capability_absent` and every
/// `attachment_ref` with an input-error result, and a session with attachments enabled but no
/// upload support does the same (it cannot have committed anything).
pub trait Attachments: Send {
    /// Handles one decoded `attachment_import` record; returns the records to write
    /// (`attachment_import_result` / `attachment_import_rejected`, WIRE-019).
    fn import(
        &mut self,
        op: &agentx_wire::wire::ImportOperation<'_>,
        now: Instant,
    ) -> Vec<agentx_wire::wire::OutputRecord<'static>>;

    /// WIRE-020: checks that a user record refers only to committed attachments of its
    /// prompt UUID (the record's `uuid`) and to all of them, and on success marks them
    /// submitted; `Err(reason)` rejects the record with an input-error result. Called for
    /// every user record (a text-only record may omit committed attachments), after the
    /// queue's room is checked and before a priority-`now` record interrupts anything.
    fn admit_prompt(&mut self, user: &agentx_wire::wire::UserRecord<'_>) -> Result<(), String>;

    /// A record-level failure of an `attachment_import` line whose `upload_id` was
    /// recoverable (`reason` is the PROFILE §6 code the decoder found): the upload's terminal
    /// or rejected record.
    fn reject_operation(
        &mut self,
        upload_id: &str,
        reason: &'static str,
        now: Instant,
    ) -> Vec<agentx_wire::wire::OutputRecord<'static>>;

    /// The earliest upload deadline (PROFILE §12: the upload timeout runs from `begin`).
    fn poll_timeout(&self) -> Option<Instant>;

    /// Expires uploads whose deadline passed; returns their terminal records.
    fn handle_timeout(&mut self, now: Instant) -> Vec<agentx_wire::wire::OutputRecord<'static>>;

    /// Input EOF: every active upload ends `aborted` with `input_eof`; returns the records.
    fn handle_eof(&mut self, now: Instant) -> Vec<agentx_wire::wire::OutputRecord<'static>>;

    /// A fatal session failure: every active upload ends `failed` with `process_failure`
    /// (WIRE-019); returns the records.
    fn handle_failure(&mut self) -> Vec<agentx_wire::wire::OutputRecord<'static>> {
        Vec::new()
    }
}

/// Pushes a record of no turn (an upload's acknowledgement, an input-error result); one too
/// large for a line is not written and is said on stderr instead of vanishing.
pub(crate) fn push_other(out: &mut Output, rec: &agentx_wire::wire::OutputRecord<'_>, what: &str) {
    if out.push(rec, false) == output::Pushed::TooLarge {
        out.diagnostic(prompts::too_large_diagnostic(what));
    }
}

/// Pushes the correlated `control_response` `rec` to request `id`. One too large for a line
/// becomes a correlated error carrying the output error, so the host's waiter settles; if
/// even that cannot fit (the `request_id` alone fills a line) it is said on stderr.
pub(crate) fn respond(out: &mut Output, id: &str, rec: &agentx_wire::wire::OutputRecord<'_>) {
    if out.push(rec, false) == output::Pushed::TooLarge {
        let error = records::control_error(id, &out.line_limit_error());
        push_other(out, &error, "control_response");
    }
}

/// One agent session (PROFILE §8), sans-IO.
pub struct Session {
    pub(crate) config: SessionConfig,
    pub(crate) stamp: Stamp,
    pub(crate) out: Output,
    pub(crate) actions: VecDeque<Action>,
    pub(crate) parser: Parser,
    /// A successful `initialize` was answered (PROFILE §8: at most once).
    pub(crate) initialized: bool,
    /// `system/init` was written (exactly once per process).
    pub(crate) init_written: bool,
    pub(crate) queue: UserQueue,
    /// The active turn, boxed: the turn's steps take it out and put it back
    /// (`self.turn.take()`), and a box moves 8 bytes where the turn's ~560 would be copied
    /// twice per model event.
    pub(crate) turn: Option<Box<Turn>>,
    pub(crate) next_turn: TurnId,
    /// The model's context: the conversation of the finished turns (`..history_len`), then
    /// the active turn's messages already sent to the model. Shared with every
    /// [`ModelRequest`](crate::model::ModelRequest) by `Arc`, so a request costs only the
    /// messages new since the last one, not a copy of the whole session.
    pub(crate) context: std::sync::Arc<Vec<Message>>,
    /// How many messages of `context` belong to finished turns.
    pub(crate) history_len: usize,
    /// How many of the active turn's messages `context` already holds.
    pub(crate) context_turn: usize,
    pub(crate) rules: policy::Rules,
    /// The permission prompts: `control::Broker` + `permission::PermissionRace`.
    pub(crate) prompts: Prompts,
    /// The last published `session_state_changed`.
    pub(crate) state: Option<SessionState>,
    pub(crate) attachments: Option<Box<dyn Attachments>>,
    /// Input EOF was handled (WIRE-008): no new host permission request starts.
    pub(crate) eof: bool,
    pub(crate) done: Option<ExitStatus>,
    /// Inbound responses with no pending request and no known tool identity (PERM-050).
    pub(crate) orphans: u64,
    /// The last user/assistant exchange of the finished turns (compaction's preserved
    /// segment, WIRE-005).
    pub(crate) last_exchange: Option<turn::Exchange>,
    /// The known cost of every model request since this process started (PROFILE §16:
    /// `--max-budget-usd` counts from here; unknown costs never count).
    pub(crate) spent_usd: f64,
    /// The system prompt's parts and appended text (PROFILE §15, §16; the SDK profile only):
    /// from the command line, replaced by an accepted initialize's members.
    pub(crate) system_prompt: (Option<Vec<String>>, Option<String>),
    /// PROFILE §16 structured output: `--json-schema`, replaced by an accepted initialize's
    /// `jsonSchema`.
    pub(crate) output_schema: Option<structured::OutputSchema>,
    /// The SDK hook callbacks registered by initialize and their runs (PROFILE §16).
    pub(crate) sdk_hooks: sdk_hooks::SdkHooks,
    /// The host's in-process MCP servers, their listing and calls (PROFILE §16).
    pub(crate) mcp: mcp_servers::McpServers,
    /// PROFILE §19: what the last completed request reported (`None`: estimate the whole
    /// request; so after a compaction and on resume).
    pub(crate) report: Option<context::Report>,
    /// The user's servers of an initialize being answered: defined after its response.
    pub(crate) mcp_pending_defs: Vec<mcp_config::ServerDef>,
    /// The names `update_environment_variables` holds (PROFILE §8's bound).
    pub(crate) environment: environment::Environment,
    /// PROFILE §11: the store owes more than its bound; new prompts are refused with this
    /// errno text until the driver says otherwise.
    pub(crate) store_unavailable: Option<String>,
    /// Replayed user records (`isReplay`, PROFILE §8) waiting to join the context at the next
    /// turn's start, with their stored lines.
    pub(crate) replayed: replayed::Replayed,
}

impl Session {
    /// Builds a session. Nothing is written until the host's first record (PROFILE §8).
    /// The credential union of `config` is installed in the output validator now, before any
    /// frame exists (WIRE-013).
    pub fn new(config: SessionConfig, now: Instant) -> Result<Session, ConfigError> {
        let session_id = Uuid::new(config.session_id.clone()).ok_or(ConfigError::SessionId)?;
        let stamp = Stamp {
            session_id: session_id.into_owned(),
            mint: UuidMint::new(config.uuid_seed),
            sdk: config.profile == Profile::Sdk,
        };
        let out = Output::new(config.credentials.clone(), config.max_record_len);
        let context = std::sync::Arc::new(config.history.clone());
        let history_len = context.len();
        let prompts = Prompts::new(
            permission::Contenders {
                host: config.host_permissions,
                hook: config.hook_configured,
            },
            config.replay_user_messages,
        );
        let mcp = mcp_servers::McpServers::default();
        let servers = config.mcp.servers.clone();
        let system_prompt = (
            config.system_prompt.clone().map(|s| vec![s]),
            config.append_system_prompt.clone(),
        );
        let mut session = Session {
            system_prompt,
            output_schema: config.output_schema.clone(),
            config,
            stamp,
            out,
            actions: VecDeque::new(),
            parser: Parser::new(),
            initialized: false,
            init_written: false,
            queue: UserQueue::default(),
            turn: None,
            next_turn: 1,
            context,
            history_len,
            context_turn: 0,
            rules: policy::Rules::default(),
            prompts,
            state: None,
            attachments: None,
            eof: false,
            done: None,
            orphans: 0,
            last_exchange: None,
            spent_usd: 0.0,
            sdk_hooks: Default::default(),
            mcp,
            report: None,
            mcp_pending_defs: Vec::new(),
            environment: Default::default(),
            replayed: Default::default(),
            store_unavailable: None,
        };
        // PROFILE §18 "Connecting": the user's servers connect at startup.
        for def in servers {
            session.mcp_define(def, now);
        }
        Ok(session)
    }

    /// PROFILE §11 "Disk errors": the driver's store owes more than its bound (`Some`, with
    /// the errno text) or not (`None`). While it does, a new user record is refused with the
    /// input-error result `input error: session store unavailable: <errno text>`.
    pub fn set_store_unavailable(&mut self, errno_text: Option<&str>) {
        if self.store_unavailable.as_deref() != errno_text {
            self.store_unavailable = errno_text.map(str::to_string);
        }
    }

    /// Installs the upload integration (WIRE-018..020). Without it see [`Attachments`].
    pub fn set_attachments(&mut self, attachments: Box<dyn Attachments>) {
        self.attachments = Some(attachments);
    }

    /// Handles one complete input line (without its LF; CR and blank lines allowed), numbered
    /// `line_no` from 1 for diagnostics. Malformed JSON is fatal (WIRE-001: diagnostic,
    /// status 1 after the already accepted output); a duplicate member rejects the record
    /// (PROFILE §2b, §5); an unknown type warns (WIRE-002).
    pub fn handle_line(&mut self, line: &[u8], line_no: u64, now: Instant) {
        self.dispatch_line(line, line_no, now);
    }

    /// A framing error of line `line_no` (a line over the limit): fatal, like malformed JSON
    /// (PROFILE §2, §2a).
    pub fn handle_frame_error(&mut self, error: &agentx_wire::frame::FrameError, now: Instant) {
        let line = error.line();
        self.fatal(format!("agentx: input line {line}: {error}"), now);
    }

    /// Input EOF (or SIGTERM, PROFILE §8). The driver first passes a final unterminated
    /// record to [`Session::handle_line`] (WIRE-EOF-001); then every pending control is
    /// rejected (`control stream closed`, WIRE-008), no new host permission request starts,
    /// the active turn finishes, queued user records still run, and the session exits 0 once
    /// all work is done.
    pub fn handle_eof(&mut self, now: Instant) {
        self.input_closed(now);
    }

    /// SIGTERM or SIGHUP (PROFILE §8 Signals): input EOF, and the active turn interrupted as
    /// an `interrupt` would be, without an acknowledgement (its result is written and stored).
    /// Queued user records do not run: after that result each gets the input-error result
    /// [`SHUTTING_DOWN`], neither stored. The driver exits once [`Session::poll_action`]
    /// yields [`Action::Exit`].
    pub fn handle_terminate(&mut self, now: Instant) {
        if self.done.is_some() {
            return;
        }
        self.interrupt(None, now);
        while let Some(q) = self.queue.pop() {
            let uuid = q.uuid_given.then_some(q.record.uuid).flatten();
            self.input_error(SHUTTING_DOWN, uuid, now);
        }
        self.replayed.clear();
        self.input_closed(now);
    }

    /// SIGINT: an `interrupt` without a request to acknowledge (PROFILE §8). A step like any
    /// input: a latched output ends the session, the next queued prompt starts, and after
    /// EOF with nothing left the session exits.
    pub fn handle_signal_interrupt(&mut self, now: Instant) {
        self.interrupt(None, now);
        self.after_step(now);
    }

    /// One model event of `turn`'s current call. Events of a finished or cancelled turn are
    /// ignored.
    pub fn handle_model(&mut self, turn: TurnId, event: ModelEvent, now: Instant) {
        if self.done.is_some() {
            return;
        }
        if self.turn.as_ref().is_some_and(|t| t.id == turn) {
            self.model_event(event, now);
            self.after_step(now);
        }
    }

    /// A tool started by [`Action::RunTool`] finished. Unknown or cancelled IDs are ignored.
    pub fn handle_tool_done(&mut self, tool_use_id: &str, outcome: ToolOutcome, now: Instant) {
        if self.done.is_some() {
            return;
        }
        self.tool_done(tool_use_id, outcome, now);
        self.after_step(now);
    }

    /// The hook started by [`Action::StartHook`] answered. A late loser is ignored
    /// (WIRE-PERM-001).
    pub fn handle_hook_done(&mut self, tool_use_id: &str, outcome: HookOutcome, now: Instant) {
        if self.done.is_some() {
            return;
        }
        self.hook_done(tool_use_id, outcome, now);
        self.after_step(now);
    }

    /// The deadline of [`Session::poll_timeout`] passed (upload timeouts, SDK hook callback
    /// timeouts of PROFILE §16).
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.done.is_some() {
            return;
        }
        self.hooks_timeout(now);
        self.mcp_timeout(now);
        if let Some(a) = self.attachments.as_mut() {
            let due = a.poll_timeout().is_some_and(|t| t <= now);
            if due {
                for r in a.handle_timeout(now) {
                    push_other(&mut self.out, &r, "attachment_import_result");
                }
            }
        }
        self.after_step(now);
    }

    /// The next thing the driver must do. Taking an [`Action::Persist`] releases the frames
    /// it held back (see [`Session::poll_transmit`]): the driver carries it out (append and
    /// fsync) before it writes any frame it polls afterwards.
    pub fn poll_action(&mut self) -> Option<Action> {
        let action = self.actions.pop_front()?;
        if matches!(action, Action::Persist { .. }) {
            self.out.release_hold();
        }
        Some(action)
    }

    /// The next validated frame (one complete record and its `\n`), in push order
    /// (WIRE-003). The driver writes each with one write.
    ///
    /// PROFILE §11 "durable before idle": a finished turn's result and every frame after it
    /// (its `idle` included) are not handed out until the turn's [`Action::Persist`] was
    /// taken from [`Session::poll_action`], so a driver that writes frames as they come and
    /// carries out actions in order cannot show the host a result, or `idle`, before the
    /// turn is stored. `None` here with frames still queued means: poll the actions.
    pub fn poll_transmit(&mut self) -> Option<Bytes> {
        self.out.pop_frame()
    }

    /// Frames and bytes waiting in the outbox. The session never waits: a driver whose
    /// writer stalls stops feeding inputs while these are high (backpressure).
    pub fn queued_output(&self) -> (usize, usize) {
        (self.out.queued_frames(), self.out.queued_bytes())
    }

    /// The next stderr line (PROFILE §5 texts, without the newline).
    pub fn poll_diagnostic(&mut self) -> Option<String> {
        self.out.pop_diagnostic()
    }

    /// When [`Session::handle_timeout`] must be called next, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let uploads = self.attachments.as_ref().and_then(|a| a.poll_timeout());
        let hooks = self.sdk_hooks.next_deadline();
        let mcp = self.mcp.next_deadline();
        [uploads, hooks, mcp].into_iter().flatten().min()
    }

    /// SDK `hook_callback` requests still pending, by request ID (PROFILE §16).
    pub fn pending_hook_callbacks(&self) -> Vec<String> {
        self.sdk_hooks
            .pending_requests()
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// `Some` once the session is over (after [`Action::Exit`] was queued).
    pub fn is_done(&self) -> Option<ExitStatus> {
        self.done
    }

    /// The session ID.
    pub fn session_id(&self) -> &str {
        self.stamp.session_id.as_str()
    }

    /// The published session state (`None` before the first turn).
    pub fn state(&self) -> Option<&'static str> {
        self.state.map(|s| s.as_str())
    }

    /// The model's context of the finished turns, oldest first: the prior context a later
    /// `--resume` rebuilds from the stored transcript (PROFILE §11, `transcript::context`) equals
    /// it.
    pub fn history(&self) -> &[Message] {
        &self.context[..self.history_len]
    }

    /// True while a turn is active.
    pub fn turn_active(&self) -> bool {
        self.turn.is_some()
    }

    /// User records waiting in the queue (WIRE-020).
    pub fn queued_user_records(&self) -> usize {
        self.queue.len()
    }

    /// Permission prompts still open, by tool-use ID.
    pub fn open_prompts(&self) -> Vec<String> {
        self.prompts.open_ids().map(str::to_string).collect()
    }

    /// Host permission requests still pending, by request ID.
    pub fn pending_requests(&self) -> Vec<String> {
        self.prompts.pending_requests()
    }

    /// True when `tool_use_id` is in the bounded resolved set (PERM-050).
    pub fn is_resolved(&self, tool_use_id: &str) -> bool {
        self.prompts.is_resolved(tool_use_id)
    }

    /// Inbound responses routed to the orphan handler so far (PERM-050).
    pub fn orphaned_responses(&self) -> u64 {
        self.orphans
    }

    /// The rules added by allow decisions (PROFILE §10).
    pub fn rules(&self) -> &policy::Rules {
        &self.rules
    }

    /// Publishes `state` if it differs from the last published one.
    pub(crate) fn publish(&mut self, state: SessionState) {
        prompts::publish(&mut self.out, &mut self.stamp, &mut self.state, state);
    }

    /// A fatal input or output error: one diagnostic, every running thing stopped, exit 1
    /// after the frames already queued (PROFILE §8).
    pub(crate) fn fatal(&mut self, diagnostic: String, now: Instant) {
        if self.done.is_some() {
            return;
        }
        self.out.diagnostic(diagnostic);
        if let Some(a) = self.attachments.as_mut() {
            for r in a.handle_failure() {
                push_other(&mut self.out, &r, "attachment_import_result");
            }
        }
        self.stop_everything(now);
        self.finish(1);
    }

    /// Cancels the model, tools and hooks without writing anything.
    fn stop_everything(&mut self, now: Instant) {
        self.permission_shutdown(now);
        if let Some(t) = self.turn.take() {
            if t.model_active() {
                self.actions.push_back(Action::CancelModel { turn: t.id });
            }
            for id in t.running_tools() {
                self.actions
                    .push_back(Action::CancelTool { tool_use_id: id });
            }
        }
    }

    fn finish(&mut self, code: i32) {
        if self.done.is_none() {
            self.actions.push_back(Action::Exit { code });
            self.done = Some(ExitStatus { code });
        }
    }

    /// After every input: a latched output failure ends the session; a finished turn makes
    /// room for the next queued record; after EOF with nothing left, exit 0.
    pub(crate) fn after_step(&mut self, now: Instant) {
        loop {
            if self.done.is_some() {
                return;
            }
            // PROFILE §16: MCP call outcomes known while their turn was borrowed.
            self.mcp_ready(now);
            self.mcp_release_request(now);
            if self.out.failed() {
                self.stop_everything(now);
                self.finish(1);
                return;
            }
            if self.out.turn_refused() {
                if self.turn.is_some() {
                    // A record of the active turn did not fit one output line (or a delta
                    // would have completed a credential) and was not written: the turn ends in the hard-interrupt order (cancellations,
                    // terminal tool results, task events) with the output error in its
                    // result; the session goes on.
                    self.permission_cancel_all(None, now);
                    self.cut_turn(interrupt::Cut::OutputError, now);
                } else {
                    // Its turn already ended with the output error.
                    self.out.take_turn_refusal();
                }
                continue;
            }
            // The next queued record starts its turn (whose first records may be refused
            // too: checked on the next round).
            if self.turn.is_some() {
                break;
            }
            // PROFILE §16: the SDK MCP servers are listed before the first turn, so its
            // system/init and model requests see their tools.
            if !self.queue.is_empty() {
                self.mcp_begin(now);
            }
            // PROFILE §18: a user's server never holds the turn's start (system/init lists
            // it `pending`); its first model request waits (`start_request`).
            if self.mcp_listing() {
                break;
            }
            match self.queue.pop() {
                Some(q) => self.start_turn(q, now),
                None => break,
            }
        }
        if self.eof && self.turn.is_none() && self.queue.is_empty() {
            self.finish(0);
        }
    }
}
