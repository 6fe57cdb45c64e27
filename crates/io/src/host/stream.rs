//! What both clients do with the agent's output bytes and its requests, written once.
//!
//! Owns: the read side of both clients without their I/O ([`Output`]), on the crate's one
//! read side [`Deframer`] (the buffer each read fills, lent to the framer without a copy and
//! filled again once its lines are decoded; the framing), decoding each output line once into an owned record (an undecodable line
//! becomes an error item in its place, never a silent loss), routing what the client answers
//! itself ([`Route`]: control responses, agent requests, cancellations, upload
//! acknowledgements), handing the other records to the receiver a read's worth at a time, and
//! end of output (WIRE-EOF-001, then WIRE-008). Also the host's answers to agent → host
//! control requests: `can_use_tool` goes to the callback, anything else gets the generic
//! unsupported-control error (PROFILE §5). Never reads, writes, spawns or blocks: each
//! client's loop does the read and owns the channel.

use super::error::HostError;
use super::permission::{decision, PermissionAnswer, ToolPermissionRequest};
use crate::Deframer;
use agentx_wire::encode::Panicked;
use agentx_wire::frame::Reader;
use agentx_wire::json::Parser;
use agentx_wire::wire::grammar::NonEmpty;
use agentx_wire::wire::import::{ImportRejected, ImportResult};
use agentx_wire::wire::{
    ControlOutcome, ControlRequest, ControlRequestBody, ControlResponse, InputRecord, OutputRecord,
    PeerProfile, UserContent, UserMessage, UserRecord,
};

/// One item of the record stream: a decoded record, or why a line could not be decoded.
pub type RecordItem = Result<OutputRecord<'static>, HostError>;

/// What an upload's waiter is told: the agent's import result or its rejection.
pub(crate) type ImportEvent = Result<ImportResult<'static>, ImportRejected<'static>>;

/// Bytes asked of one read (a pipe hands at most its capacity, 64 KiB by default).
const READ_SIZE: usize = 256 << 10;

/// What a client does with the records it answers itself; the read side calls these in
/// output order, after handing over every record before them.
pub(crate) trait Route {
    /// A `control_response` to one of the host's calls (WIRE-006..009).
    fn control_response(&self, response: &ControlResponse<'_>);
    /// An agent → host control request (`can_use_tool` or another subtype).
    fn control_request(&self, request: ControlRequest<'static>);
    /// The agent withdrew one of its requests (WIRE-007).
    fn control_cancel(&self, request_id: &str);
    /// An upload's acknowledgement (the record also stays in the stream).
    fn import(&self, upload_id: &str, event: ImportEvent);
    /// The output ended: pending calls are rejected (WIRE-008), nothing new is answered.
    fn end(&self);
}

/// The read side of a client: output bytes in, records routed or handed over in batches.
///
/// Records go to the receiver a read's worth at a time: one channel message, and at most one
/// wake-up of a waiting receiver, per read instead of per record (on a `stream_event`-heavy
/// session the per-record hand-over cost more CPU than decoding). Order is kept: a record the
/// client answers itself (a control response resolving a waiter, an agent request starting a
/// callback, an upload result) first hands over the records before it, so whoever is woken by
/// it finds them already in the stream.
pub(crate) struct Output {
    /// The read buffers (`READ_SIZE` bytes) and the framer.
    deframer: Deframer,
    parser: Parser,
    /// Records for the stream since the last hand-over.
    batch: Vec<RecordItem>,
    /// How closely the output is held to this profile's tables.
    profile: PeerProfile,
}

impl Output {
    pub(crate) fn new(max_line: usize, profile: PeerProfile) -> Self {
        Output {
            deframer: Deframer::new(Reader::with_max_line(max_line), READ_SIZE),
            parser: Parser::new(),
            batch: Vec::new(),
            profile,
        }
    }

    /// The buffer the next read fills: the previous read's, once the framer let it go (every
    /// line of it was decoded and a partial tail copied out), else a fresh one.
    pub(crate) fn buffer(&mut self) -> &mut [u8] {
        self.deframer.buffer()
    }

    /// The first `n` bytes of [`Output::buffer`] were read: every complete line is decoded
    /// and routed; the stream's records are handed over.
    pub(crate) fn filled(
        &mut self,
        n: usize,
        route: &impl Route,
        hand_over: &mut impl FnMut(Vec<RecordItem>),
    ) {
        if n == 0 {
            // End of input is `finish`'s (it also ends the routes).
            return;
        }
        self.deframer.filled(n);
        self.drain(route, hand_over);
        self.hand_over(hand_over);
    }

    /// One read's outcome, as both clients' loops get it (`Err(Panicked)`: the caller's reader
    /// panicked, contained, WIRE-015): its bytes decoded and routed, a retry after
    /// `Interrupted`, or the failure queued as the stream's last item. `true` when the output
    /// ended (end of input or a failure): the caller lets the reader go, then calls
    /// [`Output::finish`].
    pub(crate) fn took(
        &mut self,
        read: Result<std::io::Result<usize>, Panicked>,
        route: &impl Route,
        hand_over: &mut impl FnMut(Vec<RecordItem>),
    ) -> bool {
        match read {
            Ok(Ok(0)) => true,
            Ok(Ok(n)) => {
                self.filled(n, route, hand_over);
                false
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => false,
            Ok(Err(e)) => {
                self.failed(e);
                true
            }
            Err(Panicked) => {
                self.failed(std::io::ErrorKind::Other.into());
                true
            }
        }
    }

    /// A read failed: the error is the stream's last item before the end. Only its kind is
    /// kept: the reader may be the caller's, and its error value is dropped unformatted
    /// (WIRE-015).
    fn failed(&mut self, e: std::io::Error) {
        let kind = e.kind();
        agentx_wire::encode::discard_foreign(e);
        self.batch.push(Err(HostError::Io(kind.into())));
    }

    /// The output ended: the unterminated tail is dispatched before pending requests are
    /// rejected (WIRE-EOF-001, then WIRE-008).
    pub(crate) fn finish(
        &mut self,
        route: &impl Route,
        hand_over: &mut impl FnMut(Vec<RecordItem>),
    ) {
        self.deframer.finish();
        self.drain(route, hand_over);
        self.hand_over(hand_over);
        route.end();
    }

    fn drain(&mut self, route: &impl Route, hand_over: &mut impl FnMut(Vec<RecordItem>)) {
        while let Some(line) = self.deframer.next_line() {
            let record = match line {
                Err(e) => Err(HostError::Decode {
                    line: e.line(),
                    error: e.into(),
                }),
                Ok(line) => {
                    OutputRecord::decode_line_as(line.as_bytes(), &mut self.parser, self.profile)
                        .map_err(|e| HostError::Decode {
                            line: line.number(),
                            error: e.into(),
                        })
                }
            };
            match record {
                Ok(r) if answered_by_client(&r) => {
                    let r = r.into_owned();
                    if !self.batch.is_empty() {
                        hand_over(std::mem::take(&mut self.batch));
                    }
                    if let Some(r) = dispatch(r, route) {
                        self.batch.push(Ok(r));
                    }
                }
                Ok(r) => self.batch.push(Ok(r.into_owned())),
                Err(e) => self.batch.push(Err(e)),
            }
        }
    }

    /// Hands over the records collected so far; the next batch starts with room for as many
    /// (no regrowth copies on a steady stream).
    fn hand_over(&mut self, hand_over: &mut impl FnMut(Vec<RecordItem>)) {
        if !self.batch.is_empty() {
            let room = self.batch.len();
            hand_over(std::mem::replace(&mut self.batch, Vec::with_capacity(room)));
        }
    }
}

/// Records the client acts on itself (routing looks at nothing else).
fn answered_by_client(r: &OutputRecord<'_>) -> bool {
    matches!(
        r,
        OutputRecord::ControlResponse(_)
            | OutputRecord::ControlRequest(_)
            | OutputRecord::ControlCancelRequest(_)
            | OutputRecord::AttachmentImportResult(_)
            | OutputRecord::AttachmentImportRejected(_)
    )
}

/// Gives `route` what the client answers; returns what also goes to the record stream.
fn dispatch(record: OutputRecord<'static>, route: &impl Route) -> Option<OutputRecord<'static>> {
    match record {
        // Known-late after a timeout (WIRE-007), duplicate or orphan (PERM-050): ignored there.
        OutputRecord::ControlResponse(r) => route.control_response(&r),
        OutputRecord::ControlRequest(r) => route.control_request(r),
        OutputRecord::ControlCancelRequest(c) => route.control_cancel(c.request_id.as_str()),
        OutputRecord::AttachmentImportResult(ref r) => {
            route.import(r.upload_id.as_str(), Ok(r.clone()));
            return Some(record);
        }
        OutputRecord::AttachmentImportRejected(ref r) => {
            route.import(r.upload_id.as_str(), Err(r.clone()));
            return Some(record);
        }
        other => return Some(other),
    }
    None
}

/// The user record `send_text` sends: the legacy string form to an agent of this profile;
/// the object form `{"role":"user","content":...}` to a CLI of the Claude Code family, which
/// refuses the string (`Expected message role 'user'`). The text is borrowed, not copied.
pub(crate) fn text_record(text: &str, profile: PeerProfile) -> UserRecord<'_> {
    let mut record = UserRecord::text(text);
    if profile == PeerProfile::Lenient {
        record.message = UserMessage::Object {
            versioned: false,
            content: UserContent::Text(text.into()),
        };
    }
    record
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
                // PROFILE §5: the one text, its echo bounded to 64 bytes.
                error: agentx_wire::wire::responses::unsupported_control_request(
                    other.subtype_name(),
                )
                .into(),
                pending_permission_requests: None,
            },
        }))),
    }
}

/// The deny sent at once for a permission request over the host's bound of pending ones
/// (`MAX_PENDING_PERMISSIONS`).
pub(crate) fn too_many(request: &ToolPermissionRequest) -> Option<InputRecord<'static>> {
    let denied = PermissionAnswer::deny(super::permission::TOO_MANY_PERMISSION_REQUESTS);
    answer(request, denied)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Records what the read side routed, and every hand-over, in one log.
    #[derive(Default)]
    struct Log(RefCell<Vec<String>>);

    impl Route for Log {
        fn control_response(&self, r: &ControlResponse<'_>) {
            self.0
                .borrow_mut()
                .push(format!("response {}", r.request_id.as_str()));
        }
        fn control_request(&self, r: ControlRequest<'static>) {
            self.0
                .borrow_mut()
                .push(format!("request {}", r.request_id.as_str()));
        }
        fn control_cancel(&self, id: &str) {
            self.0.borrow_mut().push(format!("cancel {id}"));
        }
        fn import(&self, upload_id: &str, event: ImportEvent) {
            self.0
                .borrow_mut()
                .push(format!("import {upload_id} {}", event.is_ok()));
        }
        fn end(&self) {
            self.0.borrow_mut().push("end".into());
        }
    }

    fn event(i: usize) -> String {
        format!(
            r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"w{i} "}}}},"parent_tool_use_id":null,"uuid":"3f1e7948-5c1f-4c1f-8e2c-{i:012x}","session_id":"93ba9bd5-b18d-4283-afcb-95d00a53b0a9"}}"#
        )
    }

    /// Feeds `reads` as successive reads; returns the log (hand-overs as `batch <types>`).
    fn run(reads: &[&[u8]], out: &mut Output) -> Vec<String> {
        let log = Log::default();
        let mut hand_over = |items: Vec<RecordItem>| {
            let types: Vec<String> = items
                .iter()
                .map(|i| match i {
                    Ok(r) => match r {
                        OutputRecord::StreamEvent(e) => format!("e:{}", e.uuid.as_str()),
                        r => r.record_type().to_owned(),
                    },
                    Err(e) => format!("error({e})"),
                })
                .collect();
            log.0
                .borrow_mut()
                .push(format!("batch {}", types.join(",")));
        };
        for bytes in reads {
            let buf = out.buffer();
            buf[..bytes.len()].copy_from_slice(bytes);
            out.filled(bytes.len(), &log, &mut hand_over);
        }
        out.finish(&log, &mut hand_over);
        log.0.into_inner()
    }

    #[test]
    fn a_record_the_client_answers_is_routed_after_the_records_before_it_are_handed_over() {
        let text = format!(
            "{}\n{}\n{}\nnot json\n{}\n",
            event(1),
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"host_req_1"}}"#,
            event(2),
            r#"{"type":"attachment_import_rejected","version":1,"upload_id":"upl_x","status":"rejected","terminal":false,"reason":"schema_invalid"}"#,
        );
        let log = run(
            &[text.as_bytes()],
            &mut Output::new(1 << 20, PeerProfile::Strict),
        );
        let uuid = |i: usize| format!("3f1e7948-5c1f-4c1f-8e2c-{i:012x}");
        assert_eq!(
            log,
            [
                format!("batch e:{}", uuid(1)),
                "response host_req_1".to_owned(),
                // The bad line is an error item in its place (line 4), never a loss.
                format!(
                    "batch e:{},error(agent output line 4: {})",
                    uuid(2),
                    OutputRecord::decode_line(b"not json", &mut Parser::new()).unwrap_err()
                ),
                "import upl_x false".to_owned(),
                // An upload acknowledgement also stays in the stream.
                "batch attachment_import_rejected".to_owned(),
                "end".to_owned(),
            ]
        );
    }

    #[test]
    fn the_read_buffer_is_reused_and_a_line_split_across_reads_decodes_once() {
        let a = event(1);
        let b = event(2);
        let text = format!("{a}\n{b}\n{}", event(3)); // the last line ends at EOF (WIRE-EOF-001)
        let cut = a.len() + 1 + 40; // inside the second record
        let mut out = Output::new(1 << 20, PeerProfile::Strict);
        let first = out.buffer().as_ptr();
        let log = run(
            &[&text.as_bytes()[..cut], &text.as_bytes()[cut..]],
            &mut out,
        );
        let uuid = |i: usize| format!("3f1e7948-5c1f-4c1f-8e2c-{i:012x}");
        assert_eq!(
            log,
            [
                format!("batch e:{}", uuid(1)),
                format!("batch e:{}", uuid(2)),
                format!("batch e:{}", uuid(3)),
                "end".to_owned(),
            ]
        );
        // Every line of both reads was decoded and the tail copied out: the same buffer comes
        // back for the next read, no allocation or copy per read.
        assert_eq!(out.buffer().as_ptr(), first);
        assert_eq!(out.buffer().len(), READ_SIZE);
    }
}
