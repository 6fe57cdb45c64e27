//! Tool and hook processes of one session: each [`Action::RunTool`](agentx_core::session::Action)
//! and `StartHook` runs on a thread of its own and reports through the loop's channel; a kill
//! switch per tool-use ID ends it on `CancelTool` / `KillHook` (the whole process group).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::hook::{run_hook, HookDecision, PermissionHook};
use crate::tools::dispatch::{self, ToolContext};
use crate::tools::env::EnvOverrides;
use crate::tools::process::KillSwitch;
use crate::tools::seen::Ledger;
use crate::tools::todo::TodoList;
use crate::tools::ToolCall;
use agentx_core::session::{HookOutcome, ToolOutcome};

use super::event::Event;
use super::event::EventSender;

/// Tool and hook processes, each on a thread of its own, reporting to the loop as events.
pub struct Workers {
    tx: EventSender,
    ctx: ToolContext,
    hook: Option<PermissionHook>,
    env: Arc<EnvOverrides>,
    tools: HashMap<String, KillSwitch>,
    hooks: HashMap<String, KillSwitch>,
    /// Finished calls whose process group may still hold what they started in the
    /// background (PROFILE §10): killed at agentx's exit.
    leftovers: Vec<KillSwitch>,
}

impl Workers {
    /// Workers reporting on `tx`, running tools in `cwd`; `todos` is the session's todo list
    /// (a resumed session's, PROFILE §17).
    pub fn new(
        tx: EventSender,
        cwd: PathBuf,
        hook: Option<PermissionHook>,
        todos: TodoList,
    ) -> Workers {
        Workers {
            tx,
            ctx: ToolContext {
                cwd,
                ledger: Ledger::default(),
                todos,
            },
            hook,
            env: Arc::default(),
            tools: HashMap::new(),
            hooks: HashMap::new(),
            leftovers: Vec::new(),
        }
    }

    /// `update_environment_variables`: applies to later tool and hook processes.
    /// Linear in the update; copies the overrides only while a running call still holds them.
    pub fn update_env(&mut self, variables: Vec<(String, Option<String>)>) {
        Arc::make_mut(&mut self.env).update(variables);
    }

    /// Forgets finished calls, keeping those whose group still has live processes.
    fn prune(map: &mut HashMap<String, KillSwitch>, leftovers: &mut Vec<KillSwitch>) {
        leftovers.retain(KillSwitch::has_leftovers);
        map.retain(|_, k| {
            if !k.is_finished() {
                return true;
            }
            if k.has_leftovers() {
                leftovers.push(k.clone());
            }
            false
        });
    }

    /// Starts a tool call; its result comes back as `Event::ToolDone`.
    pub fn run_tool(&mut self, tool_use_id: String, name: &str, input_json: &str) {
        let call = match ToolCall::parse(name, input_json) {
            Ok(c) => c,
            Err(e) => {
                let _ = self.tx.send(Event::ToolDone(
                    tool_use_id,
                    ToolOutcome::error(e.to_string()),
                ));
                return;
            }
        };
        let kill = KillSwitch::new();
        Self::prune(&mut self.tools, &mut self.leftovers);
        self.tools.insert(tool_use_id.clone(), kill.clone());
        let (tx, ctx, env) = (self.tx.clone(), self.ctx.clone(), self.env.clone());
        let spawned = std::thread::Builder::new()
            .name("agentx-tool".into())
            .spawn(move || {
                let out = dispatch::run(&ctx, &call, &env, &kill);
                kill.finish();
                let _ = tx.send(Event::ToolDone(tool_use_id, out));
            });
        if spawned.is_err() {
            let _ = self.tx.send(Event::Diagnostic(
                "agentx: cannot start a tool thread".into(),
            ));
        }
    }

    /// Kills a running tool (its process group).
    pub fn cancel_tool(&mut self, tool_use_id: &str) {
        if let Some(k) = self.tools.remove(tool_use_id) {
            k.kill();
        }
    }

    /// Starts the permission hook for a tool use; its answer comes back as `Event::HookDone`.
    pub fn start_hook(
        &mut self,
        tool_use_id: String,
        session_id: String,
        tool_name: String,
        input_json: String,
    ) {
        let Some(hook) = self.hook.clone() else {
            // Not configured: the session should not ask; fail closed if it does.
            let _ = self
                .tx
                .send(Event::HookDone(tool_use_id, HookOutcome::Failed));
            return;
        };
        let kill = KillSwitch::new();
        Self::prune(&mut self.hooks, &mut self.leftovers);
        self.hooks.insert(tool_use_id.clone(), kill.clone());
        let (tx, env) = (self.tx.clone(), self.env.clone());
        let _ = std::thread::Builder::new()
            .name("agentx-hook".into())
            .spawn(move || {
                let d = run_hook(
                    &hook,
                    &session_id,
                    &tool_name,
                    &tool_use_id,
                    &input_json,
                    &env,
                    &kill,
                );
                kill.finish();
                let outcome = match d {
                    HookDecision::Allow { updated_input } => HookOutcome::Allow { updated_input },
                    HookDecision::Deny { message } => HookOutcome::Deny {
                        message: Some(message),
                    },
                    HookDecision::Pass => HookOutcome::Pass,
                    HookDecision::Failed => HookOutcome::Failed,
                };
                let _ = tx.send(Event::HookDone(tool_use_id, outcome));
            });
    }

    /// Kills a running hook.
    pub fn kill_hook(&mut self, tool_use_id: &str) {
        if let Some(k) = self.hooks.remove(tool_use_id) {
            k.kill();
        }
    }

    /// Kills every running tool and hook, and what finished calls left running in their
    /// process groups (process exit, PROFILE §10).
    pub fn kill_all(&mut self) {
        for (_, k) in self.tools.drain().chain(self.hooks.drain()) {
            k.kill();
            k.kill_leftovers();
        }
        for k in self.leftovers.drain(..) {
            k.kill_leftovers();
        }
    }
}
