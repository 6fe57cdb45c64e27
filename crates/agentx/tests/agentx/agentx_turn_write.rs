//! An echo turn reaches the host in one write: `running`, the assistant message, the `result`
//! and `idle` come out of the pipe in a single read (the built-in echo answers inside the model
//! runner's `start`, and the driver handles those waiting events before it writes the drain
//! that started it). A host then wakes once per turn, not twice. Not a protocol rule: the
//! records and their order are unchanged (`running` … `result`, then `idle`, PROFILE §11).

use crate::harness;

use std::io::{Read, Write};
use std::process::Stdio;

use harness::{session_command, TempDir};

const IDLE: &[u8] =
    b"{\"type\":\"system\",\"subtype\":\"session_state_changed\",\"state\":\"idle\"";
const RUNNING: &[u8] =
    b"{\"type\":\"system\",\"subtype\":\"session_state_changed\",\"state\":\"running\"";

const RESULT: &[u8] = b"{\"type\":\"result\"";

/// Where a line starting with `prefix` begins in `bytes`.
fn line_at(bytes: &[u8], prefix: &[u8]) -> Option<usize> {
    (0..bytes.len()).find(|&i| (i == 0 || bytes[i - 1] == b'\n') && bytes[i..].starts_with(prefix))
}

#[test]
fn each_echo_turn_is_one_read_from_running_to_idle() {
    let home = TempDir::new("turn-write");
    let mut child = session_command(home.path(), &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 16];
    for turn in 0..20 {
        let line = format!(
            "{{\"type\":\"user\",\"message\":\"turn {turn}\",\"parent_tool_use_id\":null}}\n"
        );
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.flush().unwrap();
        // The host reads at once (a blocking read wakes on the first bytes written): the
        // whole turn must be in that one read. A turn written in two pieces is caught here
        // unless the second write landed before this thread woke.
        let n = stdout.read(&mut buf).unwrap();
        let got = &buf[..n];
        assert!(n > 0, "turn {turn}: output ended");
        let (running, result, idle) = (
            line_at(got, RUNNING),
            line_at(got, RESULT),
            line_at(got, IDLE),
        );
        assert!(
            running.is_some() && idle.is_some() && got.ends_with(b"\n"),
            "turn {turn}: one read held only {:?}",
            String::from_utf8_lossy(got)
        );
        assert!(running < result && result < idle, "turn {turn}: order");
    }
    drop(stdin);
    let mut rest = Vec::new();
    stdout.read_to_end(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
}
