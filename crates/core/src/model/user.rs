//! A user prompt as the model interface carries it: its text (the text blocks joined with
//! `\n`, what the scripted model reads, PROFILE §9), its attachments in order (WIRE-017
//! manifests, references a driver can read through [`super::BlobSource`]), and the block
//! order, so a provider can send text and attachment parts in block order (PROFILE §14).
//!
//! Owns the one mapping from a prompt's content blocks to a [`Message::User`] (the session's
//! live prompt and a resumed transcript's prompt both go through [`Message::user_blocks`]) and
//! the walk back over its parts ([`Message::user_parts`]).
//!
//! Must never: hold media bytes (a manifest is a reference; the bytes stay in the blob store).

use agentx_wire::wire::AttachmentRef;

use super::Message;

/// One element of a user prompt's block order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// A text block of this many bytes of the prompt's `text` (blocks are separated there by
    /// one `\n`).
    Text(usize),
    /// The next attachment of the prompt's `attachments`.
    Attachment,
}

/// One content block of a user prompt, borrowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserBlock<'a> {
    /// A text block.
    Text(&'a str),
    /// An attachment reference (the committed manifest).
    Attachment(&'a AttachmentRef),
}

impl Message {
    /// A text-only user prompt.
    pub fn user(text: impl Into<String>) -> Message {
        Message::User {
            text: text.into(),
            attachments: Vec::new(),
            layout: Vec::new(),
        }
    }

    /// A user prompt from its content blocks, in order.
    pub fn user_blocks<'a>(blocks: impl IntoIterator<Item = UserBlock<'a>>) -> Message {
        let mut text = String::new();
        let mut attachments = Vec::new();
        let mut layout = Vec::new();
        let mut texts = 0usize;
        for block in blocks {
            match block {
                UserBlock::Text(t) => {
                    if texts > 0 {
                        text.push('\n');
                    }
                    texts += 1;
                    text.push_str(t);
                    layout.push(Part::Text(t.len()));
                }
                UserBlock::Attachment(a) => {
                    attachments.push(a.clone());
                    layout.push(Part::Attachment);
                }
            }
        }
        if attachments.is_empty() {
            // Text only: the joined text is the whole prompt; no order to keep.
            layout.clear();
        }
        Message::User {
            text,
            attachments,
            layout,
        }
    }

    /// The blocks of a user prompt in block order (`None` for other messages). A prompt
    /// built without a layout is its text (when nonempty) followed by its attachments.
    pub fn user_parts(&self) -> Option<UserParts<'_>> {
        match self {
            Message::User {
                text,
                attachments,
                layout,
            } => Some(UserParts {
                text,
                attachments,
                layout,
                step: 0,
                text_at: 0,
                attachment: 0,
            }),
            _ => None,
        }
    }
}

/// The iterator of [`Message::user_parts`].
#[derive(Clone, Debug)]
pub struct UserParts<'a> {
    text: &'a str,
    attachments: &'a [AttachmentRef],
    layout: &'a [Part],
    step: usize,
    text_at: usize,
    attachment: usize,
}

impl<'a> Iterator for UserParts<'a> {
    type Item = UserBlock<'a>;

    fn next(&mut self) -> Option<UserBlock<'a>> {
        if self.layout.is_empty() {
            // No layout: the text first (when nonempty), then the attachments.
            if self.step == 0 {
                self.step = 1;
                if !self.text.is_empty() {
                    return Some(UserBlock::Text(self.text));
                }
            }
            let a = self.attachments.get(self.attachment)?;
            self.attachment += 1;
            return Some(UserBlock::Attachment(a));
        }
        let part = *self.layout.get(self.step)?;
        self.step += 1;
        match part {
            Part::Text(len) => {
                let start = self.text_at.min(self.text.len());
                let end = start.saturating_add(len).min(self.text.len());
                // One `\n` separates a text block from the next.
                self.text_at = end + 1;
                Some(UserBlock::Text(self.text.get(start..end).unwrap_or("")))
            }
            Part::Attachment => {
                let a = self.attachments.get(self.attachment)?;
                self.attachment += 1;
                Some(UserBlock::Attachment(a))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn att(id: &str) -> AttachmentRef {
        AttachmentRef {
            attachment_id: id.into(),
            kind: "image".into(),
            name: "a.png".into(),
            mime_type: "image/png".into(),
            size_bytes: 1,
            sha256: "ab".into(),
            storage_id: "blob_sha256_ab".into(),
        }
    }

    #[test]
    fn blocks_round_trip_in_order_with_newlines_inside_texts() {
        let (a, b) = (att("att_a"), att("att_b"));
        let blocks = [
            UserBlock::Attachment(&a),
            UserBlock::Text("one\ntwo"),
            UserBlock::Text(""),
            UserBlock::Attachment(&b),
            UserBlock::Text("é"),
        ];
        let m = Message::user_blocks(blocks);
        let Message::User {
            text, attachments, ..
        } = &m
        else {
            unreachable!()
        };
        assert_eq!(text, "one\ntwo\n\né");
        assert_eq!(attachments, &[a.clone(), b.clone()]);
        assert_eq!(m.user_parts().unwrap().collect::<Vec<_>>(), blocks);
    }

    #[test]
    fn text_only_prompts_have_no_layout_and_one_text_part() {
        let m = Message::user_blocks([UserBlock::Text("a"), UserBlock::Text("b")]);
        assert_eq!(m, Message::user("a\nb"));
        assert_eq!(
            m.user_parts().unwrap().collect::<Vec<_>>(),
            [UserBlock::Text("a\nb")]
        );
        assert_eq!(Message::user("").user_parts().unwrap().count(), 0);
    }

    #[test]
    fn a_prompt_without_layout_is_its_text_then_its_attachments() {
        let a = att("att_a");
        let m = Message::User {
            text: "see".into(),
            attachments: vec![a.clone()],
            layout: Vec::new(),
        };
        assert_eq!(
            m.user_parts().unwrap().collect::<Vec<_>>(),
            [UserBlock::Text("see"), UserBlock::Attachment(&a)]
        );
    }
}
