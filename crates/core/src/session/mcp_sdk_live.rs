//! The host's in-process MCP servers after their listing (PROFILE §16 with §18's rules for
//! them): `notifications/cancelled` to a server whose call timed out or was interrupted (an
//! `mcp_message` whose answer is ignored), so the host's handler stops; the server's own
//! `notifications/tools/list_changed` (the TypeScript SDK sends it as an inbound `mcp_message`
//! control request) lists its tools again, the new list applying from the next model request;
//! and an interrupt stops a listing in progress (its request withdrawn with the others before
//! the acknowledgement; a first listing fails the server `interrupted`, a relisting keeps the
//! old list).
//!
//! Must never: read a clock, wait for a notification's answer, or let an inbound message
//! change a server other than the one it names.

use std::time::Instant;

use agentx_wire::control::{Resolved, Started};
use agentx_wire::json;
use agentx_wire::wire::subtypes::McpMessage;
use agentx_wire::wire::{ControlRequestBody, RawJson, Text};

use super::mcp_servers::Status;
use super::records::control_success;
use super::Session;

impl Session {
    /// Sends `notifications/cancelled` for JSON-RPC request `rpc_id` to SDK server `server`.
    pub(crate) fn mcp_notify_cancelled(
        &mut self,
        server: &str,
        rpc_id: u64,
        reason: &str,
        now: Instant,
    ) {
        let mut m =
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
                .to_vec();
        json::write_u64(&mut m, rpc_id);
        m.extend_from_slice(b",\"reason\":");
        json::write_str(&mut m, reason);
        m.extend_from_slice(b"}}");
        let Ok(message) = RawJson::parse_owned(m) else {
            return;
        };
        let body = ControlRequestBody::McpMessage(McpMessage {
            server_name: Text::Owned(server.to_string()),
            message,
        });
        if let Ok(Started::Pending { id }) = self.mcp_request(body, now) {
            let deadline = now.checked_add(self.config.mcp.list_timeout);
            self.mcp.notices.push((id, deadline));
        }
    }

    /// The calls an interrupt took: each server is told (`interrupted`).
    pub(crate) fn mcp_send_cancel_notices(&mut self, now: Instant) {
        for (server, rpc_id) in std::mem::take(&mut self.mcp.to_cancel) {
            self.mcp_notify_cancelled(&server, rpc_id, "interrupted", now);
        }
    }

    /// A notification's answer: ignored. `true` when `r` was one.
    pub(crate) fn mcp_notice_resolved(&mut self, r: &Resolved) -> bool {
        let before = self.mcp.notices.len();
        self.mcp.notices.retain(|n| n.0 != r.id);
        self.mcp.notices.len() != before
    }

    /// Timer: an unanswered notification is withdrawn (`control_cancel_request`).
    pub(crate) fn mcp_notices_timeout(&mut self, now: Instant) {
        let (due, keep): (Vec<_>, Vec<_>) = std::mem::take(&mut self.mcp.notices)
            .into_iter()
            .partition(|n| n.1.is_some_and(|d| d <= now));
        self.mcp.notices = keep;
        if due.is_empty() {
            return;
        }
        let ids: Vec<&str> = due.iter().map(|n| &*n.0).collect();
        if let Some(f) = self.abort_ids(&ids, now) {
            self.output_failed(f, now);
        }
    }

    /// An interrupt: every listing step in progress is taken (its request ID returned to be
    /// withdrawn); a first listing fails its server, a relisting keeps the old list.
    pub(crate) fn mcp_take_listings(&mut self) -> Vec<Box<str>> {
        let mut ids = Vec::new();
        for i in 0..self.mcp.servers.len() {
            let Some(step) = self.mcp.servers[i].step.take() else {
                continue;
            };
            ids.push(step.request_id);
            self.mcp_fail(i, "interrupted");
        }
        ids
    }

    /// An inbound `mcp_message` from SDK server `m.server_name`: answered at once;
    /// `notifications/tools/list_changed` lists that server's tools again.
    pub(crate) fn mcp_inbound_message(&mut self, id: &str, m: &McpMessage<'_>, now: Instant) {
        let name = m.server_name.as_ref();
        let Some(i) = self
            .mcp
            .servers
            .iter()
            .position(|s| s.name == name && s.user.is_none())
        else {
            return self.mcp_unknown(id, name);
        };
        let method = m.message.document().ok().and_then(|d| {
            d.root()
                .as_object()
                .and_then(|o| o.get("method"))
                .and_then(|v| v.as_str())
                .map(|v| v.decode().into_owned())
        });
        let rec = control_success(id, None);
        super::respond(&mut self.out, id, &rec);
        let s = &mut self.mcp.servers[i];
        if method.as_deref() == Some("notifications/tools/list_changed")
            && s.status == Status::Connected
            && s.step.is_none()
        {
            s.relist = Some(Vec::new());
            s.pages = 0;
            self.mcp_list_page(i, None, now);
        }
        self.after_step(now);
    }
}
