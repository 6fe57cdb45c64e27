//! The host client's correlation, cancellation, callback containment and stream rules, against
//! a scripted peer over real OS pipes (the black-box tests against `agentx` itself are in
//! `tests/host/host_agentx.rs`). Rules: WIRE-006..009, WIRE-EOF-001, WIRE-PERM-002, WIRE-002.

use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

use agentx_io::host::{Client, ClientOptions, HostError, PermissionAnswer, ToolPermissionRequest};
use agentx_wire::wire::subtypes::McpStatus;
use agentx_wire::wire::{ControlRequestBody, OutputRecord};
use serde_json::Value;

const T: Duration = Duration::from_secs(20);

/// The agent's end: reads the host's lines, writes raw output lines.
struct Peer {
    from_host: BufReader<std::io::PipeReader>,
    to_host: Option<std::io::PipeWriter>,
}

impl Peer {
    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.from_host.read_line(&mut line).expect("read host line");
        assert!(
            line.ends_with('\n'),
            "host wrote an unterminated line: {line:?}"
        );
        serde_json::from_str(&line).expect("host wrote JSON")
    }
    fn write(&mut self, line: &str) {
        let w = self.to_host.as_mut().expect("open");
        w.write_all(line.as_bytes()).unwrap();
        w.write_all(b"\n").unwrap();
        w.flush().unwrap();
    }
    fn close(&mut self) {
        self.to_host = None;
    }
}

fn pair(options: ClientOptions) -> (Client, Peer) {
    let (host_in_r, host_in_w) = std::io::pipe().unwrap();
    let (agent_out_r, agent_out_w) = std::io::pipe().unwrap();
    let client = Client::attach(agent_out_r, host_in_w, options);
    (
        client,
        Peer {
            from_host: BufReader::new(host_in_r),
            to_host: Some(agent_out_w),
        },
    )
}

#[test]
fn control_call_is_correlated_and_typed() {
    let (client, mut peer) = pair(ClientOptions::default());
    std::thread::scope(|s| {
        let h = s.spawn(|| client.control(ControlRequestBody::McpStatus(McpStatus), T));
        let req = peer.read();
        assert_eq!(req["type"], "control_request");
        assert_eq!(req["request"], serde_json::json!({"subtype": "mcp_status"}));
        let id = req["request_id"].as_str().unwrap().to_owned();
        // An unrelated (orphan) response first: ignored, the call keeps waiting.
        peer.write(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"nobody"}}"#,
        );
        peer.write(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"mcpServers":[]}}}}}}"#
        ));
        let payload = h.join().unwrap().expect("success").expect("payload");
        assert_eq!(payload.as_bytes(), br#"{"mcpServers":[]}"#);
    });
}

#[test]
fn a_success_payload_that_fails_its_schema_is_an_error() {
    // WIRE-009: the waiter validates the payload with its own subtype's schema.
    let (client, mut peer) = pair(ClientOptions::default());
    std::thread::scope(|s| {
        let h = s.spawn(|| client.control(ControlRequestBody::McpStatus(McpStatus), T));
        let id = peer.read()["request_id"].as_str().unwrap().to_owned();
        peer.write(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"servers":1}}}}}}"#
        ));
        let r = h.join().unwrap();
        assert!(
            matches!(
                r,
                Err(HostError::InvalidResponse {
                    subtype: "mcp_status",
                    ..
                })
            ),
            "{r:?}"
        );
    });
}

#[test]
fn control_error_response_is_an_error() {
    let (client, mut peer) = pair(ClientOptions::default());
    std::thread::scope(|s| {
        let h = s.spawn(|| client.interrupt(T));
        let id = peer.read()["request_id"].as_str().unwrap().to_owned();
        peer.write(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"error","request_id":"{id}","error":"no"}}}}"#
        ));
        match h.join().unwrap() {
            Err(HostError::Control { subtype, error }) => {
                assert_eq!((subtype, error.as_str()), ("interrupt", "no"));
            }
            other => panic!("{other:?}"),
        }
    });
}

#[test]
fn timeout_cancels_on_the_wire_and_ignores_the_late_response() {
    // WIRE-007: one control_cancel_request with the same id, the caller rejected at once, the
    // known-late response ignored; the client stays usable.
    let (client, mut peer) = pair(ClientOptions::default());
    let r = client.control(
        ControlRequestBody::McpStatus(McpStatus),
        Duration::from_millis(50),
    );
    assert!(r.as_ref().is_err_and(HostError::is_timeout), "{r:?}");
    let req = peer.read();
    let id = req["request_id"].as_str().unwrap().to_owned();
    let cancel = peer.read();
    assert_eq!(
        cancel,
        serde_json::json!({"type": "control_cancel_request", "request_id": id})
    );
    peer.write(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}"}}}}"#
    ));
    std::thread::scope(|s| {
        let h = s.spawn(|| client.interrupt(T));
        let id2 = peer.read()["request_id"].as_str().unwrap().to_owned();
        assert_ne!(id, id2);
        peer.write(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id2}"}}}}"#
        ));
        h.join().unwrap().expect("second call succeeds");
    });
    // Nothing of the late response reached the record stream.
    peer.write(r#"{"type":"keep_alive"}"#);
    assert!(matches!(client.recv(), Some(Ok(OutputRecord::KeepAlive))));
}

#[test]
fn eof_rejects_pending_calls_after_the_final_unterminated_response() {
    // WIRE-EOF-001 then WIRE-008: a valid final response without LF resolves its call; the
    // other call gets stream-closed.
    let (client, mut peer) = pair(ClientOptions::default());
    std::thread::scope(|s| {
        let a = s.spawn(|| client.control(ControlRequestBody::McpStatus(McpStatus), T));
        let ida = peer.read()["request_id"].as_str().unwrap().to_owned();
        let b = s.spawn(|| client.interrupt(T));
        let _idb = peer.read()["request_id"].as_str().unwrap().to_owned();
        let w = peer.to_host.as_mut().unwrap();
        write!(
            w,
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{ida}","response":{{"mcpServers":[]}}}}}}"#
        )
        .unwrap();
        peer.close();
        assert!(a.join().unwrap().is_ok());
        assert!(b.join().unwrap().is_err_and(|e| e.is_stream_closed()));
    });
    // No new request after close.
    assert!(client.interrupt(T).is_err_and(|e| e.is_stream_closed()));
}

fn can_use_tool(id: &str) -> String {
    format!(
        r#"{{"type":"control_request","request_id":"{id}","request":{{"subtype":"can_use_tool","tool_name":"Bash","input":{{"command":"ls"}},"tool_use_id":"toolu_1","description":"Bash: ls"}}}}"#
    )
}

fn decision(peer: &mut Peer, id: &str) -> Value {
    let v = peer.read();
    assert_eq!(v["type"], "control_response");
    assert_eq!(v["response"]["subtype"], "success");
    assert_eq!(v["response"]["request_id"], id);
    v["response"]["response"].clone()
}

#[test]
fn callback_allow_and_deny_answer_the_request() {
    let options = ClientOptions::default().can_use_tool(|r: &ToolPermissionRequest| {
        assert_eq!(r.tool_name, "Bash");
        assert_eq!(r.input, r#"{"command":"ls"}"#);
        assert_eq!(r.description.as_deref(), Some("Bash: ls"));
        Ok(if r.request_id == "p1" {
            PermissionAnswer::Allow {
                updated_input: Some(r#"{"command":"ls -a"}"#.into()),
            }
        } else {
            PermissionAnswer::Deny {
                message: "nope".into(),
                interrupt: true,
            }
        })
    });
    let (_client, mut peer) = pair(options);
    peer.write(&can_use_tool("p1"));
    assert_eq!(
        decision(&mut peer, "p1"),
        serde_json::json!({"behavior":"allow","updatedInput":{"command":"ls -a"},"toolUseID":"toolu_1"})
    );
    peer.write(&can_use_tool("p2"));
    assert_eq!(
        decision(&mut peer, "p2"),
        serde_json::json!({"behavior":"deny","message":"nope","interrupt":true,"toolUseID":"toolu_1"})
    );
}

#[test]
fn callback_errors_panics_and_absence_deny() {
    // WIRE-PERM-002: fail closed, never an implicit allow; the client survives a panic.
    let options = ClientOptions::default().can_use_tool(|r: &ToolPermissionRequest| {
        if r.request_id == "boom" {
            panic!("callback panic");
        }
        Err("callback error".into())
    });
    let (client, mut peer) = pair(options);
    for id in ["boom", "err"] {
        peer.write(&can_use_tool(id));
        let d = decision(&mut peer, id);
        assert_eq!(d["behavior"], "deny");
        assert_eq!(d["message"], "permission callback failed");
    }
    peer.write(r#"{"type":"keep_alive"}"#);
    assert!(matches!(client.recv(), Some(Ok(OutputRecord::KeepAlive))));

    let (_c, mut peer) = pair(ClientOptions::default());
    peer.write(&can_use_tool("none"));
    assert_eq!(
        decision(&mut peer, "none")["message"],
        "no permission callback installed"
    );
}

#[test]
fn a_cancelled_permission_request_is_not_answered() {
    let (gate_tx, gate_rx) = std::sync::mpsc::channel::<()>();
    let gate = std::sync::Mutex::new(gate_rx);
    let options = ClientOptions::default().can_use_tool(move |_: &ToolPermissionRequest| {
        let _ = gate.lock().unwrap().recv();
        Ok(PermissionAnswer::allow())
    });
    let (client, mut peer) = pair(options);
    peer.write(&can_use_tool("c1"));
    peer.write(r#"{"type":"control_cancel_request","request_id":"c1"}"#);
    // The cancel was routed once the next record arrives behind it.
    peer.write(r#"{"type":"keep_alive"}"#);
    assert!(matches!(client.recv(), Some(Ok(OutputRecord::KeepAlive))));
    gate_tx.send(()).unwrap();
    // The next thing the host writes is our probe's answer, not c1's.
    peer.write(&can_use_tool("c2"));
    gate_tx.send(()).unwrap();
    assert_eq!(decision(&mut peer, "c2")["behavior"], "allow");
}

#[test]
fn unknown_agent_control_requests_get_the_generic_error() {
    let (_client, mut peer) = pair(ClientOptions::default());
    peer.write(
        r#"{"type":"control_request","request_id":"x1","request":{"subtype":"frobnicate"}}"#,
    );
    let v = peer.read();
    assert_eq!(
        v,
        serde_json::json!({"type":"control_response","response":{"subtype":"error","request_id":"x1","error":"unsupported control request \"frobnicate\""}})
    );
}

#[test]
fn the_host_echoes_at_most_64_bytes_of_an_unknown_subtype_as_agentx_does() {
    // PROFILE §5: one text for agentx and the host (`wire::responses`), and a diagnostic echoes
    // at most 64 bytes of an input value; the host's copy once echoed the whole subtype.
    let (_client, mut peer) = pair(ClientOptions::default());
    for (id, subtype) in [("x64", "s".repeat(64)), ("x65", "s".repeat(65))] {
        peer.write(&format!(
            r#"{{"type":"control_request","request_id":"{id}","request":{{"subtype":"{subtype}"}}}}"#
        ));
        let v = peer.read();
        assert_eq!(
            v["response"]["error"],
            format!("unsupported control request \"{}\"", "s".repeat(64)),
            "{id}"
        );
        assert_eq!(
            v["response"]["error"],
            agentx_wire::wire::responses::unsupported_control_request(&subtype)
        );
    }
}

#[test]
fn unknown_types_are_records_and_bad_lines_are_errors_in_order() {
    // WIRE-002: an unknown type is surfaced as such, never an error; a malformed line is an
    // error item and the stream goes on.
    let (client, mut peer) = pair(ClientOptions::default());
    peer.write(r#"{"type":"future_thing","x":1}"#);
    peer.write(r#"{"type":"keep_alive","a":1,"a":2}"#);
    peer.write("{not json");
    peer.write(r#"{"type":"keep_alive"}"#);
    peer.close();
    match client.recv() {
        Some(Ok(OutputRecord::Unknown(u))) => assert_eq!(u.record_type, "future_thing"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        client.recv(),
        Some(Err(HostError::Decode { line: 2, .. }))
    ));
    assert!(matches!(
        client.recv(),
        Some(Err(HostError::Decode { line: 3, .. }))
    ));
    assert!(matches!(client.recv(), Some(Ok(OutputRecord::KeepAlive))));
    assert!(client.recv().is_none());
}

#[test]
fn upload_refuses_without_capabilities() {
    let (client, _peer) = pair(ClientOptions::default());
    let r = client.upload(
        agentx_io::host::UploadSource::Bytes(b"x"),
        "a.png",
        "image/png",
        "3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27",
        T,
    );
    assert!(matches!(r, Err(HostError::AttachmentsUnavailable)), "{r:?}");
}

#[test]
fn output_line_limit_at_its_edge() {
    // PROFILE §2a: a line of exactly the limit is a record; one byte more is an error item in
    // its place (not buffered), and the stream goes on.
    let (client, mut peer) = pair(ClientOptions::default().max_line(64));
    let at_limit = format!("{:<64}", r#"{"type":"keep_alive"}"#);
    let past_limit = format!("{:<65}", r#"{"type":"keep_alive"}"#);
    assert_eq!((at_limit.len(), past_limit.len()), (64, 65));
    peer.write(&at_limit);
    peer.write(&past_limit);
    peer.write(r#"{"type":"keep_alive"}"#);
    peer.close();
    assert!(matches!(client.recv(), Some(Ok(OutputRecord::KeepAlive))));
    assert!(matches!(
        client.recv(),
        Some(Err(HostError::Decode { line: 2, .. }))
    ));
    assert!(matches!(client.recv(), Some(Ok(OutputRecord::KeepAlive))));
    assert!(client.recv().is_none());
}

/// The stderr cap at its edge, for both clients: a child that writes 3 MB to stderr exits
/// (the pipe is drained past the cap, so it never blocks) and the report keeps exactly the
/// cap's bytes.
#[test]
fn stderr_is_drained_and_kept_up_to_the_cap() {
    let chatty = || {
        agentx_io::host::AgentCommand::new("sh")
            .arg("-c")
            .arg("head -c 3000000 /dev/zero | tr '\\0' e >&2")
    };
    for (cap, kept) in [(None, 1 << 20), (Some(1000), 1000), (Some(0), 0)] {
        let mut options = ClientOptions::default();
        if let Some(c) = cap {
            options = options.stderr_cap(c);
        }
        let client = Client::spawn(&chatty(), options).unwrap();
        let report = client.close(Duration::from_secs(60)).unwrap();
        assert!(report.success(), "{:?}", report.status);
        assert_eq!(report.stderr.len(), kept);
        assert!(report.stderr.iter().all(|&b| b == b'e'));

        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let report = rt.block_on(async {
            let mut options = agentx_io::host::AsyncClientOptions::default();
            if let Some(c) = cap {
                options = options.stderr_cap(c);
            }
            let client = agentx_io::host::AsyncClient::spawn(&chatty(), options)
                .await
                .unwrap();
            client.close(Duration::from_secs(60)).await.unwrap()
        });
        assert!(report.success(), "{:?}", report.status);
        assert_eq!(report.stderr.len(), kept);
    }
}

/// `host::inbound`: `recv` reads the agent's output on the caller's thread, and the client's
/// helper reads it once nobody has been in `recv` for a moment. A caller that reads, stops
/// (while the agent asks for permission twice and goes on writing), and reads again gets
/// every record once, in output order, and both requests were answered while it did not read
/// (WIRE-PERM-002: the callback runs without a `recv`; no hang when the caller stops reading).
#[test]
fn a_caller_that_stops_reading_loses_no_record_and_its_requests_are_still_answered() {
    let options = ClientOptions::default()
        .can_use_tool(|_: &ToolPermissionRequest| Ok(PermissionAnswer::allow()));
    let (client, mut peer) = pair(options);
    let event = |i: usize| {
        format!(
            r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"w{i} "}}}},"parent_tool_use_id":null,"uuid":"3f1e7948-5c1f-4c1f-8e2c-{i:012x}","session_id":"93ba9bd5-b18d-4283-afcb-95d00a53b0a9"}}"#
        )
    };
    // The record's number, from its text.
    let number = |item: Option<Result<OutputRecord<'static>, HostError>>| match item {
        Some(Ok(OutputRecord::StreamEvent(e))) => {
            let v: Value = serde_json::from_slice(&e.event.to_json()).unwrap();
            let text = v["delta"]["text"].as_str().unwrap().to_owned();
            text.trim()
                .trim_start_matches('w')
                .parse::<usize>()
                .unwrap()
        }
        other => panic!("{other:?}"),
    };
    let mut next = 0;
    let mut expected = std::collections::VecDeque::new();
    for round in 0..3 {
        // The caller reads as records come (it holds the reading role, blocked in `read`).
        for _ in 0..5 {
            peer.write(&event(next));
            assert_eq!(number(client.recv()), next);
            next += 1;
        }
        // The caller stops reading: the records and requests that follow are read by the
        // helper; the answers prove it (the peer waits for them before writing on).
        for k in 0..2 {
            for _ in 0..3 {
                peer.write(&event(next));
                expected.push_back(next);
                next += 1;
            }
            let id = format!("r{round}k{k}");
            peer.write(&can_use_tool(&id));
            assert_eq!(decision(&mut peer, &id)["behavior"], "allow");
        }
        // Back to reading: what the helper queued comes first, in order, none twice.
        while let Some(i) = expected.pop_front() {
            assert_eq!(number(client.recv()), i);
        }
    }
    peer.close();
    assert!(client.recv().is_none());
}

/// A `recv` blocked in the agent's output (it holds the reading role) while another thread
/// makes a control call: the `recv`'s own read routes the response to that call (WIRE-006),
/// and the record after it is the `recv`'s.
#[test]
fn a_control_call_is_answered_while_another_thread_waits_in_recv() {
    let (client, mut peer) = pair(ClientOptions::default());
    std::thread::scope(|s| {
        let reader = s.spawn(|| client.recv());
        let call = s.spawn(|| client.control(ControlRequestBody::McpStatus(McpStatus), T));
        let req = peer.read();
        assert_eq!(req["request"]["subtype"], "mcp_status");
        let id = req["request_id"].as_str().unwrap().to_owned();
        peer.write(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"mcpServers":[]}}}}}}"#
        ));
        assert!(call.join().unwrap().expect("answered").is_some());
        peer.write(r#"{"type":"keep_alive"}"#);
        assert!(matches!(
            reader.join().unwrap(),
            Some(Ok(OutputRecord::KeepAlive))
        ));
    });
}

/// A line that is not a record keeps its typed error (the framer's or the
/// record decoder's, with WIRE-021's fatal-or-record classification) and its `Display` text;
/// neither `Display` nor `Debug` shows the line's content (a secret in it stays out).
#[test]
fn decode_errors_keep_their_classification_and_never_the_line() {
    use agentx_io::host::DecodeError;
    const SECRET: &str = "sk-live-do-not-print-0123456789";
    let (client, mut peer) = pair(ClientOptions::default().max_line(256));
    peer.write(&format!(r#"{{"type":"keep_alive","a":"{SECRET}","a":2}}"#));
    peer.write(&format!("{{not json {SECRET}"));
    peer.write(&format!(
        r#"{{"type":"result","subtype":"success","is_error":"{SECRET}"}}"#
    ));
    peer.write(&format!("{SECRET:<257}"));
    peer.write(r#"{"type":"keep_alive"}"#);
    peer.close();
    let mut seen = Vec::new();
    for _ in 0..4 {
        match client.recv() {
            Some(Err(e @ HostError::Decode { .. })) => {
                let (text, debug) = (e.to_string(), format!("{e:?}"));
                assert!(!text.contains(SECRET) && !debug.contains(SECRET), "{debug}");
                let HostError::Decode { line, error } = e else {
                    unreachable!()
                };
                let frame = matches!(error, DecodeError::Frame(_));
                seen.push((line, error.is_fatal(), error.check_kind(), frame, text));
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(matches!(client.recv(), Some(Ok(OutputRecord::KeepAlive))));
    assert!(client.recv().is_none());
    let summary: Vec<_> = seen
        .iter()
        .map(|(l, f, k, fr, _)| (*l, *f, *k, *fr))
        .collect();
    assert_eq!(
        summary,
        [
            (1, false, "duplicate_member", false),
            (2, true, "malformed_json", false),
            (3, false, "schema", false),
            (4, true, "line_too_long", true),
        ]
    );
    assert_eq!(
        seen[0].4,
        "agent output line 1: ambiguous JSON: duplicate member name"
    );
    assert!(
        seen[1].4.starts_with("agent output line 2: malformed JSON"),
        "{}",
        seen[1].4
    );
    assert_eq!(
        seen[3].4,
        "agent output line 4: line too long (limit 256 bytes)"
    );
}

/// `AsyncClient::close(timeout)` returns by its deadline (the agent killed) when the agent
/// stopped reading its stdin with a send still queued: the writer stuck on the full pipe is
/// given up, it does not hold `close` forever.
#[test]
fn async_close_kills_an_agent_that_stopped_reading_its_input() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let deaf = agentx_io::host::AgentCommand::new("sh")
            .arg("-c")
            .arg("exec sleep 60");
        let client = agentx_io::host::AsyncClient::spawn(
            &deaf,
            agentx_io::host::AsyncClientOptions::default(),
        )
        .await
        .unwrap();
        // Far more than a pipe holds: the writer task blocks on it.
        client.send_text(&"x".repeat(300_000)).unwrap();
        let closed = tokio::time::timeout(
            Duration::from_secs(30),
            client.close(Duration::from_secs(1)),
        )
        .await
        .expect("close returned by its deadline");
        let report = closed.unwrap();
        assert!(
            !report.success(),
            "the agent was killed: {:?}",
            report.status
        );
    });
}
