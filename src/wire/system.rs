//! `system/*` events (System and lifecycle events; STYLE #4): every subtype is declared once
//! in the table at the bottom, which generates [`SystemSubtype`], [`SystemEvent`], the
//! decode dispatch and the encoder.
//!
//! An unknown subtype is not an error (WIRE-002 applied to `system`): it decodes as
//! [`SystemEvent::Unknown`] with the whole record kept, and the caller warns. Events are open
//! (members the protocol does not list are ignored) and carry `uuid` and `session_id`.
//! Member names follow the published SDK stream where the protocol names only the meaning.
//! Never does I/O.

use crate::json::{Object, Value};

use super::decode::{Closed, IntoOwned, Obj, Path, Text};
use super::error::Error;
use super::grammar::Uuid;
use super::raw::{RawJson, RawObject};
use super::system_init::InitEvent;
use super::table::{wire_enum, wire_struct};

wire_struct! {
    /// Preserved-segment IDs for resume relinking (WIRE-005).
    pub struct PreservedSegment<'a> {
        closed: Closed::No,
        rule: "WIRE-005",
        skip: [],
        head_uuid: Text<'a> = "head_uuid" => req,
        anchor_uuid: Text<'a> = "anchor_uuid" => req,
        tail_uuid: Text<'a> = "tail_uuid" => req,
    }
}

wire_enum! {
    /// What triggered a compaction.
    pub enum CompactTrigger : "\"manual\" or \"auto\"", "System and lifecycle events" {
        Manual = "manual",
        Auto = "auto",
    }
}

wire_struct! {
    /// `compact_metadata` of `system/compact_boundary`.
    pub struct CompactMetadata<'a> {
        closed: Closed::No,
        rule: "System and lifecycle events",
        skip: [],
        trigger: CompactTrigger = "trigger" => req,
        pre_tokens: u64 = "pre_tokens" => req,
        preserved_segment: Option<PreservedSegment<'a>> = "preserved_segment" => opt,
        /// agentx (PROFILE §19): the model's summary that opens the compacted context, so a
        /// resume rebuilds it; absent for `!compact`, whose summary is a fixed text.
        summary: Option<Text<'a>> = "summary" => opt,
    }
}

macro_rules! system_event {
    ($(#[$m:meta])* $name:ident { $($body:tt)* }) => {
        wire_struct! {
            $(#[$m])*
            pub struct $name<'a> {
                closed: Closed::No,
                rule: "System and lifecycle events",
                skip: ["type", "subtype"],
                $($body)*
                uuid: Uuid<'a> = "uuid" => req,
                session_id: Uuid<'a> = "session_id" => req,
            }
        }
    };
}

system_event!(
    /// `system/compact_boundary`.
    CompactBoundary {
        compact_metadata: CompactMetadata<'a> = "compact_metadata" => req,
    }
);
system_event!(
    /// `system/status`: `compacting` or `null`, optional permission mode.
    StatusEvent {
        status: Option<Text<'a>> = "status" => req,
        permission_mode: Option<Text<'a>> = "permissionMode" => opt,
    }
);
system_event!(
    /// `system/post_turn_summary`.
    PostTurnSummary {
        summarizes_uuid: Text<'a> = "summarizes_uuid" => req,
        status_category: Text<'a> = "status_category" => req,
        title: Option<Text<'a>> = "title" => opt,
        status_detail: Option<Text<'a>> = "status_detail" => opt,
        description: Option<Text<'a>> = "description" => opt,
        recent_action: Option<Text<'a>> = "recent_action" => opt,
        needed_action: Option<Text<'a>> = "needed_action" => opt,
        is_noteworthy: Option<bool> = "is_noteworthy" => opt,
        artifact_urls: Option<Vec<Text<'a>>> = "artifact_urls" => opt,
    }
);
system_event!(
    /// `system/local_command_output`.
    LocalCommandOutput {
        content: Text<'a> = "content" => req,
    }
);
system_event!(
    /// `system/hook_started`.
    HookStarted {
        hook_id: Text<'a> = "hook_id" => req,
        hook_name: Text<'a> = "hook_name" => req,
        hook_event: Text<'a> = "hook_event" => req,
    }
);
system_event!(
    /// `system/hook_progress`.
    HookProgress {
        hook_id: Text<'a> = "hook_id" => req,
        hook_name: Text<'a> = "hook_name" => req,
        hook_event: Text<'a> = "hook_event" => req,
        stdout: Text<'a> = "stdout" => req,
        stderr: Text<'a> = "stderr" => req,
        output: Text<'a> = "output" => req,
    }
);

wire_enum! {
    /// `outcome` of a hook response.
    pub enum HookOutcome : "success, error or cancelled", "System and lifecycle events" {
        Success = "success",
        Error = "error",
        Cancelled = "cancelled",
    }
}

system_event!(
    /// `system/hook_response`.
    HookResponse {
        hook_id: Text<'a> = "hook_id" => req,
        hook_name: Text<'a> = "hook_name" => req,
        hook_event: Text<'a> = "hook_event" => req,
        output: Text<'a> = "output" => req,
        stdout: Text<'a> = "stdout" => req,
        stderr: Text<'a> = "stderr" => req,
        exit_code: Option<i64> = "exit_code" => opt,
        outcome: HookOutcome = "outcome" => req,
    }
);

wire_struct! {
    /// A persisted file.
    pub struct PersistedFile<'a> {
        closed: Closed::No,
        rule: "System and lifecycle events",
        skip: [],
        filename: Text<'a> = "filename" => req,
        file_id: Text<'a> = "file_id" => req,
    }
}

wire_struct! {
    /// A file that failed to persist.
    pub struct FailedFile<'a> {
        closed: Closed::No,
        rule: "System and lifecycle events",
        skip: [],
        filename: Text<'a> = "filename" => req,
        error: Text<'a> = "error" => req,
    }
}

system_event!(
    /// `system/files_persisted`.
    FilesPersisted {
        files: Vec<PersistedFile<'a>> = "files" => req,
        failed: Vec<FailedFile<'a>> = "failed" => req,
        processed_at: Text<'a> = "processed_at" => req,
    }
);
system_event!(
    /// `system/task_started`.
    TaskStarted {
        task_id: Text<'a> = "task_id" => req,
        description: Text<'a> = "description" => req,
        tool_use_id: Option<Text<'a>> = "tool_use_id" => opt,
        task_type: Option<Text<'a>> = "task_type" => opt,
        workflow_name: Option<Text<'a>> = "workflow_name" => opt,
        prompt: Option<Text<'a>> = "prompt" => opt,
    }
);
system_event!(
    /// `system/task_progress`.
    TaskProgress {
        task_id: Text<'a> = "task_id" => req,
        description: Text<'a> = "description" => req,
        usage: super::api::ApiPayload<'a, super::api::TaskStep> = "usage" => req,
        tool_use_id: Option<Text<'a>> = "tool_use_id" => opt,
        last_tool_name: Option<Text<'a>> = "last_tool_name" => opt,
        summary: Option<Text<'a>> = "summary" => opt,
    }
);

wire_enum! {
    /// Terminal task status.
    pub enum TaskStatus : "completed, failed or stopped", "System and lifecycle events" {
        Completed = "completed",
        Failed = "failed",
        Stopped = "stopped",
    }
}

system_event!(
    /// `system/task_notification`.
    TaskNotification {
        task_id: Text<'a> = "task_id" => req,
        status: TaskStatus = "status" => req,
        output_file: Text<'a> = "output_file" => req,
        summary: Text<'a> = "summary" => req,
        tool_use_id: Option<Text<'a>> = "tool_use_id" => opt,
        usage: Option<RawObject<'a>> = "usage" => opt,
    }
);

wire_enum! {
    /// Session state.
    pub enum SessionState : "idle, running or requires_action", "WIRE-004" {
        Idle = "idle",
        Running = "running",
        RequiresAction = "requires_action",
    }
}

system_event!(
    /// `system/session_state_changed`.
    SessionStateChanged {
        state: SessionState = "state" => req,
        /// PROFILE §15: `true` in the SDK profile, so the SDKs consume the record themselves
        /// instead of handing it to their caller; absent in the standalone profile.
        sdk_host_only: Option<bool> = "sdk_host_only" => opt,
    }
);
system_event!(
    /// `system/elicitation_complete`.
    ElicitationComplete {
        mcp_server_name: Text<'a> = "mcp_server_name" => req,
        elicitation_id: Text<'a> = "elicitation_id" => req,
    }
);

/// A `system` record whose subtype this profile does not define, kept whole (WIRE-002).
#[derive(Clone, Debug, PartialEq)]
pub struct UnknownSystem<'a> {
    /// The subtype exactly as written.
    pub subtype: Text<'a>,
    /// The complete record, validated JSON.
    pub record: RawObject<'a>,
}

macro_rules! system_subtypes {
    ($( $variant:ident($ty:ty, $decode:path) = $name:literal, )*) => {
        /// Every `system` subtype this profile defines.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum SystemSubtype { $( #[doc = concat!("`", $name, "`.")] $variant, )* }

        impl SystemSubtype {
            /// Every subtype, in declaration order.
            pub const ALL: &'static [SystemSubtype] = &[$(SystemSubtype::$variant),*];
            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $( SystemSubtype::$variant => $name, )* }
            }
        }

        /// A `system` record.
        #[derive(Clone, Debug, PartialEq)]
        pub enum SystemEvent<'a> {
            $( #[doc = concat!("`system/", $name, "`.")] $variant($ty), )*
            /// A subtype this profile does not define: kept whole, never an error.
            Unknown(UnknownSystem<'a>),
        }

        impl<'a> SystemEvent<'a> {
            /// The subtype this profile defines, or `None` for an unknown one.
            pub fn subtype(&self) -> Option<SystemSubtype> {
                match self {
                    $( SystemEvent::$variant(_) => Some(SystemSubtype::$variant), )*
                    SystemEvent::Unknown(_) => None,
                }
            }

            /// The subtype's wire spelling (also for an unknown one).
            pub fn subtype_name(&self) -> &str {
                match self {
                    $( SystemEvent::$variant(_) => $name, )*
                    SystemEvent::Unknown(u) => &u.subtype,
                }
            }

            pub(crate) fn decode_members(obj: Object<'_, 'a>, record: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
                let st_at = at.key("subtype");
                let subtype = match super::decode::member(obj, "subtype") {
                    None => return Err(Error::missing(&st_at, "System and lifecycle events")),
                    Some(s) => s.as_str().ok_or_else(|| Error::wrong_type(&st_at, "a string", "System and lifecycle events"))?,
                };
                $(
                    if super::decode::name_is(&subtype, $name) {
                        return $decode(obj, at).map(|e| SystemEvent::$variant(e.into()));
                    }
                )*
                Ok(SystemEvent::Unknown(UnknownSystem {
                    subtype: subtype.decode(),
                    record: RawObject(RawJson::from_value(record)),
                }))
            }

            /// Writes the complete record: `type`, `subtype`, then the event's members.
            pub fn encode(&self, out: &mut Vec<u8>) {
                match self {
                    $(
                        SystemEvent::$variant(e) => {
                            let mut w = Obj::begin(out);
                            w.constant(concat!("\"type\":\"system\",\"subtype\":\"", $name, "\""));
                            e.encode_members(&mut w);
                            w.end();
                        }
                    )*
                    SystemEvent::Unknown(u) => u.record.0.write_canonical(out),
                }
            }

            /// The owned form, for a value that must outlive its input line.
            pub fn into_owned(self) -> SystemEvent<'static> {
                match self {
                    $( SystemEvent::$variant(e) => SystemEvent::$variant(IntoOwned::into_owned(e)), )*
                    SystemEvent::Unknown(u) => SystemEvent::Unknown(UnknownSystem {
                        subtype: IntoOwned::into_owned(u.subtype),
                        record: IntoOwned::into_owned(u.record),
                    }),
                }
            }
        }
    };
}

system_subtypes! {
    Init(Box<InitEvent<'a>>, InitEvent::decode_checked) = "init",
    CompactBoundary(CompactBoundary<'a>, CompactBoundary::decode_members) = "compact_boundary",
    Status(StatusEvent<'a>, StatusEvent::decode_members) = "status",
    PostTurnSummary(PostTurnSummary<'a>, PostTurnSummary::decode_members) = "post_turn_summary",
    LocalCommandOutput(LocalCommandOutput<'a>, LocalCommandOutput::decode_members) = "local_command_output",
    HookStarted(HookStarted<'a>, HookStarted::decode_members) = "hook_started",
    HookProgress(HookProgress<'a>, HookProgress::decode_members) = "hook_progress",
    HookResponse(HookResponse<'a>, HookResponse::decode_members) = "hook_response",
    FilesPersisted(FilesPersisted<'a>, FilesPersisted::decode_members) = "files_persisted",
    TaskStarted(TaskStarted<'a>, TaskStarted::decode_members) = "task_started",
    TaskProgress(TaskProgress<'a>, TaskProgress::decode_members) = "task_progress",
    TaskNotification(TaskNotification<'a>, TaskNotification::decode_members) = "task_notification",
    SessionStateChanged(SessionStateChanged<'a>, SessionStateChanged::decode_members) = "session_state_changed",
    ElicitationComplete(ElicitationComplete<'a>, ElicitationComplete::decode_members) = "elicitation_complete",
}
