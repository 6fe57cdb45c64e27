//! The initialize `hooks` map of the Claude Agent SDK profile (PROFILE §16), typed: which host
//! callbacks run for which event, with their matcher pattern, timeout and `onFailure`.
//!
//! Owns: [`HookMap::decode`], the closed shape of the map both SDKs send (Python
//! `claude-agent-sdk` 0.2.189 `_internal/query.py` `initialize`: `matcher`,
//! `hookCallbackIds`, `timeout`, `onFailure`; TypeScript `@anthropic-ai/claude-agent-sdk`
//! 0.3.333 adds `contextOnly`, `replacedByFrame`, `observesOnly` and `whenUnanswered`, accepted
//! and ignored, docs/sdk-options.md), the events agentx calls ([`HookEvent`]) and the names of
//! the ones it does not (one WARN line each, PROFILE §16), and [`matches_tool`], the matcher
//! pattern of a tool event.
//!
//! Must never: call a callback or decide what an answer means (the session's `hooks` module
//! does), or accept a member outside the SDKs' builders (a correlated error names it).

use crate::json::Value;

use super::decode::{take, Closed, Path, Text, WireValue};
use super::error::Error;

const RULE: &str = "PROFILE §16";

/// The longest matcher `timeout` accepted, in seconds (one day): a larger value is a
/// correlated error, so a deadline never overflows the driver's clock.
pub const MAX_HOOK_TIMEOUT_S: f64 = 86_400.0;

/// The default callback timeout (PROFILE §16: 60 s, as in both SDKs).
pub const DEFAULT_HOOK_TIMEOUT_S: f64 = 60.0;

/// The hook events agentx calls (PROFILE §16).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookEvent {
    /// Before §10's evaluation of a tool use.
    PreToolUse,
    /// After the tool ran, before its `tool_result` record.
    PostToolUse,
    /// Before the turn's first model request.
    UserPromptSubmit,
    /// After the last model request of a turn, before its result.
    Stop,
    /// Before a compaction (PROFILE §19); the matcher matches its trigger (`auto`, `manual`).
    PreCompact,
}

impl HookEvent {
    /// Every event agentx calls.
    pub const ALL: [HookEvent; 5] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::Stop,
        HookEvent::PreCompact,
    ];

    /// The wire name (`hook_event_name`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// True for the events whose matcher pattern names a tool.
    pub fn is_tool_event(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }

    /// True for the events whose matcher pattern is matched: a tool name, or `PreCompact`'s
    /// trigger (PROFILE §19).
    pub fn is_matched(self) -> bool {
        self.is_tool_event() || self == HookEvent::PreCompact
    }
}

/// What a failing callback does (PROFILE §16 `onFailure`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnFailure {
    /// The SDKs' default: a failure is no decision.
    #[default]
    Continue,
    /// A failure blocks what the event guards (per event, PROFILE §16).
    Block,
}

/// One matcher of an event: its callbacks, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct HookMatcher {
    /// `matcher`: `None` (absent or `null`) matches every tool ([`matches_tool`]).
    pub pattern: Option<String>,
    /// `hookCallbackIds`, in order.
    pub callback_ids: Vec<String>,
    /// `timeout` in seconds, for each callback of this matcher (default
    /// [`DEFAULT_HOOK_TIMEOUT_S`]).
    pub timeout_s: f64,
    /// `onFailure` (default `continue`).
    pub on_failure: OnFailure,
}

/// The typed `hooks` map: the events agentx calls, in the map's order, and the names of the
/// others (PROFILE §16: one WARN line each, never called).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct HookMap {
    /// Every event agentx calls with its matchers, in the map's order.
    pub events: Vec<(HookEvent, Vec<HookMatcher>)>,
    /// The names of the events agentx does not call, in the map's order.
    pub unsupported: Vec<String>,
}

impl HookMap {
    /// Decodes the `hooks` object (PROFILE §16): `{EVENT: [MATCHER…]}`, each MATCHER closed
    /// to the members the SDKs send.
    pub fn decode(v: Value<'_, '_>, at: &Path<'_>) -> Result<HookMap, Error> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::wrong_type(at, "an object", RULE))?;
        let mut map = HookMap::default();
        for (name, matchers) in obj.iter() {
            let name = name.decode();
            let list = matchers
                .as_array()
                .ok_or_else(|| Error::wrong_type(at, "an array of matchers per event", RULE))?;
            let mut decoded = Vec::new();
            for (i, m) in list.iter().enumerate() {
                decoded.push(decode_matcher(m, &at.index(i))?);
            }
            match HookEvent::from_name(&name) {
                Some(event) => match map.events.iter_mut().find(|(e, _)| *e == event) {
                    Some((_, ms)) => ms.extend(decoded),
                    None => map.events.push((event, decoded)),
                },
                None => map.unsupported.push(name.into_owned()),
            }
        }
        Ok(map)
    }

    /// True when at least one callback of an event agentx calls is registered (PROFILE §16
    /// `hooks_applied`).
    pub fn registers_callbacks(&self) -> bool {
        self.events
            .iter()
            .any(|(_, ms)| ms.iter().any(|m| !m.callback_ids.is_empty()))
    }

    /// The matchers of `event`, in the map's order.
    pub fn matchers(&self, event: HookEvent) -> &[HookMatcher] {
        self.events
            .iter()
            .find(|(e, _)| *e == event)
            .map_or(&[], |(_, ms)| ms.as_slice())
    }
}

fn decode_matcher(v: Value<'_, '_>, at: &Path<'_>) -> Result<HookMatcher, Error> {
    let obj = v
        .as_object()
        .ok_or_else(|| Error::wrong_type(at, "a matcher object", RULE))?;
    const NAMES: [&str; 8] = [
        "matcher",
        "hookCallbackIds",
        "timeout",
        "onFailure",
        // TypeScript 0.3.333's members: accepted, ignored (docs/sdk-options.md).
        "contextOnly",
        "replacedByFrame",
        "observesOnly",
        "whenUnanswered",
    ];
    let mut s = [None; 8];
    take(obj, &NAMES, &mut s, Closed::Yes(RULE), at)?;
    let present = |i: usize| s[i].filter(|x: &Value<'_, '_>| !x.is_null());
    let pattern = match present(0) {
        Some(p) => Some(Text::decode(p, &at.key("matcher"))?.into_owned()),
        None => None,
    };
    let ids_at = at.key("hookCallbackIds");
    let ids = s[1].ok_or_else(|| Error::missing(&ids_at, RULE))?;
    let ids = ids
        .as_array()
        .ok_or_else(|| Error::wrong_type(&ids_at, "an array of callback IDs", RULE))?;
    let mut callback_ids = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let id = Text::decode(id, &ids_at.index(i))?;
        if id.is_empty() {
            return Err(Error::invalid(
                &ids_at.index(i),
                "a nonempty callback ID",
                RULE,
            ));
        }
        callback_ids.push(id.into_owned());
    }
    let timeout_s = match present(2) {
        Some(t) => {
            let t_at = at.key("timeout");
            let t = f64::decode(t, &t_at)?;
            if !(t > 0.0 && t <= MAX_HOOK_TIMEOUT_S) {
                return Err(Error::invalid(
                    &t_at,
                    "a number of seconds above 0 and at most 86400",
                    RULE,
                ));
            }
            t
        }
        None => DEFAULT_HOOK_TIMEOUT_S,
    };
    let on_failure = match present(3) {
        Some(f) => {
            let f_at = at.key("onFailure");
            match &*Text::decode(f, &f_at)? {
                "continue" => OnFailure::Continue,
                "block" => OnFailure::Block,
                _ => return Err(Error::invalid(&f_at, "\"continue\" or \"block\"", RULE)),
            }
        }
        None => OnFailure::Continue,
    };
    for (i, name) in NAMES.iter().enumerate().skip(4).take(3) {
        if let Some(b) = present(i) {
            let _ = bool::decode(b, &at.key(name))?;
        }
    }
    Ok(HookMatcher {
        pattern,
        callback_ids,
        timeout_s,
        on_failure,
    })
}

/// PROFILE §16 matcher of a tool event: absent, `null`, `""` or `"*"` match every tool;
/// otherwise the pattern is one tool name or several separated by `|`, each compared exactly
/// (other regular-expression syntax is compared literally; docs/sdk-options.md).
pub fn matches_tool(pattern: Option<&str>, tool_name: &str) -> bool {
    match pattern {
        None | Some("") | Some("*") => true,
        Some(p) => p.split('|').any(|alt| alt.trim() == tool_name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(s: &str) -> Result<HookMap, Error> {
        let doc = crate::json::parse(s.as_bytes()).unwrap();
        HookMap::decode(doc.root(), &Path::ROOT.key("hooks"))
    }

    #[test]
    fn python_and_typescript_maps_decode() {
        // Python 0.2.189: matcher, hookCallbackIds, timeout?, onFailure?.
        let m = decode(
            r#"{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0","hook_1"],"timeout":5,"onFailure":"block"}],"Stop":[{"matcher":null,"hookCallbackIds":["hook_2"]}]}"#,
        )
        .unwrap();
        assert_eq!(m.events.len(), 2);
        let pre = &m.matchers(HookEvent::PreToolUse)[0];
        assert_eq!(pre.pattern.as_deref(), Some("Bash"));
        assert_eq!(pre.callback_ids, ["hook_0", "hook_1"]);
        assert_eq!(pre.timeout_s, 5.0);
        assert_eq!(pre.on_failure, OnFailure::Block);
        let stop = &m.matchers(HookEvent::Stop)[0];
        assert_eq!(stop.pattern, None);
        assert_eq!(stop.timeout_s, DEFAULT_HOOK_TIMEOUT_S);
        assert_eq!(stop.on_failure, OnFailure::Continue);
        assert!(m.registers_callbacks());
        // TypeScript 0.3.333's extra members are accepted (and `null` reads as absent).
        let ts = decode(
            r#"{"PostToolUse":[{"matcher":"Read","hookCallbackIds":["hook_0"],"timeout":null,"onFailure":null,"contextOnly":true,"replacedByFrame":false,"observesOnly":null,"whenUnanswered":{"any":1}}],"SessionStart":[{"hookCallbackIds":["hook_1"]}]}"#,
        )
        .unwrap();
        assert_eq!(ts.unsupported, ["SessionStart"]);
        assert_eq!(ts.matchers(HookEvent::PostToolUse).len(), 1);
        assert!(ts.matchers(HookEvent::PreToolUse).is_empty());
        assert!(!decode("{}").unwrap().registers_callbacks());
    }

    #[test]
    fn malformed_maps_are_errors_naming_the_member() {
        for (s, path) in [
            (r#"[]"#, "hooks"),
            (r#"{"PreToolUse":{}}"#, "hooks"),
            (r#"{"PreToolUse":[1]}"#, "hooks[0]"),
            (r#"{"PreToolUse":[{"matcher":"x"}]}"#, "hookCallbackIds"),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[""]}]}"#,
                "hookCallbackIds[0]",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[1]}]}"#,
                "hookCallbackIds[0]",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[],"matcher":3}]}"#,
                "matcher",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[],"timeout":0}]}"#,
                "timeout",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[],"timeout":-1}]}"#,
                "timeout",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[],"timeout":86400.5}]}"#,
                "timeout",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[],"timeout":"5"}]}"#,
                "timeout",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[],"onFailure":"stop"}]}"#,
                "onFailure",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[],"contextOnly":1}]}"#,
                "contextOnly",
            ),
            (
                r#"{"PreToolUse":[{"hookCallbackIds":[],"bogus":1}]}"#,
                "hooks[0]",
            ),
            // An event agentx does not call is still type-checked.
            (
                r#"{"Notification":[{"hookCallbackIds":7}]}"#,
                "hookCallbackIds",
            ),
        ] {
            let e = decode(s).unwrap_err();
            assert!(e.path().contains(path), "{s}: {} at {}", e, e.path());
        }
        // The edge: exactly one day is accepted.
        let m = decode(r#"{"PreToolUse":[{"hookCallbackIds":["h"],"timeout":86400}]}"#).unwrap();
        assert_eq!(m.matchers(HookEvent::PreToolUse)[0].timeout_s, 86_400.0);
    }

    #[test]
    fn tool_patterns() {
        assert!(matches_tool(None, "Bash"));
        assert!(matches_tool(Some(""), "Bash"));
        assert!(matches_tool(Some("*"), "Read"));
        assert!(matches_tool(Some("Bash"), "Bash"));
        assert!(!matches_tool(Some("Bash"), "Read"));
        assert!(matches_tool(Some("Read|Write"), "Write"));
        assert!(!matches_tool(Some("Read|Write"), "Bash"));
        assert!(!matches_tool(Some("Ba.*"), "Bash"));
    }
}
