//! The session's output side: validated frames in push order (WIRE-003), stderr diagnostics
//! (PROFILE §5), the transcript lines of the current turn (PROFILE §11) and the record UUIDs
//! it mints.
//!
//! Owns: turning one typed [`OutputRecord`] into one complete frame through the credential
//! validator installed at construction (WIRE-013); after a refusal the output is latched
//! failed, no later record is produced, and the fixed diagnostic is queued once.
//! Must never: write bytes anywhere (the driver drains [`Output::pop_frame`]), reorder frames,
//! or put credential material in a diagnostic.

use std::collections::VecDeque;

use bytes::Bytes;

use crate::encode::{CredentialSet, VALIDATION_FAILURE_TEXT};
use crate::wire::grammar::Uuid;
use crate::wire::OutputRecord;

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

    /// A fresh canonical UUID (version 4, RFC 4122 variant).
    pub(crate) fn mint(&mut self) -> Uuid<'static> {
        let (a, b) = (self.next_u64(), self.next_u64());
        let s = format!(
            "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            8 | ((b >> 62) & 0x3),
            (b >> 48) & 0xfff,
            b & 0xffff_ffff_ffff
        );
        Uuid::new(s).expect("minted UUIDs are canonical")
    }
}

/// Frames, diagnostics and the turn's transcript.
pub(crate) struct Output {
    credentials: CredentialSet,
    frames: VecDeque<Bytes>,
    diagnostics: VecDeque<String>,
    /// Frames of the current turn that the session store keeps (PROFILE §11).
    transcript: Vec<Bytes>,
    buf: Vec<u8>,
    scratch: Vec<u8>,
    failed: bool,
}

impl Output {
    pub(crate) fn new(credentials: CredentialSet) -> Output {
        Output {
            credentials,
            frames: VecDeque::new(),
            diagnostics: VecDeque::new(),
            transcript: Vec::new(),
            buf: Vec::with_capacity(1024),
            scratch: Vec::new(),
            failed: false,
        }
    }

    /// Encodes `record` as one frame and queues it; `persist` also keeps it for the
    /// transcript. Returns false once the output has failed (WIRE-013: nothing more is
    /// produced).
    pub(crate) fn push(&mut self, record: &OutputRecord<'_>, persist: bool) -> bool {
        match self.frame(record) {
            Some(frame) => {
                if persist {
                    self.transcript.push(frame.clone());
                }
                self.frames.push_back(frame);
                true
            }
            None => false,
        }
    }

    /// Encodes `record` for the transcript only (the replay form of a prompt when replay is
    /// off, PROFILE §11).
    pub(crate) fn persist_only(&mut self, record: &OutputRecord<'_>) {
        if let Some(frame) = self.frame(record) {
            self.transcript.push(frame);
        }
    }

    fn frame(&mut self, record: &OutputRecord<'_>) -> Option<Bytes> {
        if self.failed {
            return None;
        }
        self.buf.clear();
        record.encode(&mut self.buf);
        self.buf.push(b'\n');
        // WIRE-013: the exact final bytes, terminator included, against the whole union.
        if !self.credentials.is_empty() && self.credentials.matches(&self.buf, &mut self.scratch) {
            self.failed = true;
            self.frames.clear();
            self.diagnostics
                .push_back(VALIDATION_FAILURE_TEXT.to_string());
            return None;
        }
        Some(Bytes::copy_from_slice(&self.buf))
    }

    /// True once a record was refused (latched, WIRE-013).
    pub(crate) fn failed(&self) -> bool {
        self.failed
    }

    pub(crate) fn pop_frame(&mut self) -> Option<Bytes> {
        self.frames.pop_front()
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
