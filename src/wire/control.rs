//! The control envelopes: `control_request`, `control_response` and `control_cancel_request`
//! (Control request and response protocol), both directions.
//!
//! Owns the closed outer shapes and correlation. A request's `request_id` is decoded first so
//! that a schema-invalid payload yields an error carrying it ([`Error::correlation`]) and the
//! dispatcher can answer with a correlated error ("schema-invalid operation payload returns a
//! correlated error when request identity is recoverable"); a missing `request_id` is an
//! uncorrelated record-level error. A response's operation payload is kept as validated
//! [`RawJson`]: which schema applies depends on the waiter (WIRE-009), so the typed decoders
//! (`PermissionDecision::from_outcome`, `InitializeResponse`, ...) run against it there.
//! `pending_permission_requests` elements are complete `control_request` records, validated
//! like any other (PERM-051). Never correlates, times out or cancels anything (`control`).

use crate::json::{Object, Value};

use super::decode::{req, take, Closed, IntoOwned, Obj, Path, WireValue};
use super::error::Error;
use super::grammar::NonEmpty;
use super::permission::{CanUseTool, PermissionDecision};
use super::raw::RawJson;
use super::subtypes::ControlRequestBody;

const RULE: &str = "control protocol";

/// `{"type":"control_request","request_id":..,"request":{"subtype":..,...}}`.
#[derive(Clone, Debug, PartialEq)]
pub struct ControlRequest<'a> {
    /// The request ID correlating the request, its response and any cancellation.
    pub request_id: NonEmpty<'a>,
    /// The request payload, by subtype.
    pub request: ControlRequestBody<'a>,
}

impl<'a> ControlRequest<'a> {
    pub(crate) fn decode_members(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let mut s: [Option<Value<'_, 'a>>; 3] = [None; 3];
        take(
            obj,
            &["request_id", "request", "type"],
            &mut s,
            Closed::No,
            at,
        )?;
        // Identity first, so later failures are correlated.
        let request_id: NonEmpty<'a> = req(s[0], &at.key("request_id"), RULE)?;
        let corr = |e: Error| e.correlated(request_id.as_str());
        // The envelope is closed: an unknown outer member is a correlated error.
        take(
            obj,
            &["request_id", "request", "type"],
            &mut [None, None, None],
            Closed::Yes("WIRE-021"),
            at,
        )
        .map_err(corr)?;
        let req_at = at.key("request");
        let request = match s[1] {
            None => return Err(corr(Error::missing(&req_at, RULE))),
            Some(v) => ControlRequestBody::decode(v, &req_at).map_err(corr)?,
        };
        Ok(ControlRequest {
            request_id,
            request,
        })
    }

    /// Appends the canonical JSON (one object, no newline) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"control_request\"");
        self.request_id.encode(w.key("\"request_id\":"));
        self.request.encode(w.key("\"request\":"));
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> ControlRequest<'static> {
        ControlRequest {
            request_id: self.request_id.into_owned(),
            request: self.request.into_owned(),
        }
    }
}

impl<'a> WireValue<'a> for ControlRequest<'a> {
    /// A complete nested record (PERM-051): `type` must be `control_request`.
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::wrong_type(at, "a control_request record", "PERM-051"))?;
        let ty_at = at.key("type");
        match super::decode::member(obj, "type") {
            None => return Err(Error::missing(&ty_at, "PERM-051")),
            Some(t) if t.as_str().is_some_and(|t| t.eq_str("control_request")) => {}
            Some(_) => return Err(Error::invalid(&ty_at, "\"control_request\"", "PERM-051")),
        }
        ControlRequest::decode_members(obj, at)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        ControlRequest::encode(self, out)
    }
}

impl IntoOwned for ControlRequest<'_> {
    type Owned = ControlRequest<'static>;
    fn into_owned(self) -> ControlRequest<'static> {
        ControlRequest::into_owned(self)
    }
}

/// `{"type":"control_response","response":{"subtype":"success"|"error","request_id":..,...}}`.
/// Canonical order of the inner object: `subtype, request_id`, then `response` or `error,
/// pending_permission_requests`.
#[derive(Clone, Debug, PartialEq)]
pub struct ControlResponse<'a> {
    /// The request ID correlating the request, its response and any cancellation.
    pub request_id: NonEmpty<'a>,
    /// `success` with its payload, or `error`.
    pub outcome: ControlOutcome<'a>,
}

/// The closed outer `success | error` union (WIRE-009).
#[derive(Clone, Debug, PartialEq)]
pub enum ControlOutcome<'a> {
    /// `response` absent or `null` is `None` (an interrupt acknowledgement has none, WIRE-010).
    Success {
        /// The subtype's response payload, validated later by its waiter (WIRE-009).
        response: Option<RawJson<'a>>,
    },
    /// `subtype: "error"`.
    Error {
        /// The error message.
        error: super::Text<'a>,
        /// PERM-051: complete `control_request` records, validated.
        pending_permission_requests: Option<Vec<ControlRequest<'a>>>,
    },
}

impl<'a> ControlResponse<'a> {
    /// A success carrying an encoded payload (`InitializeResponse`, `PermissionDecision`, ...).
    pub fn success_with<'p, P: WireValue<'p>>(
        request_id: NonEmpty<'a>,
        payload: &P,
    ) -> ControlResponse<'a> {
        let mut bytes = Vec::new();
        payload.encode(&mut bytes);
        ControlResponse {
            request_id,
            outcome: ControlOutcome::Success {
                response: Some(RawJson::from_encoded(bytes)),
            },
        }
    }

    pub(crate) fn decode_members(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        Self::decode_members_as(obj, at, false)
    }

    /// `open`: the lenient peer profile (`wire::peer`): members this profile does not define,
    /// at the envelope and beside the outcome, are ignored instead of rejected (the payload is
    /// kept whole either way), and `pending_permission_requests` that do not decode are
    /// dropped. Closed (`false`) is WIRE-009/WIRE-021.
    pub(crate) fn decode_members_as(
        obj: Object<'_, 'a>,
        at: &Path<'_>,
        open: bool,
    ) -> Result<Self, Error> {
        let closed = |rule| if open { Closed::No } else { Closed::Yes(rule) };
        let mut s: [Option<Value<'_, 'a>>; 2] = [None; 2];
        take(obj, &["response", "type"], &mut s, closed("WIRE-021"), at)?;
        let r_at = at.key("response");
        let inner = match s[0] {
            None => return Err(Error::missing(&r_at, RULE)),
            Some(v) => v
                .as_object()
                .ok_or_else(|| Error::wrong_type(&r_at, "an object", RULE))?,
        };
        let mut s: [Option<Value<'_, 'a>>; 5] = [None; 5];
        const NAMES: &[&str] = &[
            "subtype",
            "request_id",
            "response",
            "error",
            "pending_permission_requests",
        ];
        take(inner, NAMES, &mut s, Closed::No, &r_at)?;
        let request_id: NonEmpty<'a> = req(s[1], &r_at.key("request_id"), RULE)?;
        let corr = |e: Error| e.correlated(request_id.as_str());
        let st_at = r_at.key("subtype");
        let subtype: super::Text<'a> = req(s[0], &st_at, RULE).map_err(corr)?;
        let outcome = match &*subtype {
            "success" => {
                take(
                    inner,
                    &NAMES[..3],
                    &mut [None, None, None],
                    closed("WIRE-009"),
                    &r_at,
                )
                .map_err(corr)?;
                let response = match s[2] {
                    Some(v) if !v.is_null() => Some(RawJson::from_value(v)),
                    _ => None,
                };
                ControlOutcome::Success { response }
            }
            "error" => {
                let names = [
                    "subtype",
                    "request_id",
                    "error",
                    "pending_permission_requests",
                ];
                take(
                    inner,
                    &names,
                    &mut [None, None, None, None],
                    closed("WIRE-009"),
                    &r_at,
                )
                .map_err(corr)?;
                let pending = super::decode::opt(s[4], &r_at.key("pending_permission_requests"));
                ControlOutcome::Error {
                    error: req(s[3], &r_at.key("error"), RULE).map_err(corr)?,
                    pending_permission_requests: match pending {
                        Err(_) if open => None,
                        other => other.map_err(corr)?,
                    },
                }
            }
            _ => {
                return Err(corr(Error::invalid(
                    &st_at,
                    "\"success\" or \"error\"",
                    "WIRE-009",
                )))
            }
        };
        Ok(ControlResponse {
            request_id,
            outcome,
        })
    }

    /// Appends the canonical JSON (one object, no newline) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"control_response\"");
        let mut r = Obj::begin(w.key("\"response\":"));
        match &self.outcome {
            ControlOutcome::Success { response } => {
                r.constant("\"subtype\":\"success\"");
                self.request_id.encode(r.key("\"request_id\":"));
                if let Some(p) = response {
                    p.encode(r.key("\"response\":"));
                }
            }
            ControlOutcome::Error {
                error,
                pending_permission_requests,
            } => {
                r.constant("\"subtype\":\"error\"");
                self.request_id.encode(r.key("\"request_id\":"));
                error.encode(r.key("\"error\":"));
                if let Some(p) = pending_permission_requests {
                    p.encode(r.key("\"pending_permission_requests\":"));
                }
            }
        }
        r.end();
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> ControlResponse<'static> {
        ControlResponse {
            request_id: self.request_id.into_owned(),
            outcome: match self.outcome {
                ControlOutcome::Success { response } => ControlOutcome::Success {
                    response: response.into_owned(),
                },
                ControlOutcome::Error {
                    error,
                    pending_permission_requests,
                } => ControlOutcome::Error {
                    error: IntoOwned::into_owned(error),
                    pending_permission_requests: pending_permission_requests.into_owned(),
                },
            },
        }
    }
}

/// `{"type":"control_cancel_request","request_id":..}`, closed.
#[derive(Clone, Debug, PartialEq)]
pub struct ControlCancelRequest<'a> {
    /// The request ID correlating the request, its response and any cancellation.
    pub request_id: NonEmpty<'a>,
}

impl<'a> ControlCancelRequest<'a> {
    pub(crate) fn decode_members(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let mut s: [Option<Value<'_, 'a>>; 2] = [None; 2];
        take(
            obj,
            &["request_id", "type"],
            &mut s,
            Closed::Yes("WIRE-021"),
            at,
        )?;
        Ok(ControlCancelRequest {
            request_id: req(s[0], &at.key("request_id"), RULE)?,
        })
    }

    /// Appends the canonical JSON (one object, no newline) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"control_cancel_request\"");
        self.request_id.encode(w.key("\"request_id\":"));
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> ControlCancelRequest<'static> {
        ControlCancelRequest {
            request_id: self.request_id.into_owned(),
        }
    }
}

impl PermissionDecision<'_> {
    /// Validates the outcome of a `can_use_tool` request: PERM-052 (a success with an absent
    /// or `null` decision is an error), PERM-040..048, PERM-046 (`toolUseID` must match).
    /// An `Err` — like an error response — must be settled as a denial (PERM-049); this
    /// function never turns anything into an allow.
    pub fn from_outcome<'r>(
        outcome: &'r ControlOutcome<'_>,
        request: &CanUseTool<'_>,
    ) -> Result<PermissionDecision<'r>, Error> {
        let at = Path::ROOT;
        let resp_at = at.key("response");
        let raw = match outcome {
            ControlOutcome::Error { .. } => {
                return Err(Error::invalid(
                    &at.key("subtype"),
                    "a success response",
                    "PERM-049",
                ))
            }
            ControlOutcome::Success { response: None } => {
                return Err(Error::missing(&resp_at, "PERM-052"))
            }
            ControlOutcome::Success {
                response: Some(raw),
            } => raw,
        };
        let doc = raw.document().map_err(Error::json)?;
        let root = doc.root();
        if root.is_null() {
            return Err(Error::missing(&resp_at, "PERM-052"));
        }
        let decision = PermissionDecision::decode(root, &resp_at)?;
        let given = match &decision {
            PermissionDecision::Allow { tool_use_id, .. }
            | PermissionDecision::Deny { tool_use_id, .. } => tool_use_id,
        };
        if let Some(id) = given {
            if id.as_ref() != request.tool_use_id.as_str() {
                return Err(Error::invalid(
                    &resp_at.key("toolUseID"),
                    "the request's tool_use_id",
                    "PERM-046",
                ));
            }
        }
        Ok(decision)
    }
}
