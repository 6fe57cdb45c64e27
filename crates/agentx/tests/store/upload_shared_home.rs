//! Two processes sharing one AgentX home: the filesystem backend's
//! inter-process lock keeps the manifest ledger whole and counts every blob once, and the
//! 512 MiB / 100,000-manifest bounds hold across processes. Two stores opened on one home in
//! this process stand for two processes (each `FsBackend` has its own open file description
//! of `blobs/.lock`, so their `flock`s exclude each other exactly as two processes' do); the
//! last test runs real `agentx-wire attach` processes concurrently.

use std::path::{Path, PathBuf};
use std::process::Command;

use agentx_core::attach::admit;
use agentx_core::attach::limits::Limits;
use agentx_core::attach::{BlobStore, MediaType, ReasonCode};
use agentx_core::fuzzing::attach::samples;
use agentx_home::FsBackend;

fn temp_home(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "agentx-upload-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn pdf(pages: usize) -> admit::Normalized {
    admit::normalize(
        MediaType::Pdf,
        &samples::pdf_with_pages(pages),
        &Limits::default(),
    )
    .unwrap()
}

fn open(home: &Path, limits: &Limits) -> BlobStore<FsBackend> {
    BlobStore::open(FsBackend::open(home).unwrap(), limits).unwrap()
}

fn ledger_lines(home: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(home.join("blobs/manifests.ndjson")).unwrap();
    assert!(text.ends_with('\n'), "no torn line");
    text.lines().map(str::to_owned).collect()
}

fn temporaries(home: &Path) -> usize {
    std::fs::read_dir(home.join("blobs"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-")
        })
        .count()
}

/// A blob the other store committed is counted once, not stored twice.
#[test]
fn a_blob_committed_by_the_other_process_is_counted_once() {
    let home = temp_home("dedupe");
    let l = Limits::default();
    let mut a = open(&home, &l);
    let mut b = open(&home, &l);
    let doc = pdf(1);
    admit::commit(&mut a, &doc, "att_a", "a.pdf").unwrap();
    // B opened before A's commit; it learns of it under the lock.
    admit::commit(&mut b, &doc, "att_b", "b.pdf").unwrap();
    assert_eq!(b.used_bytes(), doc.size_bytes(), "not double-counted");
    assert_eq!(b.manifest_count(), 2);
    // The same manifest committed by the other process needs no second line.
    admit::commit(&mut a, &doc, "att_b", "b.pdf").unwrap();
    assert_eq!(ledger_lines(&home).len(), 2);
    assert_eq!(temporaries(&home), 0);
    let reopened = open(&home, &l);
    assert_eq!(reopened.used_bytes(), doc.size_bytes());
    assert_eq!(reopened.manifest_count(), 2);
    std::fs::remove_dir_all(&home).unwrap();
}

/// The storage bound at its edge across two processes: B alone would fit, beside A's blob it
/// passes the bound, so B's commit is `storage_full` and leaves nothing; at the bound
/// exactly it is accepted.
#[test]
fn storage_bound_holds_across_processes() {
    let home = temp_home("storage");
    let (one, two, three) = (pdf(1), pdf(2), pdf(3));
    assert!(two.size_bytes() > one.size_bytes());
    let l = Limits {
        max_storage_bytes: one.size_bytes() + three.size_bytes(),
        ..Limits::default()
    };
    let mut a = open(&home, &l);
    let mut b = open(&home, &l);
    admit::commit(&mut a, &three, "att_3", "3.pdf").unwrap();
    // B has not seen A's blob; under the lock it counts it first.
    assert_eq!(
        admit::commit(&mut b, &two, "att_2", "2.pdf"),
        Err(ReasonCode::StorageFull)
    );
    assert_eq!((b.reserved_bytes(), b.reserved_manifests()), (0, 0));
    admit::commit(&mut b, &one, "att_1", "1.pdf").unwrap();
    assert_eq!(b.used_bytes(), l.max_storage_bytes);
    assert_eq!(ledger_lines(&home).len(), 2);
    assert_eq!(temporaries(&home), 0);
    std::fs::remove_dir_all(&home).unwrap();
}

/// The manifest bound at its edge across two processes.
#[test]
fn manifest_bound_holds_across_processes() {
    let home = temp_home("manifests");
    let doc = pdf(1);
    let l = Limits {
        max_manifests: 2,
        ..Limits::default()
    };
    let mut a = open(&home, &l);
    let mut b = open(&home, &l);
    admit::commit(&mut a, &doc, "att_1", "1.pdf").unwrap();
    admit::commit(&mut b, &doc, "att_2", "2.pdf").unwrap();
    assert_eq!(
        admit::commit(&mut a, &doc, "att_3", "3.pdf"),
        Err(ReasonCode::ManifestStoreFull)
    );
    assert_eq!(ledger_lines(&home).len(), 2);
    std::fs::remove_dir_all(&home).unwrap();
}

/// Concurrent commits from two threads with their own stores (own lock descriptions): every
/// manifest line whole, every blob once, no temporaries.
#[test]
fn concurrent_commits_keep_the_ledger_whole() {
    let home = temp_home("threads");
    let docs: Vec<admit::Normalized> = (1..=6).map(pdf).collect();
    let l = Limits::default();
    std::thread::scope(|s| {
        for t in 0..2 {
            let home = &home;
            let docs = &docs;
            let l = &l;
            s.spawn(move || {
                let mut store = open(home, l);
                for (i, d) in docs.iter().enumerate() {
                    admit::commit(&mut store, d, &format!("att_{t}_{i}"), "d.pdf").unwrap();
                }
            });
        }
    });
    let lines = ledger_lines(&home);
    assert_eq!(lines.len(), 12);
    for line in &lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["type"], "attachment_ref");
    }
    let store = open(&home, &l);
    let unique: u64 = docs.iter().map(|d| d.size_bytes()).sum();
    assert_eq!(store.used_bytes(), unique);
    assert_eq!(store.manifest_count(), 12);
    assert_eq!(temporaries(&home), 0);
    std::fs::remove_dir_all(&home).unwrap();
}

/// Real processes: two `agentx-wire attach` runs per file, in parallel, on one home.
#[test]
fn two_processes_attach_into_one_home() {
    let home = temp_home("procs");
    let files = temp_home("files");
    let mut paths = Vec::new();
    for i in 1..=4 {
        let p = files.join(format!("d{i}.pdf"));
        std::fs::write(&p, samples::pdf_with_pages(i)).unwrap();
        paths.push(p);
    }
    let mut children = Vec::new();
    for _ in 0..2 {
        for p in &paths {
            children.push(
                Command::new(agentx_test_support::bin("agentx-wire"))
                    .arg("attach")
                    .arg("--home")
                    .arg(&home)
                    .arg(p)
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
        }
    }
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
    }
    // Same file, same name: the same manifest, one line each.
    let lines = ledger_lines(&home);
    assert_eq!(lines.len(), 4, "{lines:?}");
    let blobs = std::fs::read_dir(home.join("blobs"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("blob_sha256_")
        })
        .count();
    assert_eq!(blobs, 4);
    assert_eq!(temporaries(&home), 0);
    std::fs::remove_dir_all(&home).unwrap();
    std::fs::remove_dir_all(&files).unwrap();
}
