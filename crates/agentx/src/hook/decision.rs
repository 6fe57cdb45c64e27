//! The hook's stdin line and its one-line answer (PROFILE §10).

use agentx_wire::json::{self, Kind};

/// A hook's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookDecision {
    /// Decisive allow; `updated_input` is the replacement input object as compact JSON.
    Allow {
        /// The replacement input object as compact JSON, if any.
        updated_input: Option<String>,
    },
    /// Decisive deny with its message (`"Permission denied"` when absent, as PERM-044).
    Deny {
        /// The denial message.
        message: String,
    },
    /// Not decisive: the host decides.
    Pass,
    /// The hook failed: a decisive deny with
    /// [`HOOK_FAILED`](agentx_core::session::permission::HOOK_FAILED).
    Failed,
}

impl HookDecision {
    /// Whether this answer settles the race (WIRE-PERM-001: pass-through does not).
    #[cfg(test)]
    pub fn is_decisive(&self) -> bool {
        !matches!(self, HookDecision::Pass)
    }
}

/// `{"session_id","tool_name","tool_use_id","input"}` and LF; `input` is the tool input's
/// JSON text (already validated, written canonically).
pub fn request_line(session_id: &str, tool_name: &str, tool_use_id: &str, input: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(96 + input.len());
    out.extend_from_slice(b"{\"session_id\":");
    json::write_str(&mut out, session_id);
    out.extend_from_slice(b",\"tool_name\":");
    json::write_str(&mut out, tool_name);
    out.extend_from_slice(b",\"tool_use_id\":");
    json::write_str(&mut out, tool_use_id);
    out.extend_from_slice(b",\"input\":");
    match json::parse(input.as_bytes()) {
        Ok(doc) => json::write_value(&mut out, doc.root()),
        Err(_) => out.extend_from_slice(b"{}"),
    }
    out.extend_from_slice(b"}\n");
    out
}

/// The answer from the hook's whole stdout: exactly one JSON object line (trailing
/// whitespace allowed), closed per decision. Anything else is [`HookDecision::Failed`].
pub fn parse_answer(stdout: &[u8]) -> HookDecision {
    let text = trim_ascii_ws(stdout);
    if text.is_empty() || text.contains(&b'\n') {
        return HookDecision::Failed;
    }
    let Ok(doc) = json::parse(text) else {
        return HookDecision::Failed;
    };
    let root = doc.root();
    let Some(obj) = root.as_object() else {
        return HookDecision::Failed;
    };
    let Some(decision) = obj.get("decision").and_then(|d| d.as_str()) else {
        return HookDecision::Failed;
    };
    let only = |allowed: &[&str]| obj.unknown_member(allowed).is_none();
    if decision.eq_str("allow") && only(&["decision", "updatedInput"]) {
        match obj.get("updatedInput") {
            None => HookDecision::Allow {
                updated_input: None,
            },
            Some(v) if v.kind() == Kind::Null => HookDecision::Allow {
                updated_input: None,
            },
            Some(v) if v.kind() == Kind::Object => {
                let mut out = Vec::new();
                json::write_value(&mut out, v);
                match String::from_utf8(out) {
                    Ok(s) => HookDecision::Allow {
                        updated_input: Some(s),
                    },
                    Err(_) => HookDecision::Failed,
                }
            }
            Some(_) => HookDecision::Failed,
        }
    } else if decision.eq_str("deny") && only(&["decision", "message"]) {
        match obj.get("message") {
            None => HookDecision::Deny {
                message: "Permission denied".into(),
            },
            Some(m) => match m.as_str() {
                Some(s) => HookDecision::Deny {
                    message: s.decode().into_owned(),
                },
                None => HookDecision::Failed,
            },
        }
    } else if decision.eq_str("pass") && only(&["decision"]) {
        HookDecision::Pass
    } else {
        HookDecision::Failed
    }
}

fn trim_ascii_ws(b: &[u8]) -> &[u8] {
    let ws = |c: &u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r');
    let start = b.iter().position(|c| !ws(c)).unwrap_or(b.len());
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |e| e + 1);
    &b[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_line_is_one_canonical_json_line() {
        let line = request_line("s-1", "Bash", "toolu_1", r#"{ "command" : "ls\u0041" }"#);
        assert_eq!(
            std::str::from_utf8(&line).unwrap(),
            "{\"session_id\":\"s-1\",\"tool_name\":\"Bash\",\"tool_use_id\":\"toolu_1\",\"input\":{\"command\":\"lsA\"}}\n"
        );
    }

    #[test]
    fn answers() {
        let allow = |u: Option<&str>| HookDecision::Allow {
            updated_input: u.map(str::to_owned),
        };
        for (text, want) in [
            (&br#"{"decision":"allow"}"#[..], allow(None)),
            (br#"{"decision":"allow","updatedInput":null}"#, allow(None)),
            (
                b"  {\"decision\":\"allow\",\"updatedInput\":{\"command\":\"true\"}}  \n",
                allow(Some(r#"{"command":"true"}"#)),
            ),
            (
                br#"{"decision":"deny","message":"no \"way\""}"#,
                HookDecision::Deny {
                    message: "no \"way\"".into(),
                },
            ),
            (
                br#"{"decision":"deny"}"#,
                HookDecision::Deny {
                    message: "Permission denied".into(),
                },
            ),
            (br#"{"decision":"pass"}"#, HookDecision::Pass),
            (b"", HookDecision::Failed),
            (
                b"{\"decision\":\"allow\"}\n{\"decision\":\"deny\"}",
                HookDecision::Failed,
            ),
            (br#"{"decision":"maybe"}"#, HookDecision::Failed),
            (
                br#"{"decision":"pass","message":"x"}"#,
                HookDecision::Failed,
            ),
            (
                br#"{"decision":"allow","updatedInput":[1]}"#,
                HookDecision::Failed,
            ),
            (br#"{"decision":"deny","message":3}"#, HookDecision::Failed),
            (
                br#"{"decision":"allow","decision":"deny"}"#,
                HookDecision::Failed,
            ),
            (br#"{"Decision":"allow"}"#, HookDecision::Failed),
            (b"allow", HookDecision::Failed),
        ] {
            assert_eq!(
                parse_answer(text),
                want,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert!(!HookDecision::Pass.is_decisive());
        assert!(HookDecision::Failed.is_decisive());
    }
}
