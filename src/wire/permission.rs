//! The SDK permission wire catalog (PROFILE §4, PERM-020..053): the `can_use_tool` request,
//! permission updates, and the host's decision.
//!
//! Owns: the exact closed request of PERM-020 (with the PERM-022 sandbox-network input
//! shape), the permission-update union of PERM-023, and the decision parser of
//! PERM-040..048 and 052 with the PERM-047 aliases (`updated_input`, `updated_permissions`,
//! `tool_use_id`), which are distinct members from their canonical names and lose to them
//! when both appear. Encoding always writes canonical names. Never decides a race or settles a
//! tool-use ID (that is `control`/`session`), and never does I/O.

use crate::json::{Object, Value};

use super::decode::{name_is, object, opt, take, Closed, IntoOwned, Obj, Path, Text, WireValue};
use super::error::Error;
use super::grammar::NonEmpty;
use super::raw::RawObject;
use super::table::{wire_enum, wire_struct};

wire_enum! {
    /// A rule's behaviour in a permission update (PERM-023).
    pub enum PermissionBehavior : "\"allow\", \"deny\" or \"ask\"", "PERM-023" {
        Allow = "allow",
        Deny = "deny",
        Ask = "ask",
    }
}

wire_enum! {
    /// Where a permission update is stored (PERM-023).
    pub enum PermissionDestination : "userSettings, projectSettings, localSettings, session or cliArg", "PERM-023" {
        UserSettings = "userSettings",
        ProjectSettings = "projectSettings",
        LocalSettings = "localSettings",
        Session = "session",
        CliArg = "cliArg",
    }
}

wire_enum! {
    /// A permission mode (PROFILE §2 `--permission-mode`).
    pub enum PermissionMode : "default, acceptEdits, plan or bypassPermissions", "PERM-023" {
        Default = "default",
        AcceptEdits = "acceptEdits",
        Plan = "plan",
        BypassPermissions = "bypassPermissions",
    }
}

wire_enum! {
    /// The rule operations of PERM-023.
    pub enum RulesOperation : "addRules, replaceRules or removeRules", "PERM-023" {
        AddRules = "addRules",
        ReplaceRules = "replaceRules",
        RemoveRules = "removeRules",
    }
}

wire_enum! {
    /// The directory operations of PERM-023.
    pub enum DirectoriesOperation : "addDirectories or removeDirectories", "PERM-023" {
        AddDirectories = "addDirectories",
        RemoveDirectories = "removeDirectories",
    }
}

wire_struct! {
    /// `{"toolName": s, "ruleContent"?: s}` (PERM-023).
    pub struct PermissionRule<'a> {
        closed: Closed::Yes("PERM-023"),
        rule: "PERM-023",
        skip: [],
        tool_name: Text<'a> = "toolName" => req,
        rule_content: Option<Text<'a>> = "ruleContent" => opt,
    }
}

/// One permission update (PERM-023), closed per variant. Canonical order: `type`, then the
/// members as PERM-023 lists them, `destination` last.
#[derive(Clone, Debug, PartialEq)]
pub enum PermissionUpdate<'a> {
    /// `addRules`, `replaceRules` or `removeRules`.
    Rules {
        /// Which rule operation.
        operation: RulesOperation,
        /// The rules, in order.
        rules: Vec<PermissionRule<'a>>,
        /// `allow`, `deny` or `ask`.
        behavior: PermissionBehavior,
        /// Where the update is stored.
        destination: PermissionDestination,
    },
    /// `setMode`.
    SetMode {
        /// The new permission mode.
        mode: PermissionMode,
        /// Where the update is stored.
        destination: PermissionDestination,
    },
    /// `addDirectories` or `removeDirectories`.
    Directories {
        /// Which directory operation.
        operation: DirectoriesOperation,
        /// The directories, in order.
        directories: Vec<Text<'a>>,
        /// Where the update is stored.
        destination: PermissionDestination,
    },
}

impl<'a> WireValue<'a> for PermissionUpdate<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        const RULE: &str = "PERM-023";
        let obj = object(v, at, RULE)?;
        let ty_at = at.key("type");
        let ty = match super::decode::member(obj, "type") {
            Some(t) => t
                .as_str()
                .ok_or_else(|| Error::wrong_type(&ty_at, "a string", RULE))?,
            None => return Err(Error::missing(&ty_at, RULE)),
        };
        let closed = Closed::Yes(RULE);
        let dest_at = at.key("destination");
        if let Some(operation) = RulesOperation::ALL
            .iter()
            .find(|o| name_is(&ty, o.as_str()))
        {
            let mut s: [Option<Value<'_, 'a>>; 4] = [None; 4];
            take(
                obj,
                &["rules", "behavior", "destination", "type"],
                &mut s,
                closed,
                at,
            )?;
            return Ok(PermissionUpdate::Rules {
                operation: *operation,
                rules: super::decode::req(s[0], &at.key("rules"), RULE)?,
                behavior: super::decode::req(s[1], &at.key("behavior"), RULE)?,
                destination: super::decode::req(s[2], &dest_at, RULE)?,
            });
        }
        if name_is(&ty, "setMode") {
            let mut s: [Option<Value<'_, 'a>>; 3] = [None; 3];
            take(obj, &["mode", "destination", "type"], &mut s, closed, at)?;
            return Ok(PermissionUpdate::SetMode {
                mode: super::decode::req(s[0], &at.key("mode"), RULE)?,
                destination: super::decode::req(s[1], &dest_at, RULE)?,
            });
        }
        if let Some(operation) = DirectoriesOperation::ALL
            .iter()
            .find(|o| name_is(&ty, o.as_str()))
        {
            let mut s: [Option<Value<'_, 'a>>; 3] = [None; 3];
            take(
                obj,
                &["directories", "destination", "type"],
                &mut s,
                closed,
                at,
            )?;
            return Ok(PermissionUpdate::Directories {
                operation: *operation,
                directories: super::decode::req(s[0], &at.key("directories"), RULE)?,
                destination: super::decode::req(s[1], &dest_at, RULE)?,
            });
        }
        Err(Error::invalid(&ty_at, "a PERM-023 update type", RULE))
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        match self {
            PermissionUpdate::Rules {
                operation,
                rules,
                behavior,
                destination,
            } => {
                operation.encode(w.key("\"type\":"));
                rules.encode(w.key("\"rules\":"));
                behavior.encode(w.key("\"behavior\":"));
                destination.encode(w.key("\"destination\":"));
            }
            PermissionUpdate::SetMode { mode, destination } => {
                w.constant("\"type\":\"setMode\"");
                mode.encode(w.key("\"mode\":"));
                destination.encode(w.key("\"destination\":"));
            }
            PermissionUpdate::Directories {
                operation,
                directories,
                destination,
            } => {
                operation.encode(w.key("\"type\":"));
                directories.encode(w.key("\"directories\":"));
                destination.encode(w.key("\"destination\":"));
            }
        }
        w.end();
    }
}

impl IntoOwned for PermissionUpdate<'_> {
    type Owned = PermissionUpdate<'static>;
    fn into_owned(self) -> PermissionUpdate<'static> {
        match self {
            PermissionUpdate::Rules {
                operation,
                rules,
                behavior,
                destination,
            } => PermissionUpdate::Rules {
                operation,
                rules: rules.into_owned(),
                behavior,
                destination,
            },
            PermissionUpdate::SetMode { mode, destination } => {
                PermissionUpdate::SetMode { mode, destination }
            }
            PermissionUpdate::Directories {
                operation,
                directories,
                destination,
            } => PermissionUpdate::Directories {
                operation,
                directories: directories.into_owned(),
                destination,
            },
        }
    }
}

wire_struct! {
    /// The `can_use_tool` request (PERM-020), agent → host, closed. Canonical order as
    /// declared here.
    pub struct CanUseTool<'a> {
        closed: Closed::Yes("PERM-020"),
        rule: "PERM-020",
        skip: ["subtype"],
        tool_name: NonEmpty<'a> = "tool_name" => req,
        input: RawObject<'a> = "input" => req,
        tool_use_id: NonEmpty<'a> = "tool_use_id" => req,
        permission_suggestions: Option<Vec<PermissionUpdate<'a>>> = "permission_suggestions" => opt,
        /// Absent, `null` (`Some(None)`) or a string.
        blocked_path: Option<Option<Text<'a>>> = "blocked_path" => opt,
        decision_reason: Option<Option<Text<'a>>> = "decision_reason" => opt,
        title: Option<Text<'a>> = "title" => opt,
        display_name: Option<Text<'a>> = "display_name" => opt,
        /// The safe tool summary, or the tool name when the summary failed (PERM-021).
        description: Option<Text<'a>> = "description" => opt,
        agent_id: Option<Text<'a>> = "agent_id" => opt,
    }
}

/// PERM-022: the sandbox network request's tool name.
pub const SANDBOX_NETWORK_ACCESS: &str = "SandboxNetworkAccess";

impl<'a> CanUseTool<'a> {
    /// Decodes the request and checks the PERM-022 input shape of `SandboxNetworkAccess`.
    pub(crate) fn decode_checked(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let req = CanUseTool::decode_members(obj, at)?;
        if req.tool_name.as_str() == SANDBOX_NETWORK_ACCESS {
            check_sandbox_input(obj, &at.key("input"))?;
        }
        Ok(req)
    }
}

/// `{"host": string, "port": integer|null}`, closed (PERM-022).
fn check_sandbox_input(obj: Object<'_, '_>, at: &Path<'_>) -> Result<(), Error> {
    const RULE: &str = "PERM-022";
    let Some(input) = super::decode::member(obj, "input").and_then(|v| v.as_object()) else {
        return Err(Error::wrong_type(at, "an object", RULE));
    };
    let mut s: [Option<Value<'_, '_>>; 2] = [None; 2];
    take(input, &["host", "port"], &mut s, Closed::Yes(RULE), at)?;
    let _host: Text<'_> = super::decode::req(s[0], &at.key("host"), RULE)?;
    let port_at = at.key("port");
    let _port: Option<u64> = super::decode::req(s[1], &port_at, RULE)?;
    if _port.is_some_and(|p| p > 65535) {
        return Err(Error::invalid(&port_at, "a port 0..=65535 or null", RULE));
    }
    Ok(())
}

/// PERM-044: the message of a deny that omits one.
pub const DEFAULT_DENY_MESSAGE: &str = "Permission denied";

/// The host's decision: the `response` of a success `control_response` to `can_use_tool`
/// (PERM-040). Encoded with canonical names: `behavior`, then `updatedInput`,
/// `updatedPermissions`, `toolUseID` (allow) or `message`, `interrupt`, `toolUseID` (deny).
#[derive(Clone, Debug, PartialEq)]
pub enum PermissionDecision<'a> {
    /// `behavior: "allow"`.
    Allow {
        /// PERM-042: `None` (absent or `null`) keeps the original input.
        updated_input: Option<RawObject<'a>>,
        /// PERM-043: `null` is absent.
        updated_permissions: Option<Vec<PermissionUpdate<'a>>>,
        /// PERM-046: equals the request's `tool_use_id` when present.
        tool_use_id: Option<Text<'a>>,
    },
    /// `behavior: "deny"`.
    Deny {
        /// PERM-044: `"Permission denied"` when the host omitted it.
        message: Text<'a>,
        /// PERM-045: `true` also interrupts the active turn.
        interrupt: Option<bool>,
        /// PERM-046: equals the request's `tool_use_id` when present.
        tool_use_id: Option<Text<'a>>,
    },
}

impl<'a> PermissionDecision<'a> {
    /// Decodes a decision value (PERM-040..048).
    pub fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::wrong_type(at, "an object", "PERM-040"))?;
        let b_at = at.key("behavior");
        let behavior = match super::decode::member(obj, "behavior") {
            None => return Err(Error::missing(&b_at, "PERM-041")),
            Some(b) => b
                .as_str()
                .ok_or_else(|| Error::wrong_type(&b_at, "a string", "PERM-041"))?,
        };
        // PERM-047: canonical and alias are distinct members; the canonical one wins
        // (`canonical.or(alias)` below).
        if name_is(&behavior, "allow") {
            const NAMES: &[&str] = &[
                "updatedInput",
                "updated_input",
                "updatedPermissions",
                "updated_permissions",
                "toolUseID",
                "tool_use_id",
                "behavior",
            ];
            let mut s: [Option<Value<'_, 'a>>; 7] = [None; 7];
            take(obj, NAMES, &mut s, Closed::Yes("PERM-048"), at)?;
            let input_at = at.key("updatedInput");
            let updated_input: Option<RawObject<'a>> = match s[0].or(s[1]) {
                Some(v) => Option::<RawObject<'a>>::decode(v, &input_at)
                    .map_err(|_| Error::wrong_type(&input_at, "an object or null", "PERM-042"))?,
                None => None,
            };
            let perms_at = at.key("updatedPermissions");
            let updated_permissions = match s[2].or(s[3]) {
                Some(v) => Option::<Vec<PermissionUpdate<'a>>>::decode(v, &perms_at)?,
                None => None,
            };
            let tool_use_id = opt(s[4].or(s[5]), &at.key("toolUseID"))?;
            return Ok(PermissionDecision::Allow {
                updated_input,
                updated_permissions,
                tool_use_id,
            });
        }
        if name_is(&behavior, "deny") {
            const NAMES: &[&str] = &[
                "message",
                "interrupt",
                "toolUseID",
                "tool_use_id",
                "behavior",
            ];
            let mut s: [Option<Value<'_, 'a>>; 5] = [None; 5];
            take(obj, NAMES, &mut s, Closed::Yes("PERM-048"), at)?;
            let message: Option<Text<'a>> = opt(s[0], &at.key("message"))?;
            return Ok(PermissionDecision::Deny {
                message: message.unwrap_or(Text::Borrowed(DEFAULT_DENY_MESSAGE)),
                interrupt: opt(s[1], &at.key("interrupt"))?,
                tool_use_id: opt(s[2].or(s[3]), &at.key("toolUseID"))?,
            });
        }
        Err(Error::invalid(&b_at, "\"allow\" or \"deny\"", "PERM-041"))
    }

    /// Whether the decision is an allow.
    pub fn is_allow(&self) -> bool {
        matches!(self, PermissionDecision::Allow { .. })
    }

    /// Appends the canonical JSON (one object, no newline) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        match self {
            PermissionDecision::Allow {
                updated_input,
                updated_permissions,
                tool_use_id,
            } => {
                w.constant("\"behavior\":\"allow\"");
                if let Some(v) = updated_input {
                    v.encode(w.key("\"updatedInput\":"));
                }
                if let Some(v) = updated_permissions {
                    v.encode(w.key("\"updatedPermissions\":"));
                }
                if let Some(v) = tool_use_id {
                    v.encode(w.key("\"toolUseID\":"));
                }
            }
            PermissionDecision::Deny {
                message,
                interrupt,
                tool_use_id,
            } => {
                w.constant("\"behavior\":\"deny\"");
                message.encode(w.key("\"message\":"));
                if let Some(v) = interrupt {
                    v.encode(w.key("\"interrupt\":"));
                }
                if let Some(v) = tool_use_id {
                    v.encode(w.key("\"toolUseID\":"));
                }
            }
        }
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> PermissionDecision<'static> {
        match self {
            PermissionDecision::Allow {
                updated_input,
                updated_permissions,
                tool_use_id,
            } => PermissionDecision::Allow {
                updated_input: updated_input.into_owned(),
                updated_permissions: updated_permissions.into_owned(),
                tool_use_id: tool_use_id.into_owned(),
            },
            PermissionDecision::Deny {
                message,
                interrupt,
                tool_use_id,
            } => PermissionDecision::Deny {
                message: IntoOwned::into_owned(message),
                interrupt,
                tool_use_id: tool_use_id.into_owned(),
            },
        }
    }
}

impl<'a> WireValue<'a> for PermissionDecision<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        PermissionDecision::decode(v, at)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        PermissionDecision::encode(self, out)
    }
}
