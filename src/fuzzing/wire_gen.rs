//! The byte-driven record generator ([`Gen`]) the `wire` fuzz targets and the proptest
//! round-trip tests share: every input and output record type, with hostile strings (quotes,
//! controls, U+2028, non-ASCII). Deterministic in its bytes (zeros once they run out); never
//! decides whether a record is valid (it builds only valid ones).

use std::borrow::Cow;

use crate::json;
use crate::wire::api::ApiPayload;
use crate::wire::control::ControlOutcome;
use crate::wire::grammar::{AttachmentId, NonEmpty, Sha256Hex, UploadId, Uuid};
use crate::wire::import::{ImportBegin, ImportChunk, ReasonCode};
use crate::wire::lifecycle::{
    AuthStatus, PromptSuggestion, RateLimitEvent, RateLimitInfo, StreamlinedText,
    StreamlinedToolUseSummary, ToolProgress, ToolUseSummary,
};
use crate::wire::output::{ModelUsage, ModelUsageMap, PermissionDenial};
use crate::wire::permission::{
    DirectoriesOperation, PermissionBehavior, PermissionDestination, PermissionMode,
    PermissionRule, PermissionUpdate, RulesOperation,
};
use crate::wire::subtypes::{
    Elicitation, McpToggle, RewindFiles, SetMaxThinkingTokens, SetModel, UnknownControl,
};
use crate::wire::system::{SessionState, SessionStateChanged, TaskNotification, TaskStatus};
use crate::wire::system_init::{
    InitEvent, InputCapabilities, McpServerStatus, ReasoningCapabilities,
};
use crate::wire::*;

/// A deterministic generator driven by fuzz bytes (zeros once they run out).
pub struct Gen<'d> {
    data: &'d [u8],
    pos: usize,
    counter: u64,
}

/// How many input-record shapes [`Gen::input_record`] distinguishes.
pub const INPUT_KINDS: u8 = 14;
/// How many output-record shapes [`Gen::output_record`] distinguishes.
pub const OUTPUT_KINDS: u8 = 21;

const PIECES: &[&str] = &[
    "a", "hello", " ", "\"", "\\", "\n", "\t", "\u{1}", "\u{1f}", "\u{7f}", "é", "\u{2028}",
    "\u{2029}", "😀", "/", "{", "}", "[", "]", ":", ",", "null", "0", "-", "_", "\u{0}",
];

impl<'d> Gen<'d> {
    pub fn new(data: &'d [u8]) -> Gen<'d> {
        Gen {
            data,
            pos: 0,
            counter: 0,
        }
    }

    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            self.u8() as usize % n
        }
    }

    fn u64(&mut self) -> u64 {
        match self.u8() % 4 {
            0 => u64::from(self.u8()),
            1 => 0,
            2 => u64::MAX - u64::from(self.u8()),
            _ => (0..8).fold(0u64, |acc, _| (acc << 8) | u64::from(self.u8())),
        }
    }

    fn positive(&mut self) -> u64 {
        self.u64().max(1)
    }

    fn f64(&mut self) -> f64 {
        match self.u8() % 5 {
            0 => 0.0,
            1 => f64::from(self.u8()) / 7.0,
            2 => 0.00010960000000000001,
            3 => 1e300 * f64::from(self.u8()),
            _ => -(f64::from(u32::from(self.u8()) << 8 | u32::from(self.u8())) / 1000.0),
        }
    }

    /// Hostile text: quotes, backslashes, controls, separators, non-ASCII.
    pub fn text(&mut self) -> Text<'static> {
        let n = self.below(6);
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(PIECES[self.below(PIECES.len())]);
        }
        Cow::Owned(s)
    }

    fn nonempty(&mut self) -> NonEmpty<'static> {
        let mut t = self.text().into_owned();
        if t.is_empty() {
            t.push('x');
        }
        NonEmpty::new(t).unwrap_or_else(unreachable_nonempty)
    }

    /// A unique plain identifier (object member names must not repeat).
    fn unique(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    fn id_body(&mut self) -> String {
        const ALNUM: &[u8] = b"abcXYZ019";
        const REST: &[u8] = b"aZ9_-";
        let mut s = String::new();
        s.push(ALNUM[self.below(ALNUM.len())] as char);
        for _ in 0..self.below(63) {
            s.push(REST[self.below(REST.len())] as char);
        }
        s
    }

    fn uuid(&mut self) -> Uuid<'static> {
        let mut hex = String::new();
        for i in 0..32 {
            let nibble = match i {
                12 => 1 + self.below(5) as u8,
                16 => 8 + self.below(4) as u8,
                _ => self.u8() & 0xf,
            };
            hex.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
        let s = format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        );
        Uuid::new(s).unwrap_or_else(unreachable_nonempty)
    }

    fn upload_id(&mut self) -> UploadId<'static> {
        UploadId::new(format!("upl_{}", self.id_body())).unwrap_or_else(unreachable_nonempty)
    }

    fn attachment_id(&mut self) -> AttachmentId<'static> {
        AttachmentId::new(format!("att_{}", self.id_body())).unwrap_or_else(unreachable_nonempty)
    }

    fn sha(&mut self) -> Sha256Hex<'static> {
        let s: String = (0..64)
            .map(|_| char::from_digit(u32::from(self.u8() & 0xf), 16).unwrap_or('0'))
            .collect();
        Sha256Hex::new(s).unwrap_or_else(unreachable_nonempty)
    }

    /// A small JSON value with unique member names, written compactly.
    fn json_value(&mut self, depth: u8, out: &mut Vec<u8>) {
        let kind = if depth == 0 {
            self.below(4)
        } else {
            self.below(6)
        };
        match kind {
            0 => out.extend_from_slice(b"null"),
            1 => out.extend_from_slice(if self.bool() { b"true" } else { b"false" }),
            2 => json::write_u64(out, self.u64()),
            3 => json::write_str(out, &self.text()),
            4 => {
                out.push(b'[');
                for i in 0..self.below(3) {
                    if i > 0 {
                        out.push(b',');
                    }
                    self.json_value(depth - 1, out);
                }
                out.push(b']');
            }
            _ => self.json_object(depth - 1, None, out),
        }
    }

    fn json_object(&mut self, depth: u8, type_member: Option<&str>, out: &mut Vec<u8>) {
        out.push(b'{');
        let mut first = true;
        if let Some(t) = type_member {
            out.extend_from_slice(b"\"type\":");
            json::write_str(out, t);
            first = false;
        }
        for _ in 0..self.below(3) {
            if !first {
                out.push(b',');
            }
            first = false;
            let name = self.unique("k");
            json::write_str(out, &name);
            out.push(b':');
            self.json_value(depth, out);
        }
        out.push(b'}');
    }

    fn raw(&mut self) -> RawJson<'static> {
        let mut out = Vec::new();
        self.json_value(2, &mut out);
        RawJson::parse_owned(out).unwrap_or_else(|_| RawJson::empty_object().into_owned())
    }

    fn raw_object(&mut self) -> RawObject<'static> {
        let mut out = Vec::new();
        self.json_object(2, None, &mut out);
        RawObject(
            RawJson::parse_owned(out).unwrap_or_else(|_| RawJson::empty_object().into_owned()),
        )
    }

    fn opt<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        if self.bool() {
            Some(f(self))
        } else {
            None
        }
    }

    /// `Some` when `required`, else as [`Self::opt`].
    fn opt_or_required<T>(&mut self, required: bool, f: impl FnOnce(&mut Self) -> T) -> Option<T> {
        if required {
            Some(f(self))
        } else {
            self.opt(f)
        }
    }

    fn list<T>(&mut self, max: usize, mut f: impl FnMut(&mut Self) -> T) -> Vec<T> {
        (0..self.below(max + 1)).map(|_| f(self)).collect()
    }

    fn manifest(&mut self) -> AttachmentRef {
        let mut name = self.text().into_owned();
        if name.is_empty() {
            name.push('n');
        }
        while name.len() > 255 {
            name.pop();
        }
        let sha = self.sha().as_str().to_owned();
        AttachmentRef {
            attachment_id: self.attachment_id().as_str().to_owned(),
            kind: if self.bool() { "image" } else { "document" }.to_owned(),
            name,
            mime_type: ["image/png", "image/jpeg", "application/pdf"][self.below(3)].to_owned(),
            size_bytes: self.positive(),
            storage_id: format!("blob_sha256_{sha}"),
            sha256: sha,
        }
    }

    fn user(&mut self, output: bool) -> UserRecord<'static> {
        let message = match self.below(3) {
            0 => UserMessage::Plain(self.text()),
            1 => UserMessage::Object {
                versioned: self.bool(),
                content: UserContent::Text(self.text()),
            },
            _ => {
                let n = 1 + self.below(4);
                let mut versioned = self.bool();
                let blocks: Vec<ContentBlock<'static>> = (0..n)
                    .map(|_| match self.below(3) {
                        0 => ContentBlock::Text(self.text()),
                        1 => {
                            versioned = true;
                            ContentBlock::AttachmentRef(self.manifest())
                        }
                        _ if output => {
                            let mut out = Vec::new();
                            self.json_object(1, Some("tool_result"), &mut out);
                            ContentBlock::Other(ApiPayload::Raw(
                                RawJson::parse_owned(out)
                                    .unwrap_or_else(|_| RawJson::empty_object()),
                            ))
                        }
                        _ => ContentBlock::Text(self.text()),
                    })
                    .collect();
                UserMessage::Object {
                    versioned,
                    content: UserContent::Blocks(blocks),
                }
            }
        };
        let is_replay = self.bool();
        UserRecord {
            message,
            parent_tool_use_id: self.opt(Self::text),
            uuid: if is_replay {
                Some(self.uuid())
            } else {
                self.opt(Self::uuid)
            },
            session_id: if is_replay {
                Some(self.uuid())
            } else {
                self.opt(Self::uuid)
            },
            is_synthetic: self.opt(Self::bool),
            tool_use_result: self.opt(Self::raw),
            priority: self.opt(|g| Priority::ALL[g.below(3)]),
            timestamp: self.opt(Self::text),
            is_replay,
        }
    }

    fn permission_update(&mut self) -> PermissionUpdate<'static> {
        let destination = PermissionDestination::ALL[self.below(PermissionDestination::ALL.len())];
        match self.below(3) {
            0 => PermissionUpdate::Rules {
                operation: RulesOperation::ALL[self.below(3)],
                rules: self.list(2, |g| PermissionRule {
                    tool_name: g.text(),
                    rule_content: g.opt(Self::text),
                }),
                behavior: PermissionBehavior::ALL[self.below(3)],
                destination,
            },
            1 => PermissionUpdate::SetMode {
                mode: PermissionMode::ALL[self.below(4)],
                destination,
            },
            _ => PermissionUpdate::Directories {
                operation: DirectoriesOperation::ALL[self.below(2)],
                directories: self.list(2, Self::text),
                destination,
            },
        }
    }

    fn can_use_tool(&mut self) -> CanUseTool<'static> {
        let mut tool_name = self.nonempty();
        if tool_name.as_str() == crate::wire::permission::SANDBOX_NETWORK_ACCESS {
            tool_name = NonEmpty::new("Bash").unwrap_or_else(unreachable_nonempty);
        }
        CanUseTool {
            tool_name,
            input: self.raw_object(),
            tool_use_id: self.nonempty(),
            permission_suggestions: self.opt(|g| g.list(3, Self::permission_update)),
            blocked_path: self.opt(|g| g.opt(Self::text)),
            decision_reason: self.opt(|g| g.opt(Self::text)),
            title: self.opt(Self::text),
            display_name: self.opt(Self::text),
            description: self.opt(Self::text),
            agent_id: self.opt(Self::text),
        }
    }

    fn control_body(&mut self) -> ControlRequestBody<'static> {
        use crate::wire::subtypes as s;
        match self.below(22) {
            0 => ControlRequestBody::Initialize(s::Initialize),
            1 => ControlRequestBody::Interrupt(s::Interrupt),
            2 => ControlRequestBody::CanUseTool(self.can_use_tool()),
            3 => ControlRequestBody::SetModel(SetModel {
                model: self.opt(Self::text),
            }),
            4 => ControlRequestBody::SetMaxThinkingTokens(SetMaxThinkingTokens {
                max_thinking_tokens: self.opt(Self::u64),
            }),
            5 => ControlRequestBody::McpToggle(McpToggle {
                server_name: self.text(),
                enabled: self.bool(),
            }),
            6 => ControlRequestBody::RewindFiles(RewindFiles {
                user_message_id: self.text(),
                dry_run: self.opt(Self::bool),
            }),
            7 => ControlRequestBody::Elicitation(Elicitation {
                mcp_server_name: self.text(),
                message: self.text(),
                mode: self.opt(Self::text),
                url: self.opt(Self::text),
                elicitation_id: self.opt(Self::text),
                requested_schema: self.opt(Self::raw_object),
            }),
            8 => ControlRequestBody::McpStatus(s::McpStatus),
            9 => ControlRequestBody::SetPermissionMode(s::SetPermissionMode {
                mode: self.opt(Self::text),
            }),
            10 => ControlRequestBody::GetContextUsage(s::GetContextUsage),
            11 => ControlRequestBody::CancelAsyncMessage(s::CancelAsyncMessage {
                message_uuid: self.text(),
            }),
            12 => ControlRequestBody::SeedReadState(s::SeedReadState {
                path: self.text(),
                mtime: self.f64(),
            }),
            13 => ControlRequestBody::HookCallback(s::HookCallback {
                callback_id: self.text(),
                input: self.raw(),
                tool_use_id: self.opt(Self::text),
            }),
            14 => ControlRequestBody::McpMessage(s::McpMessage {
                server_name: self.text(),
                message: self.raw(),
            }),
            15 => ControlRequestBody::McpSetServers(s::McpSetServers {
                servers: self.raw_object(),
            }),
            16 => ControlRequestBody::ReloadPlugins(s::ReloadPlugins),
            17 => ControlRequestBody::McpReconnect(s::McpReconnect {
                server_name: self.text(),
            }),
            18 => ControlRequestBody::StopTask(s::StopTask {
                task_id: self.text(),
            }),
            19 => ControlRequestBody::ApplyFlagSettings(s::ApplyFlagSettings {
                settings: self.raw_object(),
            }),
            20 => ControlRequestBody::GetSettings(s::GetSettings),
            _ => {
                let subtype = self.unique("future_");
                let mut out = Vec::new();
                out.extend_from_slice(b"{\"subtype\":");
                json::write_str(&mut out, &subtype);
                out.extend_from_slice(b",\"provider\":");
                json::write_str(&mut out, &self.text());
                out.push(b'}');
                let request = RawObject(
                    RawJson::parse_owned(out).unwrap_or_else(|_| RawJson::empty_object()),
                );
                ControlRequestBody::Unknown(UnknownControl {
                    subtype: Cow::Owned(subtype),
                    request,
                })
            }
        }
    }

    fn control_request(&mut self) -> ControlRequest<'static> {
        ControlRequest {
            request_id: self.nonempty(),
            request: self.control_body(),
        }
    }

    fn control_response(&mut self) -> ControlResponse<'static> {
        let outcome = if self.bool() {
            ControlOutcome::Success {
                response: self.opt(|g| {
                    let raw = g.raw();
                    // `null` reads back as an absent payload.
                    if raw.as_bytes() == b"null" {
                        RawJson::empty_object()
                    } else {
                        raw
                    }
                }),
            }
        } else {
            ControlOutcome::Error {
                error: self.text(),
                pending_permission_requests: self.opt(|g| g.list(2, Self::control_request)),
            }
        };
        ControlResponse {
            request_id: self.nonempty(),
            outcome,
        }
    }

    fn unknown(&mut self) -> UnknownRecord<'static> {
        let t = self.unique("future.type.");
        let mut out = Vec::new();
        self.json_object(2, Some(&t), &mut out);
        UnknownRecord {
            record_type: Cow::Owned(t),
            record: RawObject(
                RawJson::parse_owned(out).unwrap_or_else(|_| RawJson::empty_object()),
            ),
        }
    }

    /// An input record; `which % INPUT_KINDS` picks the shape.
    pub fn input_record(&mut self, which: u8) -> InputRecord<'static> {
        match which % INPUT_KINDS {
            0..=2 => {
                let mut u = self.user(false);
                if u.parent_tool_use_id.is_none() && self.bool() {
                    u.parent_tool_use_id = Some(self.text());
                }
                InputRecord::User(u)
            }
            3 => InputRecord::AttachmentImport(ImportOperation::Begin(ImportBegin {
                prompt_uuid: self.uuid(),
                upload_id: self.upload_id(),
                attachment_id: self.attachment_id(),
                name: self.text(),
                size_bytes: self.positive(),
                mime_type: self.text(),
                sha256: self.sha(),
            })),
            4 => InputRecord::AttachmentImport(ImportOperation::Chunk(ImportChunk {
                upload_id: self.upload_id(),
                sequence: self.u64(),
                data: self.text(),
            })),
            5 => InputRecord::AttachmentImport(ImportOperation::Commit {
                upload_id: self.upload_id(),
            }),
            6 => InputRecord::AttachmentImport(ImportOperation::Abort {
                upload_id: self.upload_id(),
            }),
            7 | 8 => InputRecord::ControlRequest(self.control_request()),
            9 => InputRecord::ControlResponse(self.control_response()),
            10 => InputRecord::ControlCancelRequest(ControlCancelRequest {
                request_id: self.nonempty(),
            }),
            11 => InputRecord::KeepAlive,
            12 => InputRecord::UpdateEnvironmentVariables(EnvironmentUpdate {
                variables: self.list(4, |g| {
                    let name = g.unique("VAR_");
                    let value = g.opt(Self::text).map(|t| Cow::Owned(t.replace('\0', "")));
                    (Cow::Owned(name), value)
                }),
            }),
            _ => InputRecord::Unknown(self.unknown()),
        }
    }

    fn init(&mut self) -> InitEvent<'static> {
        let efforts: Vec<Text<'static>> = (0..self.below(3))
            .map(|_| Cow::Owned(self.unique("effort")))
            .collect();
        let default_effort = efforts.first().cloned();
        InitEvent {
            api_key_source: self.opt(|_| crate::wire::ApiKeySource::User),
            claude_code_version: self.opt(Self::text),
            agentx_version: None,
            cwd: self.text(),
            tools: self.list(3, Self::text),
            mcp_servers: self.list(2, |g| McpServerStatus {
                name: g.text(),
                status: g.text(),
                config: None,
                server_info: None,
                error: None,
                tools: None,
            }),
            model: self.text(),
            // WIRE-023: required on decode.
            provider: Some(self.text()),
            provider_type: Some(self.text()),
            reasoning_capabilities: self
                .opt(|_| ReasoningCapabilities::new(efforts, default_effort)),
            permission_mode: self.text(),
            slash_commands: self.opt(|g| g.list(2, Self::text)),
            output_style: self.opt(Self::text),
            skills: self.opt(|g| g.list(2, Self::text)),
            plugins: None,
            agents: self.opt(|g| g.list(2, Self::text)),
            betas: None,
            fast_mode_state: self.opt(Self::text),
            input_capabilities: self.opt(|_| InputCapabilities::native()),
            uuid: self.uuid(),
            session_id: self.uuid(),
        }
    }

    fn result(&mut self) -> ResultRecord<'static> {
        let subtype = ResultSubtype::ALL[self.below(ResultSubtype::ALL.len())];
        let success = subtype == ResultSubtype::Success;
        ResultRecord {
            subtype,
            is_error: !success,
            duration_ms: self.u64(),
            duration_api_ms: self.u64(),
            num_turns: self.u64() as i64,
            result: if success {
                Some(self.text())
            } else {
                self.opt(Self::text)
            },
            stop_reason: self.opt(Self::text),
            total_cost_usd: self.opt(Self::f64),
            usage: ApiPayload::Raw(self.raw_object().0),
            // A success result requires `modelUsage` (PROFILE §8).
            model_usage: self.opt_or_required(success, |g| {
                ModelUsageMap(g.list(2, |g| {
                    let usage = ModelUsage {
                        input_tokens: g.u64(),
                        output_tokens: g.u64(),
                        cache_read_input_tokens: g.u64(),
                        cache_creation_input_tokens: g.u64(),
                        web_search_requests: g.opt(Self::u64),
                        cost_usd: g.opt(Self::f64),
                        context_window: g.opt(Self::u64),
                        max_output_tokens: g.opt(Self::u64),
                    };
                    (Cow::Owned(g.unique("model-")), usage)
                }))
            }),
            permission_denials: self.list(2, |g| PermissionDenial {
                tool_name: g.text(),
                tool_use_id: g.text(),
                tool_input: g.raw(),
            }),
            errors: if success {
                self.opt(|g| g.list(2, Self::text))
            } else {
                Some(self.list(2, Self::text))
            },
            structured_output: self.opt(Self::raw),
            fast_mode_state: self.opt(Self::text),
            prompt_uuid: self.opt(Self::uuid),
            uuid: self.uuid(),
            session_id: self.uuid(),
        }
    }

    fn import_result(&mut self) -> ImportResult<'static> {
        let status = ImportStatus::ALL[self.below(ImportStatus::ALL.len())];
        let upload_id = self.upload_id();
        let attachment_id = self.attachment_id();
        ImportResult {
            upload_id,
            attachment_id: attachment_id.clone(),
            status,
            prompt_uuid: self.uuid(),
            // WIRE-019: the manifest carries the record's own attachment id.
            attachment: (status == ImportStatus::Committed).then(|| {
                let mut m = self.manifest();
                m.attachment_id = attachment_id.as_str().to_owned();
                m
            }),
            reason: matches!(
                status,
                ImportStatus::Aborted | ImportStatus::Expired | ImportStatus::Failed
            )
            .then(|| ReasonCode::ALL[self.below(ReasonCode::ALL.len())]),
        }
    }

    /// A `system` event of any subtype other than init (which has its own kind), or an
    /// unknown subtype.
    fn system_event(&mut self) -> SystemEvent<'static> {
        use crate::wire::system as sy;
        let which = self.below(13);
        let (uuid, session_id) = (self.uuid(), self.uuid());
        match which {
            0 => SystemEvent::CompactBoundary(sy::CompactBoundary {
                compact_metadata: sy::CompactMetadata {
                    trigger: sy::CompactTrigger::ALL[self.below(2)],
                    pre_tokens: self.u64(),
                    preserved_segment: self.opt(|g| sy::PreservedSegment {
                        head_uuid: g.text(),
                        anchor_uuid: g.text(),
                        tail_uuid: g.text(),
                    }),
                    summary: self.opt(|g| g.text()),
                },
                uuid,
                session_id,
            }),
            1 => SystemEvent::Status(sy::StatusEvent {
                status: self.opt(Self::text),
                permission_mode: self.opt(Self::text),
                uuid,
                session_id,
            }),
            2 => SystemEvent::PostTurnSummary(sy::PostTurnSummary {
                summarizes_uuid: self.text(),
                status_category: self.text(),
                title: self.opt(Self::text),
                status_detail: self.opt(Self::text),
                description: self.opt(Self::text),
                recent_action: self.opt(Self::text),
                needed_action: self.opt(Self::text),
                is_noteworthy: self.opt(Self::bool),
                artifact_urls: self.opt(|g| g.list(2, Self::text)),
                uuid,
                session_id,
            }),
            3 => SystemEvent::LocalCommandOutput(sy::LocalCommandOutput {
                content: self.text(),
                uuid,
                session_id,
            }),
            4 => SystemEvent::HookStarted(sy::HookStarted {
                hook_id: self.text(),
                hook_name: self.text(),
                hook_event: self.text(),
                uuid,
                session_id,
            }),
            5 => SystemEvent::HookProgress(sy::HookProgress {
                hook_id: self.text(),
                hook_name: self.text(),
                hook_event: self.text(),
                stdout: self.text(),
                stderr: self.text(),
                output: self.text(),
                uuid,
                session_id,
            }),
            6 => SystemEvent::HookResponse(sy::HookResponse {
                hook_id: self.text(),
                hook_name: self.text(),
                hook_event: self.text(),
                output: self.text(),
                stdout: self.text(),
                stderr: self.text(),
                exit_code: self.opt(|g| g.u64() as i64),
                outcome: sy::HookOutcome::ALL[self.below(3)],
                uuid,
                session_id,
            }),
            7 => SystemEvent::FilesPersisted(sy::FilesPersisted {
                files: self.list(2, |g| sy::PersistedFile {
                    filename: g.text(),
                    file_id: g.text(),
                }),
                failed: self.list(2, |g| sy::FailedFile {
                    filename: g.text(),
                    error: g.text(),
                }),
                processed_at: self.text(),
                uuid,
                session_id,
            }),
            8 => SystemEvent::TaskStarted(sy::TaskStarted {
                task_id: self.text(),
                description: self.text(),
                tool_use_id: self.opt(Self::text),
                task_type: self.opt(Self::text),
                workflow_name: self.opt(Self::text),
                prompt: self.opt(Self::text),
                uuid,
                session_id,
            }),
            9 => SystemEvent::TaskProgress(sy::TaskProgress {
                task_id: self.text(),
                description: self.text(),
                usage: ApiPayload::Raw(self.raw_object().0),
                tool_use_id: self.opt(Self::text),
                last_tool_name: self.opt(Self::text),
                summary: self.opt(Self::text),
                uuid,
                session_id,
            }),
            10 => SystemEvent::ElicitationComplete(sy::ElicitationComplete {
                mcp_server_name: self.text(),
                elicitation_id: self.text(),
                uuid,
                session_id,
            }),
            11 => SystemEvent::SessionStateChanged(SessionStateChanged {
                state: SessionState::ALL[self.below(3)],
                sdk_host_only: None,
                uuid,
                session_id,
            }),
            _ => {
                let subtype = self.unique("future_subtype_");
                let mut out = Vec::new();
                out.extend_from_slice(b"{\"type\":\"system\",\"subtype\":");
                json::write_str(&mut out, &subtype);
                out.extend_from_slice(b",\"data\":");
                self.json_value(2, &mut out);
                out.push(b'}');
                SystemEvent::Unknown(sy::UnknownSystem {
                    subtype: Cow::Owned(subtype),
                    record: RawObject(
                        RawJson::parse_owned(out).unwrap_or_else(|_| RawJson::empty_object()),
                    ),
                })
            }
        }
    }

    /// An output record; `which % OUTPUT_KINDS` picks the shape.
    pub fn output_record(&mut self, which: u8) -> OutputRecord<'static> {
        match which % OUTPUT_KINDS {
            0 => OutputRecord::User(self.user(true)),
            1 => OutputRecord::Assistant(AssistantRecord {
                message: ApiPayload::Raw(self.raw_object().0),
                parent_tool_use_id: self.opt(Self::text),
                uuid: self.uuid(),
                session_id: self.uuid(),
                error: self.opt(|g| crate::wire::output::AssistantError::ALL[g.below(7)]),
            }),
            2 => OutputRecord::Result(self.result()),
            3 => OutputRecord::StreamEvent(StreamEvent {
                event: ApiPayload::Raw(self.raw_object().0),
                parent_tool_use_id: self.opt(Self::text),
                uuid: self.uuid(),
                session_id: self.uuid(),
            }),
            4 => OutputRecord::System(SystemEvent::Init(Box::new(self.init()))),
            5 => OutputRecord::System(SystemEvent::TaskNotification(TaskNotification {
                task_id: self.text(),
                status: TaskStatus::ALL[self.below(3)],
                output_file: self.text(),
                summary: self.text(),
                tool_use_id: self.opt(Self::text),
                usage: self.opt(Self::raw_object),
                uuid: self.uuid(),
                session_id: self.uuid(),
            })),
            6 => OutputRecord::System(SystemEvent::SessionStateChanged(SessionStateChanged {
                state: SessionState::ALL[self.below(3)],
                sdk_host_only: None,
                uuid: self.uuid(),
                session_id: self.uuid(),
            })),
            7 => OutputRecord::ControlRequest(self.control_request()),
            8 => OutputRecord::ControlResponse(self.control_response()),
            9 => OutputRecord::ControlCancelRequest(ControlCancelRequest {
                request_id: self.nonempty(),
            }),
            10 => OutputRecord::AttachmentImportResult(self.import_result()),
            11 => OutputRecord::AttachmentImportRejected(ImportRejected {
                upload_id: self.upload_id(),
                reason: ReasonCode::ALL[self.below(ReasonCode::ALL.len())],
            }),
            12 => OutputRecord::ToolProgress(ToolProgress {
                tool_use_id: self.text(),
                tool_name: self.text(),
                parent_tool_use_id: self.opt(Self::text),
                elapsed_time_seconds: self.f64(),
                task_id: self.opt(Self::text),
                uuid: self.uuid(),
                session_id: self.uuid(),
            }),
            13 => OutputRecord::RateLimitEvent(RateLimitEvent {
                rate_limit_info: RateLimitInfo {
                    status: self.text(),
                    resets_at: self.opt(|g| g.u64() as i64),
                    rate_limit_type: self.opt(Self::text),
                    utilization: self.opt(Self::f64),
                    overage_status: self.opt(Self::text),
                    overage_resets_at: None,
                    overage_disabled_reason: self.opt(Self::text),
                    is_using_overage: self.opt(Self::bool),
                },
                uuid: self.uuid(),
                session_id: self.uuid(),
            }),
            14 => OutputRecord::PromptSuggestion(PromptSuggestion {
                suggestion: self.text(),
                uuid: self.uuid(),
                session_id: self.uuid(),
            }),
            15 => OutputRecord::System(self.system_event()),
            16 => OutputRecord::AuthStatus(AuthStatus {
                is_authenticating: self.bool(),
                output: self.list(2, Self::text),
                error: self.opt(Self::text),
                uuid: self.uuid(),
                session_id: self.uuid(),
            }),
            17 => OutputRecord::ToolUseSummary(ToolUseSummary {
                summary: self.text(),
                preceding_tool_use_ids: self.list(3, Self::text),
                uuid: self.uuid(),
                session_id: self.uuid(),
            }),
            18 => OutputRecord::StreamlinedText(StreamlinedText {
                text: self.text(),
                uuid: self.uuid(),
                session_id: self.uuid(),
            }),
            19 => OutputRecord::StreamlinedToolUseSummary(StreamlinedToolUseSummary {
                tool_summary: self.text(),
                uuid: self.uuid(),
                session_id: self.uuid(),
            }),
            _ => {
                if self.bool() {
                    OutputRecord::KeepAlive
                } else {
                    OutputRecord::Unknown(self.unknown())
                }
            }
        }
    }
}

/// Every constructor above builds a value that satisfies its grammar by construction.
#[cold]
fn unreachable_nonempty<T>() -> T {
    panic!("generator built a value outside its grammar")
}
