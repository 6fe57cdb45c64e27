//! [`FrameEncoder`]: one record in, its exact validated frame out (WIRE-013), sans-IO.
//!
//! Owns: marshaling one complete record into a reused buffer, the physical transformations
//! (separators escaped, one physical line, the `\n`), the credential scan and the optional
//! validator over those exact final bytes, and the one latched failure (WIRE-013, WIRE-015).
//! Must never: lock, write, spawn or read a clock; hand out a frame that failed; call the
//! validator after a failure latched; keep a refused frame's bytes; format anything a
//! callback returned.
//!
//! It is `&mut self` throughout: who owns the encoder decides the order of frames (a session
//! pushes them into its [`Outbox`](crate::control::Outbox); the blocking and tokio drivers
//! write them). The validator is still foreign code and runs contained: its `Err` or panic
//! latches [`FailureKind::Validation`](super::FailureKind::Validation).
//!
//! ```
//! use agentx_wire::encode::{CredentialSet, FrameEncoder};
//! use agentx_wire::wire::InputRecord;
//!
//! let mut encoder = FrameEncoder::new();
//! encoder.set_credentials(CredentialSet::new(["sk-secret"]).unwrap()).unwrap();
//! let frame = encoder.encode(&InputRecord::KeepAlive).unwrap();
//! assert_eq!(frame, b"{\"type\":\"keep_alive\"}\n");
//! // A frame carrying a credential is refused, and the failure latches (WIRE-013).
//! let failure = encoder.encode(&br#"{"k":"sk-secret"}"#[..]).unwrap_err();
//! assert!(failure.is_validation());
//! assert_eq!(encoder.encode(&InputRecord::KeepAlive), Err(failure));
//! ```

use std::borrow::Cow;
use std::fmt;

use crate::wire::Encode;

use super::callbacks::{contained, discard, FrameValidator, Panicked};
use super::credentials::CredentialSet;
use super::delta::{CredentialCompleted, DeltaGuard};
use super::error::{EncoderFailure, Error, FailureKind, RecordFault};
use super::line::{finish_frame, LineFault};

/// Default limit of one marshaled record, the terminating `\n` excluded: PROFILE §2a's line
/// limit, so that nothing we write is a framing error for a conforming reader.
pub const DEFAULT_MAX_RECORD_LEN: usize = 8_388_608;

/// A buffer grown past this by an unusually large record is shrunk back afterwards.
pub const SHRINK_ABOVE: usize = 1 << 20;
/// What a shrunk buffer keeps.
pub const KEEP_CAPACITY: usize = 64 << 10;

/// The sans-IO validating frame encoder. See the module docs.
pub struct FrameEncoder {
    buf: Vec<u8>,
    spare: Vec<u8>,
    scratch: Vec<u8>,
    credentials: CredentialSet,
    validator: Option<Box<dyn FrameValidator>>,
    max_record_len: usize,
    started: bool,
    failure: Option<EncoderFailure>,
    frames: u64,
}

impl Default for FrameEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameEncoder {
    /// An encoder with no credentials and no validator: its frames are byte-identical to the
    /// record's JSON plus `\n`.
    pub fn new() -> Self {
        FrameEncoder {
            buf: Vec::new(),
            spare: Vec::new(),
            scratch: Vec::new(),
            credentials: CredentialSet::empty(),
            validator: None,
            max_record_len: DEFAULT_MAX_RECORD_LEN,
            started: false,
            failure: None,
            frames: 0,
        }
    }

    /// Installs the credential union (WIRE-013). Only before the first record.
    pub fn set_credentials(&mut self, credentials: CredentialSet) -> Result<(), Error> {
        self.configurable()?;
        self.credentials = credentials;
        Ok(())
    }

    /// Installs an additional whole-frame validator, run after the credential scan on its own
    /// copy of the frame. Only before the first record.
    pub fn set_validator(&mut self, validator: impl FrameValidator + 'static) -> Result<(), Error> {
        self.configurable()?;
        self.validator = Some(Box::new(validator));
        Ok(())
    }

    /// Sets the longest marshaled record (terminator excluded). Only before the first record.
    pub fn set_max_record_len(&mut self, max: usize) -> Result<(), Error> {
        self.configurable()?;
        self.max_record_len = max;
        Ok(())
    }

    /// The longest marshaled record accepted (terminator excluded).
    pub fn max_record_len(&self) -> usize {
        self.max_record_len
    }

    fn configurable(&self) -> Result<(), Error> {
        if self.started {
            Err(already_started())
        } else {
            Ok(())
        }
    }

    /// True once the first record began: configuration is fixed (WIRE-013).
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// The latched failure, if any.
    pub fn failure(&self) -> Option<EncoderFailure> {
        self.failure
    }

    /// How many frames this encoder handed out.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The number of credentials in the installed set.
    pub fn credential_count(&self) -> usize {
        self.credentials.len()
    }

    /// Encodes one record: its JSON into the reused buffer, raw U+2028/U+2029 escaped, one
    /// physical line checked, `\n` appended, the exact bytes validated. Returns the frame,
    /// valid until the next call; or the latched failure (this record's or an earlier one's,
    /// the same value every time: WIRE-013, WIRE-015).
    #[inline]
    pub fn encode<R: Encode + ?Sized>(&mut self, record: &R) -> Result<&[u8], EncoderFailure> {
        self.encode_with(|out| record.encode(out))
    }

    /// [`encode`](Self::encode) for a closure that appends the record's JSON. A panic of
    /// `marshal` latches [`RecordFault::Panicked`].
    pub fn encode_with(
        &mut self,
        marshal: impl FnOnce(&mut Vec<u8>),
    ) -> Result<&[u8], EncoderFailure> {
        self.encode_inner(marshal, true)
    }

    /// [`encode`](Self::encode), except that a record longer than
    /// [`max_record_len`](Self::max_record_len) is refused *without* latching: it returns
    /// [`RecordFault::TooLarge`] once, forgets the refused bytes, and the next record is
    /// encoded as usual. No byte of the refused record was validated or handed out, so
    /// nothing of it can reach a writer. Every other failure (WIRE-013 validation, a marshal
    /// panic, a raw line feed, an earlier latched failure) latches exactly as in `encode`.
    /// A session uses it to turn one oversized record into a per-turn error instead of
    /// ending its whole output.
    pub fn encode_bounded<R: Encode + ?Sized>(
        &mut self,
        record: &R,
    ) -> Result<&[u8], EncoderFailure> {
        self.encode_inner(|out| record.encode(out), false)
    }

    fn encode_inner(
        &mut self,
        marshal: impl FnOnce(&mut Vec<u8>),
        latch_oversize: bool,
    ) -> Result<&[u8], EncoderFailure> {
        if let Some(f) = self.failure {
            return Err(f);
        }
        self.started = true;
        self.shrink();
        match self.frame(marshal) {
            Ok(()) => {
                self.frames += 1;
                Ok(&self.buf)
            }
            Err(f) if !latch_oversize && f.kind() == FailureKind::Record(RecordFault::TooLarge) => {
                // Not latched; the refused bytes are forgotten like a latched record's.
                self.forget();
                Err(f)
            }
            Err(f) => Err(self.latch(f)),
        }
    }

    /// [`encode`](Self::encode), handing the frame over by swapping buffers instead of
    /// lending it: on success `frame` holds exactly the frame bytes, and the encoder keeps
    /// `frame`'s old allocation for its next record (no copy, no allocation in steady state).
    /// A driver uses it to write the frame while the encoder serves other producers.
    pub fn encode_into<R: Encode + ?Sized>(
        &mut self,
        record: &R,
        frame: &mut Vec<u8>,
    ) -> Result<(), EncoderFailure> {
        self.encode_with(|out| record.encode(out))?;
        frame.clear();
        std::mem::swap(&mut self.buf, frame);
        Ok(())
    }

    /// [`encode_into`](Self::encode_into) with [`encode_bounded`](Self::encode_bounded)'s rule:
    /// an oversized record is refused without latching, and `frame` is left as it was.
    pub fn encode_into_bounded<R: Encode + ?Sized>(
        &mut self,
        record: &R,
        frame: &mut Vec<u8>,
    ) -> Result<(), EncoderFailure> {
        self.encode_bounded(record)?;
        frame.clear();
        std::mem::swap(&mut self.buf, frame);
        Ok(())
    }

    /// Latches `failure` unless one is latched already; returns the latched one. Drivers call
    /// it when the frame could not be delivered (the writer failed, WIRE-015), so that every
    /// later record sees the same failure. Refused bytes are forgotten.
    pub fn latch(&mut self, failure: EncoderFailure) -> EncoderFailure {
        self.started = true;
        self.forget();
        *self.failure.get_or_insert(failure)
    }

    /// Whether `text`, spelled as the JSON string this encoder writes, carries credential
    /// material by WIRE-013's rules: what a caller asks before quoting untrusted text in a
    /// record (PROFILE §14: a provider's error message is dropped when it does). It only
    /// answers (a panic inside the scan answers true); it never latches, and every record
    /// is still validated whole when it is encoded.
    pub fn spells_credential(&mut self, text: &str) -> bool {
        if self.credentials.is_empty() {
            return false;
        }
        self.spare.clear();
        crate::json::write_str(&mut self.spare, text);
        let (credentials, spelled, scratch) = (&self.credentials, &self.spare, &mut self.scratch);
        let holds = contained(|| credentials.matches(spelled, scratch)).unwrap_or(true);
        self.forget();
        holds
    }

    /// PROFILE §8 (streamed deltas and credentials, WIRE-013 across records): the next delta
    /// `piece` of one content block's stream `guard`, checked against this encoder's own
    /// credential union. Returns what may be written now (borrowed from `piece` unless a held
    /// tail is joined to it; possibly empty: a tail that could be the start of a credential is
    /// held back until the next delta settles it), or
    /// [`CredentialCompleted`] when joining the stream with `piece` would rebuild a credential
    /// (the joined `text_delta` texts; the joined `partial_json` fragments, raw and with every
    /// JSON string decoded): then nothing of it may be written. Never latches (the caller
    /// ends its turn instead); a panic inside the check answers `CredentialCompleted`. Every
    /// frame that carries a released piece is still validated whole by `encode`.
    pub fn guard_delta<'p>(
        &mut self,
        guard: &mut DeltaGuard,
        piece: &'p str,
    ) -> Result<Cow<'p, str>, CredentialCompleted> {
        let credentials = &self.credentials;
        contained(|| guard.next(credentials, piece)).unwrap_or(Err(CredentialCompleted))
    }

    /// The block of `guard` ended: the tail it held back (which completes no credential).
    pub fn finish_delta(&mut self, guard: &mut DeltaGuard) -> String {
        guard.finish()
    }

    /// A refused frame may hold a credential: do not keep it around (nor its memory).
    fn forget(&mut self) {
        for b in [&mut self.buf, &mut self.spare, &mut self.scratch] {
            b.clear();
            if b.capacity() > SHRINK_ABOVE {
                b.shrink_to(KEEP_CAPACITY);
            }
        }
    }

    /// Gives back the memory an unusually large record grew (a driver calls it once the frame
    /// is written; `encode` does it before the next record anyway).
    pub fn shrink(&mut self) {
        for b in [&mut self.buf, &mut self.spare, &mut self.scratch] {
            if b.capacity() > SHRINK_ABOVE {
                b.clear();
                b.shrink_to(KEEP_CAPACITY);
            }
        }
    }

    fn frame(&mut self, marshal: impl FnOnce(&mut Vec<u8>)) -> Result<(), EncoderFailure> {
        self.buf.clear();
        let buf = &mut self.buf;
        if contained(move || marshal(buf)).is_err() {
            return Err(EncoderFailure::record(RecordFault::Panicked));
        }
        if self.buf.len() > self.max_record_len {
            return Err(EncoderFailure::record(RecordFault::TooLarge));
        }
        match finish_frame(&mut self.buf, &mut self.spare) {
            Ok(()) => {}
            Err(LineFault::RawLineFeed) => {
                return Err(EncoderFailure::record(RecordFault::RawLineFeed))
            }
        }
        if self.buf.len() > self.max_record_len.saturating_add(1) {
            // Separator escaping grew it past the limit.
            return Err(EncoderFailure::record(RecordFault::TooLarge));
        }
        self.validate()
    }

    fn validate(&mut self) -> Result<(), EncoderFailure> {
        let (credentials, frame, scratch) = (&self.credentials, &self.buf, &mut self.scratch);
        match contained(|| credentials.matches(frame, scratch)) {
            Ok(false) => {}
            Ok(true) | Err(Panicked) => return Err(EncoderFailure::validation()),
        }
        if let Some(validator) = self.validator.as_mut() {
            // The validator's own copy: it cannot change what is written.
            self.spare.clear();
            self.spare.extend_from_slice(&self.buf);
            let copy = &mut self.spare;
            match contained(|| validator.validate(copy)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    discard(e);
                    return Err(EncoderFailure::validation());
                }
                Err(Panicked) => return Err(EncoderFailure::validation()),
            }
        }
        Ok(())
    }
}

#[cold]
fn already_started() -> Error {
    Error::AlreadyStarted
}

impl fmt::Debug for FrameEncoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameEncoder")
            .field("started", &self.started)
            .field("failure", &self.failure)
            .field("frames", &self.frames)
            .field("credentials", &self.credentials.len())
            .field("validator", &self.validator.is_some())
            .field("max_record_len", &self.max_record_len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{FailureKind, ValidatorError};
    use crate::wire::{InputRecord, OutputRecord};

    #[test]
    fn exact_bytes_of_typed_and_raw_records() {
        let mut e = FrameEncoder::new();
        assert_eq!(
            e.encode(&InputRecord::KeepAlive).unwrap(),
            b"{\"type\":\"keep_alive\"}\n"
        );
        assert_eq!(
            e.encode(&OutputRecord::KeepAlive).unwrap(),
            b"{\"type\":\"keep_alive\"}\n"
        );
        // Raw separators become escapes; the frame is one physical line.
        assert_eq!(
            e.encode("[\"a\u{2028}b\"]".as_bytes()).unwrap(),
            b"[\"a\\u2028b\"]\n"
        );
        assert_eq!(e.frames(), 3);
        assert!(e.is_started());
    }

    #[test]
    fn wire_013_credential_rejection_latches_one_fixed_failure() {
        let mut e = FrameEncoder::new();
        e.set_credentials(CredentialSet::new(["hunter2"]).unwrap())
            .unwrap();
        assert!(e.encode(&b"{\"a\":\"hunter\"}"[..]).is_ok());
        // Escaped spelling of the credential.
        let f = e.encode(&br#"{"a":"hunt\u0065r2"}"#[..]).unwrap_err();
        assert_eq!(f.kind(), FailureKind::Validation);
        assert_eq!(e.failure(), Some(f));
        for _ in 0..3 {
            assert_eq!(e.encode(&InputRecord::KeepAlive), Err(f));
        }
        assert_eq!(e.frames(), 1);
        // The refused bytes are gone.
        assert!(e.buf.is_empty() && e.spare.is_empty() && e.scratch.is_empty());
    }

    #[test]
    fn wire_015_validator_gets_a_copy_and_its_panic_is_contained() {
        let mut e = FrameEncoder::new();
        e.set_validator(|frame: &mut [u8]| -> Result<(), ValidatorError> {
            frame.fill(b'X');
            Ok(())
        })
        .unwrap();
        assert_eq!(e.encode(&b"{}"[..]).unwrap(), b"{}\n");
        assert_eq!(
            e.set_credentials(CredentialSet::empty()),
            Err(Error::AlreadyStarted)
        );

        let mut e = FrameEncoder::new();
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let c = calls.clone();
        e.set_validator(move |_: &mut [u8]| -> Result<(), ValidatorError> {
            c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            panic!("validator panics")
        })
        .unwrap();
        let f = e.encode(&b"{}"[..]).unwrap_err();
        assert_eq!(f.kind(), FailureKind::Validation);
        assert_eq!(e.encode(&b"{}"[..]), Err(f));
        // Not called again after the failure latched.
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn record_faults_and_the_limit_at_its_edge() {
        let mut e = FrameEncoder::new();
        e.set_max_record_len(4).unwrap();
        assert_eq!(e.encode(&b"\"ab\""[..]).unwrap(), b"\"ab\"\n"); // 4: at the limit
        let f = e.encode(&b"\"abc\""[..]).unwrap_err(); // 5: one past
        assert_eq!(f.kind(), FailureKind::Record(RecordFault::TooLarge));

        let mut e = FrameEncoder::new();
        let f = e.encode(&b"{\n}"[..]).unwrap_err();
        assert_eq!(f.kind(), FailureKind::Record(RecordFault::RawLineFeed));

        let mut e = FrameEncoder::new();
        let f = e.encode_with(|_| panic!("marshal panics")).unwrap_err();
        assert_eq!(f.kind(), FailureKind::Record(RecordFault::Panicked));
        assert_eq!(e.encode(&b"{}"[..]), Err(f));
    }

    /// An oversized record refused by `encode_bounded` does not latch (the session's
    /// per-turn output error); at the limit it is written, one byte more is refused, and the
    /// next record is encoded. A credential still latches (WIRE-013).
    #[test]
    fn encode_bounded_refuses_an_oversized_record_without_latching() {
        let mut e = FrameEncoder::new();
        e.set_credentials(CredentialSet::new(["hunter2"]).unwrap())
            .unwrap();
        e.set_max_record_len(4).unwrap();
        assert_eq!(e.encode_bounded(&b"\"ab\""[..]).unwrap(), b"\"ab\"\n");
        let f = e.encode_bounded(&b"\"abc\""[..]).unwrap_err();
        assert_eq!(f.kind(), FailureKind::Record(RecordFault::TooLarge));
        assert_eq!(e.failure(), None);
        assert!(e.buf.is_empty() && e.spare.is_empty());
        assert_eq!(e.encode_bounded(&b"1"[..]).unwrap(), b"1\n");
        e.set_max_record_len(64).unwrap_err();
        let mut e = FrameEncoder::new();
        e.set_credentials(CredentialSet::new(["hunter2"]).unwrap())
            .unwrap();
        let f = e.encode_bounded(&b"\"hunter2\""[..]).unwrap_err();
        assert_eq!(f.kind(), FailureKind::Validation);
        assert_eq!(e.encode_bounded(&b"1"[..]), Err(f));
    }

    #[test]
    fn encode_into_swaps_the_frame_out() {
        let mut e = FrameEncoder::new();
        let mut frame = b"stale".to_vec();
        e.encode_into(&b"{\"a\":1}"[..], &mut frame).unwrap();
        assert_eq!(frame, b"{\"a\":1}\n");
        e.encode_into(&InputRecord::KeepAlive, &mut frame).unwrap();
        assert_eq!(frame, b"{\"type\":\"keep_alive\"}\n");
        let f = e.encode_into(&b"\n"[..], &mut frame).unwrap_err();
        assert_eq!(f.kind(), FailureKind::Record(RecordFault::RawLineFeed));
        assert_eq!(e.frames(), 2);
    }

    #[test]
    fn a_driver_latches_a_delivery_failure() {
        let mut e = FrameEncoder::new();
        e.encode(&b"{}"[..]).unwrap();
        let out = EncoderFailure::output(crate::encode::OutputFault::BrokenPipe);
        assert_eq!(e.latch(out), out);
        // The first latched failure stays.
        assert_eq!(e.latch(EncoderFailure::validation()), out);
        assert_eq!(e.encode(&b"{}"[..]), Err(out));
    }
}
