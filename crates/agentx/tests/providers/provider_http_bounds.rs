//! A model server that does not stop (issue 46): one response carries at most 32 MiB of text
//! and arguments (`agentx_openai::mapping::MAX_RESPONSE_BYTES`). Past it the message ends as
//! if the server had cut it for length and the connection is closed: a server that streams 33
//! MiB and then holds the stream open no longer holds the turn. The session goes on (the
//! edges are the mapper's unit tests). Through the real `agentx` and the loopback SSE server.

use crate::harness;
use crate::provider_http_support;

use provider_http_support::agentx_home::*;
use provider_http_support::*;

/// The role chunk and `mib` MiB of text in 1 MiB deltas, and no end.
fn endless_text(mib: usize) -> Vec<Vec<u8>> {
    let piece = "x".repeat(1 << 20);
    let mut v = vec![delta(r#"{"role":"assistant","content":""}"#, "null")];
    v.extend((0..mib).map(|_| delta(&format!(r#"{{"content":"{piece}"}}"#), "null")));
    v
}

#[test]
fn a_response_past_32_mib_is_cut_the_connection_closed_and_the_session_goes_on() {
    let mut server = Server::start_in_thread(vec![
        Reply::SseHang(endless_text(33)),
        Reply::Sse(text_stream()),
    ]);
    let home = Home::new(&openai_auth(&server));
    let cwd = home.cwd();
    let mut a = harness::Agentx::session(&home.0, &["--cwd", cwd.to_str().unwrap()]);
    a.send(&harness::user("write a lot"));
    let first = a.turn();
    let result = first.iter().find(|r| r["type"] == "result").unwrap();
    // The cut message is one text block of 32 MiB: more than an output line holds, so the
    // turn reports the output error of PROFILE §5; the stream was not read further.
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    assert!(
        result["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("output error: record exceeds the"),
        "{result}"
    );
    // Closed right after the cut, before any other request (waited for, never slept on).
    server.wait_closed(harness::TIMEOUT);

    a.send(&harness::user("again"));
    let next = a.turn();
    let result = next.iter().find(|r| r["type"] == "result").unwrap();
    assert_eq!(result["result"], "Hello world", "{result}");
    assert_eq!(server.requests().len(), 2);
    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
}
