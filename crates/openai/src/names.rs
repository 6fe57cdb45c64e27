//! OpenAI function names for agentx's tool names (PROFILE §16): a function name is at most
//! 64 of `[A-Za-z0-9_-]`, and an SDK MCP tool `mcp__<server>__<tool>` may be longer or hold
//! other characters. A name that fits is sent as it is; any other becomes its allowed
//! characters (others as `_`) cut to 55, `_` and 8 hex digits of a hash of the whole name, so
//! the names of one request stay distinct, and a function name the model calls maps back to
//! exactly the tool it stands for.
//!
//! Must never: send a function name OpenAI rejects, or map a function name back to a tool
//! it was not made from. Pure: no I/O.

use agentx_core::model::ToolSpec;

/// OpenAI's limit on a function name.
pub const MAX_FUNCTION_NAME: usize = 64;

/// The function names of one request's tools.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionNames {
    /// `(tool name, function name)`, for the names that differ.
    renamed: Vec<(String, String)>,
}

/// True when `name` is a valid OpenAI function name.
pub fn fits(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_FUNCTION_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl FunctionNames {
    /// The names for `tools`, in order: unique, each valid.
    pub fn of(tools: &[ToolSpec]) -> FunctionNames {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let mut taken: Vec<String> = names
            .iter()
            .filter(|n| fits(n))
            .map(|n| n.to_string())
            .collect();
        let mut renamed = Vec::new();
        for name in names.iter().filter(|n| !fits(n)) {
            if renamed.iter().any(|(n, _): &(String, String)| n == name) {
                continue;
            }
            let mut salt = 0;
            let mut candidate = hashed(name, salt);
            while taken.contains(&candidate) {
                salt += 1;
                candidate = hashed(name, salt);
            }
            taken.push(candidate.clone());
            renamed.push((name.to_string(), candidate));
        }
        FunctionNames { renamed }
    }

    /// The function name of tool `name` (a name of no tool of the request, such as an
    /// earlier turn's call, gets its unsalted hashed form when it does not fit).
    pub fn function(&self, name: &str) -> String {
        if let Some((_, f)) = self.renamed.iter().find(|(n, _)| n == name) {
            return f.clone();
        }
        if fits(name) {
            name.to_string()
        } else {
            hashed(name, 0)
        }
    }

    /// The tool name a function name the model called stands for (itself when it was not
    /// renamed).
    pub fn tool<'a>(&'a self, function: &'a str) -> &'a str {
        self.renamed
            .iter()
            .find(|(_, f)| f == function)
            .map_or(function, |(n, _)| n.as_str())
    }
}

/// FNV-1a of `name` (seeded with `salt`), as the 8 hex digits after the cut name.
fn hashed(name: &str, salt: u64) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ salt;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(55)
        .collect();
    base.push_str(&format!("_{:08x}", h as u32));
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: "{}".into(),
        }
    }

    #[test]
    fn names_fit_64_and_map_back_exactly() {
        let long = format!("mcp__{}__{}", "s".repeat(30), "t".repeat(30));
        assert!(long.len() > MAX_FUNCTION_NAME);
        let edge = format!("mcp__calc__{}", "x".repeat(64 - 11));
        assert_eq!(edge.len(), 64);
        let over = format!("{edge}y");
        let tools: Vec<ToolSpec> = [
            "Read",
            "mcp__calc__add",
            long.as_str(),
            "mcp__calc__mul tiply",
            // Two long names that differ only after the cut stay distinct.
            &format!("{long}_1"),
            edge.as_str(),
            over.as_str(),
        ]
        .iter()
        .map(|n| spec(n))
        .collect();
        let names = FunctionNames::of(&tools);
        let mapped: Vec<String> = tools.iter().map(|t| names.function(&t.name)).collect();
        assert_eq!(mapped[0], "Read");
        assert_eq!(mapped[1], "mcp__calc__add");
        assert_eq!(mapped[5], edge, "exactly 64 is sent as it is");
        assert_ne!(mapped[6], over, "65 is renamed");
        for m in &mapped {
            assert!(fits(m), "{m}");
        }
        let mut unique = mapped.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), tools.len());
        for (t, m) in tools.iter().zip(&mapped) {
            assert_eq!(names.tool(m), t.name);
        }
        assert_eq!(names.tool("Bash"), "Bash");
    }

    #[test]
    fn a_renamed_tool_never_takes_another_tools_name() {
        let long = "m".repeat(70);
        let crafted = hashed(&long, 0);
        let tools = [spec(&long), spec(&crafted)];
        let names = FunctionNames::of(&tools);
        let a = names.function(&long);
        let b = names.function(&crafted);
        assert_ne!(a, b);
        assert_eq!(b, crafted);
        assert_eq!(names.tool(&a), long);
        assert_eq!(names.tool(&b), crafted);
    }
}
