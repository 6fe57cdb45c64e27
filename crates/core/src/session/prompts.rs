//! The session's permission prompts, carried by the tested components: the host's
//! `can_use_tool` requests are waiters of one [`control::Broker`](agentx_wire::control::Broker)
//! (WIRE-006..009, PERM-050) and the race between the host and the hook is one
//! [`PermissionRace`] (WIRE-PERM-001..004, PERM-021, -045, -049, -053). This module is only
//! the glue: the [`Emitter`] that puts the race's and the broker's records into the session's
//! one output FIFO (WIRE-003), the translation of the session's hook outcomes and of the
//! race's verdicts, and carrying out the returned [`RaceAction`]s.
//!
//! Owns: nothing of the race itself. Must never: decide a winner, correlate a response, keep
//! its own pending or resolved set (the broker's is the one, PERM-050), or write a record
//! except through the emitter or the session's `settle`.

use std::time::Instant;

use agentx_wire::control::{Broker, Dispatch, Emission, Emitter, Refused, StateChange};
use agentx_wire::wire::permission::PermissionUpdate;
use agentx_wire::wire::system::SessionState;
use agentx_wire::wire::{ControlResponse, OutputRecord, RawJson, RawObject};

use super::output::{Output, Pushed};
use super::permission::{
    self, Ask, Contenders, Decider, HookOutcome as RaceHook, PermissionRace, RaceAction, Routed,
    Verdict,
};
use super::records::{control_success, Stamp};
use super::{Action, HookOutcome, Session};

/// How many resolved tool-use IDs are remembered (Ordering, replay, and duplicate
/// suppression: "a bounded set of 1,000"); the broker's set.
pub use agentx_wire::control::RESOLVED_CAPACITY;

/// The prefix of the session's permission request IDs (`agentx-perm-1`, ...).
pub const REQUEST_ID_PREFIX: &str = "agentx-perm-";

/// How a prompt settled, in the session's terms.
#[derive(Clone, Debug, PartialEq)]
pub enum Settlement {
    /// Run the tool, with the winner's `updatedInput` (compact JSON) when given (PERM-042)
    /// and its `updatedPermissions` (PERM-043).
    Allow {
        /// The winner's replacement input, compact JSON (PERM-042).
        updated_input: Option<String>,
        /// The winner's `updatedPermissions` (PERM-043).
        updated_permissions: Vec<PermissionUpdate<'static>>,
    },
    /// Do not run it; `interrupt` (PERM-045) also interrupts the turn.
    Deny {
        /// The `tool_result` error text.
        message: String,
        /// PERM-045: interrupt the turn too.
        interrupt: bool,
    },
}

/// What asking did.
#[derive(Debug)]
pub(crate) enum Asked {
    /// The prompt is open: the host request and/or the hook run.
    Open,
    /// It settled at once (nobody can answer, the request could not leave, or the tool-use
    /// ID is not askable: PERM-053).
    Settled(Settlement),
}

/// The broker and the race of one session.
#[derive(Debug)]
pub(crate) struct Prompts {
    pub(crate) broker: Broker,
    pub(crate) race: PermissionRace,
}

impl Prompts {
    pub(crate) fn new(contenders: Contenders, replay: bool) -> Prompts {
        let mut broker = Broker::with_id_prefix(REQUEST_ID_PREFIX);
        // PROFILE §8 Replay / WIRE-EOF-001: a response that resolves a waiter is echoed.
        broker.set_replay(replay);
        Prompts {
            broker,
            race: PermissionRace::new(contenders),
        }
    }

    /// Open prompts' tool-use IDs, oldest first.
    pub(crate) fn open_ids(&self) -> impl Iterator<Item = &str> {
        self.race.open_tool_use_ids()
    }

    /// Pending host request IDs, oldest first.
    pub(crate) fn pending_requests(&self) -> Vec<String> {
        self.broker
            .pending_permission_ids()
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// True when `tool_use_id` settled recently (PERM-050).
    pub(crate) fn is_resolved(&self, tool_use_id: &str) -> bool {
        self.broker.resolved_tool_uses().contains(tool_use_id)
    }

    /// A tool use got its terminal `tool_result`: it joins the resolved set (PERM-050,
    /// PERM-053), oldest evicted beyond 1,000.
    pub(crate) fn mark_resolved(&mut self, tool_use_id: &str) {
        self.broker.record_resolved_tool_use(tool_use_id);
    }
}

/// The session's emitter: every record of the race and the broker is pushed into the one
/// output FIFO as it happens (WIRE-003), so the frame order is the race's order. A refused
/// push (the output latched, WIRE-013) is a [`Refused`] emission (WIRE-015).
pub(crate) struct SessionEmitter<'a> {
    pub(crate) out: &'a mut Output,
    pub(crate) stamp: &'a mut Stamp,
    pub(crate) state: &'a mut Option<SessionState>,
}

impl Emitter for SessionEmitter<'_> {
    fn emit(&mut self, _broker: &mut Broker, emission: Emission<'_>) -> Result<(), Refused> {
        let pushed = match emission {
            // A `can_use_tool` request too large for one line is a record of the turn lost:
            // refused here (WIRE-PERM-002: the prompt settles as a denial) and the turn ends
            // with its output error.
            Emission::Request(r) => self
                .out
                .push_turn(&OutputRecord::ControlRequest(r.clone()), false),
            Emission::Cancel(c) => self
                .out
                .push_turn(&OutputRecord::ControlCancelRequest(c.clone()), false),
            Emission::Echo(r) => match self
                .out
                .push(&OutputRecord::ControlResponse(r.clone()), false)
            {
                Pushed::Written => true,
                // The echo of a resolving response (PROFILE §8 Replay) whose re-encoding
                // outgrew one line: said on stderr, the resolution stands.
                Pushed::TooLarge => {
                    self.out
                        .diagnostic(too_large_diagnostic("control_response echo"));
                    true
                }
                Pushed::Failed => false,
            },
            Emission::State(s) => {
                let state = match s {
                    StateChange::RequiresAction => SessionState::RequiresAction,
                    StateChange::Running => SessionState::Running,
                };
                publish(self.out, self.stamp, self.state, state)
            }
        };
        if pushed {
            Ok(())
        } else {
            Err(Refused)
        }
    }
}

/// The stderr line for a record outside any turn that could not fit one output line.
pub(crate) fn too_large_diagnostic(what: &str) -> String {
    format!("agentx: output refused: a {what} record exceeds the output line limit; not written")
}

/// Publishes `state` if it differs from the last published one; false when the output has
/// failed.
pub(crate) fn publish(
    out: &mut Output,
    stamp: &mut Stamp,
    last: &mut Option<SessionState>,
    state: SessionState,
) -> bool {
    if *last == Some(state) {
        return true;
    }
    *last = Some(state);
    let rec = stamp.state(state);
    out.push_turn(&rec, false)
}

/// The session's hook outcome for the race. An `updatedInput` that is not a JSON object is
/// a malformed decision: a denial, never an allow (PERM-049, WIRE-PERM-002).
fn race_hook(outcome: HookOutcome) -> RaceHook {
    match outcome {
        HookOutcome::Allow {
            updated_input: None,
        } => RaceHook::Allow {
            updated_input: None,
        },
        HookOutcome::Allow {
            updated_input: Some(s),
        } => match RawJson::parse_owned(s.into_bytes()) {
            Ok(raw) if raw.as_bytes().first() == Some(&b'{') => RaceHook::Allow {
                updated_input: Some(RawObject(raw)),
            },
            _ => RaceHook::Failed,
        },
        HookOutcome::Deny { message } => RaceHook::Deny { message },
        HookOutcome::Pass => RaceHook::Pass,
        HookOutcome::Failed => RaceHook::Failed,
    }
}

/// The race's verdict in the session's terms. A host's `updatedInput` is written canonically
/// (PERM-042); a hook's is kept as the hook runner gave it (compact JSON).
fn settlement_of(s: permission::Settlement) -> Settlement {
    match s.verdict {
        Verdict::Allow {
            updated_input,
            updated_permissions,
        } => Settlement::Allow {
            updated_input: updated_input.map(|o| {
                let mut out = Vec::new();
                match s.decider {
                    Decider::Hook => out.extend_from_slice(o.0.as_bytes()),
                    _ => o.0.write_canonical(&mut out),
                }
                String::from_utf8(out).unwrap_or_else(|_| "{}".to_string())
            }),
            updated_permissions,
        },
        Verdict::Deny { message, interrupt } => Settlement::Deny { message, interrupt },
    }
}

impl Session {
    /// Opens the permission race for one tool use (WIRE-PERM-001 steps 1–2): through
    /// [`PermissionRace::ask`], `requires_action` when it is the first open prompt, the host's
    /// `can_use_tool` request registered with the broker before its envelope is queued
    /// (WIRE-006; not after input closed, WIRE-008) with the safe `description` (PERM-021,
    /// WIRE-PERM-003), and the hook, together.
    pub(crate) fn ask_permission(
        &mut self,
        tool_use_id: &str,
        tool_name: &str,
        input: &str,
        now: Instant,
    ) -> Asked {
        let raw = RawJson::parse_owned(input.as_bytes().to_vec())
            .unwrap_or_else(|_| RawJson::empty_object());
        let ask = Ask::new(tool_use_id, tool_name, RawObject(raw))
            .with_description(super::policy::description(tool_name, input));
        let actions = match self.with_race(|race, broker, emit| race.ask(ask, broker, emit, now)) {
            Ok(actions) => actions,
            // PERM-053: an ID that is already open or settled is not asked again.
            Err(e) => {
                return Asked::Settled(Settlement::Deny {
                    message: e.to_string(),
                    interrupt: false,
                })
            }
        };
        let mut settled = None;
        for a in actions {
            if let Some(s) = self.hook_action(a) {
                settled = Some(settlement_of(s));
            }
        }
        match settled {
            Some(s) => Asked::Settled(s),
            None => Asked::Open,
        }
    }

    /// Runs `f` on the race and its broker with an emitter into the session's output (the
    /// one place that splits the session's borrows for them).
    pub(super) fn with_race<R>(
        &mut self,
        f: impl FnOnce(&mut PermissionRace, &mut Broker, &mut SessionEmitter<'_>) -> R,
    ) -> R {
        let Session {
            prompts,
            out,
            stamp,
            state,
            ..
        } = self;
        let mut emit = SessionEmitter { out, stamp, state };
        f(&mut prompts.race, &mut prompts.broker, &mut emit)
    }

    /// An inbound `control_response` (WIRE-009: validated by the waiter's own schema before
    /// resolution; PERM-049: anything but a valid decision is a denial; WIRE-007: a
    /// known-late response changes nothing; PERM-050: a duplicate is ignored, an orphan is
    /// counted).
    pub(crate) fn permission_response(&mut self, resp: &ControlResponse<'_>, now: Instant) {
        match self.with_race(|race, broker, emit| race.handle_response(resp, broker, emit, now)) {
            Routed::Race(actions) => self.carry_out(actions, now),
            Routed::Other(Dispatch::Orphan(_)) => self.orphans += 1,
            // A `hook_callback` answer (PROFILE §16).
            // A `hook_callback` or `mcp_message` answer (PROFILE §16).
            Routed::Other(Dispatch::Resolved(r)) => {
                if !self.hook_resolved(&r, now) {
                    self.mcp_resolved(&r, now);
                }
            }
            // Known-late (WIRE-007: a cancelled callback's or prompt's late answer),
            // duplicate (PERM-050).
            Routed::Other(_) => {}
        }
    }

    /// A `control_response` line the strict reader rejected, with the request IDs recovered
    /// from it (PERM-049): each that names a pending `can_use_tool` request settles its prompt
    /// as a denial (the tool gets its deny `tool_result`, `requires_action` goes back to
    /// `running` when no prompt remains). Any other ID changes nothing.
    pub(crate) fn permission_rejected(
        &mut self,
        ids: &[String],
        error: &agentx_wire::wire::Error,
        now: Instant,
    ) {
        for id in ids {
            let actions =
                self.with_race(|race, broker, emit| race.handle_rejected(id, error, broker, emit));
            match actions {
                Some(actions) => self.carry_out(actions, now),
                // PROFILE §16: a rejected answer to a pending hook callback is malformed.
                None => {
                    if !self.hook_rejected(id, error, now) {
                        self.mcp_rejected(id, error, now);
                    }
                }
            }
        }
    }

    /// The hook answered (WIRE-PERM-001 steps 3–4; a late loser changes nothing).
    pub(crate) fn permission_hook(
        &mut self,
        tool_use_id: &str,
        outcome: HookOutcome,
        now: Instant,
    ) {
        let actions = self.with_race(|race, broker, emit| {
            race.handle_hook(tool_use_id, race_hook(outcome), broker, emit, now)
        });
        self.carry_out(actions, now);
    }

    /// Input EOF (WIRE-008, after the final record was dispatched): every pending host
    /// request is rejected `control stream closed`, its prompt settles as a denial and its
    /// hook is killed; no cancel record is sent (the host stopped talking).
    pub(crate) fn permission_eof(&mut self, now: Instant) {
        let (actions, others) =
            self.with_race(|race, broker, emit| race.handle_eof(broker, emit, now));
        self.carry_out(actions, now);
        // PROFILE §16: pending hook callbacks fail (`control stream closed`).
        self.hooks_eof(others, now);
    }

    /// Interrupt, steps 1 and 2 (WIRE-010, WIRE-011): one `control_cancel_request` per
    /// pending host request, oldest first, every hook killed; then the acknowledgement of
    /// `ack` (an `interrupt`'s `request_id`; `None` for SIGINT, a priority-`now` record or a
    /// turn cut by the line limit), pushed after the broker returned, so it follows every
    /// cancellation in the one output FIFO (push order is output order, WIRE-003). The prompts
    /// settle as cancellations; the caller's hard-interrupt order writes their terminal
    /// `tool_result`s.
    ///
    /// The session needs no post-cancellation callback of the broker: its emitter is the only
    /// writer of the output while the broker runs, and nothing is pushed between the last
    /// cancellation and the acknowledgement. A refused or panicking cancellation is the
    /// broker's one fixed [`EmissionFailure`](agentx_wire::control::EmissionFailure) (WIRE-015):
    /// every waiter still settles. A latched output already said why on stderr (PROFILE §5)
    /// and ends the session after this step; any other failure ends it here with the fixed
    /// emission text.
    pub(crate) fn permission_cancel_all(&mut self, ack: Option<&str>, now: Instant) {
        // PROFILE §16 / WIRE-011: pending SDK hook callbacks are cancelled first, so their
        // `control_cancel_request`s also precede the acknowledgement pushed below.
        let hook_failure = self.hooks_cancel_all(now);
        let (actions, failure) =
            self.with_race(|race, broker, emit| race.cancel_all(broker, emit, now, None));
        if let Some(id) = ack {
            // An `interrupt` whose `request_id` alone fills a line: no response can carry it.
            // A failed push latched the output (the session ends after this step).
            if self.out.push(&control_success(id, None), false) == Pushed::TooLarge {
                self.out
                    .diagnostic(too_large_diagnostic("control_response (interrupt)"));
            }
        }
        self.kill_hooks(actions);
        if let Some(f) = failure.or(hook_failure) {
            if !self.out.failed() {
                self.fatal(format!("agentx: output failed: {}", f.message()), now);
            }
        }
    }

    /// A fatal stop: the broker shuts down and every prompt closes silently, hooks killed.
    pub(crate) fn permission_shutdown(&mut self, now: Instant) {
        let actions = self.prompts.race.shutdown(&mut self.prompts.broker, now);
        self.kill_hooks(actions);
        self.hooks_shutdown();
        self.mcp_shutdown();
    }

    fn kill_hooks(&mut self, actions: Vec<RaceAction>) {
        for a in actions {
            if let RaceAction::KillHook { tool_use_id } = a {
                self.actions.push_back(Action::KillHook { tool_use_id });
            }
        }
    }

    /// Carries out the race's actions in order; each settlement is applied once (PERM-053).
    fn carry_out(&mut self, actions: Vec<RaceAction>, now: Instant) {
        for a in actions {
            if let Some(s) = self.hook_action(a) {
                let id = s.tool_use_id.clone();
                self.settle(&id, settlement_of(s), now);
            }
        }
    }

    /// Turns a race's hook action into the driver's; hands a settlement back to the caller.
    fn hook_action(&mut self, a: RaceAction) -> Option<permission::Settlement> {
        match a {
            RaceAction::StartHook {
                tool_use_id,
                tool_name,
                input,
            } => self.actions.push_back(Action::StartHook {
                tool_use_id,
                session_id: self.stamp.session_id.as_str().to_string(),
                tool_name,
                input_json: String::from_utf8_lossy(input.0.as_bytes()).into_owned(),
            }),
            RaceAction::KillHook { tool_use_id } => {
                self.actions.push_back(Action::KillHook { tool_use_id })
            }
            RaceAction::Settled(s) => return Some(s),
        }
        None
    }
}
