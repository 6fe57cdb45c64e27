//! The permission race (Permission race; WIRE-PERM-001..004, PERM-021, -022, -045, -049,
//! -053; PROFILE §8, §10), as a sans-IO component the session drives.
//!
//! Owns: the open prompts; on ask, publishing `requires_action` (when it is the first open
//! prompt), starting the host `can_use_tool` request through the [`Broker`] and asking the
//! driver to start the hook, together; the winner (the first decisive result in completion
//! order, pass-through not decisive); cancelling the host request when the hook wins and
//! killing the hook when the host wins; fail-closed settlement (errors, malformed decisions,
//! stream close, cancellation and emission failure are denials, never an allow); settling each
//! tool-use ID exactly once; going back to `running` only when no prompt remains; the safe
//! `description` (PROFILE §10 summaries, else the tool name); cancelling every pending prompt
//! before an interrupt's acknowledgement (WIRE-011).
//!
//! Must never: read a clock, sleep, spawn, lock or do I/O (hook timeouts are the driver's: it
//! reports [`HookOutcome::Failed`]); run a tool or a hook itself; write a record except
//! through the emitter; turn a pass-through, an error or a late loser into an allow.
//!
//! Results are values: every entry point returns the [`RaceAction`]s the session must carry
//! out, in order. Outbound records (the state change, the request, cancellations) go through
//! the emitter as they happen, so their FIFO order is the order of the race.

use std::time::Instant;

use agentx_wire::control::broker::{Emission, CONTROL_STREAM_CLOSED};
use agentx_wire::control::{
    AfterCancellation, Broker, Dispatch, EmissionFailure, Emitter, Outcome, Payload, RequestError,
    Resolved, Started, StateChange,
};
use agentx_wire::wire::grammar::NonEmpty;
use agentx_wire::wire::permission::DEFAULT_DENY_MESSAGE;
use agentx_wire::wire::{
    CanUseTool, ControlRequestBody, ControlResponse, PermissionDecision, PermissionUpdate,
    RawObject, Text,
};

mod ask;

pub use ask::{describe, Ask, AskError, BASH_SUMMARY_MAX};

/// PROFILE §10: a hook that exits nonzero, answers malformed or times out (declared once, by
/// the hook runner).
/// The deny message of a failed hook (nonzero exit, malformed answer, timeout:
/// WIRE-PERM-002, fail closed).
pub const HOOK_FAILED: &str = "permission hook failed";
/// PROFILE §10: ask with neither a host nor a hook (or the hook passed with no host).
pub const NO_PROMPT_AVAILABLE: &str = "no permission prompt available";
/// A host success whose decision failed PERM-040..052 (PERM-049).
pub const INVALID_DECISION: &str = "invalid permission decision";
/// A prompt cancelled by an interrupt (WIRE-011) or a local abort.
pub const PROMPT_INTERRUPTED: &str = "interrupted";

/// What the permission hook answered (PROFILE §10), as the driver reports it.
#[derive(Clone, Debug, PartialEq)]
pub enum HookOutcome {
    /// `{"decision":"allow","updatedInput"?:{…}}`.
    Allow {
        /// The hook's replacement input object (PERM-042).
        updated_input: Option<RawObject<'static>>,
    },
    /// `{"decision":"deny","message"?:s}`.
    Deny {
        /// The hook's message (default: the protocol's deny message).
        message: Option<String>,
    },
    /// `{"decision":"pass"}`: not decisive; the host decides (WIRE-PERM-001).
    Pass,
    /// Nonzero exit, malformed answer or timeout: a decisive deny `permission hook failed`
    /// (WIRE-PERM-002).
    Failed,
}

/// How a prompt settled.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Run the tool, with the winner's `updatedInput` when given (PERM-042) and its
    /// `updatedPermissions` (PERM-043).
    Allow {
        /// The winner's replacement input (PERM-042).
        updated_input: Option<RawObject<'static>>,
        /// The winner's `updatedPermissions` (PERM-043).
        updated_permissions: Vec<PermissionUpdate<'static>>,
    },
    /// Do not run it. `interrupt` (PERM-045): the active turn must be interrupted too.
    Deny {
        /// The `tool_result` error text.
        message: String,
        /// PERM-045: interrupt the turn too.
        interrupt: bool,
    },
}

impl Verdict {
    fn deny(message: &str) -> Verdict {
        Verdict::Deny {
            message: message.to_owned(),
            interrupt: false,
        }
    }

    /// True for an allow.
    pub fn is_allow(&self) -> bool {
        matches!(self, Verdict::Allow { .. })
    }

    /// PERM-045: a deny that also interrupts the turn.
    pub fn interrupts_turn(&self) -> bool {
        matches!(
            self,
            Verdict::Deny {
                interrupt: true,
                ..
            }
        )
    }
}

/// Who decided a prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decider {
    /// The host's response (or its failure: error, malformed, emission failure).
    Host,
    /// The hook's decisive result (or its failure).
    Hook,
    /// Input ended with the host request pending (WIRE-008).
    StreamClosed,
    /// An interrupt or local abort (WIRE-011).
    Interrupt,
    /// Neither contender could decide (`no permission prompt available`).
    NoPrompt,
}

/// One tool-use ID settled, exactly once (PERM-053).
#[derive(Clone, Debug, PartialEq)]
pub struct Settlement {
    /// The tool use that settled.
    pub tool_use_id: String,
    /// How.
    pub verdict: Verdict,
    /// Who decided.
    pub decider: Decider,
}

/// What the session must do, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum RaceAction {
    /// Start the permission hook for this prompt; answer with
    /// [`PermissionRace::handle_hook`].
    StartHook {
        /// The prompt's tool use.
        tool_use_id: String,
        /// The tool's name.
        tool_name: String,
        /// The tool's input.
        input: RawObject<'static>,
    },
    /// Kill the hook of a prompt the host (or an interrupt, or EOF) settled; its late result
    /// changes nothing.
    KillHook {
        /// The prompt's tool use.
        tool_use_id: String,
    },
    /// The prompt settled.
    Settled(Settlement),
}

/// Which contenders a session has (PROFILE §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Contenders {
    /// A host answers `can_use_tool` (false in one-shot `-p` mode).
    pub host: bool,
    /// A permission hook is configured in `settings.json`.
    pub hook: bool,
}

/// The host leg of a prompt.
#[derive(Clone, Debug, PartialEq)]
enum HostLeg {
    /// The `can_use_tool` request is pending under this request ID.
    Pending(Box<str>),
    /// No host can answer: `-p` mode, or input ended (`closed`).
    Absent { closed: bool },
}

/// The hook leg of a prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HookLeg {
    Running,
    Passed,
    NotConfigured,
}

#[derive(Debug)]
struct Prompt {
    tool_use_id: String,
    host: HostLeg,
    hook: HookLeg,
}

/// What an inbound `control_response` meant to the race.
#[derive(Debug, PartialEq)]
pub enum Routed {
    /// It answered a prompt's host request: carry these out.
    Race(Vec<RaceAction>),
    /// Not a prompt's response (another waiter's resolution, known-late, duplicate, orphan).
    Other(Dispatch),
}

/// The open prompts of a session. See the module docs.
#[derive(Debug)]
pub struct PermissionRace {
    contenders: Contenders,
    prompts: Vec<Prompt>,
}

impl PermissionRace {
    /// A race with these contenders and no open prompt.
    pub fn new(contenders: Contenders) -> Self {
        PermissionRace {
            contenders,
            prompts: Vec::new(),
        }
    }

    /// Open prompts (PROFILE §8: `requires_action` while nonzero).
    pub fn open_prompts(&self) -> usize {
        self.prompts.len()
    }

    /// True while `tool_use_id` has an open prompt.
    pub fn is_open(&self, tool_use_id: &str) -> bool {
        self.prompts.iter().any(|p| p.tool_use_id == tool_use_id)
    }

    /// Open prompts' tool-use IDs, in ask order.
    pub fn open_tool_use_ids(&self) -> impl Iterator<Item = &str> {
        self.prompts.iter().map(|p| p.tool_use_id.as_str())
    }

    /// Ask (WIRE-PERM-001 steps 1–2): publishes `requires_action` when this is the first open
    /// prompt, starts the host request through the broker, and returns `StartHook` for the
    /// driver. With neither contender able to answer, settles a denial at once without
    /// publishing anything.
    pub fn ask(
        &mut self,
        ask: Ask,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
        now: Instant,
    ) -> Result<Vec<RaceAction>, AskError> {
        let actions = self.start(ask, broker, emit, now)?;
        note_settled(broker, &actions);
        Ok(actions)
    }

    fn start(
        &mut self,
        ask: Ask,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
        now: Instant,
    ) -> Result<Vec<RaceAction>, AskError> {
        if self.is_open(&ask.tool_use_id) {
            return Err(AskError::AlreadyOpen);
        }
        if broker.resolved_tool_uses().contains(&ask.tool_use_id) {
            return Err(AskError::AlreadySettled);
        }
        let Some(tool_use_id) = NonEmpty::new(ask.tool_use_id.clone()) else {
            return Err(AskError::EmptyToolUseId);
        };
        let Some(tool_name) = NonEmpty::new(ask.tool_name.clone()) else {
            return Err(AskError::EmptyToolName);
        };
        let host_possible = self.contenders.host && !broker.is_closed();
        if !host_possible && !self.contenders.hook {
            let message = match self.contenders.host {
                true => CONTROL_STREAM_CLOSED,
                false => NO_PROMPT_AVAILABLE,
            };
            return Ok(vec![RaceAction::Settled(Settlement {
                tool_use_id: ask.tool_use_id,
                verdict: Verdict::deny(message),
                decider: if self.contenders.host {
                    Decider::StreamClosed
                } else {
                    Decider::NoPrompt
                },
            })]);
        }
        if self.prompts.is_empty() {
            // PROFILE §8: `requires_action` while any prompt is open. Published before the
            // request so the host sees the state first. A failed emission is reported by the
            // broker; the prompt still runs (and fails closed if the request cannot leave).
            let _ = broker.emit(emit, Emission::State(StateChange::RequiresAction));
        }
        let mut actions = Vec::new();
        let host = if host_possible {
            let request = CanUseTool {
                tool_name,
                description: Some(Text::Owned(
                    ask.description
                        .clone()
                        .unwrap_or_else(|| describe(&ask.tool_name, &ask.input)),
                )),
                input: ask.input.clone(),
                tool_use_id,
                permission_suggestions: ask.permission_suggestions.clone(),
                blocked_path: ask.blocked_path.clone().map(|s| Some(Text::Owned(s))),
                decision_reason: ask.decision_reason.clone().map(|s| Some(Text::Owned(s))),
                title: None,
                display_name: None,
                agent_id: ask.agent_id.clone().map(Text::Owned),
            };
            match broker.request(ControlRequestBody::CanUseTool(request), now, emit) {
                Ok(Started::Pending { id }) => HostLeg::Pending(id),
                Ok(Started::Resolved(r)) => {
                    // Settled during its own emission (a synchronous host): the host won
                    // before the hook could start.
                    let verdict = host_verdict(&r.outcome);
                    let decider = decider_of(&r.outcome);
                    self.publish_running_if_idle(broker, emit);
                    return Ok(vec![RaceAction::Settled(Settlement {
                        tool_use_id: ask.tool_use_id,
                        verdict,
                        decider,
                    })]);
                }
                Err(RequestError::StreamClosed) => HostLeg::Absent { closed: true },
                // WIRE-PERM-002/004: any protocol error is a denial.
                Err(e) => {
                    let message = match &e {
                        RequestError::Emission(f) => f.message().to_owned(),
                        other => other.to_string(),
                    };
                    self.publish_running_if_idle(broker, emit);
                    return Ok(vec![RaceAction::Settled(Settlement {
                        tool_use_id: ask.tool_use_id,
                        verdict: Verdict::Deny {
                            message,
                            interrupt: false,
                        },
                        decider: Decider::Host,
                    })]);
                }
            }
        } else {
            HostLeg::Absent {
                closed: self.contenders.host,
            }
        };
        let hook = if self.contenders.hook {
            actions.push(RaceAction::StartHook {
                tool_use_id: ask.tool_use_id.clone(),
                tool_name: ask.tool_name.clone(),
                input: ask.input.clone(),
            });
            HookLeg::Running
        } else {
            HookLeg::NotConfigured
        };
        self.prompts.push(Prompt {
            tool_use_id: ask.tool_use_id,
            host,
            hook,
        });
        Ok(actions)
    }

    /// Routes an inbound `control_response` through the broker; a resolution of a prompt's
    /// host request settles it (WIRE-PERM-001 step 5), a late one changes nothing.
    pub fn handle_response(
        &mut self,
        response: &ControlResponse<'_>,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
        now: Instant,
    ) -> Routed {
        match broker.handle_response(response, now, emit) {
            Dispatch::Resolved(r) => match self.handle_resolved(r, broker, emit) {
                Ok(actions) => Routed::Race(actions),
                Err(r) => Routed::Other(Dispatch::Resolved(r)),
            },
            other => Routed::Other(other),
        }
    }

    /// A `control_response` line the strict reader rejected (a duplicate member, an invalid
    /// envelope) whose `request_id` names a prompt's pending host request: the prompt settles
    /// as a denial (PERM-049: a malformed decision is a denial), as a success whose decision
    /// failed PERM-040..052 does. `None` when `id` is no prompt's pending request.
    pub fn handle_rejected(
        &mut self,
        id: &str,
        error: &agentx_wire::wire::Error,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
    ) -> Option<Vec<RaceAction>> {
        if !broker.pending_permission_ids().iter().any(|p| &**p == id) {
            return None;
        }
        let resolved = broker.handle_rejected_response(id, error)?;
        self.handle_resolved(resolved, broker, emit).ok()
    }

    /// Applies a broker resolution; `Err` gives it back when it is not a prompt's.
    pub fn handle_resolved(
        &mut self,
        resolved: Resolved,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
    ) -> Result<Vec<RaceAction>, Resolved> {
        let Some(i) = self
            .prompts
            .iter()
            .position(|p| matches!(&p.host, HostLeg::Pending(id) if *id == resolved.id))
        else {
            return Err(resolved);
        };
        let prompt = self.prompts.remove(i);
        let mut actions = Vec::with_capacity(2);
        if prompt.hook == HookLeg::Running {
            actions.push(RaceAction::KillHook {
                tool_use_id: prompt.tool_use_id.clone(),
            });
        }
        actions.push(RaceAction::Settled(Settlement {
            tool_use_id: prompt.tool_use_id,
            verdict: host_verdict(&resolved.outcome),
            decider: decider_of(&resolved.outcome),
        }));
        self.publish_running_if_idle(broker, emit);
        Ok(actions)
    }

    /// The hook's result (WIRE-PERM-001 steps 3–4): pass-through keeps waiting for the host;
    /// a decisive result wins, cancelling the pending host request with one
    /// `control_cancel_request`. A result for a prompt already settled (the late loser) or
    /// whose hook was killed changes nothing.
    pub fn handle_hook(
        &mut self,
        tool_use_id: &str,
        outcome: HookOutcome,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
        now: Instant,
    ) -> Vec<RaceAction> {
        let actions = self.hook_result(tool_use_id, outcome, broker, emit, now);
        note_settled(broker, &actions);
        actions
    }

    fn hook_result(
        &mut self,
        tool_use_id: &str,
        outcome: HookOutcome,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
        now: Instant,
    ) -> Vec<RaceAction> {
        let Some(i) = self
            .prompts
            .iter()
            .position(|p| p.tool_use_id == tool_use_id && p.hook == HookLeg::Running)
        else {
            return Vec::new();
        };
        let verdict = match outcome {
            HookOutcome::Pass => {
                self.prompts[i].hook = HookLeg::Passed;
                let HostLeg::Absent { closed } = self.prompts[i].host else {
                    return Vec::new();
                };
                // Nobody else can decide: fail closed.
                let prompt = self.prompts.remove(i);
                self.publish_running_if_idle(broker, emit);
                let (message, decider) = match closed {
                    true => (CONTROL_STREAM_CLOSED, Decider::StreamClosed),
                    false => (NO_PROMPT_AVAILABLE, Decider::NoPrompt),
                };
                return vec![RaceAction::Settled(Settlement {
                    tool_use_id: prompt.tool_use_id,
                    verdict: Verdict::deny(message),
                    decider,
                })];
            }
            HookOutcome::Allow { updated_input } => Verdict::Allow {
                updated_input,
                updated_permissions: Vec::new(),
            },
            HookOutcome::Deny { message } => Verdict::Deny {
                message: message.unwrap_or_else(|| DEFAULT_DENY_MESSAGE.to_owned()),
                interrupt: false,
            },
            HookOutcome::Failed => Verdict::deny(HOOK_FAILED),
        };
        let prompt = self.prompts.remove(i);
        if let HostLeg::Pending(id) = &prompt.host {
            // WIRE-PERM-001 step 3: the hook won; cancel the host request (WIRE-007: its late
            // answer is then known-late). The settlement stands if the emission fails.
            let _ = broker.abort(id, now, emit);
        }
        self.publish_running_if_idle(broker, emit);
        vec![RaceAction::Settled(Settlement {
            tool_use_id: prompt.tool_use_id,
            verdict,
            decider: Decider::Hook,
        })]
    }

    /// Interrupt (WIRE-011): one `control_cancel_request` per pending host request, in ask
    /// order; then `after` (the interrupt handler pushes its acknowledgement there); then
    /// every prompt settles as a denial (hooks killed). `running` is not published: the
    /// session's hard-interrupt order decides what follows. Returns the actions and the one
    /// emission failure, if any.
    pub fn cancel_all(
        &mut self,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
        now: Instant,
        after: Option<&mut AfterCancellation<'_>>,
    ) -> (Vec<RaceAction>, Option<EmissionFailure>) {
        let ids: Vec<Box<str>> = self
            .prompts
            .iter()
            .filter_map(|p| match &p.host {
                HostLeg::Pending(id) => Some(id.clone()),
                HostLeg::Absent { .. } => None,
            })
            .collect();
        let refs: Vec<&str> = ids.iter().map(|s| &**s).collect();
        let cancelled = broker.abort_many(&refs, now, emit, after);
        let mut actions = Vec::with_capacity(self.prompts.len() * 2);
        for prompt in self.prompts.drain(..) {
            if prompt.hook == HookLeg::Running {
                actions.push(RaceAction::KillHook {
                    tool_use_id: prompt.tool_use_id.clone(),
                });
            }
            actions.push(RaceAction::Settled(Settlement {
                tool_use_id: prompt.tool_use_id,
                verdict: Verdict::deny(PROMPT_INTERRUPTED),
                decider: Decider::Interrupt,
            }));
        }
        note_settled(broker, &actions);
        (actions, cancelled.failure)
    }

    /// A fatal stop: the broker shuts down (every pending waiter settles `Shutdown`, nothing
    /// is emitted and no new request starts) and every prompt settles as a denial, its hook
    /// killed. Nothing is published: the session is ending.
    pub fn shutdown(&mut self, broker: &mut Broker, now: Instant) -> Vec<RaceAction> {
        let _ = broker.shutdown(now);
        let mut actions = Vec::with_capacity(self.prompts.len() * 2);
        for prompt in self.prompts.drain(..) {
            if prompt.hook == HookLeg::Running {
                actions.push(RaceAction::KillHook {
                    tool_use_id: prompt.tool_use_id.clone(),
                });
            }
            actions.push(RaceAction::Settled(Settlement {
                tool_use_id: prompt.tool_use_id,
                verdict: Verdict::deny(CONTROL_STREAM_CLOSED),
                decider: Decider::StreamClosed,
            }));
        }
        note_settled(broker, &actions);
        actions
    }

    /// Input EOF (WIRE-008, after the final record was dispatched): the broker rejects every
    /// pending request with `control stream closed`; each prompt waiting on one settles as a
    /// denial (its hook killed), and `running` is published when no prompt remains. Prompts
    /// with no host request keep their hook. Resolutions of other waiters are returned.
    pub fn handle_eof(
        &mut self,
        broker: &mut Broker,
        emit: &mut dyn Emitter,
        now: Instant,
    ) -> (Vec<RaceAction>, Vec<Resolved>) {
        let mut actions = Vec::new();
        let mut others = Vec::new();
        let before = self.prompts.len();
        for r in broker.handle_eof(now) {
            let Some(i) = self
                .prompts
                .iter()
                .position(|p| matches!(&p.host, HostLeg::Pending(id) if *id == r.id))
            else {
                others.push(r);
                continue;
            };
            let prompt = self.prompts.remove(i);
            if prompt.hook == HookLeg::Running {
                actions.push(RaceAction::KillHook {
                    tool_use_id: prompt.tool_use_id.clone(),
                });
            }
            actions.push(RaceAction::Settled(Settlement {
                tool_use_id: prompt.tool_use_id,
                verdict: host_verdict(&r.outcome),
                decider: Decider::StreamClosed,
            }));
        }
        if before > 0 {
            self.publish_running_if_idle(broker, emit);
        }
        note_settled(broker, &actions);
        (actions, others)
    }

    fn publish_running_if_idle(&self, broker: &mut Broker, emit: &mut dyn Emitter) {
        if self.prompts.is_empty() {
            let _ = broker.emit(emit, Emission::State(StateChange::Running));
        }
    }
}

/// Every settled tool-use ID joins the broker's resolved set, whichever path won, so a late
/// response naming it is a duplicate and a second ask is refused (PERM-050, PERM-053).
fn note_settled(broker: &mut Broker, actions: &[RaceAction]) {
    for a in actions {
        if let RaceAction::Settled(s) = a {
            broker.record_resolved_tool_use(&s.tool_use_id);
        }
    }
}

/// The host's outcome as a verdict: only a validated decision can allow (PERM-049).
fn host_verdict(outcome: &Outcome) -> Verdict {
    match outcome {
        Outcome::Success(Payload::Decision(d)) => match d {
            PermissionDecision::Allow {
                updated_input,
                updated_permissions,
                ..
            } => Verdict::Allow {
                updated_input: updated_input.clone(),
                updated_permissions: updated_permissions.clone().unwrap_or_default(),
            },
            PermissionDecision::Deny {
                message, interrupt, ..
            } => Verdict::Deny {
                message: message.to_string(),
                interrupt: *interrupt == Some(true),
            },
        },
        // A success that is not a decision cannot happen for a `can_use_tool` waiter; deny.
        Outcome::Success(_) | Outcome::Invalid(_) => Verdict::deny(INVALID_DECISION),
        Outcome::Error { message, .. } => Verdict::Deny {
            message: bounded(message),
            interrupt: false,
        },
        Outcome::Aborted => Verdict::deny(PROMPT_INTERRUPTED),
        Outcome::StreamClosed => Verdict::deny(CONTROL_STREAM_CLOSED),
        Outcome::Shutdown => Verdict::deny(CONTROL_STREAM_CLOSED),
    }
}

fn decider_of(outcome: &Outcome) -> Decider {
    match outcome {
        Outcome::StreamClosed | Outcome::Shutdown => Decider::StreamClosed,
        Outcome::Aborted => Decider::Interrupt,
        _ => Decider::Host,
    }
}

/// A host error message as a deny message: PROFILE §5 echoes at most 64 bytes of input.
fn bounded(message: &str) -> String {
    let mut end = message.len().min(64);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.get(..end).unwrap_or("").to_owned()
}
