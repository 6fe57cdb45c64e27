//! The open permission prompts of a session: the race of WIRE-PERM-001..004 between the
//! host's `can_use_tool` request and the permission hook, the correlation of host responses,
//! the known-late cancelled requests (WIRE-007) and the bounded set of the last 1,000
//! resolved tool-use IDs (duplicate suppression, PERM-050).
//!
//! Owns: who won a prompt (the first decisive result in completion order; `pass` is not
//! decisive), fail-closed settlement (PERM-049: errors, malformed decisions, stream close and
//! cancellation are denials, never an allow), and that each tool-use ID settles exactly once
//! (PERM-053). Must never: write a record or decide a tool's permission mode (the session
//! writes what this module returns; `policy` decides allow/deny/ask).

use std::collections::{HashSet, VecDeque};

use crate::wire::permission::{CanUseTool, PermissionDecision, PermissionUpdate};
use crate::wire::{ControlOutcome, ControlResponse, IntoOwned, RawObject};

/// How many resolved tool-use IDs are remembered (Ordering, replay, and duplicate
/// suppression: "a bounded set of 1,000").
pub const RESOLVED_CAPACITY: usize = 1000;

/// How a prompt settled.
#[derive(Clone, Debug, PartialEq)]
pub enum Settlement {
    /// Run the tool, with the winner's `updatedInput` (compact JSON) when given.
    Allow {
        updated_input: Option<String>,
        updated_permissions: Vec<PermissionUpdate<'static>>,
    },
    /// Do not run it; `interrupt` (PERM-045) also interrupts the turn.
    Deny { message: String, interrupt: bool },
}

impl Settlement {
    pub(crate) fn deny(message: impl Into<String>) -> Settlement {
        Settlement::Deny {
            message: message.into(),
            interrupt: false,
        }
    }
}

/// One open prompt.
#[derive(Debug)]
pub(crate) struct Prompt {
    pub(crate) tool_use_id: String,
    /// The host request still pending, with the request for validating its answer
    /// (WIRE-009).
    pub(crate) host: Option<(String, CanUseTool<'static>)>,
    pub(crate) hook_running: bool,
}

/// What an inbound `control_response` meant.
#[derive(Debug)]
pub(crate) enum Routed {
    /// It answered an open prompt, which settled. `kill_hook` when the hook still ran.
    Settled {
        tool_use_id: String,
        settlement: Settlement,
        kill_hook: bool,
    },
    /// A known-late response to a cancelled request (WIRE-007) or a duplicate for a resolved
    /// tool-use ID (PERM-050): ignored.
    Ignored,
    /// No pending request and no known tool identity (PERM-050).
    Orphan,
}

/// What a hook result meant.
#[derive(Debug)]
pub(crate) enum HookRouted {
    /// The hook decided; `cancel` is the host request to cancel (WIRE-PERM-001 step 3).
    Settled {
        settlement: Settlement,
        cancel: Option<String>,
    },
    /// `pass` with the host still pending: keep waiting.
    Waiting,
    /// Not an open prompt's hook (late loser, killed hook): ignored.
    Ignored,
}

/// The open prompts and the resolved-ID memory.
#[derive(Debug, Default)]
pub(crate) struct Prompts {
    open: Vec<Prompt>,
    resolved: VecDeque<String>,
    resolved_set: HashSet<String>,
    /// Request IDs of settled prompts (cancelled locally or answered): a response to one is
    /// known-late or a duplicate (WIRE-007, PERM-050). Bounded like `resolved`.
    late: VecDeque<String>,
    next_request: u64,
}

impl Prompts {
    /// A fresh request ID.
    pub(crate) fn request_id(&mut self) -> String {
        self.next_request += 1;
        format!("agentx-perm-{}", self.next_request)
    }

    /// Registers a prompt before its request frame is pushed (WIRE-006).
    pub(crate) fn open(&mut self, prompt: Prompt) {
        self.open.push(prompt);
    }

    /// No prompt is open (PROFILE §8: back to `running`).
    pub(crate) fn is_empty(&self) -> bool {
        self.open.is_empty()
    }

    /// Open prompts' tool-use IDs, oldest first.
    pub(crate) fn open_ids(&self) -> impl Iterator<Item = &str> {
        self.open.iter().map(|p| p.tool_use_id.as_str())
    }

    /// Pending host request IDs, oldest first.
    pub(crate) fn pending_requests(&self) -> impl Iterator<Item = &str> {
        self.open
            .iter()
            .filter_map(|p| p.host.as_ref().map(|(r, _)| r.as_str()))
    }

    /// True when `tool_use_id` settled recently (duplicate suppression).
    pub(crate) fn is_resolved(&self, tool_use_id: &str) -> bool {
        self.resolved_set.contains(tool_use_id)
    }

    /// Remembers a settled tool-use ID, evicting the oldest beyond 1,000.
    pub(crate) fn mark_resolved(&mut self, tool_use_id: &str) {
        if !self.resolved_set.insert(tool_use_id.to_string()) {
            return;
        }
        self.resolved.push_back(tool_use_id.to_string());
        if self.resolved.len() > RESOLVED_CAPACITY {
            if let Some(old) = self.resolved.pop_front() {
                self.resolved_set.remove(&old);
            }
        }
    }

    fn mark_late(&mut self, request_id: String) {
        self.late.push_back(request_id);
        if self.late.len() > RESOLVED_CAPACITY {
            self.late.pop_front();
        }
    }

    /// Removes a prompt exactly once (WIRE-006): its tool-use ID becomes resolved and its
    /// host request, if any, known-late (a later response to it is ignored, WIRE-007).
    fn take(&mut self, i: usize) -> Prompt {
        let p = self.open.remove(i);
        self.mark_resolved(&p.tool_use_id);
        if let Some((r, _)) = &p.host {
            self.mark_late(r.clone());
        }
        p
    }

    /// Routes an inbound `control_response` (WIRE-009: the waiter's own schema validates it
    /// before resolution; PERM-049: anything but a valid decision is a denial).
    pub(crate) fn on_response(&mut self, resp: &ControlResponse<'_>) -> Routed {
        let id = resp.request_id.as_str();
        let found = self
            .open
            .iter()
            .position(|p| p.host.as_ref().is_some_and(|(r, _)| r == id));
        let Some(i) = found else {
            if self.late.iter().any(|r| r == id) {
                return Routed::Ignored;
            }
            return match decision_tool_use_id(&resp.outcome) {
                Some(t) if self.is_resolved(&t) => Routed::Ignored,
                _ => Routed::Orphan,
            };
        };
        let settlement = match &self.open[i].host {
            Some((_, request)) => match PermissionDecision::from_outcome(&resp.outcome, request) {
                Ok(d) => settlement_of(d),
                Err(_) => match &resp.outcome {
                    ControlOutcome::Error { error, .. } => Settlement::deny(error.to_string()),
                    _ => Settlement::deny("invalid permission decision"),
                },
            },
            None => Settlement::deny("invalid permission decision"),
        };
        let p = self.take(i);
        Routed::Settled {
            tool_use_id: p.tool_use_id,
            settlement,
            kill_hook: p.hook_running,
        }
    }

    /// Routes a hook result (WIRE-PERM-001: the first decisive result wins; `pass` is not
    /// decisive; a late loser changes nothing).
    pub(crate) fn on_hook(
        &mut self,
        tool_use_id: &str,
        outcome: &super::HookOutcome,
    ) -> HookRouted {
        let Some(i) = self
            .open
            .iter()
            .position(|p| p.tool_use_id == tool_use_id && p.hook_running)
        else {
            return HookRouted::Ignored;
        };
        let settlement = match outcome {
            super::HookOutcome::Pass => {
                self.open[i].hook_running = false;
                if self.open[i].host.is_some() {
                    return HookRouted::Waiting;
                }
                // Nobody else can decide: fail closed (WIRE-PERM-002).
                Settlement::deny("no permission prompt available")
            }
            super::HookOutcome::Allow { updated_input } => Settlement::Allow {
                updated_input: updated_input.clone(),
                updated_permissions: Vec::new(),
            },
            super::HookOutcome::Deny { message } => Settlement::deny(
                message
                    .clone()
                    .unwrap_or_else(|| crate::wire::permission::DEFAULT_DENY_MESSAGE.to_string()),
            ),
            super::HookOutcome::Failed => Settlement::deny("permission hook failed"),
        };
        let mut p = self.take(i);
        let cancel = p.host.take().map(|(r, _)| r);
        HookRouted::Settled { settlement, cancel }
    }

    /// Closes every open prompt (interrupt, EOF, fatal stop), oldest first: `(tool_use_id,
    /// pending host request, hook still running)`. Cancelled request IDs become known-late.
    pub(crate) fn close_all(&mut self) -> Vec<(String, Option<String>, bool)> {
        let mut out = Vec::with_capacity(self.open.len());
        while !self.open.is_empty() {
            let p = self.take(0);
            let req = p.host.map(|(r, _)| r);
            out.push((p.tool_use_id, req, p.hook_running));
        }
        out
    }
}

fn settlement_of(d: PermissionDecision<'_>) -> Settlement {
    match d {
        PermissionDecision::Allow {
            updated_input,
            updated_permissions,
            ..
        } => Settlement::Allow {
            updated_input: updated_input.map(|o: RawObject<'_>| {
                let mut out = Vec::new();
                o.0.write_canonical(&mut out);
                String::from_utf8(out).unwrap_or_else(|_| "{}".to_string())
            }),
            updated_permissions: updated_permissions
                .unwrap_or_default()
                .into_iter()
                .map(IntoOwned::into_owned)
                .collect(),
        },
        PermissionDecision::Deny {
            message, interrupt, ..
        } => Settlement::Deny {
            message: message.into_owned(),
            interrupt: interrupt.unwrap_or(false),
        },
    }
}

/// The `toolUseID` (or alias) a success decision names, if it can be read.
fn decision_tool_use_id(outcome: &ControlOutcome<'_>) -> Option<String> {
    let ControlOutcome::Success {
        response: Some(raw),
    } = outcome
    else {
        return None;
    };
    let doc = raw.document().ok()?;
    let obj = doc.root().as_object()?;
    let v = obj.get("toolUseID").or_else(|| obj.get("tool_use_id"))?;
    Some(v.as_str()?.decode().into_owned())
}
