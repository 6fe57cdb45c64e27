//! The scripted model `agentx-echo` (PROFILE §9): a deterministic model that answers from the
//! latest user message's text, sans-IO.
//!
//! Owns the directive grammar (in `directive`: `!say`, `!tool`, `!sleep`, `!task`, `!suggest`, `!cost`,
//! `!usage`, `!error`, `!network`, `!history`, `!compact`, and PROFILE §16's `!system`,
//! `!json` and `!mcp SERVER TOOL JSON`, a tool use `mcp__SERVER__TOOL`), the echo reply, the provider's `script` file (turns separated by `---` lines), and the schedule of one model call: given a
//! [`ModelRequest`] and a start time it yields [`ModelEvent`]s and "nothing until t" steps
//! ([`Step`]), so the same run is driven on the real clock by the `agentx` driver and on a
//! virtual clock by tests.
//!
//! One request is one call. A turn whose directives contain `!tool` groups spans several
//! calls: a call runs the directives after the tool groups answered since the latest user
//! message (for call `index` of a prompt, the `index`-th), so a follow-up request continues
//! where the previous call stopped without any state kept between calls.
//! `!cost` and `!usage` are turn-level: the turn's last call carries them (earlier calls
//! report zero usage and a cost of `0` when the turn's cost is known, `None` when it is not),
//! so a session that sums per-call figures reports exactly the declared ones (WIRE-012).
//!
//! Must never: read a clock, sleep, spawn or do I/O (the caller reads the script file and
//! passes `now`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::{
    Block, Message, ModelEvent, ModelRequest, NetworkDecision, StopReason, TaskStatus, Usage,
};
use agentx_wire::wire::output::AssistantError;
use agentx_wire::wire::AttachmentRef;

mod directive;

use directive::{plan, segment, Directive, Plan};

/// `!sleep` and `!task` intervals accept 0..=600,000 ms (PROFILE §9).
pub const MAX_SLEEP_MS: u64 = 600_000;
/// At most this many `task_progress` steps per `!task` (bounds the events a prompt can cause).
pub const MAX_TASK_STEPS: u32 = 10_000;

/// A provider's `script` file: blocks of prompt text separated by lines `---` (PROFILE §9).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    blocks: Vec<String>,
}

impl Script {
    /// Splits `text` at lines that are exactly `---` (a CR before the LF is allowed).
    pub fn parse(text: &str) -> Script {
        let mut blocks = Vec::new();
        let mut cur = String::new();
        for line in text.split('\n') {
            if line.strip_suffix('\r').unwrap_or(line) == "---" {
                blocks.push(std::mem::take(&mut cur));
            } else {
                if !cur.is_empty() {
                    cur.push('\n');
                }
                cur.push_str(line);
            }
        }
        blocks.push(cur);
        Script { blocks }
    }

    /// Block `k` (1-based turn number); the last block repeats.
    fn block(&self, turn: usize) -> Option<&str> {
        let last = self.blocks.len().checked_sub(1)?;
        Some(&self.blocks[turn.saturating_sub(1).min(last)])
    }
}

/// The scripted model of one process: the optional script and the seed of its identifiers.
#[derive(Clone, Debug)]
pub struct ScriptedModel {
    script: Option<Script>,
    id_seed: u32,
}

/// What a [`ScriptRun`] has for the caller now.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// The next event.
    Event(ModelEvent),
    /// Nothing before this instant (or before a network decision / cancellation, when
    /// `None`): poll again then.
    Pending(Option<Instant>),
    /// The run is over: the message ended and every background task finished.
    Done,
}

/// The main stream's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Main {
    /// Runnable from this instant.
    At(Instant),
    /// `!network` is waiting for [`ScriptRun::network_decision`].
    AwaitNetwork,
    /// The message ended (stop, failure or cancellation).
    Finished,
}

/// A scheduled background-task event.
struct Timed {
    at: Instant,
    seq: u64,
    event: ModelEvent,
}

/// One model call of the scripted model: poll it with the current time.
pub struct ScriptRun {
    ops: VecDeque<Directive>,
    ready: VecDeque<ModelEvent>,
    main: Main,
    /// The final event of the message once the ops are exhausted.
    ending: Option<ModelEvent>,
    /// The final event is queued in `ready`.
    ended: bool,
    /// Pending `!network` host, for the text block after the decision.
    network_host: Option<String>,
    tasks: Vec<Timed>,
    /// Tasks started and not yet notified, in start order.
    running: Vec<String>,
    seq: u64,
    next_block: u32,
    reply_words: u64,
    message_id: String,
    tool_prefix: String,
    tools: u32,
    cancelled: bool,
    // Accounting of this call.
    last_call: bool,
    prompt_words: u64,
    first_call: bool,
    turn_cost: Option<f64>,
    turn_usage: Option<(u64, u64)>,
    history: usize,
    system: Option<String>,
    /// The content of the last tool result in the request (`!last_tool_result`).
    last_tool_result: Option<String>,
}

impl ScriptedModel {
    /// `script` is the provider's parsed script file; `id_seed` makes message and tool-use IDs
    /// unique across processes (the driver passes a random value, tests a fixed one).
    pub fn new(script: Option<Script>, id_seed: u32) -> ScriptedModel {
        ScriptedModel { script, id_seed }
    }

    /// Starts call `request.index` of turn `request.turn` at `now`.
    pub fn start(&self, request: &ModelRequest, now: Instant) -> ScriptRun {
        let last_user = request
            .messages
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }));
        let (text, attachments): (&str, &[AttachmentRef]) = match last_user {
            Some(i) => match &request.messages[i] {
                Message::User {
                    text, attachments, ..
                } => (text, attachments),
                _ => ("", &[]),
            },
            None => ("", &[]),
        };
        // What only a script or a directive reads is looked up only then: an echo turn does
        // not walk the whole conversation (three passes per turn did, growing with it).
        // PROFILE §19: a summarization request answers `!compact`'s summary text.
        let summarizing = text.starts_with(crate::model::SUMMARY_REQUEST);
        let plan = match plan(text, attachments) {
            _ if summarizing => Plan::Echo(format!(
                "[compacted summary of {} earlier messages]",
                request.messages.len().saturating_sub(1)
            )),
            Plan::Echo(echo) => {
                let turn_number = || {
                    request
                        .messages
                        .iter()
                        .filter(|m| matches!(m, Message::User { .. }))
                        .count()
                };
                match self.script.as_ref().and_then(|s| s.block(turn_number())) {
                    Some(block) => plan(block, attachments),
                    None => Plan::Echo(echo),
                }
            }
            p => p,
        };
        let wants = |want: fn(&Directive) -> bool| match &plan {
            Plan::Directives(all) => all.iter().any(want),
            _ => false,
        };
        let history = if wants(|d| matches!(d, Directive::History)) {
            request.messages[..last_user.unwrap_or(0)]
                .iter()
                .filter(|m| matches!(m, Message::User { .. } | Message::Assistant { .. }))
                .count()
        } else {
            0
        };
        let system = if wants(|d| matches!(d, Directive::System)) {
            request.system.clone()
        } else {
            None
        };
        let last_tool_result = if wants(|d| matches!(d, Directive::LastToolResult)) {
            request.messages.iter().rev().find_map(|m| match m {
                Message::ToolResult { content, .. } => Some(content.clone()),
                _ => None,
            })
        } else {
            None
        };
        let prefix = format!("{:08x}_{}_{}", self.id_seed, request.turn, request.index);
        let prefixed = |head: &str| {
            let mut id = String::with_capacity(head.len() + prefix.len());
            id.push_str(head);
            id.push_str(&prefix);
            id
        };
        let mut run = ScriptRun {
            ops: VecDeque::new(),
            ready: VecDeque::new(),
            main: Main::At(now),
            ending: None,
            ended: false,
            network_host: None,
            tasks: Vec::new(),
            running: Vec::new(),
            seq: 0,
            next_block: 0,
            reply_words: 0,
            message_id: prefixed("msg_"),
            tool_prefix: prefixed("toolu_"),
            tools: 0,
            cancelled: false,
            last_call: true,
            prompt_words: text.split_whitespace().count() as u64,
            first_call: request.index == 0,
            turn_cost: None,
            turn_usage: None,
            history,
            system,
            last_tool_result,
        };
        run.ready.push_back(ModelEvent::MessageStart {
            message_id: run.message_id.clone(),
        });
        match plan {
            Plan::Echo(reply) => {
                run.push_text(&reply);
                run.ending = Some(run.stop(StopReason::EndTurn));
            }
            Plan::BadDirective(line) => {
                run.ending = Some(ModelEvent::Failed {
                    category: AssistantError::Unknown,
                    message: Some(format!("scripted error: bad directive line {line}")),
                });
            }
            Plan::Directives(all) => {
                for d in &all {
                    match d {
                        Directive::Cost(c) => run.turn_cost = *c,
                        Directive::Usage(i, o) => run.turn_usage = Some((*i, *o)),
                        _ => {}
                    }
                }
                let (segment, last) = segment(all, answered_groups(&request.messages, last_user));
                run.last_call = last;
                run.ops = segment.into();
            }
        }
        run
    }
}

/// How many tool groups of the latest user message were answered: the assistant messages
/// with a `tool_use` block after it. Within one prompt this is the call's `index`; a user
/// message the session adds within the turn (PROFILE §16's corrective prompt of structured
/// output) starts its own directives from the first segment.
fn answered_groups(messages: &[Message], last_user: Option<usize>) -> u32 {
    let after = last_user.map_or(0, |i| i + 1);
    let n = messages[after.min(messages.len())..]
        .iter()
        .filter(|m| {
            matches!(m, Message::Assistant { blocks, .. }
                if blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })))
        })
        .count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl ScriptRun {
    /// The next step at `now`. Main-stream events come in directive order; a background
    /// task's event due strictly before the main stream's next instant comes first.
    pub fn poll(&mut self, now: Instant) -> Step {
        if self.cancelled {
            return self.poll_cancelled();
        }
        loop {
            let task_due = self.next_task().map(|i| self.tasks[i].at);
            let main_at = match self.main {
                Main::At(t) => Some(t),
                _ => None,
            };
            let task_first = match (task_due, main_at) {
                (Some(t), Some(m)) => t < m,
                (Some(_), None) => true,
                _ => false,
            };
            if task_first {
                let t = task_due.unwrap_or(now);
                if t <= now {
                    return Step::Event(self.pop_task());
                }
                if main_at.is_none() {
                    return self.idle(Some(t));
                }
            }
            match main_at {
                Some(m) if m <= now => {
                    if let Some(e) = self.ready.pop_front() {
                        return Step::Event(e);
                    }
                    self.advance(m);
                }
                Some(m) => return Step::Pending(Some(task_due.map_or(m, |t| t.min(m)))),
                None => return self.idle(task_due),
            }
        }
    }

    /// The answer to the pending `!network` request (WIRE-PERM-004), at `now`.
    pub fn network_decision(&mut self, decision: NetworkDecision, now: Instant) {
        let Some(host) = self.network_host.take() else {
            return;
        };
        let verdict = match decision {
            NetworkDecision::Allowed => "allowed",
            NetworkDecision::Denied => "denied",
        };
        self.push_text(&format!("network {host}: {verdict}"));
        self.main = Main::At(now);
    }

    /// Whether the run waits for a network decision.
    pub fn awaits_network(&self) -> bool {
        self.network_host.is_some()
    }

    /// Cancels the call: the next polls yield [`ModelEvent::Cancelled`] (when the message had
    /// not ended), then `task_notification` `stopped` for every running task, then
    /// [`Step::Done`].
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }

    fn poll_cancelled(&mut self) -> Step {
        let delivered_end = self.main == Main::Finished || (self.ended && self.ready.is_empty());
        if !delivered_end {
            self.main = Main::Finished;
            self.ended = true;
            self.ready.clear();
            self.ops.clear();
            return Step::Event(ModelEvent::Cancelled);
        }
        self.main = Main::Finished;
        self.tasks.clear();
        if self.running.is_empty() {
            return Step::Done;
        }
        let task_id = self.running.remove(0);
        Step::Event(ModelEvent::TaskNotification {
            task_id,
            status: TaskStatus::Stopped,
        })
    }

    fn idle(&self, wake: Option<Instant>) -> Step {
        match (self.main, wake) {
            (Main::Finished, None) => Step::Done,
            (_, w) => Step::Pending(w),
        }
    }

    fn next_task(&self) -> Option<usize> {
        (0..self.tasks.len()).min_by_key(|&i| (self.tasks[i].at, self.tasks[i].seq))
    }

    fn pop_task(&mut self) -> ModelEvent {
        let i = self.next_task().unwrap_or(0);
        let event = self.tasks.swap_remove(i).event;
        if let ModelEvent::TaskNotification { task_id, .. } = &event {
            self.running.retain(|r| r != task_id);
        }
        event
    }

    /// Runs main-stream directives at logical time `at` until one produces events, waits, or
    /// the message ends.
    fn advance(&mut self, at: Instant) {
        while self.ready.is_empty() {
            if self.network_host.is_some() {
                self.main = Main::AwaitNetwork;
                return;
            }
            if self.ended {
                self.main = Main::Finished;
                return;
            }
            let Some(d) = self.ops.pop_front() else {
                let ending = self.ending.take().unwrap_or_else(|| {
                    self.stop(if self.tools > 0 {
                        StopReason::ToolUse
                    } else {
                        StopReason::EndTurn
                    })
                });
                self.ready.push_back(ending);
                self.ended = true;
                return;
            };
            match d {
                Directive::Say(t) => self.push_text(&t),
                Directive::Tool { name, input } => {
                    let index = self.next_block;
                    self.next_block += 1;
                    let id = format!("{}_{}", self.tool_prefix, self.tools);
                    self.tools += 1;
                    self.ready
                        .push_back(ModelEvent::ToolUseStart { index, id, name });
                    self.ready.push_back(ModelEvent::InputJsonDelta {
                        index,
                        partial_json: input,
                    });
                    self.ready.push_back(ModelEvent::BlockStop { index });
                }
                Directive::Sleep(ms) => {
                    self.main = Main::At(at + Duration::from_millis(ms));
                    return;
                }
                Directive::Task { id, steps, ms } => {
                    self.ready.push_back(ModelEvent::TaskStarted {
                        task_id: id.clone(),
                        description: format!("scripted task {id}"),
                    });
                    for step in 1..=steps {
                        let due = at + Duration::from_millis(ms.saturating_mul(u64::from(step)));
                        self.schedule(
                            due,
                            ModelEvent::TaskProgress {
                                task_id: id.clone(),
                                step,
                            },
                        );
                    }
                    let end = at + Duration::from_millis(ms.saturating_mul(u64::from(steps)));
                    self.schedule(
                        end,
                        ModelEvent::TaskNotification {
                            task_id: id.clone(),
                            status: TaskStatus::Completed,
                        },
                    );
                    self.running.push(id);
                }
                Directive::Suggest(text) => self.ready.push_back(ModelEvent::Suggestion { text }),
                Directive::Cost(_) | Directive::Usage(..) => {}
                Directive::Error(category) => {
                    self.ops.clear();
                    self.ending = Some(ModelEvent::Failed {
                        category,
                        message: Some(format!("scripted error: {}", category.as_str())),
                    });
                }
                Directive::Network { host, port } => {
                    self.ready.push_back(ModelEvent::NetworkAccess {
                        host: host.clone(),
                        port,
                    });
                    // Main waits once this event is taken (see the top of the loop).
                    self.network_host = Some(host);
                    return;
                }
                Directive::History => {
                    let n = self.history;
                    self.push_text(&format!("history: {n} messages"));
                }
                Directive::Compact => self.ready.push_back(ModelEvent::Compact),
                Directive::System => {
                    let text = format!("system: {}", self.system.as_deref().unwrap_or("(none)"));
                    self.push_text(&text);
                }
                Directive::Json(value) => self.push_text(&value),
                Directive::LastToolResult => {
                    let text = format!(
                        "last tool result: {}",
                        self.last_tool_result.as_deref().unwrap_or("(none)")
                    );
                    self.push_text(&text);
                }
            }
        }
    }

    fn schedule(&mut self, at: Instant, event: ModelEvent) {
        self.seq += 1;
        self.tasks.push(Timed {
            at,
            seq: self.seq,
            event,
        });
    }

    /// One text block, streamed one word (with its trailing whitespace) per delta for its
    /// first [`WORD_DELTAS`] words; after those, each delta gathers whole words up to
    /// [`DELTA_BYTES`] bytes (PROFILE §8 "Memory": an 8 MB prompt of one-letter words is
    /// not four million events and allocations, and neither four million stream records).
    fn push_text(&mut self, text: &str) {
        let index = self.next_block;
        self.next_block += 1;
        self.reply_words += text.split_whitespace().count() as u64;
        self.ready.push_back(ModelEvent::TextStart { index });
        for piece in delta_pieces(text) {
            self.ready.push_back(ModelEvent::TextDelta {
                index,
                text: piece.to_owned(),
            });
        }
        self.ready.push_back(ModelEvent::BlockStop { index });
    }

    fn stop(&self, stop_reason: StopReason) -> ModelEvent {
        let usage = match (self.last_call, self.turn_usage) {
            (true, Some((i, o))) => Usage {
                input_tokens: i,
                output_tokens: o,
                ..Usage::default()
            },
            (false, Some(_)) => Usage::default(),
            (_, None) => Usage {
                input_tokens: if self.first_call {
                    self.prompt_words
                } else {
                    0
                },
                output_tokens: self.reply_words,
                ..Usage::default()
            },
        };
        let cost = match self.turn_cost {
            Some(c) if self.last_call => Some(c),
            Some(_) => Some(0.0),
            None => None,
        };
        ModelEvent::MessageStop {
            stop_reason,
            usage,
            cost,
        }
    }
}

/// A text block's first this many words are one delta each.
pub const WORD_DELTAS: usize = 4096;
/// After [`WORD_DELTAS`] words, a delta gathers whole words while it is shorter than this
/// (a single longer word is one delta of its own).
pub const DELTA_BYTES: usize = 4096;

/// The deltas of one text block: [`word_pieces`], the first [`WORD_DELTAS`] one each, then
/// runs of consecutive pieces of up to [`DELTA_BYTES`] bytes. Concatenated they give `text`.
fn delta_pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut words = word_pieces(text).peekable();
    let mut count = 0usize;
    // Pieces are consecutive slices of `text`: `start` is where the next one begins.
    let mut start = 0usize;
    std::iter::from_fn(move || {
        let mut end = start + words.next()?.len();
        count += 1;
        if count > WORD_DELTAS {
            while let Some(next) = words.peek() {
                if end - start + next.len() > DELTA_BYTES {
                    break;
                }
                end += next.len();
                words.next();
            }
        }
        let piece = &text[start..end];
        start = end;
        Some(piece)
    })
}

/// Splits `text` into pieces that each end after a run of whitespace (the last may not), so
/// concatenating them gives `text` back.
fn word_pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut seen_word = false;
        let mut end = rest.len();
        let mut in_space = false;
        for (i, c) in rest.char_indices() {
            if c.is_whitespace() {
                in_space = true;
            } else if in_space && seen_word {
                end = i;
                break;
            } else {
                seen_word = true;
                in_space = false;
            }
        }
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests;
