//! The input dialect of the Claude Agent SDK profile (PROFILE §15, `--verbose`): what the two
//! SDKs send that the standalone profile refuses, decoded as typed values.
//!
//! Owns: [`decode_sdk_line`], the SDK profile's line decoder. It differs from
//! [`InputRecord::decode_line`] in exactly two places: a `user` record's `session_id` may be any
//! string (the SDKs send `""` and `"default"`; it is ignored and decodes as absent), and an
//! `initialize` control request accepts the members the SDKs' initialize builders can send
//! (Python `claude-agent-sdk` 0.2.189 `_internal/query.py`, TypeScript
//! `@anthropic-ai/claude-agent-sdk` 0.3.333 `buildInitializeRequest`), each typed
//! ([`SdkInitialize`]); every other member is refused as in the standalone profile.
//!
//! Must never: be used in the standalone profile (its strictness stays), or decide what an
//! accepted member does (the session does: [`SdkInitialize::refusal`] only names what the
//! profile cannot honour yet).

use crate::json::{Object, Parser, Value};

use super::decode::{member, req, take, Closed, IntoOwned, Path, Text, WireValue};
use super::error::Error;
use super::grammar::NonEmpty;
use super::raw::{RawJson, RawObject};
use super::record::InputRecord;
use super::sdk_hooks::HookMap;
use super::user::UserRecord;
use super::Direction;

/// One input line of the SDK profile. Every record takes the `Record` path, so it is not
/// boxed (no allocation per line); the rare `initialize` is.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum SdkInput<'a> {
    /// Any record, decoded as in the standalone profile (except `user`'s `session_id`).
    Record(InputRecord<'a>),
    /// `initialize` with the SDKs' members.
    Initialize {
        /// The request's `request_id`.
        request_id: NonEmpty<'a>,
        /// Its members.
        init: Box<SdkInitialize<'a>>,
    },
}

impl SdkInput<'_> {
    /// The owned form.
    pub fn into_owned(self) -> SdkInput<'static> {
        match self {
            SdkInput::Record(r) => SdkInput::Record(r.into_owned()),
            SdkInput::Initialize { request_id, init } => SdkInput::Initialize {
                request_id: request_id.into_owned(),
                init: Box::new(init.into_owned()),
            },
        }
    }
}

/// Parses and decodes one line of the SDK profile (PROFILE §15) with a reused parser.
pub fn decode_sdk_line<'a>(line: &'a [u8], parser: &mut Parser) -> Result<SdkInput<'a>, Error> {
    let v = parser.parse(line).map_err(Error::json)?;
    let obj = v.as_object().ok_or_else(Error::not_an_object)?;
    let ty = member(obj, "type")
        .and_then(|t| t.as_str())
        .map(|t| t.decode());
    match ty.as_deref() {
        Some("user") => {
            UserRecord::decode_members_any_session_id(obj, Direction::Input, &Path::ROOT)
                .map(|u| SdkInput::Record(InputRecord::User(u)))
        }
        Some("control_request") if is_initialize(obj) => decode_initialize(obj),
        _ => InputRecord::decode(v).map(SdkInput::Record),
    }
}

fn is_initialize(obj: Object<'_, '_>) -> bool {
    member(obj, "request")
        .and_then(|r| r.as_object())
        .and_then(|r| member(r, "subtype"))
        .and_then(|s| s.as_str())
        .is_some_and(|s| s.decode() == "initialize")
}

const RULE: &str = "PROFILE §15";

fn decode_initialize<'a>(obj: Object<'_, 'a>) -> Result<SdkInput<'a>, Error> {
    let at = Path::ROOT;
    let mut s: [Option<Value<'_, 'a>>; 3] = [None; 3];
    take(
        obj,
        &["request_id", "request", "type"],
        &mut s,
        Closed::No,
        &at,
    )?;
    // Identity first, so later failures are correlated (as for every control request).
    let request_id: NonEmpty<'a> = req(s[0], &at.key("request_id"), "control operations")?;
    let corr = |e: Error| e.correlated(request_id.as_str());
    take(
        obj,
        &["request_id", "request", "type"],
        &mut [None, None, None],
        Closed::Yes("WIRE-021"),
        &at,
    )
    .map_err(corr)?;
    let req_at = at.key("request");
    let request = s[1]
        .and_then(|v| v.as_object())
        .ok_or_else(|| corr(Error::wrong_type(&req_at, "an object", RULE)))?;
    let init = SdkInitialize::decode_members(request, &req_at).map_err(corr)?;
    Ok(SdkInput::Initialize {
        request_id,
        init: Box::new(init),
    })
}

/// A JSON object as decoded, `null` read as absent.
fn object_or_null<'a>(
    v: Option<Value<'_, 'a>>,
    at: &Path<'_>,
) -> Result<Option<RawObject<'a>>, Error> {
    match v {
        Some(v) if !v.is_null() => RawObject::decode(v, at).map(Some),
        _ => Ok(None),
    }
}

fn typed<'a, T: WireValue<'a>>(
    v: Option<Value<'_, 'a>>,
    at: &Path<'_>,
) -> Result<Option<T>, Error> {
    match v {
        Some(v) => Option::<T>::decode(v, at),
        None => Ok(None),
    }
}

/// The `initialize` members of the SDKs (PROFILE §15, §16), typed; `null` reads as absent
/// (Python always sends `"hooks": null`). The members agentx does nothing with are checked
/// for their type and named in [`SdkInitialize::ignored`].
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SdkInitialize<'a> {
    /// `hooks`: the matcher map of hook callbacks, typed (PROFILE §16).
    pub hooks: Option<HookMap>,
    /// `sdkMcpServers`: the in-process MCP server names (§16).
    pub sdk_mcp_servers: Option<Vec<Text<'a>>>,
    /// `sdkMcpServerConfigs`: per-server settings of in-process servers.
    pub sdk_mcp_server_configs: Option<RawObject<'a>>,
    /// `sdkMcpServerManifests`: each in-process server's tools list.
    pub sdk_mcp_server_manifests: Option<RawObject<'a>>,
    /// `jsonSchema`: structured output (§16); the session compiles it.
    pub json_schema: Option<RawJson<'a>>,
    /// `systemPrompt`: a string (one part) or an array of strings; replaces `--system-prompt`
    /// (§15). Empty parts are dropped and the rest joined by a blank line (§16).
    pub system_prompt: Option<Vec<Text<'a>>>,
    /// `appendSystemPrompt`: joined after the system prompt by a blank line.
    pub append_system_prompt: Option<Text<'a>>,
    /// `mcpServers`: MCP server configurations (TypeScript's default delivery).
    pub mcp_servers: Option<RawObject<'a>>,
    /// `agents`: agent definitions.
    pub agents: Option<RawObject<'a>>,
    /// `skills`: a skill allowlist.
    pub skills: Option<Vec<Text<'a>>>,
    /// `plugins`: plugins to load.
    pub plugins: Option<Vec<RawJson<'a>>>,
    /// `managedSettings`: managed policy settings.
    pub managed_settings: Option<RawJson<'a>>,
    /// `settings`: Claude Code settings (a path or an object).
    pub settings: Option<RawJson<'a>>,
    /// `disallowedTools`: tool rules sent through initialize.
    pub disallowed_tools: Option<Vec<Text<'a>>>,
    /// `toolAliases`: tool renames.
    pub tool_aliases: Option<RawObject<'a>>,
    /// `excludeDynamicSections`: holds either way (agentx's system message has no dynamic
    /// sections).
    pub exclude_dynamic_sections: Option<bool>,
    /// The members present (not `null`) that agentx accepts and ignores, in table order: the
    /// session writes a WARN line for each.
    pub ignored: Vec<&'static str>,
}

/// How an ignored member is checked.
#[derive(Clone, Copy)]
enum Kind {
    Bool,
    Str,
    StrArray,
    Array,
    Any,
}

/// The members the SDKs can send that agentx accepts (type-checked) and ignores: prompt
/// presentation, subagent and UI affordances. None changes what the agent may do.
const IGNORED: &[(&str, Kind)] = &[
    ("planModeInstructions", Kind::Str),
    ("systemPromptSnapshot", Kind::Any),
    ("appendSubagentSystemPrompt", Kind::Str),
    ("codeRunningMcpTools", Kind::Array),
    ("title", Kind::Str),
    ("webSearchIsolationExemptMcpServers", Kind::StrArray),
    ("promptSuggestions", Kind::Bool),
    ("agentProgressSummaries", Kind::Bool),
    ("forwardSubagentText", Kind::Bool),
    ("supportedDialogKinds", Kind::Array),
    ("perTaskStopAffordance", Kind::Bool),
    ("rapidFollowupPreempt", Kind::Bool),
    ("forwardNestedSubagentToolCalls", Kind::Bool),
    ("offersBypassSwitchBack", Kind::Bool),
    ("keepsBypassHeld", Kind::Bool),
    ("workspaceTrust", Kind::Any),
];

/// The typed members, in [`SdkInitialize`]'s field order.
const TYPED: [&str; 16] = [
    "hooks",
    "sdkMcpServers",
    "sdkMcpServerConfigs",
    "sdkMcpServerManifests",
    "jsonSchema",
    "systemPrompt",
    "appendSystemPrompt",
    "mcpServers",
    "agents",
    "skills",
    "plugins",
    "managedSettings",
    "settings",
    "disallowedTools",
    "toolAliases",
    "excludeDynamicSections",
];

impl<'a> SdkInitialize<'a> {
    /// Decodes the members of an `initialize` request object (`subtype` matched). Closed: a
    /// member outside the SDKs' builders is an error (WIRE-021).
    pub fn decode_members(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let mut names: Vec<&str> = Vec::with_capacity(1 + TYPED.len() + IGNORED.len());
        names.push("subtype");
        names.extend(TYPED);
        names.extend(IGNORED.iter().map(|(n, _)| *n));
        let mut s: Vec<Option<Value<'_, 'a>>> = vec![None; names.len()];
        take(obj, &names, &mut s, Closed::Yes(RULE), at)?;
        let v = |name: &str| names.iter().position(|n| *n == name).and_then(|i| s[i]);
        let k = |name: &'static str| at.key(name);
        let system_prompt = match v("systemPrompt") {
            Some(p) if p.as_str().is_some() => Some(vec![Text::decode(p, &k("systemPrompt"))?]),
            other => typed::<Vec<Text<'a>>>(other, &k("systemPrompt"))?,
        };
        let mut ignored = Vec::new();
        for &(name, kind) in IGNORED {
            let Some(value) = v(name).filter(|x| !x.is_null()) else {
                continue;
            };
            let at = k(name);
            match kind {
                Kind::Bool => drop(bool::decode(value, &at)?),
                Kind::Str => drop(Text::decode(value, &at)?),
                Kind::StrArray => drop(Vec::<Text<'_>>::decode(value, &at)?),
                Kind::Array => drop(Vec::<RawJson<'_>>::decode(value, &at)?),
                Kind::Any => {}
            }
            ignored.push(name);
        }
        Ok(SdkInitialize {
            hooks: match v("hooks") {
                Some(h) if !h.is_null() => Some(HookMap::decode(h, &k("hooks"))?),
                _ => None,
            },
            sdk_mcp_servers: typed(v("sdkMcpServers"), &k("sdkMcpServers"))?,
            sdk_mcp_server_configs: object_or_null(
                v("sdkMcpServerConfigs"),
                &k("sdkMcpServerConfigs"),
            )?,
            sdk_mcp_server_manifests: object_or_null(
                v("sdkMcpServerManifests"),
                &k("sdkMcpServerManifests"),
            )?,
            json_schema: typed(v("jsonSchema"), &k("jsonSchema"))?,
            system_prompt,
            append_system_prompt: typed(v("appendSystemPrompt"), &k("appendSystemPrompt"))?,
            mcp_servers: object_or_null(v("mcpServers"), &k("mcpServers"))?,
            agents: object_or_null(v("agents"), &k("agents"))?,
            skills: typed(v("skills"), &k("skills"))?,
            plugins: typed(v("plugins"), &k("plugins"))?,
            managed_settings: typed(v("managedSettings"), &k("managedSettings"))?,
            settings: typed(v("settings"), &k("settings"))?,
            disallowed_tools: typed(v("disallowedTools"), &k("disallowedTools"))?,
            tool_aliases: object_or_null(v("toolAliases"), &k("toolAliases"))?,
            exclude_dynamic_sections: typed(
                v("excludeDynamicSections"),
                &k("excludeDynamicSections"),
            )?,
            ignored,
        })
    }

    /// Why this request cannot be honoured yet, naming the member (the correlated error of
    /// PROFILE §15; the MCP members are checked by the session, §16; `hooks` are registered and
    /// `jsonSchema` honoured, PROFILE §16: only a schema that does not compile is refused, by
    /// the session). An empty or `null` value is accepted.
    pub fn refusal(&self) -> Option<String> {
        let nonempty = |o: &Option<RawObject<'_>>| o.as_ref().and_then(first_member);
        // `sdkMcpServers`, `sdkMcpServerManifests` and `mcpServers` are the session's
        // (PROFILE §16: it refuses any server but an in-process SDK one, naming it).
        if nonempty(&self.agents).is_some() {
            return Some("initialize.agents: agent definitions are not supported".into());
        }
        if self.skills.as_ref().is_some_and(|v| !v.is_empty()) {
            return Some("initialize.skills: skills are not supported".into());
        }
        if self.plugins.as_ref().is_some_and(|v| !v.is_empty()) {
            return Some("initialize.plugins: plugins are not supported".into());
        }
        if self.managed_settings.is_some() {
            return Some("initialize.managedSettings: managed settings are not supported".into());
        }
        if self.settings.is_some() {
            return Some(
                "initialize.settings: Claude Code settings are not read (agentx reads \
                 settings.json in AgentX home)"
                    .into(),
            );
        }
        if self
            .disallowed_tools
            .as_ref()
            .is_some_and(|v| !v.is_empty())
        {
            return Some(
                "initialize.disallowedTools: tool rules are read from --disallowedTools only"
                    .into(),
            );
        }
        if nonempty(&self.tool_aliases).is_some() {
            return Some("initialize.toolAliases: tool aliases are not supported".into());
        }
        None
    }

    /// The owned form.
    pub fn into_owned(self) -> SdkInitialize<'static> {
        fn v<T: IntoOwned>(o: Option<T>) -> Option<T::Owned> {
            o.map(IntoOwned::into_owned)
        }
        fn texts(o: Option<Vec<Text<'_>>>) -> Option<Vec<Text<'static>>> {
            o.map(|v| v.into_iter().map(IntoOwned::into_owned).collect())
        }
        SdkInitialize {
            hooks: self.hooks,
            sdk_mcp_servers: texts(self.sdk_mcp_servers),
            sdk_mcp_server_configs: v(self.sdk_mcp_server_configs),
            sdk_mcp_server_manifests: v(self.sdk_mcp_server_manifests),
            json_schema: v(self.json_schema),
            system_prompt: texts(self.system_prompt),
            append_system_prompt: v(self.append_system_prompt),
            mcp_servers: v(self.mcp_servers),
            agents: v(self.agents),
            skills: texts(self.skills),
            plugins: self
                .plugins
                .map(|p| p.into_iter().map(IntoOwned::into_owned).collect()),
            managed_settings: v(self.managed_settings),
            settings: v(self.settings),
            disallowed_tools: texts(self.disallowed_tools),
            tool_aliases: v(self.tool_aliases),
            exclude_dynamic_sections: self.exclude_dynamic_sections,
            ignored: self.ignored,
        }
    }
}

/// The first member name of an object, if any.
fn first_member(o: &RawObject<'_>) -> Option<String> {
    let doc = o.0.document().ok()?;
    let obj = doc.root().as_object()?;
    let first = obj
        .iter()
        .next()
        .map(|(name, _)| name.decode().into_owned());
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(line: &str) -> Result<SdkInput<'static>, Error> {
        let mut p = Parser::default();
        decode_sdk_line(line.as_bytes(), &mut p).map(SdkInput::into_owned)
    }

    fn init(line: &str) -> SdkInitialize<'static> {
        match decode(line) {
            Ok(SdkInput::Initialize { init, .. }) => *init,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn python_and_typescript_initialize_requests_decode() {
        // Python 0.2.189 always sends `hooks: null`.
        let py = init(
            r#"{"type":"control_request","request_id":"req_1","request":{"subtype":"initialize","hooks":null}}"#,
        );
        assert_eq!(py, SdkInitialize::default());
        assert_eq!(py.refusal(), None);
        // TypeScript 0.3.333 sends `systemPrompt: [""]` by default.
        let ts = init(
            r#"{"request_id":"x","type":"control_request","request":{"subtype":"initialize","systemPrompt":[""]}}"#,
        );
        assert_eq!(ts.system_prompt, Some(vec![Text::from("")]));
        let s = init(
            r#"{"type":"control_request","request_id":"r","request":{"subtype":"initialize","systemPrompt":"be brief","appendSystemPrompt":"and kind","mcpServers":{},"hooks":{},"agents":{},"skills":[],"title":"t","promptSuggestions":true,"excludeDynamicSections":true}}"#,
        );
        assert_eq!(s.system_prompt, Some(vec![Text::from("be brief")]));
        assert_eq!(s.append_system_prompt.as_deref(), Some("and kind"));
        assert_eq!(s.ignored, ["title", "promptSuggestions"]);
        assert!(s.mcp_servers.is_some());
        assert_eq!(s.refusal(), None);
    }

    #[test]
    fn members_the_profile_cannot_honour_are_named() {
        // The MCP members are the session's to check (PROFILE §16).
        for request in [
            r#""sdkMcpServers":["calc"]"#,
            r#""mcpServers":{"files":{"type":"stdio","command":"x"}}"#,
        ] {
            let line = format!(
                r#"{{"type":"control_request","request_id":"r","request":{{"subtype":"initialize",{request}}}}}"#
            );
            assert_eq!(init(&line).refusal(), None, "{request}");
        }
        let line = r#"{"type":"control_request","request_id":"r","request":{"subtype":"initialize","agents":{"a":{"description":"d","prompt":"p"}}}}"#;
        assert_eq!(
            init(line).refusal().as_deref(),
            Some("initialize.agents: agent definitions are not supported")
        );
    }

    #[test]
    fn hooks_are_typed_and_registered_not_refused() {
        // PROFILE §16: a non-null `hooks` map is registered (no refusal names it any more).
        let s = init(
            r#"{"type":"control_request","request_id":"r","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"],"timeout":3}]}}}"#,
        );
        let hooks = s.hooks.as_ref().unwrap();
        assert!(hooks.registers_callbacks());
        assert_eq!(s.refusal(), None);
        // A malformed matcher is a correlated error naming the member.
        let e = decode(
            r#"{"type":"control_request","request_id":"r9","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash"}]}}}"#,
        )
        .unwrap_err();
        assert_eq!(e.correlation(), Some("r9"));
        assert!(e.path().contains("hookCallbackIds"), "{}", e.path());
    }

    #[test]
    fn unknown_or_mistyped_members_are_correlated_errors() {
        for request in [
            r#""bogus":1"#,
            r#""systemPrompt":[1]"#,
            r#""hooks":[]"#,
            r#""promptSuggestions":"yes""#,
        ] {
            let line = format!(
                r#"{{"type":"control_request","request_id":"r7","request":{{"subtype":"initialize",{request}}}}}"#
            );
            let e = decode(&line).unwrap_err();
            assert_eq!(e.correlation(), Some("r7"), "{request}");
        }
    }

    #[test]
    fn user_session_id_may_be_any_string_and_is_ignored() {
        for sid in [r#""""#, r#""default""#, r#""not-a-uuid""#] {
            let line = format!(
                r#"{{"type":"user","session_id":{sid},"message":{{"role":"user","content":"hi"}},"parent_tool_use_id":null}}"#
            );
            match decode(&line) {
                Ok(SdkInput::Record(InputRecord::User(u))) => assert_eq!(u.session_id, None),
                other => panic!("{sid}: {other:?}"),
            }
        }
        // Still a string.
        let line = r#"{"type":"user","session_id":7,"message":{"role":"user","content":"hi"},"parent_tool_use_id":null}"#;
        assert!(decode(line).is_err());
        // Other records are the standalone profile's.
        assert!(matches!(
            decode(r#"{"type":"keep_alive"}"#),
            Ok(SdkInput::Record(InputRecord::KeepAlive))
        ));
    }
}
