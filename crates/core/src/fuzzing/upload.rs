//! Fuzz entry point for the upload lifecycle (`attach::Uploads`): random operation sequences
//! over a few upload IDs, attachment IDs and two prompts, on virtual time.
//!
//! Checked after every step: at most one `accepted` and at most one terminal result per
//! upload ID, and no record at all for a valid chunk; at most 8 active lifecycles; the storage
//! claims equal the declared sizes of the active uploads. At the end, after every upload is
//! settled (`end_all`): claims and reservations are zero, every stored blob belongs to a
//! committed manifest and every committed manifest's blob is stored (nothing leaks), and an
//! admitted prompt's attachments are never admitted twice.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::attach::limits::Limits;
use crate::attach::{BlobStore, ImportAck, MemoryBackend, ReasonCode, Sha256Digest, Uploads};
use agentx_wire::wire::grammar::{AttachmentId, Sha256Hex, UploadId, Uuid};
use agentx_wire::wire::import::{ImportBegin, ImportChunk, ImportOperation, ImportStatus};
use agentx_wire::wire::user::{ContentBlock, UserContent, UserMessage, UserRecord};
use agentx_wire::wire::AttachmentRef;

const PROMPTS: [&str; 2] = [
    "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27",
    "9b2d1c3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e",
];
const IDS: usize = 10;

struct Payloads {
    items: Vec<(&'static str, Vec<u8>)>,
}

fn payloads() -> &'static Payloads {
    static P: std::sync::OnceLock<Payloads> = std::sync::OnceLock::new();
    P.get_or_init(|| Payloads {
        items: vec![
            ("image/png", super::attach::samples::png_gradient(6, 5)),
            (
                "image/jpeg",
                super::attach::samples::jpeg_gradient(8, 8, None),
            ),
            ("application/pdf", super::attach::samples::pdf_with_pages(1)),
            ("image/png", super::attach::samples::png_rgb(3, 3)),
        ],
    })
}

/// What the fuzzer remembers of one upload ID to check the invariants.
#[derive(Default)]
struct Seen {
    accepted: u32,
    terminal: u32,
    /// Declared size while active.
    declared: Option<u64>,
    payload: Vec<u8>,
    sent: usize,
    next_seq: u64,
}

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn take(&mut self, n: usize) -> &[u8] {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a
    }
}

/// What one run reached (the seed test checks the seeds reach every path).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reached {
    pub accepted: usize,
    pub committed: usize,
    pub ended: usize,
    pub rejected: usize,
    pub admitted: usize,
}

/// The fuzz target `upload_lifecycle`.
pub fn lifecycle(data: &[u8]) {
    run(data);
}

/// `lifecycle`, returning what it reached.
pub fn run(data: &[u8]) -> Reached {
    let mut reached = Reached::default();
    let limits = Limits::default();
    let store = BlobStore::open(MemoryBackend::default(), &limits).expect("memory store");
    let mut uploads = Uploads::new(store, limits);
    let t0 = Instant::now();
    let mut now = t0;
    let mut seen: HashMap<usize, Seen> = HashMap::new();
    let mut committed: HashMap<String, (usize, AttachmentRef)> = HashMap::new();
    let mut admitted: HashSet<String> = HashSet::new();
    let mut input = Bytes(data);
    let mut out = Vec::new();
    while let Some(op) = input.byte() {
        let id_n = usize::from(input.byte().unwrap_or(0)) % IDS;
        let upload_id = UploadId::new(format!("upl_{id_n}")).expect("grammar");
        let s = seen.entry(id_n).or_default();
        out.clear();
        let mut chunk_valid = false;
        match op % 8 {
            0 => {
                let b = input.byte().unwrap_or(0);
                let (mime, payload) = &payloads().items[usize::from(b) % 4];
                let own = input.take(usize::from(b >> 4) * 8).to_vec();
                let payload = if b & 0x08 != 0 && !own.is_empty() {
                    own
                } else {
                    payload.clone()
                };
                let lie = input.byte().unwrap_or(0);
                let declared = match lie % 8 {
                    0 => payload.len() as u64 + 1,
                    1 => payload.len() as u64 - 1,
                    _ => payload.len() as u64,
                };
                let sha = if lie % 8 == 2 {
                    Sha256Digest::of(b"other").to_hex()
                } else {
                    Sha256Digest::of(&payload).to_hex()
                };
                let att = usize::from(input.byte().unwrap_or(0)) % IDS;
                let begin = ImportBegin {
                    prompt_uuid: Uuid::new(PROMPTS[usize::from(lie >> 7)]).expect("uuid"),
                    upload_id: upload_id.clone(),
                    attachment_id: AttachmentId::new(format!("att_{att}")).expect("grammar"),
                    name: "f.bin".into(),
                    size_bytes: declared,
                    mime_type: (*mime).into(),
                    sha256: Sha256Hex::new(sha).expect("hex"),
                };
                uploads.handle(&ImportOperation::Begin(begin), now, &mut out);
                if matches!(out.last(), Some(ImportAck::Result(r)) if r.status == ImportStatus::Accepted)
                {
                    s.declared = Some(declared);
                    s.payload = payload;
                    s.sent = 0;
                    s.next_seq = 0;
                }
            }
            1 => {
                let b = input.byte().unwrap_or(0);
                let len = usize::from(b % 64) + 1;
                let start = s.sent.min(s.payload.len());
                let end = (start + len).min(s.payload.len());
                let mut data = base64_simd::STANDARD.encode_to_string(&s.payload[start..end]);
                if b & 0x40 != 0 {
                    data.push('=');
                }
                let sequence = if b & 0x80 != 0 {
                    s.next_seq + 1
                } else {
                    s.next_seq
                };
                chunk_valid = s.declared.is_some()
                    && end > start
                    && b & 0xc0 == 0
                    && (end as u64) <= s.declared.unwrap_or(0);
                uploads.handle(
                    &ImportOperation::Chunk(ImportChunk {
                        upload_id: upload_id.clone(),
                        sequence,
                        data: data.into(),
                    }),
                    now,
                    &mut out,
                );
                if out.is_empty() {
                    s.sent = end;
                    s.next_seq += 1;
                }
            }
            2 => uploads.handle(&ImportOperation::Commit { upload_id }, now, &mut out),
            3 => uploads.handle(&ImportOperation::Abort { upload_id }, now, &mut out),
            4 => {
                let ms = u64::from(input.byte().unwrap_or(0)) * 1000;
                now += Duration::from_millis(ms);
                uploads.handle_timeout(now, &mut out);
            }
            5 => {
                let mask = input.byte().unwrap_or(0);
                let prompt = PROMPTS[usize::from(mask & 1)];
                let mut blocks = vec![ContentBlock::Text("t".into())];
                let mut keys: Vec<&String> = committed.keys().collect();
                keys.sort();
                for (i, k) in keys.into_iter().enumerate().take(7) {
                    if mask & (2 << i) != 0 {
                        blocks.push(ContentBlock::AttachmentRef(committed[k].1.clone()));
                    }
                }
                let record = UserRecord {
                    message: UserMessage::Object {
                        versioned: true,
                        content: UserContent::Blocks(blocks),
                    },
                    uuid: Uuid::new(prompt),
                    ..UserRecord::text("")
                };
                if let Ok(Some(admission)) = uploads.check_user_record(&record) {
                    for r in record.attachments() {
                        assert!(
                            admitted.insert(r.attachment_id.clone()),
                            "an attachment admitted twice (WIRE-020)"
                        );
                    }
                    uploads.admit(admission);
                    reached.admitted += 1;
                }
            }
            6 => uploads.end_all(ReasonCode::InputEof, &mut out),
            _ => {
                let reason = if input.byte().unwrap_or(0) & 1 == 0 {
                    ReasonCode::SchemaInvalid
                } else {
                    ReasonCode::SequenceGap
                };
                uploads.handle_invalid(&upload_id, reason, now, &mut out);
            }
        }
        if chunk_valid {
            assert!(out.is_empty(), "a valid chunk emits no record (WIRE-019)");
        }
        for ack in &out {
            let ImportAck::Result(r) = ack else {
                reached.rejected += 1;
                continue;
            };
            match r.status {
                ImportStatus::Accepted => reached.accepted += 1,
                ImportStatus::Committed => reached.committed += 1,
                _ => reached.ended += 1,
            }
            let n: usize = r.upload_id.as_str()[4..].parse().expect("our id");
            let s = seen.entry(n).or_default();
            if r.terminal() {
                s.terminal += 1;
                assert_eq!(
                    s.terminal, 1,
                    "two terminal results for one upload (WIRE-019)"
                );
                assert_eq!(s.accepted, 1, "terminal without accepted");
                s.declared = None;
                if let Some(m) = &r.attachment {
                    committed.insert(m.attachment_id.clone(), (n, m.clone()));
                }
            } else {
                s.accepted += 1;
                assert_eq!(s.accepted, 1, "two accepted results for one upload");
            }
        }
        assert!(uploads.active() <= 8);
        let claimed: u64 = seen.values().filter_map(|s| s.declared).sum();
        let store = uploads.store().expect("capability");
        assert_eq!(
            store.claimed_bytes(),
            claimed,
            "claims follow the active uploads"
        );
        assert_eq!(store.reserved_bytes(), 0);
        assert_eq!(store.reserved_manifests(), 0);
    }
    out.clear();
    uploads.end_all(ReasonCode::ProcessFailure, &mut out);
    assert_eq!(uploads.active(), 0);
    let store = uploads.store().expect("capability");
    assert_eq!(store.claimed_bytes(), 0);
    // Nothing leaks: the stored blobs are exactly the committed manifests' blobs.
    let stored: HashSet<Sha256Digest> = store.backend().blobs.keys().copied().collect();
    let referenced: HashSet<Sha256Digest> = committed
        .values()
        .map(|(_, m)| Sha256Digest::from_hex(&m.sha256).expect("hex"))
        .collect();
    assert_eq!(
        stored, referenced,
        "stored blobs = committed manifests' blobs"
    );
    assert_eq!(store.backend().manifest_lines.len(), committed.len());
    reached.ended += out.len();
    reached
}

/// Hand-made operation sequences for `corpus/upload_lifecycle/` (written by
/// `cargo test --test codec fuzz_seeds_upload::write_seeds -- --ignored`): the happy path with a
/// prompt admission, each chunk failure, timeout, EOF, the 9th upload, post-terminal operations.
pub fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    // begin(id, payload, honest, prompt 0, att = id)
    fn begin(id: u8, payload: u8, lie: u8) -> Vec<u8> {
        vec![0, id, payload, lie, id]
    }
    fn chunks(id: u8, payload: u8) -> Vec<u8> {
        let len = payloads().items[usize::from(payload)].1.len();
        let mut v = Vec::new();
        for _ in 0..len.div_ceil(64) {
            v.extend([1, id, 63]);
        }
        v
    }
    let commit = |id: u8| vec![2, id];
    let abort = |id: u8| vec![3, id];
    let honest = 3;
    let happy: Vec<u8> = [
        begin(0, 0, honest),
        chunks(0, 0),
        commit(0),
        begin(1, 2, honest),
        chunks(1, 2),
        commit(1),
        vec![5, 0, 0b110],
        vec![5, 0, 0b110],
        commit(0),
    ]
    .concat();
    let failures: Vec<u8> = [
        begin(0, 1, honest),
        vec![1, 0, 0x80 | 10],
        begin(1, 0, 0),
        chunks(1, 0),
        commit(1),
        begin(2, 0, 2),
        chunks(2, 0),
        commit(2),
        begin(3, 0, honest),
        vec![1, 3, 0x40 | 5],
        vec![1, 3, 5],
        abort(3),
        vec![7, 4, 0],
        vec![7, 0, 1],
    ]
    .concat();
    let mut crowd = Vec::new();
    for id in 0..9 {
        crowd.extend(begin(id, 0, honest));
    }
    crowd.extend([4, 0, 119, 4, 0, 1, 6, 0]);
    let eof: Vec<u8> = [
        begin(0, 3, honest),
        vec![1, 0, 3],
        begin(5, 2, honest | 0x80),
        vec![6, 0],
        commit(0),
        begin(0, 0, honest),
    ]
    .concat();
    vec![
        ("happy", happy),
        ("failures", failures),
        ("crowd_timeout", crowd),
        ("eof", eof),
    ]
}
