//! The JSON text of `tool_use_result` values (PROFILE §17): a small writer of compact JSON
//! objects over `agentx_wire::json`'s string and number writers, and the hand-off to the core
//! as validated [`RawJson`] forms. Must never build a value from unescaped text.

use agentx_wire::json::{write_str, write_u64};
use agentx_wire::wire::RawJson;

/// One JSON object being written, members in call order.
pub struct Obj {
    out: Vec<u8>,
    first: bool,
}

impl Default for Obj {
    fn default() -> Self {
        Obj::new()
    }
}

impl Obj {
    /// `{`.
    pub fn new() -> Obj {
        Obj {
            out: vec![b'{'],
            first: true,
        }
    }

    fn key(&mut self, name: &str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        write_str(&mut self.out, name);
        self.out.push(b':');
        &mut self.out
    }

    /// A string member.
    pub fn str(mut self, name: &str, value: &str) -> Obj {
        write_str(self.key(name), value);
        self
    }

    /// A string member, or `null`.
    pub fn opt_str(mut self, name: &str, value: Option<&str>) -> Obj {
        match value {
            Some(v) => write_str(self.key(name), v),
            None => self.key(name).extend_from_slice(b"null"),
        }
        self
    }

    /// A number member.
    pub fn num(mut self, name: &str, value: u64) -> Obj {
        write_u64(self.key(name), value);
        self
    }

    /// A boolean member.
    pub fn bool(mut self, name: &str, value: bool) -> Obj {
        let v: &[u8] = if value { b"true" } else { b"false" };
        self.key(name).extend_from_slice(v);
        self
    }

    /// A member whose value is JSON text this module wrote.
    pub fn raw(mut self, name: &str, json: &str) -> Obj {
        self.key(name).extend_from_slice(json.as_bytes());
        self
    }

    /// An array of strings.
    pub fn strs<'s>(mut self, name: &str, values: impl IntoIterator<Item = &'s str>) -> Obj {
        let out = self.key(name);
        out.push(b'[');
        for (i, v) in values.into_iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(out, v);
        }
        out.push(b']');
        self
    }

    /// `}`: the object's text.
    pub fn end(mut self) -> String {
        self.out.push(b'}');
        String::from_utf8(self.out).unwrap_or_default()
    }
}

/// A JSON array of already-written values.
pub fn array(items: &[String]) -> String {
    let mut s = String::from("[");
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(v);
    }
    s.push(']');
    s
}

/// `s` as a JSON string (a failed call's `tool_use_result` is its error text, PROFILE §17).
pub fn string(s: &str) -> String {
    let mut out = Vec::with_capacity(s.len() + 2);
    write_str(&mut out, s);
    String::from_utf8(out).unwrap_or_default()
}

/// Validated forms for [`ToolOutcome::tool_use_result`](agentx_core::session::ToolOutcome);
/// a text that does not parse (never expected) is left out rather than sent.
pub fn forms(texts: impl IntoIterator<Item = String>) -> Vec<RawJson<'static>> {
    texts
        .into_iter()
        .filter_map(|t| RawJson::parse_owned(t.into_bytes()).ok())
        .collect()
}
