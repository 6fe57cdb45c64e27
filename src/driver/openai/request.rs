//! The Chat Completions request body (PROFILE §14), written with our own JSON writer. Pure.
//!
//! Owns: `model`, `"stream": true`, `stream_options.include_usage`, `reasoning_effort` (the
//! provider's `default_effort`), `messages` from the model interface's conversation and
//! `tools` as function tools with JSON-schema parameters. Assistant blocks sharing a message
//! id form one assistant message (texts joined, `tool_use` blocks as `tool_calls` in order),
//! followed by one `tool` message per call, in call order.
//!
//! Must never: put a credential in the body (keys travel in headers only); accept a tool
//! schema that is not one strict JSON object.

use crate::json;
use crate::model::{Block, Message, ModelRequest, ToolSpec};

/// Why a body could not be built: a tool's `input_schema` is not a strict JSON object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BodyError {
    /// The tool's name.
    pub tool: String,
}

/// The JSON body of `POST …/chat/completions` for `request`.
pub fn body(request: &ModelRequest) -> Result<Vec<u8>, BodyError> {
    let mut out = Vec::with_capacity(1024);
    out.extend_from_slice(b"{\"model\":");
    json::write_str(&mut out, &request.model);
    out.extend_from_slice(b",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    if let Some(effort) = &request.effort {
        out.extend_from_slice(b",\"reasoning_effort\":");
        json::write_str(&mut out, effort);
    }
    out.extend_from_slice(b",\"messages\":[");
    // PROFILE §15: the system message of every request comes first.
    if let Some(system) = &request.system {
        out.extend_from_slice(b"{\"role\":\"system\",\"content\":");
        json::write_str(&mut out, system);
        out.push(b'}');
        if !request.messages.is_empty() {
            out.push(b',');
        }
    }
    write_messages(&mut out, &request.messages);
    out.push(b']');
    if !request.tools.is_empty() {
        out.extend_from_slice(b",\"tools\":[");
        for (i, tool) in request.tools.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_tool(&mut out, tool)?;
        }
        out.push(b']');
    }
    out.push(b'}');
    Ok(out)
}

fn write_tool(out: &mut Vec<u8>, tool: &ToolSpec) -> Result<(), BodyError> {
    let doc = json::parse(tool.input_schema.as_bytes()).map_err(|_| BodyError {
        tool: tool.name.clone(),
    })?;
    let schema = doc.root();
    if schema.as_object().is_none() {
        return Err(BodyError {
            tool: tool.name.clone(),
        });
    }
    out.extend_from_slice(b"{\"type\":\"function\",\"function\":{\"name\":");
    json::write_str(out, &tool.name);
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

fn write_messages(out: &mut Vec<u8>, messages: &[Message]) {
    let mut first = true;
    let mut sep = |out: &mut Vec<u8>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
    };
    let mut i = 0;
    while i < messages.len() {
        match &messages[i] {
            Message::User { text, attachments } => {
                sep(out);
                out.extend_from_slice(b"{\"role\":\"user\",\"content\":");
                if attachments.is_empty() {
                    json::write_str(out, text);
                } else {
                    // The model interface carries attachment metadata, not bytes: the model
                    // sees one line per attachment, as the scripted model prints it (§9).
                    let mut content = text.clone();
                    for a in attachments {
                        content.push_str(&format!(
                            "\n[attachment {} {} {} {}]",
                            a.attachment_id, a.mime_type, a.size_bytes, a.sha256
                        ));
                    }
                    json::write_str(out, &content);
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
                write_assistant(out, &merged);
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
}

fn write_assistant(out: &mut Vec<u8>, m: &Assistant<'_>) {
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
            json::write_str(out, name);
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
    use crate::model::{Block, Message, ModelRequest, ToolSpec};

    fn request(messages: Vec<Message>, tools: Vec<ToolSpec>, effort: Option<&str>) -> ModelRequest {
        ModelRequest {
            turn: 1,
            index: 0,
            model: "gpt-x".into(),
            effort: effort.map(Into::into),
            messages: messages.into(),
            tools,
            system: None,
        }
    }

    fn user(t: &str) -> Message {
        Message::User {
            text: t.into(),
            attachments: vec![],
        }
    }

    #[test]
    fn profile_14_body_stream_options_effort_and_user_text() {
        let body = body(&request(vec![user("hi \"there\"")], vec![], Some("high"))).unwrap();
        assert_eq!(
            String::from_utf8(body).unwrap(),
            r#"{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"reasoning_effort":"high","messages":[{"role":"user","content":"hi \"there\""}]}"#
        );
        let body = body_text(&request(vec![user("x")], vec![], None));
        assert!(!body.contains("reasoning_effort") && !body.contains("tools"));
    }

    fn body_text(r: &ModelRequest) -> String {
        String::from_utf8(body(r).unwrap()).unwrap()
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
            body(&request(vec![], bad, None)),
            Err(BodyError { tool: "Bad".into() })
        );
    }

    #[test]
    fn attachments_become_metadata_lines() {
        let msgs = vec![Message::User {
            text: "see".into(),
            attachments: vec![crate::wire::AttachmentRef {
                attachment_id: "att_1".into(),
                kind: "image".into(),
                name: "a.png".into(),
                mime_type: "image/png".into(),
                size_bytes: 12,
                sha256: "ab".into(),
                storage_id: "blob_sha256_ab".into(),
            }],
        }];
        assert!(body_text(&request(msgs, vec![], None))
            .contains(r#""content":"see\n[attachment att_1 image/png 12 ab]""#));
    }
}
