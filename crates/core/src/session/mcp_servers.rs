//! The host's in-process MCP servers in the session (PROFILE §16): which servers there are
//! (`--mcp-config`, initialize `mcpServers`/`sdkMcpServers`), their tools (a TypeScript
//! manifest, or listed with `mcp_message` control requests on the session's one broker:
//! `initialize`, `notifications/initialized`, `tools/list` with its pages, one server's steps
//! one at a time, the servers side by side), their status (`pending` while listed, then
//! `connected` or `failed`) for system/init `mcp_servers` and `mcp_status`, and the tools they
//! add to the model's list (`mcp__<server>__<tool>`, after the built-in ones).
//!
//! No turn starts while a server is listed (`Session::mcp_listing`), so system/init and the
//! first model request see the tools. A step that fails (an error answer, a malformed one, a
//! timeout: `McpConfig::list_timeout`, the stream closed) makes the server `failed` with one
//! WARN line that never quotes the host's text; a timed-out request is cancelled with
//! `control_cancel_request` (WIRE-007: its late answer is known-late).
//!
//! Must never: read a clock (deadlines are `now` + timeout), offer a tool of a server that is
//! not `connected`, or let one server's answer change another's tools. Calls: `mcp_calls`.

use std::time::{Duration, Instant};

use crate::model::ToolSpec;
use agentx_wire::control::{Outcome, Payload, Resolved, Started};
use agentx_wire::wire::subtypes::McpMessage;
use agentx_wire::wire::{ControlRequestBody, RawJson, Text};

use super::mcp::{self, ListedTool};
use super::mcp_config::{ServerDef, ServerKind, UserServer};
use super::{Action, Session};

/// PROFILE §16's and §18's MCP settings of a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpConfig {
    /// The servers of `--mcp-config`, in order.
    pub servers: Vec<ServerDef>,
    /// How long the first model request of a turn waits for the user's servers to settle
    /// (PROFILE §18: `MCP_TIMEOUT`, default 30,000 ms).
    pub connect_timeout: Duration,
    /// A user server's call timeout when its config has none (PROFILE §18:
    /// `MCP_TOOL_TIMEOUT`, default 600,000 ms).
    pub tool_timeout: Duration,
    /// How long one listing request (`initialize`, `notifications/initialized`, a
    /// `tools/list` page) may wait for its answer.
    pub list_timeout: Duration,
    /// How long one `tools/call` may wait for its answer.
    pub call_timeout: Duration,
}

/// [`McpConfig::list_timeout`]'s default.
pub const DEFAULT_LIST_TIMEOUT: Duration = Duration::from_secs(60);
/// [`McpConfig::connect_timeout`]'s default.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// [`McpConfig::call_timeout`]'s default.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(600);

impl Default for McpConfig {
    fn default() -> McpConfig {
        McpConfig {
            servers: Vec::new(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            tool_timeout: DEFAULT_CALL_TIMEOUT,
            list_timeout: DEFAULT_LIST_TIMEOUT,
            call_timeout: DEFAULT_CALL_TIMEOUT,
        }
    }
}

/// A server's status (system/init `mcp_servers`, `mcp_status`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Pending,
    Connected,
    Failed,
    NeedsAuth,
    Disabled,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Connected => "connected",
            Status::Failed => "failed",
            Status::NeedsAuth => "needs-auth",
            Status::Disabled => "disabled",
        }
    }
}

/// The listing request a server waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StepKind {
    Initialize,
    Initialized,
    List,
}

#[derive(Debug)]
pub(crate) struct Step {
    kind: StepKind,
    pub(crate) request_id: Box<str>,
    rpc_id: Option<u64>,
    deadline: Option<Instant>,
}

#[derive(Debug)]
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) status: Status,
    pub(crate) tools: Vec<ListedTool>,
    pub(crate) step: Option<Step>,
    pub(crate) pages: u32,
    /// The new list of a relisting after `list_changed` (PROFILE §18, SDK servers too).
    pub(crate) relist: Option<Vec<ListedTool>>,
    /// Its listing was started.
    begun: bool,
    /// Its tools joined the model's list.
    pub(crate) offered: bool,
    /// The user's server (§18) this is; `None` for an SDK server (§16).
    pub(crate) user: Option<UserServer>,
    /// Why it failed (`mcp_status` `error`).
    pub(crate) error: Option<String>,
    /// MCP's `{name, version}` when connected, compact JSON.
    pub(crate) server_info: Option<String>,
    /// A user server's connection attempt: reports of an older one are stale.
    pub(crate) epoch: u64,
    /// Until when a turn waits for this pending user server.
    connect_deadline: Option<Instant>,
    /// Named by an `mcp_set_servers` call (PROFILE §18 "Live changes").
    pub(crate) dynamic: bool,
}

/// The servers, their listing and the calls in flight.
#[derive(Debug, Default)]
pub(crate) struct McpServers {
    pub(crate) servers: Vec<Server>,
    pub(crate) calls: Vec<super::mcp_calls::Call>,
    /// The outcomes of calls settled while their turn was borrowed (applied after the step).
    pub(crate) ready: std::collections::VecDeque<(String, super::ToolOutcome)>,
    /// `mcp_reconnect` requests waiting for their server to settle: (request id, server).
    pub(crate) reconnects: Vec<(String, String)>,
    /// The turn whose first model request waits for the user's servers to settle.
    pub(crate) held_request: Option<crate::model::TurnId>,
    /// `notifications/cancelled` sent to SDK servers, whose answers are ignored
    /// (`mcp_sdk_live`): request ID and deadline.
    pub(crate) notices: Vec<(Box<str>, Option<Instant>)>,
    /// Calls taken by an interrupt whose servers are told (`mcp_sdk_live`): server, JSON-RPC id.
    pub(crate) to_cancel: Vec<(String, u64)>,
    /// Elicitations from the user's servers waiting for the host (`mcp_elicit`).
    pub(crate) elicitations: Vec<super::mcp_elicit::Pending>,
    next_rpc: u64,
    /// The listing started (at initialize, or before the first turn).
    started: bool,
}

impl McpServers {
    /// Adds a server (a name given twice is one server); `tools` from a manifest make it
    /// `connected` without listing.
    pub(crate) fn add(&mut self, name: &str, tools: Option<Vec<ListedTool>>) {
        if self.servers.iter().any(|s| s.name == name) {
            return;
        }
        let status = match tools {
            Some(_) => Status::Connected,
            None => Status::Pending,
        };
        self.servers.push(Server {
            name: name.to_string(),
            status,
            tools: tools.unwrap_or_default(),
            step: None,
            pages: 0,
            relist: None,
            begun: false,
            offered: false,
            user: None,
            error: None,
            server_info: None,
            epoch: 0,
            connect_deadline: None,
            dynamic: false,
        });
    }

    /// Adds (or replaces in its place) one of the user's servers, `pending`; the caller
    /// connects it ([`Session::mcp_connect`]).
    pub(crate) fn add_user(&mut self, name: &str, server: UserServer) -> usize {
        let i = match self.servers.iter().position(|s| s.name == name) {
            Some(i) => i,
            None => {
                self.add(name, None);
                self.servers.len() - 1
            }
        };
        let s = &mut self.servers[i];
        s.user = Some(server);
        s.status = Status::Pending;
        s.tools.clear();
        s.begun = true;
        s.step = None;
        s.error = None;
        s.server_info = None;
        i
    }

    /// True while a turn must wait: a pending user server whose connect deadline is ahead.
    pub(crate) fn connecting(&self, now: Instant) -> bool {
        self.servers
            .iter()
            .any(|s| s.status == Status::Pending && s.connect_deadline.is_some_and(|d| d > now))
    }

    pub(crate) fn rpc_id(&mut self) -> u64 {
        let id = self.next_rpc;
        self.next_rpc += 1;
        id
    }

    /// The earliest listing or call deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        let steps = self
            .servers
            .iter()
            .filter_map(|s| s.step.as_ref()?.deadline);
        let calls = self.calls.iter().filter_map(|c| c.deadline);
        let connects = self
            .servers
            .iter()
            .filter(|s| s.status == Status::Pending)
            .filter_map(|s| s.connect_deadline);
        let elicitations = self
            .elicitations
            .iter()
            .filter_map(|e| e.deadline())
            .chain(self.notices.iter().filter_map(|n| n.1));
        steps.chain(calls).chain(connects).chain(elicitations).min()
    }

    /// `[{"name","status"}…]` in configuration order.
    pub(crate) fn statuses(&self) -> impl Iterator<Item = (&str, &'static str)> {
        self.servers
            .iter()
            .map(|s| (s.name.as_str(), s.status.as_str()))
    }

    /// The server and its own name for the tool the model calls `full_name`.
    pub(crate) fn tool(&self, full_name: &str) -> Option<(&str, &str)> {
        self.servers.iter().filter(|s| s.offered).find_map(|s| {
            s.tools
                .iter()
                .find(|t| mcp::tool_name(&s.name, &t.name) == full_name)
                .map(|t| (s.name.as_str(), t.name.as_str()))
        })
    }

    /// Listing requests still pending, by request ID.
    pub(crate) fn pending_steps(&self) -> Vec<Box<str>> {
        self.servers
            .iter()
            .filter_map(|s| s.step.as_ref().map(|st| st.request_id.clone()))
            .collect()
    }
}

/// What the driver's MCP client reports about a user's server (PROFILE §18).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpReport {
    /// The handshake and `tools/list` succeeded.
    Connected {
        /// MCP's `{name, version}`, compact JSON.
        server_info: String,
        /// Its tools.
        tools: Vec<ListedTool>,
    },
    /// `notifications/tools/list_changed` was followed by a new listing.
    ToolsChanged {
        /// The new list.
        tools: Vec<ListedTool>,
    },
    /// It could not connect, or its connection ended: a one-line error (secrets withheld).
    Failed {
        /// The `error` text.
        error: String,
    },
    /// An HTTP 401 (OAuth flows are later work).
    NeedsAuth {
        /// The `error` text.
        error: String,
    },
    /// The server sent `elicitation/create` (its content checked for secrets): answer it
    /// with [`Action::McpElicitationAnswer`] carrying `key`.
    Elicitation {
        /// The driver's key of the request.
        key: u64,
        /// Its params, compact JSON.
        params: String,
    },
    /// The server sent `notifications/elicitation/complete`.
    ElicitationComplete {
        /// Its `elicitationId`.
        elicitation_id: String,
    },
}

/// What a listing answer was.
enum Answer {
    Result(String),
    Failed(&'static str),
}

fn answer_of(outcome: &Outcome, rpc_id: Option<u64>) -> Answer {
    match outcome {
        Outcome::Success(Payload::Json(raw)) => {
            match mcp::response_result(raw.as_bytes(), rpc_id) {
                Ok(result) => Answer::Result(result),
                Err(_) => {
                    Answer::Failed("it answered a JSON-RPC error or a malformed mcp_response")
                }
            }
        }
        Outcome::Success(_) => Answer::Failed("it answered without an mcp_response"),
        Outcome::Error { .. } => Answer::Failed("the host answered an error"),
        Outcome::Invalid(_) => Answer::Failed("an invalid control_response"),
        Outcome::Aborted => Answer::Failed("timed out"),
        Outcome::StreamClosed | Outcome::Shutdown => Answer::Failed("control stream closed"),
    }
}

impl Session {
    /// PROFILE §16: the servers of `--mcp-config` and of an accepted initialize, each listed
    /// unless a manifest gave its tools.
    pub(crate) fn mcp_add(&mut self, name: &str, tools: Option<Vec<ListedTool>>) {
        self.mcp.add(name, tools);
    }

    /// PROFILE §18: a configured server: an SDK one is listed later ([`Session::mcp_begin`]);
    /// a user's server starts connecting now.
    pub(crate) fn mcp_define(&mut self, def: ServerDef, now: Instant) {
        match def.kind {
            ServerKind::Sdk => self.mcp.add(&def.name, None),
            ServerKind::User(user) => {
                // PROFILE §18: `tools[].permission_policy` is an allow rule or a denial of
                // that tool.
                for (tool, policy) in &user.tool_policies {
                    let rule = super::tool_rules::ToolRule {
                        tool: mcp::tool_name(&def.name, tool),
                        pattern: super::tool_rules::Pattern::Any,
                    };
                    match policy.as_str() {
                        "always_allow" => self.config.tool_rules.allowed.push(rule),
                        "always_deny" => self.config.tool_rules.disallowed.push(rule),
                        _ => {}
                    }
                }
                let i = self.mcp.add_user(&def.name, user);
                self.mcp_connect(i, now);
            }
        }
    }

    /// Starts a new connection attempt of user server `i` (`pending`; a turn waits for it
    /// until the connect timeout).
    pub(crate) fn mcp_connect(&mut self, i: usize, now: Instant) {
        let s = &mut self.mcp.servers[i];
        let Some(server) = s.user.clone() else { return };
        s.epoch += 1;
        s.status = Status::Pending;
        s.connect_deadline = now.checked_add(self.config.mcp.connect_timeout);
        let (name, epoch) = (s.name.clone(), s.epoch);
        self.mcp_withdraw(i);
        self.actions.push_back(Action::McpConnect {
            name,
            epoch,
            server,
        });
    }

    /// What the driver's client reports about user server `name`'s connection `epoch`
    /// (PROFILE §18 "Status"); a report of an older connection is ignored.
    pub fn handle_mcp_server(&mut self, name: &str, epoch: u64, report: McpReport, now: Instant) {
        let Some(i) = self.mcp.servers.iter().position(|s| s.name == name) else {
            return;
        };
        let s = &mut self.mcp.servers[i];
        if s.user.is_none() || s.epoch != epoch || s.status == Status::Disabled {
            if let McpReport::Elicitation { key, .. } = report {
                // PROFILE §18: an elicitation of a closed connection resolves as cancel.
                self.actions.push_back(Action::McpElicitationAnswer {
                    name: name.to_string(),
                    epoch,
                    key,
                    result: super::mcp_elicit::CANCEL.into(),
                });
            }
            return;
        }
        match report {
            McpReport::Elicitation { key, params } => {
                self.mcp_elicit(name, epoch, key, &params, now);
                return self.after_step(now);
            }
            McpReport::ElicitationComplete { elicitation_id } => {
                self.mcp_elicitation_complete(name, &elicitation_id);
                return self.after_step(now);
            }
            _ => {}
        }
        let s = &mut self.mcp.servers[i];
        s.connect_deadline = None;
        match report {
            McpReport::Connected { server_info, tools } => {
                s.status = Status::Connected;
                s.server_info = Some(server_info);
                s.error = None;
                s.tools = tools;
                s.offered = true;
            }
            McpReport::ToolsChanged { tools } if s.status == Status::Connected => {
                s.tools = tools;
            }
            McpReport::ToolsChanged { .. } => {}
            McpReport::Failed { error } => {
                s.status = Status::Failed;
                s.error = Some(error);
                s.tools.clear();
                s.offered = false;
            }
            McpReport::NeedsAuth { error } => {
                s.status = Status::NeedsAuth;
                s.error = Some(error);
                s.tools.clear();
                s.offered = false;
            }
            McpReport::Elicitation { .. } | McpReport::ElicitationComplete { .. } => {}
        }
        self.mcp_rebuild_tools();
        self.mcp_answer_reconnects();
        self.after_step(now);
    }

    /// A user server's tools leave the model's list.
    pub(crate) fn mcp_withdraw(&mut self, i: usize) {
        let s = &mut self.mcp.servers[i];
        s.offered = false;
        s.tools.clear();
        self.mcp_rebuild_tools();
    }

    /// The model's tools: the built-in ones, then every offered server's in configuration
    /// order (PROFILE §18 "Tools"), less those `--disallowedTools` names plainly (§15); a name
    /// taken earlier is not offered twice.
    pub(crate) fn mcp_rebuild_tools(&mut self) {
        self.config
            .tools
            .retain(|t| !t.name.starts_with(mcp::TOOL_PREFIX));
        let mut added: Vec<ToolSpec> = Vec::new();
        for s in self.mcp.servers.iter().filter(|s| s.offered) {
            for t in &s.tools {
                let name = mcp::tool_name(&s.name, &t.name);
                let disallowed = self
                    .config
                    .tool_rules
                    .disallowed
                    .iter()
                    .any(|r| r.is_name() && r.tool == name);
                let taken = added
                    .iter()
                    .chain(&self.config.tools)
                    .any(|a| a.name == name);
                if disallowed || taken {
                    continue;
                }
                added.push(ToolSpec {
                    name,
                    description: t.description.clone(),
                    input_schema: t.input_schema.clone(),
                });
            }
        }
        self.config.tools.extend(added);
    }

    /// True while an SDK server is listed: no turn starts (its system/init and first request
    /// must see the tools).
    pub(crate) fn mcp_listing(&self) -> bool {
        self.mcp.started
            && self
                .mcp
                .servers
                .iter()
                .any(|s| s.user.is_none() && s.status == Status::Pending)
    }

    /// Starts listing every server that needs it and was not listed yet (a server an
    /// initialize adds after the listing began is listed too); registers the tools at once
    /// when none needs listing.
    pub(crate) fn mcp_begin(&mut self, now: Instant) {
        self.mcp.started = true;
        for i in 0..self.mcp.servers.len() {
            let s = &mut self.mcp.servers[i];
            if s.user.is_none()
                && s.status == Status::Pending
                && !std::mem::replace(&mut s.begun, true)
            {
                let id = self.mcp.rpc_id();
                let message = mcp::initialize_message(id, &self.config.version, "{}");
                self.mcp_send(i, StepKind::Initialize, message, Some(id), now);
            }
        }
        self.mcp_maybe_registered();
    }

    /// Sends one listing request of server `i`; an immediate outcome is applied at once.
    fn mcp_send(
        &mut self,
        i: usize,
        kind: StepKind,
        message: Vec<u8>,
        rpc_id: Option<u64>,
        now: Instant,
    ) {
        let name = self.mcp.servers[i].name.clone();
        let Ok(message) = RawJson::parse_owned(message) else {
            return self.mcp_fail(i, "a request could not be built");
        };
        let body = ControlRequestBody::McpMessage(McpMessage {
            server_name: Text::Owned(name),
            message,
        });
        let deadline = now.checked_add(self.config.mcp.list_timeout);
        match self.mcp_request(body, now) {
            Ok(Started::Pending { id }) => {
                self.mcp.servers[i].step = Some(Step {
                    kind,
                    request_id: id,
                    rpc_id,
                    deadline,
                });
            }
            Ok(Started::Resolved(r)) => self.mcp_step_done(i, kind, rpc_id, &r.outcome, now),
            Err(agentx_wire::control::RequestError::StreamClosed) => {
                self.mcp_fail(i, "control stream closed")
            }
            Err(_) => self.mcp_fail(i, "the request could not be written"),
        }
    }

    /// One `mcp_message` request on the session's broker and output FIFO.
    pub(crate) fn mcp_request(
        &mut self,
        body: ControlRequestBody<'static>,
        now: Instant,
    ) -> Result<Started, agentx_wire::control::RequestError> {
        self.with_race(|_, broker, emit| broker.request(body, now, emit))
    }

    /// A broker resolution: `true` when it was a listing request's or a call's.
    pub(crate) fn mcp_resolved(&mut self, r: &Resolved, now: Instant) -> bool {
        let found = self
            .mcp
            .servers
            .iter()
            .position(|s| s.step.as_ref().is_some_and(|st| st.request_id == r.id));
        let Some(i) = found else {
            return self.mcp_call_resolved(r, now)
                || self.mcp_elicitation_resolved(r)
                || self.mcp_notice_resolved(r);
        };
        if let Some(st) = self.mcp.servers[i].step.take() {
            self.mcp_step_done(i, st.kind, st.rpc_id, &r.outcome, now);
        }
        true
    }

    /// The answer of server `i`'s step: the next step, or the server's end.
    fn mcp_step_done(
        &mut self,
        i: usize,
        kind: StepKind,
        rpc_id: Option<u64>,
        outcome: &Outcome,
        now: Instant,
    ) {
        let result = match answer_of(outcome, rpc_id) {
            Answer::Result(r) => r,
            Answer::Failed(why) => return self.mcp_fail(i, why),
        };
        match kind {
            StepKind::Initialize => {
                let has_tools = agentx_wire::json::parse(result.as_bytes())
                    .map(|d| mcp::offers_tools(d.root()))
                    .unwrap_or(true);
                if !has_tools {
                    self.mcp.servers[i].status = Status::Connected;
                    self.mcp_maybe_registered();
                    return;
                }
                // The MCP handshake: the server reads requests only after this notification.
                self.mcp_send(
                    i,
                    StepKind::Initialized,
                    mcp::initialized_message(),
                    None,
                    now,
                );
            }
            StepKind::Initialized => self.mcp_list_page(i, None, now),
            StepKind::List => {
                let (tools, cursor) = match mcp::tools_of(&result) {
                    Ok(page) => page,
                    Err(_) => return self.mcp_fail(i, "its tools/list result is malformed"),
                };
                let s = &mut self.mcp.servers[i];
                let name = mcp::quoted(&s.name);
                // A relisting (`list_changed`) collects its own list; the old one stays
                // offered until it is complete.
                let list = match s.relist.as_mut() {
                    Some(l) => l,
                    None => &mut s.tools,
                };
                for t in tools {
                    if list.iter().any(|k| k.name == t.name) {
                        continue;
                    }
                    if list.len() == mcp::MAX_TOOLS_PER_SERVER {
                        self.out.diagnostic(format!(
                            "agentx: WARN MCP server {name} lists more than {} tools; the rest \
                             are not offered",
                            mcp::MAX_TOOLS_PER_SERVER
                        ));
                        break;
                    }
                    list.push(t);
                }
                match cursor {
                    Some(c) if self.mcp.servers[i].pages < mcp::MAX_LIST_PAGES => {
                        self.mcp_list_page(i, Some(&c), now)
                    }
                    _ if self.mcp.servers[i].relist.is_some() => {
                        let s = &mut self.mcp.servers[i];
                        s.tools = s.relist.take().unwrap_or_default();
                        self.mcp_rebuild_tools();
                    }
                    _ => {
                        self.mcp.servers[i].status = Status::Connected;
                        self.mcp_maybe_registered();
                    }
                }
            }
        }
    }

    pub(crate) fn mcp_list_page(&mut self, i: usize, cursor: Option<&str>, now: Instant) {
        self.mcp.servers[i].pages += 1;
        let id = self.mcp.rpc_id();
        let message = mcp::tools_list_message(id, cursor);
        self.mcp_send(i, StepKind::List, message, Some(id), now);
    }

    /// Server `i` failed: no tools, one WARN line (never the host's own text).
    pub(crate) fn mcp_fail(&mut self, i: usize, why: &str) {
        let s = &mut self.mcp.servers[i];
        if s.relist.take().is_some() {
            // A failed relisting keeps the list the server had.
            s.step = None;
            let name = mcp::quoted(&s.name);
            self.out.diagnostic(format!(
                "agentx: WARN MCP server {name}: listing its tools again failed: {why}"
            ));
            return;
        }
        s.status = Status::Failed;
        s.tools.clear();
        s.step = None;
        let name = mcp::quoted(&s.name);
        self.out
            .diagnostic(format!("agentx: WARN MCP server {name} failed: {why}"));
        self.mcp_maybe_registered();
    }

    /// Once no server is pending: the tools of every connected server not offered yet join
    /// the model's list, after the built-in ones (and the servers offered before), less those
    /// `--disallowedTools` names plainly (PROFILE §15).
    fn mcp_maybe_registered(&mut self) {
        if !self.mcp_sdk_settled() {
            return;
        }
        for s in self
            .mcp
            .servers
            .iter_mut()
            .filter(|s| s.user.is_none() && s.status == Status::Connected)
        {
            s.offered = true;
        }
        self.mcp_rebuild_tools();
    }

    fn mcp_sdk_settled(&self) -> bool {
        self.mcp.started
            && !self
                .mcp
                .servers
                .iter()
                .any(|s| s.user.is_none() && s.status == Status::Pending)
    }

    /// Timer: every listing request whose deadline passed is cancelled
    /// (`control_cancel_request`, WIRE-007) and its server fails; calls likewise
    /// (`mcp_calls`).
    pub(crate) fn mcp_timeout(&mut self, now: Instant) {
        loop {
            let due = self.mcp.servers.iter().position(|s| {
                s.step
                    .as_ref()
                    .and_then(|st| st.deadline)
                    .is_some_and(|d| d <= now)
            });
            let Some(i) = due else { break };
            let Some(st) = self.mcp.servers[i].step.take() else {
                continue;
            };
            let failure = self.abort_ids(&[&st.request_id], now);
            self.mcp_fail(i, "timed out");
            if let Some(f) = failure {
                self.output_failed(f, now);
            }
        }
        self.mcp_calls_timeout(now);
        self.mcp_elicitations_timeout(now);
        self.mcp_notices_timeout(now);
    }

    /// Aborts pending requests (one `control_cancel_request` each, in order).
    pub(crate) fn abort_ids(
        &mut self,
        ids: &[&str],
        now: Instant,
    ) -> Option<agentx_wire::control::EmissionFailure> {
        self.with_race(|_, broker, emit| broker.abort_many(ids, now, emit, None).failure)
    }

    pub(crate) fn output_failed(&mut self, f: agentx_wire::control::EmissionFailure, now: Instant) {
        if !self.out.failed() {
            self.fatal(format!("agentx: output failed: {}", f.message()), now);
        }
    }

    /// A fatal stop: listing and calls are dropped silently (the broker was shut down).
    pub(crate) fn mcp_shutdown(&mut self) {
        for s in &mut self.mcp.servers {
            s.step = None;
        }
        self.mcp.calls.clear();
        self.mcp.ready.clear();
        self.mcp.elicitations.clear();
        self.mcp.notices.clear();
        self.mcp.to_cancel.clear();
    }
}
