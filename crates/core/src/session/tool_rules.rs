//! The tool options of PROFILE §15 as values: `--tools LIST` (the tools offered),
//! `--allowedTools LIST` (allowed without asking) and `--disallowedTools LIST` (a plain name
//! is removed from `tools` and from the model's tool list; a pattern denies the uses it
//! matches).
//!
//! Owns the LIST grammar (names separated by commas or whitespace outside parentheses;
//! `Bash(PREFIX:*)` and `Bash(CMD)` patterns), the offered tool set, and pattern matching.
//! A prefix pattern allows a command only when what follows the prefix holds no shell
//! control character (`;`, `&`, `|`, a newline, `` ` ``, `$(`, `<`, `>`, parentheses), so
//! `Bash(git:*)` never allows `git status; rm -rf x` (that use is asked, as without the
//! rule); a deny pattern matches when the whole command or any segment between control
//! characters matches, so chaining cannot slip past it.
//!
//! Must never: echo a list's value in an error (the command line may hold anything), run a
//! tool, or touch the file system.

use std::fmt;

use crate::model::ToolSpec;

/// What a rule matches of a tool's uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Every use (a plain tool name).
    Any,
    /// `Bash(PREFIX:*)`: commands that start with PREFIX.
    Prefix(String),
    /// `Bash(CMD)`: exactly CMD.
    Exact(String),
}

/// One element of an `--allowedTools` or `--disallowedTools` LIST.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolRule {
    /// The tool's name.
    pub tool: String,
    /// Which of its uses the rule is about.
    pub pattern: Pattern,
}

/// The tool rules of the command line (PROFILE §15); empty in the standalone profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolRules {
    /// `--allowedTools`: matching uses run without a prompt.
    pub allowed: Vec<ToolRule>,
    /// `--disallowedTools`: matching uses are denied in every mode.
    pub disallowed: Vec<ToolRule>,
}

/// Why a LIST is refused (a usage error). Its text never holds the list's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListError {
    /// A `(` without its `)`, or a `)` without its `(`.
    Unbalanced,
    /// A pattern on a tool other than `Bash`.
    PatternNotBash,
    /// `Bash()` or `Bash(:*)`: an empty command.
    EmptyPattern,
    /// Text after a pattern's `)`.
    TrailingText,
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ListError::Unbalanced => "a tool pattern has unbalanced parentheses",
            ListError::PatternNotBash => "only Bash takes a pattern (Bash(PREFIX:*) or Bash(CMD))",
            ListError::EmptyPattern => "a Bash pattern names no command",
            ListError::TrailingText => "text follows a tool pattern's closing parenthesis",
        })
    }
}

impl std::error::Error for ListError {}

/// The elements of a LIST: separated by commas or whitespace outside parentheses; empty
/// elements are dropped (`--tools ""` is an empty list).
pub fn split_list(list: &str) -> Result<Vec<&str>, ListError> {
    let mut items = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    for (i, c) in list.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.checked_sub(1).ok_or(ListError::Unbalanced)?,
            c if depth == 0 && (c == ',' || c.is_whitespace()) => {
                if start < i {
                    items.push(&list[start..i]);
                }
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(ListError::Unbalanced);
    }
    if start < list.len() {
        items.push(&list[start..]);
    }
    Ok(items)
}

/// Parses an `--allowedTools` / `--disallowedTools` LIST.
pub fn parse_rules(list: &str) -> Result<Vec<ToolRule>, ListError> {
    split_list(list)?.into_iter().map(parse_rule).collect()
}

fn parse_rule(item: &str) -> Result<ToolRule, ListError> {
    let Some(open) = item.find('(') else {
        return Ok(ToolRule {
            tool: item.to_string(),
            pattern: Pattern::Any,
        });
    };
    let tool = &item[..open];
    let body = &item[open + 1..];
    let body = body.strip_suffix(')').ok_or(ListError::TrailingText)?;
    // split_list balanced the parentheses; a `)` inside the body followed by more text is
    // "Bash(a)b)" style trailing text only if the body's own parentheses do not balance.
    if !balanced(body) {
        return Err(ListError::TrailingText);
    }
    if tool != "Bash" {
        return Err(ListError::PatternNotBash);
    }
    let pattern = match body.strip_suffix(":*") {
        Some(prefix) => Pattern::Prefix(prefix.to_string()),
        None => Pattern::Exact(body.to_string()),
    };
    match &pattern {
        Pattern::Prefix(p) | Pattern::Exact(p) if p.trim().is_empty() => {
            Err(ListError::EmptyPattern)
        }
        _ => Ok(ToolRule {
            tool: tool.to_string(),
            pattern,
        }),
    }
}

fn balanced(s: &str) -> bool {
    let mut depth = 0usize;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            _ => {}
        }
    }
    depth == 0
}

/// The characters that end one shell command and start another, or run one inside another.
fn is_control(c: char) -> bool {
    matches!(
        c,
        ';' | '&' | '|' | '\n' | '\r' | '`' | '<' | '>' | '(' | ')'
    )
}

fn has_control(s: &str) -> bool {
    s.chars().any(is_control) || s.contains("$(")
}

impl ToolRule {
    /// True when this rule is a plain tool name (it removes the tool when disallowed).
    pub fn is_name(&self) -> bool {
        self.pattern == Pattern::Any
    }

    /// Does this allow rule cover the use of `tool` whose primary argument (the Bash command)
    /// is `primary`?
    pub fn allows(&self, tool: &str, primary: &str) -> bool {
        if self.tool != tool {
            return false;
        }
        match &self.pattern {
            Pattern::Any => true,
            Pattern::Exact(cmd) => primary == cmd,
            Pattern::Prefix(prefix) => primary
                .strip_prefix(prefix.as_str())
                .is_some_and(|rest| !has_control(rest)),
        }
    }

    /// Does this deny rule cover the use? The whole command and every segment between
    /// control characters are checked, so a chained command cannot slip past it.
    pub fn denies(&self, tool: &str, primary: &str) -> bool {
        if self.tool != tool {
            return false;
        }
        let hit = |s: &str| match &self.pattern {
            Pattern::Any => true,
            Pattern::Exact(cmd) => s == cmd,
            Pattern::Prefix(prefix) => s.starts_with(prefix.as_str()),
        };
        hit(primary)
            || primary
                .split(|c| is_control(c) || c == '$')
                .map(str::trim)
                .any(|seg| !seg.is_empty() && hit(seg))
    }
}

impl ToolRules {
    /// The allowed rules cover this use.
    pub fn allows(&self, tool: &str, primary: &str) -> bool {
        self.allowed.iter().any(|r| r.allows(tool, primary))
    }

    /// A disallowed pattern covers this use.
    pub fn denies(&self, tool: &str, primary: &str) -> bool {
        self.disallowed.iter().any(|r| r.denies(tool, primary))
    }
}

/// The tools offered (system/init `tools` and the model's tool list, PROFILE §15): `all`
/// narrowed to `--tools` when given (`default` names every tool; an empty list none), less
/// every tool `--disallowedTools` names plainly. Returns the tools, in `all`'s order, and the
/// `--tools` names that name no tool (the caller warns about them).
pub fn offered(
    all: Vec<ToolSpec>,
    tools: Option<&[String]>,
    disallowed: &[ToolRule],
) -> (Vec<ToolSpec>, Vec<String>) {
    let mut unknown = Vec::new();
    let wanted = |name: &str| match tools {
        None => true,
        Some(list) => list.iter().any(|t| t == name || t == "default"),
    };
    if let Some(list) = tools {
        for t in list {
            if t != "default" && !all.iter().any(|s| &s.name == t) {
                unknown.push(t.clone());
            }
        }
    }
    let kept = all
        .into_iter()
        .filter(|s| wanted(&s.name))
        .filter(|s| !disallowed.iter().any(|r| r.is_name() && r.tool == s.name))
        .collect();
    (kept, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &str) -> Vec<String> {
        split_list(list)
            .unwrap()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn lists_split_on_commas_and_spaces_outside_parentheses() {
        assert_eq!(names("Read,Write"), ["Read", "Write"]);
        assert_eq!(names("Read Write"), ["Read", "Write"]);
        assert_eq!(names(" Read ,, Write\t"), ["Read", "Write"]);
        assert_eq!(names(""), Vec::<String>::new());
        assert_eq!(names("  ,"), Vec::<String>::new());
        assert_eq!(
            names("Bash(git log:*),Read"),
            ["Bash(git log:*)", "Read"],
            "a space inside a pattern does not split"
        );
        assert_eq!(names("Bash(a, b)"), ["Bash(a, b)"]);
        assert_eq!(split_list("Bash(ls"), Err(ListError::Unbalanced));
        assert_eq!(split_list("Bash)ls("), Err(ListError::Unbalanced));
    }

    #[test]
    fn patterns_parse() {
        let r = parse_rules("Read,Bash(git:*),Bash(make test)").unwrap();
        assert_eq!(r[0].pattern, Pattern::Any);
        assert_eq!(r[1].pattern, Pattern::Prefix("git".into()));
        assert_eq!(r[2].pattern, Pattern::Exact("make test".into()));
        assert_eq!(parse_rules("Read(./x)"), Err(ListError::PatternNotBash));
        assert_eq!(parse_rules("Bash()"), Err(ListError::EmptyPattern));
        assert_eq!(parse_rules("Bash(:*)"), Err(ListError::EmptyPattern));
        assert_eq!(parse_rules("Bash(ls)x"), Err(ListError::TrailingText));
        // The error text names the rule, never the value.
        assert!(!ListError::TrailingText.to_string().contains("ls"));
    }

    #[test]
    fn prefix_and_exact_matching_at_their_edges() {
        let git = &parse_rules("Bash(git:*)").unwrap()[0];
        assert!(git.allows("Bash", "git"));
        assert!(git.allows("Bash", "git status"));
        assert!(git.allows("Bash", "gitk"), "a prefix is a byte prefix");
        assert!(!git.allows("Bash", "gi"));
        assert!(!git.allows("Bash", " git status"));
        assert!(!git.allows("Read", "git"));
        // Chaining after the prefix is not allowed by it.
        for c in [
            "git status; rm -rf x",
            "git log && rm x",
            "git log | sh",
            "git log\nrm x",
            "git $(rm x)",
            "git `rm x`",
            "git log > /etc/x",
        ] {
            assert!(!git.allows("Bash", c), "{c}");
        }
        let exact = &parse_rules("Bash(make test)").unwrap()[0];
        assert!(exact.allows("Bash", "make test"));
        assert!(!exact.allows("Bash", "make test2"));
        assert!(!exact.allows("Bash", "make tes"));
        let chained = &parse_rules("Bash(a && b)").unwrap()[0];
        assert!(chained.allows("Bash", "a && b"), "exact is exact");
    }

    #[test]
    fn deny_patterns_see_every_segment() {
        let rm = &parse_rules("Bash(rm:*)").unwrap()[0];
        assert!(rm.denies("Bash", "rm -rf x"));
        assert!(rm.denies("Bash", "ls; rm -rf x"));
        assert!(rm.denies("Bash", "ls&&rm x"));
        assert!(rm.denies("Bash", "echo $(rm x)"));
        assert!(rm.denies("Bash", "ls |  rm x"));
        assert!(!rm.denies("Bash", "ls -l"));
        assert!(!rm.denies("Read", "rm"));
        let exact = &parse_rules("Bash(reboot)").unwrap()[0];
        assert!(exact.denies("Bash", "reboot"));
        assert!(exact.denies("Bash", "ls; reboot "));
        assert!(!exact.denies("Bash", "reboot now"));
        let all = &parse_rules("Bash").unwrap()[0];
        assert!(all.denies("Bash", "anything"));
    }

    #[test]
    fn offered_tools() {
        let all = crate::session::default_tools();
        let names = |v: &[ToolSpec]| v.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        let (t, u) = offered(all.clone(), None, &[]);
        assert_eq!(names(&t), ["Read", "Write", "Bash"]);
        assert!(u.is_empty());
        let (t, _) = offered(all.clone(), Some(&[]), &[]);
        assert!(t.is_empty(), "an empty --tools offers none");
        let (t, u) = offered(
            all.clone(),
            Some(&["Bash".into(), "Read".into(), "Grep".into()]),
            &[],
        );
        assert_eq!(names(&t), ["Read", "Bash"], "in the tools' own order");
        assert_eq!(u, ["Grep"]);
        let (t, _) = offered(all.clone(), Some(&["default".into()]), &[]);
        assert_eq!(t.len(), 3);
        let dis = parse_rules("Write,Bash(rm:*)").unwrap();
        let (t, _) = offered(all, None, &dis);
        assert_eq!(
            names(&t),
            ["Read", "Bash"],
            "a plain name is removed, a pattern is not"
        );
    }
}
