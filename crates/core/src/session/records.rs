//! Builders of the records the session writes: each returns a typed [`OutputRecord`] with
//! the session's `session_id` and a fresh `uuid` (PROFILE §8), its model-API payloads
//! (assistant messages, stream events, tool results, usage) as typed `wire::api` values that
//! borrow what they carry, so each is encoded once, straight into its frame.
//!
//! Owns the exact shapes of PROFILE §8 (`session_state_changed`, `modelUsage`,
//! `permission_denials`, task events, `prompt_suggestion`, the input-error result) and of the
//! Messages-API-shaped `stream_event` payloads (PROFILE §14). Must never: decide when a record
//! is written (the turn and dispatcher do).

use std::borrow::Cow;

use crate::model::{Block, Usage};
use agentx_wire::wire::api::{
    ApiBlock, ApiMessage, ApiPayload, StreamPayload, TaskStep, ToolResultBlock, ToolResultContent,
    TurnUsage,
};
use agentx_wire::wire::grammar::{NonEmpty, Uuid};
use agentx_wire::wire::lifecycle::PromptSuggestion;
use agentx_wire::wire::output::{ModelUsage, ModelUsageMap, PermissionDenial};
use agentx_wire::wire::system::{
    CompactBoundary, CompactMetadata, CompactTrigger, PreservedSegment, SessionState,
    SessionStateChanged, StatusEvent, TaskNotification, TaskProgress, TaskStarted, TaskStatus,
};
use agentx_wire::wire::user::{ContentBlock, UserContent, UserMessage};
use agentx_wire::wire::{
    AssistantRecord, ControlOutcome, ControlResponse, OutputRecord, RawJson, RawObject,
    ResultRecord, ResultSubtype, StreamEvent, SystemEvent, UserRecord, WireValue,
};

use super::output::UuidMint;

/// Mints the identity members every record carries.
pub(crate) struct Stamp {
    pub(crate) session_id: Uuid<'static>,
    pub(crate) mint: UuidMint,
    /// The SDK profile (PROFILE §15): `session_state_changed` carries `sdk_host_only`.
    pub(crate) sdk: bool,
}

impl Stamp {
    pub(crate) fn uuid(&mut self) -> Uuid<'static> {
        self.mint.mint()
    }

    pub(crate) fn sid(&self) -> Uuid<'static> {
        self.session_id.clone()
    }

    /// `system/session_state_changed`.
    pub(crate) fn state(&mut self, state: SessionState) -> OutputRecord<'static> {
        OutputRecord::System(SystemEvent::SessionStateChanged(SessionStateChanged {
            state,
            sdk_host_only: self.sdk.then_some(true),
            uuid: self.uuid(),
            session_id: self.sid(),
        }))
    }

    /// One `assistant` record holding one content block of message `message_id`: typed
    /// (`wire::api`), borrowing the block, encoded once into its frame.
    pub(crate) fn assistant<'b>(
        &mut self,
        model: &'b str,
        message_id: &'b str,
        block: &'b Block,
        error: Option<agentx_wire::wire::output::AssistantError>,
    ) -> (Uuid<'static>, OutputRecord<'b>) {
        let uuid = self.uuid();
        let rec = OutputRecord::Assistant(AssistantRecord {
            message: ApiPayload::Typed(ApiMessage {
                id: Cow::Borrowed(message_id),
                model: Cow::Borrowed(model),
                content: vec![api_block(block)],
                stop_reason: None,
                stop_sequence: None,
                usage: None,
            }),
            parent_tool_use_id: None,
            uuid: uuid.clone(),
            session_id: self.sid(),
            error,
        });
        (uuid, rec)
    }

    /// A `stream_event` carrying `event` (PROFILE §14), typed: its pieces are borrowed until
    /// the encoder writes them into the frame.
    pub(crate) fn stream_event<'b>(&mut self, event: StreamPayload<'b>) -> OutputRecord<'b> {
        OutputRecord::StreamEvent(StreamEvent {
            event: ApiPayload::Typed(event),
            parent_tool_use_id: None,
            uuid: self.uuid(),
            session_id: self.sid(),
        })
    }

    /// The `user` record carrying one `tool_result` block (PROFILE §8, §10).
    pub(crate) fn tool_result<'b>(
        &mut self,
        tool_use_id: &'b str,
        content: &'b str,
        is_error: bool,
    ) -> OutputRecord<'b> {
        self.tool_result_with(tool_use_id, content, is_error, None)
    }

    /// [`Stamp::tool_result`] with the built-in tool's `tool_use_result` (PROFILE §17).
    pub(crate) fn tool_result_with<'b>(
        &mut self,
        tool_use_id: &'b str,
        content: &'b str,
        is_error: bool,
        result: Option<&'b RawJson<'static>>,
    ) -> OutputRecord<'b> {
        self.tool_result_record(
            tool_use_id,
            ToolResultContent::Text(Cow::Borrowed(content)),
            is_error,
            result,
        )
    }

    /// A `tool_result` whose content is text blocks: the tool's output, then one block per
    /// PROFILE §16 `PostToolUse` context.
    pub(crate) fn tool_result_blocks<'b>(
        &mut self,
        tool_use_id: &'b str,
        content: &'b str,
        contexts: &'b [String],
        is_error: bool,
        result: Option<&'b RawJson<'static>>,
    ) -> OutputRecord<'b> {
        let texts = std::iter::once(content)
            .chain(contexts.iter().map(String::as_str))
            .map(Cow::Borrowed)
            .collect();
        self.tool_result_record(
            tool_use_id,
            ToolResultContent::Blocks(texts),
            is_error,
            result,
        )
    }

    /// Stamps the `user` record that carries one `tool_result` block.
    fn tool_result_record<'b>(
        &mut self,
        tool_use_id: &'b str,
        content: ToolResultContent<'b>,
        is_error: bool,
        result: Option<&'b RawJson<'static>>,
    ) -> OutputRecord<'b> {
        let mut rec = UserRecord::text("");
        rec.tool_use_result = result.map(RawJson::borrowed);
        rec.message = UserMessage::Object {
            versioned: false,
            content: UserContent::Blocks(vec![ContentBlock::Other(ApiPayload::Typed(
                ToolResultBlock {
                    tool_use_id: Cow::Borrowed(tool_use_id),
                    content,
                    is_error,
                },
            ))]),
        };
        rec.uuid = Some(self.uuid());
        rec.session_id = Some(self.sid());
        OutputRecord::User(rec)
    }

    /// The replay form of `user` for measuring only: as [`Stamp::replay`], with a fixed
    /// placeholder where a UUID would be minted (same length, no mint consumed).
    pub(crate) fn replay_probe(&self, user: &UserRecord<'static>) -> OutputRecord<'static> {
        let mut user = user.clone();
        if user.uuid.is_none() {
            user.uuid = Some(probe_uuid());
        }
        self.stamp_replay(user)
    }

    /// The replay form of an accepted user record: `uuid` (kept, or minted), `session_id`,
    /// `isReplay: true` (PROFILE §8 Replay).
    pub(crate) fn replay(&mut self, mut user: UserRecord<'static>) -> OutputRecord<'static> {
        if user.uuid.is_none() {
            user.uuid = Some(self.uuid());
        }
        self.stamp_replay(user)
    }

    fn stamp_replay(&self, mut user: UserRecord<'static>) -> OutputRecord<'static> {
        user.session_id = Some(self.sid());
        user.is_replay = true;
        OutputRecord::User(user)
    }

    /// `system/task_started`.
    pub(crate) fn task_started(
        &mut self,
        task_id: &str,
        description: &str,
    ) -> OutputRecord<'static> {
        OutputRecord::System(SystemEvent::TaskStarted(TaskStarted {
            task_id: Cow::Owned(task_id.to_string()),
            description: Cow::Owned(description.to_string()),
            tool_use_id: None,
            task_type: None,
            workflow_name: None,
            prompt: None,
            uuid: self.uuid(),
            session_id: self.sid(),
        }))
    }

    /// `system/task_progress` of step `step`.
    pub(crate) fn task_progress(
        &mut self,
        task_id: &str,
        description: &str,
        step: u32,
    ) -> OutputRecord<'static> {
        OutputRecord::System(SystemEvent::TaskProgress(TaskProgress {
            task_id: Cow::Owned(task_id.to_string()),
            description: Cow::Owned(description.to_string()),
            usage: ApiPayload::Typed(TaskStep {
                step: u64::from(step),
            }),
            tool_use_id: None,
            last_tool_name: None,
            summary: None,
            uuid: self.uuid(),
            session_id: self.sid(),
        }))
    }

    /// `system/task_notification` with a terminal status.
    pub(crate) fn task_notification(
        &mut self,
        task_id: &str,
        status: crate::model::TaskStatus,
        summary: &str,
    ) -> OutputRecord<'static> {
        let status = match status {
            crate::model::TaskStatus::Completed => TaskStatus::Completed,
            crate::model::TaskStatus::Failed => TaskStatus::Failed,
            crate::model::TaskStatus::Stopped => TaskStatus::Stopped,
        };
        OutputRecord::System(SystemEvent::TaskNotification(TaskNotification {
            task_id: Cow::Owned(task_id.to_string()),
            status,
            output_file: Cow::Borrowed(""),
            summary: Cow::Owned(summary.to_string()),
            tool_use_id: None,
            usage: None,
            uuid: self.uuid(),
            session_id: self.sid(),
        }))
    }

    /// `prompt_suggestion`.
    pub(crate) fn suggestion(&mut self, text: &str) -> OutputRecord<'static> {
        OutputRecord::PromptSuggestion(PromptSuggestion {
            suggestion: Cow::Owned(text.to_string()),
            uuid: self.uuid(),
            session_id: self.sid(),
        })
    }

    /// A `prompt_suggestion` for measuring only: a fixed placeholder where the UUID would be
    /// minted (same length, no mint consumed).
    pub(crate) fn suggestion_probe(&self, text: &str) -> OutputRecord<'static> {
        OutputRecord::PromptSuggestion(PromptSuggestion {
            suggestion: Cow::Owned(text.to_string()),
            uuid: probe_uuid(),
            session_id: self.sid(),
        })
    }

    /// `system/status` (`compacting` or `null`).
    pub(crate) fn status(&mut self, status: Option<&'static str>) -> OutputRecord<'static> {
        OutputRecord::System(SystemEvent::Status(StatusEvent {
            status: status.map(Cow::Borrowed),
            permission_mode: None,
            uuid: self.uuid(),
            session_id: self.sid(),
        }))
    }

    /// `system/compact_boundary`, manual, with the preserved segment (WIRE-005).
    pub(crate) fn compact_boundary(
        &mut self,
        uuid: Uuid<'static>,
        pre_tokens: u64,
        segment: Option<(String, String, String)>,
        trigger: CompactTrigger,
        summary: Option<String>,
    ) -> OutputRecord<'static> {
        OutputRecord::System(SystemEvent::CompactBoundary(CompactBoundary {
            compact_metadata: CompactMetadata {
                trigger,
                summary: summary.map(Cow::Owned),
                pre_tokens,
                preserved_segment: segment.map(|(head, anchor, tail)| PreservedSegment {
                    head_uuid: Cow::Owned(head),
                    anchor_uuid: Cow::Owned(anchor),
                    tail_uuid: Cow::Owned(tail),
                }),
            },
            uuid,
            session_id: self.sid(),
        }))
    }

    /// A `result` record from the turn's accounting.
    pub(crate) fn result(&mut self, a: &ResultFields) -> OutputRecord<'static> {
        let model_usage = a.model.as_ref().map(|model| {
            ModelUsageMap(vec![(
                Cow::Owned(model.clone()),
                ModelUsage {
                    input_tokens: a.usage.input_tokens,
                    output_tokens: a.usage.output_tokens,
                    cache_read_input_tokens: a.usage.cache_read_input_tokens,
                    cache_creation_input_tokens: a.usage.cache_creation_input_tokens,
                    web_search_requests: None,
                    cost_usd: a.cost,
                    context_window: None,
                    max_output_tokens: None,
                },
            )])
        });
        OutputRecord::Result(ResultRecord {
            subtype: a.subtype,
            is_error: a.subtype != ResultSubtype::Success,
            duration_ms: a.duration_ms,
            duration_api_ms: a.duration_api_ms,
            num_turns: i64::from(a.num_turns),
            result: (a.subtype == ResultSubtype::Success).then(|| Cow::Owned(a.text.clone())),
            stop_reason: a.stop_reason.map(Cow::Borrowed),
            total_cost_usd: a.cost,
            usage: ApiPayload::Typed(TurnUsage {
                input_tokens: a.usage.input_tokens,
                output_tokens: a.usage.output_tokens,
                cache_read_input_tokens: a.usage.cache_read_input_tokens,
                cache_creation_input_tokens: a.usage.cache_creation_input_tokens,
            }),
            model_usage: model_usage.or_else(|| Some(ModelUsageMap(Vec::new()))),
            permission_denials: a
                .denials
                .iter()
                .map(|d| PermissionDenial {
                    tool_name: Cow::Owned(d.tool_name.clone()),
                    tool_use_id: Cow::Owned(d.tool_use_id.clone()),
                    tool_input: d.tool_input.clone(),
                })
                .collect(),
            errors: (a.subtype != ResultSubtype::Success)
                .then(|| a.errors.iter().map(|e| Cow::Owned(e.clone())).collect()),
            structured_output: (a.subtype == ResultSubtype::Success)
                .then(|| a.structured_output.clone())
                .flatten(),
            fast_mode_state: None,
            prompt_uuid: a.prompt_uuid.clone(),
            uuid: self.uuid(),
            session_id: self.sid(),
        })
    }
}

/// The placeholder UUID of a record built only to be measured.
fn probe_uuid() -> Uuid<'static> {
    Uuid::new("00000000-0000-4000-8000-000000000000".to_string()).expect("a canonical UUID")
}

/// A permission denial of the turn (PROFILE §8 `permission_denials`).
#[derive(Clone, Debug)]
pub(crate) struct Denial {
    pub(crate) tool_name: String,
    pub(crate) tool_use_id: String,
    /// The effective tool input.
    pub(crate) tool_input: RawJson<'static>,
}

/// What a `result` record reports.
#[derive(Clone, Debug)]
pub(crate) struct ResultFields {
    pub(crate) subtype: ResultSubtype,
    pub(crate) duration_ms: u64,
    pub(crate) duration_api_ms: u64,
    pub(crate) num_turns: u32,
    pub(crate) text: String,
    pub(crate) stop_reason: Option<&'static str>,
    /// `None` is `null` (WIRE-012).
    pub(crate) cost: Option<f64>,
    pub(crate) usage: Usage,
    /// The model of `modelUsage`; `None` writes `{}`.
    pub(crate) model: Option<String>,
    pub(crate) denials: Vec<Denial>,
    pub(crate) errors: Vec<String>,
    pub(crate) prompt_uuid: Option<Uuid<'static>>,
    /// PROFILE §16: the valid final answer of a turn with an output schema.
    pub(crate) structured_output: Option<RawJson<'static>>,
}

/// The typed API block of a session's content block (a tool input is the turn's canonical
/// compact object; `{}` should it ever not parse).
pub(crate) fn api_block(block: &Block) -> ApiBlock<'_> {
    match block {
        Block::Text(t) => ApiBlock::Text(Cow::Borrowed(t)),
        Block::ToolUse { id, name, input } => ApiBlock::ToolUse {
            id: Cow::Borrowed(id),
            name: Cow::Borrowed(name),
            input: RawObject(
                RawJson::parse(input.as_bytes()).unwrap_or_else(|_| RawJson::empty_object()),
            ),
        },
    }
}

/// A correlated `control_response` success, `payload` absent for a payload-less
/// acknowledgement (WIRE-010).
pub(crate) fn control_success(
    request_id: &str,
    payload: Option<RawJson<'static>>,
) -> OutputRecord<'static> {
    OutputRecord::ControlResponse(ControlResponse {
        request_id: nonempty(request_id),
        outcome: ControlOutcome::Success { response: payload },
    })
}

/// A correlated `control_response` success carrying a typed payload (`wire::responses`).
pub(crate) fn control_success_with<'p, P: WireValue<'p>>(
    request_id: &str,
    payload: &P,
) -> OutputRecord<'static> {
    OutputRecord::ControlResponse(ControlResponse::success_with(nonempty(request_id), payload))
}

/// A correlated `control_response` error.
pub(crate) fn control_error(request_id: &str, error: &str) -> OutputRecord<'static> {
    OutputRecord::ControlResponse(ControlResponse {
        request_id: nonempty(request_id),
        outcome: ControlOutcome::Error {
            error: Cow::Owned(error.to_string()),
            pending_permission_requests: None,
        },
    })
}

/// A `request_id` as decoded was nonempty; a minted one is too.
pub(crate) fn nonempty(s: &str) -> NonEmpty<'static> {
    NonEmpty::new(s.to_string())
        .unwrap_or_else(|| NonEmpty::new("-".to_string()).expect("nonempty"))
}
