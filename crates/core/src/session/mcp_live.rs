//! The live MCP operations of the SDK profile (PROFILE §18 "Live changes", the spec's
//! reference operations): `mcp_set_servers` replaces the dynamic servers and answers before
//! any connection of an added server starts (scenario 8: its connections are queued after the
//! response frame); `mcp_reconnect` answers once its server settled; `mcp_toggle` disables
//! (closing the server) or enables (connecting it again); an unknown name is the correlated
//! error `unknown MCP server <name>`.
//!
//! Must never: touch a server from `--mcp-config` or initialize that no call has named yet, or
//! answer a reconnect before its server settled.

use std::borrow::Cow;
use std::time::Instant;

use agentx_wire::wire::responses::{McpSetServersResponse, ObjectMap};
use agentx_wire::wire::subtypes::McpSetServers;

use super::mcp::quoted;
use super::mcp_config::{self, ServerKind};
use super::mcp_servers::Status;
use super::records::{control_error, control_success, control_success_with};
use super::{Action, Session};

impl Session {
    pub(crate) fn mcp_unknown(&mut self, id: &str, name: &str) {
        let rec = control_error(
            id,
            &format!("unknown MCP server {}", super::policy::cut(name, 64)),
        );
        super::respond(&mut self.out, id, &rec);
    }

    /// `mcp_set_servers` `{"servers":{NAME:CONFIG}}`.
    pub(crate) fn mcp_live_set_servers(&mut self, id: &str, m: &McpSetServers<'_>, now: Instant) {
        let mut defs = Vec::new();
        let mut errors: Vec<(String, String)> = Vec::new();
        if let Ok(doc) = m.servers.0.document() {
            if let Some(obj) = doc.root().as_object() {
                for (name, value) in obj.iter() {
                    let name = name.decode().into_owned();
                    match mcp_config::server_of(&name, value) {
                        Ok(d) => defs.push(d),
                        Err(e) => errors.push((name, e.to_string())),
                    }
                }
            }
        }
        // Removed: dynamic servers (and every SDK server) the call does not name.
        let removed: Vec<String> = self
            .mcp
            .servers
            .iter()
            .filter(|s| s.dynamic || s.user.is_none())
            .filter(|s| !defs.iter().any(|d| d.name == s.name))
            .map(|s| s.name.clone())
            .collect();
        let mut added = Vec::new();
        let mut count = self.mcp.servers.len() - removed.len();
        let mut to_define = Vec::new();
        for d in defs {
            let existing = self.mcp.servers.iter().find(|s| s.name == d.name);
            let same = existing.is_some_and(|s| match (&d.kind, &s.user) {
                (ServerKind::Sdk, None) => true,
                (ServerKind::User(u), Some(v)) => u == v,
                _ => false,
            });
            if same {
                if let Some(s) = self.mcp.servers.iter_mut().find(|s| s.name == d.name) {
                    s.dynamic = true;
                }
                continue;
            }
            if existing.is_none() {
                if count == mcp_config::MAX_SERVERS {
                    errors.push((
                        d.name.clone(),
                        format!(
                            "MCP server {}: more than {} MCP servers",
                            quoted(&d.name),
                            mcp_config::MAX_SERVERS
                        ),
                    ));
                    continue;
                }
                count += 1;
            }
            added.push(d.name.clone());
            to_define.push(d);
        }
        let response = McpSetServersResponse {
            added: added.iter().map(|n| Cow::Borrowed(n.as_str())).collect(),
            removed: removed.iter().map(|n| Cow::Borrowed(n.as_str())).collect(),
            errors: ObjectMap(
                errors
                    .iter()
                    .map(|(n, e)| (Cow::Borrowed(n.as_str()), Cow::Borrowed(e.as_str())))
                    .collect(),
            ),
        };
        let rec = control_success_with(id, &response);
        super::respond(&mut self.out, id, &rec);
        // Scenario 8: everything below is queued after the response frame.
        for name in &removed {
            if let Some(i) = self.mcp.servers.iter().position(|s| &s.name == name) {
                let s = self.mcp.servers.remove(i);
                if s.user.is_some() {
                    self.actions.push_back(Action::McpClose { name: s.name });
                }
            }
        }
        for d in to_define {
            let name = d.name.clone();
            if matches!(d.kind, ServerKind::Sdk) {
                if let Some(i) = self.mcp.servers.iter().position(|s| s.name == name) {
                    if self.mcp.servers[i].user.is_some() {
                        self.actions
                            .push_back(Action::McpClose { name: name.clone() });
                    }
                    self.mcp.servers.remove(i);
                }
            }
            self.mcp_define(d, now);
            if let Some(s) = self.mcp.servers.iter_mut().find(|s| s.name == name) {
                s.dynamic = true;
            }
        }
        self.mcp_rebuild_tools();
        if self.initialized {
            self.mcp_begin(now);
        }
        self.after_step(now);
    }

    /// `mcp_reconnect` `{"serverName"}`: answered once the server settled.
    pub(crate) fn mcp_live_reconnect(&mut self, id: &str, name: &str, now: Instant) {
        let Some(i) = self.mcp.servers.iter().position(|s| s.name == name) else {
            return self.mcp_unknown(id, name);
        };
        if self.mcp.servers[i].user.is_none() {
            // An SDK server lives in the host: there is nothing to reconnect.
            let rec = control_success(id, None);
            return super::respond(&mut self.out, id, &rec);
        }
        self.mcp.reconnects.push((id.to_string(), name.to_string()));
        self.mcp_connect(i, now);
        self.after_step(now);
    }

    /// Answers every `mcp_reconnect` whose server settled.
    pub(crate) fn mcp_answer_reconnects(&mut self) {
        let mut i = 0;
        while i < self.mcp.reconnects.len() {
            let (id, name) = &self.mcp.reconnects[i];
            let server = self.mcp.servers.iter().find(|s| &s.name == name);
            let rec = match server.map(|s| (s.status, s.error.clone())) {
                Some((Status::Pending, _)) => {
                    i += 1;
                    continue;
                }
                Some((Status::Connected, _)) => control_success(id, None),
                Some((_, error)) => control_error(
                    id,
                    &error.unwrap_or_else(|| "the server did not connect".into()),
                ),
                None => control_error(id, "the server was removed"),
            };
            let (id, _) = self.mcp.reconnects.remove(i);
            super::respond(&mut self.out, &id, &rec);
        }
    }

    /// `mcp_toggle` `{"serverName","enabled"}`.
    pub(crate) fn mcp_live_toggle(&mut self, id: &str, name: &str, enabled: bool, now: Instant) {
        let Some(i) = self.mcp.servers.iter().position(|s| s.name == name) else {
            return self.mcp_unknown(id, name);
        };
        let is_user = self.mcp.servers[i].user.is_some();
        if !enabled {
            if self.mcp.servers[i].status != Status::Disabled {
                self.mcp_withdraw(i);
                self.mcp.servers[i].status = Status::Disabled;
                if is_user {
                    self.actions.push_back(Action::McpClose {
                        name: name.to_string(),
                    });
                }
            }
        } else if self.mcp.servers[i].status == Status::Disabled {
            if is_user {
                self.mcp_connect(i, now);
            } else {
                self.mcp.servers[i].status = Status::Connected;
                self.mcp.servers[i].offered = true;
                self.mcp_rebuild_tools();
            }
        }
        let rec = control_success(id, None);
        super::respond(&mut self.out, id, &rec);
        self.mcp_answer_reconnects();
        self.after_step(now);
    }
}
