//! What the session asks its driver to do ([`Action`]) and what the driver reports back about
//! tools and hooks ([`ToolOutcome`], [`HookOutcome`]).
//!
//! Owns the vocabulary between the sans-IO session and whatever runs models, tools, hook
//! processes and the session store. Must never: hold a handle, a process or a clock.

use bytes::Bytes;

use crate::model::{ModelRequest, NetworkDecision, TurnId};
use agentx_wire::wire::RawJson;

/// One thing the driver must do, in the order [`Session::poll_action`](super::Session::poll_action)
/// yields them.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Start one model call; answer with `Session::handle_model(req.turn, ev, now)` events.
    StartModel(ModelRequest),
    /// Stop the model call of `turn` (interrupt, fatal input error). Events of that turn that
    /// arrive later are ignored, so the driver need not drain them.
    CancelModel {
        /// The turn whose call stops.
        turn: TurnId,
    },
    /// The answer to a [`crate::model::ModelEvent::NetworkAccess`] of `turn`: the model goes on.
    ResumeModel {
        /// The turn whose call waits.
        turn: TurnId,
        /// The permission race's answer (WIRE-PERM-004).
        decision: NetworkDecision,
    },
    /// Run a tool whose use was allowed (PROFILE §10); answer with
    /// `Session::handle_tool_done(tool_use_id, outcome, now)`. `input_json` is the effective
    /// input (the host's or hook's `updatedInput` when one was given), compact JSON.
    RunTool {
        /// The tool use.
        tool_use_id: String,
        /// The tool's name (`Read`, `Write`, `Bash`).
        name: String,
        /// The effective input, compact JSON.
        input_json: String,
    },
    /// Stop a running tool (interrupt); its late outcome is ignored.
    CancelTool {
        /// The tool use whose tool stops.
        tool_use_id: String,
    },
    /// Start the permission hook for one prompt (PROFILE §10); answer with
    /// `Session::handle_hook_done(tool_use_id, outcome, now)`. The hook's stdin line is
    /// `{"session_id","tool_name","tool_use_id","input"}` with these values.
    StartHook {
        /// The prompt's tool use.
        tool_use_id: String,
        /// The session ID for the hook's stdin.
        session_id: String,
        /// The tool's name.
        tool_name: String,
        /// The tool's input, compact JSON.
        input_json: String,
    },
    /// Kill the hook of a prompt that was settled otherwise (the host won, interrupt, EOF);
    /// its late outcome is ignored (WIRE-PERM-001).
    KillHook {
        /// The prompt's tool use.
        tool_use_id: String,
    },
    /// Apply a validated `update_environment_variables` record to the environment of later
    /// tool and hook processes: `None` unsets the name (PROFILE §2b).
    UpdateEnvironment {
        /// Names and values; `None` unsets.
        variables: Vec<(String, Option<String>)>,
    },
    /// Connect a dynamic MCP server of an installed reference profile (scenario 8). Queued
    /// only after the `mcp_set_servers` response frame.
    ConnectMcpServer {
        /// The server's name.
        name: String,
        /// Its configuration object, compact JSON.
        config_json: String,
    },
    /// Connect one of the user's MCP servers (PROFILE §18): handshake, `tools/list`, then
    /// report with `Session::handle_mcp_server(name, epoch, report, now)`. An earlier
    /// connection of the same name is closed first.
    McpConnect {
        /// The server's name.
        name: String,
        /// This connection attempt (reports carry it back).
        epoch: u64,
        /// Its configuration.
        server: crate::session::mcp_config::UserServer,
    },
    /// Close the user's MCP server `name` (removed or disabled; PROFILE §18 "Shutdown" for a
    /// stdio server).
    McpClose {
        /// The server's name.
        name: String,
    },
    /// Call a tool of a connected user's server (PROFILE §18 "Tools"); answer with
    /// `Session::handle_tool_done(tool_use_id, outcome, now)`. [`Action::CancelTool`] cancels
    /// it (`notifications/cancelled`).
    McpCall {
        /// The tool use.
        tool_use_id: String,
        /// The server's name.
        server: String,
        /// The tool's name as the server lists it.
        tool: String,
        /// The effective input, compact JSON of an object.
        input_json: String,
        /// The call's timeout in ms (the config's `timeout`, else `MCP_TOOL_TIMEOUT`).
        timeout_ms: u64,
    },
    /// Answer `elicitation/create` `key` of the user's server `name`'s connection `epoch`
    /// with this MCP `ElicitResult` (PROFILE §18); dropped when that connection is gone.
    McpElicitationAnswer {
        /// The server's name.
        name: String,
        /// The connection the request came on.
        epoch: u64,
        /// The driver's key of the request.
        key: u64,
        /// `{"action":…,"content"?…}`, compact JSON.
        result: String,
    },
    /// Append these transcript lines (complete frames, `\n` included) to the session store
    /// and fsync (PROFILE §11). Queued once per finished turn: it is the "remote
    /// internal/resume-event flush" of the hard-interrupt order, which comes before `idle`.
    /// It acknowledges nothing to the host (scenario 15).
    ///
    /// PROFILE §11 "durable before idle": the frames from `before_frame` on (the turn's
    /// result, its suggestion, its `idle`, and everything later) are held back by
    /// [`Session::poll_transmit`](super::Session::poll_transmit) until this action is taken;
    /// the driver must finish the append and fsync before it writes any of them. So a host
    /// that saw the result (or `idle`) finds the turn stored, even after a SIGKILL. A failed
    /// append does not hold anything back for longer (PROFILE §11 "Disk errors").
    Persist {
        /// The transcript lines of the finished turn (its result last).
        lines: Vec<Bytes>,
        /// The index (from 0, over the session's life) of the first frame that waits for this
        /// persist: the turn's result.
        before_frame: u64,
    },
    /// The session is over: flush every frame from `poll_transmit`, then exit with `code`
    /// (0 after EOF when all work finished, 1 after a fatal input or output error).
    Exit {
        /// The process exit status.
        code: i32,
    },
}

/// What a finished tool reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolOutcome {
    /// The `tool_result` content text.
    pub content: String,
    /// `is_error` of the `tool_result`.
    pub is_error: bool,
    /// PROFILE §17: the forms of a built-in tool's `tool_use_result`, fullest first (the
    /// driver drops `originalFile`, then `content`, in the later ones); the `user` record
    /// carries the first that fits the output line limit, else none. Empty: no member.
    pub tool_use_result: Vec<RawJson<'static>>,
}

impl ToolOutcome {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            content: content.into(),
            is_error: false,
            tool_use_result: Vec::new(),
        }
    }

    /// A failed result (`is_error: true`).
    pub fn error(content: impl Into<String>) -> ToolOutcome {
        ToolOutcome {
            content: content.into(),
            is_error: true,
            tool_use_result: Vec::new(),
        }
    }
}

/// What the permission hook answered (PROFILE §10).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookOutcome {
    /// `{"decision":"allow","updatedInput"?:{…}}`; `updated_input` is compact JSON of an object.
    Allow {
        /// The replacement input object, compact JSON.
        updated_input: Option<String>,
    },
    /// `{"decision":"deny","message"?:s}`.
    Deny {
        /// The hook's message (default: the protocol's deny message).
        message: Option<String>,
    },
    /// `{"decision":"pass"}`: not decisive, the host decides (WIRE-PERM-001).
    Pass,
    /// Nonzero exit, malformed answer or timeout: a decisive deny `permission hook failed`
    /// (WIRE-PERM-002).
    Failed,
}

/// How the session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExitStatus {
    /// The process exit status (PROFILE §2): 0 or 1.
    pub code: i32,
}
