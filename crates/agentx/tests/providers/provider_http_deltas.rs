//! PROFILE §8 "Streamed deltas and credentials" (WIRE-013 across records) through the real
//! `agentx` binary with `--include-partial-messages`: an `openai` provider on a local SSE
//! server streams the provider's own key split across `text_delta`s, and across tool-argument
//! fragments with `\u` escapes. What the host reads never rebuilds it: not the joined
//! `text_delta` texts of a block, not the joined `partial_json` fragments (raw or decoded as
//! JSON); a tail that could start the key is held back until the next delta settles it; the
//! delta that would complete it is never written, the turn ends with the output error
//! `output error: record failed credential validation`, and the session goes on (no latched
//! encoder failure, exit 0).

use crate::harness;
use crate::provider_http_support;

use provider_http_support::agentx_home::*;
use provider_http_support::*;
use serde_json::Value;

const OUTPUT_ERROR: &str = "output error: record failed credential validation";

fn text_chunks(pieces: &[&str]) -> Vec<Vec<u8>> {
    let mut v = vec![delta(r#"{"role":"assistant","content":""}"#, "null")];
    for p in pieces {
        v.push(delta(
            &format!(r#"{{"content":{}}}"#, serde_json::to_string(p).unwrap()),
            "null",
        ));
    }
    v.extend([delta("{}", r#""stop""#), usage(5, 5), done()]);
    v
}

/// A `Bash` call whose `arguments` arrive as these fragments (raw JSON text).
fn tool_chunks(fragments: &[&str]) -> Vec<Vec<u8>> {
    let mut v = vec![delta(
        r#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_k","type":"function","function":{"name":"Bash","arguments":""}}]}"#,
        "null",
    )];
    for f in fragments {
        v.push(delta(
            &format!(
                r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":{}}}}}]}}"#,
                serde_json::to_string(f).unwrap()
            ),
            "null",
        ));
    }
    v.extend([delta("{}", r#""tool_calls""#), usage(5, 5), done()]);
    v
}

/// The joined `text_delta` texts of each block index, in order.
fn joined_text(records: &[Value]) -> Vec<String> {
    joined(records, "text_delta", "text")
}

fn joined(records: &[Value], ty: &str, member: &str) -> Vec<String> {
    let mut blocks: Vec<(u64, String)> = Vec::new();
    for r in records.iter().filter(|r| r["type"] == "stream_event") {
        let e = &r["event"];
        match e["type"].as_str() {
            Some("content_block_start") => {
                blocks.push((e["index"].as_u64().unwrap(), String::new()))
            }
            Some("content_block_delta") if e["delta"]["type"] == ty => {
                let i = e["index"].as_u64().unwrap();
                let b = blocks.iter_mut().rev().find(|(j, _)| *j == i).unwrap();
                b.1.push_str(e["delta"][member].as_str().unwrap());
            }
            _ => {}
        }
    }
    blocks.into_iter().map(|(_, s)| s).collect()
}

fn deltas(records: &[Value], ty: &str, member: &str) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["type"] == "stream_event" && r["event"]["delta"]["type"] == ty)
        .map(|r| r["event"]["delta"][member].as_str().unwrap().to_string())
        .collect()
}

/// Every JSON string (names and values) of a JSON text, decoded; for a text that does not
/// parse (a cut stream), the decoded strings of its longest parsable prefix closed by hand.
fn decoded_strings(json: &str) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\u{0}');
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.iter().for_each(|(k, x)| {
                out.push_str(k);
                out.push('\u{0}');
                walk(x, out)
            }),
            _ => {}
        }
    }
    let mut out = String::new();
    for close in ["", "\"}", "}", "\"]", "]"] {
        if let Ok(v) = serde_json::from_str::<Value>(&format!("{json}{close}")) {
            walk(&v, &mut out);
            return out;
        }
    }
    out
}

fn assert_turn_ended_with_the_output_error(turn: &[Value], what: &str) {
    let l = harness::labels(turn);
    assert_eq!(
        l.last().map(String::as_str),
        Some("system/session_state_changed:idle"),
        "{what}: {l:?}"
    );
    let r = turn.iter().find(|r| r["type"] == "result").unwrap();
    assert_eq!(r["subtype"], "error_during_execution", "{what}: {r}");
    assert_eq!(r["is_error"], true);
    assert!(
        r["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e == OUTPUT_ERROR),
        "{what}: {r}"
    );
    assert!(
        !turn.iter().any(|r| r["type"] == "assistant"),
        "{what}: the block that carried the key was written: {l:?}"
    );
}

#[test]
fn profile_8_a_key_split_across_deltas_is_never_rebuilt_and_the_session_goes_on() {
    let (head, tail) = KEY.split_at(9);
    let (mid, end) = tail.split_at(7);
    // `\u`-escaped pieces of the key in the tool arguments: "sk-agentx-test-4f3e2d1c".
    let escaped: String = KEY
        .chars()
        .map(|c| format!("\\u{:04x}", c as u32))
        .collect();
    let server = Server::start_in_thread(vec![
        // 1. The key in three text deltas.
        Reply::Sse(text_chunks(&[
            "The key is ",
            head,
            mid,
            &format!("{end}, done."),
        ])),
        // 2. The key in the arguments, split inside its escapes.
        Reply::Sse(tool_chunks(&[
            r#"{"command":"echo "#,
            &escaped[..20],
            &escaped[20..57],
            &format!(r#"{}"}}"#, &escaped[57..]),
        ])),
        // 3. A tail that could start the key is held until settled, then released whole.
        Reply::Sse(text_chunks(&["Hello sk-ag", "ile world"])),
        // 4. The same for tool arguments; the tool runs.
        Reply::Sse(tool_chunks(&[r#"{"command":"echo sk-\u0061"#, r#"gile"}"#])),
        Reply::Sse(text_stream()),
    ]);
    let home = Home::new(&openai_auth(&server));
    let cwd = home.cwd();
    let mut a = harness::Agentx::session(
        &home.0,
        &[
            "--include-partial-messages",
            "--permission-mode",
            "bypassPermissions",
            "--cwd",
            cwd.to_str().unwrap(),
        ],
    );

    a.send(&harness::user("one"));
    let t1 = a.turn();
    assert_turn_ended_with_the_output_error(&t1, "text");
    for j in joined_text(&t1) {
        assert!(!j.contains(KEY), "joined text_delta texts rebuild the key");
        // Not even its start: the held-back tail was never released.
        assert!(!j.contains(head), "{j}");
    }
    assert_eq!(deltas(&t1, "text_delta", "text"), ["The key is "]);

    a.send(&harness::user("two"));
    let t2 = a.turn();
    assert_turn_ended_with_the_output_error(&t2, "tool arguments");
    for j in joined(&t2, "input_json_delta", "partial_json") {
        assert!(!j.contains(KEY));
        assert!(!decoded_strings(&j).contains(KEY), "decoded: {j}");
        assert!(!decoded_strings(&j).contains(head), "decoded: {j}");
    }
    assert!(!t2
        .iter()
        .any(|r| harness::label(r).starts_with("user:tool_result")));

    a.send(&harness::user("three"));
    let t3 = a.turn();
    assert_eq!(
        deltas(&t3, "text_delta", "text"),
        ["Hello ", "sk-agile world"],
        "held back until the next delta settled it"
    );
    let r3 = t3.iter().find(|r| r["type"] == "result").unwrap();
    assert_eq!(r3["subtype"], "success", "{r3}");
    assert_eq!(r3["result"], "Hello sk-agile world");

    a.send(&harness::user("four"));
    let t4 = a.turn();
    let fragments = deltas(&t4, "input_json_delta", "partial_json");
    assert_eq!(fragments.concat(), r#"{"command":"echo sk-\u0061gile"}"#);
    assert_eq!(fragments[0], r#"{"command":"echo "#, "{fragments:?}");
    let tr = t4
        .iter()
        .find(|r| harness::label(r).starts_with("user:tool_result"))
        .expect("the tool ran");
    assert!(tr["message"]["content"][0]["content"]
        .as_str()
        .unwrap()
        .contains("sk-agile"));
    assert_eq!(
        t4.iter().find(|r| r["type"] == "result").unwrap()["subtype"],
        "success"
    );

    let done = a.finish();
    assert_eq!(done.status, Some(0), "{}", done.stderr);
    assert_eq!(done.stderr, "", "nothing latched");
    done.assert_valid_output();
    assert_no_key_piece("stdout", &done.stdout);
    assert_no_key_piece("session store", &home.store_bytes());
    assert_eq!(server.requests().len(), 5);
}
