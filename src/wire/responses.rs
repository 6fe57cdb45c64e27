//! Success payloads of the control operations other than `initialize` (see `initialize.rs`)
//! and `can_use_tool` (`PermissionDecision` in `permission.rs`), and the fixed control error
//! strings of PROFILE §5.
//!
//! A `control_response` keeps its payload as validated JSON because the schema depends on
//! the waiter (WIRE-009); these types are what the waiter decodes it into
//! ([`decode_payload`]) and what the agent encodes when it answers. Payloads are open (the
//! reference controls evolve; members they do not list are ignored), except the elicitation
//! answer whose `action` is a closed set. Never dispatches.

use crate::json::Value;

use super::decode::{Closed, IntoOwned, Path, Text, WireValue};
use super::error::Error;
use super::initialize::SlashCommand;
use super::raw::{RawJson, RawObject};
use super::system_init::{McpServerStatus, PluginDescriptor};
use super::table::{wire_enum, wire_struct};

/// PROFILE §5: a diagnostic echoes at most this many bytes of any input value.
pub const MAX_ECHO_BYTES: usize = 64;

/// `s` cut to at most `max` bytes at a character boundary: the one bounded echo that every
/// diagnostic of PROFILE §5 uses (the session, the tools, the CLIs, the host).
pub fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// PROFILE §5: the correlated error for an undefined control subtype,
/// `unsupported control request "<subtype>"`, with at most 64 bytes of the subtype spelled as
/// a JSON string (so a quote or a control character in it stays visible and unambiguous).
/// agentx and the host client both answer with this text.
pub fn unsupported_control_request(subtype: &str) -> String {
    let mut quoted = Vec::with_capacity(subtype.len().min(MAX_ECHO_BYTES) + 2);
    crate::json::write_str(&mut quoted, cut(subtype, MAX_ECHO_BYTES));
    let mut s = String::with_capacity(quoted.len() + 28);
    s.push_str("unsupported control request ");
    // write_str writes valid UTF-8 (a JSON string of a `&str`).
    s.push_str(&String::from_utf8_lossy(&quoted));
    s
}

/// PROFILE §5: `set_model`'s correlated error.
pub const SET_MODEL_ERROR: &str =
    "provider and model are fixed for this process; restart with --provider <id>";
/// PROFILE §5: `set_permission_mode`'s correlated error.
pub const SET_PERMISSION_MODE_ERROR: &str =
    "live permission-mode changes are unavailable; start a new session with --permission-mode";
/// PROFILE §5: `set_max_thinking_tokens`'s correlated error.
pub const SET_MAX_THINKING_TOKENS_ERROR: &str =
    "reasoning effort is declared by the provider; it is not a thinking-token budget";
/// PROFILE §5: a control still pending at input EOF (WIRE-008).
pub const CONTROL_STREAM_CLOSED: &str = "control stream closed";

/// Decodes a success payload kept by a `control_response` into its typed form.
pub fn decode_payload<'r, T: WireValue<'r>>(raw: &'r RawJson<'_>) -> Result<T, Error> {
    let doc = raw.document().map_err(Error::json)?;
    let root: Value<'_, 'r> = doc.root();
    T::decode(root, &Path::ROOT.key("response"))
}

/// An object of `V`s keyed by name, in document order (`mcp_set_servers`' `errors`,
/// `get_settings`' `effective`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ObjectMap<'a, V>(pub Vec<(Text<'a>, V)>);

impl<'a, V: WireValue<'a>> WireValue<'a> for ObjectMap<'a, V> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        decode_entries(v, at, "control operations").map(ObjectMap)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        encode_entries(&self.0, out)
    }
}

/// An object's members as `(name, V)` in document order (`ObjectMap`, `modelUsage`).
pub(crate) fn decode_entries<'a, V: WireValue<'a>>(
    v: Value<'_, 'a>,
    at: &Path<'_>,
    rule: &'static str,
) -> Result<Vec<(Text<'a>, V)>, Error> {
    let obj = v
        .as_object()
        .ok_or_else(|| Error::wrong_type(at, "an object", rule))?;
    let entry_at = at.key("*");
    let mut entries = Vec::with_capacity(obj.len());
    for (name, value) in obj.iter() {
        entries.push((name.decode(), V::decode(value, &entry_at)?));
    }
    Ok(entries)
}

/// `{"name":value,...}` in the entries' order.
pub(crate) fn encode_entries<'a, V: WireValue<'a>>(entries: &[(Text<'a>, V)], out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (name, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        crate::json::write_str(out, name);
        out.push(b':');
        value.encode(out);
    }
    out.push(b'}');
}

impl<V: IntoOwned> IntoOwned for ObjectMap<'_, V> {
    type Owned = ObjectMap<'static, V::Owned>;
    fn into_owned(self) -> Self::Owned {
        ObjectMap(
            self.0
                .into_iter()
                .map(|(k, v)| (IntoOwned::into_owned(k), v.into_owned()))
                .collect(),
        )
    }
}

wire_struct! {
    /// `mcp_status`: current MCP server statuses.
    pub struct McpStatusResponse<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        mcp_servers: Vec<McpServerStatus<'a>> = "mcpServers" => req,
    }
}

wire_struct! {
    /// One context-usage category.
    pub struct ContextCategory<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        name: Text<'a> = "name" => req,
        tokens: u64 = "tokens" => req,
        color: Text<'a> = "color" => req,
        is_deferred: Option<bool> = "isDeferred" => opt,
    }
}

wire_struct! {
    /// `get_context_usage`: categories, tokens, colors/deferred flags, totals, maximum and
    /// display grid data.
    pub struct ContextUsageResponse<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        categories: Vec<ContextCategory<'a>> = "categories" => req,
        total_tokens: u64 = "totalTokens" => req,
        /// PROFILE §19: `null` when the provider declares no `context_window`.
        max_tokens: Option<u64> = "maxTokens" => nul,
        raw_max_tokens: Option<u64> = "rawMaxTokens" => opt,
        /// PROFILE §19: `null` without a window.
        percentage: Option<f64> = "percentage" => nul,
        grid_rows: Option<RawJson<'a>> = "gridRows" => opt,
        model: Option<Text<'a>> = "model" => opt,
    }
}

wire_struct! {
    /// `rewind_files`: can-rewind, optional error/files/insertions/deletions.
    pub struct RewindFilesResponse<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        can_rewind: bool = "canRewind" => req,
        error: Option<Text<'a>> = "error" => opt,
        files_changed: Option<Vec<Text<'a>>> = "filesChanged" => opt,
        insertions: Option<u64> = "insertions" => opt,
        deletions: Option<u64> = "deletions" => opt,
    }
}

wire_struct! {
    /// `cancel_async_message`: `cancelled` true/false.
    pub struct CancelAsyncMessageResponse {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        cancelled: bool = "cancelled" => req,
    }
}

wire_struct! {
    /// `mcp_set_servers`: added, removed and per-server errors.
    pub struct McpSetServersResponse<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        added: Vec<Text<'a>> = "added" => req,
        removed: Vec<Text<'a>> = "removed" => req,
        /// Per-server errors, by server name.
        errors: ObjectMap<'a, Text<'a>> = "errors" => req,
    }
}

wire_struct! {
    /// `reload_plugins`: refreshed commands, agents, plugins, MCP statuses and error count.
    pub struct ReloadPluginsResponse<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        commands: Vec<SlashCommand<'a>> = "commands" => req,
        agents: Vec<RawJson<'a>> = "agents" => req,
        plugins: Vec<PluginDescriptor<'a>> = "plugins" => req,
        mcp_servers: Vec<McpServerStatus<'a>> = "mcpServers" => req,
        error_count: u64 = "error_count" => req,
    }
}

wire_struct! {
    /// One raw settings source, low to high priority.
    pub struct SettingsSource<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        /// `user`, `project`, `local`, `flag` or `policy`.
        source: Text<'a> = "source" => req,
        settings: RawObject<'a> = "settings" => req,
    }
}

wire_struct! {
    /// Runtime-applied model/effort, which may differ from the disk merge.
    pub struct AppliedSettings<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        model: Option<Text<'a>> = "model" => opt,
        effort: Option<Text<'a>> = "effort" => opt,
    }
}

wire_struct! {
    /// `get_settings`: effective merge, ordered raw sources, optional runtime-applied
    /// model/effort.
    pub struct GetSettingsResponse<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: [],
        effective: ObjectMap<'a, RawJson<'a>> = "effective" => req,
        sources: Vec<SettingsSource<'a>> = "sources" => req,
        applied: Option<AppliedSettings<'a>> = "applied" => opt,
    }
}

wire_enum! {
    /// An elicitation's outcome; a failure resolves as `cancel`.
    pub enum ElicitationAction : "accept, decline or cancel", "control operations" {
        Accept = "accept",
        Decline = "decline",
        Cancel = "cancel",
    }
}

wire_struct! {
    /// `elicitation`: action accept/decline/cancel, optional content.
    pub struct ElicitationResponse<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: [],
        action: ElicitationAction = "action" => req,
        content: Option<RawObject<'a>> = "content" => opt,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<'a, T: WireValue<'a> + PartialEq + std::fmt::Debug>(raw: &'a RawJson<'a>) -> T {
        let v: T = decode_payload(raw).unwrap_or_else(|e| panic!("{e}"));
        let mut out = Vec::new();
        v.encode(&mut out);
        assert_eq!(out, raw.as_bytes(), "declared order is canonical");
        v
    }

    #[test]
    fn payloads_decode_and_encode_canonically() {
        let cases: &[&[u8]] = &[
            br#"{"mcpServers":[{"name":"s","status":"connected"}]}"#,
            br#"{"categories":[{"name":"System prompt","tokens":3000,"color":"gray","isDeferred":false}],"totalTokens":3000,"maxTokens":200000,"percentage":1.5,"gridRows":[[1]],"model":"m"}"#,
            br#"{"canRewind":true,"filesChanged":["a.rs"],"insertions":3,"deletions":1}"#,
            br#"{"cancelled":false}"#,
            br#"{"added":["a"],"removed":[],"errors":{"b":"failed"}}"#,
            br#"{"commands":[],"agents":[],"plugins":[{"name":"p","path":"/p"}],"mcpServers":[],"error_count":0}"#,
            br#"{"effective":{"model":"m"},"sources":[{"source":"user","settings":{}},{"source":"flag","settings":{"model":"m"}}],"applied":{"model":"m","effort":"high"}}"#,
            br#"{"action":"accept","content":{"name":"x"}}"#,
        ];
        let raws: Vec<RawJson<'_>> = cases.iter().map(|c| RawJson::parse(c).unwrap()).collect();
        assert!(
            round_trip::<McpStatusResponse<'_>>(&raws[0])
                .mcp_servers
                .len()
                == 1
        );
        assert_eq!(
            round_trip::<ContextUsageResponse<'_>>(&raws[1]).max_tokens,
            Some(200000)
        );
        assert!(round_trip::<RewindFilesResponse<'_>>(&raws[2]).can_rewind);
        assert!(!round_trip::<CancelAsyncMessageResponse>(&raws[3]).cancelled);
        assert_eq!(
            round_trip::<McpSetServersResponse<'_>>(&raws[4]).added,
            ["a"]
        );
        assert_eq!(
            round_trip::<ReloadPluginsResponse<'_>>(&raws[5]).error_count,
            0
        );
        assert_eq!(
            round_trip::<GetSettingsResponse<'_>>(&raws[6])
                .sources
                .len(),
            2
        );
        assert_eq!(
            round_trip::<ElicitationResponse<'_>>(&raws[7]).action,
            ElicitationAction::Accept
        );
    }

    #[test]
    fn payload_rejections_name_the_path() {
        let cases: &[(&[u8], &str)] = &[
            (br#"{"cancelled":"no"}"#, "response.cancelled"),
            (br#"{"action":"maybe"}"#, "response.action"),
            (br#"{"action":"cancel","reason":"x"}"#, "response"),
            (
                br#"{"canRewind":true,"insertions":-1}"#,
                "response.insertions",
            ),
            (
                br#"{"mcpServers":[{"name":"s"}]}"#,
                "response.mcpServers[0].status",
            ),
        ];
        for (bytes, path) in cases {
            let raw = RawJson::parse(bytes).unwrap();
            let e = match path.contains("cancelled") {
                true => decode_payload::<CancelAsyncMessageResponse>(&raw).unwrap_err(),
                false if path.contains("insertions") => {
                    decode_payload::<RewindFilesResponse<'_>>(&raw).unwrap_err()
                }
                false if path.contains("mcpServers") => {
                    decode_payload::<McpStatusResponse<'_>>(&raw).unwrap_err()
                }
                false => decode_payload::<ElicitationResponse<'_>>(&raw).unwrap_err(),
            };
            assert_eq!(e.path(), *path, "{e}");
        }
    }

    #[test]
    fn profile_5_strings() {
        assert_eq!(
            unsupported_control_request("set_provider"),
            "unsupported control request \"set_provider\""
        );
        let long = "x".repeat(100);
        assert_eq!(
            unsupported_control_request(&long).len(),
            "unsupported control request \"\"".len() + 64
        );
        assert!(SET_MODEL_ERROR.contains("--provider <id>"));
    }
}
