//! Black-box: PROFILE §11 "Disk errors" on a small tmpfs AgentX home: a
//! full disk before the first turn (no `meta.json`, no `meta.json.tmp` left), an append that
//! fails part-way (the records that fit are stored, the rest cut back to a whole line), an upload that the blob store refuses with
//! `storage_full` leaving no temporary file, then space returns and the next turn stores every
//! turn that was owed, in order; the session resumes with all of them. The diagnostic is
//! `agentx: session store: <errno text>`, once per failure streak; results, `idle` and every
//! stdout record stay valid throughout.
//!
//! Mounting needs privileges: where `mount -t tmpfs` fails the test prints why and passes
//! (skipped).

use crate::harness;
use crate::store;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use agentx_core::attach::Sha256Digest;
use agentx_core::fuzzing::attach::samples;
use harness::*;
use serde_json::{json, Value};
use store::*;

const DIAGNOSTIC: &str = "agentx: session store: No space left on device";

/// A tmpfs mounted on a fresh directory; unmounted on drop (before the directory is removed).
pub(crate) struct Tmpfs {
    dir: TempDir,
}

impl Tmpfs {
    pub(crate) fn mount(size: &str) -> Result<Tmpfs, String> {
        let dir = TempDir::new("tmpfs");
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("mount cannot run: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Tmpfs { dir })
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// Fills the file system of `home` until a write fails, then frees `room` bytes.
pub(crate) fn fill(home: &Path, room: u64) -> PathBuf {
    let path = home.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0x5au8; 64 * 1024];
    let mut len = 0u64;
    loop {
        match f.write(&block) {
            Ok(0) => break,
            Ok(n) => len += n as u64,
            Err(_) => break,
        }
    }
    let _ = f.sync_all();
    f.set_len(len.saturating_sub(room)).unwrap();
    path
}

fn sid_of(records: &[Value]) -> String {
    records[0]["session_id"].as_str().unwrap().to_string()
}

fn result_uuid(turn: &[Value]) -> String {
    turn.iter().find(|r| is_result(r)).unwrap()["uuid"]
        .as_str()
        .unwrap()
        .to_string()
}

fn no_meta_tmp(home: &Path) {
    assert!(
        files_named(&home.join("sessions"), "meta.json.tmp").is_empty(),
        "no meta.json.tmp is left behind"
    );
}

#[test]
fn profile_11_disk_full_turn_upload_and_resume() {
    let fs = match Tmpfs::mount("8m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("SKIP profile_11_disk_full_turn_upload_and_resume: {why}");
            return;
        }
    };
    let home = fs.path();
    let mut a = Agentx::session(home, &[]);
    let mut results = Vec::new();

    // 1. Full before the first turn: meta.json cannot be written.
    let filler = fill(home, 0);
    a.say("one");
    let t = a.turn();
    let sid = sid_of(&t);
    assert_eq!(
        t.iter().find(|r| is_result(r)).unwrap()["subtype"],
        "success"
    );
    results.push(result_uuid(&t));
    assert!(!session_dir(home, &sid).join("meta.json").exists());
    no_meta_tmp(home);

    // 2. Still full: the next turn fails too, silently (one line per failure streak).
    a.say("two");
    results.push(result_uuid(&a.turn()));

    // 3. The blob store refuses an upload with storage_full and leaves no temporary.
    let raw = samples::png_rgb(160, 160);
    let prompt_uuid = "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27";
    a.send(
        &json!({"type":"attachment_import","version":1,"operation":"begin",
        "prompt_uuid":prompt_uuid,"upload_id":"upl_full","attachment_id":"att_full",
        "name":"full.png","size_bytes":raw.len(),"mime_type":"image/png",
        "sha256":Sha256Digest::of(&raw).to_hex()}),
    );
    let accepted = a.next().unwrap();
    assert_eq!(accepted["status"], "accepted", "{accepted}");
    for (i, piece) in raw.chunks(48 * 1024).enumerate() {
        a.send(
            &json!({"type":"attachment_import","version":1,"operation":"chunk",
            "upload_id":"upl_full","sequence":i,
            "data":base64_simd::STANDARD.encode_to_string(piece)}),
        );
    }
    a.send(
        &json!({"type":"attachment_import","version":1,"operation":"commit",
        "upload_id":"upl_full"}),
    );
    let end = a.next().unwrap();
    assert_eq!(end["terminal"], true, "{end}");
    assert_eq!(end["reason"], "storage_full", "{end}");
    assert!(files_named(&home.join("blobs"), ".tmp-").is_empty());

    // 4. A little room: meta.json fits, and what is owed is stored record by record while it
    //    fits (the first two turns); the third turn's 200 KB prompt does not, and is cut back
    //    to a whole line.
    std::fs::remove_file(&filler).unwrap();
    let filler = fill(home, 48 * 1024);
    a.say(&format!("three {}", "w".repeat(200_000)));
    results.push(result_uuid(&a.turn()));
    no_meta_tmp(home);
    let bytes = transcript_bytes(home, &sid);
    assert!(bytes.is_empty() || bytes.ends_with(b"\n"), "a whole line");
    assert_eq!(stored_result_uuids(home, &sid), results[..2]);

    // 5. Space returns: the next turn stores every owed turn, in order.
    std::fs::remove_file(&filler).unwrap();
    a.say("four");
    results.push(result_uuid(&a.turn()));
    assert!(session_dir(home, &sid).join("meta.json").exists());
    assert_eq!(stored_result_uuids(home, &sid), results);
    no_meta_tmp(home);

    // 6. A new failure streak says it again.
    let filler = fill(home, 0);
    a.say(&format!("five {}", "w".repeat(100_000)));
    results.push(result_uuid(&a.turn()));
    std::fs::remove_file(&filler).unwrap();
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    done.assert_valid_output();
    let said: Vec<&str> = done
        .stderr
        .lines()
        .filter(|l| l.starts_with("agentx: session store:"))
        .collect();
    assert_eq!(said, [DIAGNOSTIC, DIAGNOSTIC], "{}", done.stderr);
    let bytes = transcript_bytes(home, &sid);
    assert!(bytes.ends_with(b"\n"));

    // The fifth turn was owed; space returned before EOF, and the exit retried it. (Seen once
    // under load with the fifth missing, not reproduced: the stderr and the
    // transcript's length say whether the exit retry ran and what it met.)
    assert_eq!(
        stored_result_uuids(home, &sid),
        results,
        "transcript {} bytes; stderr:\n{}",
        bytes.len(),
        done.stderr
    );

    // 7. The session resumes with all five turns.
    let mut b = Agentx::session(home, &["--resume", &sid]);
    b.say("!history");
    let t = b.turn();
    let text = t.iter().find(|r| is_result(r)).unwrap()["result"].clone();
    assert_eq!(text, "history: 10 messages", "{}", b.stderr_text());
    let done = b.finish();
    assert_eq!(done.status, Some(0));
}

/// `--session-id`, `--fork-session` and `--continue` (PROFILE §15) with the disk full at
/// startup, then space back: a `--session-id` that failed is not burned (the same id starts
/// afterwards; it was refused as existing), and a fork that could not write its copy leaves
/// no empty session behind for `--continue` to pick (it answered `history: 0 messages` under
/// the failed fork's id).
#[test]
fn profile_15_a_session_created_on_a_full_disk_leaves_nothing_behind() {
    let fs = match Tmpfs::mount("512k") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!(
                "SKIP profile_15_a_session_created_on_a_full_disk_leaves_nothing_behind: {why}"
            );
            return;
        }
    };
    let home = fs.path();
    let sdk = |extra: &[&str], prompt: &str| {
        let mut args = vec![
            "--output-format",
            "stream-json",
            "--verbose",
            "--input-format",
            "stream-json",
        ];
        args.extend_from_slice(extra);
        let cwd = home.to_string_lossy().into_owned();
        args.extend(["--cwd", cwd.as_str()]);
        let line = json!({"type":"user","message":{"role":"user","content":prompt},"parent_tool_use_id":null})
            .to_string()
            + "\n";
        let (status, out, stderr) = run(home, &args, line.as_bytes());
        let records: Vec<Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        (status, records, stderr)
    };
    let named = "3f1e7948-5c1f-4c1f-8e2c-00000000ec27";
    // A session X to fork, 120 KB of transcript.
    let (status, recs, stderr) = sdk(&[], &"x".repeat(60_000));
    assert_eq!(status, Some(0), "{stderr}");
    let x = sid_of(&recs);

    let filler = fill(home, 0);
    let (status, _, stderr) = sdk(&["--session-id", named], "one");
    assert_eq!(status, Some(1));
    assert!(stderr.contains(DIAGNOSTIC), "{stderr}");
    let (status, _, stderr) = sdk(&["--resume", &x, "--fork-session"], "two");
    assert_eq!(status, Some(1));
    assert!(stderr.contains(DIAGNOSTIC), "{stderr}");
    std::fs::remove_file(&filler).unwrap();

    // Space is back: the same id starts, and `--continue` finds X's conversation.
    let (status, recs, stderr) = sdk(&["--session-id", named], "one");
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(sid_of(&recs), named);
    let (status, recs, stderr) = sdk(&["--resume", &x], "!history");
    assert_eq!(status, Some(0), "{stderr}");
    let dirs: Vec<String> = std::fs::read_dir(home.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(dirs.len(), 2, "X and the named session only: {dirs:?}");
    drop(recs);
}
