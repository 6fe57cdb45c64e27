//! What the two network transports share (PROFILE §18 "http and sse"): the HTTP client, the
//! outgoing queue behind [`Transport`], the bounded readers of a JSON body and of an event
//! stream (our SSE parser, `agentx_openai::sse`), the end of a connection, and the [`Link`]
//! that runs one server's connection on a thread of its own.
//!
//! The client is reqwest with rustls, as the providers' (PROFILE §14): TLS everywhere but
//! loopback (the configuration checks the URL), the connect timeout `MCP_TIMEOUT`, the
//! config's headers on every request with their values marked sensitive (never in a Debug or
//! an error), and a redirect followed only within the same origin (scheme, host and port), at
//! most 5 of them, so the headers never leave it; a redirect elsewhere is a failure.
//!
//! Each server's connection is one thread with a current-thread tokio runtime: the session's
//! driver stays thread-based and blocking ([`Rpc`] waits on channels), and a server that
//! stalls holds only its own thread.
//!
//! Must never: put a header value, the URL or a response body in an error text; keep more than
//! [`MAX_MESSAGE`] bytes of one message or [`MAX_QUEUED`] outgoing messages; outlive
//! [`Link::stop`] by more than [`CLOSE_WAIT`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentx_openai::sse;
use agentx_wire::json;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Client, Response, Url};
use tokio::sync::{mpsc, watch};

use super::rpc::{Rpc, Transport};

/// One message from a server is at most this long (PROFILE §18 "Limits").
pub const MAX_MESSAGE: usize = super::stdio::MAX_MESSAGE;
/// More than this many bytes of events that are not JSON-RPC fail the server (as stdout
/// lines that are not JSON do for stdio).
pub const MAX_SKIPPED: usize = super::stdio::MAX_SKIPPED;
/// Outgoing messages waiting for their POST; one more fails at once.
pub const MAX_QUEUED: usize = 256;
/// Same-origin redirects followed for one request.
pub const MAX_REDIRECTS: usize = 5;
/// How long closing waits for the session's DELETE (streamable HTTP) and the thread.
pub const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// Room in a parser line for the field's name and separator (`data: `).
const LINE_SLACK: usize = 16;
/// The most of an error body read (and dropped) before the connection is reused.
const MAX_ERROR_BODY: usize = 64 << 10;

/// Which network transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Streamable HTTP (`"type":"http"`).
    Streamable,
    /// HTTP+SSE (`"type":"sse"`).
    Sse,
}

/// How a connection ended, reported once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Status `failed` with this one-line error.
    Failed(String),
    /// HTTP 401: status `needs-auth` (OAuth flows are later work).
    NeedsAuth(String),
}

impl End {
    /// The one-line text.
    pub fn text(&self) -> &str {
        match self {
            End::Failed(t) | End::NeedsAuth(t) => t,
        }
    }
}

/// Called once with how a connection ended.
pub type OnEnd = Box<dyn FnOnce(End) + Send>;

/// The `needs-auth` error text.
pub const NEEDS_AUTH: &str = "HTTP 401: the server asks for authorization";

/// The end of a connection for an HTTP status that is not a success.
pub fn status_end(status: reqwest::StatusCode) -> End {
    match status.as_u16() {
        401 => End::NeedsAuth(NEEDS_AUTH.into()),
        code @ 300..=399 => End::Failed(format!(
            "HTTP {code}: a redirect to another origin is not followed"
        )),
        code => End::Failed(format!("HTTP {code}")),
    }
}

/// A transport failure in words (never the URL reqwest's own text carries).
pub fn unreachable(e: &reqwest::Error) -> String {
    format!(
        "the server is unreachable: {}",
        agentx_openai::client::connection(e).as_str()
    )
}

/// The client for `url`'s server.
pub fn client(url: &Url, connect_timeout: Duration) -> Result<Client, String> {
    // The process-wide rustls provider: ring, as the providers'.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first().map(Url::origin);
        if attempt.previous().len() > MAX_REDIRECTS || first != Some(attempt.url().origin()) {
            // PROFILE §18: the 3xx answer itself comes back, a failure.
            attempt.stop()
        } else {
            attempt.follow()
        }
    });
    let mut builder = Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(policy)
        .user_agent(concat!("agentx/", env!("CARGO_PKG_VERSION")));
    let loopback = match url.host_str() {
        Some("localhost") => true,
        Some(h) => h
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
        None => false,
    };
    if loopback {
        // A local server is reached directly, never through an environment proxy.
        builder = builder.no_proxy();
    }
    builder
        .build()
        .map_err(|_| "the HTTP client could not be built".to_string())
}

/// The config's headers, every value marked sensitive; an invalid one is named (never its
/// value).
pub fn headers(config: &[(String, String)]) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in config {
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("header {name:?} is not a valid HTTP header name"))?;
        let mut v = HeaderValue::from_str(value)
            .map_err(|_| format!("the value of header {name:?} is not a valid HTTP header"))?;
        v.set_sensitive(true);
        map.append(n, v);
    }
    Ok(map)
}

/// The outgoing queue: what [`Rpc`] sends goes to the connection's thread.
pub struct Queue(pub mpsc::Sender<Vec<u8>>);

/// A network server's parts before its transport runs: the parsed url, the connection, the
/// [`Rpc`] the handshake goes over, and the messages it queued for the transport.
pub struct Opened {
    pub url: Url,
    pub conn: Arc<Conn>,
    pub rpc: Arc<Rpc>,
    pub queued: mpsc::Receiver<Vec<u8>>,
}

/// What both network transports do first: parse `url`, build its client and `headers`
/// (refused when one is not a valid header), and join an [`Rpc`] to a [`Conn`] through a
/// queue of [`MAX_QUEUED`] messages.
pub fn open(
    url: &str,
    headers: &[(String, String)],
    connect_timeout: Duration,
    roots: Vec<String>,
    on_end: OnEnd,
) -> Result<Opened, String> {
    let url = Url::parse(url).map_err(|_| "the url is not valid".to_string())?;
    let client = client(&url, connect_timeout)?;
    let headers = self::headers(headers)?;
    let (tx, queued) = mpsc::channel(MAX_QUEUED);
    let rpc = Rpc::new(Box::new(Queue(tx)), roots);
    let conn = Conn::new(rpc.clone(), client, headers, connect_timeout, on_end);
    Ok(Opened {
        url,
        conn,
        rpc,
        queued,
    })
}

impl Transport for Queue {
    fn send(&self, message: &[u8]) -> Result<(), String> {
        self.0.try_send(message.to_vec()).map_err(|e| match e {
            mpsc::error::TrySendError::Full(_) => {
                format!("more than {MAX_QUEUED} messages wait for the server")
            }
            mpsc::error::TrySendError::Closed(_) => "the connection is closed".to_string(),
        })
    }
}

/// The id (when it is a request) and the method of an outgoing message.
pub fn peek(message: &[u8]) -> (Option<u64>, String) {
    let Ok(doc) = json::parse(message) else {
        return (None, String::new());
    };
    let root = doc.root();
    let Some(obj) = root.as_object() else {
        return (None, String::new());
    };
    let method = obj
        .get("method")
        .and_then(|m| m.as_str())
        .map(|m| m.decode().into_owned())
        .unwrap_or_default();
    let id = obj
        .get("id")
        .and_then(|v| v.as_number())
        .and_then(|n| n.as_u64())
        .filter(|_| !method.is_empty());
    (id, method)
}

/// `result.protocolVersion` of an `initialize` answer.
pub fn protocol_version(message: &[u8]) -> Option<String> {
    let doc = json::parse(message).ok()?;
    let root = doc.root();
    let v = root
        .as_object()?
        .get("result")?
        .as_object()?
        .get("protocolVersion")?
        .as_str()?
        .decode()
        .into_owned();
    Some(v)
}

/// One connection's shared state, used by its tasks.
pub struct Conn {
    /// The connection's JSON-RPC.
    pub rpc: Arc<Rpc>,
    /// The HTTP client.
    pub client: Client,
    /// The config's headers.
    pub headers: HeaderMap,
    /// How long opening a request may take before its answer starts.
    pub connect_timeout: Duration,
    on_end: Mutex<Option<OnEnd>>,
    skipped: AtomicUsize,
    ended: watch::Sender<bool>,
}

impl Conn {
    /// A connection reporting its end to `on_end`.
    pub fn new(
        rpc: Arc<Rpc>,
        client: Client,
        headers: HeaderMap,
        connect_timeout: Duration,
        on_end: OnEnd,
    ) -> Arc<Conn> {
        Arc::new(Conn {
            rpc,
            client,
            headers,
            connect_timeout,
            on_end: Mutex::new(Some(on_end)),
            skipped: AtomicUsize::new(0),
            ended: watch::Sender::new(false),
        })
    }

    /// The connection ended: reported once, then every waiting request fails.
    pub fn end(&self, end: End) {
        let f = self.on_end.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(f) = f {
            let why = end.text().to_string();
            f(end);
            self.rpc.close(&why);
            self.ended.send_replace(true);
        }
    }

    /// Whether the connection ended.
    pub fn is_ended(&self) -> bool {
        *self.ended.borrow()
    }

    /// Resolves once the connection ended.
    pub async fn ended(&self) {
        let mut rx = self.ended.subscribe();
        let _ = rx.wait_for(|e| *e).await;
    }

    /// Request `id` fails with `why` (a JSON-RPC error its waiter sees; ignored when it was
    /// answered already).
    pub fn fail(&self, id: u64, why: &str) {
        let mut m = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
        json::write_u64(&mut m, id);
        m.extend_from_slice(b",\"error\":{\"code\":-32000,\"message\":");
        json::write_str(&mut m, why);
        m.extend_from_slice(b"}}");
        self.rpc.receive(&m);
    }

    /// One message from the server; more than [`MAX_SKIPPED`] bytes that are not JSON-RPC
    /// end the connection.
    pub fn deliver(&self, message: &[u8]) {
        if !self.rpc.receive(message) {
            let n = self.skipped.fetch_add(message.len() + 1, Ordering::Relaxed);
            if n + message.len() + 1 > MAX_SKIPPED {
                self.end(End::Failed("the event stream is not JSON-RPC".into()));
            }
        }
    }

    /// Reads an event stream, handing each `message` event's data to `each`, until it ends;
    /// `Err` is why it broke. An event over [`MAX_MESSAGE`] ends the connection.
    pub async fn read_events(
        &self,
        resp: &mut Response,
        mut each: impl FnMut(sse::Event),
    ) -> Result<(), String> {
        // The parser bounds a line too, and a line holds its field's name (`data: `) before
        // the message: the slack lets a message of exactly MAX_MESSAGE bytes through, and the
        // event's own length is checked below.
        let mut parser = sse::Parser::with_limit(MAX_MESSAGE + LINE_SLACK);
        let mut events = Vec::new();
        let too_long = || {
            let why = format!("a message is over {MAX_MESSAGE} bytes");
            self.end(End::Failed(why.clone()));
            Err(why)
        };
        loop {
            match resp.chunk().await {
                Ok(Some(bytes)) => {
                    if parser.feed(&bytes, &mut events).is_err() {
                        return too_long();
                    }
                    for e in events.drain(..) {
                        if e.data.len() > MAX_MESSAGE {
                            return too_long();
                        }
                        each(e);
                    }
                }
                Ok(None) => return Ok(()),
                Err(e) => return Err(lost(&e)),
            }
        }
    }

    /// Reads a JSON body of at most [`MAX_MESSAGE`] bytes; a longer one ends the connection.
    pub async fn read_json(&self, resp: &mut Response) -> Result<Vec<u8>, String> {
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(bytes)) => {
                    if body.len() + bytes.len() > MAX_MESSAGE {
                        let why = format!("a message is over {MAX_MESSAGE} bytes");
                        self.end(End::Failed(why.clone()));
                        return Err(why);
                    }
                    body.extend_from_slice(&bytes);
                }
                Ok(None) => return Ok(body),
                Err(e) => return Err(lost(&e)),
            }
        }
    }
}

/// Why a body broke off.
fn lost(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "the connection timed out".into()
    } else {
        "the connection was lost".into()
    }
}

/// Reads and drops at most 64 KiB of an answer that is not used.
pub async fn drain(mut resp: Response) {
    let mut n = 0;
    while let Ok(Some(b)) = resp.chunk().await {
        n += b.len();
        if n > MAX_ERROR_BODY {
            break;
        }
    }
}

/// The media type of an answer, lowercased, without parameters.
pub fn media_type(resp: &Response) -> String {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// True for an event that carries a JSON-RPC message (`message`, the default type).
pub fn is_message(e: &sse::Event) -> bool {
    e.name.is_empty() || e.name == "message"
}

/// One server's connection thread.
pub struct Link {
    stop: watch::Sender<bool>,
    done: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

impl Link {
    /// Runs `drive` on a thread of its own with a current-thread runtime; `drive` gets the
    /// stop signal and must return soon after it (closing takes at most [`CLOSE_WAIT`]).
    pub fn start<F, Fut>(drive: F) -> Result<Arc<Link>, String>
    where
        F: FnOnce(watch::Receiver<bool>) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = ()>,
    {
        let (stop, stop_rx) = watch::channel(false);
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|_| "the HTTP runtime could not start".to_string())?;
        std::thread::Builder::new()
            .name("agentx-mcp-http".into())
            .spawn(move || {
                let _done = done_tx;
                runtime.block_on(drive(stop_rx));
                // Every task (and with it every socket) goes with the runtime.
                drop(runtime);
            })
            .map_err(|_| "the connection thread could not start".to_string())?;
        Ok(Arc::new(Link {
            stop,
            done: Mutex::new(Some(done_rx)),
        }))
    }

    /// Asks the connection to close (a streamable-HTTP session is deleted).
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Waits until the connection's thread ended, at most [`CLOSE_WAIT`] and a little.
    pub fn join(&self) {
        let rx = self.done.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(rx) = rx {
            let _ = rx.recv_timeout(CLOSE_WAIT + Duration::from_millis(500));
        }
    }
}

/// Waits until `stop` is signalled.
pub async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_header_is_named_and_its_value_never_shown() {
        let bad_value = headers(&[("X-Api-Key".into(), "line\nbreak-secret".into())]);
        assert_eq!(
            bad_value.unwrap_err(),
            "the value of header \"X-Api-Key\" is not a valid HTTP header"
        );
        let bad_name = headers(&[("X Key".into(), "v".into())]);
        assert_eq!(
            bad_name.unwrap_err(),
            "header \"X Key\" is not a valid HTTP header name"
        );
        let ok = headers(&[("Authorization".into(), "Bearer abcdefgh".into())]).unwrap();
        let v = ok.get("authorization").unwrap();
        assert!(v.is_sensitive());
        assert!(!format!("{ok:?}").contains("abcdefgh"));
    }

    #[test]
    fn the_queue_holds_256_messages_and_refuses_one_more() {
        let (tx, _rx) = mpsc::channel(MAX_QUEUED);
        let q = Queue(tx);
        for _ in 0..MAX_QUEUED {
            q.send(b"{}").unwrap();
        }
        assert_eq!(
            q.send(b"{}").unwrap_err(),
            "more than 256 messages wait for the server"
        );
    }

    #[test]
    fn events_that_are_not_json_rpc_end_the_connection_one_byte_past_64_kib() {
        let (tx, _rx) = mpsc::channel(MAX_QUEUED);
        let rpc = Rpc::new(Box::new(Queue(tx)), vec![]);
        let ended: Arc<Mutex<Option<End>>> = Default::default();
        let seen = ended.clone();
        let conn = Conn::new(
            rpc,
            client(
                &Url::parse("http://127.0.0.1:9/").unwrap(),
                Duration::from_secs(1),
            )
            .unwrap(),
            HeaderMap::new(),
            Duration::from_secs(1),
            Box::new(move |e| *seen.lock().unwrap() = Some(e)),
        );
        // Each message counts its bytes and one for its end, as a stdout line does.
        let line = vec![b'x'; 1023];
        for _ in 0..MAX_SKIPPED / 1024 {
            conn.deliver(&line);
        }
        assert!(!conn.is_ended(), "64 KiB of noise is still taken");
        conn.deliver(b"");
        assert!(conn.is_ended());
        assert_eq!(
            *ended.lock().unwrap(),
            Some(End::Failed("the event stream is not JSON-RPC".into()))
        );
    }

    #[test]
    fn statuses_end_the_connection_in_words() {
        assert_eq!(
            status_end(reqwest::StatusCode::UNAUTHORIZED),
            End::NeedsAuth(NEEDS_AUTH.into())
        );
        assert_eq!(
            status_end(reqwest::StatusCode::TEMPORARY_REDIRECT),
            End::Failed("HTTP 307: a redirect to another origin is not followed".into())
        );
        assert_eq!(
            status_end(reqwest::StatusCode::BAD_GATEWAY),
            End::Failed("HTTP 502".into())
        );
    }

    #[test]
    fn peek_finds_a_request_id_and_the_initialize_version() {
        assert_eq!(
            peek(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}"#),
            (Some(7), "tools/call".to_string())
        );
        // A response to the server carries an id but no method: not a request of ours.
        assert_eq!(
            peek(br#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            (None, String::new())
        );
        assert_eq!(
            peek(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#),
            (None, "notifications/cancelled".to_string())
        );
        assert_eq!(
            protocol_version(
                br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#
            ),
            Some("2025-06-18".to_string())
        );
        assert_eq!(protocol_version(b"not json"), None);
    }
}
