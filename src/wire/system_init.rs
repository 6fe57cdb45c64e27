//! `system/init` (Initialization system event), WIRE-023 selected-provider fields, the
//! reasoning-capability declaration, and the exact `input_capabilities` shape shared with
//! the `initialize` response.
//!
//! Owns: the init members in the protocol's list, `reasoning_capabilities` with its
//! invariants (`supported` exactly when `efforts` is nonempty, `defaultEffort` a member of
//! `efforts`, `null` when unsupported), and `input_capabilities` closed at every level with
//! the native profile's values available as [`InputCapabilities::native`]. The init record
//! itself is open (unknown members ignored). `provider` and `provider_type` are required on
//! decode (WIRE-023, so Claude-CLI captures without them are rejected); `apiKeySource` is the
//! closed pair of WIRE-016 when present; other members Claude-CLI captures omit (`skills`,
//! ...) are optional on decode and written when present — the agent always sets them. Never projects the registry (that is
//! `agentx_core::registry`).

use crate::json::Object;

use super::api_key_source::ApiKeySource;
use super::decode::{Closed, Path, Text};
use super::error::Error;
use super::grammar::Uuid;
use super::table::wire_struct;
use super::RawJson;

wire_struct! {
    /// An MCP server name/status pair.
    pub struct McpServerStatus<'a> {
        closed: Closed::No,
        rule: "Initialization system event",
        skip: [],
        name: Text<'a> = "name" => req,
        status: Text<'a> = "status" => req,
        /// `mcp_status` (PROFILE §18): the server's transport, never its `env` or `headers`.
        config: Option<RawJson<'a>> = "config" => opt,
        /// `mcp_status`: MCP's `{name, version}` when connected.
        server_info: Option<RawJson<'a>> = "serverInfo" => opt,
        /// `mcp_status`: why it failed.
        error: Option<Text<'a>> = "error" => opt,
        /// `mcp_status`: `[{name, description}]` when connected.
        tools: Option<RawJson<'a>> = "tools" => opt,
    }
}

wire_struct! {
    /// A plugin descriptor.
    pub struct PluginDescriptor<'a> {
        closed: Closed::No,
        rule: "Initialization system event",
        skip: [],
        name: Text<'a> = "name" => req,
        path: Text<'a> = "path" => req,
    }
}

wire_struct! {
    /// The selected descriptor's reasoning declaration (WIRE-023), closed.
    pub struct ReasoningCapabilities<'a> {
        closed: Closed::Yes("WIRE-023"),
        rule: "WIRE-023",
        skip: [],
        supported: bool = "supported" => req,
        /// Configured order preserved.
        efforts: Vec<Text<'a>> = "efforts" => req,
        default_effort: Option<Text<'a>> = "defaultEffort" => nul,
    }
}

impl<'a> ReasoningCapabilities<'a> {
    /// Builds a consistent declaration from ordered efforts and a default.
    pub fn new(
        efforts: Vec<Text<'a>>,
        default_effort: Option<Text<'a>>,
    ) -> ReasoningCapabilities<'a> {
        ReasoningCapabilities {
            supported: !efforts.is_empty(),
            efforts,
            default_effort,
        }
    }

    /// WIRE-023/WIRE-024 invariants.
    pub(crate) fn check(&self, at: &Path<'_>) -> Result<(), Error> {
        if self.supported == self.efforts.is_empty() {
            return Err(Error::invalid(
                &at.key("supported"),
                "true exactly when efforts is nonempty",
                "WIRE-023",
            ));
        }
        match &self.default_effort {
            Some(d) if !self.efforts.contains(d) => Err(Error::invalid(
                &at.key("defaultEffort"),
                "a member of efforts",
                "WIRE-023",
            )),
            None if self.supported => Err(Error::invalid(
                &at.key("defaultEffort"),
                "a member of efforts",
                "WIRE-023",
            )),
            _ => Ok(()),
        }
    }
}

wire_struct! {
    /// `{source, scope}`, closed.
    pub struct AttachmentSource<'a> {
        closed: Closed::Yes("WIRE-023"),
        rule: "WIRE-023",
        skip: [],
        source: Text<'a> = "source" => req,
        scope: Text<'a> = "scope" => req,
    }
}

wire_struct! {
    /// One supported media type, closed; images carry dimension and pixel limits, PDFs a
    /// page limit.
    pub struct MediaTypeCapability<'a> {
        closed: Closed::Yes("WIRE-023"),
        rule: "WIRE-023",
        skip: [],
        kind: Text<'a> = "kind" => req,
        mime_type: Text<'a> = "mime_type" => req,
        max_bytes: u64 = "max_bytes" => req,
        max_dimension: Option<u64> = "max_dimension" => opt,
        max_pixels: Option<u64> = "max_pixels" => opt,
        max_pages: Option<u64> = "max_pages" => opt,
        transform_policy: Text<'a> = "transform_policy" => req,
    }
}

wire_struct! {
    /// `limits`, closed, every member required.
    pub struct AttachmentLimits {
        closed: Closed::Yes("WIRE-023"),
        rule: "WIRE-023",
        skip: [],
        max_attachments_per_message: u64 = "max_attachments_per_message" => req,
        max_concurrent_uploads: u64 = "max_concurrent_uploads" => req,
        max_uploads_per_session: u64 = "max_uploads_per_session" => req,
        max_item_bytes: u64 = "max_item_bytes" => req,
        max_aggregate_bytes: u64 = "max_aggregate_bytes" => req,
        max_storage_bytes: u64 = "max_storage_bytes" => req,
        max_model_request_media_bytes: u64 = "max_model_request_media_bytes" => req,
        max_chunk_decoded_bytes: u64 = "max_chunk_decoded_bytes" => req,
        max_chunk_encoded_bytes: u64 = "max_chunk_encoded_bytes" => req,
        max_display_name_bytes: u64 = "max_display_name_bytes" => req,
        max_mime_type_bytes: u64 = "max_mime_type_bytes" => req,
        max_image_dimension: u64 = "max_image_dimension" => req,
        max_image_pixels: u64 = "max_image_pixels" => req,
        max_pdf_pages: u64 = "max_pdf_pages" => req,
        upload_timeout_ms: u64 = "upload_timeout_ms" => req,
    }
}

wire_struct! {
    /// `provider_limits`, closed, every member required.
    pub struct ProviderLimits {
        closed: Closed::Yes("WIRE-023"),
        rule: "WIRE-023",
        skip: [],
        max_request_items: u64 = "max_request_items" => req,
        max_encoded_media_bytes: u64 = "max_encoded_media_bytes" => req,
        max_request_bytes: u64 = "max_request_bytes" => req,
        max_ndjson_record_bytes: u64 = "max_ndjson_record_bytes" => req,
    }
}

wire_struct! {
    /// `attachments`, closed.
    pub struct AttachmentCapabilities<'a> {
        closed: Closed::Yes("WIRE-023"),
        rule: "WIRE-023",
        skip: [],
        protocol_version: u64 = "protocol_version" => req,
        sources: Vec<AttachmentSource<'a>> = "sources" => req,
        media_types: Vec<MediaTypeCapability<'a>> = "media_types" => req,
        limits: AttachmentLimits = "limits" => req,
        provider_limits: ProviderLimits = "provider_limits" => req,
    }
}

wire_struct! {
    /// `input_capabilities`, closed. Absent means text-only.
    pub struct InputCapabilities<'a> {
        closed: Closed::Yes("WIRE-023"),
        rule: "WIRE-023",
        skip: [],
        attachments: AttachmentCapabilities<'a> = "attachments" => req,
    }
}

impl InputCapabilities<'static> {
    /// The native qualified attachment profile's exact capability (WIRE-023).
    pub fn native() -> InputCapabilities<'static> {
        const MIB20: u64 = 20_971_520;
        let image = |mime: &'static str| MediaTypeCapability {
            kind: Text::Borrowed("image"),
            mime_type: Text::Borrowed(mime),
            max_bytes: MIB20,
            max_dimension: Some(8192),
            max_pixels: Some(20_000_000),
            max_pages: None,
            transform_policy: Text::Borrowed(
                "decode_reencode_strip_metadata_reject_oversize_no_resize",
            ),
        };
        InputCapabilities {
            attachments: AttachmentCapabilities {
                protocol_version: 1,
                sources: vec![
                    AttachmentSource {
                        source: Text::Borrowed("file_path"),
                        scope: Text::Borrowed("initial_cli"),
                    },
                    AttachmentSource {
                        source: Text::Borrowed("stream_json_v1"),
                        scope: Text::Borrowed("per_turn"),
                    },
                ],
                media_types: vec![
                    image("image/png"),
                    image("image/jpeg"),
                    MediaTypeCapability {
                        kind: Text::Borrowed("document"),
                        mime_type: Text::Borrowed("application/pdf"),
                        max_bytes: MIB20,
                        max_dimension: None,
                        max_pixels: None,
                        max_pages: Some(100),
                        transform_policy: Text::Borrowed(
                            "validate_structure_no_execute_no_ocr_no_conversion",
                        ),
                    },
                ],
                limits: AttachmentLimits {
                    max_attachments_per_message: 8,
                    max_concurrent_uploads: 8,
                    max_uploads_per_session: 100_000,
                    max_item_bytes: MIB20,
                    max_aggregate_bytes: 41_943_040,
                    max_storage_bytes: 536_870_912,
                    max_model_request_media_bytes: 41_943_040,
                    max_chunk_decoded_bytes: 262_144,
                    max_chunk_encoded_bytes: 349_528,
                    max_display_name_bytes: 255,
                    max_mime_type_bytes: 64,
                    max_image_dimension: 8192,
                    max_image_pixels: 20_000_000,
                    max_pdf_pages: 100,
                    upload_timeout_ms: 120_000,
                },
                provider_limits: ProviderLimits {
                    max_request_items: 100,
                    max_encoded_media_bytes: 55_927_120,
                    max_request_bytes: 67_108_864,
                    max_ndjson_record_bytes: 8_388_608,
                },
            },
        }
    }
}

wire_struct! {
    /// `system/init`. Canonical order: `type, subtype`, then as declared.
    pub struct InitEvent<'a> {
        closed: Closed::No,
        rule: "Initialization system event",
        skip: ["type", "subtype"],
        /// WIRE-016: the closed pair `user | temporary` (other CLIs' `none` is rejected).
        api_key_source: Option<ApiKeySource> = "apiKeySource" => opt,
        /// The product version.
        claude_code_version: Option<Text<'a>> = "claude_code_version" => opt,
        /// agentx's own version (PROFILE §16, the SDK profile only).
        agentx_version: Option<Text<'a>> = "agentx_version" => opt,
        cwd: Text<'a> = "cwd" => req,
        tools: Vec<Text<'a>> = "tools" => req,
        mcp_servers: Vec<McpServerStatus<'a>> = "mcp_servers" => req,
        model: Text<'a> = "model" => req,
        /// WIRE-023: the exact stable registry ID.
        provider: Option<Text<'a>> = "provider" => opt,
        provider_type: Option<Text<'a>> = "provider_type" => opt,
        reasoning_capabilities: Option<ReasoningCapabilities<'a>> = "reasoning_capabilities" => opt,
        permission_mode: Text<'a> = "permissionMode" => req,
        slash_commands: Option<Vec<Text<'a>>> = "slash_commands" => opt,
        output_style: Option<Text<'a>> = "output_style" => opt,
        skills: Option<Vec<Text<'a>>> = "skills" => opt,
        plugins: Option<Vec<PluginDescriptor<'a>>> = "plugins" => opt,
        agents: Option<Vec<Text<'a>>> = "agents" => opt,
        betas: Option<Vec<Text<'a>>> = "betas" => opt,
        fast_mode_state: Option<Text<'a>> = "fast_mode_state" => opt,
        input_capabilities: Option<InputCapabilities<'a>> = "input_capabilities" => opt,
        uuid: Uuid<'a> = "uuid" => req,
        session_id: Uuid<'a> = "session_id" => req,
    }
}

impl<'a> InitEvent<'a> {
    pub(crate) fn decode_checked(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let init = InitEvent::decode_members(obj, at)?;
        // WIRE-023: every model-backed init names the frozen selection.
        if init.provider.is_none() {
            return Err(Error::missing(&at.key("provider"), "WIRE-023"));
        }
        if init.provider_type.is_none() {
            return Err(Error::missing(&at.key("provider_type"), "WIRE-023"));
        }
        if let Some(r) = &init.reasoning_capabilities {
            r.check(&at.key("reasoning_capabilities"))?;
        }
        Ok(init)
    }
}
