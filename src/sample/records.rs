//! Record builders: each appends one complete compact record and its LF to the stream.
//!
//! Owns: the member layout of every generated record type — `system` events, `stream_event`,
//! `assistant`, `user` tool results, `control_request` can_use_tool, `result`,
//! `rate_limit_event`, `tool_progress` — following sdk-wire-protocol.md ("Core output records",
//! "System and lifecycle events", "Control request and response protocol") and PROFILE §4.
//! Every object written here has a fixed set of distinct member names (WIRE-014 holds for the
//! whole stream). Never: decides how many records of which kind a stream holds (`mod.rs` does).

use super::content::{self, Numbering};
use super::pools;
use super::rng::SplitMix64;
use super::writer::{uuid_words, JsonOut, Spelling};

/// Generator state: the random source, the output, the current session and reused scratch text.
pub(crate) struct Gen {
    pub(crate) rng: SplitMix64,
    pub(crate) out: JsonOut,
    pub(crate) session: (u64, u64),
    pub(crate) model: &'static str,
    pub(crate) text: String,
    pub(crate) text2: String,
    pub(crate) input: JsonOut,
    pub(crate) cuts: Vec<usize>,
}

/// A tool call the assistant made, remembered until its result is written.
pub(crate) struct ToolCall {
    pub(crate) id: [u8; 30],
    pub(crate) name: &'static str,
    pub(crate) target: &'static str,
}

impl ToolCall {
    pub(crate) fn id_str(&self) -> &str {
        std::str::from_utf8(&self.id).unwrap_or("toolu_01")
    }
}

impl Gen {
    pub(crate) fn new(seed: u64, capacity: usize) -> Self {
        let mut rng = SplitMix64::new(seed);
        let session = uuid_words(&mut rng);
        Self {
            rng,
            out: JsonOut::with_capacity(capacity),
            session,
            model: pools::MODELS[0],
            text: String::with_capacity(1 << 16),
            text2: String::with_capacity(1 << 16),
            input: JsonOut::with_capacity(1 << 12),
            cuts: Vec::with_capacity(256),
        }
    }

    /// Picks how this record spells non-ASCII: mostly raw UTF-8, sometimes Python-style
    /// `ensure_ascii` escapes (lower- or upper-case hex), which gives surrogate-pair escapes.
    pub(crate) fn choose_spelling(&mut self) {
        let roll = self.rng.below(100);
        self.out.spelling = match roll {
            0..=5 => Spelling::AsciiLower,
            6..=8 => Spelling::AsciiUpper,
            _ => Spelling::Raw,
        };
    }

    /// `,"parent_tool_use_id":null,"session_id":S,"uuid":U}` and the LF.
    fn envelope_tail(&mut self) {
        self.out.raw(",\"parent_tool_use_id\":null,\"session_id\":");
        self.out.quoted_uuid(self.session.0, self.session.1);
        self.out.next_key("uuid");
        self.out.uuid(&mut self.rng);
        self.out.raw("}\n");
    }

    /// `,"session_id":S,"uuid":U}` and the LF (system events carry no parent ID).
    fn system_tail(&mut self) {
        self.out.next_key("session_id");
        self.out.quoted_uuid(self.session.0, self.session.1);
        self.out.next_key("uuid");
        self.out.uuid(&mut self.rng);
        self.out.raw("}\n");
    }

    fn usage(&mut self) {
        let input = self.rng.range(1, 40) as u64;
        let created = self.rng.log_size(1, 40_000) as u64;
        let read = self.rng.log_size(1, 200_000) as u64;
        self.out.raw("{\"input_tokens\":");
        self.out.u64(input);
        self.out.raw(",\"cache_creation_input_tokens\":");
        self.out.u64(created);
        self.out.raw(",\"cache_read_input_tokens\":");
        self.out.u64(read);
        self.out
            .raw(",\"cache_creation\":{\"ephemeral_5m_input_tokens\":");
        self.out.u64(created);
        self.out
            .raw(",\"ephemeral_1h_input_tokens\":0},\"output_tokens\":");
        self.out.u64(self.rng.log_size(1, 4000) as u64);
        self.out.raw(",\"service_tier\":\"standard\"}");
    }

    /// A new session: fresh session ID and model, then its `system/init` record.
    pub(crate) fn system_init(&mut self) {
        self.session = uuid_words(&mut self.rng);
        self.model = *self.rng.pick(pools::MODELS);
        self.out.spelling = Spelling::Raw;
        self.out
            .raw("{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\"/home/dev/agentx-wire\"");
        self.out.raw(",\"tools\":[");
        for (i, t) in pools::TOOLS.iter().enumerate() {
            if i > 0 {
                self.out.byte(b',');
            }
            self.out.string(t);
        }
        self.out.raw("],\"mcp_servers\":[{\"name\":\"github\",\"status\":\"connected\"},{\"name\":\"docs\",\"status\":\"failed\"}]");
        self.out.next_key("model");
        self.out.string(self.model);
        self.out
            .raw(",\"provider\":\"anthropic-main\",\"provider_type\":\"anthropic\"");
        self.out.raw(",\"reasoning_capabilities\":{\"supported\":true,\"efforts\":[\"low\",\"medium\",\"high\"],\"defaultEffort\":\"high\"}");
        self.out
            .raw(",\"permissionMode\":\"default\",\"slash_commands\":[");
        for (i, c) in pools::SLASH_COMMANDS.iter().enumerate() {
            if i > 0 {
                self.out.byte(b',');
            }
            self.out.string(c);
        }
        self.out.raw("],\"apiKeySource\":\"user\",\"claude_code_version\":\"2.1.15\",\"output_style\":\"default\"");
        self.out.raw(",\"agents\":[\"general-purpose\",\"Explore\",\"Plan\"],\"skills\":[],\"plugins\":[{\"name\":\"rust-analyzer-lsp\",\"path\":\"/home/dev/.claude/plugins/cache/rust-analyzer-lsp/1.0.0\"}]");
        self.out.raw(",\"input_capabilities\":{\"attachments\":{\"protocol_version\":1,\"sources\":[{\"source\":\"file_path\",\"scope\":\"initial_cli\"},{\"source\":\"stream_json_v1\",\"scope\":\"per_turn\"}],\"media_types\":[{\"kind\":\"image\",\"mime_type\":\"image/png\",\"max_bytes\":20971520,\"max_dimension\":8192,\"max_pixels\":20000000,\"transform_policy\":\"decode_reencode_strip_metadata_reject_oversize_no_resize\"},{\"kind\":\"image\",\"mime_type\":\"image/jpeg\",\"max_bytes\":20971520,\"max_dimension\":8192,\"max_pixels\":20000000,\"transform_policy\":\"decode_reencode_strip_metadata_reject_oversize_no_resize\"},{\"kind\":\"document\",\"mime_type\":\"application/pdf\",\"max_bytes\":20971520,\"max_pages\":100,\"transform_policy\":\"validate_structure_no_execute_no_ocr_no_conversion\"}],\"limits\":{\"max_attachments_per_message\":8,\"max_concurrent_uploads\":8,\"max_uploads_per_session\":100000,\"max_item_bytes\":20971520,\"max_aggregate_bytes\":41943040,\"max_storage_bytes\":536870912,\"max_model_request_media_bytes\":41943040,\"max_chunk_decoded_bytes\":262144,\"max_chunk_encoded_bytes\":349528,\"max_display_name_bytes\":255,\"max_mime_type_bytes\":64,\"max_image_dimension\":8192,\"max_image_pixels\":20000000,\"max_pdf_pages\":100,\"upload_timeout_ms\":120000},\"provider_limits\":{\"max_request_items\":100,\"max_encoded_media_bytes\":55927120,\"max_request_bytes\":67108864,\"max_ndjson_record_bytes\":8388608}}}");
        self.system_tail();
    }

    /// `system/session_state_changed` (WIRE-004): `idle`, `running` or `requires_action`.
    pub(crate) fn session_state(&mut self, state: &str) {
        self.out
            .raw("{\"type\":\"system\",\"subtype\":\"session_state_changed\",\"state\":");
        self.out.string(state);
        self.system_tail();
    }

    /// One of the lighter system events: status, task progress, hooks, compaction, rate limits.
    pub(crate) fn minor_event(&mut self, tool: &ToolCall) {
        match self.rng.below(7) {
            0 => {
                self.out
                    .raw("{\"type\":\"system\",\"subtype\":\"status\",\"status\":");
                self.out.raw(if self.rng.chance(200) {
                    "\"compacting\""
                } else {
                    "null"
                });
                self.out.raw(",\"permissionMode\":\"default\"");
                self.system_tail();
            }
            1 => {
                self.out
                    .raw("{\"type\":\"system\",\"subtype\":\"task_progress\",\"task_id\":");
                self.out.base62_id(&mut self.rng, "a", 16);
                self.out.next_key("tool_use_id");
                self.out.string(tool.id_str());
                self.out.raw(",\"description\":\"Running tests in the background\",\"subagent_type\":\"general-purpose\",\"usage\":{\"total_tokens\":");
                self.out.u64(self.rng.log_size(100, 90_000) as u64);
                self.out.raw(",\"tool_uses\":");
                self.out.u64(self.rng.range(1, 30) as u64);
                self.out.raw(",\"duration_ms\":");
                self.out.u64(self.rng.log_size(10, 600_000) as u64);
                self.out.raw("},\"last_tool_name\":");
                self.out.string(tool.name);
                self.system_tail();
            }
            2 => {
                self.out.raw("{\"type\":\"tool_progress\",\"tool_use_id\":");
                self.out.string(tool.id_str());
                self.out.next_key("tool_name");
                self.out.string(tool.name);
                self.out.raw(",\"elapsed_time_seconds\":");
                self.out.f64((self.rng.below(6000) as f64) / 100.0);
                self.envelope_tail();
            }
            3 => {
                self.out
                    .raw("{\"type\":\"system\",\"subtype\":\"hook_response\",\"hook_id\":");
                self.out.uuid(&mut self.rng);
                self.out.raw(",\"hook_name\":\"PostToolUse:Edit\",\"hook_event\":\"PostToolUse\",\"stdout\":");
                self.text.clear();
                content::command_output(&mut self.rng, 3, &mut self.text);
                self.out.string(&self.text);
                self.out.raw(
                    ",\"stderr\":\"\",\"output\":\"\",\"exit_code\":0,\"outcome\":\"success\"",
                );
                self.system_tail();
            }
            4 => {
                self.out.raw("{\"type\":\"rate_limit_event\",\"rate_limit_info\":{\"status\":\"allowed\",\"resetsAt\":");
                self.out.u64(1_790_678_400 + self.rng.below(86_400) as u64);
                self.out.raw(",\"rateLimitType\":\"five_hour\",\"isUsingOverage\":false,\"unifiedWindows\":{\"five_hour\":{\"utilization\":");
                self.out.f64(self.rng.below(100) as f64 / 100.0);
                self.out.raw("},\"seven_day\":{\"utilization\":");
                self.out.f64(self.rng.below(100) as f64 / 100.0);
                self.out.raw("}}}");
                self.system_tail();
            }
            5 => {
                self.out
                    .raw("{\"type\":\"system\",\"subtype\":\"task_notification\",\"task_id\":");
                self.out.base62_id(&mut self.rng, "b", 8);
                self.out.next_key("tool_use_id");
                self.out.string(tool.id_str());
                self.out.raw(",\"status\":\"completed\",\"output_file\":\"/tmp/agentx-1001/tasks/output.txt\",\"summary\":");
                self.text.clear();
                content::prose(&mut self.rng, 2, &mut self.text);
                self.out.string(&self.text);
                self.system_tail();
            }
            _ => {
                self.out.raw("{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"compact_metadata\":{\"trigger\":\"auto\",\"pre_tokens\":");
                self.out.u64(self.rng.range(150_000, 199_000) as u64);
                self.out.raw("}");
                self.system_tail();
            }
        }
    }

    /// Chooses the next tool call of the assistant.
    pub(crate) fn new_tool_call(&mut self) -> ToolCall {
        let mut id = [b'0'; 30];
        id[..8].copy_from_slice(b"toolu_01");
        const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        for b in id.iter_mut().skip(8) {
            *b = *self.rng.pick(BASE62);
        }
        let roll = self.rng.below(100);
        let name = match roll {
            0..=39 => "Read",
            40..=64 => "Bash",
            65..=79 => "Edit",
            80..=87 => "Grep",
            88..=93 => "Write",
            _ => "TodoWrite",
        };
        let target = if name == "Bash" {
            *self.rng.pick(pools::COMMANDS)
        } else {
            *self.rng.pick(pools::FILES)
        };
        ToolCall { id, name, target }
    }

    /// Writes the tool's `input` object into `self.input` (reused; compact JSON).
    pub(crate) fn tool_input(&mut self, call: &ToolCall) {
        let inp = &mut self.input;
        inp.buf.clear();
        inp.spelling = self.out.spelling;
        match call.name {
            "Bash" => {
                inp.raw("{\"command\":");
                inp.string(call.target);
                inp.raw(",\"description\":\"Run the command and show its output\"}");
            }
            "Edit" | "Write" => {
                let pool = content::pool_for(call.target);
                inp.raw("{\"file_path\":");
                inp.string(call.target);
                self.text2.clear();
                let n = self.rng.range(2, 24);
                content::source_lines(&mut self.rng, pool, n, &mut self.text2, None);
                if call.name == "Edit" {
                    inp.raw(",\"old_string\":");
                    inp.string(&self.text2);
                    self.text2
                        .push_str("\n    // fixed: compare decoded names (WIRE-014)");
                    inp.raw(",\"new_string\":");
                    inp.string(&self.text2);
                    inp.raw(",\"replace_all\":false}");
                } else {
                    inp.raw(",\"content\":");
                    inp.string(&self.text2);
                    inp.byte(b'}');
                }
            }
            "Grep" => {
                inp.raw("{\"pattern\":\"fn parse\\\\w*\\\\(\",\"path\":\"src\",\"output_mode\":\"content\",\"-n\":true}");
            }
            "TodoWrite" => {
                inp.raw("{\"todos\":[{\"content\":\"Fix duplicate-name detection\",\"status\":\"completed\",\"activeForm\":\"Fixing duplicate-name detection\"},{\"content\":\"Run the conformance suite\",\"status\":\"in_progress\",\"activeForm\":\"Running the conformance suite\"}]}");
            }
            _ => {
                inp.raw("{\"file_path\":");
                inp.string(call.target);
                if self.rng.chance(300) {
                    inp.raw(",\"offset\":");
                    inp.u64(self.rng.range(1, 400) as u64);
                    inp.raw(",\"limit\":");
                    inp.u64(self.rng.range(50, 400) as u64);
                }
                inp.byte(b'}');
            }
        }
    }

    /// `control_request` can_use_tool (PERM-020), with a permission suggestion (PERM-023).
    pub(crate) fn can_use_tool(&mut self, call: &ToolCall) {
        self.out
            .raw("{\"type\":\"control_request\",\"request_id\":");
        self.out.uuid(&mut self.rng);
        self.out
            .raw(",\"request\":{\"subtype\":\"can_use_tool\",\"tool_name\":");
        self.out.string(call.name);
        self.out.raw(",\"input\":");
        self.out.buf.extend_from_slice(&self.input.buf);
        self.out.raw(",\"tool_use_id\":");
        self.out.string(call.id_str());
        self.out
            .raw(",\"permission_suggestions\":[{\"type\":\"addRules\",\"rules\":[{\"toolName\":");
        self.out.string(call.name);
        self.out.raw(",\"ruleContent\":");
        self.out.string(call.target);
        self.out.raw("}],\"behavior\":\"allow\",\"destination\":\"localSettings\"}],\"blocked_path\":null,\"decision_reason\":null,\"description\":");
        self.out.string(call.target);
        self.out.raw("}}\n");
    }

    /// The `user` record carrying a tool's result: by bytes, the bulk of a real stream.
    pub(crate) fn tool_result(&mut self, call: &ToolCall) {
        let is_error = self.rng.chance(40);
        self.text.clear();
        self.text2.clear();
        match call.name {
            "Read" if !is_error => {
                let style = if self.rng.chance(500) { Numbering::Tab } else { Numbering::Arrow };
                let n = self.rng.log_size(20, 1500);
                let pool = content::pool_for(call.target);
                content::source_lines(&mut self.rng, pool, n, &mut self.text2, Some((&mut self.text, style)));
            }
            "Bash" | "Grep" if !is_error => {
                let n = self.rng.log_size(2, 600);
                content::command_output(&mut self.rng, n, &mut self.text);
            }
            "Edit" | "Write" if !is_error => {
                self.text.push_str("The file ");
                self.text.push_str(call.target);
                self.text.push_str(" has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n");
                let n = self.rng.range(6, 40);
                let pool = content::pool_for(call.target);
                content::source_lines(&mut self.rng, pool, n, &mut self.text2, Some((&mut self.text, Numbering::Arrow)));
                self.text2.clear();
            }
            _ if !is_error => self.text.push_str("Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress."),
            _ => {
                self.text.push_str("<tool_use_error>InputValidationError: ");
                self.text.push_str(call.name);
                self.text.push_str(" failed due to the following issue:\nThe parameter `offset` type is expected as `number` but provided as `string`</tool_use_error>");
            }
        }
        self.out.raw(
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"tool_use_id\":",
        );
        self.out.string(call.id_str());
        self.out.raw(",\"type\":\"tool_result\",\"content\":");
        if self.rng.chance(250) {
            self.out.raw("[{\"type\":\"text\",\"text\":");
            self.out.string(&self.text);
            self.out.raw("}]");
        } else {
            self.out.string(&self.text);
        }
        self.out.next_key("is_error");
        self.out.bool(is_error);
        self.out.raw("}]}");
        if !is_error {
            match call.name {
                "Bash" => {
                    self.out.raw(",\"tool_use_result\":{\"stdout\":");
                    self.out.string(&self.text);
                    self.out
                        .raw(",\"stderr\":\"\",\"interrupted\":false,\"isImage\":false}");
                }
                "Read" => {
                    let lines = self.text2.lines().count() as u64;
                    self.out
                        .raw(",\"tool_use_result\":{\"type\":\"text\",\"file\":{\"filePath\":");
                    self.out.string(call.target);
                    self.out.raw(",\"content\":");
                    self.out.string(&self.text2);
                    self.out.raw(",\"numLines\":");
                    self.out.u64(lines);
                    self.out.raw(",\"startLine\":1,\"totalLines\":");
                    self.out.u64(lines);
                    self.out.raw("}}");
                }
                _ => {}
            }
        }
        self.envelope_tail();
    }

    /// The terminal `result` of a turn: success, or error_during_execution with `errors`.
    /// `total_cost_usd` and `costUSD` are null when pricing is unknown (WIRE-012).
    pub(crate) fn result(&mut self, num_turns: u64) {
        let error = self.rng.chance(60);
        let cost = if self.rng.chance(150) {
            None
        } else {
            Some(self.rng.unit_f64() * 0.9 + 0.000_01)
        };
        self.out.raw("{\"type\":\"result\",\"subtype\":");
        self.out.raw(if error {
            "\"error_during_execution\""
        } else {
            "\"success\""
        });
        self.out.next_key("is_error");
        self.out.bool(error);
        self.out.raw(",\"duration_ms\":");
        self.out.u64(self.rng.log_size(20, 900_000) as u64);
        self.out.raw(",\"duration_api_ms\":");
        self.out.u64(self.rng.log_size(20, 900_000) as u64);
        self.out.raw(",\"num_turns\":");
        self.out.u64(num_turns);
        if error {
            self.out.raw(
                ",\"errors\":[\"Request was aborted.\",\"Interrupted by the host (interrupt)\"]",
            );
        } else {
            self.out.raw(",\"result\":");
            self.text.clear();
            content::prose(&mut self.rng, 4, &mut self.text);
            self.out.string(&self.text);
        }
        self.out.raw(",\"stop_reason\":");
        self.out.raw(if error { "null" } else { "\"end_turn\"" });
        self.out.raw(",\"session_id\":");
        self.out.quoted_uuid(self.session.0, self.session.1);
        self.out.raw(",\"total_cost_usd\":");
        match cost {
            Some(c) => self.out.f64(c),
            None => self.out.raw("null"),
        }
        self.out.raw(",\"usage\":");
        self.usage();
        self.out.raw(",\"modelUsage\":{");
        self.out.string(self.model);
        self.out.raw(":{\"inputTokens\":");
        self.out.u64(self.rng.log_size(1, 5000) as u64);
        self.out.raw(",\"outputTokens\":");
        self.out.u64(self.rng.log_size(1, 20_000) as u64);
        self.out.raw(",\"cacheReadInputTokens\":");
        self.out.u64(self.rng.log_size(1, 900_000) as u64);
        self.out.raw(",\"cacheCreationInputTokens\":");
        self.out.u64(self.rng.log_size(1, 90_000) as u64);
        self.out.raw(",\"webSearchRequests\":0,\"costUSD\":");
        match cost {
            Some(c) => self.out.f64(c * 0.93),
            None => self.out.raw("null"),
        }
        self.out
            .raw(",\"contextWindow\":200000,\"maxOutputTokens\":64000}},\"permission_denials\":[]");
        self.out.next_key("uuid");
        self.out.uuid(&mut self.rng);
        self.out.raw("}\n");
    }
}
