//! What both clients do with the agent's output bytes and its requests, written once.
//!
//! Owns: framing and decoding each output line once into an owned record (an undecodable line
//! becomes an error item in its place, never a silent loss), and the host's answers to
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
