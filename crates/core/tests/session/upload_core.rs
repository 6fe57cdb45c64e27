//! The upload lifecycle core (`attach::Uploads`) on virtual time, driven by input records
//! decoded from JSON lines exactly as the session decodes them: every path of WIRE-018..020
//! and PROFILE §12 with the exact acknowledgement records (WIRE-019), every limit at its edge,
//! and the storage claims and reservations balanced after every path (scenario 23).

use crate::common;

use std::time::{Duration, Instant};

use agentx_core::attach::limits::{Limits, MAX_ITEM_BYTES};
use agentx_core::attach::store::Inventory;
use agentx_core::attach::{
    AttachmentRefError, BlobBackend, BlobStore, ImportAck, MemoryBackend, ReasonCode, Sha256Digest,
    Uploads,
};
use agentx_core::fuzzing::attach::samples;
use agentx_wire::json::Parser;
use agentx_wire::wire::{InputRecord, UserRecord};

const P1: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
const P2: &str = "9b2d1c3e-4f5a-4b6c-8d7e-0f1a2b3c4d5e";

fn b64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
}

fn hex(bytes: &[u8]) -> String {
    Sha256Digest::of(bytes).to_hex()
}

struct Harness<B: BlobBackend> {
    uploads: Uploads<B>,
    t0: Instant,
    parser: Parser,
}

impl Harness<MemoryBackend> {
    fn new() -> Self {
        Self::with(MemoryBackend::default(), Limits::default())
    }
}

impl<B: BlobBackend> Harness<B> {
    fn with(backend: B, limits: Limits) -> Self {
        let store = BlobStore::open(backend, &limits).unwrap();
        Harness {
            uploads: Uploads::new(store, limits),
            t0: Instant::now(),
            parser: Parser::new(),
        }
    }

    fn at(&self, ms: u64) -> Instant {
        self.t0 + Duration::from_millis(ms)
    }

    /// Sends one input line at `ms` and returns the acknowledgements as canonical JSON.
    fn send_at(&mut self, ms: u64, line: &str) -> Vec<String> {
        let now = self.at(ms);
        let mut out = Vec::new();
        match InputRecord::decode_line(line.as_bytes(), &mut self.parser) {
            Ok(InputRecord::AttachmentImport(op)) => self.uploads.handle(&op, now, &mut out),
            Ok(other) => panic!("not an import: {other:?}"),
            Err(e) => {
                assert!(!e.is_fatal(), "fatal: {e}");
                let id =
                    agentx_wire::wire::grammar::UploadId::new(e.correlation().unwrap()).unwrap();
                let reason = ReasonCode::from_name(e.reason_code().unwrap()).unwrap();
                self.uploads.handle_invalid(&id, reason, now, &mut out);
            }
        }
        render(out)
    }

    fn send(&mut self, line: &str) -> Vec<String> {
        self.send_at(0, line)
    }

    fn begin(
        &mut self,
        upload: &str,
        att: &str,
        prompt: &str,
        mime: &str,
        bytes: &[u8],
    ) -> Vec<String> {
        self.send(&begin_line(
            upload,
            att,
            prompt,
            "f.bin",
            bytes.len() as u64,
            mime,
            &hex(bytes),
        ))
    }

    /// Begins, sends every chunk (no record each), commits; returns the commit's records.
    fn upload(
        &mut self,
        upload: &str,
        att: &str,
        prompt: &str,
        mime: &str,
        bytes: &[u8],
    ) -> Vec<String> {
        assert_eq!(
            self.begin(upload, att, prompt, mime, bytes),
            [accepted(upload, att, prompt)]
        );
        for (i, piece) in bytes.chunks(262_144).enumerate() {
            assert_eq!(
                self.send(&chunk_line(upload, i as u64, &b64(piece))),
                Vec::<String>::new()
            );
        }
        self.send(&commit_line(upload))
    }

    fn check(&self, record: &str) -> Result<bool, AttachmentRefError> {
        let mut p = Parser::new();
        let InputRecord::User(u) = InputRecord::decode_line(record.as_bytes(), &mut p).unwrap()
        else {
            panic!("not a user record");
        };
        self.uploads.check_user_record(&u).map(|a| a.is_some())
    }

    fn admit(&mut self, record: &str) -> Result<(), AttachmentRefError> {
        let mut p = Parser::new();
        let InputRecord::User(u) = InputRecord::decode_line(record.as_bytes(), &mut p).unwrap()
        else {
            panic!("not a user record");
        };
        let u: UserRecord<'static> = u.into_owned();
        if let Some(a) = self.uploads.check_user_record(&u)? {
            self.uploads.admit(a);
        }
        Ok(())
    }

    /// Every claim and reservation settled (scenario 23).
    fn assert_settled(&self) {
        let s = self.uploads.store().unwrap();
        assert_eq!(s.claimed_bytes(), 0, "claims");
        assert_eq!(s.reserved_bytes(), 0, "reserved bytes");
        assert_eq!(s.reserved_manifests(), 0, "reserved manifests");
    }
}

fn render(out: Vec<ImportAck>) -> Vec<String> {
    out.into_iter()
        .map(|a| {
            let mut v = Vec::new();
            a.into_record().encode(&mut v);
            String::from_utf8(v).unwrap()
        })
        .collect()
}

fn begin_line(
    upload: &str,
    att: &str,
    prompt: &str,
    name: &str,
    size: u64,
    mime: &str,
    sha: &str,
) -> String {
    format!(
        r#"{{"type":"attachment_import","version":1,"operation":"begin","prompt_uuid":"{prompt}","upload_id":"{upload}","attachment_id":"{att}","name":"{name}","size_bytes":{size},"mime_type":"{mime}","sha256":"{sha}"}}"#
    )
}

fn chunk_line(upload: &str, seq: u64, data: &str) -> String {
    format!(
        r#"{{"type":"attachment_import","version":1,"operation":"chunk","upload_id":"{upload}","sequence":{seq},"data":"{data}"}}"#
    )
}

fn commit_line(upload: &str) -> String {
    format!(
        r#"{{"type":"attachment_import","version":1,"operation":"commit","upload_id":"{upload}"}}"#
    )
}

fn abort_line(upload: &str) -> String {
    format!(
        r#"{{"type":"attachment_import","version":1,"operation":"abort","upload_id":"{upload}"}}"#
    )
}

fn accepted(upload: &str, att: &str, prompt: &str) -> String {
    format!(
        r#"{{"type":"attachment_import_result","version":1,"upload_id":"{upload}","attachment_id":"{att}","status":"accepted","terminal":false,"prompt_uuid":"{prompt}"}}"#
    )
}

fn ended(upload: &str, att: &str, prompt: &str, status: &str, reason: &str) -> String {
    format!(
        r#"{{"type":"attachment_import_result","version":1,"upload_id":"{upload}","attachment_id":"{att}","status":"{status}","terminal":true,"prompt_uuid":"{prompt}","reason":"{reason}"}}"#
    )
}

fn rejected(upload: &str, reason: &str) -> String {
    format!(
        r#"{{"type":"attachment_import_rejected","version":1,"upload_id":"{upload}","status":"rejected","terminal":false,"reason":"{reason}"}}"#
    )
}

fn manifest_json(att: &str, name: &str, kind: &str, mime: &str, normalized: &[u8]) -> String {
    let sha = hex(normalized);
    format!(
        r#"{{"type":"attachment_ref","attachment_id":"{att}","kind":"{kind}","name":"{name}","mime_type":"{mime}","size_bytes":{},"sha256":"{sha}","storage_id":"blob_sha256_{sha}"}}"#,
        normalized.len()
    )
}

fn committed(upload: &str, att: &str, prompt: &str, manifest: &str) -> String {
    format!(
        r#"{{"type":"attachment_import_result","version":1,"upload_id":"{upload}","attachment_id":"{att}","status":"committed","terminal":true,"prompt_uuid":"{prompt}","attachment":{manifest}}}"#
    )
}

fn user_line(uuid: Option<&str>, blocks: &[String]) -> String {
    let uuid = uuid
        .map(|u| format!(r#","uuid":"{u}""#))
        .unwrap_or_default();
    format!(
        r#"{{"type":"user","message":{{"role":"user","content_version":1,"content":[{}]}},"parent_tool_use_id":null{uuid}}}"#,
        blocks.join(",")
    )
}

fn text(t: &str) -> String {
    format!(r#"{{"type":"text","text":"{t}"}}"#)
}

fn png() -> Vec<u8> {
    samples::png_gradient(16, 8)
}

fn jpeg() -> Vec<u8> {
    samples::jpeg_gradient(16, 8, None)
}

fn normalized_png(raw: &[u8]) -> Vec<u8> {
    agentx_core::attach::png::normalize(raw, &Limits::default()).unwrap()
}

fn normalized_jpeg(raw: &[u8]) -> Vec<u8> {
    agentx_core::attach::jpeg::normalize(raw, &Limits::default()).unwrap()
}

/// Scenario 22 in the core: two correlated uploads, one terminal acknowledgement each with
/// the normalized manifest, then the text-plus-two-attachments record is admitted once.
#[test]
fn scenario_22_two_uploads_then_one_prompt() {
    let mut h = Harness::new();
    let (p, j) = (png(), jpeg());
    let mp = manifest_json(
        "att_image1",
        "f.bin",
        "image",
        "image/png",
        &normalized_png(&p),
    );
    let mj = manifest_json(
        "att_image2",
        "f.bin",
        "image",
        "image/jpeg",
        &normalized_jpeg(&j),
    );
    assert_eq!(
        h.upload("upl_image1", "att_image1", P1, "image/png", &p),
        [committed("upl_image1", "att_image1", P1, &mp)]
    );
    assert_eq!(
        h.upload("upl_image2", "att_image2", P1, "image/jpeg", &j),
        [committed("upl_image2", "att_image2", P1, &mj)]
    );
    assert_eq!(h.uploads.active(), 0);
    h.assert_settled();
    let record = user_line(
        Some(P1),
        &[text("Compare these in order."), mp.clone(), mj.clone()],
    );
    assert_eq!(h.check(&record), Ok(true));
    h.admit(&record).unwrap();
    // WIRE-020: a submitted attachment is never accepted again.
    assert_eq!(
        h.check(&record),
        Err(AttachmentRefError::AlreadySubmitted { block: 1 })
    );
    // A later duplicate operation never yields a second terminal result.
    assert_eq!(
        h.send(&commit_line("upl_image1")),
        [rejected("upl_image1", "after_terminal")]
    );
    assert_eq!(
        h.send(&chunk_line("upl_image2", 0, "AAAA")),
        [rejected("upl_image2", "after_terminal")]
    );
    assert_eq!(
        h.send(&abort_line("upl_image2")),
        [rejected("upl_image2", "after_terminal")]
    );
    let store = h.uploads.store().unwrap();
    assert_eq!(store.manifest_count(), 2);
    assert_eq!(store.backend().blobs.len(), 2);
}

/// WIRE-018 chunk rules, each ending the upload with one terminal `failed` result and
/// settling its claim; a post-terminal chunk is rejected `after_terminal`.
#[test]
fn scenario_23_chunk_failures_end_the_upload_once() {
    let p = png();
    let half = p.len() / 2;
    let cases: Vec<(&str, Vec<String>, &str)> = vec![
        // Repeated: sequence 0 twice.
        ("repeated", vec![chunk_line("upl_a", 0, &b64(&p[..half])), chunk_line("upl_a", 0, &b64(&p[..half]))], "sequence_gap"),
        // Reordered: 1 before 0.
        ("reordered", vec![chunk_line("upl_a", 1, &b64(&p[half..]))], "sequence_gap"),
        // Missing: 0 then 2.
        ("missing", vec![chunk_line("upl_a", 0, &b64(&p[..half])), chunk_line("upl_a", 2, &b64(&p[half..]))], "sequence_gap"),
        // Noncanonical: missing padding, whitespace, non-zero padding bits, empty.
        ("unpadded", vec![chunk_line("upl_a", 0, "QQ")], "noncanonical_base64"),
        ("whitespace", vec![chunk_line("upl_a", 0, "QUFB QUFB")], "noncanonical_base64"),
        ("padding bits", vec![chunk_line("upl_a", 0, "QR==")], "noncanonical_base64"),
        ("empty", vec![chunk_line("upl_a", 0, "")], "noncanonical_base64"),
        // More bytes than declared.
        ("oversized total", vec![chunk_line("upl_a", 0, &b64(&[p.as_slice(), b"x"].concat()))], "size_mismatch"),
        // A negative sequence is a semantic error of the chunk record (PROFILE §2b).
        ("negative sequence", vec![r#"{"type":"attachment_import","version":1,"operation":"chunk","upload_id":"upl_a","sequence":-1,"data":"QUFB"}"#.to_owned()], "sequence_gap"),
    ];
    for (name, chunks, reason) in cases {
        let mut h = Harness::new();
        assert_eq!(
            h.begin("upl_a", "att_a", P1, "image/png", &p),
            [accepted("upl_a", "att_a", P1)]
        );
        let mut records = Vec::new();
        for c in &chunks {
            records.extend(h.send(c));
        }
        assert_eq!(
            records,
            [ended("upl_a", "att_a", P1, "failed", reason)],
            "{name}"
        );
        assert_eq!(
            h.send(&chunk_line("upl_a", 5, "QUFB")),
            [rejected("upl_a", "after_terminal")],
            "{name}"
        );
        assert_eq!(
            h.send(&commit_line("upl_a")),
            [rejected("upl_a", "after_terminal")],
            "{name}"
        );
        assert_eq!(h.uploads.active(), 0);
        h.assert_settled();
        assert!(
            h.uploads.store().unwrap().backend().blobs.is_empty(),
            "{name}"
        );
    }
}

/// The chunk size edges (WIRE-018): 262,144 decoded / 349,528 encoded accepted, one more
/// decoded byte (still 349,528 characters) and one more character rejected.
#[test]
fn chunk_size_edges() {
    let pdf = samples::pdf_with_pages(1);
    // A PDF padded with a comment to exactly one full chunk plus a little.
    let mut big = pdf.clone();
    big.extend(std::iter::repeat_n(b' ', 262_144 + 10 - big.len()));
    let mut h = Harness::new();
    h.begin("upl_e", "att_e", P1, "application/pdf", &big);
    let full = b64(&big[..262_144]);
    assert_eq!(full.len(), 349_528);
    assert_eq!(h.send(&chunk_line("upl_e", 0, &full)), Vec::<String>::new());
    let rest = b64(&big[262_144..]);
    assert_eq!(h.send(&chunk_line("upl_e", 1, &rest)), Vec::<String>::new());
    let out = h.send(&commit_line("upl_e"));
    assert!(out[0].contains(r#""status":"committed""#), "{out:?}");

    // 262,145 decoded bytes in 349,528 characters.
    let mut h = Harness::new();
    let one_more = vec![b'%'; 262_145];
    h.begin("upl_f", "att_f", P1, "application/pdf", &one_more);
    let enc = b64(&one_more);
    assert_eq!(enc.len(), 349_528);
    assert_eq!(
        h.send(&chunk_line("upl_f", 0, &enc)),
        [ended("upl_f", "att_f", P1, "failed", "chunk_too_large")]
    );
    h.assert_settled();

    // 349,529 characters.
    let mut h = Harness::new();
    h.begin("upl_g", "att_g", P1, "application/pdf", &one_more);
    let mut enc = b64(&big[..262_144]);
    enc.push('A');
    assert_eq!(
        h.send(&chunk_line("upl_g", 0, &enc)),
        [ended("upl_g", "att_g", P1, "failed", "chunk_too_large")]
    );
    h.assert_settled();
}

/// Commit-time validation: declared size and digest, MIME claim vs magic, the format's own
/// checks; each one terminal `failed`, nothing stored.
#[test]
fn scenario_23_commit_failures() {
    let p = png();
    let j = jpeg();
    let pdf = samples::pdf_with_pages(1);
    let mut corrupt = p.clone();
    let n = corrupt.len();
    corrupt[n - 20] ^= 0xff; // inside IDAT/IEND: decode or CRC fails
    let cases: Vec<(&str, String, Vec<u8>, &str)> = vec![
        // Declares the PNG's digest, sends other bytes of the same size.
        (
            "digest",
            hex(&p),
            {
                let mut b = p.clone();
                b[0x30] ^= 1;
                b
            },
            "digest_mismatch",
        ),
        // Sends fewer bytes than declared.
        ("size", hex(&p), p[..p.len() - 1].to_vec(), "size_mismatch"),
        // A JPEG claimed as PNG (MIME vs magic).
        ("mime", hex(&j), j.clone(), "mime_mismatch"),
        // PDF magic under a PNG claim.
        ("magic", hex(&pdf), pdf.clone(), "mime_mismatch"),
        // No advertised magic at all: the PNG validator rejects it.
        (
            "no magic",
            hex(&[7u8; 100]),
            vec![7u8; 100],
            "image_decode_failed",
        ),
        (
            "decode",
            hex(&corrupt),
            corrupt.clone(),
            "image_decode_failed",
        ),
    ];
    for (name, sha, bytes, reason) in cases {
        let declared = if name == "size" {
            p.len() as u64
        } else {
            bytes.len() as u64
        };
        let mut h = Harness::new();
        assert_eq!(
            h.send(&begin_line(
                "upl_c",
                "att_c",
                P1,
                "c.png",
                declared,
                "image/png",
                &sha
            )),
            [accepted("upl_c", "att_c", P1)]
        );
        assert_eq!(
            h.send(&chunk_line("upl_c", 0, &b64(&bytes))),
            Vec::<String>::new(),
            "{name}"
        );
        assert_eq!(
            h.send(&commit_line("upl_c")),
            [ended("upl_c", "att_c", P1, "failed", reason)],
            "{name}"
        );
        assert_eq!(
            h.send(&commit_line("upl_c")),
            [rejected("upl_c", "after_terminal")]
        );
        h.assert_settled();
        assert_eq!(h.uploads.store().unwrap().manifest_count(), 0);
        // The attachment ID is free again after a failed upload.
        assert_eq!(h.upload("upl_d", "att_c", P1, "image/png", &p).len(), 1);
    }
}

/// `begin` rejections change nothing: MIME, name, size, duplicates.
#[test]
fn begin_rejections() {
    let mut h = Harness::new();
    let p = png();
    let sha = hex(&p);
    assert_eq!(
        h.send(&begin_line(
            "upl_x",
            "att_x",
            P1,
            "x.gif",
            10,
            "image/gif",
            &sha
        )),
        [rejected("upl_x", "mime_unsupported")]
    );
    assert_eq!(
        h.send(&begin_line("upl_x", "att_x", P1, "", 10, "image/png", &sha)),
        [rejected("upl_x", "schema_invalid")]
    );
    // PROFILE §2b: a zero size and a malformed digest are semantic errors of `begin`.
    assert_eq!(
        h.send(&begin_line(
            "upl_x",
            "att_x",
            P1,
            "x.png",
            0,
            "image/png",
            &sha
        )),
        [rejected("upl_x", "schema_invalid")]
    );
    assert_eq!(
        h.send(&begin_line(
            "upl_x",
            "att_x",
            P1,
            "x.png",
            10,
            "image/png",
            "ABC"
        )),
        [rejected("upl_x", "schema_invalid")]
    );
    // item limit at the edge: 20 MiB accepted (claimed), one more byte rejected.
    assert_eq!(
        h.send(&begin_line(
            "upl_big",
            "att_big",
            P1,
            "b.pdf",
            MAX_ITEM_BYTES + 1,
            "application/pdf",
            &sha
        )),
        [rejected("upl_big", "item_too_large")]
    );
    assert_eq!(h.uploads.ledger_len(), 0);
    assert_eq!(
        h.send(&begin_line(
            "upl_big",
            "att_big",
            P1,
            "b.pdf",
            MAX_ITEM_BYTES,
            "application/pdf",
            &sha
        )),
        [accepted("upl_big", "att_big", P1)]
    );
    assert_eq!(h.uploads.store().unwrap().claimed_bytes(), MAX_ITEM_BYTES);
    // A second begin of a live ID, or of a live attachment ID, is a duplicate and leaves the
    // live upload alone.
    assert_eq!(
        h.send(&begin_line(
            "upl_big",
            "att_other",
            P1,
            "b.pdf",
            10,
            "application/pdf",
            &sha
        )),
        [rejected("upl_big", "duplicate_upload")]
    );
    assert_eq!(
        h.send(&begin_line(
            "upl_other",
            "att_big",
            P1,
            "b.pdf",
            10,
            "application/pdf",
            &sha
        )),
        [rejected("upl_other", "duplicate_upload")]
    );
    // A semantically invalid begin of a taken ID is a duplicate too.
    assert_eq!(
        h.send(&begin_line(
            "upl_big",
            "att_x",
            P1,
            "x.png",
            0,
            "image/png",
            &sha
        )),
        [rejected("upl_big", "duplicate_upload")]
    );
    assert_eq!(h.uploads.active(), 1);
    assert_eq!(
        h.send(&abort_line("upl_big")),
        [ended("upl_big", "att_big", P1, "aborted", "client_abort")]
    );
    assert_eq!(
        h.send(&abort_line("upl_big")),
        [rejected("upl_big", "after_terminal")]
    );
    assert_eq!(
        h.send(&abort_line("upl_none")),
        [rejected("upl_none", "unknown_upload")]
    );
    assert_eq!(
        h.send(&commit_line("upl_none")),
        [rejected("upl_none", "unknown_upload")]
    );
    assert_eq!(
        h.send(&chunk_line("upl_none", 0, "QUFB")),
        [rejected("upl_none", "unknown_upload")]
    );
    // A terminal ID is never begun again.
    assert_eq!(
        h.send(&begin_line(
            "upl_big",
            "att_big",
            P1,
            "b.pdf",
            10,
            "application/pdf",
            &sha
        )),
        [rejected("upl_big", "duplicate_upload")]
    );
    h.assert_settled();
}

/// WIRE-018: 8 active lifecycles; the 9th is rejected, and a slot frees when one ends.
#[test]
fn ninth_concurrent_upload_is_rejected() {
    let mut h = Harness::new();
    let p = png();
    for i in 0..8 {
        assert_eq!(
            h.begin(
                &format!("upl_{i}"),
                &format!("att_{i}"),
                P1,
                "image/png",
                &p
            ),
            [accepted(&format!("upl_{i}"), &format!("att_{i}"), P1)]
        );
    }
    assert_eq!(h.uploads.active(), 8);
    assert_eq!(
        h.begin("upl_8", "att_8", P1, "image/png", &p),
        [rejected("upl_8", "too_many_active_uploads")]
    );
    assert_eq!(h.uploads.ledger_len(), 8);
    assert_eq!(
        h.send(&abort_line("upl_3")),
        [ended("upl_3", "att_3", P1, "aborted", "client_abort")]
    );
    assert_eq!(
        h.begin("upl_8", "att_8", P1, "image/png", &p),
        [accepted("upl_8", "att_8", P1)]
    );
    assert_eq!(
        h.uploads.store().unwrap().claimed_bytes(),
        8 * p.len() as u64
    );
    let mut out = Vec::new();
    h.uploads.end_all(ReasonCode::InputEof, &mut out);
    assert_eq!(out.len(), 8);
    h.assert_settled();
}

/// PROFILE §12: the timeout runs 120 s from `begin` on the core's clock.
#[test]
fn timeout_expires_at_120_seconds_from_begin() {
    let mut h = Harness::new();
    let p = png();
    assert_eq!(h.uploads.poll_timeout(), None);
    h.send_at(
        0,
        &begin_line(
            "upl_t",
            "att_t",
            P1,
            "t.png",
            p.len() as u64,
            "image/png",
            &hex(&p),
        ),
    );
    h.send_at(
        5_000,
        &begin_line(
            "upl_u",
            "att_u",
            P1,
            "u.png",
            p.len() as u64,
            "image/png",
            &hex(&p),
        ),
    );
    // A chunk does not extend the deadline.
    assert_eq!(
        h.send_at(119_000, &chunk_line("upl_t", 0, &b64(&p[..10]))),
        Vec::<String>::new()
    );
    assert_eq!(h.uploads.poll_timeout(), Some(h.at(120_000)));
    let mut out = Vec::new();
    h.uploads
        .handle_timeout(h.at(120_000) - Duration::from_nanos(1), &mut out);
    assert!(out.is_empty());
    h.uploads.handle_timeout(h.at(120_000), &mut out);
    assert_eq!(
        render(out),
        [ended("upl_t", "att_t", P1, "expired", "timeout")]
    );
    assert_eq!(h.uploads.poll_timeout(), Some(h.at(125_000)));
    // An operation arriving after a missed deadline sees the expiry first, then its own
    // rejection: still one terminal result.
    assert_eq!(
        h.send_at(130_000, &commit_line("upl_u")),
        [
            ended("upl_u", "att_u", P1, "expired", "timeout"),
            rejected("upl_u", "after_terminal")
        ]
    );
    assert_eq!(
        h.send_at(130_000, &commit_line("upl_t")),
        [rejected("upl_t", "after_terminal")]
    );
    assert_eq!(h.uploads.poll_timeout(), None);
    h.assert_settled();
}

/// EOF and process failure during uploads: one terminal result per active upload, committed
/// ones untouched.
#[test]
fn eof_and_process_failure_end_active_uploads() {
    let mut h = Harness::new();
    let p = png();
    h.upload("upl_done", "att_done", P1, "image/png", &p);
    h.begin("upl_b", "att_b", P1, "image/png", &p);
    h.send(&chunk_line("upl_b", 0, &b64(&p[..5])));
    h.begin("upl_a", "att_a", P1, "image/png", &p);
    let mut out = Vec::new();
    h.uploads.end_all(ReasonCode::InputEof, &mut out);
    assert_eq!(
        render(out),
        [
            ended("upl_a", "att_a", P1, "aborted", "input_eof"),
            ended("upl_b", "att_b", P1, "aborted", "input_eof"),
        ]
    );
    let mut out = Vec::new();
    h.uploads.end_all(ReasonCode::InputEof, &mut out);
    assert!(out.is_empty());
    h.assert_settled();

    let mut h = Harness::new();
    h.begin("upl_p", "att_p", P1, "image/png", &p);
    let mut out = Vec::new();
    h.uploads.end_all(ReasonCode::ProcessFailure, &mut out);
    assert_eq!(
        render(out),
        [ended("upl_p", "att_p", P1, "failed", "process_failure")]
    );
    let mut out = Vec::new();
    h.begin("upl_q", "att_q", P1, "image/png", &p);
    h.uploads.end_all(ReasonCode::Cancelled, &mut out);
    assert_eq!(
        render(out),
        [ended("upl_q", "att_q", P1, "aborted", "cancelled")]
    );
    h.assert_settled();
}

/// The in-process ledger keeps 100,000 accepted upload IDs (WIRE-018); the next `begin` is
/// `upload_ledger_full` and changes nothing.
#[test]
fn ledger_full_at_100000_ids() {
    let mut h = Harness::new();
    let now = h.at(0);
    let sha = "0".repeat(64);
    let mut out = Vec::new();
    let mut p = Parser::new();
    for i in 0..100_000u32 {
        let id = format!("upl_{i}");
        let line = begin_line(
            &id,
            &format!("att_{i}"),
            P1,
            "l.pdf",
            1,
            "application/pdf",
            &sha,
        );
        let InputRecord::AttachmentImport(op) =
            InputRecord::decode_line(line.as_bytes(), &mut p).unwrap()
        else {
            unreachable!()
        };
        h.uploads.handle(&op, now, &mut out);
        let abort = abort_line(&id);
        let InputRecord::AttachmentImport(op) =
            InputRecord::decode_line(abort.as_bytes(), &mut p).unwrap()
        else {
            unreachable!()
        };
        h.uploads.handle(&op, now, &mut out);
        assert_eq!(out.len(), 2, "{i}");
        out.clear();
    }
    assert_eq!(h.uploads.ledger_len(), 100_000);
    assert_eq!(
        h.send(&begin_line(
            "upl_last",
            "att_last",
            P1,
            "l.pdf",
            1,
            "application/pdf",
            &sha
        )),
        [rejected("upl_last", "upload_ledger_full")]
    );
    assert_eq!(h.uploads.ledger_len(), 100_000);
    h.assert_settled();
}

/// A backend that reports a large inventory without holding the bytes, to reach the 512 MiB
/// and 100,000-manifest bounds at their real values.
#[derive(Default)]
struct Prefilled {
    inventory: Inventory,
    inner: MemoryBackend,
}

impl BlobBackend for Prefilled {
    fn inventory(&mut self) -> Result<Inventory, ReasonCode> {
        Ok(std::mem::take(&mut self.inventory))
    }
    fn write_blob(&mut self, d: &Sha256Digest, b: &[u8]) -> Result<(), ReasonCode> {
        self.inner.write_blob(d, b)
    }
    fn remove_blob(&mut self, d: &Sha256Digest) -> Result<(), ReasonCode> {
        self.inner.remove_blob(d)
    }
    fn append_manifest(&mut self, l: &[u8]) -> Result<(), ReasonCode> {
        self.inner.append_manifest(l)
    }
}

/// 512 MiB (WIRE-018): `begin` claims its declared size; at the bound exactly is accepted,
/// one byte more is `storage_full`; the claim is released when the upload ends.
#[test]
fn storage_bound_at_512_mib() {
    let stored = 536_870_912 - MAX_ITEM_BYTES;
    let backend = Prefilled {
        inventory: Inventory {
            blobs: vec![(Sha256Digest::of(b"existing"), stored)],
            manifests: vec![],
        },
        ..Prefilled::default()
    };
    let mut h = Harness::with(backend, Limits::default());
    let sha = "0".repeat(64);
    assert_eq!(
        h.send(&begin_line(
            "upl_a",
            "att_a",
            P1,
            "a.pdf",
            MAX_ITEM_BYTES - 10,
            "application/pdf",
            &sha
        )),
        [accepted("upl_a", "att_a", P1)]
    );
    assert_eq!(
        h.send(&begin_line(
            "upl_b",
            "att_b",
            P1,
            "b.pdf",
            11,
            "application/pdf",
            &sha
        )),
        [rejected("upl_b", "storage_full")]
    );
    assert_eq!(
        h.send(&begin_line(
            "upl_b",
            "att_b",
            P1,
            "b.pdf",
            10,
            "application/pdf",
            &sha
        )),
        [accepted("upl_b", "att_b", P1)]
    );
    h.send(&abort_line("upl_a"));
    h.send(&abort_line("upl_b"));
    h.assert_settled();
    // Freed: a full 20 MiB claim fits again.
    assert_eq!(
        h.send(&begin_line(
            "upl_c",
            "att_c",
            P1,
            "c.pdf",
            MAX_ITEM_BYTES,
            "application/pdf",
            &sha
        )),
        [accepted("upl_c", "att_c", P1)]
    );
}

/// 100,000 durable manifests (WIRE-018): the 100,000th commits, the next commit is a
/// terminal `failed` / `manifest_store_full` with nothing stored.
#[test]
fn manifest_store_full_at_100000() {
    let backend = Prefilled {
        inventory: Inventory {
            blobs: vec![],
            manifests: (0..99_999u32)
                .map(|i| Sha256Digest::of(&i.to_le_bytes()))
                .collect(),
        },
        ..Prefilled::default()
    };
    let mut h = Harness::with(backend, Limits::default());
    let p = png();
    let mp = manifest_json("att_a", "f.bin", "image", "image/png", &normalized_png(&p));
    assert_eq!(
        h.upload("upl_a", "att_a", P1, "image/png", &p),
        [committed("upl_a", "att_a", P1, &mp)]
    );
    assert_eq!(h.uploads.store().unwrap().manifest_count(), 100_000);
    assert_eq!(
        h.upload("upl_b", "att_b", P1, "image/png", &p),
        [ended("upl_b", "att_b", P1, "failed", "manifest_store_full")]
    );
    h.assert_settled();
}

/// A storage failure at commit is a terminal `failed` / `process_failure`; nothing is left.
#[test]
fn commit_failure_in_the_backend() {
    let mut h = Harness::new();
    let p = png();
    h.uploads.store_mut().unwrap().backend_mut().fail_next_write = true;
    assert_eq!(
        h.upload("upl_a", "att_a", P1, "image/png", &p),
        [ended("upl_a", "att_a", P1, "failed", "process_failure")]
    );
    h.uploads
        .store_mut()
        .unwrap()
        .backend_mut()
        .fail_next_append = true;
    assert_eq!(
        h.upload("upl_b", "att_b", P1, "image/png", &p),
        [ended("upl_b", "att_b", P1, "failed", "process_failure")]
    );
    let s = h.uploads.store().unwrap();
    assert!(s.backend().blobs.is_empty());
    assert!(s.backend().manifest_lines.is_empty());
    h.assert_settled();
}

/// WIRE-020 prompt correlation: only committed attachments of the record's own uuid, all of
/// them, as committed; a rejection consumes nothing, so the corrected record still goes in.
#[test]
fn prompt_correlation_rules() {
    let mut h = Harness::new();
    let (p, j) = (png(), jpeg());
    let mp = manifest_json("att_1", "f.bin", "image", "image/png", &normalized_png(&p));
    let mj = manifest_json(
        "att_2",
        "f.bin",
        "image",
        "image/jpeg",
        &normalized_jpeg(&j),
    );
    // Before commit: not committed (receiving).
    h.begin("upl_1", "att_1", P1, "image/png", &p);
    assert_eq!(
        h.check(&user_line(Some(P1), std::slice::from_ref(&mp))),
        Err(AttachmentRefError::NotCommitted { block: 0 })
    );
    for (i, piece) in p.chunks(100).enumerate() {
        h.send(&chunk_line("upl_1", i as u64, &b64(piece)));
    }
    // Another upload of P1 still running: the set is incomplete.
    h.begin("upl_2", "att_2", P1, "image/jpeg", &j);
    h.send(&commit_line("upl_1"));
    assert_eq!(
        h.check(&user_line(Some(P1), std::slice::from_ref(&mp))),
        Err(AttachmentRefError::UploadInProgress)
    );
    h.send(&chunk_line("upl_2", 0, &b64(&j)));
    h.send(&commit_line("upl_2"));
    // An attachment of P1 under P2.
    h.upload("upl_3", "att_3", P2, "image/png", &p);
    let m3 = manifest_json("att_3", "f.bin", "image", "image/png", &normalized_png(&p));
    assert_eq!(
        h.check(&user_line(Some(P2), &[m3.clone(), mp.clone()])),
        Err(AttachmentRefError::OtherPrompt { block: 1 })
    );
    // Omitting one.
    assert_eq!(
        h.check(&user_line(Some(P1), &[text("hi"), mp.clone()])),
        Err(AttachmentRefError::Omitted { count: 1 })
    );
    // Text only, with committed attachments waiting: omitted too.
    assert_eq!(
        h.check(&user_line(Some(P1), &[text("hi")])),
        Err(AttachmentRefError::Omitted { count: 2 })
    );
    // A record without uuid.
    assert_eq!(
        h.check(&user_line(None, &[mp.clone(), mj.clone()])),
        Err(AttachmentRefError::MissingUuid)
    );
    // A changed manifest (size), a repeated block, an unknown attachment.
    let tampered = mp.replace(r#""size_bytes":"#, r#""size_bytes":1"#);
    assert_eq!(
        h.check(&user_line(Some(P1), &[text("x"), tampered, mj.clone()])),
        Err(AttachmentRefError::ManifestMismatch { block: 1 })
    );
    assert_eq!(
        h.check(&user_line(Some(P1), &[mp.clone(), mp.clone(), mj.clone()])),
        Err(AttachmentRefError::Repeated { block: 1 })
    );
    let unknown = mp.replace("att_1", "att_zz");
    assert_eq!(
        h.check(&user_line(Some(P1), &[unknown])),
        Err(AttachmentRefError::NotCommitted { block: 0 })
    );
    // Nine refs pass max_attachments_per_message (8) before anything is looked up.
    let nine: Vec<String> = (0..9).map(|_| mp.clone()).collect();
    assert_eq!(
        h.check(&user_line(Some(P1), &nine)),
        Err(AttachmentRefError::TooMany)
    );
    // Order is the client's: attachments in any order, with text anywhere.
    h.admit(&user_line(Some(P1), &[mj.clone(), text("b"), mp.clone()]))
        .unwrap();
    // Submitted ones cannot move to another prompt either.
    assert_eq!(
        h.check(&user_line(Some(P2), &[m3.clone(), mp.clone()])),
        Err(AttachmentRefError::OtherPrompt { block: 1 })
    );
    h.admit(&user_line(Some(P2), &[m3])).unwrap();
    // A text-only prompt with nothing committed needs no correlation.
    assert_eq!(h.check(&user_line(Some(P1), &[text("again")])), Ok(false));
    h.assert_settled();
}

/// `max_aggregate_bytes` (40 MiB) over one record's attachments.
#[test]
fn aggregate_limit_of_one_record() {
    let p = png();
    let p2 = samples::png_gradient(16, 9);
    let total = (normalized_png(&p).len() + normalized_png(&p2).len()) as u64;
    let limits = Limits {
        max_aggregate_bytes: total - 1,
        ..Limits::default()
    };
    let mut h = Harness::with(MemoryBackend::default(), limits);
    h.upload("upl_1", "att_1", P1, "image/png", &p);
    h.upload("upl_2", "att_2", P1, "image/png", &p2);
    let m1 = manifest_json("att_1", "f.bin", "image", "image/png", &normalized_png(&p));
    let m2 = manifest_json("att_2", "f.bin", "image", "image/png", &normalized_png(&p2));
    assert_eq!(
        h.check(&user_line(Some(P1), &[m1.clone(), m2.clone()])),
        Err(AttachmentRefError::AggregateTooLarge)
    );
    // At the limit exactly: admitted.
    let limits = Limits {
        max_aggregate_bytes: total,
        ..Limits::default()
    };
    let mut h = Harness::with(MemoryBackend::default(), limits);
    h.upload("upl_1", "att_1", P1, "image/png", &p);
    h.upload("upl_2", "att_2", P1, "image/png", &p2);
    assert_eq!(h.check(&user_line(Some(P1), &[m1, m2])), Ok(true));
}

/// PROFILE §12: without the capability every operation is rejected `capability_absent` and an
/// `attachment_ref` is an input error; text records are unchanged.
#[test]
fn scenario_24_capability_absent() {
    let mut uploads: Uploads<MemoryBackend> = Uploads::disabled();
    assert!(!uploads.capability());
    let mut p = Parser::new();
    let png = png();
    let lines = [
        begin_line(
            "upl_a",
            "att_a",
            P1,
            "a.png",
            png.len() as u64,
            "image/png",
            &hex(&png),
        ),
        chunk_line("upl_a", 0, &b64(&png)),
        commit_line("upl_a"),
        abort_line("upl_a"),
    ];
    for line in &lines {
        let InputRecord::AttachmentImport(op) =
            InputRecord::decode_line(line.as_bytes(), &mut p).unwrap()
        else {
            unreachable!()
        };
        let mut out = Vec::new();
        uploads.handle(&op, Instant::now(), &mut out);
        assert_eq!(render(out), [rejected("upl_a", "capability_absent")]);
    }
    let m = manifest_json(
        "att_a",
        "a.png",
        "image",
        "image/png",
        &normalized_png(&png),
    );
    let rec = user_line(Some(P1), &[text("look"), m]);
    let InputRecord::User(u) = InputRecord::decode_line(rec.as_bytes(), &mut p).unwrap() else {
        unreachable!()
    };
    assert_eq!(
        uploads.check_user_record(&u),
        Err(AttachmentRefError::CapabilityAbsent)
    );
    assert_eq!(
        AttachmentRefError::CapabilityAbsent.to_string(),
        "attachments are not available (capability_absent)"
    );
    let rec = r#"{"type":"user","message":"plain","parent_tool_use_id":null}"#;
    let InputRecord::User(u) = InputRecord::decode_line(rec.as_bytes(), &mut p).unwrap() else {
        unreachable!()
    };
    assert_eq!(uploads.check_user_record(&u), Ok(None));
}

/// WIRE-022: nothing the lifecycle writes or formats carries bytes or base64.
#[test]
fn acknowledgements_never_carry_bytes() {
    let mut h = Harness::new();
    let p = png();
    let data = b64(&p);
    let mut all = h.upload("upl_a", "att_a", P1, "image/png", &p);
    all.extend(h.send(&chunk_line("upl_a", 1, &data)));
    for r in &all {
        assert!(!r.contains(&data[..40]), "{r}");
    }
    let dbg = format!("{:?}", h.uploads);
    assert!(!dbg.contains(&data[..40]));
}

/// The lifecycle's commit normalizes with `admit::normalize_owned` (no PDF copy, the raw PNG
/// freed early, the verified digest reused for a PDF): for every sample and every PngSuite
/// file (when the conformance data is present), under each media type, it gives exactly what
/// `admit::normalize` gives, errors included.
#[test]
fn normalize_owned_equals_normalize() {
    use agentx_core::attach::{admit, MediaType};
    let mut inputs: Vec<Vec<u8>> = samples::seeds().into_iter().map(|(_, _, b)| b).collect();
    let mut broken = png();
    let n = broken.len();
    broken[n - 20] ^= 0xff;
    inputs.push(broken);
    inputs.push(samples::png_with_chunk(&png(), b"zTXt", b"k\0\0xyz"));
    inputs.push(samples::jpeg_gradient(33, 17, Some(8)));
    inputs.push(Vec::new());
    if let Some(dir) = common::conformance_dir() {
        for entry in std::fs::read_dir(dir.join("png/pngsuite")).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "png") {
                inputs.push(std::fs::read(&path).unwrap());
            }
        }
    }
    let limits = Limits::default();
    let mut compared = 0;
    for raw in &inputs {
        for media in [MediaType::Png, MediaType::Jpeg, MediaType::Pdf] {
            let owned = admit::normalize_owned(media, raw.clone(), Sha256Digest::of(raw), &limits);
            assert_eq!(owned, admit::normalize(media, raw, &limits));
            compared += 1;
        }
    }
    assert!(compared >= 3 * 17, "{compared}");
}
