//! One model response as it reaches the host: `stream_event` records (message_start,
//! content_block_start/delta/stop, message_delta, message_stop) followed, per content block, by
//! the `assistant` record holding the finished block — the shape of a stream produced with
//! `--include-partial-messages`.
//!
//! Owns: the partial-message events and the `assistant` record. Never: writes tool results or
//! decides how many responses a turn has.

use super::content;
use super::records::{Gen, ToolCall};
use super::writer::Spelling;

/// Which content blocks one model response holds.
pub(crate) struct ResponsePlan {
    pub(crate) thinking: bool,
    pub(crate) text_tokens: usize,
    pub(crate) tools: usize,
}

impl Gen {
    fn event_head(&mut self) {
        self.out.raw("{\"type\":\"stream_event\",\"event\":");
    }

    /// `},"parent_tool_use_id":null,"session_id":S,"uuid":U}` after the event object.
    fn event_tail(&mut self) {
        self.out.raw(",\"parent_tool_use_id\":null,\"session_id\":");
        self.out.quoted_uuid(self.session.0, self.session.1);
        self.out.next_key("uuid");
        self.out.uuid(&mut self.rng);
        self.out.raw("}\n");
    }

    fn block_start(&mut self, index: u64, block: &str) {
        self.event_head();
        self.out.raw("{\"type\":\"content_block_start\",\"index\":");
        self.out.u64(index);
        self.out.raw(",\"content_block\":");
        self.out.raw(block);
        self.out.byte(b'}');
        self.event_tail();
    }

    fn block_stop(&mut self, index: u64) {
        self.event_head();
        self.out.raw("{\"type\":\"content_block_stop\",\"index\":");
        self.out.u64(index);
        self.out.byte(b'}');
        self.event_tail();
    }

    /// Deltas of `kind` (`text_delta` with member `text`, ...) for the pieces of `self.text`
    /// delimited by `self.cuts`.
    fn deltas(&mut self, index: u64, kind: &str, member: &str) {
        let text = std::mem::take(&mut self.text);
        let cuts = std::mem::take(&mut self.cuts);
        for (i, &from) in cuts.iter().enumerate() {
            let to = cuts.get(i + 1).copied().unwrap_or(text.len());
            let piece = text.get(from..to).unwrap_or("");
            self.event_head();
            self.out.raw("{\"type\":\"content_block_delta\",\"index\":");
            self.out.u64(index);
            self.out.raw(",\"delta\":{\"type\":");
            self.out.string(kind);
            self.out.byte(b',');
            self.out.key(member);
            self.out.string(piece);
            self.out.raw("}}");
            self.event_tail();
        }
        self.text = text;
        self.cuts = cuts;
    }

    fn assistant_head(&mut self, msg_id: &[u8]) {
        self.out
            .raw("{\"type\":\"assistant\",\"message\":{\"model\":");
        self.out.string(self.model);
        self.out.raw(",\"id\":\"");
        self.out.buf.extend_from_slice(msg_id);
        self.out
            .raw("\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[");
    }

    fn assistant_tail(&mut self) {
        self.out
            .raw("],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":");
        self.usage_small();
        self.out.byte(b'}');
        self.event_tail();
    }

    fn usage_small(&mut self) {
        self.out.raw("{\"input_tokens\":");
        self.out.u64(self.rng.range(1, 40) as u64);
        self.out.raw(",\"cache_read_input_tokens\":");
        self.out.u64(self.rng.log_size(1, 200_000) as u64);
        self.out.raw(",\"output_tokens\":");
        self.out.u64(self.rng.log_size(1, 4000) as u64);
        self.out.raw(",\"service_tier\":\"standard\"}");
    }

    /// One model response; returns through `calls` the tool calls it made.
    pub(crate) fn response(&mut self, plan: &ResponsePlan, calls: &mut Vec<ToolCall>) {
        let mut msg_id = [b'0'; 30];
        msg_id[..6].copy_from_slice(b"msg_01");
        const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        for b in msg_id.iter_mut().skip(6) {
            *b = *self.rng.pick(BASE62);
        }
        self.choose_spelling();
        self.event_head();
        self.out
            .raw("{\"type\":\"message_start\",\"message\":{\"id\":\"");
        self.out.buf.extend_from_slice(&msg_id);
        self.out
            .raw("\",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
        self.out.string(self.model);
        self.out
            .raw(",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":");
        self.usage_small();
        self.out.raw("}}");
        self.event_tail();

        let mut index = 0u64;
        if plan.thinking {
            self.text.clear();
            self.cuts.clear();
            let n = self.rng.range(10, 80);
            content::tokens(&mut self.rng, n, &mut self.text, &mut self.cuts);
            self.block_start(
                index,
                "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}",
            );
            self.deltas(index, "thinking_delta", "thinking");
            self.event_head();
            self.out.raw("{\"type\":\"content_block_delta\",\"index\":");
            self.out.u64(index);
            self.out
                .raw(",\"delta\":{\"type\":\"signature_delta\",\"signature\":\"");
            self.signature();
            self.out.raw("\"}}");
            self.event_tail();
            self.block_stop(index);
            self.assistant_head(&msg_id);
            self.out.raw("{\"type\":\"thinking\",\"thinking\":");
            self.out.string(&self.text);
            self.out.raw(",\"signature\":\"");
            self.signature();
            self.out.raw("\"}");
            self.assistant_tail();
            index += 1;
        }
        if plan.text_tokens > 0 {
            self.text.clear();
            self.cuts.clear();
            content::tokens(
                &mut self.rng,
                plan.text_tokens,
                &mut self.text,
                &mut self.cuts,
            );
            if self.rng.chance(300) {
                self.text.push_str("\n\n");
                content::prose(&mut self.rng, 2, &mut self.text);
            }
            self.block_start(index, "{\"type\":\"text\",\"text\":\"\"}");
            self.deltas(index, "text_delta", "text");
            self.block_stop(index);
            self.assistant_head(&msg_id);
            self.out.raw("{\"type\":\"text\",\"text\":");
            self.out.string(&self.text);
            self.out.byte(b'}');
            self.assistant_tail();
            index += 1;
        }
        for _ in 0..plan.tools {
            let call = self.new_tool_call();
            self.tool_input(&call);
            self.event_head();
            self.out.raw("{\"type\":\"content_block_start\",\"index\":");
            self.out.u64(index);
            self.out
                .raw(",\"content_block\":{\"type\":\"tool_use\",\"id\":");
            self.out.string(call.id_str());
            self.out.raw(",\"name\":");
            self.out.string(call.name);
            self.out.raw(",\"input\":{}}}");
            self.event_tail();
            // The input arrives as JSON text cut into pieces: strings inside strings.
            let input = std::mem::take(&mut self.input.buf);
            let json = std::str::from_utf8(&input).unwrap_or("{}");
            self.text.clear();
            self.text.push_str(json);
            self.cuts.clear();
            content::chunk_offsets(&mut self.rng, json, 16, 120, &mut self.cuts);
            self.deltas(index, "input_json_delta", "partial_json");
            self.block_stop(index);
            self.assistant_head(&msg_id);
            self.out.raw("{\"type\":\"tool_use\",\"id\":");
            self.out.string(call.id_str());
            self.out.raw(",\"name\":");
            self.out.string(call.name);
            self.out.raw(",\"input\":");
            self.out.buf.extend_from_slice(&input);
            self.out.byte(b'}');
            self.assistant_tail();
            self.input.buf = input;
            calls.push(call);
            index += 1;
        }
        self.event_head();
        self.out
            .raw("{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":");
        self.out.raw(if plan.tools > 0 {
            "\"tool_use\""
        } else {
            "\"end_turn\""
        });
        self.out
            .raw(",\"stop_sequence\":null},\"usage\":{\"output_tokens\":");
        self.out.u64(self.rng.log_size(1, 4000) as u64);
        self.out.raw("}}");
        self.event_tail();
        self.event_head();
        self.out.raw("{\"type\":\"message_stop\"}");
        self.event_tail();
        self.out.spelling = Spelling::Raw;
    }

    /// A base64-looking thinking signature (opaque to the host).
    fn signature(&mut self) {
        const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let n = self.rng.range(40, 160) * 4;
        for _ in 0..n {
            self.out.byte(*self.rng.pick(B64));
        }
    }
}
