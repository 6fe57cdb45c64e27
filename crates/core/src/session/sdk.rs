//! The session side of the Claude Agent SDK profile (PROFILE §15, §16; `--verbose`): its
//! input dialect (`wire::sdk_input`), its `initialize` (the SDKs' members, typed; a member
//! the profile cannot honour yet gets a correlated error naming it; the response is §8's
//! payload plus what the SDKs read from it), and the system message of every model request.
//!
//! Must never: run in the standalone profile (the dispatcher calls it only for
//! [`Profile::Sdk`](super::Profile::Sdk)), or accept a member that changes what the agent may
//! do without honouring it.

use std::time::Instant;

use agentx_wire::wire::initialize::SdkInitializeResponse;
use agentx_wire::wire::sdk_input::{decode_sdk_line, SdkInitialize, SdkInput};

use super::controls::ALREADY_INITIALIZED;
use super::records::{control_error, control_success_with};
use super::Session;
use super::{mcp, mcp_config};

impl Session {
    /// One input line of the SDK profile: the SDKs' dialect, then the common dispatch.
    pub(crate) fn dispatch_sdk_line(&mut self, line: &[u8], line_no: u64, now: Instant) {
        let mut parser = std::mem::take(&mut self.parser);
        let decoded = decode_sdk_line(line, &mut parser).map(SdkInput::into_owned);
        self.parser = parser;
        match decoded {
            Ok(SdkInput::Record(record)) => self.dispatch(record, line.len(), line_no, now),
            Ok(SdkInput::Initialize { request_id, init }) => {
                self.sdk_initialize(request_id.as_str(), &init, now)
            }
            Err(e) => self.decode_error(&e, line, line_no, now),
        }
        self.after_step(now);
    }

    /// `initialize` in the SDK profile (PROFILE §15): at most once, like §8's; a request
    /// naming what the profile cannot honour yet is refused with a correlated error and does
    /// not count. Ignored members get one WARN line each.
    fn sdk_initialize(&mut self, id: &str, init: &SdkInitialize<'static>, now: Instant) {
        let mut servers = Vec::new();
        let rec = if self.initialized {
            control_error(id, ALREADY_INITIALIZED)
        } else if let Some(why) = init.refusal() {
            control_error(id, &why)
        } else if let Err(why) = self.sdk_mcp_servers(init).map(|s| servers = s) {
            control_error(id, &why)
        } else if let Err(why) = self.sdk_output_schema(init) {
            control_error(id, &why)
        } else {
            for name in &init.ignored {
                self.out.diagnostic(format!(
                    "agentx: WARN initialize.{name} is not supported; ignored"
                ));
            }
            // PROFILE §15: `systemPrompt`, when present, replaces `--system-prompt`;
            // `appendSystemPrompt` likewise replaces `--append-system-prompt`.
            if let Some(parts) = &init.system_prompt {
                self.system_prompt.0 = Some(parts.iter().map(|p| p.to_string()).collect());
            }
            if let Some(append) = &init.append_system_prompt {
                self.system_prompt.1 = Some(append.to_string());
            }
            let hooks_applied = self.register_sdk_hooks(init);
            if init
                .sdk_mcp_server_configs
                .as_ref()
                .is_some_and(|c| c.0.as_bytes() != b"{}")
            {
                self.out.diagnostic(
                    "agentx: WARN initialize.sdkMcpServerConfigs is not supported; ignored"
                        .to_string(),
                );
            }
            // PROFILE §18: the user's servers start connecting; their connection is queued
            // after this response.
            let mut user = Vec::new();
            for (def, tools) in std::mem::take(&mut servers) {
                match def.kind {
                    mcp_config::ServerKind::Sdk => self.mcp_add(&def.name, tools),
                    mcp_config::ServerKind::User(_) => user.push(def),
                }
            }
            self.mcp_pending_defs = user;
            self.initialized = true;
            // PROFILE §16: this profile honours `onFailure` (both SDKs refuse a `block`
            // matcher without it), and says when the request's hooks were registered. What
            // the SDKs read from the response (PROFILE §15): TypeScript ends the session
            // unless `mcp_servers_applied` is a boolean when it sent `mcpServers`.
            let response = SdkInitializeResponse {
                response: self.initialize_response(),
                hook_on_failure_supported: Some(true),
                hooks_applied: hooks_applied.then_some(true),
                mcp_servers_applied: (init.mcp_servers.is_some() || init.sdk_mcp_servers.is_some())
                    .then_some(true),
            };
            control_success_with(id, &response)
        };
        super::respond(&mut self.out, id, &rec);
        // PROFILE §16: the servers are listed once the host has its response.
        if self.initialized {
            for def in std::mem::take(&mut self.mcp_pending_defs) {
                self.mcp_define(def, now);
            }
            self.mcp_begin(now);
        }
    }

    /// PROFILE §16: initialize `jsonSchema` replaces `--json-schema` (the TypeScript SDK sends
    /// both; initialize wins when they differ). A schema that does not compile refuses the
    /// request (a correlated error naming the member), and nothing changes.
    fn sdk_output_schema(&mut self, init: &SdkInitialize<'static>) -> Result<(), String> {
        let Some(raw) = &init.json_schema else {
            return Ok(());
        };
        let text = std::str::from_utf8(raw.as_bytes())
            .map_err(|_| "initialize.jsonSchema: not UTF-8".to_string())?;
        let schema = super::structured::OutputSchema::compile(text)
            .map_err(|e| format!("initialize.jsonSchema: {e}"))?;
        self.output_schema = Some(schema);
        Ok(())
    }

    /// Registers initialize `hooks` (PROFILE §16): every event agentx does not call gets one
    /// WARN line. `true` when callbacks were registered (`hooks_applied`).
    fn register_sdk_hooks(&mut self, init: &SdkInitialize<'static>) -> bool {
        let Some(map) = &init.hooks else {
            return false;
        };
        for name in &map.unsupported {
            let mut quoted = Vec::new();
            agentx_wire::json::write_str(&mut quoted, super::policy::cut(name, 64));
            self.out.diagnostic(format!(
                "agentx: WARN initialize.hooks event {} is not supported; not called",
                String::from_utf8_lossy(&quoted)
            ));
        }
        let applied = map.registers_callbacks();
        self.sdk_hooks.register(map.clone());
        applied
    }

    /// The system message of every model request (PROFILE §15, §16, §17): the prompt's
    /// non-empty parts (the default coding-agent message when no prompt was set), then the
    /// appended text, joined by a blank line; `None` when nothing is left. An explicit prompt,
    /// even an empty one, replaces the default.
    pub(crate) fn system_message(&self) -> Option<String> {
        let (parts, append) = &self.system_prompt;
        let default = self.config.default_system_prompt.as_deref();
        let prompt: Vec<&str> = match parts {
            Some(p) => p.iter().map(String::as_str).collect(),
            None => default.into_iter().collect(),
        };
        let append = match self.config.profile {
            super::Profile::Sdk => append.as_deref(),
            super::Profile::Standalone => None,
        };
        let text: Vec<&str> = prompt
            .into_iter()
            .chain(append)
            .filter(|p| !p.is_empty())
            .collect();
        (!text.is_empty()).then(|| text.join("\n\n"))
    }
}

impl Session {
    /// PROFILE §16, §18: the servers of an initialize (`mcpServers`, then `sdkMcpServers`),
    /// an SDK server with its manifest's tools when `sdkMcpServerManifests` lists them. A
    /// malformed config or a 65th server (counting those already configured) is a correlated
    /// error naming the server.
    fn sdk_mcp_servers(&self, init: &SdkInitialize<'static>) -> Result<Vec<McpServer>, String> {
        let mut defs = Vec::new();
        if let Some(map) = &init.mcp_servers {
            let doc = map
                .0
                .document()
                .map_err(|_| "initialize.mcpServers: not JSON".to_string())?;
            defs = mcp_config::servers_of_map(doc.root())
                .map_err(|e| format!("initialize.mcpServers: {e}"))?;
        }
        for name in init.sdk_mcp_servers.iter().flatten() {
            if !mcp_config::valid_name(name) {
                return Err(format!(
                    "initialize.sdkMcpServers: MCP server {}: the name does not match \
                     [A-Za-z0-9_-]{{1,64}}",
                    mcp::quoted(name)
                ));
            }
            if !defs.iter().any(|d| d.name == **name) {
                defs.push(mcp_config::ServerDef {
                    name: name.to_string(),
                    kind: mcp_config::ServerKind::Sdk,
                });
            }
        }
        // The limit counts every configured server.
        let mut all: Vec<mcp_config::ServerDef> = self
            .mcp
            .servers
            .iter()
            .map(|s| mcp_config::ServerDef {
                name: s.name.clone(),
                kind: mcp_config::ServerKind::Sdk,
            })
            .collect();
        mcp_config::merge(&mut all, defs.clone())
            .map_err(|e| format!("initialize.mcpServers: {e}"))?;
        let manifests = init
            .sdk_mcp_server_manifests
            .as_ref()
            .and_then(|m| m.0.document().ok());
        let manifest = |name: &str| {
            let doc = manifests.as_ref()?;
            let m = doc.root().as_object()?.get(name)?;
            mcp::manifest_tools(m)
        };
        Ok(defs
            .into_iter()
            .map(|d| {
                let tools = match d.kind {
                    mcp_config::ServerKind::Sdk => manifest(&d.name),
                    mcp_config::ServerKind::User(_) => None,
                };
                (d, tools)
            })
            .collect())
    }
}

/// A server and, from a manifest, an SDK server's tools.
type McpServer = (mcp_config::ServerDef, Option<Vec<mcp::ListedTool>>);
