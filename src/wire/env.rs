//! `update_environment_variables` (PROFILE §2b) and `keep_alive`.
//!
//! Owns the environment-update validation contract: names `[A-Za-z_][A-Za-z0-9_]*`, a value
//! is a string without NUL of at most 32 KiB or `null` (unset), at most 1,000 entries; the
//! record is closed. Any violation is a record-level input error that changes nothing (the
//! whole record is rejected before anything is applied). Never touches the process
//! environment.

use crate::json::{Object, Value};

use super::decode::{take, Closed, IntoOwned, Obj, Path, Text, WireValue};
use super::error::Error;

const RULE: &str = "PROFILE §2b";

/// At most this many entries per update.
pub const MAX_VARIABLES: usize = 1000;
/// At most this many bytes per value.
pub const MAX_VALUE_BYTES: usize = 32 * 1024;

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_variable_name(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
        _ => return false,
    }
    b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// `{"type":"update_environment_variables","variables":{NAME:VALUE|null}}`, in document
/// order. `None` unsets the name.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EnvironmentUpdate<'a> {
    /// Each name with its new value (`None` unsets it), in document order.
    pub variables: Vec<(Text<'a>, Option<Text<'a>>)>,
}

impl<'a> EnvironmentUpdate<'a> {
    pub(crate) fn decode_members(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let mut s: [Option<Value<'_, 'a>>; 2] = [None; 2];
        take(obj, &["variables", "type"], &mut s, Closed::Yes(RULE), at)?;
        let v_at = at.key("variables");
        let map = match s[0] {
            None => return Err(Error::missing(&v_at, RULE)),
            Some(v) => v
                .as_object()
                .ok_or_else(|| Error::wrong_type(&v_at, "an object", RULE))?,
        };
        if map.len() > MAX_VARIABLES {
            return Err(Error::invalid(&v_at, "at most 1000 variables", RULE));
        }
        let mut variables = Vec::with_capacity(map.len());
        let entry_at = v_at.key("*");
        for (name, value) in map.iter() {
            let name = name.decode();
            if !is_variable_name(&name) {
                return Err(Error::invalid(
                    &entry_at,
                    "a name matching [A-Za-z_][A-Za-z0-9_]*",
                    RULE,
                ));
            }
            let value: Option<Text<'a>> = match value.as_str() {
                Some(s) => {
                    let s = s.decode();
                    if s.len() > MAX_VALUE_BYTES {
                        return Err(Error::invalid(&entry_at, "a value of at most 32 KiB", RULE));
                    }
                    if s.as_bytes().contains(&0) {
                        return Err(Error::invalid(&entry_at, "a value without NUL", RULE));
                    }
                    Some(s)
                }
                None if value.is_null() => None,
                None => return Err(Error::wrong_type(&entry_at, "a string or null", RULE)),
            };
            variables.push((name, value));
        }
        Ok(EnvironmentUpdate { variables })
    }

    /// Writes the complete record, variables in order.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut w = Obj::begin(out);
        w.constant("\"type\":\"update_environment_variables\"");
        let mut m = Obj::begin(w.key("\"variables\":"));
        for (name, value) in &self.variables {
            // Names are `[A-Za-z0-9_]`: no escaping needed, but go through the writer anyway.
            let out = m.key("");
            crate::json::write_str(out, name);
            out.push(b':');
            value.encode(out);
        }
        m.end();
        w.end();
    }

    /// The owned form, for a value that must outlive its input line.
    pub fn into_owned(self) -> EnvironmentUpdate<'static> {
        EnvironmentUpdate {
            variables: self
                .variables
                .into_iter()
                .map(|(k, v)| (IntoOwned::into_owned(k), v.into_owned()))
                .collect(),
        }
    }
}
