//! WIRE-009: a response validated with the schema its own waiter stored ([`Expect`]):
//! `can_use_tool` decisions by PERM-040..053, the catalog's typed payloads by subtype, open
//! payloads and unknown subtypes kept unchecked.
//!
//! Owns the schema choice and the payload checks. Must never: turn anything but a validated
//! success into a permission decision, or echo a payload's value in an error.

use crate::wire::initialize::InitializeResponse;
use crate::wire::responses::{
    decode_payload, CancelAsyncMessageResponse, ContextUsageResponse, ElicitationResponse,
    GetSettingsResponse, McpSetServersResponse, McpStatusResponse, ReloadPluginsResponse,
    RewindFilesResponse,
};
use crate::wire::{
    CanUseTool, ControlOutcome, ControlRequest, ControlSubtype, Error as WireError, IntoOwned,
    Path, PermissionDecision, RawJson,
};

use super::{InvalidResponse, Outcome, Payload};

/// The schema a waiter validates its response with (WIRE-009).
#[derive(Clone, Debug)]
pub(super) enum Expect {
    /// `can_use_tool`: the request is kept for PERM-046.
    Permission(Box<CanUseTool<'static>>),
    /// Any other subtype (`None`: an unknown subtype, payload unchecked).
    Subtype(Option<ControlSubtype>),
}

impl Expect {
    pub(super) fn tool_use_id(&self) -> Option<&str> {
        match self {
            Expect::Permission(r) => Some(r.tool_use_id.as_str()),
            Expect::Subtype(_) => None,
        }
    }
}

/// The tool identity a response carries: the decision's `toolUseID` (or its PERM-047 alias).
pub(super) fn payload_tool_use_id(outcome: &ControlOutcome<'_>) -> Option<String> {
    let ControlOutcome::Success {
        response: Some(raw),
    } = outcome
    else {
        return None;
    };
    let doc = raw.document().ok()?;
    let obj = doc.root().as_object()?;
    let v = obj.get("toolUseID").or_else(|| obj.get("tool_use_id"))?;
    Some(v.as_str()?.decode().into_owned())
}

/// WIRE-009: the response validated with the schema stored with its waiter.
pub(super) fn validate(expect: &Expect, outcome: &ControlOutcome<'_>, open: bool) -> Outcome {
    let response = match outcome {
        ControlOutcome::Error {
            error,
            pending_permission_requests,
        } => {
            return Outcome::Error {
                message: error.to_string(),
                pending_permission_requests: pending_permission_requests
                    .clone()
                    .map(|v| v.into_iter().map(ControlRequest::into_owned).collect()),
            }
        }
        ControlOutcome::Success { response } => response,
    };
    match expect {
        // PERM-040..048, 046, 052; never skipped for a non-error success (WIRE-009).
        Expect::Permission(request) => match PermissionDecision::from_outcome(outcome, request) {
            Ok(d) => Outcome::Success(Payload::Decision(d.into_owned())),
            Err(e) => Outcome::Invalid(InvalidResponse::of(&e)),
        },
        Expect::Subtype(_) if open => Outcome::Success(match response {
            None => Payload::None,
            Some(r) => Payload::Json(r.clone().into_owned()),
        }),
        Expect::Subtype(subtype) => match check_payload(*subtype, response.as_ref()) {
            Ok(p) => Outcome::Success(p),
            Err(e) => Outcome::Invalid(InvalidResponse::of(&e)),
        },
    }
}

fn typed<'r, T: crate::wire::WireValue<'r>>(
    raw: Option<&'r RawJson<'_>>,
) -> Result<Payload, WireError> {
    let Some(raw) = raw else {
        return Err(WireError::missing(&Path::ROOT.key("response"), "WIRE-009"));
    };
    decode_payload::<T>(raw)?;
    Ok(Payload::Json(raw.clone().into_owned()))
}

fn check_payload(
    subtype: Option<ControlSubtype>,
    raw: Option<&RawJson<'_>>,
) -> Result<Payload, WireError> {
    use ControlSubtype as S;
    match subtype {
        // WIRE-010: the acknowledgement carries no operation payload.
        Some(S::Interrupt) => match raw {
            None => Ok(Payload::None),
            Some(_) => Err(WireError::invalid(
                &Path::ROOT.key("response"),
                "no payload",
                "WIRE-010",
            )),
        },
        Some(S::Initialize) => typed::<InitializeResponse<'_>>(raw),
        Some(S::McpStatus) => typed::<McpStatusResponse<'_>>(raw),
        Some(S::GetContextUsage) => typed::<ContextUsageResponse<'_>>(raw),
        Some(S::RewindFiles) => typed::<RewindFilesResponse<'_>>(raw),
        Some(S::CancelAsyncMessage) => typed::<CancelAsyncMessageResponse>(raw),
        Some(S::McpSetServers) => typed::<McpSetServersResponse<'_>>(raw),
        Some(S::ReloadPlugins) => typed::<ReloadPluginsResponse<'_>>(raw),
        Some(S::GetSettings) => typed::<GetSettingsResponse<'_>>(raw),
        Some(S::Elicitation) => typed::<ElicitationResponse<'_>>(raw),
        // Operations whose payload the catalog leaves open, and unknown subtypes.
        _ => Ok(match raw {
            None => Payload::None,
            Some(r) => Payload::Json(r.clone().into_owned()),
        }),
    }
}
