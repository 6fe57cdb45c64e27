//! Chat Completions stream chunks to model events (PROFILE §14). Pure: one SSE event in,
//! [`ModelEvent`]s out.
//!
//! Owns: the block numbering (a text run or a tool call is one block, in order of first
//! appearance; a new block closes the open one), tool calls by their stream `index` (the first
//! piece carries `id` and `function.name`, later pieces append `function.arguments` as
//! `input_json_delta`; several parallel calls follow each other), `finish_reason` →
//! [`StopReason`] (`stop` → `end_turn`, or `tool_use` when the message holds complete tool
//! calls, as some local servers send `stop` after tool calls; `tool_calls` → `tool_use`;
//! `length` → `max_tokens`; `content_filter` → `refusal`), usage (`prompt_tokens` →
//! `input_tokens`, `completion_tokens` → `output_tokens`, `prompt_tokens_details.cached_tokens`
//! → `cache_read_input_tokens`) from the usage-only final chunk, the cost from the operator's
//! prices when declared and usage was reported (PROFILE §19; else null, WIRE-012), and the end
//! at `data: [DONE]`.
//!
//! A message cut by `length` while a tool call is open ends without that block's
//! [`ModelEvent::BlockStop`]: its arguments are truncated, the call is not complete, and it
//! must not run (PROFILE §14). Earlier, closed blocks stand.
//!
//! Failures: an `error` object in the stream (or an `event: error`) is `server_error` with the
//! provider's message; a chunk that is not a JSON object of this shape, a tool call without
//! id or name, arguments for a call that was already closed (interleaved calls) or a stream
//! that ends before `[DONE]` or without a `finish_reason` is `unknown`.
//!
//! A response is bounded (PROFILE is silent; issue 46): past [`MAX_RESPONSE_BYTES`] of text and
//! arguments, or at a tool call beyond [`MAX_TOOL_CALLS`], the message ends as if the server
//! had cut it for length (`max_tokens`, the open call dropped as truncated), and the rest of
//! the stream is not read. An assistant record cannot show more than one output line anyway.
//!
//! Must never: emit anything after the message's terminal event.

use agentx_core::model::{ModelEvent, StopReason, Usage};
use agentx_core::registry::Pricing;
use agentx_wire::json::{self, Object, Value};
use agentx_wire::wire::output::AssistantError;

use super::sse;

/// The most text and tool-call arguments one response may carry: four output lines' worth
/// (8,388,608 bytes each).
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// The most tool calls one response may make (each one becomes a tool run).
pub const MAX_TOOL_CALLS: usize = 128;

/// Whether the message goes on after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// More events may follow.
    Continue,
    /// A terminal event ([`ModelEvent::MessageStop`] or [`ModelEvent::Failed`]) was emitted.
    Finished,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Finish {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Open {
    Text(u32),
    /// Position in `calls`.
    Tool(usize),
}

#[derive(Debug)]
struct Call {
    api_index: u64,
    block: u32,
}

/// The state of one streamed message.
#[derive(Debug)]
pub struct Mapper {
    message_id: String,
    started: bool,
    finished: bool,
    next_block: u32,
    open: Option<Open>,
    calls: Vec<Call>,
    finish: Option<Finish>,
    usage: Usage,
    /// A chunk reported usage (PROFILE §19: a request that reported none costs `null`).
    usage_reported: bool,
    /// PROFILE §19: the operator's prices; `None` leaves every cost `null` (WIRE-012).
    pricing: Option<Pricing>,
    /// PROFILE §16: the request's renamed tools, mapped back.
    names: super::names::FunctionNames,
    /// Bytes of text and arguments so far ([`MAX_RESPONSE_BYTES`]).
    taken: usize,
    /// The response passed a bound: it ends as cut for length.
    cut: bool,
}

impl Mapper {
    /// A mapper for one response; `message_id` is agentx's id for it (PROFILE §14).
    pub fn new(message_id: String) -> Mapper {
        Mapper {
            message_id,
            started: false,
            finished: false,
            next_block: 0,
            open: None,
            calls: Vec::new(),
            finish: None,
            usage: Usage::default(),
            usage_reported: false,
            pricing: None,
            names: Default::default(),
            taken: 0,
            cut: false,
        }
    }

    /// The same mapper pricing the completed request with the operator's table (PROFILE §19).
    pub fn with_pricing(mut self, pricing: Option<Pricing>) -> Mapper {
        self.pricing = pricing;
        self
    }

    /// The same mapper reporting each call under the tool name its function name stands
    /// for (PROFILE §16, [`FunctionNames`](super::names::FunctionNames)).
    pub fn with_names(mut self, names: super::names::FunctionNames) -> Mapper {
        self.names = names;
        self
    }

    /// True when the message ended at a bound ([`MAX_RESPONSE_BYTES`], [`MAX_TOOL_CALLS`]):
    /// the response goes on unread.
    pub fn was_cut(&self) -> bool {
        self.cut
    }

    /// True once a terminal event was emitted.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Maps one SSE event.
    pub fn event(&mut self, event: &sse::Event, out: &mut Vec<ModelEvent>) -> Step {
        if self.finished {
            return Step::Finished;
        }
        if event.data == b"[DONE]" {
            return self.done(out);
        }
        let doc = match json::parse(&event.data) {
            Ok(doc) => doc,
            Err(_) => return self.fail(AssistantError::Unknown, None, out),
        };
        let Some(chunk) = doc.root().as_object() else {
            return self.fail(AssistantError::Unknown, None, out);
        };
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return self.fail(AssistantError::ServerError, error_message(error), out);
        }
        if event.name == "error" {
            return self.fail(AssistantError::ServerError, None, out);
        }
        match self.chunk(chunk, out) {
            Ok(()) if self.cut => {
                self.finish = Some(Finish::Length);
                self.done(out)
            }
            Ok(()) => Step::Continue,
            Err(()) => self.fail(AssistantError::Unknown, None, out),
        }
    }

    /// The byte stream ended. Before `[DONE]` that is a dropped stream: `unknown`.
    pub fn end_of_stream(&mut self, out: &mut Vec<ModelEvent>) -> Step {
        if self.finished {
            return Step::Finished;
        }
        self.fail(AssistantError::Unknown, None, out)
    }

    fn start(&mut self, out: &mut Vec<ModelEvent>) {
        if !self.started {
            self.started = true;
            out.push(ModelEvent::MessageStart {
                message_id: self.message_id.clone(),
            });
        }
    }

    fn chunk(&mut self, chunk: Object<'_, '_>, out: &mut Vec<ModelEvent>) -> Result<(), ()> {
        if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
            let usage = usage.as_object().ok_or(())?;
            self.usage.input_tokens = count(usage, "prompt_tokens")?;
            self.usage.output_tokens = count(usage, "completion_tokens")?;
            // PROFILE §19: cached prompt tokens fill `cache_read_input_tokens`.
            self.usage.cache_read_input_tokens =
                match usage.get("prompt_tokens_details").filter(|d| !d.is_null()) {
                    Some(details) => count(details.as_object().ok_or(())?, "cached_tokens")?,
                    None => 0,
                };
            self.usage_reported = true;
        }
        let Some(choices) = chunk.get("choices").filter(|c| !c.is_null()) else {
            return Ok(());
        };
        for choice in choices.as_array().ok_or(())?.iter() {
            let choice = choice.as_object().ok_or(())?;
            // One completion is asked for (no `n`): choice 0 is the message.
            match choice.get("index") {
                None => {}
                Some(i) if i.as_number().and_then(|n| n.as_u64()) == Some(0) => {}
                Some(_) => continue,
            }
            self.start(out);
            if let Some(delta) = choice.get("delta").filter(|d| !d.is_null()) {
                self.delta(delta.as_object().ok_or(())?, out)?;
            }
            if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
                let reason = reason.as_str().ok_or(())?;
                self.finish = Some(match &*reason.decode() {
                    "stop" => Finish::Stop,
                    "tool_calls" | "function_call" => Finish::ToolCalls,
                    "length" => Finish::Length,
                    "content_filter" => Finish::ContentFilter,
                    _ => Finish::Other,
                });
            }
        }
        Ok(())
    }

    fn delta(&mut self, delta: Object<'_, '_>, out: &mut Vec<ModelEvent>) -> Result<(), ()> {
        // `refusal` is the model's refusal text, shown like content.
        for field in ["content", "refusal"] {
            if let Some(text) = delta.get(field).filter(|t| !t.is_null()) {
                let text = text.as_str().ok_or(())?.decode();
                if !text.is_empty() {
                    self.text(text.into_owned(), out);
                }
            }
        }
        if let Some(calls) = delta.get("tool_calls").filter(|c| !c.is_null()) {
            for call in calls.as_array().ok_or(())?.iter() {
                self.tool_call(call.as_object().ok_or(())?, out)?;
            }
        }
        Ok(())
    }

    /// Counts `n` more bytes of the response: false (and the response is cut) past
    /// [`MAX_RESPONSE_BYTES`].
    fn take(&mut self, n: usize) -> bool {
        self.taken += n;
        self.cut |= self.taken > MAX_RESPONSE_BYTES;
        !self.cut
    }

    fn text(&mut self, text: String, out: &mut Vec<ModelEvent>) {
        if self.cut || !self.take(text.len()) {
            return;
        }
        let index = match self.open {
            Some(Open::Text(index)) => index,
            _ => {
                self.close_open(out);
                let index = self.new_block();
                self.open = Some(Open::Text(index));
                out.push(ModelEvent::TextStart { index });
                index
            }
        };
        out.push(ModelEvent::TextDelta { index, text });
    }

    fn tool_call(&mut self, call: Object<'_, '_>, out: &mut Vec<ModelEvent>) -> Result<(), ()> {
        if self.cut {
            return Ok(());
        }
        let function = match call.get("function").filter(|f| !f.is_null()) {
            Some(f) => Some(f.as_object().ok_or(())?),
            None => None,
        };
        let id = optional_str(call.get("id"))?;
        let api_index = match call.get("index") {
            Some(i) => i.as_number().and_then(|n| n.as_u64()).ok_or(())?,
            // Servers that omit `index`: a piece with an id starts the next call, any other
            // piece continues the last one.
            None if id.is_some() => self.calls.len() as u64,
            None => self.calls.last().map(|c| c.api_index).ok_or(())?,
        };
        let arguments = match function {
            Some(f) => optional_str(f.get("arguments"))?,
            None => None,
        };
        let position = match self.calls.iter().position(|c| c.api_index == api_index) {
            Some(p) => {
                if self.open != Some(Open::Tool(p))
                    && arguments.as_deref().is_some_and(|a| !a.is_empty())
                {
                    // Arguments for a call whose block is already closed.
                    return Err(());
                }
                p
            }
            None => {
                let name = match function {
                    Some(f) => optional_str(f.get("name"))?,
                    None => None,
                };
                let (Some(id), Some(name)) = (id, name) else {
                    return Err(());
                };
                if id.is_empty() || name.is_empty() {
                    return Err(());
                }
                self.close_open(out);
                if self.calls.len() == MAX_TOOL_CALLS {
                    // The calls so far are complete; this one is not made.
                    self.cut = true;
                    return Ok(());
                }
                let block = self.new_block();
                self.calls.push(Call { api_index, block });
                let p = self.calls.len() - 1;
                self.open = Some(Open::Tool(p));
                let name = self.names.tool(&name).to_string();
                out.push(ModelEvent::ToolUseStart {
                    index: block,
                    id,
                    name,
                });
                p
            }
        };
        if let Some(partial_json) = arguments.filter(|a| !a.is_empty()) {
            if !self.take(partial_json.len()) {
                // The open call's arguments are cut: it is dropped as truncated.
                return Ok(());
            }
            out.push(ModelEvent::InputJsonDelta {
                index: self.calls[position].block,
                partial_json,
            });
        }
        Ok(())
    }

    fn new_block(&mut self) -> u32 {
        let index = self.next_block;
        self.next_block += 1;
        index
    }

    fn close_open(&mut self, out: &mut Vec<ModelEvent>) {
        match self.open.take() {
            Some(Open::Text(index)) => out.push(ModelEvent::BlockStop { index }),
            Some(Open::Tool(p)) => out.push(ModelEvent::BlockStop {
                index: self.calls[p].block,
            }),
            None => {}
        }
    }

    fn done(&mut self, out: &mut Vec<ModelEvent>) -> Step {
        let Some(finish) = self.finish else {
            return self.fail(AssistantError::Unknown, None, out);
        };
        self.start(out);
        let open_tool = matches!(self.open, Some(Open::Tool(_)));
        let mut complete_calls = self.calls.len();
        if finish == Finish::Length && open_tool {
            // Truncated arguments: the call is not complete and is not run.
            self.open = None;
            complete_calls -= 1;
        } else {
            self.close_open(out);
        }
        let stop_reason = match finish {
            Finish::Stop | Finish::ToolCalls | Finish::Other if complete_calls > 0 => {
                StopReason::ToolUse
            }
            Finish::Stop | Finish::ToolCalls | Finish::Other => StopReason::EndTurn,
            Finish::Length => StopReason::MaxTokens,
            Finish::ContentFilter => StopReason::Refusal,
        };
        self.finished = true;
        // PROFILE §19: with the operator's prices, a completed request that reported usage
        // costs its sum; without prices or usage the cost is unknown (WIRE-012).
        let cost = match self.pricing {
            Some(p) if self.usage_reported => Some(p.cost(
                self.usage.input_tokens,
                self.usage.cache_read_input_tokens,
                self.usage.output_tokens,
            )),
            _ => None,
        };
        out.push(ModelEvent::MessageStop {
            stop_reason,
            usage: self.usage,
            cost,
        });
        Step::Finished
    }

    fn fail(
        &mut self,
        category: AssistantError,
        message: Option<String>,
        out: &mut Vec<ModelEvent>,
    ) -> Step {
        self.finished = true;
        out.push(ModelEvent::Failed { category, message });
        Step::Finished
    }
}

fn count(usage: Object<'_, '_>, name: &str) -> Result<u64, ()> {
    match usage.get(name) {
        None => Ok(0),
        Some(v) if v.is_null() => Ok(0),
        Some(v) => v.as_number().and_then(|n| n.as_u64()).ok_or(()),
    }
}

fn optional_str(v: Option<Value<'_, '_>>) -> Result<Option<String>, ()> {
    match v {
        None => Ok(None),
        Some(v) if v.is_null() => Ok(None),
        Some(v) => Ok(Some(v.as_str().ok_or(())?.decode().into_owned())),
    }
}

/// The provider's error text from an `error` value: `{"message": …}` or a bare string.
pub fn error_message(error: Value<'_, '_>) -> Option<String> {
    if let Some(s) = error.as_str() {
        return Some(s.decode().into_owned());
    }
    let message = error.as_object()?.get("message")?;
    Some(message.as_str()?.decode().into_owned())
}

/// PROFILE §19: an error body that says the context is too long: its error `code` is
/// `context_length_exceeded`, or its message says the maximum context length was exceeded.
pub fn context_length_exceeded(body: &[u8]) -> bool {
    let Ok(doc) = json::parse(body) else {
        return false;
    };
    let Some(error) = doc.root().as_object().and_then(|o| o.get("error")) else {
        return false;
    };
    let code = error
        .as_object()
        .and_then(|e| e.get("code"))
        .and_then(|c| c.as_str())
        .is_some_and(|c| c.eq_str("context_length_exceeded"));
    code || error_message(error).is_some_and(|m| {
        let m = m.to_ascii_lowercase();
        m.contains("maximum context length") || m.contains("context length exceeded")
    })
}

/// The provider's error text from an error response body, when it is Chat Completions'
/// `{"error": {"message": …}}` shape.
pub fn error_body_message(body: &[u8]) -> Option<String> {
    let doc = json::parse(body).ok()?;
    let error = doc.root().as_object()?.get("error")?;
    error_message(error)
}

#[cfg(test)]
mod tests;
