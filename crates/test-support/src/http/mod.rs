//! A real HTTP/1.1 + SSE server for the provider tests: a tokio `TcpListener` on 127.0.0.1
//! that answers each request with the next scripted reply, records every request it receives
//! (method, target, headers, body) and reports when a client closes a connection it was still
//! streaming on. It speaks HTTP on a socket; nothing of agentx's own types is mocked.

pub mod agentx_home;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `200 OK`, `text/event-stream`, chunked: each element is written (and flushed) as one
    /// HTTP chunk, then the terminating chunk.
    Sse(Vec<Vec<u8>>),
    /// `200 OK` SSE: these chunks, then the connection stays open (no terminating chunk)
    /// until the client closes it; the server reports the close on `closed`.
    SseHang(Vec<Vec<u8>>),
    /// No response at all: the request is read, then the server waits until the client closes
    /// the connection and reports the close on `closed` (a request still opening).
    Silent,
    /// A status with extra headers and a body (`content-length`), then close.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
}

/// A request as the server read it off the socket.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request target: path and query.
    pub target: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn body_str(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap()
    }
}

pub struct Server {
    pub port: u16,
    pub requests: Arc<Mutex<Vec<Request>>>,
    /// One message per `SseHang` or `Silent` connection the client closed.
    pub closed: mpsc::UnboundedReceiver<Instant>,
    /// One message per request read off a socket (before it is answered).
    pub received: mpsc::UnboundedReceiver<Instant>,
}

impl Server {
    /// Starts the server on the current tokio runtime.
    pub async fn start(replies: Vec<Reply>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (closed_tx, closed) = mpsc::unbounded_channel();
        let (received_tx, received) = mpsc::unbounded_channel();
        let script = Arc::new(Mutex::new(replies.into_iter()));
        let seen = Arc::clone(&requests);
        tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let script = Arc::clone(&script);
                let seen = Arc::clone(&seen);
                let closed_tx = closed_tx.clone();
                let received_tx = received_tx.clone();
                tokio::spawn(async move {
                    serve(socket, script, seen, closed_tx, received_tx).await;
                });
            }
        });
        Server {
            port,
            requests,
            closed,
            received,
        }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits up to `within` for the next connection the client closed (an `SseHang` or
    /// `Silent` reply); panics when none is reported. For tests that are not async.
    pub fn wait_closed(&mut self, within: Duration) {
        let closed = &mut self.closed;
        let got = wait_on(within, closed.recv());
        assert!(
            got.is_some(),
            "the server observed no closed connection within {within:?}"
        );
    }

    /// Waits up to `within` for the next request to be read off a socket; panics when none is.
    pub fn wait_received(&mut self, within: Duration) {
        let received = &mut self.received;
        let got = wait_on(within, received.recv());
        assert!(
            got.is_some(),
            "the server received no request within {within:?}"
        );
    }
}

/// `what`, on a runtime of its own, for at most `within`: `None` when it did not finish.
fn wait_on<T>(within: Duration, what: impl std::future::Future<Output = Option<T>>) -> Option<T> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async { tokio::time::timeout(within, what).await })
        .ok()
        .flatten()
}

type Script = Arc<Mutex<std::vec::IntoIter<Reply>>>;

async fn serve(
    mut socket: TcpStream,
    script: Script,
    seen: Arc<Mutex<Vec<Request>>>,
    closed: mpsc::UnboundedSender<Instant>,
    received: mpsc::UnboundedSender<Instant>,
) {
    let mut buf = Vec::new();
    // One request per connection is enough: every reply closes or hangs.
    let Some(request) = read_request(&mut socket, &mut buf).await else {
        return;
    };
    let at = request.at;
    seen.lock().unwrap().push(request);
    let _ = received.send(at);
    let reply = script.lock().unwrap().next();
    let Some(reply) = reply else {
        let _ = socket
            .write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            .await;
        return;
    };
    match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} Status\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n", body.len());
            for (n, v) in headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(&body).await;
            let _ = socket.shutdown().await;
        }
        Reply::Sse(chunks) => {
            if write_sse(&mut socket, &chunks).await.is_ok() {
                let _ = socket.write_all(b"0\r\n\r\n").await;
                let _ = socket.flush().await;
            }
            // Let the client read to the end and close.
            let mut sink = [0u8; 256];
            let _ = tokio::time::timeout(Duration::from_secs(5), socket.read(&mut sink)).await;
        }
        Reply::Silent => {
            wait_for_close(&mut socket).await;
            let _ = closed.send(Instant::now());
        }
        Reply::SseHang(chunks) => {
            let _ = write_sse(&mut socket, &chunks).await;
            wait_for_close(&mut socket).await;
            let _ = closed.send(Instant::now());
        }
    }
}

/// Waits for the client to close: a read returning 0 (or an error).
async fn wait_for_close(socket: &mut TcpStream) {
    let mut sink = [0u8; 256];
    loop {
        match socket.read(&mut sink).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}

async fn write_sse(socket: &mut TcpStream, chunks: &[Vec<u8>]) -> std::io::Result<()> {
    socket
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n")
        .await?;
    for c in chunks {
        if c.is_empty() {
            continue;
        }
        socket
            .write_all(format!("{:x}\r\n", c.len()).as_bytes())
            .await?;
        socket.write_all(c).await?;
        socket.write_all(b"\r\n").await?;
        socket.flush().await?;
    }
    Ok(())
}

async fn read_request(socket: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Request> {
    let mut tmp = [0u8; 8192];
    let head_end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p;
        }
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let at = Instant::now();
    let head = String::from_utf8(buf[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let target = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| {
            let (n, v) = l.split_once(':')?;
            Some((n.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + len {
        let n = socket.read(&mut tmp).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&tmp[..n]);
    }
    Some(Request {
        method,
        target,
        headers,
        body: buf[body_start..body_start + len].to_vec(),
        at,
    })
}

// ---- Chat Completions streams in the exact shape the API sends ----

const HEAD: &str = r#"{"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_f33640a400","#;

/// One `data:` event with one choice.
pub fn delta(d: &str, finish: &str) -> Vec<u8> {
    format!("data: {HEAD}\"choices\":[{{\"index\":0,\"delta\":{d},\"logprobs\":null,\"finish_reason\":{finish}}}],\"usage\":null}}\n\n").into_bytes()
}

/// The usage-only final chunk (`stream_options.include_usage`).
pub fn usage(prompt: u64, completion: u64) -> Vec<u8> {
    format!(
        "data: {HEAD}\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":{completion},\"total_tokens\":{},\"prompt_tokens_details\":{{\"cached_tokens\":0,\"audio_tokens\":0}},\"completion_tokens_details\":{{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}}}}\n\n",
        prompt + completion
    )
    .into_bytes()
}

/// The usage-only final chunk with `prompt_tokens_details.cached_tokens` (PROFILE §19).
pub fn usage_cached(prompt: u64, cached: u64, completion: u64) -> Vec<u8> {
    format!(
        "data: {HEAD}\"choices\":[],\"usage\":{{\"prompt_tokens\":{prompt},\"completion_tokens\":{completion},\"total_tokens\":{},\"prompt_tokens_details\":{{\"cached_tokens\":{cached},\"audio_tokens\":0}}}}}}\n\n",
        prompt + completion
    )
    .into_bytes()
}

/// A text answer `text` in one delta, `stop`, then `usage` (any usage chunk) and `[DONE]`.
pub fn text_with_usage(text: &str, usage: Vec<u8>) -> Vec<Vec<u8>> {
    let content = serde_json::to_string(text).expect("a string");
    vec![
        delta(r#"{"role":"assistant","content":""}"#, "null"),
        delta(&format!(r#"{{"content":{content}}}"#), "null"),
        delta("{}", r#""stop""#),
        usage,
        done(),
    ]
}

pub fn done() -> Vec<u8> {
    b"data: [DONE]\n\n".to_vec()
}

/// "Hello world" in two deltas, `stop`, usage 12/3, `[DONE]`.
pub fn text_stream() -> Vec<Vec<u8>> {
    vec![
        delta(
            r#"{"role":"assistant","content":"","refusal":null}"#,
            "null",
        ),
        delta(r#"{"content":"Hello"}"#, "null"),
        delta(r#"{"content":" world"}"#, "null"),
        delta("{}", r#""stop""#),
        usage(12, 3),
        done(),
    ]
}

/// One `Read` call whose arguments arrive in three pieces, `tool_calls`, usage 80/17.
pub fn one_tool_stream(call_id: &str, path: &str) -> Vec<Vec<u8>> {
    vec![
        delta(
            &format!(
                r#"{{"role":"assistant","content":null,"tool_calls":[{{"index":0,"id":"{call_id}","type":"function","function":{{"name":"Read","arguments":""}}}}],"refusal":null}}"#
            ),
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}"#,
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"file_path\":"}}]}"#,
            "null",
        ),
        delta(
            &format!(
                r#"{{"tool_calls":[{{"index":0,"function":{{"arguments":"\"{path}\"}}"}}}}]}}"#
            ),
            "null",
        ),
        delta("{}", r#""tool_calls""#),
        usage(80, 17),
        done(),
    ]
}

/// Text, then two parallel calls (`Bash` ls, `Read` b.txt) with arguments split across
/// chunks, `tool_calls`, usage 100/40.
pub fn parallel_stream() -> Vec<Vec<u8>> {
    vec![
        delta(r#"{"role":"assistant","content":"Checking both."}"#, "null"),
        delta(
            r#"{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"Bash","arguments":""}}]}"#,
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]}"#,
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":0,"function":{"arguments":"and\":\"ls\"}"}}]}"#,
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"Read","arguments":""}}]}"#,
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":1,"function":{"arguments":"{\"file_"}}]}"#,
            "null",
        ),
        delta(
            r#"{"tool_calls":[{"index":1,"function":{"arguments":"path\":\"b.txt\"}"}}]}"#,
            "null",
        ),
        delta("{}", r#""tool_calls""#),
        usage(100, 40),
        done(),
    ]
}

pub fn status(status: u16, headers: &[(&str, &str)], body: &str) -> Reply {
    Reply::Status {
        status,
        headers: headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        body: body.as_bytes().to_vec(),
    }
}

/// A port on 127.0.0.1 that refuses connections for as long as this value lives: a socket
/// bound to it that never listens, so the kernel answers every connection with a reset. A port
/// bound and released instead could be handed to another test's server by its `bind(0)` while
/// the retries of a test still run (seen once in CI: the fourth attempt reached a server).
pub struct RefusedPort {
    _bound: tokio::net::TcpSocket,
    pub port: u16,
}

pub fn refused_port() -> RefusedPort {
    let bound = tokio::net::TcpSocket::new_v4().expect("a socket");
    bound
        .bind("127.0.0.1:0".parse().expect("an address"))
        .expect("a loopback port");
    let port = bound.local_addr().expect("its address").port();
    RefusedPort {
        _bound: bound,
        port,
    }
}

impl Server {
    /// Starts the server on a runtime of its own thread (for tests that block on a child
    /// process). The thread lives as long as the test process.
    pub fn start_in_thread(replies: Vec<Reply>) -> Server {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                tx.send(Server::start(replies).await).unwrap();
                std::future::pending::<()>().await;
            });
        });
        rx.recv().unwrap()
    }
}
