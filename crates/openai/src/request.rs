//! The Chat Completions request body (PROFILE §14), written with our own JSON writer. Pure:
//! attachment bytes come through the model interface's [`BlobSource`].
//!
//! Owns: `model`, `"stream": true`, `stream_options.include_usage`, `reasoning_effort` (the
//! provider's `default_effort`), `messages` from the model interface's conversation and
//! `tools` as function tools with JSON-schema parameters. Assistant blocks sharing a message
//! id form one assistant message (texts joined, `tool_use` blocks as `tool_calls` in order),
//! followed by one `tool` message per call, in call order. A user message with attachments
//! is a `content` array of parts in block order: its text blocks as `text` parts, an image
//! as an `image_url` part (`data:<mime>;base64,…`), a PDF as a `file` part (`filename`,
//! `file_data` `data:application/pdf;base64,…`), an attachment the request does not carry
//! (over the limits of [`media::plan`], or an older one whose blob is gone) as a `text` part
//! holding its metadata line `[attachment <id> <mime> <size> <sha256>]` (PROFILE §9).
//!
//! Memory: the body is written once into a buffer allocated at its exact final size (the
//! length is known before any blob is read), and each blob goes from its pieces straight into
//! that buffer as base64 ([`media::Encoder`]): one encoded copy of the media, no raw copy.
//!
//! Must never: put a credential in the body (keys travel in headers only); accept a tool
//! schema that is not one strict JSON object; send a blob whose size or SHA-256 differs from
//! its manifest.

use agentx_core::model::{BlobSource, Block, Message, ModelRequest, ToolSpec, UserBlock};
use agentx_wire::json;
use agentx_wire::wire::AttachmentRef;

use super::media::{self, Candidate, RequestLimits};
use super::names::FunctionNames;

/// Why a body could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyError {
    /// A tool's `input_schema` is not a strict JSON object.
    Tool {
        /// The tool's name.
        tool: String,
    },
    /// The structured-output schema (PROFILE §16) is not a strict JSON object or boolean.
    OutputSchema,
    /// A blob of the current message is missing, or its size or SHA-256 differs from the
    /// manifest (PROFILE §14: the turn ends with `attachment <id> is unavailable`).
    Unavailable {
        /// The attachment's `attachment_id`.
        attachment_id: String,
    },
}

impl BodyError {
    /// The assistant text of the failure (PROFILE §14), for [`BodyError::Unavailable`].
    pub fn message(&self) -> Option<String> {
        match self {
            BodyError::Tool { .. } | BodyError::OutputSchema => None,
            BodyError::Unavailable { attachment_id } => {
                Some(format!("attachment {attachment_id} is unavailable"))
            }
        }
    }
}

/// A request body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Body {
    /// The JSON bytes.
    pub bytes: Vec<u8>,
    /// How many media parts (`image_url`, `file`) it carries.
    pub media: usize,
}

/// The JSON body of `POST …/chat/completions` for `request`, within the PROFILE §14 limits.
pub fn body(request: &ModelRequest, blobs: &dyn BlobSource) -> Result<Body, BodyError> {
    body_within(request, blobs, &RequestLimits::default())
}

/// [`body`] under other limits (tests of the edges).
pub fn body_within(
    request: &ModelRequest,
    blobs: &dyn BlobSource,
    limits: &RequestLimits,
) -> Result<Body, BodyError> {
    let attachments = conversation_attachments(&request.messages);
    // Every attachment as its metadata line: the base length (and the body, without media).
    let mut base = Vec::with_capacity(1024);
    write_body(&mut base, request, &mut |out, _, a| {
        fallback_part(out, a);
        Ok(())
    })?;
    let projectable: Vec<_> = attachments
        .iter()
        .enumerate()
        .filter(|(_, (a, _))| MediaPart::of(a).is_some())
        .collect();
    if projectable.is_empty() {
        return Ok(Body {
            bytes: base,
            media: 0,
        });
    }
    let base_len = base.len() as u64;
    drop(base);
    let mut scratch = Vec::new();
    let candidates: Vec<Candidate> = projectable
        .iter()
        .map(|(_, (a, current))| {
            scratch.clear();
            fallback_part(&mut scratch, a);
            let line = scratch.len() as u64;
            let part = MediaPart::of(a).map_or(0, |p| p.skeleton_len(a));
            let sent = part.saturating_add(media::encoded_len(a.size_bytes));
            Candidate {
                size: a.size_bytes,
                extra: (i128::from(sent) - i128::from(line))
                    .clamp(i64::MIN as i128, i64::MAX as i128) as i64,
                current: *current,
            }
        })
        .collect();
    let chosen = media::plan(&candidates, base_len, limits);
    let mut sent = vec![false; attachments.len()];
    // The final length when every chosen blob is read, plus room for an older one that falls
    // back to a metadata line longer than its part would have been (a tiny blob).
    let mut capacity = i128::from(base_len);
    for ((k, _), (c, on)) in projectable.iter().zip(candidates.iter().zip(&chosen)) {
        if *on {
            sent[*k] = true;
            capacity += i128::from(c.extra);
            if !c.current && c.extra < 0 {
                capacity -= i128::from(c.extra);
            }
        }
    }
    // The one allocation of the body, at its final size: no growth, no second copy.
    let mut out = Vec::with_capacity(usize::try_from(capacity).unwrap_or(usize::MAX));
    let mut media_parts = 0;
    write_body(&mut out, request, &mut |out, k, a| {
        let Some(part) = MediaPart::of(a).filter(|_| sent[k]) else {
            fallback_part(out, a);
            return Ok(());
        };
        let start = out.len();
        part.prefix(out, a);
        match media::append_blob(out, a, blobs) {
            Ok(()) => {
                out.extend_from_slice(b"\"}}");
                media_parts += 1;
                Ok(())
            }
            // PROFILE §14: a missing or changed blob of the current message ends the turn.
            Err(_) if attachments[k].1 => Err(BodyError::Unavailable {
                attachment_id: a.attachment_id.clone(),
            }),
            // An older one falls back to its metadata line, so the session can go on.
            Err(_) => {
                out.truncate(start);
                fallback_part(out, a);
                Ok(())
            }
        }
    })?;
    Ok(Body {
        bytes: out,
        media: media_parts,
    })
}

/// Every attachment of the conversation, oldest first, and whether it belongs to the current
/// message (the last user message).
fn conversation_attachments(messages: &[Message]) -> Vec<(&AttachmentRef, bool)> {
    let last_user = messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }));
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if let Message::User { attachments, .. } = m {
            out.extend(attachments.iter().map(|a| (a, Some(i) == last_user)));
        }
    }
    out
}

/// The media part an attachment becomes, by its (admitted, PROFILE §6a) MIME type.
#[derive(Clone, Copy)]
enum MediaPart {
    /// `image/png`, `image/jpeg`: an `image_url` part.
    Image,
    /// `application/pdf`: a `file` part.
    Pdf,
}

impl MediaPart {
    fn of(a: &AttachmentRef) -> Option<MediaPart> {
        match a.mime_type.as_str() {
            "image/png" | "image/jpeg" => Some(MediaPart::Image),
            "application/pdf" => Some(MediaPart::Pdf),
            _ => None,
        }
    }

    /// Everything of the part before the base64.
    fn prefix(self, out: &mut Vec<u8>, a: &AttachmentRef) {
        match self {
            MediaPart::Image => {
                out.extend_from_slice(b"{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:");
                out.extend_from_slice(a.mime_type.as_bytes());
                out.extend_from_slice(b";base64,");
            }
            MediaPart::Pdf => {
                out.extend_from_slice(b"{\"type\":\"file\",\"file\":{\"filename\":");
                json::write_str(out, &a.name);
                out.extend_from_slice(b",\"file_data\":\"data:application/pdf;base64,");
            }
        }
    }

    /// The part's length without its base64: the prefix and the closing `"}}`.
    fn skeleton_len(self, a: &AttachmentRef) -> u64 {
        let mut s = Vec::new();
        self.prefix(&mut s, a);
        s.len() as u64 + 3
    }
}

/// The metadata line of an attachment the request does not carry, as a `text` part (§9).
fn fallback_part(out: &mut Vec<u8>, a: &AttachmentRef) {
    out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
    json::write_str(
        out,
        &format!(
            "[attachment {} {} {} {}]",
            a.attachment_id, a.mime_type, a.size_bytes, a.sha256
        ),
    );
    out.push(b'}');
}

/// Writes one attachment's part: `(out, index in the conversation, manifest)`.
type AttachmentWriter<'w> =
    dyn FnMut(&mut Vec<u8>, usize, &AttachmentRef) -> Result<(), BodyError> + 'w;

fn write_body(
    out: &mut Vec<u8>,
    request: &ModelRequest,
    attachment: &mut AttachmentWriter<'_>,
) -> Result<(), BodyError> {
    out.extend_from_slice(b"{\"model\":");
    json::write_str(out, &request.model);
    out.extend_from_slice(b",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    if let Some(effort) = &request.effort {
        out.extend_from_slice(b",\"reasoning_effort\":");
        json::write_str(out, effort);
    }
    out.extend_from_slice(b",\"messages\":[");
    // PROFILE §15: the system message of every request comes first.
    if let Some(system) = &request.system {
        out.extend_from_slice(b"{\"role\":\"system\",\"content\":");
        json::write_str(out, system);
        out.push(b'}');
        if !request.messages.is_empty() {
            out.push(b',');
        }
    }
    // PROFILE §16: OpenAI function names (an SDK MCP tool's may not fit as it is).
    let names = FunctionNames::of(&request.tools);
    write_messages(out, &request.messages, attachment, &names)?;
    out.push(b']');
    if !request.tools.is_empty() {
        out.extend_from_slice(b",\"tools\":[");
        for (i, tool) in request.tools.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_tool(out, tool, &names)?;
        }
        out.push(b']');
    }
    if let Some(schema) = &request.output_schema {
        write_response_format(out, schema)?;
    }
    out.push(b'}');
    Ok(())
}

/// PROFILE §16: the structured-output schema as `response_format` `json_schema`. `strict` is
/// false: OpenAI's strict mode accepts only a subset of JSON Schema (every property required,
/// `additionalProperties: false` everywhere), and agentx validates the answer itself.
fn write_response_format(out: &mut Vec<u8>, schema: &str) -> Result<(), BodyError> {
    let doc = json::parse(schema.as_bytes()).map_err(|_| BodyError::OutputSchema)?;
    let root = doc.root();
    if root.as_object().is_none() && root.as_bool().is_none() {
        return Err(BodyError::OutputSchema);
    }
    out.extend_from_slice(
        b",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"structured_output\",\"strict\":false,\"schema\":",
    );
    json::write_value(out, root);
    out.extend_from_slice(b"}}");
    Ok(())
}

fn write_tool(out: &mut Vec<u8>, tool: &ToolSpec, names: &FunctionNames) -> Result<(), BodyError> {
    let doc = json::parse(tool.input_schema.as_bytes()).map_err(|_| BodyError::Tool {
        tool: tool.name.clone(),
    })?;
    let schema = doc.root();
    if schema.as_object().is_none() {
        return Err(BodyError::Tool {
            tool: tool.name.clone(),
        });
    }
    out.extend_from_slice(b"{\"type\":\"function\",\"function\":{\"name\":");
    json::write_str(out, &names.function(&tool.name));
    out.extend_from_slice(b",\"description\":");
    json::write_str(out, &tool.description);
    out.extend_from_slice(b",\"parameters\":");
    json::write_value(out, schema);
    out.extend_from_slice(b"}}");
    Ok(())
}

/// One assistant message of the request: the merged blocks of one `message_id`.
#[derive(Default)]
struct Assistant<'m> {
    id: Option<&'m str>,
    text: String,
    calls: Vec<(&'m str, &'m str, &'m str)>,
}

fn write_messages(
    out: &mut Vec<u8>,
    messages: &[Message],
    attachment: &mut AttachmentWriter<'_>,
    names: &FunctionNames,
) -> Result<(), BodyError> {
    let mut first = true;
    let mut sep = |out: &mut Vec<u8>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
    };
    // The index of the next attachment in the conversation.
    let mut k = 0;
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User {
                text, attachments, ..
            } => {
                sep(out);
                out.extend_from_slice(b"{\"role\":\"user\",\"content\":");
                if attachments.is_empty() {
                    json::write_str(out, text);
                } else {
                    // PROFILE §14: the parts in block order.
                    out.push(b'[');
                    let mut first_part = true;
                    for part in messages[i].user_parts().into_iter().flatten() {
                        if matches!(part, UserBlock::Text("")) {
                            continue;
                        }
                        if !std::mem::take(&mut first_part) {
                            out.push(b',');
                        }
                        match part {
                            UserBlock::Text(t) => {
                                out.extend_from_slice(b"{\"type\":\"text\",\"text\":");
                                json::write_str(out, t);
                                out.push(b'}');
                            }
                            UserBlock::Attachment(a) => {
                                attachment(out, k, a)?;
                                k += 1;
                            }
                        }
                    }
                    out.push(b']');
                }
                out.push(b'}');
                i += 1;
            }
            Message::Assistant { .. } => {
                // Consecutive assistant messages with one id are one API message.
                let mut merged = Assistant::default();
                while let Some(Message::Assistant { message_id, blocks }) = messages.get(i) {
                    if merged.id.is_some_and(|id| id != message_id) {
                        break;
                    }
                    merged.id = Some(message_id);
                    for block in blocks {
                        match block {
                            Block::Text(t) => merged.text.push_str(t),
                            Block::ToolUse { id, name, input } => {
                                merged.calls.push((id, name, input))
                            }
                        }
                    }
                    i += 1;
                }
                sep(out);
                write_assistant(out, &merged, names);
                // Its tool results, in call order; results answering no call keep their order
                // after them.
                let start = i;
                while matches!(messages.get(i), Some(Message::ToolResult { .. })) {
                    i += 1;
                }
                let mut results: Vec<&Message> = messages[start..i].iter().collect();
                results.sort_by_key(|m| match m {
                    Message::ToolResult { tool_use_id, .. } => merged
                        .calls
                        .iter()
                        .position(|(id, _, _)| id == tool_use_id)
                        .unwrap_or(usize::MAX),
                    _ => usize::MAX,
                });
                for m in results {
                    sep(out);
                    write_tool_result(out, m);
                }
            }
            Message::ToolResult { .. } => {
                sep(out);
                write_tool_result(out, &messages[i]);
                i += 1;
            }
        }
    }
    Ok(())
}

fn write_assistant(out: &mut Vec<u8>, m: &Assistant<'_>, names: &FunctionNames) {
    out.extend_from_slice(b"{\"role\":\"assistant\",\"content\":");
    if m.text.is_empty() && !m.calls.is_empty() {
        out.extend_from_slice(b"null");
    } else {
        json::write_str(out, &m.text);
    }
    if !m.calls.is_empty() {
        out.extend_from_slice(b",\"tool_calls\":[");
        for (k, (id, name, input)) in m.calls.iter().enumerate() {
            if k > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"id\":");
            json::write_str(out, id);
            out.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
            json::write_str(out, &names.function(name));
            out.extend_from_slice(b",\"arguments\":");
            json::write_str(out, input);
            out.extend_from_slice(b"}}");
        }
        out.push(b']');
    }
    out.push(b'}');
}

fn write_tool_result(out: &mut Vec<u8>, m: &Message) {
    if let Message::ToolResult {
        tool_use_id,
        content,
        ..
    } = m
    {
        out.extend_from_slice(b"{\"role\":\"tool\",\"tool_call_id\":");
        json::write_str(out, tool_use_id);
        out.extend_from_slice(b",\"content\":");
        json::write_str(out, content);
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentx_core::model::{BlobUnavailable, Block, Message, ModelRequest, NoBlobs, ToolSpec};

    fn request(messages: Vec<Message>, tools: Vec<ToolSpec>, effort: Option<&str>) -> ModelRequest {
        ModelRequest {
            turn: 1,
            index: 0,
            model: "gpt-x".into(),
            effort: effort.map(Into::into),
            messages: messages.into(),
            tools,
            system: None,
            output_schema: None,
        }
    }

    fn user(t: &str) -> Message {
        Message::user(t)
    }

    #[test]
    fn profile_14_body_stream_options_effort_and_user_text() {
        let body = body(
            &request(vec![user("hi \"there\"")], vec![], Some("high")),
            &NoBlobs,
        )
        .unwrap();
        assert_eq!(body.media, 0);
        assert_eq!(
            String::from_utf8(body.bytes).unwrap(),
            r#"{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"reasoning_effort":"high","messages":[{"role":"user","content":"hi \"there\""}]}"#
        );
        let body = body_text(&request(vec![user("x")], vec![], None));
        assert!(!body.contains("reasoning_effort") && !body.contains("tools"));
    }

    fn body_text(r: &ModelRequest) -> String {
        String::from_utf8(body(r, &NoBlobs).unwrap().bytes).unwrap()
    }

    #[test]
    fn profile_14_blocks_of_one_message_id_form_one_assistant_message_then_tool_results_in_call_order(
    ) {
        let msgs = vec![
            user("go"),
            Message::Assistant {
                message_id: "msg_1".into(),
                blocks: vec![
                    Block::Text("let me ".into()),
                    Block::ToolUse {
                        id: "call_a".into(),
                        name: "Read".into(),
                        input: r#"{"file_path":"a"}"#.into(),
                    },
                ],
            },
            Message::Assistant {
                message_id: "msg_1".into(),
                blocks: vec![
                    Block::Text("look".into()),
                    Block::ToolUse {
                        id: "call_b".into(),
                        name: "Bash".into(),
                        input: r#"{"command":"ls"}"#.into(),
                    },
                ],
            },
            Message::ToolResult {
                tool_use_id: "call_b".into(),
                content: "files".into(),
                is_error: false,
            },
            Message::ToolResult {
                tool_use_id: "call_a".into(),
                content: "denied".into(),
                is_error: true,
            },
            Message::Assistant {
                message_id: "msg_2".into(),
                blocks: vec![Block::Text("done".into())],
            },
        ];
        let body = body_text(&request(msgs, vec![], None));
        assert_eq!(
            body,
            concat!(
                r#"{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":["#,
                r#"{"role":"user","content":"go"},"#,
                r#"{"role":"assistant","content":"let me look","tool_calls":["#,
                r#"{"id":"call_a","type":"function","function":{"name":"Read","arguments":"{\"file_path\":\"a\"}"}},"#,
                r#"{"id":"call_b","type":"function","function":{"name":"Bash","arguments":"{\"command\":\"ls\"}"}}]},"#,
                r#"{"role":"tool","tool_call_id":"call_a","content":"denied"},"#,
                r#"{"role":"tool","tool_call_id":"call_b","content":"files"},"#,
                r#"{"role":"assistant","content":"done"}]}"#
            )
        );
    }

    #[test]
    fn profile_16_output_schema_is_response_format_json_schema() {
        let mut r = request(vec![user("x")], vec![], None);
        r.output_schema = Some(r#"{"type":"object","required":["a"]}"#.into());
        assert!(body_text(&r).ends_with(concat!(
            r#""messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","#,
            r#""json_schema":{"name":"structured_output","strict":false,"schema":{"type":"object","required":["a"]}}}}"#
        )));
        r.output_schema = Some("[1]".into());
        assert_eq!(body(&r, &NoBlobs), Err(BodyError::OutputSchema));
    }

    #[test]
    fn tool_only_assistant_message_has_null_content() {
        let msgs = vec![Message::Assistant {
            message_id: "m".into(),
            blocks: vec![Block::ToolUse {
                id: "c".into(),
                name: "Bash".into(),
                input: "{}".into(),
            }],
        }];
        assert!(body_text(&request(msgs, vec![], None))
            .contains(r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c""#));
    }

    #[test]
    fn profile_14_tools_are_function_tools_with_schema_parameters() {
        let tools = vec![ToolSpec {
            name: "Read".into(),
            description: "Read a file".into(),
            input_schema: r#"{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}"#.into(),
        }];
        assert!(body_text(&request(vec![user("x")], tools, None)).ends_with(concat!(
            r#","tools":[{"type":"function","function":{"name":"Read","description":"Read a file","#,
            r#""parameters":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}}]}"#
        )));
        let bad = vec![ToolSpec {
            name: "Bad".into(),
            description: String::new(),
            input_schema: "[1]".into(),
        }];
        assert_eq!(
            body(&request(vec![], bad, None), &NoBlobs),
            Err(BodyError::Tool { tool: "Bad".into() })
        );
    }

    /// Blobs by storage id, handed over in pieces of 1000 bytes.
    #[derive(Default)]
    struct Blobs(std::collections::HashMap<String, Vec<u8>>);

    impl BlobSource for Blobs {
        fn read_blob(
            &self,
            storage_id: &str,
            limit: u64,
            sink: &mut dyn FnMut(&[u8]),
        ) -> Result<(), BlobUnavailable> {
            let b = self.0.get(storage_id).ok_or(BlobUnavailable)?;
            let end = (limit as usize + 1).min(b.len());
            for p in b[..end].chunks(1000) {
                sink(p);
            }
            Ok(())
        }
    }

    fn hex(bytes: &[u8]) -> String {
        use sha2::Digest;
        sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// A manifest for `bytes`, stored in `blobs`.
    fn stored(blobs: &mut Blobs, id: &str, mime: &str, name: &str, bytes: &[u8]) -> AttachmentRef {
        let sha = hex(bytes);
        let storage_id = format!("blob_sha256_{sha}");
        blobs.0.insert(storage_id.clone(), bytes.to_vec());
        AttachmentRef {
            attachment_id: id.into(),
            kind: if mime == "application/pdf" {
                "document"
            } else {
                "image"
            }
            .into(),
            name: name.into(),
            mime_type: mime.into(),
            size_bytes: bytes.len() as u64,
            sha256: sha,
            storage_id,
        }
    }

    fn b64(bytes: &[u8]) -> String {
        base64_simd::STANDARD.encode_to_string(bytes)
    }

    #[test]
    fn profile_14_image_and_pdf_parts_in_block_order_with_the_text_parts() {
        let mut blobs = Blobs::default();
        let png = b"\x89PNG fake image bytes".to_vec();
        let pdf = b"%PDF-1.7 fake".to_vec();
        let a = stored(&mut blobs, "att_png", "image/png", "s.png", &png);
        let b = stored(&mut blobs, "att_pdf", "application/pdf", "r\"1\".pdf", &pdf);
        let m = Message::user_blocks([
            UserBlock::Text("first"),
            UserBlock::Attachment(&a),
            UserBlock::Text("between"),
            UserBlock::Attachment(&b),
        ]);
        let out = body(&request(vec![m], vec![], None), &blobs).unwrap();
        assert_eq!(out.media, 2);
        let text = String::from_utf8(out.bytes.clone()).unwrap();
        let want = format!(
            concat!(
                r#"{{"role":"user","content":[{{"type":"text","text":"first"}},"#,
                r#"{{"type":"image_url","image_url":{{"url":"data:image/png;base64,{}"}}}},"#,
                r#"{{"type":"text","text":"between"}},"#,
                r#"{{"type":"file","file":{{"filename":"r\"1\".pdf","file_data":"data:application/pdf;base64,{}"}}}}]}}"#
            ),
            b64(&png),
            b64(&pdf)
        );
        assert!(text.contains(&want), "{text}");
        // The exact-size allocation: the body never grew past what was computed.
        assert_eq!(out.bytes.capacity(), out.bytes.len());
        assert!(agentx_wire::json::parse(&out.bytes).is_ok());
    }

    #[test]
    fn profile_14_a_missing_or_changed_blob_of_the_current_message_is_unavailable() {
        let mut blobs = Blobs::default();
        let a = stored(&mut blobs, "att_a", "image/png", "a.png", b"abcdef");
        let msgs = vec![Message::user_blocks([UserBlock::Attachment(&a)])];
        blobs.0.get_mut(&a.storage_id).unwrap()[0] ^= 1;
        let err = body(&request(msgs.clone(), vec![], None), &blobs).unwrap_err();
        assert_eq!(
            err,
            BodyError::Unavailable {
                attachment_id: "att_a".into()
            }
        );
        assert_eq!(err.message().unwrap(), "attachment att_a is unavailable");
        assert_eq!(
            body(&request(msgs, vec![], None), &NoBlobs).unwrap_err(),
            err
        );
    }

    #[test]
    fn profile_14_an_older_unavailable_blob_falls_back_to_its_metadata_line() {
        let mut blobs = Blobs::default();
        let old = stored(&mut blobs, "att_old", "image/png", "o.png", b"old bytes");
        let new = stored(&mut blobs, "att_new", "image/jpeg", "n.jpg", b"new bytes");
        blobs.0.remove(&old.storage_id);
        let msgs = vec![
            Message::user_blocks([UserBlock::Text("one"), UserBlock::Attachment(&old)]),
            Message::Assistant {
                message_id: "m".into(),
                blocks: vec![Block::Text("ok".into())],
            },
            Message::user_blocks([UserBlock::Attachment(&new)]),
        ];
        let out = body(&request(msgs, vec![], None), &blobs).unwrap();
        assert_eq!(out.media, 1);
        let text = String::from_utf8(out.bytes).unwrap();
        assert!(text.contains(&format!(
            r#"{{"type":"text","text":"[attachment att_old image/png 9 {}]"}}"#,
            old.sha256
        )));
        assert!(text.contains(&format!("data:image/jpeg;base64,{}", b64(b"new bytes"))));
    }

    #[test]
    fn profile_14_over_the_item_limit_the_oldest_fall_back_and_the_body_stays_exact() {
        let mut blobs = Blobs::default();
        let mut msgs = Vec::new();
        let mut refs = Vec::new();
        for i in 0..5 {
            let bytes = vec![i as u8; 300 + i];
            let a = stored(
                &mut blobs,
                &format!("att_{i}"),
                "image/png",
                "x.png",
                &bytes,
            );
            msgs.push(Message::user_blocks([UserBlock::Attachment(&a)]));
            refs.push(a);
        }
        let limits = RequestLimits {
            max_items: 3,
            ..RequestLimits::default()
        };
        let out = body_within(&request(msgs, vec![], None), &blobs, &limits).unwrap();
        assert_eq!(out.media, 3);
        assert_eq!(out.bytes.capacity(), out.bytes.len());
        let text = String::from_utf8(out.bytes).unwrap();
        for a in &refs[..2] {
            assert!(text.contains(&format!("[attachment {} ", a.attachment_id)));
        }
        for (i, a) in refs[2..].iter().enumerate() {
            assert!(!text.contains(&format!("[attachment {} ", a.attachment_id)));
            assert!(text.contains(&b64(&vec![(i + 2) as u8; 302 + i])));
        }
    }

    #[test]
    fn an_unknown_mime_type_is_never_projected() {
        let mut blobs = Blobs::default();
        let a = stored(&mut blobs, "att_1", "text/plain", "a.txt", b"hello");
        let msgs = vec![Message::user_blocks([
            UserBlock::Text("see"),
            UserBlock::Attachment(&a),
        ])];
        let out = body(&request(msgs, vec![], None), &blobs).unwrap();
        assert_eq!(out.media, 0);
        assert!(String::from_utf8(out.bytes).unwrap().contains(&format!(
            r#""content":[{{"type":"text","text":"see"}},{{"type":"text","text":"[attachment att_1 text/plain 5 {}]"}}]"#,
            a.sha256
        )));
    }
}
