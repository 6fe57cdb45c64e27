//! What both clients do with the agent's output bytes and its requests, written once.
//!
//! Owns: framing and decoding each output line once into an owned record (an undecodable line
//! becomes an error item in its place, never a silent loss), handing the records to the
//! receiver a read's worth at a time ([`Batch`]), and the host's answers to
//! agent → host control requests: `can_use_tool` goes to the callback, anything else gets the
//! generic unsupported-control error (PROFILE §5).

use super::client::RecordItem;
use super::error::HostError;
use super::permission::{decision, PermissionAnswer, ToolPermissionRequest};
use crate::frame::Reader;
use crate::json::Parser;
use crate::wire::grammar::NonEmpty;
use crate::wire::{
    ControlOutcome, ControlRequest, ControlRequestBody, ControlResponse, InputRecord, OutputRecord,
};

/// Output bytes in, decoded records out.
pub(crate) struct Decoder {
    reader: Reader,
    parser: Parser,
}

impl Decoder {
    pub(crate) fn new(max_line: usize) -> Self {
        Decoder {
            reader: Reader::with_max_line(max_line),
            parser: Parser::new(),
        }
    }

    pub(crate) fn push(&mut self, bytes: &[u8]) {
        self.reader.push_slice(bytes);
    }

    /// The output ended: the unterminated tail becomes a line (WIRE-EOF-001).
    pub(crate) fn finish(&mut self) {
        self.reader.finish();
    }

    /// Hands every complete line, decoded, to `each`, in order.
    pub(crate) fn drain(&mut self, mut each: impl FnMut(RecordItem)) {
        while let Some(item) = self.reader.next_line() {
            each(match item {
                Err(e) => Err(HostError::Decode {
                    line: e.line(),
                    reason: e.to_string(),
                }),
                Ok(line) => match OutputRecord::decode_line(line.as_bytes(), &mut self.parser) {
                    Err(e) => Err(HostError::Decode {
                        line: line.number(),
                        reason: e.to_string(),
                    }),
                    Ok(record) => Ok(record.into_owned()),
                },
            });
        }
    }
}

/// Records for the record stream, handed over a read's worth at a time: one channel message,
/// and at most one wake-up of a waiting receiver, per read of the agent's output instead of per
/// record (on a `stream_event`-heavy session the per-record hand-over cost more CPU than
/// decoding). Order is kept: a record whose routing acts outside the record stream (a control
/// response resolving a waiter, an agent request starting a callback, an upload result) first
/// hands over the records before it, so whoever is woken by it finds them already in the stream.
pub(crate) struct Batch {
    items: Vec<RecordItem>,
}

impl Batch {
    pub(crate) fn new() -> Self {
        Batch { items: Vec::new() }
    }

    /// Whether records before `item` must be handed over before it is routed.
    pub(crate) fn flush_before(item: &RecordItem) -> bool {
        matches!(
            item,
            Ok(OutputRecord::ControlResponse(_)
                | OutputRecord::ControlRequest(_)
                | OutputRecord::ControlCancelRequest(_)
                | OutputRecord::AttachmentImportResult(_)
                | OutputRecord::AttachmentImportRejected(_))
        )
    }

    pub(crate) fn push(&mut self, item: RecordItem) {
        self.items.push(item);
    }

    /// The records collected so far (`None` when there are none). The next batch starts with
    /// room for as many (records are 300-odd bytes: no regrowth copies on a steady stream).
    pub(crate) fn take(&mut self) -> Option<Vec<RecordItem>> {
        if self.items.is_empty() {
            return None;
        }
        let room = self.items.len();
        Some(std::mem::replace(&mut self.items, Vec::with_capacity(room)))
    }
}

/// An agent → host control request, as the client must handle it.
pub(crate) enum AgentRequest {
    /// A permission prompt for the callback.
    Permission(Box<ToolPermissionRequest>),
    /// A request answered at once (the generic unsupported-control error).
    Answer(Box<InputRecord<'static>>),
}

pub(crate) fn classify(r: ControlRequest<'static>) -> AgentRequest {
    let id = r.request_id.clone();
    match r.request {
        ControlRequestBody::CanUseTool(c) => {
            AgentRequest::Permission(Box::new(ToolPermissionRequest::new(id.as_str(), c)))
        }
        other => AgentRequest::Answer(Box::new(InputRecord::ControlResponse(ControlResponse {
            request_id: id,
            outcome: ControlOutcome::Error {
                error: format!("unsupported control request \"{}\"", other.subtype_name()).into(),
                pending_permission_requests: None,
            },
        }))),
    }
}

/// The `control_response` carrying the callback's decision (PERM-040..046).
pub(crate) fn answer(
    request: &ToolPermissionRequest,
    answer: PermissionAnswer,
) -> Option<InputRecord<'static>> {
    let rid = NonEmpty::new(request.request_id.clone())?;
    let d = decision(answer, &request.tool_use_id);
    Some(InputRecord::ControlResponse(ControlResponse::success_with(
        rid, &d,
    )))
}
