//! PROFILE §8 "Memory", black-box: one prompt of 8,000,000 bytes of
//! one-letter words through the real `agentx` on its built-in model `agentx-echo` peaks below
//! the bound the README states, `MEMORY_LINE_FACTOR` × the input line plus
//! `MEMORY_BASE_BYTES`. The peak is the process's VmHWM, read from `/proc/<pid>/status` after
//! the turn's `idle` and before EOF. Before the fix the echo streamed one event per word (four
//! million events and allocations queued at once): 640 MiB for this prompt.

use crate::harness;

use harness::*;
use serde_json::json;

/// The README's bound: peak RSS < 20 × the largest input line + 32 MiB.
const MEMORY_LINE_FACTOR: u64 = 20;
const MEMORY_BASE_BYTES: u64 = 32 << 20;

fn vm_hwm(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[test]
fn an_8_mb_prompt_of_one_letter_words_stays_within_the_memory_bound() {
    if vm_hwm(std::process::id()).is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "/proc/<pid>/status VmHWM is unavailable"
        );
        eprintln!("skipped: /proc/<pid>/status has no VmHWM here");
        return;
    }
    let home = TempDir::new("memory");
    let text = "a ".repeat(4_000_000);
    let text = text.trim_end();
    let mut line = serde_json::to_vec(&json!({"type":"user","parent_tool_use_id":null,
        "message":{"role":"user","content":text}}))
    .unwrap();
    line.push(b'\n');
    let input = line.len() as u64;
    assert!(input > 7_999_999 && input < 8_388_608, "{input}");
    let mut a = Agentx::session(home.path(), &[]);
    a.send_raw(&line);
    drop(line);
    let turn = a.until(|v| is_state(v, "idle"));
    let result = turn.iter().find(|v| is_result(v)).expect("a result");
    assert_eq!(result["subtype"], "success", "{}", a.stderr_text());
    assert_eq!(result["result"].as_str().unwrap().len(), 6 + text.len());
    let peak = vm_hwm(a.pid()).expect("agentx is still running");
    let bound = MEMORY_LINE_FACTOR * input + MEMORY_BASE_BYTES;
    eprintln!(
        "agentx VmHWM {:.1} MiB for a {input}-byte line (bound {:.1} MiB)",
        peak as f64 / 1048576.0,
        bound as f64 / 1048576.0
    );
    assert!(
        peak < bound,
        "peak RSS {peak} bytes for a {input}-byte line: over {bound}"
    );
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
}
