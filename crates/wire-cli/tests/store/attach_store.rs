//! The blob store and manifest ledger (WIRE-018): content addressing and deduplication, the
//! 512 MiB unique-blob bound and the 100,000-manifest bound at their edges (configured small
//! on the in-memory backend, plus the default constants), reservations settled exactly once,
//! nothing left behind by a failed admission, survival across a restart on the filesystem
//! backend; the item and aggregate limits; `agentx-wire attach` end to end.

use std::path::PathBuf;

use agentx_core::attach::admit::{self, derive_attachment_id, is_attachment_id};
use agentx_core::attach::limits::{self, Limits};
use agentx_core::attach::{
    admit_file, AggregateBudget, BlobStore, MediaType, MemoryBackend, ReasonCode, Sha256Digest,
};
use agentx_core::fuzzing::attach::samples;
use agentx_home::FsBackend;

fn small_limits(storage: u64, manifests: u64) -> Limits {
    Limits {
        max_storage_bytes: storage,
        max_manifests: manifests,
        ..Limits::default()
    }
}

fn normalized_pdf(pages: usize) -> admit::Normalized {
    admit::normalize(
        MediaType::Pdf,
        &samples::pdf_with_pages(pages),
        &Limits::default(),
    )
    .unwrap()
}

#[test]
fn default_bounds_are_the_advertised_ones() {
    let l = Limits::default();
    assert_eq!(l.max_storage_bytes, 536_870_912);
    assert_eq!(l.max_manifests, 100_000);
    assert_eq!(l.max_item_bytes, 20_971_520);
    assert_eq!(l.max_aggregate_bytes, 41_943_040);
    assert_eq!(limits::MAX_CHUNK_ENCODED_BYTES, 349_528);
    assert_eq!(limits::MAX_CHUNK_DECODED_BYTES, 262_144);
    assert_eq!(l.max_image_dimension, 8192);
    assert_eq!(l.max_image_pixels, 20_000_000);
    assert_eq!(l.max_pdf_pages, 100);
}

#[test]
fn storage_bound_at_and_past_the_edge() {
    let a = normalized_pdf(1);
    let b = normalized_pdf(2);
    let c = normalized_pdf(3);
    let exact = a.size_bytes() + b.size_bytes();
    let l = small_limits(exact, 100);
    let mut store = BlobStore::open(MemoryBackend::default(), &l).unwrap();
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    // Deduplicated: the same blob under another manifest costs no storage.
    admit::commit(&mut store, &a, "att_a2", "again.pdf").unwrap();
    assert_eq!(store.used_bytes(), a.size_bytes());
    // Exactly at the bound: accepted.
    admit::commit(&mut store, &b, "att_b", "b.pdf").unwrap();
    assert_eq!(store.used_bytes(), exact);
    // One more unique byte: storage_full, nothing stored, nothing still reserved.
    assert_eq!(
        admit::commit(&mut store, &c, "att_c", "c.pdf"),
        Err(ReasonCode::StorageFull)
    );
    assert!(!store.contains_blob(&c.sha256));
    assert_eq!((store.reserved_bytes(), store.reserved_manifests()), (0, 0));
    assert_eq!(store.backend().blobs.len(), 2);
    assert_eq!(store.manifest_count(), 3);
    // A bound one byte smaller rejects the second blob.
    let l = small_limits(exact - 1, 100);
    let mut store = BlobStore::open(MemoryBackend::default(), &l).unwrap();
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    assert_eq!(
        admit::commit(&mut store, &b, "att_b", "b.pdf"),
        Err(ReasonCode::StorageFull)
    );
}

#[test]
fn manifest_bound_at_and_past_the_edge_and_across_restart() {
    let a = normalized_pdf(1);
    let l = small_limits(u64::MAX, 3);
    let mut store = BlobStore::open(MemoryBackend::default(), &l).unwrap();
    for i in 0..3 {
        admit::commit(&mut store, &a, &format!("att_{i}"), "a.pdf").unwrap();
    }
    assert_eq!(store.manifest_count(), 3);
    // The same manifest again is idempotent (no new slot), even when full.
    admit::commit(&mut store, &a, "att_0", "a.pdf").unwrap();
    assert_eq!(
        admit::commit(&mut store, &a, "att_3", "a.pdf"),
        Err(ReasonCode::ManifestStoreFull)
    );
    assert_eq!(store.reserved_manifests(), 0);
    // Restart: the clone of the backend is what survived; the count is rebuilt from it.
    let survived = store.backend().clone();
    let mut again = BlobStore::open(survived, &l).unwrap();
    assert_eq!(again.manifest_count(), 3);
    assert_eq!(again.used_bytes(), a.size_bytes());
    assert_eq!(
        admit::commit(&mut again, &a, "att_4", "a.pdf"),
        Err(ReasonCode::ManifestStoreFull)
    );
}

#[test]
fn reservations_settle_exactly_once() {
    let a = normalized_pdf(1);
    let b = normalized_pdf(2);
    let l = small_limits(a.size_bytes() + b.size_bytes(), 10);
    let mut store = BlobStore::open(MemoryBackend::default(), &l).unwrap();
    let ma = admit::manifest(&a, "att_a", "a.pdf").unwrap();
    let ma2 = admit::manifest(&a, "att_a2", "a2.pdf").unwrap();
    let mb = admit::manifest(&b, "att_b", "b.pdf").unwrap();
    // Two reservations of the same new blob claim its bytes once.
    let r1 = store.reserve(&ma).unwrap();
    let r2 = store.reserve(&ma2).unwrap();
    assert_eq!(store.reserved_bytes(), a.size_bytes());
    assert_eq!(store.reserved_manifests(), 2);
    let rb = store.reserve(&mb).unwrap();
    assert_eq!(store.reserved_bytes(), a.size_bytes() + b.size_bytes());
    // Releasing one holder keeps the shared claim; the last commit settles it.
    store.release(r1);
    assert_eq!(store.reserved_bytes(), a.size_bytes() + b.size_bytes());
    store.commit(r2, &a.bytes).unwrap();
    assert_eq!(store.reserved_bytes(), b.size_bytes());
    store.release(rb);
    assert_eq!((store.reserved_bytes(), store.reserved_manifests()), (0, 0));
    assert_eq!(store.used_bytes(), a.size_bytes());
    assert_eq!(store.manifest_count(), 1);
    // Bytes that are not the manifest's blob: refused, reservation released.
    let r = store.reserve(&mb).unwrap();
    assert_eq!(store.commit(r, &a.bytes), Err(ReasonCode::ProcessFailure));
    assert_eq!((store.reserved_bytes(), store.reserved_manifests()), (0, 0));
}

#[test]
fn failed_commit_leaves_nothing_behind() {
    let a = normalized_pdf(1);
    let l = Limits::default();
    let mut store = BlobStore::open(MemoryBackend::default(), &l).unwrap();
    // Blob write fails.
    store.backend_mut().fail_next_write = true;
    assert_eq!(
        admit::commit(&mut store, &a, "att_a", "a.pdf"),
        Err(ReasonCode::ProcessFailure)
    );
    // Manifest append fails after the blob was written: the blob is removed again.
    store.backend_mut().fail_next_append = true;
    assert_eq!(
        admit::commit(&mut store, &a, "att_a", "a.pdf"),
        Err(ReasonCode::ProcessFailure)
    );
    assert!(store.backend().blobs.is_empty());
    assert!(store.backend().manifest_lines.is_empty());
    assert_eq!(store.used_bytes(), 0);
    assert_eq!((store.reserved_bytes(), store.reserved_manifests()), (0, 0));
    // And then it works.
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    assert_eq!(store.used_bytes(), a.size_bytes());
}

fn temp_home(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agentx-attach-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn filesystem_store_survives_restart_and_leaves_no_temporaries() {
    let home = temp_home("fs");
    let png = samples::png_rgb(7, 5);
    let l = small_limits(u64::MAX, 2);
    {
        let mut store = BlobStore::open(FsBackend::open(&home).unwrap(), &l).unwrap();
        let m = admit_file(&mut store, &png, None, "p.png", None, &l).unwrap();
        assert_eq!(m.mime_type, "image/png");
        assert!(home.join("blobs").join(&m.storage_id).is_file());
        assert_eq!(store.backend().temporaries(), 0);
        // Rejected admissions leave nothing either.
        assert_eq!(
            admit_file(&mut store, b"%PDF-1.4 nope", None, "x.pdf", None, &l),
            Err(ReasonCode::PdfInvalid)
        );
        assert_eq!(store.backend().temporaries(), 0);
        admit_file(
            &mut store,
            &samples::pdf_with_pages(1),
            None,
            "d.pdf",
            None,
            &l,
        )
        .unwrap();
    }
    // A stale temporary from a crash, and a torn manifest line.
    let blobs = home.join("blobs");
    std::fs::write(blobs.join(".tmp-deadbeef-1-1"), b"partial").unwrap();
    let ledger = blobs.join("manifests.ndjson");
    let mut text = std::fs::read(&ledger).unwrap();
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(lines, 2);
    text.extend_from_slice(b"{\"type\":\"attach");
    std::fs::write(&ledger, &text).unwrap();
    {
        let backend = FsBackend::open(&home).unwrap();
        assert_eq!(backend.temporaries(), 0, "stale temporary swept at open");
        let mut store = BlobStore::open(backend, &l).unwrap();
        assert_eq!(store.manifest_count(), 2, "torn line not counted");
        assert_eq!(
            admit_file(&mut store, &samples::png_rgb(3, 3), None, "q.png", None, &l),
            Err(ReasonCode::ManifestStoreFull)
        );
        // Idempotent re-admission of a committed file still succeeds when full.
        admit_file(&mut store, &png, None, "p.png", None, &l).unwrap();
    }
    let text = std::fs::read_to_string(&ledger).unwrap();
    assert!(text.ends_with('\n') && text.lines().count() == 2, "{text}");
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["type"], "attachment_ref");
    }
    std::fs::remove_dir_all(&home).unwrap();
}

#[test]
fn item_and_aggregate_limits_at_and_past_the_edge() {
    let l = Limits::default();
    // Item: the raw size is checked first, before anything is decoded.
    let mut at = vec![0u8; 20_971_520];
    at[..5].copy_from_slice(b"%PDF-");
    let mut past = at.clone();
    past.push(0);
    assert_eq!(
        admit::normalize(MediaType::Pdf, &past, &l).map(|_| ()),
        Err(ReasonCode::ItemTooLarge)
    );
    // At the limit the size passes and the (junk) content decides.
    assert_eq!(
        admit::normalize(MediaType::Pdf, &at, &l).map(|_| ()),
        Err(ReasonCode::PdfInvalid)
    );
    // Aggregate: 40 MiB per message.
    let mut budget = AggregateBudget::new(&l);
    budget.admit(20_971_520).unwrap();
    budget.admit(20_971_520).unwrap();
    assert_eq!(budget.used(), 41_943_040);
    assert_eq!(budget.admit(1), Err(ReasonCode::AggregateTooLarge));
    assert_eq!(budget.used(), 41_943_040);
    let mut budget = AggregateBudget::new(&l);
    budget.admit(41_943_039).unwrap();
    assert_eq!(budget.admit(2), Err(ReasonCode::AggregateTooLarge));
    budget.admit(1).unwrap();
}

#[test]
fn mime_claims_and_identity() {
    let l = Limits::default();
    let mut store = BlobStore::open(MemoryBackend::default(), &l).unwrap();
    let png = samples::png_rgb(2, 2);
    let jpg = samples::jpeg_rgb(8, 8, None);
    type Case<'a> = (&'a [u8], Option<&'a str>, Result<&'a str, ReasonCode>);
    let cases: [Case; 6] = [
        (&png, Some("image/png"), Ok("image/png")),
        (&png, Some("image/jpeg"), Err(ReasonCode::MimeMismatch)),
        (&jpg, Some("application/pdf"), Err(ReasonCode::MimeMismatch)),
        (&png, Some("image/gif"), Err(ReasonCode::MimeUnsupported)),
        (b"GIF89a....", None, Err(ReasonCode::MimeUnsupported)),
        (&jpg, None, Ok("image/jpeg")),
    ];
    for (bytes, claim, want) in cases {
        let got = admit_file(&mut store, bytes, claim, "f", None, &l);
        assert_eq!(
            got.map(|m| m.mime_type).as_deref().map_err(|e| *e),
            want,
            "{claim:?}"
        );
    }
    // Names and IDs.
    assert_eq!(
        admit_file(&mut store, &png, None, "", None, &l),
        Err(ReasonCode::SchemaInvalid)
    );
    assert_eq!(
        admit_file(&mut store, &png, None, &"n".repeat(256), None, &l),
        Err(ReasonCode::SchemaInvalid)
    );
    assert!(admit_file(&mut store, &png, None, &"n".repeat(255), None, &l).is_ok());
    assert_eq!(
        admit_file(&mut store, &png, None, "f", Some("upl_x"), &l),
        Err(ReasonCode::SchemaInvalid)
    );
    let d = Sha256Digest::of(b"x");
    let id = derive_attachment_id(&d, "a.png");
    assert!(is_attachment_id(&id) && id.len() == 36);
    assert_eq!(id, derive_attachment_id(&d, "a.png"));
    assert_ne!(id, derive_attachment_id(&d, "b.png"));
    assert!(is_attachment_id(&format!("att_{}", "a".repeat(63))));
    assert!(!is_attachment_id(&format!("att_{}", "a".repeat(64))));
    assert!(!is_attachment_id("att__x") && !is_attachment_id("att_"));
}

#[test]
fn cli_admits_prints_and_rejects() {
    use agentx_wire_cli::run;
    let home = temp_home("cli");
    let file = home.join("shot.png");
    std::fs::write(&file, samples::png_rgb(3, 2)).unwrap();
    let args = |v: &[&str]| {
        std::iter::once("attach")
            .chain(v.iter().copied())
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let h = home.to_str().unwrap();
    let f = file.to_str().unwrap();
    assert_eq!(run(&args(&["--home", h, f])), 0);
    assert_eq!(run(&args(&["--home", h, "--mime", "image/jpeg", f])), 1);
    assert_eq!(run(&args(&["--home", h, "--mime", "text/plain", f])), 1);
    assert_eq!(run(&args(&["--home", h])), 2);
    assert_eq!(run(&args(&["--home", h, "--what", f])), 2);
    assert_eq!(run(&args(&["--home", h, &format!("{f}.missing")])), 1);
    let ledger = std::fs::read_to_string(home.join("blobs/manifests.ndjson")).unwrap();
    assert_eq!(ledger.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(ledger.trim_end()).unwrap();
    assert_eq!(v["name"], "shot.png", "base name only, never the path");
    assert!(!ledger.contains(h), "no path in the manifest (WIRE-022)");
    std::fs::remove_dir_all(&home).unwrap();
}
