//! A small, strict argument scanner shared by the subcommands: long options, each at most
//! once, an optional `--` terminator, and positional operands. It never exits the process.

/// A usage error: the text after `agentx-wire: ` on stderr; the caller exits with status 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl UsageError {
    #[cold]
    pub fn new(msg: impl Into<String>) -> UsageError {
        UsageError(msg.into())
    }
}

/// Scanned arguments: `(option, value)` pairs in order and the positional operands.
#[derive(Debug, Default)]
pub struct Args {
    pub options: Vec<(String, Option<String>)>,
    pub operands: Vec<String>,
}

impl Args {
    /// Scans `args`. `with_value` lists the options that take a value (`--opt V` or
    /// `--opt=V`); `flags` those that do not. Anything else starting with `-` (except a lone
    /// `-`, which is an operand meaning stdin) is a usage error, and so is a repeated option.
    pub fn scan(args: &[String], with_value: &[&str], flags: &[&str]) -> Result<Args, UsageError> {
        let mut out = Args::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            if arg == "--" {
                out.operands.extend(it.by_ref().cloned());
                break;
            }
            if !arg.starts_with("--") {
                if arg.starts_with('-') && arg != "-" {
                    return Err(UsageError::new(format!("unknown option {}", clip(arg))));
                }
                out.operands.push(arg.clone());
                continue;
            }
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (arg.as_str(), None),
            };
            if out.options.iter().any(|(n, _)| n == name) {
                return Err(UsageError::new(format!(
                    "option {name} given more than once"
                )));
            }
            if with_value.contains(&name) {
                let value = match inline {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| UsageError::new(format!("option {name} needs a value")))?,
                };
                out.options.push((name.to_string(), Some(value)));
            } else if flags.contains(&name) && inline.is_none() {
                out.options.push((name.to_string(), None));
            } else {
                return Err(UsageError::new(format!("unknown option {}", clip(name))));
            }
        }
        Ok(out)
    }

    pub fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    pub fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    /// The single optional operand (a file, or `-`/absent for stdin).
    pub fn single_operand(&self) -> Result<Option<&str>, UsageError> {
        match self.operands.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.as_str())),
            _ => Err(UsageError::new("expected at most one input file")),
        }
    }
}

/// At most 64 bytes of an argument in a diagnostic (PROFILE §5).
fn clip(s: &str) -> &str {
    let mut end = s.len().min(64);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn scans_values_flags_operands_and_terminator() {
        let a = Args::scan(
            &v(&["--level", "json", "--json", "--direction=input", "f"]),
            &["--level", "--direction"],
            &["--json"],
        )
        .unwrap();
        assert_eq!(a.value("--level"), Some("json"));
        assert_eq!(a.value("--direction"), Some("input"));
        assert!(a.flag("--json"));
        assert_eq!(a.single_operand().unwrap(), Some("f"));
        let a = Args::scan(&v(&["--", "--json"]), &[], &["--json"]).unwrap();
        assert!(!a.flag("--json"));
        assert_eq!(a.operands, ["--json"]);
        assert!(Args::scan(&v(&["--json", "--json"]), &[], &["--json"]).is_err());
        assert!(Args::scan(&v(&["--level"]), &["--level"], &[]).is_err());
        assert!(Args::scan(&v(&["-x"]), &[], &[]).is_err());
        assert!(Args::scan(&v(&["--json=1"]), &[], &["--json"]).is_err());
        assert_eq!(Args::scan(&v(&["-"]), &[], &[]).unwrap().operands, ["-"]);
    }
}
