//! The SDK profile's session options on the store (PROFILE §15): `--continue` picks the
//! session updated last, `--fork-session` copies a transcript into a new session and leaves
//! the original untouched (even its torn last line), `--session-id` creates a new session and
//! refuses an existing one.

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

use agentx_core::registry::{parse_auth_json, ProviderBinding, Selection};
use agentx_home::store::{exists, most_recent, SessionMeta, SessionStore, StoreError};

const A: &str = "5b0c6f0e-3b1a-4c2d-9e8f-0123456789aa";
const B: &str = "5b0c6f0e-3b1a-4c2d-9e8f-0123456789bb";
const C: &str = "5b0c6f0e-3b1a-4c2d-9e8f-0123456789cc";

const AUTH: &str = r#"{"version":2,"providers":[
 {"id":"one","type":"scripted","model":"m1","default":true},
 {"id":"two","type":"scripted","model":"m2"}]}"#;

fn no_env(_: &str) -> Option<OsString> {
    None
}

fn binding(id: &str) -> ProviderBinding {
    let reg = parse_auth_json(AUTH.as_bytes(), &no_env).expect("registry");
    Selection::select(reg, Some(id))
        .expect("selection")
        .binding()
        .clone()
}

fn home(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agentx-pick-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn meta(sid: &str, provider: &str) -> SessionMeta {
    SessionMeta {
        session_id: sid.into(),
        binding: binding(provider),
        created_unix_ms: 1_764_500_000_000,
    }
}

fn set_mtime(path: &std::path::Path, secs: u64) {
    let f = fs::File::options().append(true).open(path).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs))
        .unwrap();
}

#[test]
fn continue_picks_the_session_updated_last() {
    let home = home("recent");
    assert_eq!(most_recent(&home).unwrap(), None, "no sessions/ at all");
    fs::create_dir_all(home.join("sessions")).unwrap();
    assert_eq!(most_recent(&home).unwrap(), None);
    for (sid, t) in [(A, 300), (B, 100), (C, 200)] {
        let mut s = SessionStore::create(&home, &meta(sid, "one")).unwrap();
        s.append(b"{}\n").unwrap();
        set_mtime(&s.dir().join("transcript.ndjson"), t);
    }
    assert_eq!(most_recent(&home).unwrap().as_deref(), Some(A));
    // B is updated now: it becomes the latest.
    set_mtime(
        &home.join("sessions").join(B).join("transcript.ndjson"),
        400,
    );
    assert_eq!(most_recent(&home).unwrap().as_deref(), Some(B));
    // Entries that are not sessions are skipped.
    fs::create_dir_all(home.join("sessions").join("not-a-uuid")).unwrap();
    fs::create_dir_all(
        home.join("sessions")
            .join("5b0c6f0e-3b1a-4c2d-9e8f-0123456789dd"),
    )
    .unwrap(); // no meta.json
    fs::write(home.join("sessions").join("stray"), b"x").unwrap();
    assert_eq!(most_recent(&home).unwrap().as_deref(), Some(B));
}

#[test]
fn fork_copies_and_leaves_the_original_untouched() {
    // Stored turns end with their result line (PROFILE §11); these stand for whole turns.
    let home = home("fork");
    let mut s = SessionStore::create(&home, &meta(A, "one")).unwrap();
    s.append(b"{\"type\":\"result\",\"a\":1}\n{\"type\":\"result\",\"b\":2}\n")
        .unwrap();
    drop(s);
    // A torn last line in the original: the fork ignores it and does not cut it.
    let original = home.join("sessions").join(A).join("transcript.ndjson");
    let mut bytes = fs::read(&original).unwrap();
    bytes.extend_from_slice(b"{\"torn\":");
    fs::write(&original, &bytes).unwrap();
    let (mut fork, t) = SessionStore::fork(&home, A, &meta(B, "one")).unwrap();
    assert_eq!(
        t.lines,
        vec![
            b"{\"type\":\"result\",\"a\":1}".to_vec(),
            b"{\"type\":\"result\",\"b\":2}".to_vec()
        ]
    );
    fork.append(b"{\"type\":\"result\",\"c\":3}\n").unwrap();
    assert_eq!(
        fs::read(&original).unwrap(),
        bytes,
        "the original is untouched"
    );
    assert_eq!(
        fs::read(home.join("sessions").join(B).join("transcript.ndjson")).unwrap(),
        b"{\"type\":\"result\",\"a\":1}\n{\"type\":\"result\",\"b\":2}\n{\"type\":\"result\",\"c\":3}\n"
    );
    // The fork's store holds B (PROFILE §11 "One writer") until it is dropped.
    drop(fork);
    let (_, m, _) = SessionStore::resume(&home, B, &binding("one")).unwrap();
    assert_eq!(m.session_id, B);
    // The original resumes as before.
    let (_, _, t) = SessionStore::resume(&home, A, &binding("one")).unwrap();
    assert_eq!(t.lines.len(), 2);
}

#[test]
fn fork_errors() {
    let home = home("forkerr");
    let e = SessionStore::fork(&home, A, &meta(B, "one")).unwrap_err();
    assert_eq!(e.to_string(), format!("agentx: no session {A}"));
    SessionStore::create(&home, &meta(A, "one")).unwrap();
    let e = SessionStore::fork(&home, A, &meta(B, "two")).unwrap_err();
    assert!(matches!(e, StoreError::ProviderMismatch { .. }), "{e}");
    assert!(!exists(&home, B), "a refused fork creates nothing");
    SessionStore::create(&home, &meta(B, "one")).unwrap();
    let e = SessionStore::fork(&home, A, &meta(B, "one")).unwrap_err();
    assert_eq!(e.to_string(), format!("agentx: session {B} already exists"));
}

#[test]
fn session_id_creates_new_and_refuses_existing() {
    let home = home("sid");
    assert!(!exists(&home, A));
    SessionStore::create_new(&home, &meta(A, "one")).unwrap();
    assert!(exists(&home, A));
    let e = SessionStore::create_new(&home, &meta(A, "one")).unwrap_err();
    assert_eq!(e.to_string(), format!("agentx: session {A} already exists"));
    let mut bad = meta(A, "one");
    bad.session_id = "../x".into();
    assert!(SessionStore::create_new(&home, &bad).is_err());
    assert!(!exists(&home, "../x"));
    assert!(!home.join("x").exists());
}
