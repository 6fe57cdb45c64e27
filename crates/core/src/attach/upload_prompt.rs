//! Atomic prompt correlation (WIRE-020): which committed attachments belong to which
//! `prompt_uuid`, and the check a user record's `attachment_ref` blocks must pass before it is
//! queued (and before a `priority: "now"` record may interrupt anything).
//!
//! Owns the bindings attachment ID → prompt UUID through their states (receiving, committed,
//! submitted) and the per-prompt sets. A user record may reference only committed attachments
//! of its own `uuid` (its prompt UUID), must reference all of them, exactly as committed, at
//! most `max_attachments_per_message` and within `max_aggregate_bytes`; a submitted attachment
//! is never accepted again, under any prompt. The check changes nothing; only `admit` does,
//! so a rejected record leaves every other attachment usable (PROFILE §8). Never does I/O and
//! never echoes an input value: errors name the block by its index.

use std::collections::HashMap;
use std::fmt;

use super::admit::AggregateBudget;
use super::limits::Limits;
use agentx_wire::wire::attachment_ref::AttachmentRef;
use agentx_wire::wire::grammar::{AttachmentId, Uuid};
use agentx_wire::wire::user::{ContentBlock, UserContent, UserMessage, UserRecord};

/// Why a user record's attachments cannot be admitted: the reason of its input-error result
/// (PROFILE §8, `input error: <reason>`). `block` is the index in `message.content`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachmentRefError {
    /// `--no-attachments`: no `input_capabilities` were advertised (PROFILE §12).
    CapabilityAbsent,
    /// An `attachment_ref` in a record without `uuid`: nothing to correlate with.
    MissingUuid,
    /// More than `max_attachments_per_message` blocks.
    TooMany,
    /// The attachment was never committed (or its upload has not ended).
    NotCommitted {
        /// The content block's index.
        block: usize,
    },
    /// The attachment was committed for another prompt UUID.
    OtherPrompt {
        /// The content block's index.
        block: usize,
    },
    /// The block differs from the committed manifest.
    ManifestMismatch {
        /// The content block's index.
        block: usize,
    },
    /// The same attachment appears twice.
    Repeated {
        /// The content block's index (the second occurrence).
        block: usize,
    },
    /// The attachment was already submitted in an earlier user record.
    AlreadySubmitted {
        /// The content block's index.
        block: usize,
    },
    /// The attachments pass `max_aggregate_bytes` (`aggregate_too_large`).
    AggregateTooLarge,
    /// An upload for this prompt UUID has not ended yet.
    UploadInProgress,
    /// The record omits committed attachments of its prompt UUID.
    Omitted {
        /// How many committed attachments are missing.
        count: usize,
    },
}

impl fmt::Display for AttachmentRefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use AttachmentRefError as E;
        match self {
            E::CapabilityAbsent => f.write_str("attachments are not available (capability_absent)"),
            E::MissingUuid => f.write_str("an attachment_ref needs the record's uuid (WIRE-020)"),
            E::TooMany => {
                f.write_str("too many attachment_ref blocks (max_attachments_per_message)")
            }
            E::NotCommitted { block } => write!(
                f,
                "message.content[{block}] is not a committed attachment (WIRE-020)"
            ),
            E::OtherPrompt { block } => write!(
                f,
                "message.content[{block}] was committed for another prompt_uuid (WIRE-020)"
            ),
            E::ManifestMismatch { block } => write!(
                f,
                "message.content[{block}] differs from its committed manifest (WIRE-020)"
            ),
            E::Repeated { block } => write!(
                f,
                "message.content[{block}] repeats an attachment (WIRE-020)"
            ),
            E::AlreadySubmitted { block } => write!(
                f,
                "message.content[{block}] was already submitted (WIRE-020)"
            ),
            E::AggregateTooLarge => f.write_str("attachments too large (aggregate_too_large)"),
            E::UploadInProgress => {
                f.write_str("an upload for this prompt_uuid has not ended (WIRE-020)")
            }
            E::Omitted { count } => write!(
                f,
                "{count} committed attachment(s) of this prompt_uuid not referenced (WIRE-020)"
            ),
        }
    }
}

impl std::error::Error for AttachmentRefError {}

/// A checked prompt, to be admitted once its record is queued. Consumed by value.
#[must_use = "an admission must be given to Uploads::admit once the record is queued"]
#[derive(Debug, PartialEq, Eq)]
pub struct PromptAdmission {
    prompt_uuid: Box<str>,
}

enum Binding {
    Receiving,
    Committed(AttachmentRef),
    Submitted,
}

struct Bound {
    prompt: Box<str>,
    state: Binding,
}

#[derive(Default)]
struct PromptSet {
    receiving: u32,
    /// Committed, not yet submitted, in commit order.
    committed: Vec<Box<str>>,
}

/// The correlation of attachments with prompts.
#[derive(Default)]
pub(crate) struct PromptCorrelation {
    prompts: HashMap<Box<str>, PromptSet>,
    attachments: HashMap<Box<str>, Bound>,
}

impl PromptCorrelation {
    /// True when an upload is receiving, committed or submitted under this attachment ID.
    pub(crate) fn attachment_in_use(&self, attachment_id: &AttachmentId<'_>) -> bool {
        self.attachments.contains_key(attachment_id.as_str())
    }

    pub(crate) fn begin(&mut self, prompt: &Uuid<'_>, attachment_id: &AttachmentId<'_>) {
        self.attachments.insert(
            attachment_id.as_str().into(),
            Bound {
                prompt: prompt.as_str().into(),
                state: Binding::Receiving,
            },
        );
        self.prompts
            .entry(prompt.as_str().into())
            .or_default()
            .receiving += 1;
    }

    pub(crate) fn committed(&mut self, prompt: &Uuid<'_>, manifest: AttachmentRef) {
        let id: Box<str> = manifest.attachment_id.as_str().into();
        if let Some(set) = self.prompts.get_mut(prompt.as_str()) {
            set.receiving = set.receiving.saturating_sub(1);
            set.committed.push(id.clone());
        }
        if let Some(b) = self.attachments.get_mut(&id) {
            b.state = Binding::Committed(manifest);
        }
    }

    pub(crate) fn ended(&mut self, prompt: &Uuid<'_>, attachment_id: &AttachmentId<'_>) {
        self.attachments.remove(attachment_id.as_str());
        if let Some(set) = self.prompts.get_mut(prompt.as_str()) {
            set.receiving = set.receiving.saturating_sub(1);
            if set.receiving == 0 && set.committed.is_empty() {
                self.prompts.remove(prompt.as_str());
            }
        }
    }

    pub(crate) fn check(
        &self,
        record: &UserRecord<'_>,
        capability: bool,
        limits: &Limits,
    ) -> Result<Option<PromptAdmission>, AttachmentRefError> {
        let blocks: &[ContentBlock<'_>] = match &record.message {
            UserMessage::Object {
                content: UserContent::Blocks(b),
                ..
            } => b,
            _ => &[],
        };
        let refs: Vec<(usize, &AttachmentRef)> = blocks
            .iter()
            .enumerate()
            .filter_map(|(i, b)| match b {
                ContentBlock::AttachmentRef(r) => Some((i, r)),
                _ => None,
            })
            .collect();
        let prompt = record.uuid.as_ref().map(|u| u.as_str());
        let set = prompt.and_then(|p| self.prompts.get(p));
        if refs.is_empty() {
            // WIRE-020: omitting the committed set rejects the record, text-only too.
            return match set {
                Some(s) if !s.committed.is_empty() => Err(AttachmentRefError::Omitted {
                    count: s.committed.len(),
                }),
                _ => Ok(None),
            };
        }
        if !capability {
            return Err(AttachmentRefError::CapabilityAbsent);
        }
        if refs.len() > limits.max_attachments_per_message {
            return Err(AttachmentRefError::TooMany);
        }
        let prompt = prompt.ok_or(AttachmentRefError::MissingUuid)?;
        let mut budget = AggregateBudget::new(limits);
        for (n, &(block, r)) in refs.iter().enumerate() {
            let bound = self
                .attachments
                .get(r.attachment_id.as_str())
                .ok_or(AttachmentRefError::NotCommitted { block })?;
            if &*bound.prompt != prompt {
                return Err(AttachmentRefError::OtherPrompt { block });
            }
            match &bound.state {
                Binding::Receiving => return Err(AttachmentRefError::NotCommitted { block }),
                Binding::Submitted => return Err(AttachmentRefError::AlreadySubmitted { block }),
                Binding::Committed(m) if m != r => {
                    return Err(AttachmentRefError::ManifestMismatch { block })
                }
                Binding::Committed(_) => {}
            }
            if refs[..n]
                .iter()
                .any(|(_, earlier)| earlier.attachment_id == r.attachment_id)
            {
                return Err(AttachmentRefError::Repeated { block });
            }
            budget
                .admit(r.size_bytes)
                .map_err(|_| AttachmentRefError::AggregateTooLarge)?;
        }
        // Every ref is a distinct committed attachment of this prompt, so `set` exists.
        let set = set.ok_or(AttachmentRefError::NotCommitted { block: refs[0].0 })?;
        if set.receiving > 0 {
            return Err(AttachmentRefError::UploadInProgress);
        }
        if refs.len() < set.committed.len() {
            return Err(AttachmentRefError::Omitted {
                count: set.committed.len() - refs.len(),
            });
        }
        Ok(Some(PromptAdmission {
            prompt_uuid: prompt.into(),
        }))
    }

    pub(crate) fn admit(&mut self, admission: PromptAdmission) {
        let Some(set) = self.prompts.get_mut(&admission.prompt_uuid) else {
            return;
        };
        for id in std::mem::take(&mut set.committed) {
            if let Some(b) = self.attachments.get_mut(&id) {
                b.state = Binding::Submitted;
            }
        }
        if set.receiving == 0 {
            self.prompts.remove(&admission.prompt_uuid);
        }
    }
}
