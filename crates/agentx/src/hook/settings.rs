//! `settings.json` (PROFILE §10): `{"version":1,"permission_hook":{"command":[…],"timeout_ms":N}}`,
//! optional as a whole, closed like `auth.json`.

use std::fmt;

use agentx_wire::json::{self, Kind, Object, Value};

/// The file's name inside the AgentX home.
pub const SETTINGS_JSON: &str = "settings.json";
/// A larger file is rejected before parsing.
pub const MAX_SETTINGS_LEN: usize = 64 * 1024;
/// `timeout_ms` when absent.
pub const DEFAULT_HOOK_TIMEOUT_MS: u64 = 30_000;
/// The largest `timeout_ms`.
pub const MAX_HOOK_TIMEOUT_MS: u64 = 600_000;
/// At most this many `command` elements.
pub const MAX_HOOK_ARGS: usize = 256;

/// The parsed file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// The `permissionHook` object, if configured.
    pub permission_hook: Option<PermissionHook>,
}

/// The configured hook: a program and its arguments (no shell), and its timeout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionHook {
    /// The program and its arguments, run without a shell.
    pub command: Vec<String>,
    /// How long the hook may run before it counts as failed (a denial).
    pub timeout_ms: u64,
}

/// Why `settings.json` was rejected: a JSON path and a rule, never a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingsError {
    /// The JSON path of the offending member.
    pub path: String,
    /// The rule it broke.
    pub rule: &'static str,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid settings.json: {}: {}", self.path, self.rule)
    }
}

fn err(path: &str, rule: &'static str) -> SettingsError {
    SettingsError {
        path: path.to_owned(),
        rule,
    }
}

impl Settings {
    /// Parses the file's bytes.
    pub fn parse(bytes: &[u8]) -> Result<Settings, SettingsError> {
        if bytes.len() > MAX_SETTINGS_LEN {
            return Err(err("$", "the file is larger than 65536 bytes"));
        }
        let doc = json::parse(bytes).map_err(|e| match e.kind() {
            json::ErrorKind::DuplicateMember => err("$", "duplicate member name"),
            _ => err("$", "not strict JSON"),
        })?;
        let root = doc.root();
        let obj = root
            .as_object()
            .ok_or_else(|| err("$", "must be an object"))?;
        closed(&obj, "$", &["version", "permission_hook"])?;
        match obj.get("version").and_then(|v| v.as_number()) {
            Some(n) if n.lexeme() == "1" => {}
            Some(_) => return Err(err("$.version", "must be the integer 1")),
            None => return Err(err("$.version", "is required and must be the integer 1")),
        }
        let permission_hook = match obj.get("permission_hook") {
            None => None,
            Some(v) => Some(hook(v)?),
        };
        Ok(Settings { permission_hook })
    }
}

fn closed(obj: &Object<'_, '_>, at: &str, allowed: &[&str]) -> Result<(), SettingsError> {
    match obj.unknown_member(allowed) {
        Some(_) => Err(err(at, "unknown member")),
        None => Ok(()),
    }
}

fn hook(v: Value<'_, '_>) -> Result<PermissionHook, SettingsError> {
    const AT: &str = "$.permission_hook";
    let obj = v.as_object().ok_or_else(|| err(AT, "must be an object"))?;
    closed(&obj, AT, &["command", "timeout_ms"])?;
    let cmd = obj
        .get("command")
        .ok_or_else(|| err("$.permission_hook.command", "is required"))?;
    let arr = cmd
        .as_array()
        .ok_or_else(|| err("$.permission_hook.command", "must be an array of strings"))?;
    if arr.is_empty() || arr.len() > MAX_HOOK_ARGS {
        return Err(err(
            "$.permission_hook.command",
            "must hold 1 to 256 strings",
        ));
    }
    let mut command = Vec::with_capacity(arr.len());
    for (i, a) in arr.iter().enumerate() {
        let at = format!("$.permission_hook.command[{i}]");
        let s = a.as_str().ok_or_else(|| SettingsError {
            path: at.clone(),
            rule: "must be a string",
        })?;
        let s = s.decode().into_owned();
        if s.contains('\0') || (i == 0 && s.is_empty()) {
            return Err(SettingsError {
                path: at,
                rule: "must be a nonempty string without NUL",
            });
        }
        command.push(s);
    }
    let timeout_ms = match obj.get("timeout_ms") {
        None => DEFAULT_HOOK_TIMEOUT_MS,
        Some(t) if t.kind() == Kind::Number => match t.as_number().and_then(|n| n.as_u64()) {
            Some(ms) if (1..=MAX_HOOK_TIMEOUT_MS).contains(&ms) => ms,
            _ => {
                return Err(err(
                    "$.permission_hook.timeout_ms",
                    "must be an integer from 1 to 600000",
                ))
            }
        },
        Some(_) => {
            return Err(err(
                "$.permission_hook.timeout_ms",
                "must be an integer from 1 to 600000",
            ))
        }
    };
    Ok(PermissionHook {
        command,
        timeout_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_files() {
        assert_eq!(
            Settings::parse(br#"{"version":1}"#),
            Ok(Settings::default())
        );
        assert_eq!(
            Settings::parse(
                br#"{"version":1,"permission_hook":{"command":["/bin/hook","-v"],"timeout_ms":600000}}"#
            ),
            Ok(Settings {
                permission_hook: Some(PermissionHook {
                    command: vec!["/bin/hook".into(), "-v".into()],
                    timeout_ms: 600_000
                })
            })
        );
        let s = Settings::parse(br#"{"version":1,"permission_hook":{"command":["h"]}}"#).unwrap();
        assert_eq!(
            s.permission_hook.unwrap().timeout_ms,
            DEFAULT_HOOK_TIMEOUT_MS
        );
    }

    #[test]
    fn rejections_name_path_and_rule() {
        for (text, want) in [
            ("", "invalid settings.json: $: not strict JSON"),
            ("[]", "invalid settings.json: $: must be an object"),
            (r#"{"version":2}"#, "invalid settings.json: $.version: must be the integer 1"),
            (r#"{"version":1.0}"#, "invalid settings.json: $.version: must be the integer 1"),
            ("{}", "invalid settings.json: $.version: is required and must be the integer 1"),
            (r#"{"version":1,"x":1}"#, "invalid settings.json: $: unknown member"),
            (r#"{"version":1,"version":1}"#, "invalid settings.json: $: duplicate member name"),
            (r#"{"version":1,"\u0076ersion":1}"#, "invalid settings.json: $: duplicate member name"),
            (r#"{"version":1,"permission_hook":{"command":[]}}"#, "invalid settings.json: $.permission_hook.command: must hold 1 to 256 strings"),
            (r#"{"version":1,"permission_hook":{"command":[""]}}"#, "invalid settings.json: $.permission_hook.command[0]: must be a nonempty string without NUL"),
            (r#"{"version":1,"permission_hook":{"command":["a",1]}}"#, "invalid settings.json: $.permission_hook.command[1]: must be a string"),
            (r#"{"version":1,"permission_hook":{"command":["a"],"timeout_ms":0}}"#, "invalid settings.json: $.permission_hook.timeout_ms: must be an integer from 1 to 600000"),
            (r#"{"version":1,"permission_hook":{"command":["a"],"timeout_ms":600001}}"#, "invalid settings.json: $.permission_hook.timeout_ms: must be an integer from 1 to 600000"),
            (r#"{"version":1,"permission_hook":{"command":["a"],"extra":true}}"#, "invalid settings.json: $.permission_hook: unknown member"),
            (r#"{"version":1,"permission_hook":null}"#, "invalid settings.json: $.permission_hook: must be an object"),
        ] {
            assert_eq!(
                Settings::parse(text.as_bytes()).unwrap_err().to_string(),
                want,
                "{text}"
            );
        }
        let big = vec![b' '; MAX_SETTINGS_LEN + 1];
        assert_eq!(
            Settings::parse(&big).unwrap_err().rule,
            "the file is larger than 65536 bytes"
        );
    }
}
