//! The user's MCP servers (PROFILE §18), the driver side: the session core asks for
//! connections, calls and closes ([`Action::McpConnect`], [`Action::McpCall`],
//! [`Action::McpClose`], `CancelTool`) and sees only what comes back: statuses with their tool
//! lists ([`McpReport`]) and tool outcomes. Each server is one [`rpc::Rpc`] over a transport
//! behind the [`rpc::Transport`] trait: [`stdio`], [`streamable`] HTTP and the older [`sse`]
//! (the two network ones share [`http`]).
//!
//! Owns: the handshake (`initialize` at protocol 2025-11-25 with agentx's client info,
//! `notifications/initialized`, `tools/list` with its pages and PROFILE §16's limits), the
//! connect timeout (`MCP_TIMEOUT`), calls with their timeout and `notifications/cancelled`,
//! `list_changed`, elicitations to the host (SDK profile: reported as
//! [`McpReport::Elicitation`], answered with [`Clients::answer_elicitation`]), the secrets
//! check of everything a server sends before it reaches a record, and shutdown with no
//! orphan.
//!
//! Must never: decide a protocol rule the core owns; let a secret reach a report or outcome;
//! block the driver loop (every wait is on a thread of its own).
//!
//! Why here and not a crate of its own: the client is driver I/O (processes, threads, the
//! loop's event channel) used only by the `agentx` binary; the pure MCP parts (configuration,
//! messages, result formatting) live in `agentx-core::session::{mcp, mcp_config}`.
//!
//! [`Action::McpConnect`]: agentx_core::session::Action::McpConnect
//! [`Action::McpCall`]: agentx_core::session::Action::McpCall
//! [`Action::McpClose`]: agentx_core::session::Action::McpClose

pub mod config;
pub mod http;
pub mod rpc;
pub mod sse;
pub mod stdio;
pub mod streamable;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentx_core::session::mcp::{self, ListedTool};
use agentx_core::session::mcp_config::{Transport as Config, UserServer};
use agentx_core::session::{McpReport, ToolOutcome};
use agentx_wire::json;
use agentx_wire::wire::RawJson;

use crate::run::event::{Event, EventSender};
use rpc::{Notice, Rpc, RpcError};

/// The text that replaces server output carrying a configured secret (PROFILE §18).
pub const WITHHELD: &str = "MCP output withheld: it contains a configured secret";

/// One connection of one server.
struct Connection {
    epoch: u64,
    rpc: Option<Arc<Rpc>>,
    process: Option<Arc<stdio::StdioServer>>,
    /// The connection thread of an http or sse server.
    link: Option<Arc<http::Link>>,
}

/// A call in flight: its server's connection and request id.
struct InFlight {
    rpc: Arc<Rpc>,
    id: u64,
}

/// Every secret of every server ever configured (PROFILE §18: checked in what any server
/// sends).
#[derive(Clone, Default)]
pub struct Secrets(Arc<Mutex<Vec<String>>>);

impl Secrets {
    fn add(&self, more: Vec<String>) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for m in more {
            if !s.contains(&m) {
                s.push(m);
            }
        }
    }

    /// True when `text` contains a secret.
    pub fn found_in(&self, text: &str) -> bool {
        let s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        s.iter().any(|secret| text.contains(secret.as_str()))
    }
}

/// The user's servers of one session.
pub struct Clients {
    tx: EventSender,
    cwd: PathBuf,
    roots: Vec<String>,
    connect_timeout: Duration,
    servers: Arc<Mutex<HashMap<String, Connection>>>,
    calls: Arc<Mutex<HashMap<String, InFlight>>>,
    secrets: Secrets,
    /// Every stdio process started, for shutdown.
    processes: Arc<Mutex<Vec<Arc<stdio::StdioServer>>>>,
    /// The SDK profile: elicitations go to the host (PROFILE §18).
    elicitation: bool,
}

impl Clients {
    /// Clients reporting on `tx`, starting servers in `cwd`; `roots` are the cwd and the
    /// `--add-dir` directories.
    pub fn new(
        tx: EventSender,
        cwd: PathBuf,
        add_dirs: &[String],
        connect_timeout: Duration,
    ) -> Clients {
        let mut roots = vec![rpc::file_uri(&cwd.to_string_lossy())];
        roots.extend(add_dirs.iter().map(|d| rpc::file_uri(d)));
        Clients {
            tx,
            cwd,
            roots,
            connect_timeout,
            servers: Default::default(),
            calls: Default::default(),
            secrets: Secrets::default(),
            processes: Default::default(),
            elicitation: false,
        }
    }

    /// In the SDK profile a server's elicitations go to the host, and the handshake declares
    /// the capability (PROFILE §18 "Requests from a server").
    pub fn with_elicitation(mut self, on: bool) -> Clients {
        self.elicitation = on;
        self
    }

    /// Answers elicitation `key` of `name`'s connection `epoch` (dropped when that
    /// connection is gone).
    pub fn answer_elicitation(&mut self, name: &str, epoch: u64, key: u64, result: &str) {
        let rpc = self
            .lock_servers()
            .get(name)
            .filter(|c| c.epoch == epoch)
            .and_then(|c| c.rpc.clone());
        if let Some(rpc) = rpc {
            rpc.answer_elicitation(key, result);
        }
    }

    /// Connects `name` (closing an earlier connection of it) and reports the outcome.
    pub fn connect(&mut self, name: String, epoch: u64, server: UserServer) {
        self.close(&name);
        self.secrets.add(server.secrets());
        self.lock_servers().insert(
            name.clone(),
            Connection {
                epoch,
                rpc: None,
                process: None,
                link: None,
            },
        );
        let ctx = Ctx {
            tx: self.tx.clone(),
            name,
            epoch,
            secrets: self.secrets.clone(),
            servers: self.servers.clone(),
            elicitation: self.elicitation,
        };
        let (cwd, roots, timeout) = (self.cwd.clone(), self.roots.clone(), self.connect_timeout);
        let processes = self.processes.clone();
        let _ = std::thread::Builder::new()
            .name("agentx-mcp-connect".into())
            .spawn(move || ctx.run(server, &cwd, roots, timeout, &processes));
    }

    /// Closes `name`'s connection (its process shut down on a thread of its own).
    pub fn close(&mut self, name: &str) {
        let Some(c) = self.lock_servers().remove(name) else {
            return;
        };
        if let Some(rpc) = &c.rpc {
            rpc.close("the server was closed");
        }
        if let Some(p) = c.process {
            let _ = std::thread::Builder::new()
                .name("agentx-mcp-close".into())
                .spawn(move || stdio::shut_down(&[p]));
        }
        if let Some(link) = c.link {
            // The session's DELETE runs on the connection's own thread.
            link.stop();
        }
    }

    /// Calls `tool` of `server`; the outcome comes back as `Event::ToolDone`.
    pub fn call(
        &mut self,
        tool_use_id: String,
        server: &str,
        tool: &str,
        input_json: &str,
        timeout_ms: u64,
    ) {
        let rpc = self.lock_servers().get(server).and_then(|c| c.rpc.clone());
        let Some(rpc) = rpc else {
            let _ = self.tx.send(Event::ToolDone(
                tool_use_id,
                ToolOutcome::error(format!(
                    "MCP server {} is not connected",
                    mcp::tool_name(server, "").trim_end_matches("__")
                )),
            ));
            return;
        };
        let mut params = b"{\"name\":".to_vec();
        json::write_str(&mut params, tool);
        params.extend_from_slice(b",\"arguments\":");
        params.extend_from_slice(input_json.as_bytes());
        params.push(b'}');
        let params = String::from_utf8(params).unwrap_or_default();
        let (id, rx) = rpc.start("tools/call", Some(&params));
        self.lock_calls().insert(
            tool_use_id.clone(),
            InFlight {
                rpc: rpc.clone(),
                id,
            },
        );
        let (tx, secrets, calls) = (self.tx.clone(), self.secrets.clone(), self.calls.clone());
        let _ = std::thread::Builder::new()
            .name("agentx-mcp-call".into())
            .spawn(move || {
                let answer = rpc.wait_call(id, &rx, Duration::from_millis(timeout_ms));
                let ours = calls
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&tool_use_id)
                    .is_some();
                if !ours {
                    // Cancelled: the session settled the use already.
                    return;
                }
                let outcome = match answer {
                    Ok(result) => {
                        let r = mcp::call_result(&result);
                        let structured = r.structured.unwrap_or_default();
                        if secrets.found_in(&r.text) || secrets.found_in(&structured) {
                            ToolOutcome::error(WITHHELD)
                        } else {
                            // PROFILE §18: `structuredContent` becomes `tool_use_result`.
                            let tool_use_result = RawJson::parse_owned(structured.into_bytes())
                                .map(|v| vec![v])
                                .unwrap_or_default();
                            ToolOutcome {
                                content: r.text,
                                is_error: r.is_error,
                                tool_use_result,
                            }
                        }
                    }
                    Err(RpcError::Timeout) => {
                        // PROFILE §18: the server is told, and its late reply ignored.
                        rpc.cancel(id, "timed out");
                        ToolOutcome::error(format!("MCP tool call timed out after {timeout_ms} ms"))
                    }
                    Err(RpcError::Error(m)) | Err(RpcError::Closed(m)) => {
                        if secrets.found_in(&m) {
                            ToolOutcome::error(WITHHELD)
                        } else {
                            ToolOutcome::error(format!("MCP error: {m}"))
                        }
                    }
                };
                let _ = tx.send(Event::ToolDone(tool_use_id, outcome));
            });
    }

    /// Cancels the call of `tool_use_id` if it is one (`notifications/cancelled`); `true`
    /// when it was.
    pub fn cancel(&mut self, tool_use_id: &str, reason: &str) -> bool {
        match self.lock_calls().remove(tool_use_id) {
            Some(c) => {
                c.rpc.cancel(c.id, reason);
                true
            }
            None => false,
        }
    }

    /// SIGTERM or SIGHUP: every call in flight is cancelled (PROFILE §18) and ends with an
    /// `is_error` outcome, so its turn can finish.
    pub fn cancel_all(&mut self, reason: &str) {
        let calls: Vec<(String, InFlight)> = self.lock_calls().drain().collect();
        for (tool_use_id, c) in calls {
            c.rpc.cancel(c.id, reason);
            let _ = self.tx.send(Event::ToolDone(
                tool_use_id,
                ToolOutcome::error(format!("MCP tool call cancelled: {reason}")),
            ));
        }
    }

    /// agentx exits: every server is closed (PROFILE §18 "Shutdown"); returns once no process
    /// of a server's group is left.
    pub fn shut_down(&mut self) {
        let mut links = Vec::new();
        for (_, c) in self.lock_servers().drain() {
            if let Some(rpc) = c.rpc {
                rpc.close("agentx exited");
            }
            if let Some(link) = c.link {
                // Every session is deleted at once, while the processes stop.
                link.stop();
                links.push(link);
            }
        }
        let all = std::mem::take(&mut *self.processes.lock().unwrap_or_else(|e| e.into_inner()));
        stdio::shut_down(&all);
        for link in links {
            link.join();
        }
    }

    fn lock_servers(&self) -> std::sync::MutexGuard<'_, HashMap<String, Connection>> {
        self.servers.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_calls(&self) -> std::sync::MutexGuard<'_, HashMap<String, InFlight>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One connection attempt on its own thread.
struct Ctx {
    tx: EventSender,
    name: String,
    epoch: u64,
    secrets: Secrets,
    servers: Arc<Mutex<HashMap<String, Connection>>>,
    elicitation: bool,
}

impl Ctx {
    /// In the SDK profile, `rpc`'s elicitations go to the session (one that contains a
    /// configured secret is answered `cancel`, PROFILE §18).
    fn install_elicitation(&self, rpc: &Rpc) {
        if !self.elicitation {
            return;
        }
        let (tx, name, epoch, secrets) = (
            self.tx.clone(),
            self.name.clone(),
            self.epoch,
            self.secrets.clone(),
        );
        rpc.on_server_request(Box::new(move |req| {
            let report = match req {
                rpc::ServerRequest::Elicitation { key, params } => {
                    if secrets.found_in(&params) {
                        return false;
                    }
                    McpReport::Elicitation { key, params }
                }
                rpc::ServerRequest::ElicitationComplete { elicitation_id } => {
                    if secrets.found_in(&elicitation_id) {
                        return false;
                    }
                    McpReport::ElicitationComplete { elicitation_id }
                }
            };
            tx.send(Event::McpServer(name.clone(), epoch, report))
                .is_ok()
        }));
    }

    fn report(&self, report: McpReport) {
        let report = match report {
            McpReport::Failed { error } if self.secrets.found_in(&error) => McpReport::Failed {
                error: WITHHELD.to_string(),
            },
            other => other,
        };
        let _ = self
            .tx
            .send(Event::McpServer(self.name.clone(), self.epoch, report));
    }

    fn current(&self) -> bool {
        self.servers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&self.name)
            .is_some_and(|c| c.epoch == self.epoch)
    }

    fn run(
        self,
        server: UserServer,
        cwd: &std::path::Path,
        roots: Vec<String>,
        timeout: Duration,
        processes: &Mutex<Vec<Arc<stdio::StdioServer>>>,
    ) {
        let (command, args, env) = match &server.transport {
            Config::Stdio { command, args, env } => (command, args, env),
            Config::Http { url, headers } => {
                return self.run_network(http::Kind::Streamable, url, headers, roots, timeout)
            }
            Config::Sse { url, headers } => {
                return self.run_network(http::Kind::Sse, url, headers, roots, timeout)
            }
        };
        // The end of the server's stdout: a connected server fails with one line and the
        // tail of its stderr.
        let ended: Arc<Mutex<Option<Arc<stdio::StdioServer>>>> = Default::default();
        // The first failure is the one reported.
        let failed = Arc::new(AtomicBool::new(false));
        let on_end = {
            let (tx, name, epoch, secrets, ended, failed) = (
                self.tx.clone(),
                self.name.clone(),
                self.epoch,
                self.secrets.clone(),
                ended.clone(),
                failed.clone(),
            );
            move |why: String| {
                if failed.swap(true, Ordering::SeqCst) {
                    return;
                }
                let process = ended.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let mut error = why;
                if let Some(p) = &process {
                    if error == "stdout is not JSON-RPC" || error.starts_with("a message is over") {
                        p.kill();
                    }
                    let tail = p.stderr_tail();
                    if let Some(last) = tail.lines().rev().find(|l| !l.trim().is_empty()) {
                        error = format!(
                            "{error}: {}",
                            agentx_wire::wire::responses::cut(last.trim(), 512)
                        );
                    }
                }
                if secrets.found_in(&error) {
                    error = WITHHELD.to_string();
                }
                let _ = tx.send(Event::McpServer(name, epoch, McpReport::Failed { error }));
            }
        };
        let (process, rpc) = match stdio::spawn(command, args, env, cwd, roots, on_end) {
            Ok(p) => p,
            Err(error) => return self.report(McpReport::Failed { error }),
        };
        self.install_elicitation(&rpc);
        *ended.lock().unwrap_or_else(|e| e.into_inner()) = Some(process.clone());
        processes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(process.clone());
        {
            let mut servers = self.servers.lock().unwrap_or_else(|e| e.into_inner());
            match servers.get_mut(&self.name) {
                Some(c) if c.epoch == self.epoch => {
                    c.rpc = Some(rpc.clone());
                    c.process = Some(process.clone());
                }
                // Closed while it started.
                _ => {
                    drop(servers);
                    stdio::shut_down(&[process]);
                    return;
                }
            }
        }
        self.serve(&rpc, timeout, |error| {
            // A closed stdout reports itself (with the stderr tail).
            if !failed.swap(true, Ordering::SeqCst) {
                process.kill();
                self.report(McpReport::Failed { error });
            }
        });
    }

    /// The handshake over a started connection, then its `list_changed` notices until it
    /// ends; `failed` gets the handshake's error.
    fn serve(&self, rpc: &Arc<Rpc>, timeout: Duration, failed: impl FnOnce(String)) {
        match handshake(rpc, timeout) {
            Ok((server_info, tools)) => {
                let (ntx, nrx) = std::sync::mpsc::sync_channel(1);
                rpc.on_notice(ntx);
                if !self.current() {
                    return;
                }
                self.report(McpReport::Connected { server_info, tools });
                // PROFILE §18: `list_changed` lists the tools again.
                while let Ok(Notice::ToolsChanged) = nrx.recv() {
                    if rpc.closed().is_some() || !self.current() {
                        return;
                    }
                    if let Ok(tools) = list_tools(rpc, timeout) {
                        self.report(McpReport::ToolsChanged { tools });
                    }
                }
            }
            Err(error) => failed(error),
        }
    }

    /// An http or sse server (PROFILE §18): its connection thread, then the handshake.
    fn run_network(
        self,
        kind: http::Kind,
        url: &str,
        headers: &[(String, String)],
        roots: Vec<String>,
        timeout: Duration,
    ) {
        // The first end is the one reported (a 401 is `needs-auth`).
        let failed = Arc::new(AtomicBool::new(false));
        let on_end: http::OnEnd = {
            let (tx, name, epoch, secrets, failed) = (
                self.tx.clone(),
                self.name.clone(),
                self.epoch,
                self.secrets.clone(),
                failed.clone(),
            );
            Box::new(move |end| {
                if failed.swap(true, Ordering::SeqCst) {
                    return;
                }
                let report = match end {
                    http::End::NeedsAuth(error) => McpReport::NeedsAuth { error },
                    http::End::Failed(error) if secrets.found_in(&error) => McpReport::Failed {
                        error: WITHHELD.to_string(),
                    },
                    http::End::Failed(error) => McpReport::Failed { error },
                };
                let _ = tx.send(Event::McpServer(name, epoch, report));
            })
        };
        let started = match kind {
            http::Kind::Streamable => streamable::connect(url, headers, timeout, roots, on_end),
            http::Kind::Sse => sse::connect(url, headers, timeout, roots, on_end),
        };
        let (link, rpc) = match started {
            Ok(started) => started,
            Err(error) => return self.report(McpReport::Failed { error }),
        };
        self.install_elicitation(&rpc);
        {
            let mut servers = self.servers.lock().unwrap_or_else(|e| e.into_inner());
            match servers.get_mut(&self.name) {
                Some(c) if c.epoch == self.epoch => {
                    c.rpc = Some(rpc.clone());
                    c.link = Some(link.clone());
                }
                // Closed while it started.
                _ => return link.stop(),
            }
        }
        self.serve(&rpc, timeout, |error| {
            if !failed.swap(true, Ordering::SeqCst) {
                link.stop();
                self.report(McpReport::Failed { error });
            }
        });
    }
}

/// `initialize`, `notifications/initialized`, `tools/list`: the server's info and tools.
fn handshake(rpc: &Rpc, timeout: Duration) -> Result<(String, Vec<ListedTool>), String> {
    let mut params = b"{\"protocolVersion\":".to_vec();
    json::write_str(&mut params, mcp::PROTOCOL_VERSION);
    // PROFILE §18: capabilities `roots`, and `elicitation` (form and url) in the SDK profile.
    params.extend_from_slice(if rpc.elicits() {
        b",\"capabilities\":{\"roots\":{\"listChanged\":false},\"elicitation\":{\"form\":{},\"url\":{}}},\"clientInfo\":{\"name\":\"agentx\",\"version\":"
    } else {
        b",\"capabilities\":{\"roots\":{\"listChanged\":false}},\"clientInfo\":{\"name\":\"agentx\",\"version\":"
    });
    json::write_str(&mut params, env!("CARGO_PKG_VERSION"));
    params.extend_from_slice(b"}}");
    let params = String::from_utf8(params).unwrap_or_default();
    let result = rpc
        .call("initialize", Some(&params), timeout)
        .map_err(|e| step_error("initialize", e, timeout))?;
    let doc = json::parse(result.as_bytes())
        .map_err(|_| "initialize: the result is not JSON".to_string())?;
    let root = doc.root();
    let obj = root
        .as_object()
        .ok_or("initialize: the result is not an object")?;
    let version = obj
        .get("protocolVersion")
        .and_then(|v| v.as_str())
        .map(|v| v.decode().into_owned())
        .unwrap_or_default();
    if !KNOWN_VERSIONS.contains(&version.as_str()) {
        return Err(format!(
            "initialize: protocol version {} is not supported",
            agentx_wire::wire::responses::cut(&version, 64)
        ));
    }
    let info = obj.get("serverInfo").and_then(|i| i.as_object());
    let field = |k: &str| {
        info.as_ref()
            .and_then(|i| i.get(k))
            .and_then(|v| v.as_str())
            .map(|v| v.decode().into_owned())
            .unwrap_or_default()
    };
    let mut server_info = b"{\"name\":".to_vec();
    json::write_str(&mut server_info, &field("name"));
    server_info.extend_from_slice(b",\"version\":");
    json::write_str(&mut server_info, &field("version"));
    server_info.push(b'}');
    let has_tools = mcp::offers_tools(root);
    rpc.notify("notifications/initialized");
    let tools = if has_tools {
        list_tools(rpc, timeout)?
    } else {
        Vec::new()
    };
    Ok((String::from_utf8(server_info).unwrap_or_default(), tools))
}

/// The revisions with an `initialize` handshake that agentx knows.
const KNOWN_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// `tools/list` with its pages: at most 256 tools and 16 pages (PROFILE §16); one more fails.
fn list_tools(rpc: &Rpc, timeout: Duration) -> Result<Vec<ListedTool>, String> {
    let mut tools: Vec<ListedTool> = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..mcp::MAX_LIST_PAGES {
        let params = cursor.as_ref().map(|c| {
            let mut p = b"{\"cursor\":".to_vec();
            json::write_str(&mut p, c);
            p.push(b'}');
            String::from_utf8(p).unwrap_or_default()
        });
        let result = rpc
            .call("tools/list", params.as_deref(), timeout)
            .map_err(|e| step_error("tools/list", e, timeout))?;
        let (page, next) = mcp::tools_of(&result)?;
        for t in page {
            if tools.iter().any(|k| k.name == t.name) {
                continue;
            }
            if tools.len() == mcp::MAX_TOOLS_PER_SERVER {
                return Err("too many tools".into());
            }
            tools.push(t);
        }
        match next {
            Some(c) => cursor = Some(c),
            None => return Ok(tools),
        }
    }
    Err("too many tools".into())
}

fn step_error(step: &str, e: RpcError, timeout: Duration) -> String {
    match e {
        RpcError::Error(m) => format!("{step}: {m}"),
        RpcError::Timeout => format!("{step}: no answer within {} ms", timeout.as_millis()),
        RpcError::Closed(why) => why,
    }
}
