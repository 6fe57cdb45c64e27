//! The permission-mode evaluation of PROFILE §10, as a pure function: which tool calls are
//! allowed, denied or asked, the safe request `description` (PERM-021), and the rules an
//! allow decision's `updatedPermissions` adds for the rest of the process.
//!
//! Owns the four modes (`bypassPermissions` allows all; `plan` allows `Read` and denies the
//! rest with `plan mode: no changes`; `acceptEdits` allows `Read` and `Write` inside the cwd
//! and asks for the rest; `default` allows `Read` inside the cwd and asks for the rest), the
//! input checks that make an unknown tool or invalid input a prompt-free error, and rule
//! matching. Must never: run a tool, touch the file system (paths are compared lexically) or
//! start a prompt.

use crate::json::{self, Kind, Value};
use crate::wire::permission::{
    PermissionBehavior, PermissionMode, PermissionUpdate, RulesOperation,
};

/// The verdict for one tool call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Run it.
    Allow,
    /// Do not run it: a `tool_result` error with this message and a `permission_denials`
    /// entry.
    Deny(String),
    /// Open a permission prompt (the race of WIRE-PERM-001).
    Ask,
    /// Unknown tool or invalid input: a `tool_result` error, no prompt, no denial entry.
    Invalid(String),
}

/// A rule added by `updatedPermissions` (`addRules`), PERM-023.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The tool the rule is for.
    pub tool_name: String,
    /// `None` matches every use of the tool; `Some("x*")` a primary argument starting with
    /// `x`; `Some("x")` exactly `x`.
    pub rule_content: Option<String>,
    /// What a matching use gets.
    pub behavior: PermissionBehavior,
}

/// The rules in force (PROFILE §10: they apply to the rest of the process).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    rules: Vec<Rule>,
}

impl Rules {
    /// Applies the `addRules` updates of an allow decision; other update kinds change
    /// nothing in this profile (live mode changes are unavailable, PROFILE §5).
    pub fn apply(&mut self, updates: &[PermissionUpdate<'_>]) {
        for u in updates {
            if let PermissionUpdate::Rules {
                operation: RulesOperation::AddRules,
                rules,
                behavior,
                ..
            } = u
            {
                for r in rules {
                    self.rules.push(Rule {
                        tool_name: r.tool_name.to_string(),
                        rule_content: r.rule_content.as_ref().map(|c| c.to_string()),
                        behavior: *behavior,
                    });
                }
            }
        }
    }

    /// The rules, oldest first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The behavior of the first matching deny rule, else allow rule, else ask rule.
    fn matching(&self, tool: &str, primary: Option<&str>) -> Option<PermissionBehavior> {
        let hit = |b: PermissionBehavior| {
            self.rules.iter().any(|r| {
                r.behavior == b
                    && r.tool_name == tool
                    && match (&r.rule_content, primary) {
                        (None, _) => true,
                        (Some(c), Some(p)) => match c.strip_suffix('*') {
                            Some(prefix) => p.starts_with(prefix),
                            None => c == p,
                        },
                        (Some(_), None) => false,
                    }
            })
        };
        [
            PermissionBehavior::Deny,
            PermissionBehavior::Allow,
            PermissionBehavior::Ask,
        ]
        .into_iter()
        .find(|b| hit(*b))
    }
}

/// The checked input of a known tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolInput {
    /// `Read`.
    Read {
        /// The file to read.
        file_path: String,
    },
    /// `Write`.
    Write {
        /// The file to write.
        file_path: String,
    },
    /// `Bash`.
    Bash {
        /// The command.
        command: String,
    },
    /// The sandbox network request (PERM-022).
    Network {
        /// The host asked for.
        host: String,
    },
}

impl ToolInput {
    /// The argument rules match against.
    fn primary(&self) -> &str {
        match self {
            ToolInput::Read { file_path } | ToolInput::Write { file_path } => file_path,
            ToolInput::Bash { command } => command,
            ToolInput::Network { host } => host,
        }
    }
}

/// Checks a tool call's input against PROFILE §10's tool schemas.
pub fn check_input(tool: &str, input_json: &str) -> Result<ToolInput, String> {
    let doc = json::parse(input_json.as_bytes())
        .map_err(|_| "invalid tool input: not JSON".to_string())?;
    let root = doc.root();
    let obj = root
        .as_object()
        .ok_or_else(|| "invalid tool input: not an object".to_string())?;
    let allowed: &[(&str, Kind, bool)] = match tool {
        "Read" => &[
            ("file_path", Kind::String, true),
            ("offset", Kind::Number, false),
            ("limit", Kind::Number, false),
        ],
        "Write" => &[
            ("file_path", Kind::String, true),
            ("content", Kind::String, true),
        ],
        "Bash" => &[
            ("command", Kind::String, true),
            ("timeout_ms", Kind::Number, false),
        ],
        "SandboxNetworkAccess" => &[("host", Kind::String, true), ("port", Kind::Number, false)],
        _ => return Err(format!("unknown tool {}", short(tool))),
    };
    for (name, value) in obj.iter() {
        let name = name.decode();
        match allowed.iter().find(|(n, _, _)| *n == name) {
            None => {
                return Err(format!(
                    "invalid input for {tool}: unknown member {}",
                    short(&name)
                ))
            }
            Some((n, kind, _)) => {
                let null_ok = tool == "SandboxNetworkAccess" && *n == "port";
                if value.kind() != *kind && !(null_ok && value.is_null()) {
                    return Err(format!("invalid input for {tool}: {n} has the wrong type"));
                }
                if *kind == Kind::Number && !value.is_null() && !is_u64(value) {
                    return Err(format!(
                        "invalid input for {tool}: {n} is not a nonnegative integer"
                    ));
                }
            }
        }
    }
    let string = |n: &str| {
        obj.get(n)
            .and_then(|v| v.as_str())
            .map(|s| s.decode().into_owned())
    };
    for (n, _, required) in allowed {
        if *required && obj.get(n).is_none() {
            return Err(format!("invalid input for {tool}: {n} is required"));
        }
    }
    Ok(match tool {
        "Read" => ToolInput::Read {
            file_path: string("file_path").unwrap_or_default(),
        },
        "Write" => ToolInput::Write {
            file_path: string("file_path").unwrap_or_default(),
        },
        "Bash" => ToolInput::Bash {
            command: string("command").unwrap_or_default(),
        },
        _ => ToolInput::Network {
            host: string("host").unwrap_or_default(),
        },
    })
}

fn is_u64(v: Value<'_, '_>) -> bool {
    v.as_number().and_then(|n| n.as_u64()).is_some()
}

/// At most 64 bytes of an input value for a message (PROFILE §5).
fn short(s: &str) -> &str {
    cut(s, 64)
}

/// `s` cut to at most `max` bytes at a character boundary.
pub(crate) fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// True when `path` (relative paths resolve against `cwd`) lies inside `cwd`, compared
/// lexically after resolving `.` and `..`.
pub fn inside(cwd: &str, path: &str) -> bool {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{}", cwd.trim_end_matches('/'), path)
    };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    let base: Vec<&str> = cwd
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    parts.len() >= base.len() && parts[..base.len()] == base[..]
}

/// PROFILE §10 for one tool call. `input_json` is the call's input as compact JSON.
pub fn evaluate(
    mode: PermissionMode,
    rules: &Rules,
    cwd: &str,
    tool: &str,
    input_json: &str,
) -> Verdict {
    let input = match check_input(tool, input_json) {
        Ok(i) => i,
        Err(e) => return Verdict::Invalid(e),
    };
    if mode == PermissionMode::BypassPermissions {
        return Verdict::Allow;
    }
    match rules.matching(tool, Some(input.primary())) {
        Some(PermissionBehavior::Deny) => {
            return Verdict::Deny("denied by a permission rule".into())
        }
        Some(PermissionBehavior::Allow) => return Verdict::Allow,
        Some(PermissionBehavior::Ask) => return Verdict::Ask,
        None => {}
    }
    match (&input, mode) {
        (ToolInput::Read { .. }, PermissionMode::Plan) => Verdict::Allow,
        (_, PermissionMode::Plan) => Verdict::Deny("plan mode: no changes".into()),
        (ToolInput::Read { file_path }, _) if inside(cwd, file_path) => Verdict::Allow,
        (ToolInput::Write { file_path }, PermissionMode::AcceptEdits) if inside(cwd, file_path) => {
            Verdict::Allow
        }
        _ => Verdict::Ask,
    }
}

/// The request's safe `description` (PERM-021, WIRE-PERM-003): `Write <file_path>`,
/// `Read <file_path>`, `Bash: <command, first 64 bytes>`, `SandboxNetworkAccess <host>`; the
/// tool name when it cannot be built.
pub fn description(tool: &str, input_json: &str) -> String {
    match check_input(tool, input_json) {
        Ok(ToolInput::Read { file_path }) => format!("Read {file_path}"),
        Ok(ToolInput::Write { file_path }) => format!("Write {file_path}"),
        Ok(ToolInput::Bash { command }) => format!("Bash: {}", cut(&command, 64)),
        Ok(ToolInput::Network { host }) => format!("SandboxNetworkAccess {host}"),
        Err(_) => tool.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PermissionMode::*;

    const CWD: &str = "/work/p";

    #[test]
    fn modes_of_profile_10() {
        let r = Rules::default();
        let read_in = r#"{"file_path":"a.txt"}"#;
        let read_out = r#"{"file_path":"/etc/passwd"}"#;
        let write_in = r#"{"file_path":"sub/../b.txt","content":"x"}"#;
        let bash = r#"{"command":"ls"}"#;
        assert_eq!(
            evaluate(BypassPermissions, &r, CWD, "Bash", bash),
            Verdict::Allow
        );
        assert_eq!(evaluate(Plan, &r, CWD, "Read", read_out), Verdict::Allow);
        assert_eq!(
            evaluate(Plan, &r, CWD, "Write", write_in),
            Verdict::Deny("plan mode: no changes".into())
        );
        assert_eq!(
            evaluate(AcceptEdits, &r, CWD, "Write", write_in),
            Verdict::Allow
        );
        assert_eq!(evaluate(AcceptEdits, &r, CWD, "Bash", bash), Verdict::Ask);
        assert_eq!(evaluate(Default, &r, CWD, "Read", read_in), Verdict::Allow);
        assert_eq!(evaluate(Default, &r, CWD, "Read", read_out), Verdict::Ask);
        assert_eq!(evaluate(Default, &r, CWD, "Write", write_in), Verdict::Ask);
        assert_eq!(
            evaluate(
                Default,
                &r,
                CWD,
                "Write",
                r#"{"file_path":"../p2/x","content":""}"#
            ),
            Verdict::Ask
        );
    }

    #[test]
    fn unknown_tool_and_invalid_input_need_no_prompt() {
        let r = Rules::default();
        assert!(matches!(
            evaluate(Default, &r, CWD, "Fly", "{}"),
            Verdict::Invalid(_)
        ));
        assert!(matches!(
            evaluate(BypassPermissions, &r, CWD, "Read", "{}"),
            Verdict::Invalid(_)
        ));
        assert!(matches!(
            evaluate(Default, &r, CWD, "Bash", r#"{"command":1}"#),
            Verdict::Invalid(_)
        ));
        assert!(matches!(
            evaluate(Default, &r, CWD, "Bash", r#"{"command":"x","extra":1}"#),
            Verdict::Invalid(_)
        ));
    }

    #[test]
    fn add_rules_apply_for_the_rest_of_the_process() {
        let mut r = Rules::default();
        let bash = r#"{"command":"ls -l"}"#;
        assert_eq!(evaluate(Default, &r, CWD, "Bash", bash), Verdict::Ask);
        let doc = json::parse(
            br#"[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"ls*"}],"behavior":"allow","destination":"session"}]"#,
        )
        .unwrap();
        let updates: Vec<PermissionUpdate<'_>> =
            crate::wire::WireValue::decode(doc.root(), &crate::wire::Path::ROOT).unwrap();
        r.apply(&updates);
        assert_eq!(evaluate(Default, &r, CWD, "Bash", bash), Verdict::Allow);
        assert_eq!(
            evaluate(Default, &r, CWD, "Bash", r#"{"command":"rm x"}"#),
            Verdict::Ask
        );
    }

    #[test]
    fn description_is_safe_summary_else_tool_name() {
        // PERM-021 / WIRE-PERM-003.
        assert_eq!(
            description("Write", r#"{"file_path":"a","content":"x"}"#),
            "Write a"
        );
        let long = "x".repeat(100);
        assert_eq!(
            description("Bash", &format!(r#"{{"command":"{long}"}}"#)),
            format!("Bash: {}", &long[..64])
        );
        assert_eq!(description("Bash", "{}"), "Bash");
        assert_eq!(description("Nope", "{}"), "Nope");
    }
}
