//! What one SDK hook callback answered (PROFILE §16), as a pure function of the answer's JSON:
//! [`parse`] reads the members agentx acts on and ignores unknown ones; a value agentx rejects
//! makes the answer malformed (the matcher's `onFailure` then decides, never an allow).
//!
//! Owns: the answer vocabulary (`continue`/`stopReason`, `decision` `block`/`approve` with
//! `reason`, `hookSpecificOutput.permissionDecision` allow/deny/ask/defer,
//! `permissionDecisionReason`, `updatedInput`, `additionalContext`, `{"async":true}`).
//! Must never: decide how answers of several callbacks combine or what an event does with
//! them (`session::sdk_hooks` does).

use agentx_wire::json::{self, Object, Value};

/// `hookSpecificOutput.permissionDecision` (PreToolUse).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Permission {
    Allow,
    Deny,
    Ask,
    /// `defer`: no decision.
    Defer,
}

/// The top-level `decision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TopDecision {
    Block,
    /// Deprecated: allows (PreToolUse).
    Approve,
}

/// One callback's answer. `Default` is no decision (`{}` or `{"async":true}`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Answer {
    /// `continue: false`: the turn ends before its next model request, with `stopReason`.
    pub(crate) halt: Option<String>,
    pub(crate) decision: Option<TopDecision>,
    pub(crate) reason: Option<String>,
    pub(crate) permission: Option<Permission>,
    pub(crate) permission_reason: Option<String>,
    /// `updatedInput`: compact JSON of an object.
    pub(crate) updated_input: Option<String>,
    pub(crate) context: Option<String>,
}

/// Why an answer is malformed (said in the WARN line; never the answer's own text).
pub(crate) type Malformed = &'static str;

/// Reads one callback answer (the `hook_callback` success payload).
pub(crate) fn parse(payload: Option<&[u8]>) -> Result<Answer, Malformed> {
    let bytes = payload.ok_or("no answer payload")?;
    let doc = json::parse(bytes).map_err(|_| "not JSON")?;
    let obj = doc.root().as_object().ok_or("not an object")?;
    // `{"async": true}` is no decision (PROFILE §16): nothing else of it is read.
    if let Some(v) = present(obj, "async") {
        match v.as_bool() {
            Some(true) => return Ok(Answer::default()),
            Some(false) => {}
            None => return Err("async is not a boolean"),
        }
    }
    let mut a = Answer::default();
    let cont = match present(obj, "continue") {
        Some(v) => v.as_bool().ok_or("continue is not a boolean")?,
        None => true,
    };
    let stop_reason = string(obj, "stopReason")?;
    if !cont {
        a.halt = Some(stop_reason.unwrap_or_default());
    }
    a.decision = match string(obj, "decision")?.as_deref() {
        None => None,
        Some("block") => Some(TopDecision::Block),
        Some("approve") => Some(TopDecision::Approve),
        Some(_) => return Err("decision is not \"block\" or \"approve\""),
    };
    a.reason = string(obj, "reason")?;
    if let Some(h) = present(obj, "hookSpecificOutput") {
        let h = h.as_object().ok_or("hookSpecificOutput is not an object")?;
        a.permission = match string(h, "permissionDecision")?.as_deref() {
            None => None,
            Some("allow") => Some(Permission::Allow),
            Some("deny") => Some(Permission::Deny),
            Some("ask") => Some(Permission::Ask),
            Some("defer") => Some(Permission::Defer),
            Some(_) => return Err("unknown permissionDecision"),
        };
        a.permission_reason = string(h, "permissionDecisionReason")?;
        if let Some(u) = present(h, "updatedInput") {
            if u.as_object().is_none() {
                return Err("updatedInput is not an object");
            }
            let mut out = Vec::new();
            json::write_value(&mut out, u);
            a.updated_input = Some(String::from_utf8(out).map_err(|_| "not UTF-8")?);
        }
        a.context = string(h, "additionalContext")?;
    }
    Ok(a)
}

/// A member that is present and not `null`.
fn present<'d, 'a>(obj: Object<'d, 'a>, name: &str) -> Option<Value<'d, 'a>> {
    obj.get(name).filter(|v| !v.is_null())
}

fn string(obj: Object<'_, '_>, name: &'static str) -> Result<Option<String>, Malformed> {
    match present(obj, name) {
        Some(v) => v
            .as_str()
            .map(|s| Some(s.decode().into_owned()))
            .ok_or("a member that must be a string is not one"),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Answer, Malformed> {
        parse(Some(s.as_bytes()))
    }

    #[test]
    fn answers_read_what_agentx_acts_on() {
        assert_eq!(p("{}"), Ok(Answer::default()));
        // Unknown keys are ignored (PROFILE §16).
        assert_eq!(
            p(r#"{"systemMessage":"x","suppressOutput":true,"bogus":[1]}"#),
            Ok(Answer::default())
        );
        // `{"async": true}` is no decision, whatever else it holds.
        assert_eq!(
            p(r#"{"async":true,"asyncTimeout":5,"decision":"block"}"#),
            Ok(Answer::default())
        );
        let a = p(r#"{"continue":false,"stopReason":"enough","decision":"block","reason":"no","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"why","updatedInput":{"b":1,"a":[true]},"additionalContext":"ctx"}}"#).unwrap();
        assert_eq!(a.halt.as_deref(), Some("enough"));
        assert_eq!(a.decision, Some(TopDecision::Block));
        assert_eq!(a.reason.as_deref(), Some("no"));
        assert_eq!(a.permission, Some(Permission::Deny));
        assert_eq!(a.permission_reason.as_deref(), Some("why"));
        assert_eq!(a.updated_input.as_deref(), Some(r#"{"b":1,"a":[true]}"#));
        assert_eq!(a.context.as_deref(), Some("ctx"));
        // `continue: false` without a stopReason: an empty result text.
        assert_eq!(
            p(r#"{"continue":false}"#).unwrap().halt.as_deref(),
            Some("")
        );
        assert_eq!(p(r#"{"continue":true}"#).unwrap().halt, None);
        // null reads as absent.
        assert_eq!(
            p(r#"{"decision":null,"reason":null,"hookSpecificOutput":null,"continue":null}"#),
            Ok(Answer::default())
        );
        for (s, d) in [
            (
                r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#,
                Permission::Allow,
            ),
            (
                r#"{"hookSpecificOutput":{"permissionDecision":"ask"}}"#,
                Permission::Ask,
            ),
            (
                r#"{"hookSpecificOutput":{"permissionDecision":"defer"}}"#,
                Permission::Defer,
            ),
        ] {
            assert_eq!(p(s).unwrap().permission, Some(d));
        }
        assert_eq!(
            p(r#"{"decision":"approve"}"#).unwrap().decision,
            Some(TopDecision::Approve)
        );
    }

    #[test]
    fn values_agentx_rejects_make_the_answer_malformed() {
        assert!(parse(None).is_err());
        for s in [
            "[]",
            "1",
            "null",
            r#""block""#,
            r#"{"async":"yes"}"#,
            r#"{"continue":"no"}"#,
            r#"{"stopReason":1,"continue":false}"#,
            r#"{"decision":"allow"}"#,
            r#"{"reason":true}"#,
            r#"{"hookSpecificOutput":[]}"#,
            r#"{"hookSpecificOutput":{"permissionDecision":"maybe"}}"#,
            r#"{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":"x"}}"#,
            r#"{"hookSpecificOutput":{"updatedInput":[1]}}"#,
            r#"{"hookSpecificOutput":{"additionalContext":{}}}"#,
            r#"{"hookSpecificOutput":{"permissionDecisionReason":2}}"#,
        ] {
            assert!(p(s).is_err(), "{s}");
        }
    }
}
