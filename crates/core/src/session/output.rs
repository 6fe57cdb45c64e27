//! The session's output side: validated frames in push order (WIRE-003), stderr diagnostics
//! (PROFILE §5), the transcript lines of the current turn (PROFILE §11) and the record UUIDs
//! it mints.
//!
//! Owns: turning one typed [`OutputRecord`] into one complete frame through the session's
//! [`FrameEncoder`], whose credential union is installed at construction (WIRE-013), and
//! pushing it into the one [`Outbox`] (WIRE-003). A record longer than one output line is
//! refused alone (nothing latches; the session turns it into a per-turn error). After any
//! other refusal (WIRE-013 validation) the encoder is latched, no later record is produced,
//! and its fixed diagnostic is queued once; frames accepted before it stay queued.
//! Must never: write bytes anywhere (the driver drains [`Output::pop_frame`]), reorder frames,
//! or put credential material in a diagnostic.

use std::collections::VecDeque;

use bytes::Bytes;

use agentx_wire::control::Outbox;
use agentx_wire::encode::{CredentialSet, DeltaGuard, FailureKind, FrameEncoder, RecordFault};
use agentx_wire::wire::grammar::Uuid;
use agentx_wire::wire::OutputRecord;

/// Deterministic RFC 4122 version-4-shaped UUIDs from a seed (SplitMix64): reproducible in
/// tests, distinct per process when the driver passes a random seed.
#[derive(Clone, Debug)]
pub(crate) struct UuidMint {
    state: u64,
}

impl UuidMint {
    pub(crate) fn new(seed: u64) -> UuidMint {
        UuidMint { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A fresh canonical UUID (version 4, RFC 4122 variant), spelled into its inline form with
    /// no check, allocation or `fmt` (every record mints one).
    pub(crate) fn mint(&mut self) -> Uuid<'static> {
        let (a, b) = (self.next_u64(), self.next_u64());
        Uuid::v4_from_bits(a, b)
    }
}

/// PROFILE §8: the output error of a turn one of whose deltas would have completed a
/// credential (README "Limits").
pub(crate) const CREDENTIAL_ERROR: &str = "output error: record failed credential validation";

/// Why a record of the active turn was not written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Longer than one output line.
    LineLimit,
    /// A streamed delta would have completed a credential (PROFILE §8).
    Credential,
}

/// What became of one pushed record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// Queued as one frame.
    Written,
    /// Longer than one output line: not written, nothing latched.
    TooLarge,
    /// The output has failed (now or before): latched, nothing more is written.
    Failed,
}

/// Frames, diagnostics and the turn's transcript.
pub(crate) struct Output {
    encoder: FrameEncoder,
    /// Unbounded here: the session cannot wait. The driver applies backpressure by not
    /// feeding inputs while [`Output::queued_bytes`] is high.
    outbox: Outbox,
    diagnostics: VecDeque<String>,
    /// Frames of the current turn that the session store keeps (PROFILE §11).
    transcript: Vec<Bytes>,
    failed: bool,
    /// A record of the active turn was not written and the turn must end with this output
    /// error (not latched).
    turn_refused: Option<Refusal>,
    pushed: u64,
    /// Frames handed to the driver so far.
    popped: u64,
    /// PROFILE §11 "durable before idle": frame indexes from which nothing is handed out
    /// until the matching [`Action::Persist`](super::Action::Persist) was taken (oldest
    /// first; one per finished turn whose persist is still queued).
    holds: VecDeque<u64>,
    /// Reused by [`Output::fits`].
    scratch: Vec<u8>,
}

/// A bound on what a session adds to a re-encoded input record (`session_id`, `uuid`,
/// `isReplay`, members written as `null` when absent).
const STAMPED_BYTES: usize = 1024;

impl Output {
    pub(crate) fn new(credentials: CredentialSet, max_record_len: usize) -> Output {
        let mut encoder = FrameEncoder::new();
        // A fresh encoder has not started, so installing the union and the limit cannot fail.
        let _ = encoder.set_credentials(credentials);
        let _ = encoder.set_max_record_len(max_record_len);
        Output {
            encoder,
            outbox: Outbox::with_capacity(usize::MAX, usize::MAX),
            diagnostics: VecDeque::new(),
            transcript: Vec::new(),
            failed: false,
            turn_refused: None,
            pushed: 0,
            popped: 0,
            holds: VecDeque::new(),
            scratch: Vec::new(),
        }
    }

    /// Encodes `record` as one frame and queues it; `persist` also keeps it for the
    /// transcript. A record longer than one output line is not written and nothing latches
    /// ([`Pushed::TooLarge`]: its caller decides what the host sees instead); any other
    /// refusal latches the output for good (WIRE-013: nothing more is produced).
    pub(crate) fn push(&mut self, record: &OutputRecord<'_>, persist: bool) -> Pushed {
        if self.failed {
            return Pushed::Failed;
        }
        match self.encoder.encode_bounded(record) {
            Ok(frame) => {
                if persist {
                    self.transcript.push(Bytes::copy_from_slice(frame));
                }
                // The outbox is unbounded: a push cannot be refused.
                let _ = self.outbox.push(frame);
                self.pushed += 1;
                Pushed::Written
            }
            Err(failure) if failure.kind() == FailureKind::Record(RecordFault::TooLarge) => {
                Pushed::TooLarge
            }
            Err(failure) => {
                self.fail(failure.message());
                Pushed::Failed
            }
        }
    }

    /// [`Output::push`] for a record of the active turn: a record too large for one line
    /// also marks the turn (see [`Output::take_turn_refusal`]). True when it was written.
    pub(crate) fn push_turn(&mut self, record: &OutputRecord<'_>, persist: bool) -> bool {
        match self.push(record, persist) {
            Pushed::Written => true,
            Pushed::TooLarge => {
                self.turn_refused.get_or_insert(Refusal::LineLimit);
                false
            }
            Pushed::Failed => false,
        }
    }

    /// Marks the active turn as having lost a record to the line limit (a record measured
    /// with [`Output::fits`] and never pushed).
    pub(crate) fn refuse_turn_record(&mut self) {
        self.turn_refused.get_or_insert(Refusal::LineLimit);
    }

    /// Marks the active turn as having a streamed delta not written because joining it would
    /// have rebuilt a credential (PROFILE §8): the turn ends with [`CREDENTIAL_ERROR`].
    pub(crate) fn refuse_turn_credential(&mut self) {
        self.turn_refused = Some(Refusal::Credential);
    }

    /// True while a record of the active turn was refused and the turn has not yet ended
    /// with its output error.
    pub(crate) fn turn_refused(&self) -> bool {
        self.turn_refused.is_some()
    }

    /// Takes the mark of [`Output::push_turn`]: the output error the turn ends with.
    pub(crate) fn take_turn_refusal(&mut self) -> Option<String> {
        self.turn_refused.take().map(|r| self.refusal_error(r))
    }

    /// The output error of the active turn's refusal (the line-limit one if none is marked).
    pub(crate) fn turn_error(&self) -> String {
        self.refusal_error(self.turn_refused.unwrap_or(Refusal::LineLimit))
    }

    fn refusal_error(&self, r: Refusal) -> String {
        match r {
            Refusal::LineLimit => self.line_limit_error(),
            Refusal::Credential => CREDENTIAL_ERROR.to_string(),
        }
    }

    /// PROFILE §8: the next delta of a streamed block, through the encoder's own credential
    /// union ([`FrameEncoder::guard_delta`]): what may be written now, or `None` when joining
    /// it would rebuild a credential (nothing of it may be written).
    pub(crate) fn guard_delta<'p>(
        &mut self,
        guard: &mut DeltaGuard,
        piece: &'p str,
    ) -> Option<std::borrow::Cow<'p, str>> {
        self.encoder.guard_delta(guard, piece).ok()
    }

    /// The held-back tail of a streamed block that ended.
    pub(crate) fn finish_delta(&mut self, guard: &mut DeltaGuard) -> String {
        self.encoder.finish_delta(guard)
    }

    /// The per-turn output error: the `errors` entry of the result of a turn that lost a
    /// record, and the `tool_result` content of a tool use it cut short.
    pub(crate) fn line_limit_error(&self) -> String {
        format!(
            "output error: record exceeds the {}-byte line limit",
            self.encoder.max_record_len()
        )
    }

    /// Whether a record re-encoded from an input line of `line_bytes` could be longer than
    /// one output line. The canonical re-encoding at most doubles a line (a raw U+2028/U+2029,
    /// 3 bytes, is written `\u2028`, 6; every other character the writer escapes must already
    /// be escaped in valid input, and whitespace is dropped), and the members a session stamps
    /// or writes by default add less than [`STAMPED_BYTES`].
    pub(crate) fn may_outgrow(&self, line_bytes: usize) -> bool {
        line_bytes.saturating_mul(2).saturating_add(STAMPED_BYTES) > self.encoder.max_record_len()
    }

    /// The length of `record`'s line (LF excluded), by a plain encode into the scratch buffer.
    pub(crate) fn encoded_len(&mut self, record: &OutputRecord<'_>) -> usize {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        agentx_wire::wire::Encode::encode(record, &mut scratch);
        let len = scratch.len();
        if scratch.capacity() <= 64 << 10 {
            self.scratch = scratch;
        }
        len
    }

    /// Whether `record` fits one output line. A plain encode into a scratch buffer, so a
    /// record that does not fit is refused by its caller as a record error instead of
    /// latching the encoder (which would end the whole output).
    pub(crate) fn fits(&mut self, record: &OutputRecord<'_>) -> bool {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        agentx_wire::wire::Encode::encode(record, &mut scratch);
        let fits = scratch.len() <= self.encoder.max_record_len();
        if scratch.capacity() <= 64 << 10 {
            self.scratch = scratch;
        }
        fits
    }

    /// Whether `text`, spelled as the JSON string the encoder writes, carries credential
    /// material by WIRE-013's rules. PROFILE §14: a provider's error message that does is
    /// dropped and its record written without it, instead of the encoder refusing the record
    /// (which would latch and end the whole output). The encoder still validates every final
    /// record: this check only decides what is quoted, it is not a second enforcement point.
    pub(crate) fn holds_credential(&mut self, text: &str) -> bool {
        self.encoder.spells_credential(text)
    }

    /// Encodes `record` (the replay form of an accepted prompt), queues its frame when
    /// `write` (replay on), and returns the frame for the transcript without keeping it: the
    /// prompt is kept with [`Output::keep`] when its turn starts (PROFILE §11 "Order is
    /// context order"). `None` when nothing was encoded (the caller measured the record
    /// first, `accept_user`; or the output had failed).
    pub(crate) fn encode_prompt(
        &mut self,
        record: &OutputRecord<'_>,
        write: bool,
    ) -> Option<Bytes> {
        if self.failed {
            return None;
        }
        match self.encoder.encode_bounded(record) {
            Ok(frame) => {
                let line = Bytes::copy_from_slice(frame);
                if write {
                    let _ = self.outbox.push(frame);
                    self.pushed += 1;
                }
                Some(line)
            }
            Err(failure) if failure.kind() == FailureKind::Record(RecordFault::TooLarge) => None,
            Err(failure) => {
                self.fail(failure.message());
                None
            }
        }
    }

    /// Keeps a frame from [`Output::encode_prompt`] in the current turn's transcript.
    pub(crate) fn keep(&mut self, line: Bytes) {
        if !self.failed {
            self.transcript.push(line);
        }
    }

    /// How many lines the current turn's transcript holds (where the next kept line goes).
    pub(crate) fn kept(&self) -> usize {
        self.transcript.len()
    }

    /// Moves kept line `at` (an index [`Output::kept`] gave) to the end of the turn's
    /// transcript (PROFILE §19: a prompt that triggered a compaction is stored after its
    /// boundary).
    pub(crate) fn move_kept_to_end(&mut self, at: usize) {
        if at < self.transcript.len() {
            let line = self.transcript.remove(at);
            self.transcript.push(line);
        }
    }

    /// Replaces kept line `at` (an index [`Output::kept`] gave) with `line`.
    pub(crate) fn rekeep(&mut self, at: usize, line: Bytes) {
        if let Some(slot) = self.transcript.get_mut(at) {
            *slot = line;
        }
    }

    fn fail(&mut self, message: &'static str) {
        self.failed = true;
        self.transcript.clear();
        self.diagnostics.push_back(message.to_string());
    }

    /// True once a record was refused (latched, WIRE-013).
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    /// Frames queued so far (transmitted or waiting).
    pub(crate) fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The next frame, unless it lies at or past the oldest hold (see [`Output::hold_from`]).
    pub(crate) fn pop_frame(&mut self) -> Option<Bytes> {
        if self.holds.front().is_some_and(|&h| self.popped >= h) {
            return None;
        }
        let frame = self.outbox.pop()?;
        self.popped += 1;
        Some(frame)
    }

    /// Holds back the frame numbered `index` (counted from 0 over the session's life, as
    /// [`Output::pushed`] counts) and every later one until [`Output::release_hold`].
    pub(crate) fn hold_from(&mut self, index: u64) {
        self.holds.push_back(index);
    }

    /// Releases the oldest hold (its persist was taken by the driver).
    pub(crate) fn release_hold(&mut self) {
        self.holds.pop_front();
    }

    /// Frames waiting for the driver.
    pub(crate) fn queued_frames(&self) -> usize {
        self.outbox.len()
    }

    /// Bytes waiting for the driver.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.outbox.queued_bytes()
    }

    pub(crate) fn diagnostic(&mut self, line: String) {
        self.diagnostics.push_back(line);
    }

    pub(crate) fn pop_diagnostic(&mut self) -> Option<String> {
        self.diagnostics.pop_front()
    }

    /// Takes the transcript lines of the finished turn.
    pub(crate) fn take_transcript(&mut self) -> Vec<Bytes> {
        std::mem::take(&mut self.transcript)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-0123456789abcdef";

    /// PROFILE §14: what decides whether a provider's message is quoted.
    #[test]
    fn profile_14_holds_credential_by_the_encoders_rules() {
        let mut out = Output::new(CredentialSet::new([KEY]).unwrap(), 1 << 20);
        assert!(out.holds_credential(&format!("Incorrect API key provided: {KEY}.")));
        assert!(out.holds_credential(KEY));
        assert!(!out.holds_credential("Incorrect API key provided: sk-test-****cdef."));
        assert!(!out.holds_credential("overloaded"));
        assert!(!out.holds_credential(""));
        // Checking never latches the encoder.
        assert!(!out.failed());
        let mut none = Output::new(CredentialSet::empty(), 1 << 20);
        assert!(!none.holds_credential(KEY));
    }

    /// The stack spelling is exactly the `format!` spelling it replaced, version 4 and the
    /// RFC 4122 variant, for values with and without leading zero digits.
    #[test]
    fn minted_uuids_spell_as_before() {
        for seed in [0, 1, 7, u64::MAX, 0x0123_4567_89ab_cdef] {
            let mut mint = UuidMint::new(seed);
            let mut twin = UuidMint::new(seed);
            for _ in 0..256 {
                let (a, b) = (twin.next_u64(), twin.next_u64());
                let expected = format!(
                    "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
                    a >> 32,
                    (a >> 16) & 0xffff,
                    a & 0xfff,
                    8 | ((b >> 62) & 0x3),
                    (b >> 48) & 0xfff,
                    b & 0xffff_ffff_ffff
                );
                let minted = mint.mint();
                assert_eq!(minted.as_str(), expected);
                // Canonical by construction (no check at mint time): the grammar agrees.
                assert!(agentx_wire::wire::grammar::is_canonical_uuid(
                    minted.as_str()
                ));
                assert_eq!(Uuid::new(expected.as_str()), Some(minted));
            }
        }
    }
}
