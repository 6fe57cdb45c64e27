//! Core output records: `assistant`, `stream_event` and `result` (Core output records,
//! System and lifecycle events).
//!
//! Owns their members and invariants: the closed assistant error-category set, the result
//! subtypes (success and the four error subtypes; there is no cancelled subtype), the
//! accounting fields, permission denials, and WIRE-012 cost fidelity (`null` stays `null`, a
//! known zero stays `0`: integral costs are written as integers). Model-API payloads (the
//! assistant `message`, the `stream_event` `event`, `usage`) are `api::ApiPayload`s: typed
//! when a session writes them, validated borrowed JSON when decoded (not re-modelled). These records are open: members the protocol does not
//! list (other CLIs add `timestamp`, `request_id`, ...) are ignored on decode and not
//! written back. Members that Claude-CLI captures omit although the protocol lists them
//! (`parent_tool_use_id`, `stop_reason`; `permission_denials` on an error result) are
//! tolerated when absent and written canonically (`null`, `[]`); a success result requires
//! `modelUsage` and `permission_denials` (PROFILE §8). Never does I/O.

use crate::json::{Object, Value};

use super::api::{ApiMessage, ApiPayload, StreamPayload, TurnUsage};
use super::decode::{Closed, IntoOwned, Path, Text, WireValue};
use super::error::Error;
use super::grammar::Uuid;
use super::raw::RawJson;
use super::table::{wire_enum, wire_struct};

wire_enum! {
    /// The closed assistant error categories.
    pub enum AssistantError : "an assistant error category", "Core output records" {
        AuthenticationFailed = "authentication_failed",
        BillingError = "billing_error",
        RateLimit = "rate_limit",
        InvalidRequest = "invalid_request",
        ServerError = "server_error",
        Unknown = "unknown",
        MaxOutputTokens = "max_output_tokens",
    }
}

wire_struct! {
    /// `assistant`. Canonical order: `type, message, parent_tool_use_id, uuid, session_id,
    /// error`.
    pub struct AssistantRecord<'a> {
        closed: Closed::No,
        rule: "Core output records",
        skip: ["type"],
        /// The API assistant message: typed when written, validated JSON when decoded.
        message: ApiPayload<'a, ApiMessage<'a>> = "message" => req,
        parent_tool_use_id: Option<Text<'a>> = "parent_tool_use_id" => nul,
        uuid: Uuid<'a> = "uuid" => req,
        session_id: Uuid<'a> = "session_id" => req,
        error: Option<AssistantError> = "error" => opt,
    }
}

wire_struct! {
    /// `stream_event`: a raw model stream event. Canonical order: `type, event,
    /// parent_tool_use_id, uuid, session_id`.
    pub struct StreamEvent<'a> {
        closed: Closed::No,
        rule: "System and lifecycle events",
        skip: ["type"],
        /// The Messages-API stream event: typed when written, validated JSON when decoded.
        event: ApiPayload<'a, StreamPayload<'a>> = "event" => req,
        parent_tool_use_id: Option<Text<'a>> = "parent_tool_use_id" => nul,
        uuid: Uuid<'a> = "uuid" => req,
        session_id: Uuid<'a> = "session_id" => req,
    }
}

wire_enum! {
    /// `result` subtypes; there is no cancelled subtype.
    pub enum ResultSubtype : "success, error_during_execution, error_max_turns, error_max_budget_usd or error_max_structured_output_retries", "Core output records" {
        Success = "success",
        ErrorDuringExecution = "error_during_execution",
        ErrorMaxTurns = "error_max_turns",
        ErrorMaxBudgetUsd = "error_max_budget_usd",
        ErrorMaxStructuredOutputRetries = "error_max_structured_output_retries",
    }
}

wire_struct! {
    /// One permission denial: tool name, tool-use ID, effective tool input.
    pub struct PermissionDenial<'a> {
        closed: Closed::No,
        rule: "Core output records",
        skip: [],
        tool_name: Text<'a> = "tool_name" => req,
        tool_use_id: Text<'a> = "tool_use_id" => req,
        tool_input: RawJson<'a> = "tool_input" => req,
    }
}

wire_struct! {
    /// Per-model usage; `costUSD` is required and nullable (WIRE-012).
    pub struct ModelUsage {
        closed: Closed::No,
        rule: "WIRE-012",
        skip: [],
        input_tokens: u64 = "inputTokens" => req,
        output_tokens: u64 = "outputTokens" => req,
        cache_read_input_tokens: u64 = "cacheReadInputTokens" => req,
        cache_creation_input_tokens: u64 = "cacheCreationInputTokens" => req,
        web_search_requests: Option<u64> = "webSearchRequests" => opt,
        /// `None` is JSON `null`: pricing unavailable (WIRE-012).
        cost_usd: Option<f64> = "costUSD" => req,
        context_window: Option<u64> = "contextWindow" => opt,
        max_output_tokens: Option<u64> = "maxOutputTokens" => opt,
    }
}

/// `modelUsage`: per-model usage keyed by model name, in document order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ModelUsageMap<'a>(pub Vec<(Text<'a>, ModelUsage)>);

impl<'a> WireValue<'a> for ModelUsageMap<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        super::responses::decode_entries(v, at, "WIRE-012").map(ModelUsageMap)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        super::responses::encode_entries(&self.0, out)
    }
}

impl IntoOwned for ModelUsageMap<'_> {
    type Owned = ModelUsageMap<'static>;
    fn into_owned(self) -> ModelUsageMap<'static> {
        ModelUsageMap(
            self.0
                .into_iter()
                .map(|(k, v)| (IntoOwned::into_owned(k), v))
                .collect(),
        )
    }
}

wire_struct! {
    /// `result`. Canonical order as declared. Decoding checks: `success` carries `result`;
    /// an error subtype carries `errors`.
    pub struct ResultRecord<'a> {
        closed: Closed::No,
        rule: "Core output records",
        skip: ["type"],
        subtype: ResultSubtype = "subtype" => req,
        is_error: bool = "is_error" => req,
        duration_ms: u64 = "duration_ms" => req,
        duration_api_ms: u64 = "duration_api_ms" => req,
        /// Signed: Claude-CLI captures carry `-1`.
        num_turns: i64 = "num_turns" => req,
        result: Option<Text<'a>> = "result" => opt,
        stop_reason: Option<Text<'a>> = "stop_reason" => nul,
        /// Required; `None` is JSON `null` (WIRE-012).
        total_cost_usd: Option<f64> = "total_cost_usd" => req,
        usage: ApiPayload<'a, TurnUsage> = "usage" => req,
        model_usage: Option<ModelUsageMap<'a>> = "modelUsage" => opt,
        permission_denials: Vec<PermissionDenial<'a>> = "permission_denials" => dflt,
        errors: Option<Vec<Text<'a>>> = "errors" => opt,
        structured_output: Option<RawJson<'a>> = "structured_output" => opt,
        fast_mode_state: Option<Text<'a>> = "fast_mode_state" => opt,
        /// WIRE-022: attachment-bearing turns carry the stable prompt UUID.
        prompt_uuid: Option<Uuid<'a>> = "prompt_uuid" => opt,
        uuid: Uuid<'a> = "uuid" => req,
        session_id: Uuid<'a> = "session_id" => req,
    }
}

impl<'a> ResultRecord<'a> {
    pub(crate) fn decode_checked(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let r = ResultRecord::decode_members(obj, at)?;
        if r.subtype == ResultSubtype::Success {
            const SUCCESS: &str = "Core output records: success result";
            if r.result.is_none() {
                return Err(Error::missing(&at.key("result"), SUCCESS));
            }
            // PROFILE §8: a success result carries `modelUsage` and `permission_denials`.
            if r.model_usage.is_none() {
                return Err(Error::missing(&at.key("modelUsage"), SUCCESS));
            }
            if obj.get("permission_denials").is_none() {
                return Err(Error::missing(&at.key("permission_denials"), SUCCESS));
            }
        } else if r.errors.is_none() {
            return Err(Error::missing(
                &at.key("errors"),
                "Core output records: error result",
            ));
        }
        Ok(r)
    }
}
