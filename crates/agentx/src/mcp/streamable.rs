//! The streamable HTTP transport (PROFILE §18 `"type":"http"`; MCP 2025-11-25 "Streamable
//! HTTP"): every message agentx sends is a POST to the URL with `Accept: application/json,
//! text/event-stream`; a request's answer is one JSON body or an event stream that carries
//! it (with any request or notification the server sends meanwhile); a notification or a
//! response is answered 202. The `Mcp-Session-Id` of the `initialize` answer is kept and sent
//! back, with `MCP-Protocol-Version`, on every later request; once initialized, the GET
//! stream is opened for the server's own notifications and requests when the server offers
//! it (a 405 says it does not); at close the session is deleted (DELETE, at most 2 s).
//!
//! Statuses: a 401 anywhere is `needs-auth`; a server that cannot be reached, a 404 for the
//! session, or a message over 8,388,608 bytes fails the server; any other failure of one POST
//! fails that request only (`MCP error: HTTP 500`), and a body that breaks off fails its
//! request (`the connection was lost`).
//!
//! Why not rmcp (the official Rust SDK, evaluated at 3.11.0): its streamable-HTTP client is
//! a worker of its own service layer that owns the JSON-RPC side (request ids, correlation,
//! cancellation) which [`Rpc`] already owns for every transport, and it carries each message
//! through its typed serde model, which reorders a result's members (`structuredContent`
//! reaches `tool_use_result` sorted), drops members it does not know and accepts duplicates our
//! strict parser refuses. What it would add over this file (re-initializing an expired
//! session, resuming a stream with `Last-Event-ID`) PROFILE §18 does not ask for; its OAuth
//! support may be taken in when `needs-auth` gets its flows.
//!
//! Must never: send a request before the `notifications/initialized` that precedes it (the
//! messages that need no answer are posted in order before anything later), or keep a
//! session open past [`Link::stop`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{StatusCode, Url};
use tokio::sync::{mpsc, watch};

use super::http::{self, Conn, End, Link, Opened};
use super::rpc::Rpc;

const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// The session state every POST reads.
#[derive(Default)]
struct Session {
    id: Option<HeaderValue>,
    version: Option<HeaderValue>,
}

struct Streamable {
    conn: Arc<Conn>,
    url: Url,
    session: Mutex<Session>,
}

/// Connects to `url` (the handshake is the caller's, over the returned [`Rpc`]); `on_end` is
/// called once when the connection ends.
pub fn connect(
    url: &str,
    headers: &[(String, String)],
    connect_timeout: Duration,
    roots: Vec<String>,
    on_end: http::OnEnd,
) -> Result<(Arc<Link>, Arc<Rpc>), String> {
    let Opened {
        url,
        conn,
        rpc,
        queued: rx,
    } = http::open(url, headers, connect_timeout, roots, on_end)?;
    let s = Arc::new(Streamable {
        conn,
        url,
        session: Mutex::new(Session::default()),
    });
    let link = Link::start(move |stop| s.run(rx, stop))?;
    Ok((link, rpc))
}

impl Streamable {
    async fn run(
        self: Arc<Self>,
        mut rx: mpsc::Receiver<Vec<u8>>,
        mut stop: watch::Receiver<bool>,
    ) {
        loop {
            tokio::select! {
                // What agentx queued goes first (a `notifications/cancelled` before the close).
                biased;
                m = rx.recv() => match m {
                    Some(m) => {
                        let (id, method) = http::peek(&m);
                        match id {
                            // A request's answer may take as long as its call: its own task.
                            Some(id) => {
                                tokio::spawn(self.clone().post_request(m, id, method));
                            }
                            // A notification or a response: posted before anything later.
                            None => {
                                let posted = tokio::time::timeout(
                                    self.conn.connect_timeout,
                                    self.clone().post_other(m, method),
                                );
                                tokio::pin!(posted);
                                tokio::select! {
                                    _ = &mut posted => {}
                                    _ = http::stopped(&mut stop) => {
                                        let _ = tokio::time::timeout(http::CLOSE_WAIT, posted).await;
                                        break;
                                    }
                                }
                            }
                        }
                    }
                    None => break,
                },
                _ = http::stopped(&mut stop) => break,
                _ = self.conn.ended() => {
                    // Wait for the close (the session may still be deleted).
                    http::stopped(&mut stop).await;
                    break;
                }
            }
        }
        // PROFILE §18: the notifications queued before the close (SIGTERM's
        // `notifications/cancelled`) still go, within the close's bound.
        let deadline = tokio::time::Instant::now() + http::CLOSE_WAIT;
        while let Ok(m) = rx.try_recv() {
            let (id, method) = http::peek(&m);
            if id.is_none() && !self.conn.is_ended() {
                let _ = tokio::time::timeout_at(deadline, self.clone().post_other(m, method)).await;
            }
        }
        self.delete().await;
    }

    /// A POST of `message` with the session's headers.
    fn post(&self, message: Vec<u8>) -> reqwest::RequestBuilder {
        let mut req = self
            .conn
            .client
            .post(self.url.clone())
            .headers(self.conn.headers.clone())
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json");
        let s = self.session.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = &s.id {
            req = req.header(SESSION_ID, id.clone());
        }
        if let Some(v) = &s.version {
            req = req.header(PROTOCOL_VERSION, v.clone());
        }
        req.body(message)
    }

    /// A status that is not a success: the connection ends (401, the session gone) or `Err`
    /// with the request's error.
    fn refused(&self, status: StatusCode) -> Result<(), String> {
        let has_session = self
            .session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .id
            .is_some();
        match status.as_u16() {
            401 => {
                self.conn.end(End::NeedsAuth(http::NEEDS_AUTH.into()));
                Ok(())
            }
            404 if has_session => {
                self.conn
                    .end(End::Failed("HTTP 404: the session expired".into()));
                Ok(())
            }
            _ => Err(http::status_end(status).text().to_string()),
        }
    }

    async fn post_other(self: Arc<Self>, message: Vec<u8>, method: String) {
        let resp = match self.post(message).send().await {
            Ok(r) => r,
            Err(e) => return self.conn.end(End::Failed(http::unreachable(&e))),
        };
        let status = resp.status();
        if !status.is_success() {
            let _ = self.refused(status);
            return http::drain(resp).await;
        }
        http::drain(resp).await;
        if method == "notifications/initialized" {
            tokio::spawn(self.clone().listen());
        }
    }

    async fn post_request(self: Arc<Self>, message: Vec<u8>, id: u64, method: String) {
        let initialize = method == "initialize";
        let mut resp = match self.post(message).send().await {
            Ok(r) => r,
            Err(e) => return self.conn.end(End::Failed(http::unreachable(&e))),
        };
        let status = resp.status();
        if !status.is_success() {
            if let Err(why) = self.refused(status) {
                self.conn.fail(id, &why);
            }
            return http::drain(resp).await;
        }
        if initialize {
            // PROFILE §18: the session id is kept and sent back.
            let sid = resp.headers().get(SESSION_ID).cloned();
            self.session.lock().unwrap_or_else(|e| e.into_inner()).id = sid;
        }
        let deliver = |m: &[u8]| {
            if initialize {
                if let Some(v) =
                    http::protocol_version(m).and_then(|v| HeaderValue::from_str(&v).ok())
                {
                    self.session
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .version = Some(v);
                }
            }
            self.conn.deliver(m);
        };
        let read = match http::media_type(&resp).as_str() {
            "application/json" => self.conn.read_json(&mut resp).await.map(|b| deliver(&b)),
            "text/event-stream" => {
                self.conn
                    .read_events(&mut resp, |e| {
                        if http::is_message(&e) {
                            deliver(&e.data);
                        }
                    })
                    .await
            }
            _ if status == StatusCode::ACCEPTED => Ok(()),
            _ => Err("the answer is neither JSON nor an event stream".into()),
        };
        // Ignored when the answer came.
        self.conn.fail(
            id,
            &read
                .err()
                .unwrap_or_else(|| "the server answered without a result".into()),
        );
    }

    /// The GET stream for the server's own messages, when it offers one.
    async fn listen(self: Arc<Self>) {
        let mut req = self
            .conn
            .client
            .get(self.url.clone())
            .headers(self.conn.headers.clone())
            .header(ACCEPT, "text/event-stream");
        {
            let s = self.session.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(id) = &s.id {
                req = req.header(SESSION_ID, id.clone());
            }
            if let Some(v) = &s.version {
                req = req.header(PROTOCOL_VERSION, v.clone());
            }
        }
        let Ok(mut resp) = req.send().await else {
            return;
        };
        if resp.status() == StatusCode::UNAUTHORIZED {
            return self.conn.end(End::NeedsAuth(http::NEEDS_AUTH.into()));
        }
        if !resp.status().is_success() || http::media_type(&resp) != "text/event-stream" {
            // 405: the server offers no stream.
            return http::drain(resp).await;
        }
        let conn = self.conn.clone();
        let _ = conn
            .read_events(&mut resp, |e| {
                if http::is_message(&e) {
                    conn.deliver(&e.data);
                }
            })
            .await;
    }

    /// PROFILE §18: the session is deleted on exit.
    async fn delete(&self) {
        let (id, version) = {
            let mut s = self.session.lock().unwrap_or_else(|e| e.into_inner());
            (s.id.take(), s.version.clone())
        };
        let Some(id) = id else {
            return;
        };
        let mut req = self
            .conn
            .client
            .delete(self.url.clone())
            .headers(self.conn.headers.clone())
            .header(SESSION_ID, id)
            .timeout(http::CLOSE_WAIT);
        if let Some(v) = version {
            req = req.header(PROTOCOL_VERSION, v);
        }
        let _ = tokio::time::timeout(http::CLOSE_WAIT, req.send()).await;
    }
}
