//! The permission-mode evaluation of PROFILE §10, as a pure function: which tool calls are
//! allowed, denied or asked, the safe request `description` (PERM-021), and the rules an
//! allow decision's `updatedPermissions` adds for the rest of the process.
//!
//! Owns the four modes (`bypassPermissions` allows all; `plan` allows `Read` and denies the
//! rest with `plan mode: no changes`; `acceptEdits` allows `Read` and `Write` inside the cwd
//! and asks for the rest; `default` allows `Read` inside the cwd and asks for the rest) with
//! PROFILE §17's per-tool extension (`Glob` and `Grep` as `Read`, `Edit` as `Write`,
//! `TodoWrite` always allowed; "inside" also on the driver's canonical paths), the
//! input checks that make an unknown tool or invalid input a prompt-free error, and rule
//! matching. Must never: run a tool, touch the file system (paths are compared lexically) or
//! start a prompt.

use crate::tools::ToolCall;
use agentx_wire::json::{self, Kind, Value};
use agentx_wire::wire::permission::{
    PermissionBehavior, PermissionMode, PermissionUpdate, RulesOperation,
};

use super::tool_rules::ToolRules;

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

/// The most distinct rules allow decisions may add (issue 46: each is kept for the process's
/// life and every tool use is matched against all of them). A rule past it is not added: that
/// use is asked again (never allowed or denied by a rule that was not kept), and the session
/// writes [`RULES_FULL`] once.
pub const MAX_RULES: usize = 1024;

/// The stderr line written the first time a rule is not added.
pub const RULES_FULL: &str =
    "agentx: permission rules: 1,024 rules are in force; further addRules are not kept";

/// The rules in force (PROFILE §10: they apply to the rest of the process).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    rules: Vec<Rule>,
    /// A rule was refused at [`MAX_RULES`] (the diagnostic is written once).
    full: bool,
}

impl Rules {
    /// Applies the `addRules` updates of an allow decision; other update kinds change
    /// nothing in this profile (live mode changes are unavailable, PROFILE §5). True the first
    /// time a rule is not kept ([`MAX_RULES`]): the caller writes [`RULES_FULL`].
    pub fn apply(&mut self, updates: &[PermissionUpdate<'_>]) -> bool {
        let was_full = self.full;
        for u in updates {
            if let PermissionUpdate::Rules {
                operation: RulesOperation::AddRules,
                rules,
                behavior,
                ..
            } = u
            {
                for r in rules {
                    let rule = Rule {
                        tool_name: r.tool_name.to_string(),
                        rule_content: r.rule_content.as_ref().map(|c| c.to_string()),
                        behavior: *behavior,
                    };
                    // A host that allows with the same rule each time adds nothing: the
                    // rules grow with distinct rules only.
                    if self.rules.contains(&rule) {
                        continue;
                    }
                    if self.rules.len() == MAX_RULES {
                        self.full = true;
                        continue;
                    }
                    self.rules.push(rule);
                }
            }
        }
        self.full && !was_full
    }

    /// The rules, oldest first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The verdict of the rules for a use of `tool` whose primary value is `primary`, if any
    /// rule matches ([`Rules::matching`]).
    fn verdict(&self, tool: &str, primary: &str) -> Option<Verdict> {
        Some(match self.matching(tool, Some(primary))? {
            PermissionBehavior::Deny => Verdict::Deny("denied by a permission rule".into()),
            PermissionBehavior::Allow => Verdict::Allow,
            PermissionBehavior::Ask => Verdict::Ask,
        })
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
    /// `Edit` (PROFILE §17: evaluated as `Write`).
    Edit {
        /// The file to edit.
        file_path: String,
    },
    /// `Glob` or `Grep` (PROFILE §17: read-only, evaluated as `Read`).
    Search {
        /// `Glob` or `Grep`.
        tool: &'static str,
        /// The pattern.
        pattern: String,
        /// The directory or file searched; `None` is the cwd.
        path: Option<String>,
    },
    /// `TodoWrite` (PROFILE §17: always allowed).
    Todo,
    /// The sandbox network request (PERM-022).
    Network {
        /// The host asked for.
        host: String,
    },
    /// A tool of an SDK MCP server (PROFILE §16, `mcp__<server>__<tool>`): any object; its
    /// server checks it against its own schema.
    Mcp,
}

impl ToolInput {
    /// The argument rules match against.
    fn primary(&self) -> &str {
        match self {
            ToolInput::Read { file_path }
            | ToolInput::Write { file_path }
            | ToolInput::Edit { file_path } => file_path,
            ToolInput::Search { path, .. } => path.as_deref().unwrap_or(""),
            ToolInput::Todo => "",
            ToolInput::Bash { command } => command,
            ToolInput::Network { host } => host,
            ToolInput::Mcp => "",
        }
    }
}

/// Checks a tool call's input against PROFILE §10's tool schemas. `Read`, `Write` and `Bash`
/// are checked by the tool runner's own grammar ([`ToolCall::parse`]: the schema `system/init`
/// advertises, ranges and nonempty strings included), so an input the tool would refuse is
/// `Invalid` here, refused without a permission prompt and with the runner's words.
pub fn check_input(tool: &str, input_json: &str) -> Result<ToolInput, String> {
    // One parse of the input: the runner's for its tools, this one's for the others.
    if crate::tools::NAMES.contains(&tool) {
        return match ToolCall::parse(tool, input_json).map_err(|e| e.to_string())? {
            ToolCall::Read { file_path, .. } => Ok(ToolInput::Read { file_path }),
            ToolCall::Write { file_path, .. } => Ok(ToolInput::Write { file_path }),
            ToolCall::Bash { command, .. } => Ok(ToolInput::Bash { command }),
            ToolCall::Edit { file_path, .. } => Ok(ToolInput::Edit { file_path }),
            ToolCall::Glob { pattern, path } => Ok(ToolInput::Search {
                tool: "Glob",
                pattern,
                path,
            }),
            ToolCall::Grep(g) => Ok(ToolInput::Search {
                tool: "Grep",
                pattern: g.pattern,
                path: g.path,
            }),
            ToolCall::TodoWrite { .. } => Ok(ToolInput::Todo),
        };
    }
    let doc = json::parse(input_json.as_bytes())
        .map_err(|_| "invalid tool input: not JSON".to_string())?;
    let root = doc.root();
    let obj = root
        .as_object()
        .ok_or_else(|| "invalid tool input: not an object".to_string())?;
    // PROFILE §16: only tools offered reach here (`evaluate` checks), so an `mcp__` name is
    // a connected server's tool.
    if tool.starts_with(super::mcp::TOOL_PREFIX) {
        return Ok(ToolInput::Mcp);
    }
    let allowed: &[(&str, Kind, bool)] = match tool {
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
    Ok(ToolInput::Network {
        host: string("host").unwrap_or_default(),
    })
}

fn is_u64(v: Value<'_, '_>) -> bool {
    v.as_number().and_then(|n| n.as_u64()).is_some()
}

/// At most 64 bytes of an input value for a message (PROFILE §5).
fn short(s: &str) -> &str {
    cut(s, 64)
}

/// `s` cut to at most `max` bytes at a character boundary (PROFILE §5, one definition).
pub(crate) use agentx_wire::wire::responses::cut;

/// True when `path` (relative paths resolve against `cwd`) lies inside `cwd`, compared
/// lexically after resolving `.` and `..`.
pub fn inside(cwd: &str, path: &str) -> bool {
    inside_any(cwd, &[], path)
}

/// True when `path` (relative paths resolve against `cwd`) lies inside `cwd` or inside one
/// of `dirs` (`--add-dir`, PROFILE §15: they count as inside the cwd), compared lexically
/// after resolving `.` and `..`.
pub fn inside_any(cwd: &str, dirs: &[String], path: &str) -> bool {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{}", cwd.trim_end_matches('/'), path)
    };
    let parts = normalized(&joined);
    std::iter::once(cwd)
        .chain(dirs.iter().map(String::as_str))
        .any(|base| {
            let base = normalized(base);
            parts.len() >= base.len() && parts[..base.len()] == base[..]
        })
}

/// The segments of an absolute path after resolving `.` and `..` lexically.
fn normalized(path: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts
}

/// What one evaluation depends on besides the call: the mode, the directories that count as
/// inside, and the command line's tool rules (PROFILE §10, §15).
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// `--permission-mode`.
    pub mode: PermissionMode,
    /// `--cwd` (absolute).
    pub cwd: &'a str,
    /// `--add-dir` (absolute): inside the cwd for the evaluation.
    pub add_dirs: &'a [String],
    /// `--allowedTools` / `--disallowedTools`.
    pub tool_rules: &'a ToolRules,
    /// The names of the tools offered (`--tools`, less the plainly disallowed ones); a call of
    /// any other tool is invalid (an unknown tool, no prompt).
    pub offered: &'a [String],
    /// The driver's canonical form of a path (PROFILE §17: symbolic links resolved), when it
    /// gave one: a path is inside only when both its lexical and its canonical forms are.
    pub resolve: Option<&'a LinkResolver>,
}

/// A driver's function from an absolute path to its canonical form (symbolic links resolved;
/// a missing tail kept as written), so the core decides "inside" without touching the file
/// system itself (PROFILE §17).
#[derive(Clone)]
pub struct LinkResolver(pub std::sync::Arc<dyn Fn(&str) -> String + Send + Sync>);

impl std::fmt::Debug for LinkResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkResolver")
    }
}

/// [`inside_any`], and with a resolver the same of the canonical forms (PROFILE §17: a link
/// inside the cwd that points out is outside).
fn inside_scope(scope: &Scope<'_>, path: &str) -> bool {
    if !inside_any(scope.cwd, scope.add_dirs, path) {
        return false;
    }
    let Some(LinkResolver(resolve)) = scope.resolve else {
        return true;
    };
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{}", scope.cwd.trim_end_matches('/'), path)
    };
    let dirs: Vec<String> = scope.add_dirs.iter().map(|d| resolve(d)).collect();
    inside_any(&resolve(scope.cwd), &dirs, &resolve(&joined))
}

/// PROFILE §10 for one tool call. `input_json` is the call's input as compact JSON.
///
/// Order: a tool not offered or an invalid input is `Invalid`; a `--disallowedTools` pattern
/// denies in every mode (PROFILE §15: options that change what the agent may do are never
/// ignored); `bypassPermissions` allows; then the rules added by allow decisions (deny, allow,
/// ask); then `--allowedTools`; then the mode.
pub fn evaluate(scope: &Scope<'_>, rules: &Rules, tool: &str, input_json: &str) -> Verdict {
    if !scope.offered.iter().any(|t| t == tool) {
        return Verdict::Invalid(format!("unknown tool {}", short(tool)));
    }
    let input = match check_input(tool, input_json) {
        Ok(i) => i,
        Err(e) => return Verdict::Invalid(e),
    };
    let primary = input.primary();
    if scope.tool_rules.denies(tool, primary) {
        return Verdict::Deny(DISALLOWED.into());
    }
    let mode = scope.mode;
    // PROFILE §17: `TodoWrite` is always allowed (plan included).
    if mode == PermissionMode::BypassPermissions || input == ToolInput::Todo {
        return Verdict::Allow;
    }
    if let Some(v) = rules.verdict(tool, primary) {
        return v;
    }
    if scope.tool_rules.allows(tool, primary) {
        return Verdict::Allow;
    }
    let inside = |p: &str| inside_scope(scope, p);
    // PROFILE §17: `Glob` and `Grep` are read-only and evaluated as `Read`; `Edit` as
    // `Write`.
    match (&input, mode) {
        (ToolInput::Read { .. } | ToolInput::Search { .. }, PermissionMode::Plan) => Verdict::Allow,
        (_, PermissionMode::Plan) => Verdict::Deny("plan mode: no changes".into()),
        (ToolInput::Read { file_path }, _) if inside(file_path) => Verdict::Allow,
        (ToolInput::Search { path, .. }, _) if inside(path.as_deref().unwrap_or(".")) => {
            Verdict::Allow
        }
        (
            ToolInput::Write { file_path } | ToolInput::Edit { file_path },
            PermissionMode::AcceptEdits,
        ) if inside(file_path) => Verdict::Allow,
        _ => Verdict::Ask,
    }
}

/// PROFILE §10 for a `SandboxNetworkAccess` request (PERM-022) to `host`, in [`evaluate`]'s
/// order: `bypassPermissions` allows; then the rules added by allow decisions (by host); then
/// the mode (`plan` denies, the others ask).
pub fn network_verdict(mode: PermissionMode, rules: &Rules, host: &str) -> Verdict {
    if mode == PermissionMode::BypassPermissions {
        return Verdict::Allow;
    }
    match rules.verdict(agentx_wire::wire::permission::SANDBOX_NETWORK_ACCESS, host) {
        Some(v) => v,
        None if mode == PermissionMode::Plan => Verdict::Deny("plan mode: no changes".into()),
        None => Verdict::Ask,
    }
}

/// The denial message of a use a `--disallowedTools` pattern covers (PROFILE §15).
pub const DISALLOWED: &str = "denied by --disallowedTools";

/// The request's safe `description` (PERM-021, WIRE-PERM-003): `Write <file_path>`,
/// `Read <file_path>`, `Edit <file_path>`, `Glob <pattern>` / `Grep <pattern>` (first 64
/// bytes), `Bash: <command, first 64 bytes>`, `SandboxNetworkAccess <host>`; the
/// tool name when it cannot be built.
pub fn description(tool: &str, input_json: &str) -> String {
    match check_input(tool, input_json) {
        Ok(ToolInput::Read { file_path }) => format!("Read {file_path}"),
        Ok(ToolInput::Write { file_path }) => format!("Write {file_path}"),
        Ok(ToolInput::Bash { command }) => format!("Bash: {}", cut(&command, 64)),
        Ok(ToolInput::Edit { file_path }) => format!("Edit {file_path}"),
        Ok(ToolInput::Search { tool, pattern, .. }) => format!("{tool} {}", cut(&pattern, 64)),
        Ok(ToolInput::Todo) => tool.to_string(),
        Ok(ToolInput::Network { host }) => format!("SandboxNetworkAccess {host}"),
        Ok(ToolInput::Mcp) => cut(tool, 128).to_string(),
        Err(_) => tool.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PermissionMode::*;

    const CWD: &str = "/work/p";

    fn offered() -> Vec<String> {
        ["Read", "Write", "Bash"].map(String::from).to_vec()
    }

    /// The standalone profile's evaluation: no add-dirs, no tool rules, every tool offered.
    fn evaluate(
        mode: PermissionMode,
        rules: &Rules,
        cwd: &str,
        tool: &str,
        input: &str,
    ) -> Verdict {
        let tool_rules = ToolRules::default();
        let offered = offered();
        let scope = Scope {
            mode,
            cwd,
            add_dirs: &[],
            tool_rules: &tool_rules,
            offered: &offered,
            resolve: None,
        };
        super::evaluate(&scope, rules, tool, input)
    }

    fn scoped(
        mode: PermissionMode,
        add_dirs: &[String],
        allowed: &str,
        disallowed: &str,
        tool: &str,
        input: &str,
    ) -> Verdict {
        let tool_rules = ToolRules {
            allowed: super::super::tool_rules::parse_rules(allowed).unwrap(),
            disallowed: super::super::tool_rules::parse_rules(disallowed).unwrap(),
        };
        let (tools, _) = super::super::tool_rules::offered(
            crate::session::default_tools(),
            None,
            &tool_rules.disallowed,
        );
        let offered: Vec<String> = tools.into_iter().map(|t| t.name).collect();
        let scope = Scope {
            mode,
            cwd: CWD,
            add_dirs,
            tool_rules: &tool_rules,
            offered: &offered,
            resolve: None,
        };
        super::evaluate(&scope, &Rules::default(), tool, input)
    }

    #[test]
    fn add_dir_counts_as_inside_the_cwd() {
        // PROFILE §15 `--add-dir`.
        let dirs = vec!["/data/shared".to_string()];
        let read = |p: &str| format!(r#"{{"file_path":"{p}"}}"#);
        assert_eq!(
            scoped(Default, &dirs, "", "", "Read", &read("/data/shared/a")),
            Verdict::Allow
        );
        assert_eq!(
            scoped(Default, &dirs, "", "", "Read", &read("/data/shared")),
            Verdict::Allow,
            "the directory itself"
        );
        assert_eq!(
            scoped(Default, &dirs, "", "", "Read", &read("/data/sharedx/a")),
            Verdict::Ask,
            "a sibling with the same prefix is outside"
        );
        assert_eq!(
            scoped(Default, &dirs, "", "", "Read", &read("/data/shared/../x")),
            Verdict::Ask
        );
        assert_eq!(
            scoped(Default, &dirs, "", "", "Read", &read("../../data/shared/y")),
            Verdict::Allow,
            "a relative path resolves against the cwd, then lands in the added dir"
        );
        assert_eq!(
            scoped(Default, &[], "", "", "Read", &read("/data/shared/a")),
            Verdict::Ask
        );
        let write = r#"{"file_path":"/data/shared/w","content":"x"}"#;
        assert_eq!(
            scoped(AcceptEdits, &dirs, "", "", "Write", write),
            Verdict::Allow
        );
        assert_eq!(scoped(Default, &dirs, "", "", "Write", write), Verdict::Ask);
    }

    #[test]
    fn allowed_and_disallowed_tools() {
        // PROFILE §15 `--allowedTools` / `--disallowedTools`.
        let bash = |c: &str| format!(r#"{{"command":"{c}"}}"#);
        assert_eq!(
            scoped(Default, &[], "", "", "Bash", &bash("ls")),
            Verdict::Ask
        );
        assert_eq!(
            scoped(Default, &[], "Bash", "", "Bash", &bash("ls")),
            Verdict::Allow
        );
        assert_eq!(
            scoped(Default, &[], "Bash(ls:*)", "", "Bash", &bash("ls -l")),
            Verdict::Allow
        );
        assert_eq!(
            scoped(Default, &[], "Bash(ls:*)", "", "Bash", &bash("ls; rm x")),
            Verdict::Ask,
            "chaining past an allowed prefix asks"
        );
        assert_eq!(
            scoped(Default, &[], "Bash(ls)", "", "Bash", &bash("ls -l")),
            Verdict::Ask
        );
        assert_eq!(
            scoped(
                Default,
                &[],
                "Write",
                "",
                "Write",
                r#"{"file_path":"/etc/x","content":""}"#
            ),
            Verdict::Allow
        );
        // A plain disallowed name removes the tool: its call is an unknown tool.
        assert_eq!(
            scoped(Default, &[], "Bash", "Bash", "Bash", &bash("ls")),
            Verdict::Invalid("unknown tool Bash".into())
        );
        assert_eq!(
            scoped(BypassPermissions, &[], "", "Bash", "Bash", &bash("ls")),
            Verdict::Invalid("unknown tool Bash".into())
        );
        // A disallowed pattern denies in every mode, over an allowed one.
        for mode in [Default, AcceptEdits, BypassPermissions] {
            assert_eq!(
                scoped(mode, &[], "Bash", "Bash(rm:*)", "Bash", &bash("rm -rf x")),
                Verdict::Deny(DISALLOWED.into())
            );
        }
        assert_eq!(
            scoped(Default, &[], "Bash", "Bash(rm:*)", "Bash", &bash("ls")),
            Verdict::Allow
        );
        // Plan mode still denies changes an allow rule does not cover; --allowedTools allows.
        assert_eq!(
            scoped(Plan, &[], "", "", "Bash", &bash("ls")),
            Verdict::Deny("plan mode: no changes".into())
        );
        assert_eq!(
            scoped(Plan, &[], "Bash(ls)", "", "Bash", &bash("ls")),
            Verdict::Allow
        );
    }

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
        // The tool runner's ranges and nonempty strings (`tools::ToolCall::parse`): what it
        // would refuse is refused here, before any prompt, in its words; at the edges of the
        // range the call is valid and asks as usual.
        for (input, invalid) in [
            (r#"{"command":"x","timeout_ms":0}"#, true),
            (r#"{"command":"x","timeout_ms":1}"#, false),
            (r#"{"command":"x","timeout_ms":600000}"#, false),
            (r#"{"command":"x","timeout_ms":600001}"#, true),
            (r#"{"command":""}"#, true),
            (r#"{"command":"x","timeout_ms":null}"#, false),
        ] {
            match evaluate(Default, &r, CWD, "Bash", input) {
                Verdict::Invalid(e) if invalid => {
                    assert!(e.starts_with("invalid input for Bash: "), "{e}")
                }
                Verdict::Ask if !invalid => {}
                other => panic!("{input}: {other:?}"),
            }
        }
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
            agentx_wire::wire::WireValue::decode(doc.root(), &agentx_wire::wire::Path::ROOT)
                .unwrap();
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

#[cfg(test)]
mod rule_growth {
    use super::*;
    use agentx_wire::wire::permission::{PermissionDestination, PermissionRule};

    fn add(tool: &str, content: Option<&str>) -> PermissionUpdate<'static> {
        PermissionUpdate::Rules {
            operation: RulesOperation::AddRules,
            rules: vec![PermissionRule {
                tool_name: tool.to_string().into(),
                rule_content: content.map(|c| c.to_string().into()),
            }],
            behavior: PermissionBehavior::Allow,
            destination: PermissionDestination::Session,
        }
    }

    /// docs/limits.md: the same rule allowed again adds nothing; distinct rules are kept.
    #[test]
    fn a_repeated_rule_is_kept_once() {
        let mut rules = Rules::default();
        for _ in 0..1000 {
            let _ = rules.apply(&[add("Bash", Some("ls:*"))]);
        }
        let _ = rules.apply(&[add("Bash", Some("git:*")), add("Read", None)]);
        assert_eq!(rules.rules().len(), 3);
    }

    /// 1,024 distinct rules are kept; the 1,025th is not, the first refusal says so once, and
    /// the use it would have allowed is asked again (no rule matches it).
    #[test]
    fn at_most_1024_rules_are_kept_and_the_first_refusal_is_reported_once() {
        let mut rules = Rules::default();
        for i in 0..MAX_RULES {
            let content = format!("cmd{i}");
            assert!(!rules.apply(&[add("Bash", Some(&content))]), "rule {i}");
        }
        assert_eq!(rules.rules().len(), MAX_RULES);
        assert!(rules.apply(&[add("Bash", Some("one-more"))]));
        assert!(!rules.apply(&[add("Bash", Some("and-another"))]));
        assert!(!rules.apply(&[add("Bash", Some("cmd7"))]), "kept already");
        assert_eq!(rules.rules().len(), MAX_RULES);
        assert_eq!(rules.verdict("Bash", "one-more"), None);
        assert_eq!(rules.verdict("Bash", "cmd7"), Some(Verdict::Allow));
    }
}
