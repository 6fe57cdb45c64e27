//! MCP's JSON-RPC, the pure parts (PROFILE §16, §18): the TypeScript SDK's
//! `sdkMcpServerManifests`, the JSON-RPC messages agentx sends through `mcp_message`
//! (`initialize`, `notifications/initialized`, `tools/list`, `tools/call`), the reading of the
//! host's `{"mcp_response": JSONRPC}` answers and the tool names offered to the model
//! (`mcp__<server>__<tool>`).
//!
//! The configuration is `mcp_config`'s. Must never: do I/O or read a clock; quote more than
//! 64 bytes of a host-given name in an error. `mcp_servers` drives these over the broker, and
//! the driver's MCP client over its transports.

use agentx_wire::json::{self, Value};

/// The MCP protocol version agentx's client asks for.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// At most this many tools are read from one server; the rest get one WARN line.
pub const MAX_TOOLS_PER_SERVER: usize = 256;

/// At most this many `tools/list` pages are read from one server.
pub const MAX_LIST_PAGES: u32 = 16;

/// The prefix of every MCP tool name (PROFILE §16).
pub const TOOL_PREFIX: &str = "mcp__";

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

/// `initialize` (JSON-RPC request `id`) with `capabilities` (a JSON object's text).
pub fn initialize_message(id: u64, version: &str, capabilities: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(160);
    request_head(&mut m, id, "initialize");
    m.extend_from_slice(b",\"params\":{\"protocolVersion\":");
    json::write_str(&mut m, PROTOCOL_VERSION);
    m.extend_from_slice(b",\"capabilities\":");
    m.extend_from_slice(capabilities.as_bytes());
    m.extend_from_slice(b",\"clientInfo\":{\"name\":\"agentx\",\"version\":");
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

/// A `tools/call` result as a `tool_result` (PROFILE §18 "Tools"): its content blocks one per
/// line in order (text as it is; an image or audio block `[<type> <mimeType> <N> bytes]`; an
/// embedded resource `[resource <uri> <mimeType or unknown> <N> bytes]`; a resource link
/// `[resource_link <uri>]`; any other block `[<type> content]`), `isError`, and its
/// `structuredContent` (compact JSON) when it has one.
pub fn call_result(result: &str) -> CallResult {
    let Ok(doc) = json::parse(result.as_bytes()) else {
        return CallResult::error("tools/call: the result is not JSON");
    };
    let root = doc.root();
    let Some(obj) = root.as_object() else {
        return CallResult::error("tools/call: the result is not an object");
    };
    let is_error = obj
        .get("isError")
        .and_then(|b| b.as_bool())
        .unwrap_or(false);
    let mut parts = Vec::new();
    let text =
        |v: Option<Value<'_, '_>>| v.and_then(|t| t.as_str()).map(|t| t.decode().into_owned());
    if let Some(content) = obj.get("content").and_then(|c| c.as_array()) {
        for block in content.iter() {
            let Some(b) = block.as_object() else { continue };
            let kind = text(b.get("type")).unwrap_or_default();
            let line = match kind.as_str() {
                "text" => text(b.get("text")).unwrap_or_default(),
                "image" | "audio" => format!(
                    "[{kind} {} {} bytes]",
                    cut(
                        &text(b.get("mimeType")).unwrap_or_else(|| "unknown".into()),
                        128
                    ),
                    base64_len(text(b.get("data")).as_deref().unwrap_or(""))
                ),
                "resource" => {
                    let r = b.get("resource").and_then(|r| r.as_object());
                    let field = |k| text(r.as_ref().and_then(|r| r.get(k)));
                    let n = match (field("text"), field("blob")) {
                        (Some(t), _) => t.len(),
                        (None, Some(blob)) => base64_len(&blob),
                        (None, None) => 0,
                    };
                    format!(
                        "[resource {} {} {n} bytes]",
                        cut(&field("uri").unwrap_or_default(), 512),
                        cut(&field("mimeType").unwrap_or_else(|| "unknown".into()), 128)
                    )
                }
                "resource_link" => format!(
                    "[resource_link {}]",
                    cut(&text(b.get("uri")).unwrap_or_default(), 512)
                ),
                other => format!("[{} content]", cut(other, 32)),
            };
            parts.push(line);
        }
    }
    let structured = obj
        .get("structuredContent")
        .filter(|v| !v.is_null())
        .map(|v| {
            let mut out = Vec::new();
            json::write_value(&mut out, v);
            String::from_utf8(out).unwrap_or_default()
        });
    CallResult {
        text: parts.join("\n"),
        is_error,
        structured,
    }
}

/// A `tools/call` result read for its `tool_result`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallResult {
    /// The `tool_result` text.
    pub text: String,
    /// `isError`.
    pub is_error: bool,
    /// `structuredContent`, compact JSON.
    pub structured: Option<String>,
}

impl CallResult {
    fn error(text: &str) -> CallResult {
        CallResult {
            text: text.to_string(),
            is_error: true,
            structured: None,
        }
    }
}

/// [`call_result`]'s text and `isError` (PROFILE §16: an MCP error result is an `is_error`
/// `tool_result`).
pub fn call_outcome(result: &str) -> (String, bool) {
    let r = call_result(result);
    (r.text, r.is_error)
}

/// The decoded length of base64 text (padding and whitespace not counted).
fn base64_len(data: &str) -> usize {
    let n = data
        .bytes()
        .filter(|b| {
            b.is_ascii_alphanumeric() || *b == b'+' || *b == b'/' || *b == b'-' || *b == b'_'
        })
        .count();
    n * 3 / 4
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
            String::from_utf8(initialize_message(0, "0.1.0", "{}")).unwrap(),
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agentx","version":"0.1.0"}}}"#
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
            ("3\n[image unknown 1 bytes]\ndone".to_string(), false)
        );
        assert_eq!(
            call_outcome(
                r#"{"content":[{"type":"text","text":"division by zero"}],"isError":true}"#
            ),
            ("division by zero".to_string(), true)
        );
        assert!(call_outcome("[]").1);
        let r = call_result(
            r#"{"content":[{"type":"image","mimeType":"image/png","data":"AAECAw=="},{"type":"audio","mimeType":"audio/wav","data":"AAEC"},{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"hello"}},{"type":"resource","resource":{"uri":"file:///b","blob":"AAAA"}},{"type":"resource_link","uri":"file:///c","name":"c"}],"structuredContent":{"n":1}}"#,
        );
        assert_eq!(
            r.text,
            "[image image/png 4 bytes]\n[audio audio/wav 3 bytes]\n[resource file:///a text/plain 5 bytes]\n[resource file:///b unknown 3 bytes]\n[resource_link file:///c]"
        );
        assert_eq!(r.structured.as_deref(), Some(r#"{"n":1}"#));
    }
}
