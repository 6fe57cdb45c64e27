//! Top-level lifecycle events of the System and lifecycle events table that are not
//! `system/*` subtypes: `tool_progress`, `auth_status`, `rate_limit_event`,
//! `tool_use_summary`, `prompt_suggestion`, `streamlined_text`,
//! `streamlined_tool_use_summary`.
//!
//! Open records (members the protocol does not list are ignored and not written back), each
//! with `uuid` and `session_id`; member names follow the published SDK stream where the
//! protocol names only the meaning. Never does I/O.

use super::decode::{Closed, Text};
use super::grammar::Uuid;
use super::table::wire_struct;

macro_rules! lifecycle_event {
    ($(#[$m:meta])* $name:ident { $($body:tt)* }) => {
        wire_struct! {
            $(#[$m])*
            pub struct $name<'a> {
                closed: Closed::No,
                rule: "System and lifecycle events",
                skip: ["type"],
                $($body)*
                uuid: Uuid<'a> = "uuid" => req,
                session_id: Uuid<'a> = "session_id" => req,
            }
        }
    };
}

lifecycle_event!(
    /// `tool_progress`.
    ToolProgress {
        tool_use_id: Text<'a> = "tool_use_id" => req,
        tool_name: Text<'a> = "tool_name" => req,
        parent_tool_use_id: Option<Text<'a>> = "parent_tool_use_id" => nul,
        elapsed_time_seconds: f64 = "elapsed_time_seconds" => req,
        task_id: Option<Text<'a>> = "task_id" => opt,
    }
);
lifecycle_event!(
    /// `auth_status`.
    AuthStatus {
        is_authenticating: bool = "isAuthenticating" => req,
        output: Vec<Text<'a>> = "output" => req,
        error: Option<Text<'a>> = "error" => opt,
    }
);

wire_struct! {
    /// `rate_limit_info`: the state and optional reset/utilization/overage data.
    pub struct RateLimitInfo<'a> {
        closed: Closed::No,
        rule: "System and lifecycle events",
        skip: [],
        /// `allowed`, `allowed_warning` or `rejected`.
        status: Text<'a> = "status" => req,
        resets_at: Option<i64> = "resetsAt" => opt,
        rate_limit_type: Option<Text<'a>> = "rateLimitType" => opt,
        utilization: Option<f64> = "utilization" => opt,
        overage_status: Option<Text<'a>> = "overageStatus" => opt,
        overage_resets_at: Option<i64> = "overageResetsAt" => opt,
        overage_disabled_reason: Option<Text<'a>> = "overageDisabledReason" => opt,
        is_using_overage: Option<bool> = "isUsingOverage" => opt,
    }
}

lifecycle_event!(
    /// `rate_limit_event`.
    RateLimitEvent {
        rate_limit_info: RateLimitInfo<'a> = "rate_limit_info" => req,
    }
);
lifecycle_event!(
    /// `tool_use_summary`: summary and preceding tool-use IDs.
    ToolUseSummary {
        summary: Text<'a> = "summary" => req,
        preceding_tool_use_ids: Vec<Text<'a>> = "preceding_tool_use_ids" => req,
    }
);
lifecycle_event!(
    /// `prompt_suggestion`: the predicted next prompt.
    PromptSuggestion {
        suggestion: Text<'a> = "suggestion" => req,
    }
);
lifecycle_event!(
    /// `streamlined_text`: internal text-only assistant projection.
    StreamlinedText {
        text: Text<'a> = "text" => req,
    }
);
lifecycle_event!(
    /// `streamlined_tool_use_summary`: internal cumulative tool summary projection.
    StreamlinedToolUseSummary {
        tool_summary: Text<'a> = "tool_summary" => req,
    }
);
