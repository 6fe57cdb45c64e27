//! The tool uses of a finished message: PROFILE §16's `PreToolUse` first, then PROFILE §10's
//! evaluation in block order (allow runs the tool, or a `tools/call` for an SDK MCP tool;
//! deny settles it with a denial; ask opens a permission prompt), the prompts' settlements
//! (PERM-053: applied exactly once), tool completions (then `PostToolUse`), and the sandbox
//! network prompt of an open call (WIRE-PERM-004).
//!
//! Must never: run a tool that a hook, §10 or a prompt denied, or settle a use twice.

use std::time::Instant;

use crate::model::NetworkDecision;
use agentx_wire::json::{write_str, write_u64};
use agentx_wire::wire::RawJson;

use super::hooks;
use super::{canonical_object, Turn, UseState};
use crate::session::policy::{self, Verdict};
use crate::session::prompts::{Asked, Settlement};
use crate::session::records::Denial;
use crate::session::sdk_hooks::Combined;
use crate::session::{Action, HookOutcome, Session, ToolOutcome};

impl Session {
    /// The `addRules` of an allow decision join the rules in force; the first rule refused at
    /// [`policy::MAX_RULES`] writes [`policy::RULES_FULL`].
    fn apply_rules(&mut self, updates: &[agentx_wire::wire::PermissionUpdate<'_>]) {
        if self.rules.apply(updates) {
            self.out.diagnostic(policy::RULES_FULL.to_string());
        }
    }

    /// PROFILE §10 for each tool use of the finished message, in block order.
    pub(super) fn evaluate_uses(&mut self, t: &mut Turn, now: Instant) {
        for i in 0..t.uses.len() {
            if self.out.turn_refused() {
                // A record of the turn did not fit (a `can_use_tool` request): the turn ends
                // after this step; nothing more starts.
                break;
            }
            // PROFILE §16: `PreToolUse` runs before §10's evaluation.
            if t.uses[i].state == UseState::Pending {
                match self.pre_tool_use(t, i, now) {
                    Some(pre) => self.evaluate_use(t, i, &pre, now),
                    None => t.uses[i].state = UseState::PreHook,
                }
                continue;
            }
            self.evaluate_use(t, i, &Default::default(), now);
        }
    }

    /// PROFILE §10 for one tool use, after its `PreToolUse` hooks (PROFILE §16): a denial or
    /// block denies; `updatedInput` replaces the input; `allow` skips the ask and `ask`
    /// forces it (a §10 denial or an invalid input stands either way).
    pub(crate) fn evaluate_use(&mut self, t: &mut Turn, i: usize, pre: &Combined, now: Instant) {
        t.hooks.halt_with(pre.halt.clone());
        if let Some(message) = &pre.block {
            self.deny_use(t, i, message.clone());
            return;
        }
        if let Some(input) = pre.updated_input.as_deref().and_then(canonical_object) {
            t.uses[i].input = input;
        }
        if t.uses[i].state == UseState::PreHook {
            t.uses[i].state = UseState::Pending;
        }
        let u = t.uses[i].clone();
        let verdict = match &u.state {
            UseState::Pending => {
                let offered: Vec<String> =
                    self.config.tools.iter().map(|t| t.name.clone()).collect();
                let scope = policy::Scope {
                    mode: self.config.permission_mode,
                    cwd: &self.config.cwd,
                    add_dirs: &self.config.add_dirs,
                    tool_rules: &self.config.tool_rules,
                    offered: &offered,
                    resolve: self.config.resolve_links.as_ref(),
                };
                policy::evaluate(&scope, &self.rules, &u.name, &u.input)
            }
            UseState::Invalid(e) => Verdict::Invalid(e.clone()),
            _ => return,
        };
        let verdict = hooks::pre_verdict(pre.permission, verdict);
        match verdict {
            Verdict::Allow => self.run_tool(t, i, None, now),
            Verdict::Deny(message) => self.deny_use(t, i, message),
            Verdict::Invalid(message) => {
                t.uses[i].tool_use_result = self.error_result(&u.name, &message);
                t.uses[i].state = UseState::Done {
                    content: message,
                    is_error: true,
                }
            }
            Verdict::Ask => match self.ask_permission(&u.id, &u.name, &u.input, now) {
                Asked::Open => t.uses[i].state = UseState::Asking,
                // Settled at once: nobody can answer (PROFILE §10), or the request could
                // not leave (WIRE-PERM-002: a denial). The session's emitter never answers
                // re-entrantly, so an immediate allow does not occur; it would run.
                Asked::Settled(Settlement::Allow {
                    updated_input,
                    updated_permissions,
                }) => {
                    self.apply_rules(&updated_permissions);
                    self.run_tool(t, i, updated_input, now);
                }
                // The request was too large for one line: nobody was asked, so it is not
                // a denial; the tool use ends with the output error (with its turn).
                Asked::Settled(Settlement::Deny { .. }) if self.out.turn_refused() => {
                    t.uses[i].state = UseState::Done {
                        content: self.out.turn_error(),
                        is_error: true,
                    }
                }
                Asked::Settled(Settlement::Deny { message, .. }) => self.deny_use(t, i, message),
            },
        }
    }

    fn run_tool(&mut self, t: &mut Turn, i: usize, updated_input: Option<String>, now: Instant) {
        let u = &mut t.uses[i];
        if let Some(input) = updated_input {
            u.input = input;
        }
        // PROFILE §16: a tool of an SDK MCP server runs as `tools/call` on the host.
        if self.is_mcp_tool(&t.uses[i].name) {
            self.mcp_call(t, i, now);
            return;
        }
        let u = &mut t.uses[i];
        u.state = UseState::Running;
        self.actions.push_back(Action::RunTool {
            tool_use_id: u.id.clone(),
            name: u.name.clone(),
            input_json: u.input.clone(),
        });
    }

    /// PROFILE §17: a built-in tool's failed call carries `tool_use_result`, exactly its error
    /// text as a JSON string, when it failed before running too (invalid input, a denial). A
    /// tool the session does not offer (`unknown tool`) and an MCP tool carry none.
    fn error_result(&self, name: &str, message: &str) -> Vec<RawJson<'static>> {
        let built_in =
            crate::tools::NAMES.contains(&name) && self.config.tools.iter().any(|t| t.name == name);
        if !built_in {
            return Vec::new();
        }
        let mut text = Vec::with_capacity(message.len() + 2);
        write_str(&mut text, message);
        RawJson::parse_owned(text).ok().into_iter().collect()
    }

    fn deny_use(&mut self, t: &mut Turn, i: usize, message: String) {
        t.uses[i].tool_use_result = self.error_result(&t.uses[i].name, &message);
        let u = &mut t.uses[i];
        t.denials.push(Denial {
            tool_name: u.name.clone(),
            tool_use_id: u.id.clone(),
            tool_input: RawJson::parse_owned(u.input.as_bytes().to_vec())
                .unwrap_or_else(|_| RawJson::empty_object()),
        });
        u.state = UseState::Done {
            content: message,
            is_error: true,
        };
    }

    /// A prompt settled (host, hook, EOF): apply it exactly once (PERM-053).
    pub(crate) fn settle(&mut self, tool_use_id: &str, settlement: Settlement, now: Instant) {
        let Some(mut t) = self.turn.take() else {
            return;
        };
        let mut interrupt = false;
        if t.network.as_ref().is_some_and(|(id, _)| id == tool_use_id) {
            let (id, input) = t.network.take().unwrap_or_default();
            let decision = match settlement {
                // PROFILE §10: rules an allow adds (PERM-043) hold for the rest of the
                // process, whatever the prompt was for.
                Settlement::Allow {
                    updated_permissions,
                    ..
                } => {
                    self.apply_rules(&updated_permissions);
                    NetworkDecision::Allowed
                }
                Settlement::Deny { interrupt: i, .. } => {
                    interrupt = i;
                    t.denials.push(Denial {
                        tool_name: agentx_wire::wire::permission::SANDBOX_NETWORK_ACCESS
                            .to_string(),
                        tool_use_id: id,
                        tool_input: RawJson::parse_owned(input.into_bytes())
                            .unwrap_or_else(|_| RawJson::empty_object()),
                    });
                    NetworkDecision::Denied
                }
            };
            self.actions.push_back(Action::ResumeModel {
                turn: t.id,
                decision,
            });
        } else if let Some(i) = t
            .uses
            .iter()
            .position(|u| u.id == tool_use_id && u.state == UseState::Asking)
        {
            match settlement {
                Settlement::Allow {
                    updated_input,
                    updated_permissions,
                } => {
                    self.apply_rules(&updated_permissions);
                    self.run_tool(&mut t, i, updated_input, now);
                }
                Settlement::Deny {
                    message,
                    interrupt: i2,
                } => {
                    interrupt = i2;
                    self.deny_use(&mut t, i, message);
                }
            }
        }
        // PROFILE §8: back to `running` only when no prompt remains: the race published it.
        self.turn = Some(t);
        if interrupt {
            // PERM-045: a deny with `interrupt: true` interrupts the turn.
            self.interrupt(None, now);
            return;
        }
        self.advance(now);
    }

    /// A tool finished.
    pub(crate) fn tool_done(&mut self, tool_use_id: &str, outcome: ToolOutcome, now: Instant) {
        let Some(t) = self.turn.as_mut() else { return };
        if let Some(u) = t.uses.iter_mut().find(|u| {
            u.id == tool_use_id && matches!(u.state, UseState::Running | UseState::McpCall)
        }) {
            u.state = UseState::PostHook {
                content: outcome.content,
                is_error: outcome.is_error,
            };
            u.tool_use_result = outcome.tool_use_result;
            // PROFILE §16: `PostToolUse` runs after the tool, before its `tool_result`.
            self.post_tool_use(tool_use_id, now);
            self.advance(now);
        }
    }

    /// A hook answered.
    pub(crate) fn hook_done(&mut self, tool_use_id: &str, outcome: HookOutcome, now: Instant) {
        self.permission_hook(tool_use_id, outcome, now);
    }

    /// WIRE-PERM-004: the sandbox network request takes the permission path.
    pub(super) fn network_access(
        &mut self,
        t: &mut Turn,
        host: &str,
        port: Option<u16>,
        now: Instant,
    ) {
        let mut input = Vec::from(&b"{\"host\":"[..]);
        write_str(&mut input, host);
        input.extend_from_slice(b",\"port\":");
        match port {
            Some(p) => write_u64(&mut input, u64::from(p)),
            None => input.extend_from_slice(b"null"),
        }
        input.push(b'}');
        let input = String::from_utf8(input).unwrap_or_default();
        t.network_count += 1;
        let id = format!("toolu_network_{}_{}", t.id, t.network_count);
        let tool = agentx_wire::wire::permission::SANDBOX_NETWORK_ACCESS;
        let verdict = policy::network_verdict(self.config.permission_mode, &self.rules, host);
        let denied = |t: &mut Turn, id: String, input: String| {
            t.denials.push(Denial {
                tool_name: tool.to_string(),
                tool_use_id: id,
                tool_input: RawJson::parse_owned(input.into_bytes())
                    .unwrap_or_else(|_| RawJson::empty_object()),
            });
        };
        match verdict {
            Verdict::Allow => self.actions.push_back(Action::ResumeModel {
                turn: t.id,
                decision: NetworkDecision::Allowed,
            }),
            Verdict::Ask => match self.ask_permission(&id, tool, &input, now) {
                Asked::Open => t.network = Some((id, input)),
                // The request was too large for one line: nobody was asked (no denial); the
                // turn ends after this step and its model call is cancelled.
                Asked::Settled(Settlement::Deny { .. }) if self.out.turn_refused() => {}
                Asked::Settled(Settlement::Allow {
                    updated_permissions,
                    ..
                }) => {
                    // PERM-043 as in `settle`: an allow's rules hold for the process.
                    self.apply_rules(&updated_permissions);
                    self.actions.push_back(Action::ResumeModel {
                        turn: t.id,
                        decision: NetworkDecision::Allowed,
                    })
                }
                // WIRE-PERM-004: any protocol error denies.
                Asked::Settled(Settlement::Deny { .. }) => {
                    denied(t, id, input);
                    self.actions.push_back(Action::ResumeModel {
                        turn: t.id,
                        decision: NetworkDecision::Denied,
                    });
                }
            },
            _ => {
                denied(t, id, input);
                self.actions.push_back(Action::ResumeModel {
                    turn: t.id,
                    decision: NetworkDecision::Denied,
                });
            }
        }
    }
}
