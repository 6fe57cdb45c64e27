//! Black-box crash consistency of the session store (PROFILE §11): one session is
//! run, SIGKILLed at a random point and resumed, over and over, with a fixed seed. Kill points:
//! right after `idle`, mid-stream (between two blocks of one turn), mid-tool (a Bash tool
//! running), during the store's append and fsync (a turn of a large prompt, killed a random
//! few hundred microseconds after it was sent), mid-upload (after some chunks, or just after
//! the commit), and right after the prompt.
//!
//! After each kill, before the next process starts, the stored transcript must hold exactly the
//! lines the host saw for every turn whose `result` it saw (byte for byte, in order), plus at
//! most one more turn, whole (its persist finished, the kill came before its result reached
//! the host); no `tool_use` lacks its `tool_result` in the rebuilt context. The next process
//! resumes it (the first prompt is `!history`, whose count must equal the stored context's),
//! and after it started no blob temporary survives, the transcript has no torn or cut bytes
//! left, and the home's size stays bounded by what was stored.
//!
//! `AGENTX_CRASH_KILLS` (default 30) and `AGENTX_CRASH_SEED` change the campaign;
//! `benches/crash_campaign.sh` runs 1,000+ kills and prints the figures.

use crate::harness;
use crate::store;

use std::path::Path;
use std::time::{Duration, Instant};

use agentx_core::attach::Sha256Digest;
use harness::*;
use serde_json::{json, Value};
use store::*;

/// SplitMix64: the campaign's only source of randomness.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Where a run was killed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kill {
    AfterIdle,
    MidStream,
    MidTool,
    DuringAppend,
    MidUpload,
    AfterCommit,
    AfterPrompt,
}

const KILLS: [Kill; 7] = [
    Kill::AfterIdle,
    Kill::MidStream,
    Kill::MidTool,
    Kill::DuringAppend,
    Kill::MidUpload,
    Kill::AfterCommit,
    Kill::AfterPrompt,
];

/// Waits `us` microseconds by the clock: the kill's jitter (what is raced is a crash, so
/// there is no record to wait for).
fn jitter(us: u64) {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_micros(us) {
        std::hint::spin_loop();
    }
}

/// The lines of `stdout` that the store keeps (PROFILE §11: user, assistant, result and
/// compact-boundary records), with whether each is a result, in order.
fn persistable(stdout: &[u8]) -> Vec<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    for line in stdout.split(|&b| b == b'\n') {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue; // a torn last line the host never got whole
        };
        let keep = match v["type"].as_str() {
            Some("user") | Some("assistant") | Some("result") => true,
            Some("system") => v["subtype"] == "compact_boundary",
            _ => false,
        };
        if keep {
            out.push((line.to_vec(), v["type"] == "result"));
        }
    }
    out
}

/// The persistable lines of the turns whose result is in `stdout`.
fn whole_turns(stdout: &[u8]) -> Vec<Vec<u8>> {
    let lines = persistable(stdout);
    let end = lines.iter().rposition(|(_, r)| *r).map_or(0, |i| i + 1);
    lines[..end].iter().map(|(l, _)| l.clone()).collect()
}

fn dir_bytes(dir: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                dir_bytes(&p)
            } else {
                e.metadata().map(|m| m.len()).unwrap_or(0)
            }
        })
        .sum()
}

#[derive(Default)]
struct Tally {
    by_kill: std::collections::BTreeMap<String, u64>,
    extra_whole: u64,
    torn_cut: u64,
    turns_stored: u64,
}

#[test]
fn profile_11_sigkill_anywhere_then_resume() {
    let kills = env_u64("AGENTX_CRASH_KILLS", 30);
    let mut rng = Rng(env_u64("AGENTX_CRASH_SEED", 0x19_d00a_b1e5));
    let home = TempDir::new("crash");
    let home = home.path();
    let t0 = Instant::now();
    let mut sid: Option<String> = None;
    // The stored lines as of the last check (what every later resume starts from).
    let mut expected: Vec<Vec<u8>> = Vec::new();
    let mut tally = Tally::default();
    let mut uploads = 0u64;

    for k in 0..kills {
        let kill = KILLS[rng.below(KILLS.len() as u64) as usize];
        *tally.by_kill.entry(format!("{kill:?}")).or_default() += 1;
        let mut args = vec![
            "--permission-mode",
            "bypassPermissions",
            "--replay-user-messages",
        ];
        if rng.below(3) == 0 {
            args.push("--include-partial-messages");
        }
        if let Some(s) = &sid {
            args.extend(["--resume", s.as_str()]);
        }
        let mut a = Agentx::session(home, &args);

        // Resume check: the resumed model's context is the stored one.
        if let Some(s) = sid.clone() {
            a.say("!history");
            let t = a.turn();
            let r = t.iter().find(|r| is_result(r)).expect("resume works");
            // The context of the lines checked after the last kill (the history turn itself
            // is stored after them).
            let n = history_count(&agentx_home::store::context::prior_context(&expected).unwrap());
            assert_eq!(
                r["result"],
                format!("history: {n} messages"),
                "kill {k}: {}",
                a.stderr_text()
            );
            // The start swept what the last kill left: no blob temporary, no torn or cut
            // bytes in the transcript.
            assert!(
                files_named(&home.join("blobs"), ".tmp-").is_empty(),
                "kill {k}"
            );
            let bytes = transcript_bytes(home, &s);
            let lines = stored_lines(home, &s);
            let whole: usize = lines.iter().map(|l| l.len() + 1).sum();
            assert_eq!(bytes.len(), whole, "kill {k}: no torn or cut bytes remain");
        }

        // A few plain turns first (so the kill lands in a session with history).
        for i in 0..rng.below(3) {
            match rng.below(6) {
                0 => a.say("!compact\n!say compacted"),
                1 => a.say(&format!("!tool Bash {{\"command\":\"echo t{k}_{i}\"}}")),
                _ => a.say(&format!("plain {k} {i}")),
            }
            let t = a.turn();
            if sid.is_none() {
                sid = Some(t[0]["session_id"].as_str().unwrap().to_string());
            }
        }

        match kill {
            Kill::AfterIdle => {
                a.say(&format!("last {k}"));
                a.turn();
            }
            Kill::MidStream => {
                a.say(&format!("!say first {k}\n!sleep 200\n!say second"));
                a.until(|v| v["type"] == "assistant");
                jitter(rng.below(3000));
            }
            Kill::MidTool => {
                a.say("!tool Bash {\"command\":\"sleep 0.3; echo late\"}");
                a.until(|v| v["type"] == "assistant");
                jitter(rng.below(3000));
            }
            Kill::DuringAppend => {
                let words = 20_000 + rng.below(200_000) as usize;
                a.say(&format!("big {k} {}", "w ".repeat(words)));
                jitter(rng.below(6000));
            }
            Kill::MidUpload | Kill::AfterCommit => {
                uploads += 1;
                let raw =
                    agentx_core::fuzzing::attach::samples::png_rgb(120 + (k % 64) as usize, 150);
                let up = format!("upl_{k}");
                a.send(
                    &json!({"type":"attachment_import","version":1,"operation":"begin",
                    "prompt_uuid":"3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27","upload_id":up,
                    "attachment_id":format!("att_{k}"),"name":"x.png",
                    "size_bytes":raw.len(),"mime_type":"image/png",
                    "sha256":Sha256Digest::of(&raw).to_hex()}),
                );
                a.until(|v| {
                    v["type"]
                        .as_str()
                        .unwrap_or("")
                        .starts_with("attachment_import")
                });
                let chunks: Vec<&[u8]> = raw.chunks(40_000).collect();
                let sent = if kill == Kill::MidUpload {
                    1 + rng.below(chunks.len() as u64 - 1) as usize
                } else {
                    chunks.len()
                };
                for (i, c) in chunks[..sent].iter().enumerate() {
                    a.send(
                        &json!({"type":"attachment_import","version":1,"operation":"chunk",
                        "upload_id":up,"sequence":i,
                        "data":base64_simd::STANDARD.encode_to_string(c)}),
                    );
                }
                if kill == Kill::AfterCommit {
                    a.send(&json!({"type":"attachment_import","version":1,
                        "operation":"commit","upload_id":up}));
                }
                jitter(rng.below(2000));
            }
            Kill::AfterPrompt => {
                a.say(&format!("!say quick {k}"));
                jitter(rng.below(1500));
            }
        }
        a.child.kill().unwrap();
        let done = a.finish();

        // What the host saw: every result it saw is stored, with exactly its turn's lines.
        let Some(s) = sid.clone().or_else(|| {
            // The first run may have been killed before a turn: find its id in the output.
            persistable(&done.stdout)
                .first()
                .and_then(|(l, _)| serde_json::from_slice::<Value>(l).ok())
                .and_then(|v| v["session_id"].as_str().map(str::to_string))
                // Only if the kill came after the store was created (its `meta.json` is
                // written at the first persisted turn): a session never stored cannot be
                // resumed (`agentx: no session …`, exit 1), and the next run starts afresh.
                .filter(|s| session_dir(home, s).join("meta.json").exists())
        }) else {
            continue;
        };
        sid = Some(s.clone());
        let seen = whole_turns(&done.stdout);
        let stored = stored_lines(home, &s);
        let mut host = expected.clone();
        host.extend(seen);
        assert!(
            stored.len() >= host.len() && stored[..host.len()] == host[..],
            "kill {k} ({kill:?}): the store holds every turn the host saw finish, as seen"
        );
        let extra = &stored[host.len()..];
        if !extra.is_empty() {
            // One more turn, whole: it ends with its result, and it is the only one.
            let results = extra
                .iter()
                .filter(|l| l.starts_with(b"{\"type\":\"result\","))
                .count();
            assert_eq!(results, 1, "kill {k} ({kill:?}): at most one unseen turn");
            assert!(extra.last().unwrap().starts_with(b"{\"type\":\"result\","));
            tally.extra_whole += 1;
        }
        if transcript_bytes(home, &s).len() > stored.iter().map(|l| l.len() + 1).sum::<usize>() {
            tally.torn_cut += 1;
        }
        assert_tool_uses_paired(&resumed_context(home, &s));
        expected = stored;

        // Bounded: the home holds the transcript, meta.json, the lock, and at most the
        // blobs of committed uploads (each under 256 KiB) and the ledger.
        let transcript = transcript_bytes(home, &s).len() as u64;
        let bound = transcript + 64 * 1024 + uploads * 256 * 1024;
        assert!(dir_bytes(home) <= bound, "kill {k}: the home stays bounded");
    }
    tally.turns_stored = expected
        .iter()
        .filter(|l| l.starts_with(b"{\"type\":\"result\","))
        .count() as u64;
    eprintln!(
        "crash campaign: {kills} kills in {:.1} s; by point {:?}; a turn the host had not \
         seen finish stored whole {} times; torn or cut bytes left for the next start {} \
         times; {} turns stored; 0 failures",
        t0.elapsed().as_secs_f64(),
        tally.by_kill,
        tally.extra_whole,
        tally.torn_cut,
        tally.turns_stored
    );
}
