//! Calls of in-process MCP tools (PROFILE §16): an allowed use of `mcp__<server>__<tool>`
//! (after the hooks, §10's evaluation and the permission race, like any tool) becomes one
//! `mcp_message` control request carrying JSON-RPC `tools/call` on the session's one broker;
//! its answer is the tool's outcome (the text of the result's content blocks; `isError`, a
//! JSON-RPC error, an error answer or a malformed one make an `is_error` `tool_result`), and
//! from there the use goes on as any tool's (`PostToolUse`, then its `tool_result`).
//!
//! A call waits at most `McpConfig::call_timeout`; then it is cancelled with
//! `control_cancel_request` (WIRE-007: a late answer is known-late) and the use gets an
//! `is_error` result saying so. An interrupt cancels every pending call with the hook
//! callbacks, oldest first, before its acknowledgement (WIRE-011, `sdk_hooks`), and the
//! hard-interrupt order writes the use's `interrupted` result.
//!
//! Must never: run a call whose use was not allowed, or settle a use twice (the outcome goes
//! through `Session::tool_done`, which takes only a use still waiting for its call).

use std::time::Instant;

use crate::model::TurnId;
use agentx_wire::control::{Outcome, Payload, Resolved, Started};
use agentx_wire::wire::subtypes::McpMessage;
use agentx_wire::wire::{ControlRequestBody, RawJson, Text};

use super::mcp;
use super::turn::{Turn, UseState};
use super::{Session, ToolOutcome};

/// A pending `tools/call`.
#[derive(Debug)]
pub(crate) struct Call {
    pub(crate) request_id: Box<str>,
    tool_use_id: String,
    turn: TurnId,
    rpc_id: u64,
    pub(crate) deadline: Option<Instant>,
    /// The name the model called (`mcp__server__tool`).
    name: String,
    /// Its server.
    server: String,
}

fn failed(why: &str) -> ToolOutcome {
    ToolOutcome::error(format!("MCP call failed: {why}"))
}

/// A call's answer as the tool's outcome.
fn outcome_of(outcome: &Outcome, rpc_id: u64) -> ToolOutcome {
    match outcome {
        Outcome::Success(Payload::Json(raw)) => {
            match mcp::response_result(raw.as_bytes(), Some(rpc_id)) {
                Ok(result) => {
                    let (content, is_error) = mcp::call_outcome(&result);
                    ToolOutcome {
                        content,
                        is_error,
                        tool_use_result: Vec::new(),
                    }
                }
                // A JSON-RPC error (its message) or a malformed answer.
                Err(why) => failed(&why),
            }
        }
        Outcome::Success(_) => failed("the answer has no mcp_response object"),
        Outcome::Error { message, .. } => failed(agentx_wire::wire::responses::cut(message, 256)),
        Outcome::Invalid(_) => failed("an invalid control_response"),
        Outcome::Aborted => failed("cancelled"),
        Outcome::StreamClosed | Outcome::Shutdown => failed("control stream closed"),
    }
}

impl Session {
    /// True when `name` is a tool of a connected SDK MCP server.
    pub(crate) fn is_mcp_tool(&self, name: &str) -> bool {
        self.mcp.tool(name).is_some()
    }

    /// Starts the `tools/call` of allowed use `i` (its state becomes [`UseState::McpCall`]).
    /// An outcome known at once (the stream closed, a loopback answer) is applied after this
    /// step ([`Session::mcp_ready`]), when the turn is back in the session.
    pub(crate) fn mcp_call(&mut self, t: &mut Turn, i: usize, now: Instant) {
        let u = &mut t.uses[i];
        u.state = UseState::McpCall;
        let (id, name, input) = (u.id.clone(), u.name.clone(), u.input.clone());
        let Some((server, tool)) = self
            .mcp
            .tool(&name)
            .map(|(s, t)| (s.to_string(), t.to_string()))
        else {
            self.mcp
                .ready
                .push_back((id, failed("the tool is not served")));
            return;
        };
        // PROFILE §18: a user's server is called by the driver's client.
        if let Some(user) = self
            .mcp
            .servers
            .iter()
            .find(|s| s.name == server)
            .and_then(|s| s.user.as_ref())
        {
            let timeout_ms = user.timeout_ms.unwrap_or_else(|| {
                u64::try_from(self.config.mcp.tool_timeout.as_millis()).unwrap_or(u64::MAX)
            });
            t.uses[i].state = UseState::Running;
            self.actions.push_back(crate::session::Action::McpCall {
                tool_use_id: id,
                server,
                tool,
                input_json: input,
                timeout_ms,
            });
            return;
        }
        let rpc_id = self.mcp.rpc_id();
        let message = mcp::tools_call_message(rpc_id, &tool, &input)
            .and_then(|m| RawJson::parse_owned(m).ok());
        let Some(message) = message else {
            self.mcp
                .ready
                .push_back((id, failed("its input is not an object")));
            return;
        };
        let server_name = server.clone();
        let body = ControlRequestBody::McpMessage(McpMessage {
            server_name: Text::Owned(server),
            message,
        });
        let outcome = match self.mcp_request(body, now) {
            Ok(Started::Pending { id: request_id }) => {
                self.mcp.calls.push(Call {
                    request_id,
                    tool_use_id: id,
                    turn: t.id,
                    rpc_id,
                    deadline: now.checked_add(self.config.mcp.call_timeout),
                    name,
                    server: server_name,
                });
                return;
            }
            Ok(Started::Resolved(r)) => outcome_of(&r.outcome, rpc_id),
            Err(agentx_wire::control::RequestError::StreamClosed) => {
                failed("control stream closed")
            }
            Err(_) => failed("the request could not be written"),
        };
        self.mcp.ready.push_back((id, outcome));
    }

    /// Outcomes known while their turn was borrowed: applied now.
    pub(crate) fn mcp_ready(&mut self, now: Instant) {
        while let Some((id, outcome)) = self.mcp.ready.pop_front() {
            self.tool_done(&id, outcome, now);
        }
    }

    /// A call's answer (or its end by EOF): `true` when `r` was one.
    pub(crate) fn mcp_call_resolved(&mut self, r: &Resolved, now: Instant) -> bool {
        let Some(i) = self.mcp.calls.iter().position(|c| c.request_id == r.id) else {
            return false;
        };
        let c = self.mcp.calls.remove(i);
        if self.turn.as_ref().is_some_and(|t| t.id == c.turn) {
            self.tool_done(&c.tool_use_id, outcome_of(&r.outcome, c.rpc_id), now);
        }
        true
    }

    /// The pending MCP request `id` was answered by a line the strict reader rejected: a
    /// malformed answer. `true` when `id` was one.
    pub(crate) fn mcp_rejected(
        &mut self,
        id: &str,
        error: &agentx_wire::wire::Error,
        now: Instant,
    ) -> bool {
        let ours = self.mcp.calls.iter().any(|c| &*c.request_id == id)
            || self.mcp.pending_steps().iter().any(|s| &**s == id)
            || self.mcp.elicitations.iter().any(|e| e.request_id() == id)
            || self.mcp.notices.iter().any(|n| &*n.0 == id);
        if !ours {
            return false;
        }
        match self.prompts.broker.handle_rejected_response(id, error) {
            Some(r) => self.mcp_resolved(&r, now),
            None => false,
        }
    }

    /// Timer: a call past its deadline is cancelled (`control_cancel_request`, WIRE-007) and
    /// its use gets an `is_error` result.
    pub(crate) fn mcp_calls_timeout(&mut self, now: Instant) {
        loop {
            let due = self
                .mcp
                .calls
                .iter()
                .position(|c| c.deadline.is_some_and(|d| d <= now));
            let Some(i) = due else { return };
            let c = self.mcp.calls.remove(i);
            let failure = self.abort_ids(&[&c.request_id], now);
            // PROFILE §18: the host's server is told, so its handler stops.
            self.mcp_notify_cancelled(&c.server, c.rpc_id, "timed out", now);
            let secs = self.config.mcp.call_timeout.as_secs_f64();
            let outcome = ToolOutcome::error(format!(
                "MCP tool {} timed out after {secs} s",
                super::policy::cut(&c.name, 128)
            ));
            if self.turn.as_ref().is_some_and(|t| t.id == c.turn) {
                self.tool_done(&c.tool_use_id, outcome, now);
            }
            if let Some(f) = failure {
                self.output_failed(f, now);
            }
        }
    }

    /// The pending calls' request IDs, the calls dropped (an interrupt or a cut turn cancels
    /// them with the hook callbacks, WIRE-011).
    pub(crate) fn mcp_take_calls(&mut self) -> Vec<Box<str>> {
        self.mcp.ready.clear();
        let calls: Vec<Call> = self.mcp.calls.drain(..).collect();
        let mut ids = Vec::with_capacity(calls.len());
        for c in calls {
            // Told after the cancellations, before the interrupt's acknowledgement.
            self.mcp.to_cancel.push((c.server, c.rpc_id));
            ids.push(c.request_id);
        }
        ids
    }

    /// Pending `mcp_message` requests (listing and calls), by request ID.
    pub fn pending_mcp_messages(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .mcp
            .pending_steps()
            .into_iter()
            .map(String::from)
            .collect();
        ids.extend(self.pending_mcp_calls());
        ids
    }

    /// Pending `tools/call` requests, by request ID.
    pub fn pending_mcp_calls(&self) -> Vec<String> {
        self.mcp
            .calls
            .iter()
            .map(|c| c.request_id.to_string())
            .collect()
    }
}
