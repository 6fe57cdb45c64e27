//! The member readers every tool input shares: a required string, a non-empty one without
//! NUL. A leaf module: [`super::input`] and [`super::coding`] both read members through it, so
//! neither imports the other back. Must never: accept a wrong type silently.

use agentx_wire::json::Object;

pub(super) fn string(obj: &Object<'_, '_>, name: &str) -> Result<String, String> {
    match obj.get(name) {
        None => Err(format!("{name} is required")),
        Some(v) => v
            .as_str()
            .map(|s| s.decode().into_owned())
            .ok_or_else(|| format!("{name} must be a string")),
    }
}

pub(super) fn nonempty_string(obj: &Object<'_, '_>, name: &str) -> Result<String, String> {
    let s = string(obj, name)?;
    if s.is_empty() {
        return Err(format!("{name} must not be empty"));
    }
    if s.contains('\0') {
        return Err(format!("{name} must not contain NUL"));
    }
    Ok(s)
}
