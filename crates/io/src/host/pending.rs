//! What a client has outstanding while the agent runs, written once for both clients.
//!
//! Owns: the host's own control calls ([`Calls`], WIRE-006..009), the uploads waiting for
//! their acknowledgements (by upload ID), the agent's permission requests being decided with
//! their cancelled flags (a `control_cancel_request` withdraws one, WIRE-007), and the end of
//! output: every pending call is rejected (WIRE-008), every waiting upload sees its channel
//! close, and no new upload or permission request is taken on. Never does I/O, blocks or
//! spawns: each client keeps one behind its mutex and writes what its calls return.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::calls::{Calls, ReplySlot};
use super::stream::ImportEvent;
use agentx_wire::wire::PeerProfile;

/// Where an upload's acknowledgements go (a channel end, blocking or async).
pub(crate) trait ImportSink {
    fn send(&self, event: ImportEvent);
}

/// The most acknowledgements that wait for one upload (issue 46). The upload reads one after
/// its begin and one after its commit, and stops at any other: more than this many waiting is
/// an agent flooding that upload ID, and the rest are dropped here (each is still a record of
/// the stream).
pub(crate) const IMPORT_EVENTS: usize = 8;

impl ImportSink for std::sync::mpsc::SyncSender<ImportEvent> {
    fn send(&self, event: ImportEvent) {
        let _ = self.try_send(event);
    }
}

#[cfg(feature = "tokio")]
impl ImportSink for ::tokio::sync::mpsc::Sender<ImportEvent> {
    fn send(&self, event: ImportEvent) {
        let _ = self.try_send(event);
    }
}

/// At most this many agent permission requests are with the callback at once (each one a
/// thread or a task); one more is denied at once with
/// [`TOO_MANY_PERMISSION_REQUESTS`](super::permission::TOO_MANY_PERMISSION_REQUESTS). An
/// agent asks once per tool use, so only a runaway agent reaches it.
pub const MAX_PENDING_PERMISSIONS: usize = 256;

/// What [`Pending::permission_started`] decided.
pub(crate) enum Started {
    /// Ask the callback (a withdrawal sets the request's cancelled flag, WIRE-007).
    Decide,
    /// The output ended: no answer.
    Ended,
    /// [`MAX_PENDING_PERMISSIONS`] are pending: deny at once.
    Full,
}

/// A client's outstanding calls, uploads and permission requests.
pub(crate) struct Pending<S, U> {
    /// The host's own calls on the shared broker (WIRE-006..009).
    pub(crate) calls: Calls<S>,
    uploads: HashMap<String, U>,
    permissions: HashMap<String, Arc<AtomicBool>>,
    /// The agent's output ended.
    ended: bool,
}

impl<S: ReplySlot, U: ImportSink> Pending<S, U> {
    /// Pending state for an agent read in `profile` (the lenient one keeps call payloads
    /// unchecked for its lenient views).
    pub(crate) fn new(profile: PeerProfile) -> Self {
        Pending {
            calls: Calls::new(profile == PeerProfile::Lenient),
            uploads: HashMap::new(),
            permissions: HashMap::new(),
            ended: false,
        }
    }

    /// Routes the acknowledgements of `upload_id` to `sink` until [`Pending::forget_upload`];
    /// after the output ended the sink is dropped at once (its upload sees the stream closed).
    pub(crate) fn register_upload(&mut self, upload_id: &str, sink: U) {
        if !self.ended {
            self.uploads.insert(upload_id.to_owned(), sink);
        }
    }

    pub(crate) fn forget_upload(&mut self, upload_id: &str) {
        self.uploads.remove(upload_id);
    }

    /// An acknowledgement for `upload_id`, if an upload waits for it.
    pub(crate) fn import(&self, upload_id: &str, event: ImportEvent) {
        if let Some(sink) = self.uploads.get(upload_id) {
            sink.send(event);
        }
    }

    /// A permission request goes to the callback ([`Started::Decide`]), is dropped because the output already ended (nothing could carry the answer), or
    /// is denied at once because [`MAX_PENDING_PERMISSIONS`] are being decided.
    pub(crate) fn permission_started(&mut self, request_id: &str) -> Started {
        if self.ended {
            return Started::Ended;
        }
        if self.permissions.len() >= MAX_PENDING_PERMISSIONS
            && !self.permissions.contains_key(request_id)
        {
            return Started::Full;
        }
        self.permissions
            .insert(request_id.to_owned(), Arc::new(AtomicBool::new(false)));
        Started::Decide
    }

    /// The agent withdrew `request_id` (WIRE-007): its answer will not be sent.
    pub(crate) fn permission_cancelled(&mut self, request_id: &str) {
        if let Some(flag) = self.permissions.get(request_id) {
            flag.store(true, Ordering::SeqCst);
        }
    }

    /// The callback decided `request_id`: whether the answer still goes out (not cancelled,
    /// and not answered before).
    pub(crate) fn permission_decided(&mut self, request_id: &str) -> bool {
        self.permissions
            .remove(request_id)
            .is_some_and(|cancelled| !cancelled.load(Ordering::SeqCst))
    }

    /// The agent's output ended: every pending call is rejected (WIRE-008) and every waiting
    /// upload sees its channel close. A decision already being made is still sent (the
    /// agent may still read its input).
    pub(crate) fn end(&mut self, now: Instant) {
        self.ended = true;
        self.calls.on_eof(now);
        self.uploads.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::calls::Reply;
    use std::sync::mpsc;

    type Blocking = Pending<mpsc::Sender<Reply>, mpsc::SyncSender<ImportEvent>>;

    #[test]
    fn a_cancelled_permission_request_is_not_answered_and_none_starts_after_the_end() {
        let mut p = Blocking::new(PeerProfile::Strict);
        assert!(matches!(p.permission_started("a"), Started::Decide));
        assert!(matches!(p.permission_started("b"), Started::Decide));
        assert!(matches!(p.permission_started("c"), Started::Decide));
        p.permission_cancelled("b"); // WIRE-007
        assert!(p.permission_decided("a"));
        assert!(!p.permission_decided("a"), "answered once");
        assert!(!p.permission_decided("b"), "cancelled");
        p.end(Instant::now());
        assert!(
            p.permission_decided("c"),
            "already being decided: still answered"
        );
        assert!(
            matches!(p.permission_started("d"), Started::Ended),
            "nothing new after the end"
        );
    }

    #[test]
    fn at_most_256_permission_requests_are_pending_and_one_more_is_denied() {
        let mut p = Blocking::new(PeerProfile::Strict);
        for i in 0..MAX_PENDING_PERMISSIONS {
            assert!(matches!(
                p.permission_started(&format!("r{i}")),
                Started::Decide
            ));
        }
        assert!(matches!(p.permission_started("one more"), Started::Full));
        assert!(
            matches!(p.permission_started("r7"), Started::Decide),
            "a repeated ID takes no new slot"
        );
        assert!(p.permission_decided("r0"));
        assert!(matches!(p.permission_started("one more"), Started::Decide));
    }

    /// An agent repeating acknowledgements for an upload in flight fills at most
    /// `IMPORT_EVENTS` of them; the rest are dropped, and the upload still sees the first.
    #[test]
    fn an_upload_holds_at_most_8_acknowledgements() {
        use agentx_wire::wire::grammar::UploadId;
        use agentx_wire::wire::import::{ImportRejected, ReasonCode};
        let mut p = Blocking::new(PeerProfile::Strict);
        let (tx, rx) = mpsc::sync_channel(IMPORT_EVENTS);
        p.register_upload("upl_1", tx);
        for _ in 0..10_000 {
            p.import(
                "upl_1",
                Err(ImportRejected {
                    upload_id: UploadId::new("upl_1").unwrap(),
                    reason: ReasonCode::SchemaInvalid,
                }),
            );
        }
        assert_eq!(rx.try_iter().count(), IMPORT_EVENTS);
    }

    #[test]
    fn uploads_see_their_channel_close_at_the_end_and_none_registers_after_it() {
        let mut p = Blocking::new(PeerProfile::Strict);
        let (tx, rx) = mpsc::sync_channel(IMPORT_EVENTS);
        p.register_upload("upl_1", tx);
        p.end(Instant::now());
        assert!(matches!(rx.recv(), Err(mpsc::RecvError)));
        let (tx, rx) = mpsc::sync_channel(IMPORT_EVENTS);
        p.register_upload("upl_2", tx);
        assert!(matches!(rx.recv(), Err(mpsc::RecvError)));
    }
}
