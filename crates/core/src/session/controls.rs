//! The standalone control dispatcher of PROFILE §8 (Control operations), plus the reference
//! operations an installed [`ReferenceProfile`](super::ReferenceProfile) adds.
//!
//! Owns: `initialize` at most once (a later one gets `already initialized`; a rejected one
//! does not count), `interrupt` (WIRE-010/011, in `interrupt.rs`), `get_context_usage`,
//! `mcp_status` (empty `mcpServers`), the three fixed-error setters of PROFILE §5 (none of
//! them changes the live selection, WIRE-025), and `unsupported control request
//! "<subtype>"` for everything else, `set_provider` included. With a reference profile:
//! `mcp_set_servers` (the response is queued before any connection starts, scenario 8) and
//! `get_settings` (sources low to high priority, the effective merge, and the runtime-applied
//! model/effort apart from it, scenario 10). Must never: accept an untyped control silently.

use std::borrow::Cow;
use std::time::Instant;

use agentx_wire::wire::initialize::{Account, InitializeResponse};
use agentx_wire::wire::responses::{
    AppliedSettings, ContextCategory, ContextUsageResponse, GetSettingsResponse,
    McpSetServersResponse, McpStatusResponse, ObjectMap, SettingsSource,
};
use agentx_wire::wire::subtypes::McpSetServers;
use agentx_wire::wire::system_init::McpServerStatus;
use agentx_wire::wire::{ControlRequest, ControlRequestBody, OutputRecord, RawJson, RawObject};

use super::records::{control_error, control_success, control_success_with};
use super::{Action, Session, SettingSource};

/// PROFILE §5 texts: declared once, in `wire::responses`.
pub use agentx_wire::wire::responses::{
    unsupported_control_request as unsupported, SET_MAX_THINKING_TOKENS_ERROR, SET_MODEL_ERROR,
    SET_PERMISSION_MODE_ERROR,
};
/// The correlated error of a second `initialize`.
pub const ALREADY_INITIALIZED: &str = "already initialized";

impl Session {
    pub(crate) fn control_request(&mut self, req: ControlRequest<'static>, now: Instant) {
        let id = req.request_id.as_str().to_string();
        let reply = match &req.request {
            ControlRequestBody::Initialize(_) => {
                if self.initialized {
                    Err(ALREADY_INITIALIZED.to_string())
                } else {
                    self.initialized = true;
                    Ok(control_success_with(&id, &self.initialize_response()))
                }
            }
            ControlRequestBody::Interrupt(_) => {
                return self.interrupt(Some(&id), now);
            }
            ControlRequestBody::GetContextUsage(_) => {
                Ok(control_success_with(&id, &self.context_usage()))
            }
            ControlRequestBody::McpStatus(_) => Ok(control_success_with(&id, &mcp_status(self))),
            ControlRequestBody::SetModel(_) => Err(SET_MODEL_ERROR.to_string()),
            ControlRequestBody::SetPermissionMode(_) => Err(SET_PERMISSION_MODE_ERROR.to_string()),
            ControlRequestBody::SetMaxThinkingTokens(_) => {
                Err(SET_MAX_THINKING_TOKENS_ERROR.to_string())
            }
            ControlRequestBody::McpSetServers(m) if self.config.reference.is_some() => {
                let (rec, connect) = self.mcp_set_servers(&id, m);
                super::respond(&mut self.out, &id, &rec);
                // Scenario 8: the response is queued before any connection begins.
                for (name, config_json) in connect {
                    self.actions
                        .push_back(Action::ConnectMcpServer { name, config_json });
                }
                return;
            }
            ControlRequestBody::GetSettings(_) if self.config.reference.is_some() => {
                Ok(control_success_with(&id, &self.settings()))
            }
            ControlRequestBody::StopTask(st) if self.config.profile == super::Profile::Sdk => {
                return self.stop_task(&id, st.task_id.as_ref(), now);
            }
            // PROFILE §18 "Live changes" (the SDK profile).
            ControlRequestBody::McpSetServers(m) if self.config.profile == super::Profile::Sdk => {
                return self.mcp_live_set_servers(&id, m, now);
            }
            ControlRequestBody::McpReconnect(m) if self.config.profile == super::Profile::Sdk => {
                return self.mcp_live_reconnect(&id, &m.server_name, now);
            }
            ControlRequestBody::McpToggle(m) if self.config.profile == super::Profile::Sdk => {
                return self.mcp_live_toggle(&id, &m.server_name, m.enabled, now);
            }
            // PROFILE §16/§18: an SDK server's own message (the TypeScript SDK's
            // `list_changed`).
            ControlRequestBody::McpMessage(m) if self.config.profile == super::Profile::Sdk => {
                return self.mcp_inbound_message(&id, m, now);
            }
            other => Err(unsupported(other.subtype_name())),
        };
        let rec: OutputRecord<'_> = match reply {
            Ok(rec) => rec,
            Err(e) => control_error(&id, &e),
        };
        super::respond(&mut self.out, &id, &rec);
    }

    /// `stop_task` (PROFILE §15, installed in the SDK profile): the named unfinished task of
    /// the active turn ends `stopped` (its `task_notification` is written before the
    /// payload-less success, so a host whose call returned has seen it); later events of
    /// that task are ignored, and a result held only for it (WIRE-004) follows. Any other id
    /// gets the correlated error `no task <id>`.
    fn stop_task(&mut self, request_id: &str, task_id: &str, now: Instant) {
        let found = self.turn.as_mut().and_then(|t| {
            t.tasks
                .iter_mut()
                .find(|k| k.id == task_id && !k.done)
                .map(|k| {
                    k.done = true;
                    k.id.clone()
                })
        });
        let stopped = found.is_some();
        let rec = match found {
            Some(id) => {
                self.push_task_notification(&id, crate::model::TaskStatus::Stopped);
                control_success(request_id, None)
            }
            None => control_error(
                request_id,
                &format!("no task {}", super::policy::cut(task_id, 64)),
            ),
        };
        super::respond(&mut self.out, request_id, &rec);
        if stopped {
            self.advance(now);
        }
    }

    /// PROFILE §8: the `initialize` success payload.
    pub(crate) fn initialize_response(&self) -> InitializeResponse<'_> {
        let p = &self.config.projection;
        let response = InitializeResponse {
            // PROFILE §19: `/compact` is a command.
            commands: vec![agentx_wire::wire::initialize::SlashCommand {
                name: Cow::Borrowed("compact"),
                description: Cow::Borrowed("Summarize the conversation to free context"),
                argument_hint: Some(Cow::Borrowed("[instructions]")),
            }],
            agents: Vec::new(),
            output_style: Cow::Borrowed("default"),
            available_output_styles: vec![Cow::Borrowed("default")],
            models: p.models.clone(),
            providers: p.providers.clone(),
            account: Account {
                api_key_source: Some(p.init.api_key_source),
                provider: Some(Cow::Owned(p.init.provider.clone())),
                email: None,
                organization: None,
                subscription_type: None,
                token_source: None,
            },
            pid: Some(u64::from(self.config.pid)),
            input_capabilities: self
                .config
                .attachments_enabled
                .then(agentx_wire::wire::system_init::InputCapabilities::native),
        };
        response
    }

    /// `get_context_usage` (PROFILE §19): the estimate of the next request as `totalTokens`,
    /// `maxTokens` the declared `context_window` (`null` when undeclared), `percentage` of it
    /// (0–100, two decimals; `null` without a window), and the categories system prompt,
    /// tools and messages.
    fn context_usage(&self) -> ContextUsageResponse<'_> {
        let e = self.estimate();
        let total = e.total();
        let window = self.config.projection.context_window.map(u64::from);
        let category = |name: &'static str, tokens: u64, color: &'static str| ContextCategory {
            name: Cow::Borrowed(name),
            tokens,
            color: Cow::Borrowed(color),
            is_deferred: Some(false),
        };
        ContextUsageResponse {
            categories: vec![
                category("System prompt", e.system, "gray"),
                category("System tools", e.tools, "blue"),
                category("Messages", e.messages, "purple"),
            ],
            total_tokens: total,
            max_tokens: window,
            raw_max_tokens: window,
            percentage: window.map(|w| {
                let hundredths = (total as f64 * 10_000.0 / w as f64).round() / 100.0;
                hundredths.min(100.0)
            }),
            grid_rows: Some(RawJson::empty_array()),
            model: Some(Cow::Borrowed(&self.config.projection.init.model)),
        }
    }

    /// `mcp_set_servers`: replaces the dynamic server map; reports added, removed and
    /// per-server errors; returns the response and the servers to connect after it.
    fn mcp_set_servers(
        &mut self,
        request_id: &str,
        m: &McpSetServers<'_>,
    ) -> (OutputRecord<'static>, Vec<(String, String)>) {
        let mut next: Vec<(String, RawJson<'static>)> = Vec::new();
        let mut errors: Vec<(String, &'static str)> = Vec::new();
        if let Ok(doc) = m.servers.0.document() {
            if let Some(obj) = doc.root().as_object() {
                for (name, value) in obj.iter() {
                    let name = name.decode().into_owned();
                    if value.as_object().is_none() {
                        errors.push((name, "server configuration must be an object"));
                        continue;
                    }
                    next.push((name, RawJson::from_value(value).to_canonical()));
                }
            }
        }
        let current = self
            .config
            .reference
            .as_ref()
            .map(|r| r.mcp_servers.clone())
            .unwrap_or_default();
        let added: Vec<&(String, RawJson<'static>)> = next
            .iter()
            .filter(|(n, c)| !current.iter().any(|(m, d)| m == n && d == c))
            .collect();
        let removed: Vec<&String> = current
            .iter()
            .filter(|(n, c)| !next.iter().any(|(m, d)| m == n && d == c))
            .map(|(n, _)| n)
            .collect();
        let response = McpSetServersResponse {
            added: added
                .iter()
                .map(|(n, _)| Cow::Borrowed(n.as_str()))
                .collect(),
            removed: removed.iter().map(|n| Cow::Borrowed(n.as_str())).collect(),
            errors: ObjectMap(
                errors
                    .iter()
                    .map(|(n, e)| (Cow::Borrowed(n.as_str()), Cow::Borrowed(*e)))
                    .collect(),
            ),
        };
        let rec = control_success_with(request_id, &response);
        let connect = added
            .iter()
            .map(|(n, c)| {
                let mut bytes = Vec::new();
                c.write_canonical(&mut bytes);
                (n.clone(), String::from_utf8(bytes).unwrap_or_default())
            })
            .collect();
        if let Some(r) = self.config.reference.as_mut() {
            r.mcp_servers = next;
        }
        (rec, connect)
    }

    /// `get_settings`: `effective` (the merge, later sources win per top-level member),
    /// `sources` low to high priority (user, project, local, flag, policy), and `applied`,
    /// the runtime model and effort, which may differ from the merge.
    fn settings(&self) -> GetSettingsResponse<'_> {
        let mut sources: Vec<&(SettingSource, RawJson<'static>)> = self
            .config
            .reference
            .as_ref()
            .map(|r| r.settings.iter().collect())
            .unwrap_or_default();
        sources.sort_by_key(|(s, _)| *s);
        // The merge: a member of a later source replaces the same member of an earlier one.
        let mut merged: Vec<(Cow<'_, str>, RawJson<'_>)> = Vec::new();
        for (_, raw) in &sources {
            let Ok(doc) = raw.document() else { continue };
            let Some(obj) = doc.root().as_object() else {
                continue;
            };
            for (name, value) in obj.iter() {
                let name = name.decode();
                let value = RawJson::from_value(value);
                match merged.iter_mut().find(|(n, _)| *n == name) {
                    Some(slot) => slot.1 = value,
                    None => merged.push((name, value)),
                }
            }
        }
        GetSettingsResponse {
            effective: ObjectMap(merged),
            sources: sources
                .iter()
                .map(|(s, raw)| SettingsSource {
                    source: Cow::Borrowed(s.as_str()),
                    settings: RawObject(raw.borrowed()),
                })
                .collect(),
            // `effort` is optional in `AppliedSettings` and a string when present: a provider
            // without a declared effort omits it (`null` fails the crate's own schema).
            applied: Some(AppliedSettings {
                model: Some(Cow::Borrowed(&self.config.projection.init.model)),
                effort: self.config.projection.effort.as_deref().map(Cow::Borrowed),
            }),
        }
    }
}

/// `mcp_status`: the current servers (none in the standalone profile; the reference
/// profile's dynamic servers report `pending` until the driver connects them).
fn mcp_status(s: &Session) -> McpStatusResponse<'_> {
    // PROFILE §16, §18: every server in configuration order, SDK servers included; a user's
    // server adds its `config` (never `env` or `headers`), `serverInfo` and `tools` when
    // connected, `error` when it failed.
    let raw = |text: String| RawJson::parse_owned(text.into_bytes()).ok();
    let servers = s.mcp.servers.iter().map(|sv| {
        let user = sv.user.as_ref();
        let connected = sv.status.as_str() == "connected";
        McpServerStatus {
            name: Cow::Borrowed(sv.name.as_str()),
            status: Cow::Borrowed(sv.status.as_str()),
            config: user.and_then(|u| raw(u.status_config())),
            server_info: sv
                .server_info
                .clone()
                .filter(|_| connected && user.is_some())
                .and_then(raw),
            error: sv
                .error
                .as_deref()
                .filter(|_| user.is_some())
                .map(Cow::Borrowed),
            tools: (connected && user.is_some()).then(|| {
                let mut m = b"[".to_vec();
                for (i, t) in sv.tools.iter().enumerate() {
                    if i > 0 {
                        m.push(b',');
                    }
                    m.extend_from_slice(b"{\"name\":");
                    agentx_wire::json::write_str(&mut m, &t.name);
                    m.extend_from_slice(b",\"description\":");
                    agentx_wire::json::write_str(&mut m, &t.description);
                    m.push(b'}');
                }
                m.push(b']');
                RawJson::parse_owned(m).unwrap_or_else(|_| RawJson::empty_object())
            }),
        }
    });
    let reference = s
        .config
        .reference
        .iter()
        .flat_map(|r| r.mcp_servers.iter())
        .map(|(n, _)| McpServerStatus {
            name: Cow::Borrowed(n.as_str()),
            status: Cow::Borrowed("pending"),
            config: None,
            server_info: None,
            error: None,
            tools: None,
        });
    McpStatusResponse {
        mcp_servers: servers.chain(reference).collect(),
    }
}
