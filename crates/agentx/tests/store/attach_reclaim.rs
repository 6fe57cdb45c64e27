//! Blob reclamation (PROFILE §12): a committed blob that no stored transcript
//! references is reclaimed at a later start once it was last committed more than 24 hours ago;
//! a referenced blob never is. On the in-memory backend the clock is the test's: at the limit
//! exactly the blob is kept, one second past it is reclaimed; a reuse by deduplication is a
//! commit (the 24 hours restart) and checks that the blob is still there. On the filesystem
//! backend a blob's commit time is its file's mtime: a second store sharing the home sees the
//! room a reclamation made. Black-box: a home filled to 512 MiB by old unreferenced blobs
//! takes an upload again once `agentx` starts, and a blob a stored session references stays.

use crate::harness;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, SystemTime};

use agentx_core::attach::admit;
use agentx_core::attach::limits::Limits;
use agentx_core::attach::{
    BlobStore, MediaType, MemoryBackend, ReasonCode, Reclaimed, Sha256Digest, RECLAIM_AFTER_SECS,
};
use agentx_core::fuzzing::attach::samples;
use agentx_home::FsBackend;
use harness::*;
use serde_json::{json, Value};

const T0: u64 = 1_800_000_000;
const DAY: u64 = RECLAIM_AFTER_SECS;
const MAX_STORAGE: u64 = 536_870_912;

fn pdf(pages: usize) -> admit::Normalized {
    admit::normalize(
        MediaType::Pdf,
        &samples::pdf_with_pages(pages),
        &Limits::default(),
    )
    .unwrap()
}

fn memory_store(storage: u64) -> BlobStore<MemoryBackend> {
    let limits = Limits {
        max_storage_bytes: storage,
        ..Limits::default()
    };
    let backend = MemoryBackend {
        now: T0,
        ..MemoryBackend::default()
    };
    BlobStore::open(backend, &limits).unwrap()
}

fn nothing_referenced() -> Option<HashSet<Sha256Digest>> {
    Some(HashSet::new())
}

#[test]
fn kept_at_the_limit_reclaimed_one_second_past() {
    assert_eq!(RECLAIM_AFTER_SECS, 86_400, "PROFILE §12: 24 hours");
    let a = pdf(1);
    let mut store = memory_store(MAX_STORAGE);
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    let none = Reclaimed::default();
    assert_eq!(store.reclaim(T0, nothing_referenced).unwrap(), none);
    assert_eq!(store.reclaim(T0 + DAY, nothing_referenced).unwrap(), none);
    assert!(store.contains_blob(&a.sha256), "at 24 h exactly it is kept");
    assert_eq!(
        store.reclaim(T0 + DAY + 1, nothing_referenced).unwrap(),
        Reclaimed {
            blobs: 1,
            bytes: a.size_bytes()
        }
    );
    assert!(!store.contains_blob(&a.sha256));
    assert!(store.backend().blobs.is_empty());
    assert_eq!(store.used_bytes(), 0);
}

#[test]
fn a_referenced_blob_is_never_reclaimed() {
    let (a, b) = (pdf(1), pdf(2));
    let mut store = memory_store(MAX_STORAGE);
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    admit::commit(&mut store, &b, "att_b", "b.pdf").unwrap();
    let far = T0 + 100 * 365 * DAY;
    // The references cannot be read: nothing is removed.
    assert_eq!(store.reclaim(far, || None).unwrap(), Reclaimed::default());
    assert_eq!(store.backend().blobs.len(), 2);
    let reclaimed = store
        .reclaim(far, || Some(HashSet::from([a.sha256])))
        .unwrap();
    assert_eq!(reclaimed.blobs, 1);
    assert!(store.contains_blob(&a.sha256));
    assert!(!store.contains_blob(&b.sha256));
    assert_eq!(store.used_bytes(), a.size_bytes());
    // Still referenced a century later.
    store
        .reclaim(far + far, || Some(HashSet::from([a.sha256])))
        .unwrap();
    assert!(store.backend().blobs.contains_key(&a.sha256));
}

#[test]
fn the_references_are_asked_only_when_a_blob_is_old_enough() {
    let mut store = memory_store(MAX_STORAGE);
    admit::commit(&mut store, &pdf(1), "att_a", "a.pdf").unwrap();
    let mut asked = false;
    store
        .reclaim(T0 + DAY, || {
            asked = true;
            None
        })
        .unwrap();
    assert!(!asked, "no transcript scan while every blob is young");
}

#[test]
fn a_reuse_by_deduplication_restarts_the_24_hours() {
    let a = pdf(1);
    let mut store = memory_store(MAX_STORAGE);
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    store.backend_mut().now = T0 + DAY;
    admit::commit(&mut store, &a, "att_again", "again.pdf").unwrap();
    assert_eq!(
        store.reclaim(T0 + DAY + 1, nothing_referenced).unwrap(),
        Reclaimed::default()
    );
    assert_eq!(
        store
            .reclaim(T0 + 2 * DAY + 1, nothing_referenced)
            .unwrap()
            .blobs,
        1
    );
}

/// Another process reclaimed the blob this store still counts: a commit of the same bytes
/// stores it again instead of committing a manifest whose blob is gone.
#[test]
fn a_reuse_checks_that_the_blob_is_still_there() {
    let a = pdf(1);
    let mut store = memory_store(MAX_STORAGE);
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    store.backend_mut().blobs.clear();
    let m = admit::commit(&mut store, &a, "att_b", "b.pdf").unwrap();
    assert_eq!(m.storage_id, a.sha256.storage_id());
    assert_eq!(
        store.backend().blobs.get(&a.sha256).map(Vec::len),
        Some(a.size_bytes() as usize),
        "the blob is stored again"
    );
    assert_eq!(store.used_bytes(), a.size_bytes(), "counted once");
}

#[test]
fn a_full_store_takes_an_upload_after_reclamation() {
    let (a, b) = (pdf(1), pdf(2));
    let mut store = memory_store(a.size_bytes() + b.size_bytes() - 1);
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    assert_eq!(
        admit::commit(&mut store, &b, "att_b", "b.pdf"),
        Err(ReasonCode::StorageFull)
    );
    assert!(store.claim(b.size_bytes()).is_err());
    store.reclaim(T0 + DAY + 1, nothing_referenced).unwrap();
    let claim = store.claim(b.size_bytes()).unwrap();
    store.release_claim(claim);
    admit::commit(&mut store, &b, "att_b", "b.pdf").unwrap();
    assert_eq!(store.used_bytes(), b.size_bytes());
}

// ---- the filesystem backend ----

fn set_mtime(path: &Path, age: Duration) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A sparse blob file of `size` bytes last committed `age` ago (the store counts blob files by
/// their length, so 512 MiB is reachable without writing it).
fn sparse_blob(home: &Path, tag: &[u8], size: u64, age: Duration) -> String {
    std::fs::create_dir_all(home.join("blobs")).unwrap();
    let name = Sha256Digest::of(tag).storage_id();
    let path = home.join("blobs").join(&name);
    std::fs::File::create(&path).unwrap().set_len(size).unwrap();
    set_mtime(&path, age);
    name
}

fn blob_names(home: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(home.join("blobs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("blob_sha256_"))
        .collect();
    v.sort();
    v
}

const OLD: Duration = Duration::from_secs(RECLAIM_AFTER_SECS + 3600);

/// The commit time on disk is the file's mtime; a second store on the same home, full when it
/// opened, sees the room another one's reclamation made (it counts the files again before it
/// refuses).
#[test]
fn fs_backend_mtime_is_the_commit_time_and_a_sharing_store_sees_the_room() {
    let home = TempDir::new("reclaim-fs");
    let filler = sparse_blob(home.path(), b"filler", MAX_STORAGE - 100, OLD);
    let young = sparse_blob(home.path(), b"young", 100, Duration::from_secs(60));
    let limits = Limits::default();
    let mut other = BlobStore::open(FsBackend::open(home.path()).unwrap(), &limits).unwrap();
    assert_eq!(
        other.claim(1).map(|c| c.size()),
        Err(ReasonCode::StorageFull)
    );
    let mut store = BlobStore::open(FsBackend::open(home.path()).unwrap(), &limits).unwrap();
    let done = store.reclaim(unix_now(), nothing_referenced).unwrap();
    assert_eq!(
        done,
        Reclaimed {
            blobs: 1,
            bytes: MAX_STORAGE - 100
        }
    );
    assert_eq!(blob_names(home.path()), [young]);
    assert!(!blob_names(home.path()).contains(&filler));
    let claim = other.claim(1 << 20).expect("room again in the other store");
    other.release_claim(claim);
    assert_eq!(other.used_bytes(), 100);
}

/// A reuse on disk touches the file: an old blob committed again is young again.
#[test]
fn fs_backend_reuse_marks_the_blob_committed_now() {
    let home = TempDir::new("reclaim-reuse");
    let a = pdf(1);
    let limits = Limits::default();
    let mut store = BlobStore::open(FsBackend::open(home.path()).unwrap(), &limits).unwrap();
    admit::commit(&mut store, &a, "att_a", "a.pdf").unwrap();
    let path = home.path().join("blobs").join(a.sha256.storage_id());
    set_mtime(&path, OLD);
    admit::commit(&mut store, &a, "att_b", "b.pdf").unwrap();
    assert_eq!(
        store.reclaim(unix_now(), nothing_referenced).unwrap(),
        Reclaimed::default()
    );
    // Reclaimed on disk behind the store's back: the next reuse writes it again.
    std::fs::remove_file(&path).unwrap();
    admit::commit(&mut store, &a, "att_c", "c.pdf").unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap().len() as u64,
        a.size_bytes(),
        "stored again"
    );
}

// ---- black-box through `agentx` ----

fn b64(bytes: &[u8]) -> String {
    base64_simd::STANDARD.encode_to_string(bytes)
}

const P1: &str = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";

fn begin(upload: &str, att: &str, raw: &[u8]) -> Value {
    json!({"type":"attachment_import","version":1,"operation":"begin","prompt_uuid":P1,
        "upload_id":upload,"attachment_id":att,"name":format!("{att}.pdf"),
        "size_bytes":raw.len(),"mime_type":"application/pdf",
        "sha256":Sha256Digest::of(raw).to_hex()})
}

/// 26 old uploads no prompt used filled the store; a blob a stored session
/// references is as old. A new `agentx` start reclaims the unreferenced ones, keeps the
/// referenced one, and the upload that was `storage_full` commits.
#[test]
fn agentx_takes_uploads_again_after_reclaiming_old_unreferenced_blobs() {
    let home = TempDir::new("reclaim-bb");
    // A stored session whose prompt references a PDF (one-shot `--attach`).
    let kept_raw = samples::pdf_with_pages(1);
    let file = home.path().join("kept.pdf");
    std::fs::write(&file, &kept_raw).unwrap();
    let (status, _, err) = run_in_home(
        home.path(),
        &["-p", "keep this", "--attach", file.to_str().unwrap()],
    );
    assert_eq!(status, Some(0), "{err}");
    let kept = blob_names(home.path());
    assert_eq!(kept.len(), 1);
    set_mtime(&home.path().join("blobs").join(&kept[0]), OLD);
    let used = std::fs::metadata(home.path().join("blobs").join(&kept[0]))
        .unwrap()
        .len();
    // 26 unreferenced old blobs that leave 100 bytes of the 512 MiB.
    let each = (MAX_STORAGE - used - 100) / 26;
    let mut fillers = Vec::new();
    for i in 0..26u64 {
        let size = if i == 25 {
            MAX_STORAGE - used - 100 - 25 * each
        } else {
            each
        };
        fillers.push(sparse_blob(home.path(), &i.to_le_bytes(), size, OLD));
    }
    // A young unreferenced blob is kept too.
    let young = sparse_blob(home.path(), b"young", 10, Duration::from_secs(3600));
    let doc = samples::pdf_with_pages(2);
    assert!(doc.len() > 100);
    let mut a = Agentx::session(home.path(), &[]);
    a.send(&begin("upl_1", "att_1", &doc));
    let ack = a.next().unwrap();
    assert_eq!(ack["status"], "accepted", "{ack}");
    for (i, piece) in doc.chunks(4096).enumerate() {
        a.send(
            &json!({"type":"attachment_import","version":1,"operation":"chunk",
            "upload_id":"upl_1","sequence":i,"data":b64(piece)}),
        );
    }
    a.send(
        &json!({"type":"attachment_import","version":1,"operation":"commit",
        "upload_id":"upl_1"}),
    );
    let ack = a.next().unwrap();
    assert_eq!(ack["status"], "committed", "{ack}");
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert!(!done.stderr.contains("attachment store"), "{}", done.stderr);
    done.assert_valid_output();
    let names = blob_names(home.path());
    for f in &fillers {
        assert!(!names.contains(f), "an old unreferenced blob was kept");
    }
    assert!(
        names.contains(&kept[0]),
        "the referenced blob was reclaimed"
    );
    assert!(names.contains(&young), "a young blob was reclaimed");
    let new_id = ack["attachment"]["storage_id"].as_str().unwrap();
    assert!(names.iter().any(|n| n == new_id));
    assert_eq!(names.len(), 3);
}
