//! One MCP connection's JSON-RPC over any [`Transport`] (PROFILE §18): requests agentx sends
//! and waits for (by id, with a deadline), the messages a server sends (responses matched to
//! their request; `ping` and `roots/list` answered; `elicitation/create` handed to the owner
//! when it takes them ([`Rpc::on_server_request`], the SDK profile) and answered `cancel`
//! otherwise; any other request -32601; `notifications/tools/list_changed` and
//! `notifications/elicitation/complete` handed to the owner), and the connection's end (every
//! waiting request fails). While an elicitation waits for the host, the calls of the
//! connection do not age ([`Rpc::wait_call`]; PROFILE §18: that time does not count).
//!
//! Must never: block the reader on a waiting caller (answers go through channels), keep a
//! request entry after its waiter gave up, or grow without bound (one entry per request in
//! flight).

use std::collections::HashMap;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentx_wire::json::{self, Value};

/// How bytes reach a server (stdio now; streamable HTTP and SSE behind the same trait).
pub trait Transport: Send + Sync {
    /// Sends one JSON-RPC message (compact JSON, without framing).
    fn send(&self, message: &[u8]) -> Result<(), String>;
}

/// What a request came back as.
pub type Answer = Result<String, RpcError>;

/// Why a request has no result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RpcError {
    /// The server answered a JSON-RPC error: its message (at most 256 bytes).
    Error(String),
    /// No answer within the deadline.
    Timeout,
    /// The connection ended: why.
    Closed(String),
}

/// A notification from a server that its owner acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
}

/// A request or notification from a server that goes to the host (PROFILE §18).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerRequest {
    /// `elicitation/create`: answer it with [`Rpc::answer_elicitation`] and `key`.
    Elicitation {
        /// This connection's key of the request.
        key: u64,
        /// Its params, compact JSON (`{}` when it had none).
        params: String,
    },
    /// `notifications/elicitation/complete`.
    ElicitationComplete {
        /// Its `elicitationId`.
        elicitation_id: String,
    },
}

/// Takes [`ServerRequest`]s; `false` refuses one (an elicitation is then answered `cancel`).
pub type OnServerRequest = Box<dyn Fn(ServerRequest) -> bool + Send + Sync>;

/// At most this many elicitations of one connection wait for the host; one more is answered
/// `cancel` at once (docs/limits.md).
pub const MAX_ELICITATIONS: usize = 16;

/// The shared state of one connection.
pub struct Rpc {
    transport: Box<dyn Transport>,
    state: Mutex<State>,
    /// `file://` URIs of the cwd and the `--add-dir` directories (`roots/list`).
    roots: Vec<String>,
    notices: Mutex<Option<SyncSender<Notice>>>,
    server_requests: Mutex<Option<OnServerRequest>>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    waiting: HashMap<u64, Sender<Answer>>,
    /// Why the connection ended, once it did.
    closed: Option<String>,
    /// Elicitations waiting for the host: key → the request's JSON-RPC id (compact JSON).
    elicitations: HashMap<u64, Vec<u8>>,
    next_key: u64,
    /// Since when an elicitation has been waiting, while one is.
    paused_since: Option<Instant>,
    /// The time elicitations waited before `paused_since`.
    paused_total: Duration,
}

impl State {
    /// The total time an elicitation of this connection waited for the host, up to `now`.
    fn paused(&self, now: Instant) -> Duration {
        self.paused_total
            + self
                .paused_since
                .map_or(Duration::ZERO, |s| now.saturating_duration_since(s))
    }

    /// Elicitation `key` is over: the pause ends with the last one.
    fn elicitation_done(&mut self, key: u64, now: Instant) -> Option<Vec<u8>> {
        let id = self.elicitations.remove(&key)?;
        if self.elicitations.is_empty() {
            if let Some(s) = self.paused_since.take() {
                self.paused_total += now.saturating_duration_since(s);
            }
        }
        Some(id)
    }
}

impl Rpc {
    /// A connection over `transport`.
    pub fn new(transport: Box<dyn Transport>, roots: Vec<String>) -> Arc<Rpc> {
        Arc::new(Rpc {
            transport,
            state: Mutex::new(State::default()),
            roots,
            notices: Mutex::new(None),
            server_requests: Mutex::new(None),
        })
    }

    /// Where `elicitation/create` and `notifications/elicitation/complete` go from now on
    /// (the SDK profile); the handshake then declares the `elicitation` capability.
    pub fn on_server_request(&self, f: OnServerRequest) {
        *self
            .server_requests
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(f);
    }

    /// True when elicitations go to the host.
    pub fn elicits(&self) -> bool {
        self.server_requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Answers elicitation `key` with `result` (an MCP `ElicitResult`, compact JSON); an
    /// answer to one already answered, or after the connection ended, is dropped.
    pub fn answer_elicitation(&self, key: u64, result: &str) {
        let Some(id) = self.lock().elicitation_done(key, Instant::now()) else {
            return;
        };
        let mut m = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
        m.extend_from_slice(&id);
        m.extend_from_slice(b",\"result\":");
        m.extend_from_slice(result.as_bytes());
        m.push(b'}');
        let _ = self.transport.send(&m);
    }

    /// Waits for the answer of call `id` at most `timeout`, not counting the time an
    /// elicitation of this connection waited for the host meanwhile (PROFILE §18).
    pub fn wait_call(&self, id: u64, rx: &Receiver<Answer>, timeout: Duration) -> Answer {
        let start = Instant::now();
        let paused_at_start = self.lock().paused(start);
        loop {
            let now = Instant::now();
            let paused = self.lock().paused(now).saturating_sub(paused_at_start);
            let aged = now.saturating_duration_since(start).saturating_sub(paused);
            let Some(left) = timeout.checked_sub(aged).filter(|l| !l.is_zero()) else {
                self.forget(id);
                return Err(RpcError::Timeout);
            };
            match rx.recv_timeout(left) {
                Ok(a) => return a,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(RpcError::Closed(
                        self.closed()
                            .unwrap_or_else(|| "the request was cancelled".into()),
                    ))
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where notifications go from now on.
    pub fn on_notice(&self, tx: SyncSender<Notice>) {
        *self.notices.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
    }

    /// Why the connection ended, if it did.
    pub fn closed(&self) -> Option<String> {
        self.lock().closed.clone()
    }

    /// Sends request `method` with `params` (a JSON object's text or `None`); returns its id
    /// and the receiver of its answer.
    pub fn start(&self, method: &str, params: Option<&str>) -> (u64, Receiver<Answer>) {
        let (tx, rx) = channel();
        let id = {
            let mut st = self.lock();
            if let Some(why) = &st.closed {
                let _ = tx.send(Err(RpcError::Closed(why.clone())));
                return (0, rx);
            }
            let id = st.next_id;
            st.next_id += 1;
            st.waiting.insert(id, tx.clone());
            id
        };
        let mut m = Vec::with_capacity(64 + params.map_or(0, str::len));
        m.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
        json::write_u64(&mut m, id);
        m.extend_from_slice(b",\"method\":");
        json::write_str(&mut m, method);
        if let Some(p) = params {
            m.extend_from_slice(b",\"params\":");
            m.extend_from_slice(p.as_bytes());
        }
        m.push(b'}');
        if let Err(why) = self.transport.send(&m) {
            self.lock().waiting.remove(&id);
            let _ = tx.send(Err(RpcError::Closed(why)));
        }
        (id, rx)
    }

    /// Sends a request and waits for its answer at most `timeout`; a timed-out request is
    /// forgotten (its late answer is ignored).
    pub fn call(&self, method: &str, params: Option<&str>, timeout: Duration) -> Answer {
        let (id, rx) = self.start(method, params);
        self.wait(id, &rx, timeout)
    }

    /// Waits for the answer of request `id`.
    pub fn wait(&self, id: u64, rx: &Receiver<Answer>, timeout: Duration) -> Answer {
        match rx.recv_timeout(timeout) {
            Ok(a) => a,
            Err(RecvTimeoutError::Timeout) => {
                self.forget(id);
                Err(RpcError::Timeout)
            }
            Err(RecvTimeoutError::Disconnected) => Err(RpcError::Closed(
                self.closed()
                    .unwrap_or_else(|| "the request was cancelled".into()),
            )),
        }
    }

    /// Drops request `id`'s waiter: a reply to it is ignored from now on.
    pub fn forget(&self, id: u64) {
        self.lock().waiting.remove(&id);
    }

    /// `notifications/cancelled` for request `id` (PROFILE §18), which is forgotten.
    pub fn cancel(&self, id: u64, reason: &str) {
        self.forget(id);
        let mut m = Vec::with_capacity(128);
        m.extend_from_slice(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":",
        );
        json::write_u64(&mut m, id);
        m.extend_from_slice(b",\"reason\":");
        json::write_str(&mut m, reason);
        m.extend_from_slice(b"}}");
        let _ = self.transport.send(&m);
    }

    /// Sends a notification without params.
    pub fn notify(&self, method: &str) {
        let mut m = b"{\"jsonrpc\":\"2.0\",\"method\":".to_vec();
        json::write_str(&mut m, method);
        m.push(b'}');
        let _ = self.transport.send(&m);
    }

    /// The connection ended: every waiting request fails with `why`.
    pub fn close(&self, why: &str) {
        let waiting: Vec<Sender<Answer>> = {
            let mut st = self.lock();
            if st.closed.is_none() {
                st.closed = Some(why.to_string());
            }
            st.elicitations.clear();
            if let Some(s) = st.paused_since.take() {
                st.paused_total += Instant::now().saturating_duration_since(s);
            }
            st.waiting.drain().map(|(_, tx)| tx).collect()
        };
        for tx in waiting {
            let _ = tx.send(Err(RpcError::Closed(why.to_string())));
        }
    }

    /// One message from the server. `false` when it is not a JSON-RPC message (the caller
    /// counts it as a skipped line).
    pub fn receive(&self, line: &[u8]) -> bool {
        let Ok(doc) = json::parse(line) else {
            return false;
        };
        let root = doc.root();
        let Some(obj) = root.as_object() else {
            return false;
        };
        let method = obj
            .get("method")
            .and_then(|m| m.as_str())
            .map(|m| m.decode().into_owned());
        let id = obj.get("id").filter(|v| !v.is_null());
        match (method, id) {
            (Some(method), Some(id)) => {
                self.answer_request(&method, id, obj.get("params"));
                true
            }
            (Some(method), None) => {
                if method == "notifications/elicitation/complete" {
                    let id = obj
                        .get("params")
                        .and_then(|p| p.as_object())
                        .and_then(|p| p.get("elicitationId"))
                        .and_then(|v| v.as_str())
                        .map(|v| v.decode().into_owned());
                    let to = self
                        .server_requests
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    if let (Some(f), Some(elicitation_id)) = (to.as_ref(), id) {
                        f(ServerRequest::ElicitationComplete { elicitation_id });
                    }
                } else if method == "notifications/tools/list_changed" {
                    let tx = self.notices.lock().unwrap_or_else(|e| e.into_inner());
                    if let Some(tx) = tx.as_ref() {
                        // Coalesced: one pending notice already lists the tools again, so a
                        // flood of them queues at most one (docs/limits.md).
                        let _ = tx.try_send(Notice::ToolsChanged);
                    }
                }
                true
            }
            (None, Some(id)) => {
                let Some(id) = id.as_number().and_then(|n| n.as_u64()) else {
                    return true;
                };
                let Some(tx) = self.lock().waiting.remove(&id) else {
                    // A reply to a cancelled or timed-out request is ignored.
                    return true;
                };
                let answer = match (obj.get("result"), obj.get("error")) {
                    (Some(r), _) => {
                        let mut out = Vec::new();
                        json::write_value(&mut out, r);
                        Ok(String::from_utf8(out).unwrap_or_default())
                    }
                    (None, Some(e)) => Err(RpcError::Error(
                        e.as_object()
                            .and_then(|e| e.get("message"))
                            .and_then(|m| m.as_str())
                            .map(|m| {
                                agentx_wire::wire::responses::cut(&m.decode(), 256).to_string()
                            })
                            .unwrap_or_else(|| "MCP error".into()),
                    )),
                    (None, None) => Err(RpcError::Error("a response without result".into())),
                };
                let _ = tx.send(answer);
                true
            }
            (None, None) => false,
        }
    }

    /// An `elicitation/create` with JSON-RPC `id`: handed to the owner, or `false` when it
    /// has none, is full, or refuses it.
    fn elicit(&self, id: &[u8], params: Option<Value<'_, '_>>) -> bool {
        let to = self
            .server_requests
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let Some(f) = to.as_ref() else { return false };
        let key = {
            let mut st = self.lock();
            if st.closed.is_some() || st.elicitations.len() >= MAX_ELICITATIONS {
                return false;
            }
            let key = st.next_key;
            st.next_key += 1;
            st.elicitations.insert(key, id.to_vec());
            st.paused_since.get_or_insert_with(Instant::now);
            key
        };
        let mut p = Vec::new();
        match params {
            Some(v) => json::write_value(&mut p, v),
            None => p.extend_from_slice(b"{}"),
        }
        let params = String::from_utf8(p).unwrap_or_default();
        if f(ServerRequest::Elicitation { key, params }) {
            return true;
        }
        self.lock().elicitation_done(key, Instant::now());
        false
    }

    /// PROFILE §18 "Requests from a server": `ping` → `{}`, `roots/list` → the roots,
    /// `elicitation/create` → to the host (else `cancel`), anything else -32601.
    fn answer_request(&self, method: &str, id: Value<'_, '_>, params: Option<Value<'_, '_>>) {
        const HEAD: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":";
        let mut m = HEAD.to_vec();
        json::write_value(&mut m, id);
        if method == "elicitation/create" && self.elicit(&m[HEAD.len()..], params) {
            return;
        }
        match method {
            "ping" => m.extend_from_slice(b",\"result\":{}}"),
            "roots/list" => {
                m.extend_from_slice(b",\"result\":{\"roots\":[");
                for (i, uri) in self.roots.iter().enumerate() {
                    if i > 0 {
                        m.push(b',');
                    }
                    m.extend_from_slice(b"{\"uri\":");
                    json::write_str(&mut m, uri);
                    m.push(b'}');
                }
                m.extend_from_slice(b"]}}");
            }
            "elicitation/create" => m.extend_from_slice(b",\"result\":{\"action\":\"cancel\"}}"),
            _ => m.extend_from_slice(
                b",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}",
            ),
        }
        let _ = self.transport.send(&m);
    }
}

/// A directory as a `file://` URI (its bytes percent-encoded where a URI needs it).
pub fn file_uri(path: &str) -> String {
    let mut out = String::from("file://");
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Default)]
    struct Sent(Arc<Mutex<Vec<String>>>);

    impl Transport for Sent {
        fn send(&self, message: &[u8]) -> Result<(), String> {
            self.0
                .lock()
                .unwrap()
                .push(String::from_utf8(message.to_vec()).unwrap());
            Ok(())
        }
    }

    #[test]
    fn requests_are_matched_and_server_requests_answered() {
        let sent = Sent::default();
        let rpc = Rpc::new(Box::new(sent.clone()), vec![file_uri("/w d")]);
        let (id, rx) = rpc.start("tools/list", None);
        assert!(rpc.receive(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#));
        assert!(rpc.receive(br#"{"jsonrpc":"2.0","id":"r","method":"roots/list"}"#));
        assert!(rpc.receive(br#"{"jsonrpc":"2.0","id":8,"method":"sampling/createMessage"}"#));
        assert!(rpc.receive(br#"{"jsonrpc":"2.0","id":0,"result":{"tools":[]}}"#));
        assert_eq!(rx.recv().unwrap(), Ok(r#"{"tools":[]}"#.to_string()));
        assert_eq!(id, 0);
        assert!(!rpc.receive(b"banner"));
        assert!(!rpc.receive(b"[1]"));
        let sent = sent.0.lock().unwrap().clone();
        assert_eq!(
            sent,
            [
                r#"{"jsonrpc":"2.0","id":0,"method":"tools/list"}"#,
                r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
                r#"{"jsonrpc":"2.0","id":"r","result":{"roots":[{"uri":"file:///w%20d"}]}}"#,
                r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found"}}"#,
            ]
        );
    }

    #[test]
    fn a_cancelled_request_ignores_its_reply_and_close_fails_the_rest() {
        let sent = Sent::default();
        let rpc = Rpc::new(Box::new(sent.clone()), vec![]);
        let (a, _ra) = rpc.start("tools/call", Some("{}"));
        let (_b, rb) = rpc.start("tools/call", Some("{}"));
        rpc.cancel(a, "timed out");
        assert!(rpc.receive(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#));
        rpc.close("the server exited");
        assert_eq!(
            rb.recv().unwrap(),
            Err(RpcError::Closed("the server exited".into()))
        );
        assert!(sent.0.lock().unwrap().iter().any(|m| m
            == r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0,"reason":"timed out"}}"#));
    }

    /// PROFILE §18: elicitations go to the owner, 16 at most waiting; the 17th is answered
    /// `cancel` at once; an answer goes back with the request's own id, once.
    #[test]
    fn elicitations_go_to_the_owner_up_to_16_waiting() {
        let sent = Sent::default();
        let rpc = Rpc::new(Box::new(sent.clone()), vec![]);
        let got: Arc<Mutex<Vec<ServerRequest>>> = Default::default();
        let g = got.clone();
        rpc.on_server_request(Box::new(move |r| {
            g.lock().unwrap().push(r);
            true
        }));
        assert!(rpc.elicits());
        for n in 0..=MAX_ELICITATIONS {
            let m = format!(
                r#"{{"jsonrpc":"2.0","id":"e{n}","method":"elicitation/create","params":{{"message":"m"}}}}"#
            );
            assert!(rpc.receive(m.as_bytes()));
        }
        assert_eq!(got.lock().unwrap().len(), MAX_ELICITATIONS);
        assert_eq!(
            got.lock().unwrap()[0],
            ServerRequest::Elicitation {
                key: 0,
                params: r#"{"message":"m"}"#.into()
            }
        );
        rpc.answer_elicitation(3, r#"{"action":"decline"}"#);
        rpc.answer_elicitation(3, r#"{"action":"accept"}"#);
        assert!(rpc.receive(
            br#"{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"x"}}"#
        ));
        assert_eq!(
            got.lock().unwrap().last().unwrap(),
            &ServerRequest::ElicitationComplete {
                elicitation_id: "x".into()
            }
        );
        let sent = sent.0.lock().unwrap().clone();
        assert_eq!(
            sent,
            [
                r#"{"jsonrpc":"2.0","id":"e16","result":{"action":"cancel"}}"#,
                r#"{"jsonrpc":"2.0","id":"e3","result":{"action":"decline"}}"#,
            ]
        );
    }

    /// PROFILE §18: the time an elicitation waits for the host does not count toward a call's
    /// timeout (here the whole wait is covered by one, so the 50 ms timeout never passes).
    #[test]
    fn a_call_does_not_age_while_an_elicitation_waits() {
        let rpc = Rpc::new(Box::new(Sent::default()), vec![]);
        rpc.on_server_request(Box::new(|_| true));
        let (id, rx) = rpc.start("tools/call", Some("{}"));
        assert!(rpc.receive(
            br#"{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"message":"m"}}"#
        ));
        let r = rpc.clone();
        let waiter = std::thread::spawn(move || r.wait_call(id, &rx, Duration::from_millis(50)));
        std::thread::sleep(Duration::from_millis(200));
        assert!(rpc.receive(br#"{"jsonrpc":"2.0","id":0,"result":{"content":[]}}"#));
        assert_eq!(waiter.join().unwrap(), Ok(r#"{"content":[]}"#.to_string()));
        // Without one waiting, it times out.
        rpc.answer_elicitation(0, r#"{"action":"cancel"}"#);
        let (id, rx) = rpc.start("tools/call", Some("{}"));
        assert_eq!(
            rpc.wait_call(id, &rx, Duration::from_millis(20)),
            Err(RpcError::Timeout)
        );
    }
}
