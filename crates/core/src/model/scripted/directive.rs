//! The directive language of the scripted model (PROFILE §9, §16): one prompt line `!name
//! ...` parsed into a [`Directive`], a prompt resolved into a [`Plan`] (the echo reply, the
//! directives, or the first bad line), and the directives split into the segments of a
//! turn's calls at its `!tool` groups.
//!
//! Owns the grammar and its bounds (`MAX_SLEEP_MS`, `MAX_TASK_STEPS`); never schedules or
//! emits an event (the run in `super` does).

use super::{MAX_SLEEP_MS, MAX_TASK_STEPS};
use agentx_wire::wire::output::AssistantError;
use agentx_wire::wire::AttachmentRef;

/// One parsed directive line.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Directive {
    Say(String),
    Tool {
        name: String,
        input: String,
    },
    Sleep(u64),
    Task {
        id: String,
        steps: u32,
        ms: u64,
    },
    Suggest(String),
    Cost(Option<f64>),
    Usage(u64, u64),
    Error(AssistantError),
    Network {
        host: String,
        port: Option<u16>,
    },
    History,
    Compact,
    /// PROFILE §16: `system: <the system message, or (none)>`.
    System,
    /// PROFILE §16 `!json VALUE`: VALUE (one strict JSON value, as written) as the text block.
    Json(String),
    /// PROFILE §16: `last tool result: <the text of the last tool_result the model saw>`.
    LastToolResult,
}

/// What the prompt asks for, resolved at the start of a call.
pub(super) enum Plan {
    Echo(String),
    BadDirective(usize),
    Directives(Vec<Directive>),
}

/// Echo when the text has no directive line; otherwise every directive line parsed, or the
/// first bad one's 1-based line number.
pub(super) fn plan(text: &str, attachments: &[AttachmentRef]) -> Plan {
    let mut directives = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if !line.starts_with('!') {
            continue;
        }
        match parse_directive(line) {
            Some(d) => directives.push(d),
            None => return Plan::BadDirective(i + 1),
        }
    }
    if !directives.is_empty() {
        return Plan::Directives(directives);
    }
    let mut reply = format!("echo: {text}");
    for a in attachments {
        reply.push_str(&format!(
            "\n[attachment {} {} {} {}]",
            a.attachment_id, a.mime_type, a.size_bytes, a.sha256
        ));
    }
    Plan::Echo(reply)
}

/// The directives of call `index` (after the `index`-th `!tool` group), and whether that call
/// is the turn's last.
pub(super) fn segment(all: Vec<Directive>, index: u32) -> (Vec<Directive>, bool) {
    let mut segments: Vec<Vec<Directive>> = vec![Vec::new()];
    let mut prev_tool = false;
    for d in all {
        let is_tool = matches!(d, Directive::Tool { .. });
        if prev_tool && !is_tool {
            segments.push(Vec::new());
        }
        prev_tool = is_tool;
        if let Some(cur) = segments.last_mut() {
            cur.push(d);
        }
    }
    if prev_tool {
        segments.push(Vec::new());
    }
    let count = segments.len();
    let i = index as usize;
    if i >= count {
        return (Vec::new(), true);
    }
    let last = i + 1 == count;
    (segments.swap_remove(i), last)
}

pub(super) fn parse_directive(line: &str) -> Option<Directive> {
    let (name, rest) = match line.split_once(' ') {
        Some((n, r)) => (n, Some(r)),
        None => (line, None),
    };
    let words = |r: Option<&str>| -> Vec<String> {
        r.map(|r| r.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    match name {
        "!say" => Some(Directive::Say(rest?.to_owned())),
        "!suggest" => {
            let t = rest?;
            (!t.trim().is_empty()).then(|| Directive::Suggest(t.to_owned()))
        }
        "!tool" => {
            let (tool, json) = rest?.trim_start().split_once(' ')?;
            if tool.is_empty() {
                return None;
            }
            Some(Directive::Tool {
                name: tool.to_owned(),
                input: object_input(json)?,
            })
        }
        // PROFILE §16: `!mcp SERVER TOOL JSON` is one tool use `mcp__SERVER__TOOL`.
        "!mcp" => {
            let (server, rest) = rest?.trim_start().split_once(' ')?;
            let (tool, json) = rest.trim_start().split_once(' ')?;
            if server.is_empty() || tool.is_empty() {
                return None;
            }
            Some(Directive::Tool {
                name: format!("mcp__{server}__{tool}"),
                input: object_input(json)?,
            })
        }
        "!sleep" => match words(rest).as_slice() {
            [ms] => Some(Directive::Sleep(millis(ms)?)),
            _ => None,
        },
        "!task" => match words(rest).as_slice() {
            [id, steps, ms] => {
                let steps: u32 = digits(steps)?.try_into().ok()?;
                (steps <= MAX_TASK_STEPS).then_some(())?;
                Some(Directive::Task {
                    id: id.clone(),
                    steps,
                    ms: millis(ms)?,
                })
            }
            _ => None,
        },
        "!cost" => match words(rest).as_slice() {
            [v] if v == "null" => Some(Directive::Cost(None)),
            [v] => Some(Directive::Cost(Some(decimal(v)?))),
            _ => None,
        },
        "!usage" => match words(rest).as_slice() {
            [i, o] => Some(Directive::Usage(digits(i)?, digits(o)?)),
            _ => None,
        },
        "!error" => match words(rest).as_slice() {
            [c] => Some(Directive::Error(AssistantError::from_name(c)?)),
            _ => None,
        },
        "!network" => match words(rest).as_slice() {
            [host, port] => {
                let port = if port == "null" {
                    None
                } else {
                    Some(u16::try_from(digits(port)?).ok()?)
                };
                Some(Directive::Network {
                    host: host.clone(),
                    port,
                })
            }
            _ => None,
        },
        "!history" if words(rest).is_empty() => Some(Directive::History),
        "!compact" if words(rest).is_empty() => Some(Directive::Compact),
        "!system" if words(rest).is_empty() => Some(Directive::System),
        "!json" => {
            let value = rest?.trim();
            agentx_wire::json::parse(value.as_bytes()).ok()?;
            Some(Directive::Json(value.to_owned()))
        }
        "!last_tool_result" if words(rest).is_empty() => Some(Directive::LastToolResult),
        _ => None,
    }
}

/// A `!tool` / `!mcp` input: exactly one JSON object, written back compact; `None` otherwise.
fn object_input(json: &str) -> Option<String> {
    let doc = agentx_wire::json::parse(json.trim().as_bytes()).ok()?;
    let root = doc.root();
    root.as_object()?;
    let mut input = Vec::new();
    agentx_wire::json::write_value(&mut input, root);
    String::from_utf8(input).ok()
}

/// ASCII decimal digits only (no sign, no spaces), as `u64`.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || s.len() > 19 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn millis(s: &str) -> Option<u64> {
    digits(s).filter(|ms| *ms <= MAX_SLEEP_MS)
}

/// `DIGITS[.DIGITS]`: a non-negative decimal price.
fn decimal(s: &str) -> Option<f64> {
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let ok = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    if !ok(int) || frac.is_some_and(|f| !ok(f)) || s.len() > 32 {
        return None;
    }
    s.parse::<f64>().ok().filter(|v| v.is_finite())
}
