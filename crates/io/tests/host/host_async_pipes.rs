//! The async host client (feature `tokio`) against a scripted peer over in-memory duplex
//! pipes: correlation (WIRE-006), cancellation when a call's future is dropped or times out
//! (WIRE-007), EOF rejection (WIRE-008), async callbacks whose errors and panics deny
//! (WIRE-PERM-002).

use std::time::Duration;

use agentx_io::host::{
    AsyncClient, AsyncClientOptions, HostError, PermissionAnswer, ToolPermissionRequest,
};
use agentx_wire::wire::subtypes::McpStatus;
use agentx_wire::wire::{ControlRequestBody, OutputRecord};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

const T: Duration = Duration::from_secs(20);

struct Peer {
    from_host: BufReader<ReadHalf<DuplexStream>>,
    to_host: WriteHalf<DuplexStream>,
}

impl Peer {
    async fn read(&mut self) -> Value {
        let mut line = String::new();
        self.from_host.read_line(&mut line).await.unwrap();
        assert!(line.ends_with('\n'), "{line:?}");
        serde_json::from_str(&line).unwrap()
    }
    async fn write(&mut self, line: &str) {
        self.to_host.write_all(line.as_bytes()).await.unwrap();
        self.to_host.write_all(b"\n").await.unwrap();
    }
}

fn pair(options: AsyncClientOptions) -> (AsyncClient, Peer) {
    let (host_side, agent_side) = tokio::io::duplex(1 << 20);
    let (host_r, host_w) = tokio::io::split(host_side);
    let (agent_r, agent_w) = tokio::io::split(agent_side);
    let client = AsyncClient::attach(host_r, host_w, options);
    (
        client,
        Peer {
            from_host: BufReader::new(agent_r),
            to_host: agent_w,
        },
    )
}

#[tokio::test]
async fn call_is_correlated_and_a_dropped_call_is_cancelled() {
    let (client, mut peer) = pair(AsyncClientOptions::default());
    // A call whose future is dropped (select! with a ready branch) is cancelled on the wire.
    {
        let call = client.control(ControlRequestBody::McpStatus(McpStatus), T);
        tokio::pin!(call);
        tokio::select! {
            biased;
            _ = &mut call => panic!("no response was sent"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
    }
    let req = peer.read().await;
    let id = req["request_id"].as_str().unwrap().to_owned();
    assert_eq!(
        peer.read().await,
        json!({"type":"control_cancel_request","request_id": id})
    );
    // The late response is ignored; a new call works.
    peer.write(&format!(
        r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id}"}}}}"#
    ))
    .await;
    let call = client.interrupt(T);
    let answer = async {
        let id2 = peer.read().await["request_id"].as_str().unwrap().to_owned();
        assert_ne!(id2, id);
        peer.write(&format!(r#"{{"type":"control_response","response":{{"subtype":"success","request_id":"{id2}"}}}}"#)).await;
    };
    let (r, ()) = tokio::join!(call, answer);
    r.unwrap();
}

#[tokio::test]
async fn timeout_cancels_and_eof_rejects() {
    let (client, mut peer) = pair(AsyncClientOptions::default());
    let r = client.interrupt(Duration::from_millis(30)).await;
    assert!(r.as_ref().is_err_and(HostError::is_timeout), "{r:?}");
    let id = peer.read().await["request_id"].as_str().unwrap().to_owned();
    assert_eq!(
        peer.read().await,
        json!({"type":"control_cancel_request","request_id":id})
    );
    // WIRE-008: the agent's output ends with a call pending.
    let call = client.interrupt(T);
    let close = async {
        peer.read().await;
        peer.to_host.shutdown().await.unwrap();
    };
    let (r, ()) = tokio::join!(call, close);
    assert!(r.is_err_and(|e| e.is_stream_closed()));
    assert!(client.recv().await.is_none());
}

fn can_use_tool(id: &str) -> String {
    format!(
        r#"{{"type":"control_request","request_id":"{id}","request":{{"subtype":"can_use_tool","tool_name":"Write","input":{{"file_path":"a","content":"b"}},"tool_use_id":"toolu_{id}"}}}}"#
    )
}

#[tokio::test]
async fn async_callbacks_decide_and_failures_deny() {
    let options =
        AsyncClientOptions::default().can_use_tool(|r: ToolPermissionRequest| async move {
            tokio::task::yield_now().await;
            match r.request_id.as_str() {
                "ok" => Ok(PermissionAnswer::allow()),
                "err" => Err("nope".into()),
                _ => panic!("callback panic"),
            }
        });
    let (client, mut peer) = pair(options);
    for (id, behavior, message) in [
        ("ok", "allow", None),
        ("err", "deny", Some("permission callback failed")),
        ("boom", "deny", Some("permission callback failed")),
    ] {
        peer.write(&can_use_tool(id)).await;
        let v = peer.read().await;
        assert_eq!(v["response"]["request_id"], id);
        let d = &v["response"]["response"];
        assert_eq!(d["behavior"], behavior, "{v}");
        assert_eq!(d["toolUseID"], format!("toolu_{id}"));
        if let Some(m) = message {
            assert_eq!(d["message"], m);
        }
    }
    // The client survived the panic: records still flow.
    peer.write(r#"{"type":"keep_alive"}"#).await;
    assert!(matches!(
        client.recv().await,
        Some(Ok(OutputRecord::KeepAlive))
    ));
}

/// WIRE-PERM-002: a callback that panics before it returns its future (in the closure
/// itself) denies as well, and the client goes on.
#[tokio::test]
async fn a_callback_that_panics_before_its_future_denies() {
    let options = AsyncClientOptions::default().can_use_tool(|r: ToolPermissionRequest| {
        if r.request_id == "early" {
            panic!("callback panic before its future");
        }
        async move { Ok(PermissionAnswer::allow()) }
    });
    let (client, mut peer) = pair(options);
    for (id, behavior) in [("early", "deny"), ("ok", "allow")] {
        peer.write(&can_use_tool(id)).await;
        let v = peer.read().await;
        assert_eq!(v["response"]["request_id"], id);
        let d = &v["response"]["response"];
        assert_eq!(d["behavior"], behavior, "{v}");
        if behavior == "deny" {
            assert_eq!(d["message"], "permission callback failed");
        }
    }
    peer.write(r#"{"type":"keep_alive"}"#).await;
    assert!(matches!(
        client.recv().await,
        Some(Ok(OutputRecord::KeepAlive))
    ));
}

fn numbered_event(i: usize) -> String {
    format!(
        r#"{{"type":"stream_event","event":{{"type":"content_block_delta","index":0,"delta":{{"type":"text_delta","text":"w{i}"}}}},"parent_tool_use_id":null,"uuid":"3f1e7948-5c1f-4c1f-8e2c-{i:012x}","session_id":"93ba9bd5-b18d-4283-afcb-95d00a53b0a9"}}"#
    )
}

/// The number a `numbered_event` record carries in its uuid.
fn number(item: Option<Result<OutputRecord<'static>, HostError>>) -> usize {
    match item.expect("stream open").expect("decoded") {
        OutputRecord::StreamEvent(e) => usize::from_str_radix(&e.uuid.as_str()[24..], 16).unwrap(),
        other => panic!("{}", other.record_type()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_recv_loses_nothing_and_concurrent_receivers_take_each_record_once() {
    let (client, mut peer) = pair(AsyncClientOptions::default());
    // A recv dropped while it waits for a batch (nothing written yet).
    assert!(
        tokio::time::timeout(Duration::from_millis(10), client.recv())
            .await
            .is_err()
    );
    const N: usize = 3000;
    for i in 0..N {
        peer.write(&numbered_event(i)).await;
    }
    assert_eq!(
        number(client.recv().await),
        0,
        "nothing lost to the dropped recv"
    );
    // Two receivers at once: every other record exactly once, each in stream order.
    let take = |count: usize| {
        let client = &client;
        async move {
            let mut got = Vec::with_capacity(count);
            for _ in 0..count {
                got.push(number(
                    tokio::time::timeout(T, client.recv()).await.unwrap(),
                ));
                tokio::task::yield_now().await;
            }
            got
        }
    };
    let (a, b) = tokio::join!(take((N - 1) / 2), take(N - 1 - (N - 1) / 2));
    assert!(a.windows(2).all(|w| w[0] < w[1]) && b.windows(2).all(|w| w[0] < w[1]));
    let mut all: Vec<usize> = a.into_iter().chain(b).collect();
    all.sort_unstable();
    assert_eq!(all, (1..N).collect::<Vec<_>>());
    drop(peer);
    assert!(client.recv().await.is_none(), "the output ended");
}
