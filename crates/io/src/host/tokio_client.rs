//! The async client (feature `tokio`): the same protocol behaviour as [`super::Client`] on
//! tokio — a reader task, a writer task fed in order, correlated calls whose abandonment
//! (timeout, or the caller dropping the future) sends `control_cancel_request` (WIRE-007), and
//! sync or async `can_use_tool` callbacks whose errors and panics deny (WIRE-PERM-002); its
//! `upload` lives with the blocking one in `super::import`.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Duration;

use ::tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use ::tokio::process::Child;
use ::tokio::sync::{mpsc, oneshot};

use super::budget::Budget;
use super::calls::{initialize_response, peer_initialize_response, Reply};
use super::client::ExitReport;
use super::command::{
    capture_stderr_async, pipes, AgentCommand, AsyncStderrCapture, DEFAULT_STDERR_CAP, STDERR_GRACE,
};
use super::error::HostError;
use super::inbound::Bound;
use super::outgoing::{Outgoing, MAX_QUEUED_ANSWERS};
use super::pending::{self, Started};
use super::permission::{
    CallbackError, PermissionAnswer, ToolPermissionRequest, CALLBACK_FAILED, NO_CALLBACK,
};
use super::stream::{answer, classify, text_record, too_many, AgentRequest, Output, Route};
use super::stream::{ImportEvent, RecordItem};
use agentx_wire::encode::{contained, Panicked};
use agentx_wire::frame::DEFAULT_MAX_LINE;
use agentx_wire::wire::initialize::InitializeResponse;
use agentx_wire::wire::subtypes::{Initialize, Interrupt};
use agentx_wire::wire::system_init::AttachmentCapabilities;
use agentx_wire::wire::{
    ControlRequest, ControlRequestBody, ControlResponse, InputRecord, PeerInitializeResponse,
    PeerProfile, RawJson, UserRecord,
};

/// A boxed future of a permission answer.
pub type AnswerFuture =
    Pin<Box<dyn Future<Output = Result<PermissionAnswer, CallbackError>> + Send>>;

/// An async `can_use_tool` callback; implemented for closures returning a `Send` future.
pub trait AsyncCanUseTool: Send + Sync + 'static {
    /// Decides one request.
    fn can_use_tool(&self, request: ToolPermissionRequest) -> AnswerFuture;
}

impl<F, Fut> AsyncCanUseTool for F
where
    F: Fn(ToolPermissionRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<PermissionAnswer, CallbackError>> + Send + 'static,
{
    fn can_use_tool(&self, request: ToolPermissionRequest) -> AnswerFuture {
        Box::pin(self(request))
    }
}

/// How an [`AsyncClient`] behaves.
#[derive(Clone, Default)]
pub struct AsyncClientOptions {
    handler: Option<Arc<dyn AsyncCanUseTool>>,
    max_line: Option<usize>,
    stderr_cap: Option<usize>,
    profile: PeerProfile,
    bound: Bound,
}

impl std::fmt::Debug for AsyncClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncClientOptions")
            .field("can_use_tool", &self.handler.is_some())
            .finish_non_exhaustive()
    }
}

impl AsyncClientOptions {
    /// Installs an async `can_use_tool` callback (without one, every request is denied).
    ///
    /// ```
    /// use agentx_io::host::{AsyncClientOptions, PermissionAnswer, ToolPermissionRequest};
    /// let o = AsyncClientOptions::default()
    ///     .can_use_tool(|_r: ToolPermissionRequest| async { Ok(PermissionAnswer::allow()) });
    /// # let _ = o;
    /// ```
    pub fn can_use_tool(mut self, handler: impl AsyncCanUseTool) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The longest output line accepted (default 8 MiB, PROFILE §2a).
    ///
    /// ```
    /// use agentx_io::host::AsyncClientOptions;
    /// let o = AsyncClientOptions::default().max_line(64 << 10);
    /// # let _ = o;
    /// ```
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = Some(bytes);
        self
    }

    /// How much of the agent's stderr [`ExitReport::stderr`] keeps (default 1 MiB); the rest
    /// is read and dropped, so a chatty agent never blocks on a full pipe.
    ///
    /// ```
    /// use agentx_io::host::AsyncClientOptions;
    /// let o = AsyncClientOptions::default().stderr_cap(64 << 10);
    /// # let _ = o;
    /// ```
    pub fn stderr_cap(mut self, bytes: usize) -> Self {
        self.stderr_cap = Some(bytes);
        self
    }

    /// How closely the agent's output is held to this profile (default
    /// [`PeerProfile::Strict`]); as [`ClientOptions::peer_profile`](super::ClientOptions::peer_profile).
    ///
    /// ```
    /// use agentx_io::host::{AsyncClientOptions, PeerProfile};
    /// let o = AsyncClientOptions::default().peer_profile(PeerProfile::Lenient);
    /// # let _ = o;
    /// ```
    pub fn peer_profile(mut self, profile: PeerProfile) -> Self {
        self.profile = profile;
        self
    }

    /// At most this many records that [`AsyncClient::recv`] has not taken (default 1,024, at
    /// least 1); as [`ClientOptions::max_buffered_records`](super::ClientOptions::max_buffered_records):
    /// when this or the byte budget is reached the client stops reading the agent's stdout, so
    /// **a host that stops calling `recv` stalls its agent**.
    ///
    /// ```
    /// use agentx_io::host::AsyncClientOptions;
    /// let o = AsyncClientOptions::default().max_buffered_records(256);
    /// # let _ = o;
    /// ```
    pub fn max_buffered_records(mut self, records: usize) -> Self {
        self.bound.records = records.max(1);
        self
    }

    /// At most about this many bytes of records that [`AsyncClient::recv`] has not taken
    /// (default 64 MiB; counted per read, so one read or one line may pass it).
    ///
    /// ```
    /// use agentx_io::host::AsyncClientOptions;
    /// let o = AsyncClientOptions::default().max_buffered_bytes(8 << 20);
    /// # let _ = o;
    /// ```
    pub fn max_buffered_bytes(mut self, bytes: usize) -> Self {
        self.bound.bytes = bytes.max(1);
        self
    }
}

pub(crate) struct Shared {
    /// Validated frames (WIRE-013) waiting for the writer task, in order.
    pub(crate) outgoing: Arc<Outgoing>,
    pending: Mutex<Pending>,
    handler: Option<Arc<dyn AsyncCanUseTool>>,
    /// `input_capabilities` from the last successful `initialize` (for uploads).
    capabilities: Mutex<Option<AttachmentCapabilities<'static>>>,
    /// How closely the agent is held to this profile (also picks `send_text`'s form).
    pub(crate) profile: PeerProfile,
    /// Numbers this client's upload and attachment IDs (`upl_h1`, `att_h1`, ...).
    pub(crate) next_upload: AtomicU64,
}

/// The async client's outstanding calls, uploads and permission requests.
type Pending = pending::Pending<oneshot::Sender<Reply>, mpsc::Sender<ImportEvent>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    pub(crate) fn capabilities(&self) -> Option<AttachmentCapabilities<'static>> {
        lock(&self.capabilities).clone()
    }

    /// Routes the acknowledgements of `upload_id` to `tx` until [`Shared::forget_upload`].
    pub(crate) fn register_upload(&self, upload_id: &str, tx: mpsc::Sender<ImportEvent>) {
        lock(&self.pending).register_upload(upload_id, tx);
    }

    pub(crate) fn forget_upload(&self, upload_id: &str) {
        lock(&self.pending).forget_upload(upload_id);
    }

    pub(crate) fn send(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        self.outgoing.send(record)
    }

    /// Sends an answer to an agent request: counted against [`MAX_QUEUED_ANSWERS`] until it is
    /// written.
    pub(crate) fn send_answer(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        self.outgoing.send_answer(record)
    }
}

/// A running agent session driven on tokio.
pub struct AsyncClient {
    pub(crate) shared: Arc<Shared>,
    /// Batches from the read task ([`Output`]); held by the one `recv` waiting for a batch.
    batches: ::tokio::sync::Mutex<mpsc::UnboundedReceiver<Vec<RecordItem>>>,
    /// The batch being taken record by record: taken without awaiting (a plain mutex held
    /// for one `next`, not the async one per record).
    ready: Mutex<std::vec::IntoIter<RecordItem>>,
    /// The bound on what the channel and `ready` hold (issue 46).
    budget: Arc<Budget>,
    child: Option<Child>,
    stderr: Option<AsyncStderrCapture>,
    writer: Option<::tokio::task::JoinHandle<()>>,
}

impl Drop for AsyncClient {
    /// Ends the agent's input so the writer task finishes (a spawned child is also killed, as
    /// `kill_on_drop`).
    fn drop(&mut self) {
        self.shared.outgoing.close();
        // Nobody will take what is read: the read task reads to the end, unbounded by `recv`.
        self.budget.drain();
    }
}

impl std::fmt::Debug for AsyncClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AsyncClient")
            .field("pid", &self.child.as_ref().and_then(Child::id))
            .finish_non_exhaustive()
    }
}

/// Removes a pending request and cancels it on the wire unless it completed (WIRE-007): runs
/// when a call times out *and* when its future is dropped.
struct CallGuard<'c> {
    shared: &'c Shared,
    id: Option<String>,
}

impl Drop for CallGuard<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let cancels = lock(&self.shared.pending)
                .calls
                .abandon(&id, std::time::Instant::now());
            for c in &cancels {
                let _ = self.shared.send(c);
            }
        }
    }
}

impl AsyncClient {
    /// Starts `command` with piped stdio (killed when the client is dropped).
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::spawn(&AgentCommand::stream_json("agentx"), AsyncClientOptions::default()).await?;
    /// client.send_text("hello")?;
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub async fn spawn(
        command: &AgentCommand,
        options: AsyncClientOptions,
    ) -> Result<AsyncClient, HostError> {
        let mut child = command.spawn_tokio()?;
        let (stdin, stdout) = pipes(child.stdin.take(), child.stdout.take())?;
        let cap = options.stderr_cap.unwrap_or(DEFAULT_STDERR_CAP);
        let stderr = child.stderr.take().map(|e| capture_stderr_async(e, cap));
        let mut client = AsyncClient::attach(stdout, stdin, options);
        client.child = Some(child);
        client.stderr = stderr;
        Ok(client)
    }

    /// Drives an agent over existing async pipes. Must be called inside a tokio runtime.
    ///
    /// ```
    /// use agentx_io::host::{AsyncClient, AsyncClientOptions};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let output: &'static [u8] = b"{\"type\":\"keep_alive\"}\n";
    /// let client = AsyncClient::attach(output, tokio::io::sink(), AsyncClientOptions::default());
    /// assert_eq!(client.recv().await.unwrap()?.record_type(), "keep_alive");
    /// assert!(client.recv().await.is_none());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub fn attach(
        output: impl AsyncRead + Unpin + Send + 'static,
        input: impl AsyncWrite + Unpin + Send + 'static,
        options: AsyncClientOptions,
    ) -> AsyncClient {
        let outgoing = Outgoing::new(input);
        let shared = Arc::new(Shared {
            outgoing: Arc::clone(&outgoing),
            pending: Mutex::new(Pending::new(options.profile)),
            handler: options.handler.clone(),
            capabilities: Mutex::new(None),
            next_upload: AtomicU64::new(0),
            profile: options.profile,
        });
        let writer = ::tokio::spawn(outgoing.run());
        let (tx, rx) = mpsc::unbounded_channel();
        let reader_shared = Arc::clone(&shared);
        let side = Output::new(
            options.max_line.unwrap_or(DEFAULT_MAX_LINE),
            options.profile,
        );
        let budget = Arc::new(Budget::new(options.bound));
        ::tokio::spawn(read_loop(
            output,
            side,
            reader_shared,
            tx,
            Arc::clone(&budget),
        ));
        AsyncClient {
            shared,
            batches: ::tokio::sync::Mutex::new(rx),
            ready: Mutex::new(Vec::new().into_iter()),
            budget,
            child: None,
            stderr: None,
            writer: Some(writer),
        }
    }

    /// The child's process id, when spawned and still running (as [`Client::pid`](super::Client::pid)).
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::spawn(&AgentCommand::stream_json("agentx"), AsyncClientOptions::default()).await?;
    /// println!("agentx is process {:?}", client.pid());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(Child::id)
    }

    /// `initialize`: the typed response (WIRE-024 checked). Remembers `input_capabilities`
    /// for [`AsyncClient::upload`].
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions};
    /// use std::time::Duration;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::spawn(&AgentCommand::stream_json("agentx"), AsyncClientOptions::default()).await?;
    /// let init = client.initialize(Duration::from_secs(10)).await?;
    /// println!("{} providers", init.providers.len());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub async fn initialize(
        &self,
        timeout: Duration,
    ) -> Result<InitializeResponse<'static>, HostError> {
        let raw = self
            .control(ControlRequestBody::Initialize(Initialize), timeout)
            .await?;
        let response = initialize_response(raw)?;
        *lock(&self.shared.capabilities) = response
            .input_capabilities
            .as_ref()
            .map(|c| c.attachments.clone());
        Ok(response)
    }

    /// `initialize` in the lenient peer profile's view, as
    /// [`Client::initialize_peer`](super::Client::initialize_peer).
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions, PeerProfile};
    /// use std::time::Duration;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let options = AsyncClientOptions::default().peer_profile(PeerProfile::Lenient);
    /// let client = AsyncClient::spawn(&AgentCommand::stream_json("claude").arg("--verbose"), options).await?;
    /// let init = client.initialize_peer(Duration::from_secs(30)).await?;
    /// println!("{:?}", init.fields.account.and_then(|a| a.token_source));
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub async fn initialize_peer(
        &self,
        timeout: Duration,
    ) -> Result<PeerInitializeResponse<'static>, HostError> {
        let raw = self
            .control(ControlRequestBody::Initialize(Initialize), timeout)
            .await?;
        peer_initialize_response(raw)
    }

    /// `interrupt` (WIRE-010): acknowledged at once; the turn's result follows in the stream.
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions};
    /// use std::time::Duration;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::spawn(&AgentCommand::stream_json("agentx"), AsyncClientOptions::default()).await?;
    /// client.send_text("!sleep 60000")?;
    /// client.interrupt(Duration::from_secs(5)).await?;
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub async fn interrupt(&self, timeout: Duration) -> Result<(), HostError> {
        self.control(ControlRequestBody::Interrupt(Interrupt), timeout)
            .await
            .map(drop)
    }

    /// Any control request, correlated (WIRE-006); abandoned by timeout or by dropping the
    /// future, it is cancelled on the wire (WIRE-007).
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions};
    /// use agentx_wire::wire::subtypes::{ControlRequestBody, McpStatus};
    /// use std::time::Duration;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::spawn(&AgentCommand::stream_json("agentx"), AsyncClientOptions::default()).await?;
    /// let status = client
    ///     .control(ControlRequestBody::McpStatus(McpStatus), Duration::from_secs(5))
    ///     .await?;
    /// println!("{}", status.is_some());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub async fn control(
        &self,
        body: ControlRequestBody<'_>,
        timeout: Duration,
    ) -> Result<Option<RawJson<'static>>, HostError> {
        let subtype = body.subtype().map_or("control", |s| s.as_str());
        let (tx, rx) = oneshot::channel();
        // WIRE-006: registered on the broker before its envelope is written.
        let (id, records) = lock(&self.shared.pending).calls.start(
            body.into_owned(),
            tx,
            std::time::Instant::now(),
        )?;
        // From here, a timeout or a dropped future cancels on the wire (WIRE-007).
        let mut guard = CallGuard {
            shared: &self.shared,
            id: Some(id.into()),
        };
        for record in &records {
            self.shared.send(record)?;
        }
        match ::tokio::time::timeout(timeout, rx).await {
            Err(_) => Err(HostError::Timeout { subtype }),
            Ok(reply) => {
                guard.id = None;
                reply.unwrap_or(Err(HostError::StreamClosed))
            }
        }
    }

    /// Sends a plain text user message.
    ///
    /// ```
    /// use agentx_io::host::{AsyncClient, AsyncClientOptions};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::attach(tokio::io::empty(), tokio::io::sink(), AsyncClientOptions::default());
    /// client.send_text("hello")?;
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub fn send_text(&self, text: &str) -> Result<(), HostError> {
        self.send_user(text_record(text, self.shared.profile))
    }

    /// Sends any user record.
    ///
    /// ```
    /// use agentx_io::host::{AsyncClient, AsyncClientOptions};
    /// use agentx_wire::wire::{user::Priority, UserRecord};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::attach(tokio::io::empty(), tokio::io::sink(), AsyncClientOptions::default());
    /// let mut record = UserRecord::text("later is fine".to_owned());
    /// record.priority = Some(Priority::Later);
    /// client.send_user(record)?;
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub fn send_user(&self, record: UserRecord<'_>) -> Result<(), HostError> {
        self.shared.send(&InputRecord::User(record))
    }

    /// The next output record; `None` once the output ended and every record was taken. An
    /// undecodable line is an `Err` item and the stream goes on.
    ///
    /// As with the blocking client ([`Client::recv`](super::Client::recv)), records wait in
    /// memory until a `recv` takes them: the client's read task reads the agent's output
    /// whether or not the caller attends it, so the agent is never stalled by the host, and a
    /// host that stops calling `recv` holds what the agent writes meanwhile (each record at
    /// most [`AsyncClientOptions::max_line`] bytes on the wire).
    ///
    /// ```
    /// use agentx_io::host::{AsyncClient, AsyncClientOptions};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let output: &'static [u8] = b"{\"type\":\"keep_alive\"\n{\"type\":\"keep_alive\"}\n";
    /// let client = AsyncClient::attach(output, tokio::io::sink(), AsyncClientOptions::default());
    /// assert!(client.recv().await.unwrap().is_err());
    /// assert_eq!(client.recv().await.unwrap()?.record_type(), "keep_alive");
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub async fn recv(&self) -> Option<RecordItem> {
        loop {
            if let Some(item) = lock(&self.ready).next() {
                self.budget.took();
                return Some(item);
            }
            let mut batches = self.batches.lock().await;
            // Another `recv` may have refilled `ready` while this one waited for `batches`.
            if let Some(item) = lock(&self.ready).next() {
                self.budget.took();
                return Some(item);
            }
            // Cancel-safe: a batch is either still in the channel or already in `ready`.
            let batch = batches.recv().await?;
            *lock(&self.ready) = batch.into_iter();
        }
    }

    /// Ends the agent's input (EOF) after every queued frame was written.
    ///
    /// ```
    /// use agentx_io::host::{AsyncClient, AsyncClientOptions, HostError};
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::attach(tokio::io::empty(), tokio::io::sink(), AsyncClientOptions::default());
    /// client.end_input();
    /// assert!(matches!(client.send_text("late"), Err(HostError::InputClosed)));
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub fn end_input(&self) {
        self.shared.outgoing.close();
    }

    /// Ends input, waits up to `timeout` for the agent to exit (then kills it).
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, AsyncClient, AsyncClientOptions};
    /// use std::time::Duration;
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let client = AsyncClient::spawn(&AgentCommand::stream_json("agentx"), AsyncClientOptions::default()).await?;
    /// let report = client.close(Duration::from_secs(10)).await?;
    /// assert!(report.success());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// # }).unwrap();
    /// ```
    pub async fn close(mut self, timeout: Duration) -> Result<ExitReport, HostError> {
        let deadline = ::tokio::time::Instant::now() + timeout;
        self.end_input();
        // The agent exits only once its output is read: read it to the end.
        self.budget.drain();
        if let Some(mut w) = self.writer.take() {
            // A writer stuck on an agent that stopped reading its stdin is given up at the
            // deadline (dropping the pipe); the agent is then killed below.
            if ::tokio::time::timeout_at(deadline, &mut w).await.is_err() {
                w.abort();
            }
        }
        let status = match self.child.take() {
            None => None,
            Some(mut child) => match ::tokio::time::timeout_at(deadline, child.wait()).await {
                Ok(status) => Some(status?),
                Err(_) => {
                    let _ = child.kill().await;
                    Some(child.wait().await?)
                }
            },
        };
        let stderr = match self.stderr.take() {
            Some(c) => c.finish(STDERR_GRACE).await,
            None => Vec::new(),
        };
        Ok(ExitReport { status, stderr })
    }
}

/// The read task: reads into the read side's buffer until EOF; [`Output`] does the rest.
async fn read_loop(
    mut output: impl AsyncRead + Unpin,
    mut side: Output,
    shared: Arc<Shared>,
    tx: mpsc::UnboundedSender<Vec<RecordItem>>,
    budget: Arc<Budget>,
) {
    let route = Routes(&shared);
    // The bytes of the read under way; its first hand-over carries them.
    let bytes = AtomicUsize::new(0);
    let mut hand_over = |items: Vec<RecordItem>| {
        budget.handed(items.len(), bytes.swap(0, Ordering::Relaxed));
        let _ = tx.send(items);
    };
    loop {
        // The bound: no read while `recv` has not taken enough, or while the agent has not read
        // the answers to its own requests (issue 46).
        budget.room().await;
        shared
            .outgoing
            .until_answers_below(MAX_QUEUED_ANSWERS)
            .await;
        // WIRE-015 for the caller's reader too: a panic ends the output like a failed read
        // (pending calls are rejected, WIRE-008, instead of waiting for their timeouts), and
        // an error is kept only as its kind.
        let read = std::future::poll_fn(|cx| {
            let mut buf = ReadBuf::new(side.buffer());
            match contained(|| Pin::new(&mut output).poll_read(cx, &mut buf)) {
                Ok(Poll::Pending) => Poll::Pending,
                Ok(Poll::Ready(r)) => Poll::Ready(Ok(r.map(|()| buf.filled().len()))),
                Err(Panicked) => Poll::Ready(Err(Panicked)),
            }
        })
        .await;
        bytes.store(
            match &read {
                Ok(Ok(n)) => *n,
                _ => 0,
            },
            Ordering::Relaxed,
        );
        if side.took(read, &route, &mut hand_over) {
            break;
        }
    }
    // The pipe is closed before the stream ends: whoever saw `recv` return `None` finds the
    // agent's stdout no longer held by this client (a caller's reader's `Drop` contained).
    agentx_wire::encode::discard_foreign(output);
    side.finish(&route, &mut hand_over);
}

/// The async client's answers to what its read side routes.
struct Routes<'s>(&'s Arc<Shared>);

impl Route for Routes<'_> {
    fn control_response(&self, response: &ControlResponse<'_>) {
        lock(&self.0.pending)
            .calls
            .on_response(response, std::time::Instant::now());
    }

    fn control_request(&self, request: ControlRequest<'static>) {
        on_agent_request(request, self.0);
    }

    fn control_cancel(&self, request_id: &str) {
        lock(&self.0.pending).permission_cancelled(request_id);
    }

    fn import(&self, upload_id: &str, event: ImportEvent) {
        lock(&self.0.pending).import(upload_id, event);
    }

    fn end(&self) {
        lock(&self.0.pending).end(std::time::Instant::now());
    }
}

fn on_agent_request(r: ControlRequest<'static>, shared: &Arc<Shared>) {
    let request = match classify(r) {
        AgentRequest::Answer(record) => {
            let _ = shared.send_answer(&record);
            return;
        }
        AgentRequest::Permission(request) => request,
    };
    let started = lock(&shared.pending).permission_started(&request.request_id);
    match started {
        Started::Decide => {}
        Started::Ended => return,
        Started::Full => {
            if let Some(record) = too_many(&request) {
                let _ = shared.send_answer(&record);
            }
            return;
        }
    }
    let shared = Arc::clone(shared);
    ::tokio::spawn(async move {
        let decided = match shared.handler.clone() {
            None => PermissionAnswer::deny(NO_CALLBACK),
            // A panic inside the callback's future ends its task: a deny (WIRE-PERM-002); its
            // payload is never formatted.
            // The callback is called inside the task too: a closure that panics before it
            // returns its future denies like one whose future panics.
            Some(h) => match ::tokio::spawn({
                let request = (*request).clone();
                async move { h.can_use_tool(request).await }
            })
            .await
            {
                Ok(Ok(answer)) => answer,
                Ok(Err(e)) => {
                    agentx_wire::encode::discard_foreign(e);
                    PermissionAnswer::deny(CALLBACK_FAILED)
                }
                Err(join) => {
                    if let Ok(p) = join.try_into_panic() {
                        agentx_wire::encode::discard_foreign(p);
                    }
                    PermissionAnswer::deny(CALLBACK_FAILED)
                }
            },
        };
        if !lock(&shared.pending).permission_decided(&request.request_id) {
            return;
        }
        if let Some(record) = answer(&request, decided) {
            let _ = shared.send_answer(&record);
        }
    });
}
