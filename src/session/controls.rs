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

use crate::json::{self, write_str, write_u64};
use crate::wire::initialize::{Account, InitializeResponse};
use crate::wire::subtypes::McpSetServers;
use crate::wire::{ControlRequest, ControlRequestBody, RawJson, WireValue};

use super::records::{control_error, control_success};
use super::{Action, Session, SettingSource};

/// PROFILE §5 texts: declared once, in `wire::responses`.
pub use crate::wire::responses::{
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
                    Ok(Some(self.initialize_payload()))
                }
            }
            ControlRequestBody::Interrupt(_) => {
                return self.interrupt(Some(&id), now);
            }
            ControlRequestBody::GetContextUsage(_) => Ok(Some(self.context_usage())),
            ControlRequestBody::McpStatus(_) => Ok(Some(mcp_status(self))),
            ControlRequestBody::SetModel(_) => Err(SET_MODEL_ERROR.to_string()),
            ControlRequestBody::SetPermissionMode(_) => Err(SET_PERMISSION_MODE_ERROR.to_string()),
            ControlRequestBody::SetMaxThinkingTokens(_) => {
                Err(SET_MAX_THINKING_TOKENS_ERROR.to_string())
            }
            ControlRequestBody::McpSetServers(m) if self.config.reference.is_some() => {
                let (payload, connect) = self.mcp_set_servers(m);
                let rec = control_success(&id, Some(payload));
                super::respond(&mut self.out, &id, &rec);
                // Scenario 8: the response is queued before any connection begins.
                for (name, config_json) in connect {
                    self.actions
                        .push_back(Action::ConnectMcpServer { name, config_json });
                }
                return;
            }
            ControlRequestBody::GetSettings(_) if self.config.reference.is_some() => {
                Ok(Some(self.settings()))
            }
            ControlRequestBody::StopTask(st) if self.config.profile == super::Profile::Sdk => {
                return self.stop_task(&id, st.task_id.as_ref(), now);
            }
            other => Err(unsupported(other.subtype_name())),
        };
        let rec = match reply {
            Ok(payload) => control_success(&id, payload),
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
    pub(crate) fn initialize_payload(&self) -> RawJson<'static> {
        let p = &self.config.projection;
        let response = InitializeResponse {
            commands: Vec::new(),
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
                .then(crate::wire::init::InputCapabilities::native),
        };
        let mut out = Vec::with_capacity(2048);
        response.encode(&mut out);
        RawJson::from_encoded(out)
    }

    /// `get_context_usage`: categories, totals, maximum and an (empty) grid.
    fn context_usage(&self) -> RawJson<'static> {
        let words = |s: &str| s.split_whitespace().count() as u64;
        let tokens: u64 = self.context[..self.history_len]
            .iter()
            .map(|m| match m {
                crate::model::Message::User { text, .. } => words(text),
                crate::model::Message::Assistant { blocks, .. } => blocks
                    .iter()
                    .map(|b| match b {
                        crate::model::Block::Text(t) => words(t),
                        crate::model::Block::ToolUse { input, .. } => words(input),
                    })
                    .sum(),
                crate::model::Message::ToolResult { content, .. } => words(content),
            })
            .sum();
        const MAX: u64 = 200_000;
        let mut o = Vec::with_capacity(256);
        o.extend_from_slice(b"{\"categories\":[{\"name\":\"Messages\",\"tokens\":");
        write_u64(&mut o, tokens);
        o.extend_from_slice(b",\"color\":\"purple\",\"isDeferred\":false}],\"totalTokens\":");
        write_u64(&mut o, tokens);
        o.extend_from_slice(b",\"maxTokens\":");
        write_u64(&mut o, MAX);
        o.extend_from_slice(b",\"rawMaxTokens\":");
        write_u64(&mut o, MAX);
        o.extend_from_slice(b",\"percentage\":");
        write_u64(&mut o, tokens * 100 / MAX);
        o.extend_from_slice(b",\"gridRows\":[],\"model\":");
        write_str(&mut o, &self.config.projection.init.model);
        o.push(b'}');
        RawJson::from_encoded(o)
    }

    /// `mcp_set_servers`: replaces the dynamic server map; reports added, removed and
    /// per-server errors; returns the servers to connect after the response.
    fn mcp_set_servers(
        &mut self,
        m: &McpSetServers<'_>,
    ) -> (RawJson<'static>, Vec<(String, String)>) {
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
        let mut o = Vec::with_capacity(128);
        o.extend_from_slice(b"{\"added\":[");
        for (i, (n, _)) in added.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            write_str(&mut o, n);
        }
        o.extend_from_slice(b"],\"removed\":[");
        for (i, n) in removed.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            write_str(&mut o, n);
        }
        o.extend_from_slice(b"],\"errors\":{");
        for (i, (n, e)) in errors.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            write_str(&mut o, n);
            o.push(b':');
            write_str(&mut o, e);
        }
        o.extend_from_slice(b"}}");
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
        (RawJson::from_encoded(o), connect)
    }

    /// `get_settings`: `effective` (the merge, later sources win per top-level member),
    /// `sources` low to high priority (user, project, local, flag, policy), and `applied`,
    /// the runtime model and effort, which may differ from the merge.
    fn settings(&self) -> RawJson<'static> {
        let mut sources: Vec<(SettingSource, RawJson<'static>)> = self
            .config
            .reference
            .as_ref()
            .map(|r| r.settings.clone())
            .unwrap_or_default();
        sources.sort_by_key(|(s, _)| *s);
        // The merge: a member of a later source replaces the same member of an earlier one.
        let mut merged: Vec<(String, Vec<u8>)> = Vec::new();
        for (_, raw) in &sources {
            let Ok(doc) = raw.document() else { continue };
            let Some(obj) = doc.root().as_object() else {
                continue;
            };
            for (name, value) in obj.iter() {
                let name = name.decode().into_owned();
                let mut bytes = Vec::new();
                json::write_value(&mut bytes, value);
                match merged.iter_mut().find(|(n, _)| *n == name) {
                    Some(slot) => slot.1 = bytes,
                    None => merged.push((name, bytes)),
                }
            }
        }
        let mut o = Vec::with_capacity(256);
        o.extend_from_slice(b"{\"effective\":{");
        for (i, (n, v)) in merged.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            write_str(&mut o, n);
            o.push(b':');
            o.extend_from_slice(v);
        }
        o.extend_from_slice(b"},\"sources\":[");
        for (i, (s, raw)) in sources.iter().enumerate() {
            if i > 0 {
                o.push(b',');
            }
            o.extend_from_slice(b"{\"source\":");
            write_str(&mut o, s.as_str());
            o.extend_from_slice(b",\"settings\":");
            raw.write_canonical(&mut o);
            o.push(b'}');
        }
        o.extend_from_slice(b"],\"applied\":{\"model\":");
        write_str(&mut o, &self.config.projection.init.model);
        // `effort` is optional in `AppliedSettings` and a string when present: a provider
        // without a declared effort omits it (`null` fails the crate's own schema).
        if let Some(e) = &self.config.projection.effort {
            o.extend_from_slice(b",\"effort\":");
            write_str(&mut o, e);
        }
        o.extend_from_slice(b"}}");
        RawJson::from_encoded(o)
    }
}

/// `mcp_status`: the current servers (none in the standalone profile; the reference
/// profile's dynamic servers report `pending` until the driver connects them).
fn mcp_status(s: &Session) -> RawJson<'static> {
    let mut o = Vec::from(&b"{\"mcpServers\":["[..]);
    // PROFILE §16: the SDK's in-process servers, `pending` while listed, then `connected`
    // or `failed`.
    s.mcp_status_json(&mut o);
    let mut first = s.mcp.servers.is_empty();
    if let Some(r) = &s.config.reference {
        for (n, _) in r.mcp_servers.iter() {
            if !std::mem::take(&mut first) {
                o.push(b',');
            }
            o.extend_from_slice(b"{\"name\":");
            write_str(&mut o, n);
            o.extend_from_slice(b",\"status\":\"pending\"}");
        }
    }
    o.extend_from_slice(b"]}");
    RawJson::from_encoded(o)
}
