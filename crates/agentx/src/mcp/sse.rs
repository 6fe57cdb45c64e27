//! The HTTP+SSE transport (PROFILE §18 `"type":"sse"`; MCP 2024-11-05 "HTTP with SSE"), which
//! rmcp no longer ships: a GET of the URL opens the event stream; its first `endpoint` event
//! names the URI that every message agentx sends is POSTed to (resolved against the URL and
//! required to be of its origin, so the headers never leave it); the server's answers,
//! requests and notifications come as `message` events on the stream. Parsed by our SSE
//! parser (`agentx_openai::sse`, the providers' own) with the 8,388,608-byte message limit.
//!
//! Statuses: a 401 (of the GET or a POST) is `needs-auth`; any other failure of the GET, an
//! endpoint elsewhere, the stream's end, or a server that cannot be reached fails the server;
//! any other failure of one POST fails that request only. Closing drops the stream.
//!
//! Must never: POST anywhere but the endpoint's origin, or reorder what agentx sends (the
//! POSTs go one at a time, in order: each is answered at once, 202, its result coming on the
//! stream).

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{StatusCode, Url};
use tokio::sync::{mpsc, oneshot, watch};

use super::http::{self, Conn, End, Link, Opened};
use super::rpc::Rpc;

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
    let link = Link::start(move |stop| run(conn, url, rx, stop))?;
    Ok((link, rpc))
}

async fn run(
    conn: Arc<Conn>,
    url: Url,
    mut rx: mpsc::Receiver<Vec<u8>>,
    mut stop: watch::Receiver<bool>,
) {
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let reader = tokio::spawn(listen(conn.clone(), url, endpoint_tx));
    let endpoint = tokio::select! {
        e = endpoint_rx => e.ok(),
        _ = http::stopped(&mut stop) => None,
    };
    if let Some(endpoint) = endpoint {
        loop {
            tokio::select! {
                // What agentx queued goes first (a `notifications/cancelled` before the close).
                biased;
                m = rx.recv() => match m {
                    Some(m) => {
                        let posted = tokio::time::timeout(
                            conn.connect_timeout,
                            post(&conn, &endpoint, m),
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
                    None => break,
                },
                _ = http::stopped(&mut stop) => break,
            }
        }
        // PROFILE §18: the notifications queued before the close (SIGTERM's
        // `notifications/cancelled`) still go, within the close's bound.
        let deadline = tokio::time::Instant::now() + http::CLOSE_WAIT;
        while let Ok(m) = rx.try_recv() {
            if http::peek(&m).0.is_none() && !conn.is_ended() {
                let _ = tokio::time::timeout_at(deadline, post(&conn, &endpoint, m)).await;
            }
        }
    }
    reader.abort();
}

/// The event stream: the endpoint first, then every message until the stream ends.
async fn listen(conn: Arc<Conn>, url: Url, endpoint: oneshot::Sender<Url>) {
    let req = conn
        .client
        .get(url.clone())
        .headers(conn.headers.clone())
        .header(ACCEPT, "text/event-stream");
    let mut resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return conn.end(End::Failed(http::unreachable(&e))),
    };
    if !resp.status().is_success() {
        return conn.end(http::status_end(resp.status()));
    }
    if http::media_type(&resp) != "text/event-stream" {
        return conn.end(End::Failed(
            "the server did not open an event stream".into(),
        ));
    }
    let mut endpoint = Some(endpoint);
    let read = conn
        .read_events(&mut resp, |e| {
            if e.name == "endpoint" {
                let Some(tx) = endpoint.take() else {
                    return;
                };
                let at = std::str::from_utf8(&e.data)
                    .ok()
                    .and_then(|d| url.join(d.trim()).ok());
                match at {
                    Some(at) if at.origin() == url.origin() => {
                        let _ = tx.send(at);
                    }
                    _ => conn.end(End::Failed(
                        "the endpoint event names another origin".into(),
                    )),
                }
            } else if http::is_message(&e) {
                conn.deliver(&e.data);
            }
        })
        .await;
    let why = match read {
        Ok(()) => "the event stream ended".to_string(),
        Err(why) => why,
    };
    conn.end(End::Failed(why));
}

/// One message POSTed to the endpoint; its answer comes on the stream.
async fn post(conn: &Conn, endpoint: &Url, message: Vec<u8>) {
    let (id, _) = http::peek(&message);
    let req = conn
        .client
        .post(endpoint.clone())
        .headers(conn.headers.clone())
        .header(CONTENT_TYPE, "application/json")
        .body(message);
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return conn.end(End::Failed(http::unreachable(&e))),
    };
    let status = resp.status();
    if status == StatusCode::UNAUTHORIZED {
        conn.end(End::NeedsAuth(http::NEEDS_AUTH.into()));
    } else if !status.is_success() {
        if let Some(id) = id {
            conn.fail(id, http::status_end(status).text());
        }
    }
    http::drain(resp).await;
}
