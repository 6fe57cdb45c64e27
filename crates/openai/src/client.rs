//! The HTTP side of the providers: one Chat Completions call per [`ModelRequest`], with the
//! retry policy, the stream mapping and cancellation (PROFILE §14).
//!
//! Owns: the reqwest client (rustls with ring, HTTP/1.1, connect timeout 30 s, read timeout
//! 600 s without a byte, no redirects followed), sending the request, classifying connection failures, waiting
//! between retries, reading the body chunk by chunk into the SSE parser and the mapper, and
//! cancellation: when the caller's `cancel` future completes while the request is opening,
//! waiting for a retry or streaming, the response (and with it the connection) is dropped at
//! once, which closes the socket, and the call ends with [`ModelEvent::Cancelled`].
//!
//! Must never: put a key anywhere but a request header (marked sensitive); print a URL, a
//! header or a provider's text itself (WARN lines are built by `retry`; the provider's error
//! message travels in [`ModelEvent::Failed`] and the encoder validates every record).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use sha2::{Digest, Sha256};

use agentx_core::model::{BlobSource, ModelEvent, ModelRequest, NoBlobs};
use agentx_core::registry::{Pricing, Transport};
use agentx_wire::wire::output::AssistantError;

use super::endpoint::Endpoint;
use super::mapping::{self, Mapper, Step};
use super::media;
use super::request;
use super::retry::{self, Connection, Decision, Opening};
use super::sse;

/// Connect timeout (PROFILE §14).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Read timeout: this long without a byte ends the attempt (PROFILE §14).
pub const READ_TIMEOUT: Duration = Duration::from_secs(600);
/// The most of an error body read for its message.
const MAX_ERROR_BODY: usize = 64 << 10;

/// What a call reports: model events, and the stderr WARN lines of its retries.
#[derive(Clone, Debug, PartialEq)]
pub enum Report {
    /// A model event, in order.
    Event(ModelEvent),
    /// One stderr line, without its newline: `agentx: WARN provider retry N/3: <what>`.
    Warn(String),
}

/// The client could not be built (TLS setup, or the runtime of a blocking client).
#[derive(Debug)]
pub struct ClientError(String);

impl ClientError {
    pub(crate) fn runtime(e: std::io::Error) -> ClientError {
        ClientError(e.to_string())
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // reqwest's builder errors carry no URL or header.
        write!(f, "the HTTP client could not be built: {}", self.0)
    }
}

impl std::error::Error for ClientError {}

/// An HTTP client for one endpoint.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    endpoint: Endpoint,
    /// Where attachment bytes are read when a body is built (PROFILE §14).
    blobs: Arc<dyn BlobSource>,
    /// PROFILE §19: the operator's prices (`None`: every cost is unknown, WIRE-012).
    pricing: Option<Pricing>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client for `endpoint` with the PROFILE §14 timeouts.
    pub fn new(endpoint: Endpoint) -> Result<Client, ClientError> {
        Client::with_timeouts(endpoint, CONNECT_TIMEOUT, READ_TIMEOUT)
    }

    /// A client with other timeouts (tests).
    pub fn with_timeouts(
        endpoint: Endpoint,
        connect: Duration,
        read: Duration,
    ) -> Result<Client, ClientError> {
        // The process-wide rustls provider: ring (see Cargo.toml). Installing twice is a no-op
        // error we ignore.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(connect)
            .read_timeout(read)
            // PROFILE §14: redirects are never followed, so a key header (`api-key`, which
            // reqwest does not know to strip, or `Authorization`) never reaches another
            // location; a 3xx answer is a failure of the request (`retry::status_category`).
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("agentx/", env!("CARGO_PKG_VERSION")));
        if Transport::of(endpoint.expose_url().as_bytes()) == Transport::LoopbackHttp {
            // A local server is reached directly, never through an environment proxy.
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| ClientError(e.to_string()))?;
        Ok(Client {
            http,
            endpoint,
            blobs: Arc::new(NoBlobs),
            pricing: None,
        })
    }

    /// The same client reading attachment blobs from `blobs` (without one, every blob is
    /// unavailable and a prompt with attachments fails, PROFILE §14).
    pub fn with_blobs(mut self, blobs: Arc<dyn BlobSource>) -> Client {
        self.blobs = blobs;
        self
    }

    /// The same client pricing every completed request with the operator's table (PROFILE §19).
    pub fn with_pricing(mut self, pricing: Option<Pricing>) -> Client {
        self.pricing = pricing;
        self
    }

    /// Runs one model call: reports every event of it (ending with exactly one of
    /// `MessageStop`, `Failed` or `Cancelled`) and every retry's WARN line to `sink`.
    /// `cancel` completing is the caller's interrupt. Returns [`CallEnd::BodyLeftOpen`] when
    /// the message ended before its response did (a response past the mapper's bounds): the
    /// caller closes that connection (a blocking client's runtime does not drive it after the
    /// call).
    pub async fn call<C: Future<Output = ()>>(
        &self,
        request: &ModelRequest,
        cancel: C,
        sink: &mut dyn FnMut(Report),
    ) -> CallEnd {
        // One encoded copy of the media, shared by every attempt (`Bytes` clones by count).
        let (body, media_parts) = match request::body(request, self.blobs.as_ref()) {
            Ok(b) => (bytes::Bytes::from(b.bytes), b.media),
            Err(e) => {
                // PROFILE §14: `attachment <id> is unavailable`, or a bad tool schema.
                sink(Report::Event(ModelEvent::Failed {
                    category: AssistantError::InvalidRequest,
                    message: e.message(),
                }));
                return CallEnd::Closed;
            }
        };
        let names = super::names::FunctionNames::of(&request.tools);
        let mut cancel = std::pin::pin!(cancel);
        let mut retries = 0;
        loop {
            let (failure, message) = match self
                .attempt(&body, &names, retries, cancel.as_mut(), sink)
                .await
            {
                Attempt::Ended { left_open } => {
                    return match left_open {
                        true => CallEnd::BodyLeftOpen,
                        false => CallEnd::Closed,
                    }
                }
                Attempt::Cancelled => {
                    sink(Report::Event(ModelEvent::Cancelled));
                    return CallEnd::Closed;
                }
                Attempt::Opening(failure, message) => (failure, message),
                Attempt::ContextTooLong(message) => {
                    let message = message.filter(|m| media_parts == 0 || !media::may_echo_media(m));
                    sink(Report::Event(ModelEvent::ContextLengthExceeded { message }));
                    return CallEnd::Closed;
                }
            };
            match retry::decide(&failure, retries, SystemTime::now()) {
                Decision::Retry { wait, warn } => {
                    sink(Report::Warn(warn));
                    retries += 1;
                    // PROFILE §14: an interrupt during a retry wait counts as opening.
                    tokio::select! {
                        biased;
                        _ = cancel.as_mut() => {
                            sink(Report::Event(ModelEvent::Cancelled));
                            return CallEnd::Closed;
                        }
                        _ = tokio::time::sleep(wait) => {}
                    }
                }
                Decision::GiveUp(category) => {
                    // WIRE-022: a provider echoing the request's media is not quoted.
                    let message = message.filter(|m| media_parts == 0 || !media::may_echo_media(m));
                    sink(Report::Event(ModelEvent::Failed { category, message }));
                    return CallEnd::Closed;
                }
            }
        }
    }

    async fn attempt<C: Future<Output = ()>>(
        &self,
        body: &bytes::Bytes,
        names: &super::names::FunctionNames,
        retries_done: u32,
        mut cancel: Pin<&mut C>,
        sink: &mut dyn FnMut(Report),
    ) -> Attempt {
        let mut builder = self
            .http
            .post(self.endpoint.expose_url())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body.clone());
        for (name, value) in self.endpoint.expose_headers() {
            let (Ok(name), Ok(mut value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_bytes(value),
            ) else {
                // Endpoint checked both at construction; unreachable in practice.
                return Attempt::Opening(Opening::Connection(Connection::Failed), None);
            };
            value.set_sensitive(true);
            builder = builder.header(name, value);
        }
        let sent = tokio::select! {
            biased;
            _ = cancel.as_mut() => return Attempt::Cancelled,
            r = builder.send() => r,
        };
        let mut response = match sent {
            Ok(r) => r,
            Err(e) => return Attempt::Opening(Opening::Connection(connection(&e)), None),
        };
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .map(|v| v.as_bytes().to_vec());
            let failure = Opening::Status {
                status: status.as_u16(),
                retry_after,
            };
            // The message is read only when the failure is final (no retry left or none due).
            let message = match retry::decide(&failure, retries_done, SystemTime::now()) {
                Decision::GiveUp(_) => {
                    let mut body = Vec::new();
                    loop {
                        let next = tokio::select! {
                            biased;
                            _ = cancel.as_mut() => return Attempt::Cancelled,
                            c = response.chunk() => c,
                        };
                        match next {
                            Ok(Some(bytes)) if body.len() + bytes.len() <= MAX_ERROR_BODY => {
                                body.extend_from_slice(&bytes)
                            }
                            // Too long, broken or done: what we have is all we use.
                            Ok(Some(_)) | Err(_) => break,
                            Ok(None) => break,
                        }
                    }
                    // PROFILE §19: a 400 that says the context is too long is its own answer.
                    if status.as_u16() == 400 && mapping::context_length_exceeded(&body) {
                        return Attempt::ContextTooLong(mapping::error_body_message(&body));
                    }
                    mapping::error_body_message(&body)
                }
                Decision::Retry { .. } => None,
            };
            return Attempt::Opening(failure, message);
        }

        let mut parser = sse::Parser::new();
        let mut mapper = Mapper::new(mint_message_id())
            .with_names(names.clone())
            .with_pricing(self.pricing);
        let mut events = Vec::new();
        let mut out = Vec::new();
        let mut got_byte = false;
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.as_mut() => return Attempt::Cancelled,
                c = response.chunk() => c,
            };
            let step = match next {
                Ok(Some(bytes)) => {
                    got_byte |= !bytes.is_empty();
                    if parser.feed(&bytes, &mut events).is_err() {
                        mapper.end_of_stream(&mut out)
                    } else {
                        let mut step = Step::Continue;
                        for e in events.drain(..) {
                            step = mapper.event(&e, &mut out);
                            if step == Step::Finished {
                                break;
                            }
                        }
                        events.clear();
                        step
                    }
                }
                Ok(None) => mapper.end_of_stream(&mut out),
                // Before the first body byte a broken response is an opening failure.
                Err(e) if !got_byte => {
                    return Attempt::Opening(Opening::Connection(connection(&e)), None)
                }
                Err(_) => mapper.end_of_stream(&mut out),
            };
            for e in out.drain(..) {
                sink(Report::Event(e));
            }
            if step == Step::Finished {
                return Attempt::Ended {
                    left_open: mapper.was_cut(),
                };
            }
        }
    }
}

/// How a call left its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallEnd {
    /// Its response was read to the end, or its connection is gone.
    Closed,
    /// The message ended before the response did: the connection is still open mid-body.
    BodyLeftOpen,
}

enum Attempt {
    /// The call ended with a terminal event (already reported); `left_open` when the response
    /// went on past it.
    Ended {
        left_open: bool,
    },
    Cancelled,
    /// A failure before the first body byte, with the provider's message when one was read.
    Opening(Opening, Option<String>),
    /// PROFILE §19: HTTP 400 `context_length_exceeded` (never retried), with its message.
    ContextTooLong(Option<String>),
}

/// The WARN word for a transport error, from its source chain.
pub fn connection(e: &reqwest::Error) -> Connection {
    if e.is_timeout() {
        return Connection::Timeout;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = source {
        if s.is::<rustls::Error>() {
            return Connection::Tls;
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            // hyper-util nests the TLS error in two io::Errors (Other around InvalidData), and
            // io::Error::source skips the inner one: look through every level.
            let mut inner = io.get_ref();
            while let Some(i) = inner {
                if i.is::<rustls::Error>() {
                    return Connection::Tls;
                }
                inner = i
                    .downcast_ref::<std::io::Error>()
                    .and_then(std::io::Error::get_ref);
            }
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return Connection::Refused,
                std::io::ErrorKind::ConnectionReset
                | std::io::ErrorKind::ConnectionAborted
                | std::io::ErrorKind::BrokenPipe
                | std::io::ErrorKind::UnexpectedEof => return Connection::Reset,
                std::io::ErrorKind::TimedOut => return Connection::Timeout,
                _ => {}
            }
        }
        // hyper's "connection closed before message completed" is not an io::Error.
        if s.to_string().contains("closed before message completed") {
            return Connection::Reset;
        }
        source = s.source();
    }
    Connection::Failed
}

/// A fresh `message.id` (agentx mints it per response, PROFILE §14): `msg_` and 24 hex
/// digits of SHA-256 over the time, the process id and a counter.
pub fn mint_message_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut h = Sha256::new();
    h.update(nanos.to_le_bytes());
    h.update(std::process::id().to_le_bytes());
    h.update(n.to_le_bytes());
    let digest = h.finalize();
    let mut id = String::with_capacity(28);
    id.push_str("msg_");
    for b in &digest[..12] {
        id.push_str(&format!("{b:02x}"));
    }
    id
}
