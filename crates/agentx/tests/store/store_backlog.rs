//! Black-box: PROFILE §11 "Disk errors", the bounded backlog, and read-only homes. On a full
//! tmpfs home the store owes each turn's lines; once more than 64 MiB of record lines is owed
//! (the incoming prompt not counted) a new prompt is refused with `input error: session store
//! unavailable: <errno text>` (written, not stored), and the store is retried at the next
//! prompt: once space returns, the backlog and the next turn are stored record by record and
//! `--resume` rebuilds the context from them. The provider declares a context window, so the
//! conversation is compacted (§19) and peak RSS stays under 100 MiB. A home mounted read-only
//! still resumes, with one stderr line.
//!
//! Mounting needs privileges: where `mount -t tmpfs` fails the test prints why and passes
//! (skipped).

use std::process::Command;

use crate::harness::*;
use crate::store::*;
use crate::store_disk_full::{fill, Tmpfs};
use serde_json::Value;

const OWED_MAX: usize = 64 << 20;
const WINDOWED_ECHO: &str = r#"{"version":2,"providers":[{"id":"echo","type":"scripted","model":"agentx-echo","context_window":1024}]}"#;
const REFUSAL: &str = "input error: session store unavailable: No space left on device";

#[test]
fn profile_11_a_full_disk_owes_at_most_64_mib_then_refuses_prompts_until_space_returns() {
    let fs = match Tmpfs::mount("160m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("SKIP profile_11_a_full_disk_owes_at_most_64_mib: {why}");
            return;
        }
    };
    let home = fs.path();
    std::fs::write(home.join("auth.json"), WINDOWED_ECHO).unwrap();
    let filler = fill(home, 0);
    // The provider declares a 1,024-token window, so every 1 MiB prompt compacts the context
    // first (PROFILE §19): the conversation stays one summary and one exchange.
    // The replay echo shows every stored line on stdout (user, assistant, result), so the
    // test knows exactly how many bytes the store owes.
    let mut a = Agentx::session(home, &["--replay-user-messages"]);
    let prompt = "p".repeat(1 << 20);
    let (mut owed, mut ran, mut refused) = (0usize, Vec::new(), 0);
    for n in 0..40 {
        a.say(&prompt);
        let first = a.next().unwrap();
        if first["type"] == "result" {
            // Refused: only once more than 64 MiB is owed, and from then on every time.
            assert!(owed > OWED_MAX, "turn {n} refused with {owed} bytes owed");
            assert_eq!(first["errors"][0], REFUSAL, "{first}");
            refused += 1;
            continue;
        }
        assert!(owed <= OWED_MAX, "turn {n} ran with {owed} bytes owed");
        assert_eq!(
            refused, 0,
            "a turn ran after a refusal without space returning"
        );
        let start = a.seen.len() - 1;
        let t = a.turn();
        for (i, r) in std::iter::once(&first).chain(&t).enumerate() {
            let stored = matches!(r["type"].as_str(), Some("user" | "assistant" | "result"))
                || r["subtype"] == "compact_boundary";
            if stored {
                owed += a.line_len(start + i) + 1;
            }
        }
        ran.push(t.iter().find(|r| is_result(r)).unwrap()["uuid"].clone());
    }
    assert!(
        refused > 0 && ran.len() > 1,
        "ran {}, refused {refused}",
        ran.len()
    );
    let peak_mib = agentx_test_support::proc_stat::status_kib(a.pid(), "VmHWM").unwrap() / 1024;
    eprintln!(
        "store backlog: {} turns ran, {refused} refused, {owed} bytes owed, peak RSS {peak_mib} MiB",
        ran.len()
    );
    // What the store owes (at most 64 MiB and one turn) and the compacted context (§19) are
    // the two growing parts; without a declared window the context alone would hold 2 MiB a
    // turn (128 MiB peak measured that way).
    assert!(peak_mib < 100, "peak RSS {peak_mib} MiB");

    // Space returns: the next prompt retries the store first, and runs.
    std::fs::remove_file(&filler).unwrap();
    a.say("!say back");
    let t = a.turn();
    let sid = t[0]["session_id"].as_str().unwrap().to_owned();
    ran.push(t.iter().find(|r| is_result(r)).unwrap()["uuid"].clone());
    let stored: Vec<Value> = stored_result_uuids(home, &sid)
        .into_iter()
        .map(Value::from)
        .collect();
    assert_eq!(stored, ran);
    let done = a.finish();
    assert_eq!(done.status, Some(0));
    let said = done
        .stderr
        .lines()
        .filter(|l| l.starts_with("agentx: session store:"))
        .count();
    assert_eq!(said, 1, "{}", done.stderr);
    assert!(!transcript_bytes(home, &sid)
        .windows(b"store unavailable".len())
        .any(|w| w == b"store unavailable"));

    let mut b = Agentx::session(home, &["--resume", &sid]);
    b.say("!history");
    let t = b.turn();
    // The resumed context is the last compaction's: its summary, the exchange it preserved,
    // and the `back` exchange after it (§19 "Resume").
    let text = t.iter().find(|r| is_result(r)).unwrap()["result"].clone();
    assert_eq!(text, "history: 5 messages");
    assert_eq!(b.finish().status, Some(0));
}

#[test]
fn profile_11_a_read_only_home_resumes_with_one_stderr_line() {
    let fs = match Tmpfs::mount("4m") {
        Ok(fs) => fs,
        Err(why) => {
            eprintln!("SKIP profile_11_a_read_only_home_resumes: {why}");
            return;
        }
    };
    let home = fs.path();
    let mut a = Agentx::session(home, &[]);
    a.say("!say stored");
    let sid = a.turn()[0]["session_id"].as_str().unwrap().to_owned();
    assert_eq!(a.finish().status, Some(0));
    let before = transcript_bytes(home, &sid);

    let ro = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(home)
        .status()
        .unwrap();
    assert!(ro.success());
    let mut b = Agentx::session(home, &["--resume", &sid]);
    b.say("!history");
    let t = b.turn();
    let text = t.iter().find(|r| is_result(r)).unwrap()["result"].clone();
    assert_eq!(text, "history: 2 messages");
    let done = b.finish();
    let _ = Command::new("mount")
        .args(["-o", "remount,rw"])
        .arg(home)
        .status();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    let said: Vec<&str> = done
        .stderr
        .lines()
        .filter(|l| l.starts_with("agentx: session store:"))
        .collect();
    assert_eq!(
        said,
        ["agentx: session store: Read-only file system; this session will not be stored"],
        "{}",
        done.stderr
    );
    assert_eq!(transcript_bytes(home, &sid), before);
}
