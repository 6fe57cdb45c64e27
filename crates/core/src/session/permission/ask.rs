//! What a permission prompt asks (PERM-020..022, WIRE-PERM-003/004, PROFILE §10): the
//! [`Ask`] (a tool use that evaluated to ask, or the synthetic sandbox network request), its
//! safe `description` ([`describe`]: `Write <file_path>`, `Bash: <command, first 64 bytes>`,
//! else the tool name), and why an ask is refused without opening a prompt ([`AskError`]).
//!
//! Owns building the question; never decides it (the race in `super` does) and never writes a
//! record.

use std::fmt;

use agentx_wire::wire::permission::SANDBOX_NETWORK_ACCESS;
use agentx_wire::wire::{PermissionUpdate, RawJson, RawObject};

/// PROFILE §10: `Bash: <command>` keeps the first 64 bytes of the command.
pub const BASH_SUMMARY_MAX: usize = 64;

/// One permission question: a tool use that evaluated to ask.
#[derive(Clone, Debug, PartialEq)]
pub struct Ask {
    /// The tool use (PERM-020: nonempty).
    pub tool_use_id: String,
    /// The tool's name (PERM-020: nonempty).
    pub tool_name: String,
    /// The tool's input object.
    pub input: RawObject<'static>,
    /// `permission_suggestions` of the request.
    pub permission_suggestions: Option<Vec<PermissionUpdate<'static>>>,
    /// `blocked_path` of the request.
    pub blocked_path: Option<String>,
    /// `decision_reason` of the request.
    pub decision_reason: Option<String>,
    /// `agent_id` of the request.
    pub agent_id: Option<String>,
    /// The request's safe `description` when the caller has a better summary than
    /// [`describe`] (the session's PROFILE §10 summaries); `None`: [`describe`].
    pub description: Option<String>,
}

impl Ask {
    /// A tool use that needs permission.
    pub fn new(tool_use_id: &str, tool_name: &str, input: RawObject<'static>) -> Ask {
        Ask {
            tool_use_id: tool_use_id.to_owned(),
            tool_name: tool_name.to_owned(),
            input,
            permission_suggestions: None,
            blocked_path: None,
            decision_reason: None,
            agent_id: None,
            description: None,
        }
    }

    /// Uses `description` as the request's safe summary (PERM-021, WIRE-PERM-003).
    pub fn with_description(mut self, description: String) -> Ask {
        self.description = Some(description);
        self
    }

    /// The synthetic sandbox network request (PERM-022, WIRE-PERM-004): `tool_name`
    /// `SandboxNetworkAccess`, `input` `{"host": host, "port": port | null}`.
    pub fn sandbox_network(tool_use_id: &str, host: &str, port: Option<u16>) -> Ask {
        let mut bytes = Vec::with_capacity(host.len() + 24);
        bytes.extend_from_slice(b"{\"host\":");
        agentx_wire::json::write_str(&mut bytes, host);
        bytes.extend_from_slice(b",\"port\":");
        match port {
            Some(p) => agentx_wire::json::write_u64(&mut bytes, u64::from(p)),
            None => bytes.extend_from_slice(b"null"),
        }
        bytes.push(b'}');
        let input = RawJson::parse_owned(bytes)
            .map(RawObject)
            .unwrap_or_else(|_| RawObject::empty());
        Ask::new(tool_use_id, SANDBOX_NETWORK_ACCESS, input)
    }
}

/// PERM-021 / WIRE-PERM-003 / PROFILE §10: the safe summary of a tool use (`Write
/// <file_path>`, `Read <file_path>`, `Bash: <command, first 64 bytes>`), or the tool name
/// when it cannot be built.
pub fn describe(tool_name: &str, input: &RawObject<'_>) -> String {
    summary(tool_name, input).unwrap_or_else(|| tool_name.to_owned())
}

fn summary(tool_name: &str, input: &RawObject<'_>) -> Option<String> {
    let doc = input.0.document().ok()?;
    let obj = doc.root().as_object()?;
    let text = |name: &str| obj.get(name).and_then(|v| v.as_str()).map(|s| s.decode());
    match tool_name {
        "Write" | "Read" => Some(format!("{tool_name} {}", text("file_path")?)),
        "Bash" => {
            let command = text("command")?;
            let mut end = command.len().min(BASH_SUMMARY_MAX);
            while !command.is_char_boundary(end) {
                end -= 1;
            }
            Some(format!("Bash: {}", command.get(..end)?))
        }
        _ => None,
    }
}

/// Why an ask was refused without opening a prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AskError {
    /// The tool-use ID already has an open prompt (PERM-053: it settles once).
    AlreadyOpen,
    /// The tool-use ID settled recently (PERM-053).
    AlreadySettled,
    /// The tool-use ID is not a nonempty string (PERM-020).
    EmptyToolUseId,
    /// The tool name is not a nonempty string (PERM-020).
    EmptyToolName,
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::AlreadyOpen => {
                f.write_str("permission prompt already open for this tool use")
            }
            AskError::AlreadySettled => f.write_str("this tool use already settled (PERM-053)"),
            AskError::EmptyToolUseId => f.write_str("tool_use_id must be nonempty (PERM-020)"),
            AskError::EmptyToolName => f.write_str("tool_name must be nonempty (PERM-020)"),
        }
    }
}

impl std::error::Error for AskError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(s: &str) -> RawObject<'static> {
        RawObject(RawJson::parse_owned(s.as_bytes().to_vec()).unwrap())
    }

    #[test]
    fn perm_021_descriptions() {
        assert_eq!(
            describe("Write", &obj(r#"{"file_path":"a/b.txt","content":"x"}"#)),
            "Write a/b.txt"
        );
        assert_eq!(
            describe("Read", &obj(r#"{"file_path":"r.md"}"#)),
            "Read r.md"
        );
        let long = "x".repeat(100);
        assert_eq!(
            describe("Bash", &obj(&format!(r#"{{"command":"{long}"}}"#))),
            format!("Bash: {}", "x".repeat(64))
        );
        // 63 ASCII bytes then a 2-byte character: the cut stays on a boundary.
        let cmd = format!("{}é", "y".repeat(63));
        assert_eq!(
            describe("Bash", &obj(&format!(r#"{{"command":"{cmd}"}}"#))),
            format!("Bash: {}", "y".repeat(63))
        );
        // WIRE-PERM-003: the summary cannot be built: the tool name.
        assert_eq!(describe("Write", &obj(r#"{"content":"x"}"#)), "Write");
        assert_eq!(describe("Bash", &obj(r#"{"command":7}"#)), "Bash");
        assert_eq!(describe("Glob", &obj(r#"{}"#)), "Glob");
    }

    #[test]
    fn perm_022_sandbox_input() {
        let a = Ask::sandbox_network("t", "example.com", Some(443));
        assert_eq!(a.tool_name, "SandboxNetworkAccess");
        assert_eq!(
            a.input.0.as_bytes(),
            br#"{"host":"example.com","port":443}"#
        );
        let b = Ask::sandbox_network("t", "h\"", None);
        assert_eq!(b.input.0.as_bytes(), br#"{"host":"h\"","port":null}"#);
    }
}
