//! `agentx-wire check` as a black box (PROFILE §2): exit codes, per-line diagnostics, the JSON
//! summary, the line limit at its edge, EOF handling and a closed stdout.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn check(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentx-wire"))
        .arg("check")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn valid_stream_exits_zero_silently() {
    let out = check(
        &["--level", "json"],
        b"{\"type\":\"a\"}\n\n \t\r\n{\"type\":\"b\"}\r\n{\"type\":\"c\"}",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty() && out.stdout.is_empty());
}

#[test]
fn every_bad_line_is_reported_with_its_kind() {
    let input = b"{\"a\":1}\n[1]\n{\"a\":1,\"\\u0061\":2}\n\n{\"x\":\"\xff\"}\n{\"t\":tru}\n{\"ok\":true}\n[[[[[[[[[[";
    let out = check(&["--level", "json", "--json", "-"], input);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "line 2: record is not a JSON object\n\
         line 3: ambiguous JSON: duplicate member name\n\
         line 5: malformed JSON: invalid UTF-8\n\
         line 6: malformed JSON: invalid literal\n\
         line 8: malformed JSON: unexpected end of input\n"
    );
    let summary = agentx_wire::json::parse(&out.stdout).expect("summary is JSON");
    let o = summary.root().as_object().unwrap();
    let n = |k: &str| o.get(k).unwrap().as_number().unwrap().as_u64().unwrap();
    assert_eq!(
        (n("records"), n("valid"), n("invalid"), n("warnings")),
        (7, 2, 5, 0)
    );
    let kinds: Vec<String> = o
        .get("errors")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e.as_object()
                .unwrap()
                .get("kind")
                .unwrap()
                .as_str()
                .unwrap()
                .decode()
                .into_owned()
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "not_an_object",
            "duplicate_member",
            "invalid_utf8",
            "malformed_json",
            "malformed_json"
        ]
    );
    assert!(out.stdout.ends_with(b"}\n"));
}

#[test]
fn nesting_limit_is_reported_as_too_deep() {
    let deep = format!("{}{}\n", "[".repeat(129), "]".repeat(129));
    let out = check(&["--level", "json", "--json"], deep.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("\"kind\":\"too_deep\""));
}

#[test]
fn line_limit_at_and_one_past_the_edge() {
    const LIMIT: usize = 8_388_608;
    let line = |len: usize| {
        let mut l = b"{\"a\":\"".to_vec();
        l.resize(len - 2, b'x');
        l.extend_from_slice(b"\"}");
        l
    };
    let mut input = line(LIMIT);
    input.push(b'\n');
    input.extend_from_slice(&line(LIMIT + 1));
    input.extend_from_slice(b"\n{\"next\":true}\n");
    let out = check(&["--level", "json", "--json"], &input);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "line 2: line too long (limit 8388608 bytes)\n"
    );
    let s = text(&out.stdout);
    assert!(s.contains("\"kind\":\"line_too_long\""), "{s}");
    assert!(s.contains("\"records\":3,\"valid\":2,\"invalid\":1"), "{s}");
}

#[test]
fn a_file_read_in_chunks_gives_the_same_verdicts_as_stdin() {
    // `check` reads files 64 KiB at a time: records span chunk edges, one ends
    // exactly on an edge, a bad one spans an edge, a blank line and the unterminated tail
    // (WIRE-EOF-001) come last. The verdicts must equal those of the same bytes on stdin.
    const CHUNK: usize = 64 << 10;
    let record = |len: usize| {
        let mut r = b"{\"a\":\"".to_vec();
        r.resize(len - 2, b'x');
        r.extend_from_slice(b"\"}\n");
        r
    };
    let mut input = record(CHUNK - 1); // its LF is the chunk's last byte
    input.extend_from_slice(&record(3 * CHUNK + 17));
    let edge = 5 * CHUNK - input.len();
    input.extend_from_slice(&record(edge - 5));
    input.extend_from_slice(b"{\"b\":1,\"b\":2}\n"); // a duplicate member across the edge
    input.extend_from_slice(b"  \n{\"tail\":[1,2]}");
    let dir = std::env::temp_dir().join(format!("agentx-wire-check-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chunks.ndjson");
    std::fs::write(&path, &input).unwrap();
    let from_file = Command::new(env!("CARGO_BIN_EXE_agentx-wire"))
        .args(["check", "--level", "json", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let from_stdin = check(&["--level", "json", "--json"], &input);
    assert_eq!(from_file.status.code(), Some(1));
    assert_eq!(text(&from_file.stderr), text(&from_stdin.stderr));
    assert_eq!(text(&from_file.stdout), text(&from_stdin.stdout));
    assert!(
        text(&from_file.stderr).starts_with("line 4: "),
        "{}",
        text(&from_file.stderr)
    );
    let s = text(&from_file.stdout);
    assert!(s.contains("\"records\":5,\"valid\":4,\"invalid\":1"), "{s}");
}

#[test]
fn usage_errors_exit_two() {
    for args in [
        &["--level", "xml"][..],
        &["--bogus"],
        &["a", "b"],
        &["--json", "--json"],
        &["--direction"],
    ] {
        let out = check(args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(text(&out.stderr).contains("usage: agentx-wire check"));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_agentx-wire"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(env!("CARGO_BIN_EXE_agentx-wire"))
        .arg("nope")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_file_is_a_fatal_startup_error() {
    let out = check(&["/nonexistent/agentx-wire-test"], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("agentx-wire: cannot open input file"));
}

#[test]
fn closed_stdout_ends_quietly_with_status_one() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentx-wire"))
        .args(["check", "--level", "json", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        for _ in 0..200_000 {
            if input.write_all(b"[1]\n").is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        !text(&out.stderr).contains("panicked"),
        "{}",
        text(&out.stderr)
    );
}
