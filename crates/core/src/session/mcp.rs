//! In-process MCP tools (PROFILE §16), the pure parts: which servers a configuration names
//! (`--mcp-config`'s `{"mcpServers":{NAME:{"type":"sdk",…}}}`, initialize `mcpServers`), the
//! refusal of every other server type naming the server, the TypeScript SDK's
//! `sdkMcpServerManifests`, the JSON-RPC messages agentx sends through `mcp_message`
//! (`initialize`, `notifications/initialized`, `tools/list`, `tools/call`), the reading of the
//! host's `{"mcp_response": JSONRPC}` answers and the tool names offered to the model
//! (`mcp__<server>__<tool>`).
//!
//! Must never: do I/O or read a clock; accept a server type it cannot serve; quote more than
//! 64 bytes of a host-given name in an error. `mcp_servers` drives these over the broker.

use agentx_wire::json::{self, Value};

/// The MCP protocol version agentx's client asks for.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// At most this many tools are read from one server; the rest get one WARN line.
pub const MAX_TOOLS_PER_SERVER: usize = 256;

/// At most this many `tools/list` pages are read from one server.
pub const MAX_LIST_PAGES: u32 = 16;

/// The prefix of every MCP tool name (PROFILE §16).
pub const TOOL_PREFIX: &str = "mcp__";

/// Why an MCP configuration is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// Not a strict JSON object `{"mcpServers":{…}}`.
    Shape(&'static str),
    /// A server agentx cannot serve (PROFILE §16: stdio, http, sse, … are refused, naming it).
    Unsupported {
        /// The server's name, JSON-quoted, at most 64 bytes of it.
        server: String,
        /// Its `type` (`stdio` when absent), at most 64 bytes, JSON-quoted.
        kind: String,
    },
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Shape(why) => f.write_str(why),
            ConfigError::Unsupported { server, kind } => write!(
                f,
                "MCP server {server} is of type {kind}: only in-process SDK servers (type \
                 \"sdk\") are supported"
            ),
        }
    }
}

/// The SDK servers of `--mcp-config` JSON (`{"mcpServers":{NAME:{"type":"sdk",…}}}`), in
/// order. Any other server type is refused, naming the server; a file path is not read.
pub fn sdk_servers_of_config(text: &str) -> Result<Vec<String>, ConfigError> {
    let doc = json::parse(text.as_bytes()).map_err(|_| {
        ConfigError::Shape("it is not JSON {\"mcpServers\":{…}} (a file path is not read)")
    })?;
    let root = doc.root();
    let obj = root
        .as_object()
        .ok_or(ConfigError::Shape("it is not a JSON object"))?;
    let mut servers = None;
    for (name, value) in obj.iter() {
        if name.decode() == "mcpServers" {
            servers = Some(value);
        } else {
            return Err(ConfigError::Shape("only the member mcpServers is read"));
        }
    }
    match servers {
        Some(v) => sdk_servers_of_map(v),
        None => Err(ConfigError::Shape("it has no mcpServers member")),
    }
}

/// The SDK servers of an `mcpServers` map (initialize's, or `--mcp-config`'s), in order.
pub fn sdk_servers_of_map(map: Value<'_, '_>) -> Result<Vec<String>, ConfigError> {
    let obj = map
        .as_object()
        .ok_or(ConfigError::Shape("mcpServers is not an object"))?;
    let mut out = Vec::new();
    for (name, config) in obj.iter() {
        let name = name.decode().into_owned();
        let kind = match config.as_object().and_then(|c| c.get("type")) {
            None => "stdio".to_string(),
            Some(t) => match t.as_str() {
                Some(s) => s.decode().into_owned(),
                None => "(not a string)".to_string(),
            },
        };
        if kind != "sdk" {
            return Err(ConfigError::Unsupported {
                server: quoted(&name),
                kind: quoted(&kind),
            });
        }
        if name.is_empty() {
            return Err(ConfigError::Shape("an MCP server name is empty"));
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// A TypeScript manifest (`sdkMcpServerManifests[NAME]`:
/// `{"initializeResult":…,"toolsListResult":…?}`): the tools when the SDK listed them, `None`
/// when agentx must list them itself (no `toolsListResult`, or one it cannot read).
pub fn manifest_tools(manifest: Value<'_, '_>) -> Option<Vec<ListedTool>> {
    let obj = manifest.as_object()?;
    if let Some(init) = obj.get("initializeResult") {
        if !offers_tools(init) {
            return Some(Vec::new());
        }
    }
    let list = obj.get("toolsListResult")?;
    let mut result = Vec::new();
    json::write_value(&mut result, list);
    let (tools, cursor) = tools_of(std::str::from_utf8(&result).ok()?).ok()?;
    cursor.is_none().then_some(tools)
}

/// True unless an `initialize` result says the server has no tools (`capabilities` without
/// `tools`).
pub fn offers_tools(init_result: Value<'_, '_>) -> bool {
    match init_result
        .as_object()
        .and_then(|o| o.get("capabilities"))
        .and_then(|c| c.as_object())
    {
        Some(caps) => caps.get("tools").is_some_and(|t| !t.is_null()),
        None => true,
    }
}

/// The name the model calls a server's tool by (PROFILE §16).
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("{TOOL_PREFIX}{server}__{tool}")
}

fn request_head(m: &mut Vec<u8>, id: u64, method: &str) {
    m.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    json::write_u64(m, id);
    m.extend_from_slice(b",\"method\":");
    json::write_str(m, method);
}

/// `initialize` (JSON-RPC request `id`).
pub fn initialize_message(id: u64, version: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(160);
    request_head(&mut m, id, "initialize");
    m.extend_from_slice(b",\"params\":{\"protocolVersion\":");
    json::write_str(&mut m, PROTOCOL_VERSION);
    m.extend_from_slice(b",\"capabilities\":{},\"clientInfo\":{\"name\":\"agentx\",\"version\":");
    json::write_str(&mut m, version);
    m.extend_from_slice(b"}}}");
    m
}

/// `notifications/initialized` (a notification: no `id`).
pub fn initialized_message() -> Vec<u8> {
    b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}".to_vec()
}

/// `tools/list`, with the previous page's `nextCursor` when there is one.
pub fn tools_list_message(id: u64, cursor: Option<&str>) -> Vec<u8> {
    let mut m = Vec::with_capacity(96);
    request_head(&mut m, id, "tools/list");
    if let Some(c) = cursor {
        m.extend_from_slice(b",\"params\":{\"cursor\":");
        json::write_str(&mut m, c);
        m.push(b'}');
    }
    m.push(b'}');
    m
}

/// `tools/call` of `tool` (the server's own name) with `arguments` (a JSON object's text);
/// `None` when `arguments` is not one.
pub fn tools_call_message(id: u64, tool: &str, arguments: &str) -> Option<Vec<u8>> {
    let doc = json::parse(arguments.as_bytes()).ok()?;
    doc.root().as_object()?;
    let mut m = Vec::with_capacity(96 + arguments.len());
    request_head(&mut m, id, "tools/call");
    m.extend_from_slice(b",\"params\":{\"name\":");
    json::write_str(&mut m, tool);
    m.extend_from_slice(b",\"arguments\":");
    json::write_value(&mut m, doc.root());
    m.extend_from_slice(b"}}");
    Some(m)
}

/// A JSON-RPC answer as the host sent it (`{"mcp_response": …}`): its `result` (compact JSON),
/// or why it is not one (the JSON-RPC error's `message`, at most 256 bytes, or what is wrong
/// with the answer). `id`: the request's JSON-RPC id, which a response with an `id` must
/// carry (`None` for a notification, whose acknowledgement's `id` is not read).
pub fn response_result(payload: &[u8], id: Option<u64>) -> Result<String, String> {
    let doc = json::parse(payload).map_err(|_| "the answer is not JSON".to_string())?;
    let root = doc.root();
    let resp = root
        .as_object()
        .and_then(|o| o.get("mcp_response"))
        .and_then(|r| r.as_object())
        .ok_or_else(|| "the answer has no mcp_response object".to_string())?;
    if let (Some(want), Some(got)) = (id, resp.get("id").filter(|v| !v.is_null())) {
        if got.as_number().and_then(|n| n.as_u64()) != Some(want) {
            return Err("the mcp_response id does not match the request".into());
        }
    }
    if let Some(e) = resp.get("error").filter(|e| !e.is_null()) {
        let message = e
            .as_object()
            .and_then(|e| e.get("message"))
            .and_then(|m| m.as_str())
            .map(|m| cut(&m.decode(), 256).to_string())
            .unwrap_or_else(|| "MCP error".to_string());
        return Err(message);
    }
    let result = resp
        .get("result")
        .ok_or_else(|| "the mcp_response has neither result nor error".to_string())?;
    let mut out = Vec::new();
    json::write_value(&mut out, result);
    String::from_utf8(out).map_err(|_| "the mcp_response is not UTF-8".to_string())
}

/// One tool a server listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedTool {
    /// The server's own name for it.
    pub name: String,
    /// Its description (empty when none).
    pub description: String,
    /// Its `inputSchema` (compact JSON of an object).
    pub input_schema: String,
}

/// A `tools/list` result: the tools and the next page's cursor.
pub fn tools_of(result: &str) -> Result<(Vec<ListedTool>, Option<String>), String> {
    let doc = json::parse(result.as_bytes()).map_err(|_| "tools/list: not JSON".to_string())?;
    let root = doc.root();
    let obj = root
        .as_object()
        .ok_or_else(|| "tools/list: the result is not an object".to_string())?;
    let tools = obj
        .get("tools")
        .and_then(|t| t.as_array())
        .ok_or_else(|| "tools/list: no tools array".to_string())?;
    let mut out = Vec::new();
    for t in tools.iter() {
        let t = t
            .as_object()
            .ok_or_else(|| "tools/list: a tool is not an object".to_string())?;
        let name = t
            .get("name")
            .and_then(|n| n.as_str())
            .map(|n| n.decode().into_owned())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| "tools/list: a tool has no name".to_string())?;
        let description = t
            .get("description")
            .and_then(|d| d.as_str())
            .map(|d| d.decode().into_owned())
            .unwrap_or_default();
        let schema = t
            .get("inputSchema")
            .filter(|s| s.as_object().is_some())
            .ok_or_else(|| {
                format!(
                    "tools/list: tool {} has no inputSchema object",
                    quoted(&name)
                )
            })?;
        let mut input_schema = Vec::new();
        json::write_value(&mut input_schema, schema);
        out.push(ListedTool {
            name,
            description,
            input_schema: String::from_utf8(input_schema).unwrap_or_else(|_| "{}".into()),
        });
    }
    let cursor = obj
        .get("nextCursor")
        .and_then(|c| c.as_str())
        .map(|c| c.decode().into_owned());
    Ok((out, cursor))
}

/// A `tools/call` result as a `tool_result`: the text of its content blocks joined by `\n`
/// (any other block as `[<type> content]`), and `isError` (PROFILE §16: an MCP error result
/// is an `is_error` `tool_result`).
pub fn call_outcome(result: &str) -> (String, bool) {
    let Ok(doc) = json::parse(result.as_bytes()) else {
        return ("tools/call: the result is not JSON".into(), true);
    };
    let root = doc.root();
    let Some(obj) = root.as_object() else {
        return ("tools/call: the result is not an object".into(), true);
    };
    let is_error = obj
        .get("isError")
        .and_then(|b| b.as_bool())
        .unwrap_or(false);
    let mut parts = Vec::new();
    if let Some(content) = obj.get("content").and_then(|c| c.as_array()) {
        for block in content.iter() {
            let Some(b) = block.as_object() else { continue };
            let kind = b
                .get("type")
                .and_then(|t| t.as_str())
                .map(|t| t.decode().into_owned())
                .unwrap_or_default();
            match (kind.as_str(), b.get("text").and_then(|t| t.as_str())) {
                ("text", Some(t)) => parts.push(t.decode().into_owned()),
                _ => parts.push(format!("[{} content]", cut(&kind, 32))),
            }
        }
    }
    (parts.join("\n"), is_error)
}

/// `s` as a JSON string, at most 64 bytes of it.
pub(crate) fn quoted(s: &str) -> String {
    let mut q = Vec::new();
    json::write_str(&mut q, cut(s, 64));
    String::from_utf8(q).unwrap_or_default()
}

use agentx_wire::wire::responses::cut;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_mcp_config_names_sdk_servers_and_refuses_others() {
        // Python 0.2.189 `subprocess_cli.py`: SDK servers without their `instance`.
        assert_eq!(
            sdk_servers_of_config(
                r#"{"mcpServers":{"calc":{"type":"sdk","name":"calc"},"b":{"type":"sdk","name":"b"}}}"#
            ),
            Ok(vec!["calc".to_string(), "b".to_string()])
        );
        assert_eq!(sdk_servers_of_config(r#"{"mcpServers":{}}"#), Ok(vec![]));
        for (config, server, kind) in [
            (
                r#"{"mcpServers":{"files":{"command":"x"}}}"#,
                "\"files\"",
                "\"stdio\"",
            ),
            (
                r#"{"mcpServers":{"w":{"type":"http","url":"u"}}}"#,
                "\"w\"",
                "\"http\"",
            ),
            (
                r#"{"mcpServers":{"s":{"type":"sse","url":"u"}}}"#,
                "\"s\"",
                "\"sse\"",
            ),
            (
                r#"{"mcpServers":{"a":{"type":"sdk"},"s":{"type":1}}}"#,
                "\"s\"",
                "\"(not a string)\"",
            ),
        ] {
            assert_eq!(
                sdk_servers_of_config(config),
                Err(ConfigError::Unsupported {
                    server: server.into(),
                    kind: kind.into()
                }),
                "{config}"
            );
        }
        let e = sdk_servers_of_config(r#"{"mcpServers":{"files":{"type":"stdio"}}}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "MCP server \"files\" is of type \"stdio\": only in-process SDK servers (type \
             \"sdk\") are supported"
        );
        // A long name is quoted cut to 64 bytes.
        let long = "n".repeat(100);
        let e = sdk_servers_of_config(&format!(r#"{{"mcpServers":{{"{long}":{{}}}}}}"#))
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("\"{}\"", "n".repeat(64))), "{e}");
        assert!(!e.contains(&"n".repeat(65)), "{e}");
        for bad in [
            "/etc/mcp.json",
            "[]",
            r#"{"servers":{}}"#,
            r#"{"mcpServers":[]}"#,
            r#"{"mcpServers":{"":{"type":"sdk"}}}"#,
        ] {
            assert!(
                matches!(sdk_servers_of_config(bad), Err(ConfigError::Shape(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn typescript_manifests_give_tools_or_ask_for_listing() {
        let doc = json::parse(br#"{"initializeResult":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}}},"toolsListResult":{"tools":[{"name":"add","description":"Add","inputSchema":{"type":"object"}}]}}"#).unwrap();
        let tools = manifest_tools(doc.root()).unwrap();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].name, "add");
        // No toolsListResult (the SDK saw a nextCursor, or a failure): agentx lists them.
        let doc = json::parse(br#"{"initializeResult":{"capabilities":{"tools":{}}}}"#).unwrap();
        assert_eq!(manifest_tools(doc.root()), None);
        // A server without the tools capability has none.
        let doc = json::parse(br#"{"initializeResult":{"capabilities":{}}}"#).unwrap();
        assert_eq!(manifest_tools(doc.root()), Some(vec![]));
        let doc = json::parse(br#"{"toolsListResult":{"tools":[{"name":"x"}]}}"#).unwrap();
        assert_eq!(manifest_tools(doc.root()), None, "unreadable: listed again");
    }

    #[test]
    fn json_rpc_messages() {
        assert_eq!(
            String::from_utf8(initialize_message(0, "0.1.0")).unwrap(),
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agentx","version":"0.1.0"}}}"#
        );
        assert_eq!(
            String::from_utf8(initialized_message()).unwrap(),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        );
        assert_eq!(
            String::from_utf8(tools_list_message(1, None)).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#
        );
        assert_eq!(
            String::from_utf8(tools_list_message(2, Some("p2"))).unwrap(),
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"p2"}}"#
        );
        assert_eq!(
            String::from_utf8(tools_call_message(3, "add", r#"{ "a" : 1 }"#).unwrap()).unwrap(),
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}"#
        );
        assert_eq!(tools_call_message(3, "add", "[1]"), None);
    }

    #[test]
    fn answers_are_read() {
        // Python `_handle_sdk_mcp_request` / TypeScript `handleMcpControlRequest` shapes.
        let ok = br#"{"mcp_response":{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"add","description":"Add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}},{"name":"mul","inputSchema":{"type":"object"}}],"nextCursor":"p2"}}}"#;
        let result = response_result(ok, Some(1)).unwrap();
        let (tools, cursor) = tools_of(&result).unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].name, "add");
        assert_eq!(tools[0].description, "Add");
        assert_eq!(
            tools[0].input_schema,
            r#"{"type":"object","properties":{"a":{"type":"number"}}}"#
        );
        assert_eq!(tools[1].description, "");
        assert_eq!(cursor.as_deref(), Some("p2"));
        assert_eq!(
            response_result(ok, Some(2)),
            Err("the mcp_response id does not match the request".into())
        );
        // A notification's acknowledgement: any id (TypeScript sends 0, Python none).
        assert_eq!(
            response_result(
                br#"{"mcp_response":{"jsonrpc":"2.0","result":{},"id":0}}"#,
                None
            ),
            Ok("{}".into())
        );
        let err = br#"{"mcp_response":{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Server 'x' not found"}}}"#;
        assert_eq!(
            response_result(err, Some(1)),
            Err("Server 'x' not found".into())
        );
        assert!(response_result(b"{}", None).is_err());
        assert!(response_result(br#"{"mcp_response":{"jsonrpc":"2.0","id":1}}"#, Some(1)).is_err());
        assert!(tools_of(r#"{"tools":[{"name":"x"}]}"#).is_err());
        assert!(tools_of(r#"{"tools":[{"inputSchema":{}}]}"#).is_err());
    }

    #[test]
    fn call_results_become_tool_results() {
        assert_eq!(
            call_outcome(
                r#"{"content":[{"type":"text","text":"3"},{"type":"image","data":"AA=="},{"type":"text","text":"done"}]}"#
            ),
            ("3\n[image content]\ndone".to_string(), false)
        );
        assert_eq!(
            call_outcome(
                r#"{"content":[{"type":"text","text":"division by zero"}],"isError":true}"#
            ),
            ("division by zero".to_string(), true)
        );
        assert!(call_outcome("[]").1);
    }
}
