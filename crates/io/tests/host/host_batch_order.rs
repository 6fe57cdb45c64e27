//! The blocking client hands records to `recv` a read's worth at a time (`host::stream::Output`);
//! a record whose routing wakes someone (here a control response resolving a call, WIRE-006)
//! first hands over the records before it. So when `control()` returns, every record the agent
//! wrote before the response is already in the stream, in order, with nothing to wait for.

use std::io::{BufRead, BufReader, Write};
use std::time::Duration;

use agentx_io::host::{Client, ClientOptions};
use agentx_wire::wire::subtypes::McpStatus;
use agentx_wire::wire::{ControlRequestBody, OutputRecord};
use serde_json::Value;

const T: Duration = Duration::from_secs(20);
const BEFORE: usize = 300;

fn stream_event(i: usize) -> String {
    format!(
        r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"w{i} "}}}},"parent_tool_use_id":null,"uuid":"3f1e7948-5c1f-4c1f-8e2c-{i:012x}","session_id":"93ba9bd5-b18d-4283-afcb-95d00a53b0a9"}}"#
    )
}

#[test]
fn records_before_a_control_response_are_in_the_stream_when_the_call_returns() {
    let (host_in_r, host_in_w) = std::io::pipe().unwrap();
    let (agent_out_r, mut agent_out_w) = std::io::pipe().unwrap();
    let client = Client::attach(agent_out_r, host_in_w, ClientOptions::default());
    let mut from_host = BufReader::new(host_in_r);
    std::thread::scope(|s| {
        let call = s.spawn(|| client.control(ControlRequestBody::McpStatus(McpStatus), T));
        let mut line = String::new();
        from_host.read_line(&mut line).unwrap();
        let req: Value = serde_json::from_str(&line).unwrap();
        let id = req["request_id"].as_str().unwrap().to_owned();
        // The records and the response in one write: one read, one batch, for the client.
        let mut chunk = String::new();
        for i in 0..BEFORE {
            chunk.push_str(&stream_event(i));
            chunk.push('\n');
        }
        chunk.push_str(&format!(
            r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}","response":{{"mcpServers":[]}}}}}}"#
        ));
        chunk.push('\n');
        chunk.push_str(&stream_event(BEFORE));
        chunk.push('\n');
        agent_out_w.write_all(chunk.as_bytes()).unwrap();
        agent_out_w.flush().unwrap();
        call.join().unwrap().expect("success");
    });
    // Already there: no waiting (a zero timeout), in the agent's order.
    for i in 0..BEFORE {
        let item = client
            .recv_timeout(Duration::ZERO)
            .unwrap_or_else(|_| panic!("record {i} was not in the stream when the call returned"))
            .expect("stream open")
            .expect("decoded");
        let OutputRecord::StreamEvent(e) = item else {
            panic!("record {i}: {}", item.record_type())
        };
        assert!(
            String::from_utf8_lossy(&e.event.to_json()).contains(&format!("\"w{i} \"")),
            "record {i} out of order: {}",
            String::from_utf8_lossy(&e.event.to_json())
        );
    }
    // The record after the response follows (it may still be on its way).
    let OutputRecord::StreamEvent(e) = client.recv_timeout(T).unwrap().unwrap().unwrap() else {
        panic!("not a stream_event")
    };
    assert!(String::from_utf8_lossy(&e.event.to_json()).contains(&format!("\"w{BEFORE} \"")));
    drop(agent_out_w);
    assert!(client.recv_timeout(T).unwrap().is_none());
}
