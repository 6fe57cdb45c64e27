//! Elicitation from the user's MCP servers to the host (PROFILE §18 "Requests from a server",
//! the spec's `elicitation` reference operation and `system/elicitation_complete`): a server's
//! `elicitation/create`, reported by the driver as [`McpReport::Elicitation`], becomes the
//! correlated `elicitation` control request on the session's one broker; the host's
//! `{"action","content"?}` is the answer to the server ([`Action::McpElicitationAnswer`]).
//! No answer within [`ELICITATION_TIMEOUT`], an error response, a malformed one, EOF or an
//! interrupt resolves as `cancel` (the spec: "elicitation failure resolves as cancel"); an
//! abandoned request is withdrawn with `control_cancel_request` (WIRE-007). Without the SDK
//! profile every elicitation is answered `cancel` at once.
//!
//! Must never: read a clock (deadlines are `now` + timeout), answer one elicitation twice, or
//! pass the host's answer on unchecked (only an `accept`'s object `content` goes back).
//!
//! [`McpReport::Elicitation`]: super::McpReport::Elicitation

use std::borrow::Cow;
use std::time::{Duration, Instant};

use agentx_wire::control::{Outcome, Payload, Resolved, Started};
use agentx_wire::json;
use agentx_wire::wire::responses::{decode_payload, ElicitationAction, ElicitationResponse};
use agentx_wire::wire::subtypes::Elicitation;
use agentx_wire::wire::system::ElicitationComplete;
use agentx_wire::wire::{ControlRequestBody, OutputRecord, RawJson, RawObject, SystemEvent};

use super::{Action, Session};

/// How long an elicitation waits for the host (PROFILE §18: 600 s, then `cancel`).
pub const ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);

/// The answer a failed elicitation resolves as.
pub const CANCEL: &str = r#"{"action":"cancel"}"#;

/// An elicitation waiting for the host.
#[derive(Debug)]
pub(crate) struct Pending {
    request_id: Box<str>,
    server: String,
    epoch: u64,
    key: u64,
    deadline: Option<Instant>,
}

impl Pending {
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    pub(crate) fn request_id(&self) -> &str {
        &self.request_id
    }
}

/// The MCP `ElicitResult` for the host's answer: `accept` with its object `content`,
/// `decline`, or `cancel` for anything else.
fn result_of(outcome: &Outcome) -> String {
    let Outcome::Success(Payload::Json(raw)) = outcome else {
        return CANCEL.into();
    };
    let Ok(answer) = decode_payload::<ElicitationResponse<'_>>(raw) else {
        return CANCEL.into();
    };
    match answer.action {
        ElicitationAction::Accept => {
            let mut out = br#"{"action":"accept""#.to_vec();
            if let Some(content) = &answer.content {
                out.extend_from_slice(b",\"content\":");
                out.extend_from_slice(content.0.as_bytes());
            }
            out.push(b'}');
            String::from_utf8(out).unwrap_or_else(|_| CANCEL.into())
        }
        ElicitationAction::Decline => r#"{"action":"decline"}"#.into(),
        ElicitationAction::Cancel => CANCEL.into(),
    }
}

/// The control request for the server's `elicitation/create` params (members present when
/// the server sent them); `None` when they are not an object with a string `message`.
fn request_of(server: &str, params: &str) -> Option<ControlRequestBody<'static>> {
    let doc = json::parse(params.as_bytes()).ok()?;
    let root = doc.root();
    let obj = root.as_object()?;
    let text = |k: &str| -> Option<Cow<'static, str>> {
        obj.get(k)
            .and_then(|v| v.as_str())
            .map(|v| Cow::Owned(v.decode().into_owned()))
    };
    let message = text("message")?;
    let requested_schema = match obj.get("requestedSchema") {
        Some(v) if v.as_object().is_some() => {
            let mut raw = Vec::new();
            json::write_value(&mut raw, v);
            Some(RawObject(RawJson::parse_owned(raw).ok()?))
        }
        _ => None,
    };
    Some(ControlRequestBody::Elicitation(Elicitation {
        mcp_server_name: Cow::Owned(server.to_string()),
        message,
        mode: text("mode"),
        url: text("url"),
        elicitation_id: text("elicitationId"),
        requested_schema,
    }))
}

impl Session {
    /// PROFILE §18: `elicitation/create` `key` from user server `name`'s connection `epoch`,
    /// with its params (compact JSON).
    pub(crate) fn mcp_elicit(
        &mut self,
        name: &str,
        epoch: u64,
        key: u64,
        params: &str,
        now: Instant,
    ) {
        let answer = |result: &str| Action::McpElicitationAnswer {
            name: name.to_string(),
            epoch,
            key,
            result: result.to_string(),
        };
        if !self.stamp.sdk || self.done.is_some() {
            self.actions.push_back(answer(CANCEL));
            return;
        }
        let Some(body) = request_of(name, params) else {
            self.actions.push_back(answer(CANCEL));
            return;
        };
        match self.mcp_request(body, now) {
            Ok(Started::Pending { id }) => self.mcp.elicitations.push(Pending {
                request_id: id,
                server: name.to_string(),
                epoch,
                key,
                deadline: now.checked_add(ELICITATION_TIMEOUT),
            }),
            Ok(Started::Resolved(r)) => self.actions.push_back(answer(&result_of(&r.outcome))),
            Err(_) => self.actions.push_back(answer(CANCEL)),
        }
    }

    /// `notifications/elicitation/complete` from user server `name`: `system/elicitation_complete`
    /// in the SDK profile.
    pub(crate) fn mcp_elicitation_complete(&mut self, name: &str, elicitation_id: &str) {
        if !self.stamp.sdk {
            return;
        }
        let rec = OutputRecord::System(SystemEvent::ElicitationComplete(ElicitationComplete {
            mcp_server_name: Cow::Owned(name.to_string()),
            elicitation_id: Cow::Owned(elicitation_id.to_string()),
            uuid: self.stamp.uuid(),
            session_id: self.stamp.sid(),
        }));
        super::push_other(&mut self.out, &rec, "system/elicitation_complete");
    }

    /// A broker resolution: `true` when it was an elicitation's (its answer goes to the
    /// server).
    pub(crate) fn mcp_elicitation_resolved(&mut self, r: &Resolved) -> bool {
        let Some(i) = self
            .mcp
            .elicitations
            .iter()
            .position(|e| e.request_id == r.id)
        else {
            return false;
        };
        let e = self.mcp.elicitations.remove(i);
        self.answer_elicitation(e, result_of(&r.outcome));
        true
    }

    fn answer_elicitation(&mut self, e: Pending, result: String) {
        self.actions.push_back(Action::McpElicitationAnswer {
            name: e.server,
            epoch: e.epoch,
            key: e.key,
            result,
        });
    }

    /// Timer: an elicitation past its deadline is withdrawn (`control_cancel_request`) and
    /// answered `cancel`.
    pub(crate) fn mcp_elicitations_timeout(&mut self, now: Instant) {
        loop {
            let due = self
                .mcp
                .elicitations
                .iter()
                .position(|e| e.deadline.is_some_and(|d| d <= now));
            let Some(i) = due else { return };
            let e = self.mcp.elicitations.remove(i);
            let failure = self.abort_ids(&[&e.request_id], now);
            self.answer_elicitation(e, CANCEL.into());
            if let Some(f) = failure {
                self.output_failed(f, now);
            }
        }
    }

    /// An interrupt: every pending elicitation is answered `cancel`; their request IDs are
    /// returned to be withdrawn with the hook callbacks and calls (WIRE-011).
    pub(crate) fn mcp_take_elicitations(&mut self) -> Vec<Box<str>> {
        let all = std::mem::take(&mut self.mcp.elicitations);
        let mut ids = Vec::with_capacity(all.len());
        for e in all {
            ids.push(e.request_id.clone());
            self.answer_elicitation(e, CANCEL.into());
        }
        ids
    }
}
