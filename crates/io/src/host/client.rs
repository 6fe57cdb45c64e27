//! The blocking client: a child process (or any pipe pair), correlated control calls with
//! timeouts, the permission callback, and a typed record stream read by whoever waits for it
//! (`host::inbound`: a `recv` reads on its own thread; a helper thread reads for calls,
//! uploads and `close`, and whenever no `recv` is under way, so the agent's requests are
//! answered whether or not the caller reads).

use std::io::{self, Read, Write};
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use super::calls::{initialize_response, peer_initialize_response, Reply};
use super::command::{
    capture_stderr, pipes, AgentCommand, StderrCapture, DEFAULT_STDERR_CAP, STDERR_GRACE,
};
use super::detached::{self, hand_over, write_by, Detached, Writer};
use super::error::HostError;
use super::inbound::{Bound, Inbound};
use super::pending::{self, Started};
use super::permission::{decide, CanUseToolHandler};
use super::stream::{
    answer, classify, text_record, too_many, AgentRequest, ImportEvent, Output, RecordItem, Route,
};
use crate::{OutputFifo, PushError, RecordWriter};
use agentx_wire::encode::{discard_foreign, EncoderFailure, FailureKind, RecordFault};
use agentx_wire::frame::DEFAULT_MAX_LINE;
use agentx_wire::wire::initialize::InitializeResponse;
use agentx_wire::wire::subtypes::{Initialize, Interrupt};
use agentx_wire::wire::system_init::AttachmentCapabilities;
use agentx_wire::wire::{
    ControlRequest, ControlRequestBody, ControlResponse, InputRecord, PeerInitializeResponse,
    PeerProfile, RawJson, UserRecord,
};

/// How a [`Client`] behaves.
#[derive(Clone)]
pub struct ClientOptions {
    handler: Option<Arc<dyn CanUseToolHandler>>,
    max_line: usize,
    stderr_cap: usize,
    profile: PeerProfile,
    bound: Bound,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            handler: None,
            max_line: DEFAULT_MAX_LINE,
            stderr_cap: DEFAULT_STDERR_CAP,
            profile: PeerProfile::Strict,
            bound: Bound::default(),
        }
    }
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("can_use_tool", &self.handler.is_some())
            .field("max_line", &self.max_line)
            .field("stderr_cap", &self.stderr_cap)
            .field("profile", &self.profile)
            .field("max_buffered_records", &self.bound.records)
            .field("max_buffered_bytes", &self.bound.bytes)
            .finish()
    }
}

impl ClientOptions {
    /// Installs the `can_use_tool` callback. Without one, every permission request is denied
    /// (fail closed, WIRE-PERM-002).
    ///
    /// ```
    /// use agentx_io::host::{ClientOptions, PermissionAnswer, ToolPermissionRequest};
    /// let o = ClientOptions::default().can_use_tool(|_: &ToolPermissionRequest| Ok(PermissionAnswer::allow()));
    /// # let _ = o;
    /// ```
    pub fn can_use_tool(mut self, handler: impl CanUseToolHandler) -> Self {
        self.handler = Some(Arc::new(handler));
        self
    }

    /// The longest output line accepted (default 8 MiB, PROFILE §2a).
    ///
    /// ```
    /// use agentx_io::host::ClientOptions;
    /// let o = ClientOptions::default().max_line(64 << 10);
    /// # let _ = o;
    /// ```
    pub fn max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes;
        self
    }

    /// How much of the agent's stderr [`ExitReport::stderr`] keeps (default 1 MiB); the rest
    /// is read and dropped, so a chatty agent never blocks on a full pipe.
    ///
    /// ```
    /// use agentx_io::host::ClientOptions;
    /// let o = ClientOptions::default().stderr_cap(64 << 10);
    /// # let _ = o;
    /// ```
    pub fn stderr_cap(mut self, bytes: usize) -> Self {
        self.stderr_cap = bytes;
        self
    }

    /// How closely the agent's output is held to this profile (default
    /// [`PeerProfile::Strict`], for agentx). [`PeerProfile::Lenient`] reads a CLI of the Claude
    /// Code family (the `claude` binary): unknown members kept, open vocabularies as strings,
    /// records our tables reject whole as `OutputRecord::Unknown`; duplicates, UTF-8, the line
    /// limit and what the host sends stay as strict (`wire::peer`). Use
    /// [`Client::initialize_peer`] with it.
    ///
    /// ```
    /// use agentx_io::host::{ClientOptions, PeerProfile};
    /// let o = ClientOptions::default().peer_profile(PeerProfile::Lenient);
    /// # let _ = o;
    /// ```
    pub fn peer_profile(mut self, profile: PeerProfile) -> Self {
        self.profile = profile;
        self
    }

    /// At most this many records that [`Client::recv`] has not taken yet (default
    /// [`DEFAULT_MAX_BUFFERED_RECORDS`](crate::host::DEFAULT_MAX_BUFFERED_RECORDS), at least 1). When this or the byte budget is reached
    /// the client stops reading the agent's stdout until `recv` takes some: backpressure
    /// reaches the agent, whose own output is bounded. **A host that stops calling `recv`
    /// stalls its agent** (and control calls made meanwhile wait for their responses in vain).
    ///
    /// ```
    /// use agentx_io::host::ClientOptions;
    /// let o = ClientOptions::default().max_buffered_records(256);
    /// # let _ = o;
    /// ```
    pub fn max_buffered_records(mut self, records: usize) -> Self {
        self.bound.records = records.max(1);
        self
    }

    /// At most about this many bytes of records that [`Client::recv`] has not taken yet
    /// (default [`DEFAULT_MAX_BUFFERED_BYTES`](crate::host::DEFAULT_MAX_BUFFERED_BYTES)); counted per read, so the budget may be passed
    /// by one read (64 KiB from a pipe, at most 256 KiB) or one line. See [`ClientOptions::max_buffered_records`].
    ///
    /// ```
    /// use agentx_io::host::ClientOptions;
    /// let o = ClientOptions::default().max_buffered_bytes(8 << 20);
    /// # let _ = o;
    /// ```
    pub fn max_buffered_bytes(mut self, bytes: usize) -> Self {
        self.bound.bytes = bytes.max(1);
        self
    }
}

/// How the agent ended.
#[derive(Debug)]
pub struct ExitReport {
    /// The exit status (`None` for a client attached to pipes rather than a child).
    pub status: Option<ExitStatus>,
    /// What the agent wrote on stderr, up to the cap (1 MiB unless set). `close` waits for
    /// the pipe's end at most one second after the agent exited: a descendant still holding it
    /// is not waited for (what it wrote by then is kept; it then finds the pipe closed).
    pub stderr: Vec<u8>,
}

impl ExitReport {
    /// Exit status 0 (or attached pipes).
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions};
    /// use std::time::Duration;
    /// let client = Client::attach(std::io::empty(), std::io::sink(), ClientOptions::default());
    /// let report = client.close(Duration::from_secs(1))?;
    /// assert!(report.success() && report.status.is_none());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn success(&self) -> bool {
        self.status.is_none_or(|s| s.success())
    }
}

pub(crate) struct Shared {
    /// Every record is one validated frame (WIRE-013), encoded on the sending thread and
    /// written whole by one drain at a time through [`InputPipe`], called outside the FIFO's
    /// lock (WIRE-003, WIRE-015).
    input: OutputFifo,
    pipe: Arc<InputPipe>,
    pending: Mutex<Pending>,
    handler: Option<Arc<dyn CanUseToolHandler>>,
    pub(crate) capabilities: Mutex<Option<AttachmentCapabilities<'static>>>,
    /// How closely the agent is held to this profile (also picks `send_text`'s form).
    pub(crate) profile: PeerProfile,
    /// Numbers this client's upload and attachment IDs (`upl_h1`, `att_h1`, ...).
    pub(crate) next_upload: std::sync::atomic::AtomicU64,
    /// The agent's output, its record queue, and who reads it.
    pub(crate) inbound: Inbound,
    /// Writes a call waits for at most its deadline (`host::detached`).
    pub(crate) detached: Detached,
    /// `end_input` was called: the caller's sends and calls are refused from now on (the
    /// pipe itself closes once the writer thread's jobs are written).
    ending: AtomicBool,
}

impl Writer for Shared {
    fn detached(&self) -> &Detached {
        &self.detached
    }

    fn write(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        Shared::write(self, record)
    }

    fn close_input(&self) {
        Shared::close_input(self)
    }
}

/// The agent's stdin (the caller's writer for [`Client::attach`]). The FIFO's drain calls it
/// with one frame at a time; [`InputPipe::close`] drops it so the agent sees EOF.
///
/// WIRE-015: it is never called under the lock that owns the encoder (the FIFO's), so a writer
/// that sends, ends input or inspects the client re-entrantly does not deadlock; an error it
/// returns is classified by `io::ErrorKind` and dropped unformatted, a panic is contained, and
/// either latches one fixed failure after which it is never called again.
struct InputPipe {
    writer: Mutex<Option<Box<dyn Write + Send>>>,
    closed: AtomicBool,
}

impl InputPipe {
    /// Ends input: no later record is accepted, and the writer is dropped now, or by the
    /// drain that is using it as soon as its write returns (this never waits for a write).
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.drop_writer();
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    fn drop_writer(&self) {
        let taken = match self.writer.try_lock() {
            Ok(mut w) => w.take(),
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner().take(),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        // A foreign `Drop` may panic too: contained, its payload never formatted.
        if let Some(w) = taken {
            discard_foreign(w);
        }
    }
}

/// The FIFO's record writer over the shared [`InputPipe`].
struct PipeWriter(Arc<InputPipe>);

impl RecordWriter for PipeWriter {
    fn write_record(&mut self, frame: &[u8]) -> io::Result<usize> {
        let result = {
            let mut w = lock(&self.0.writer);
            match w.as_mut() {
                // Closed while this frame waited: it is not delivered.
                None => Err(io::ErrorKind::BrokenPipe.into()),
                Some(w) => w
                    .write_all(frame)
                    .and_then(|()| w.flush())
                    .map(|()| frame.len()),
            }
        };
        // `close` found the writer busy (this write): drop it now that the write returned.
        if self.0.is_closed() {
            self.0.drop_writer();
        }
        result
    }
}

/// The blocking client's outstanding calls, uploads and permission requests.
pub(crate) type Pending = pending::Pending<Sender<Reply>, std::sync::mpsc::SyncSender<ImportEvent>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere never leaves these maps half-updated in a way that matters more than
    // stopping the client would: keep going with the inner value.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    pub(crate) fn pending(&self) -> MutexGuard<'_, Pending> {
        lock(&self.pending)
    }

    /// [`write`](Self::write) for what the caller sends: after every record a call handed to
    /// the writer thread before it (`host::detached`).
    pub(crate) fn write_in_order(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        self.accepting()?;
        self.detached.wait_idle();
        self.write(record)
    }

    /// `Err(InputClosed)` once `end_input` was called.
    pub(crate) fn accepting(&self) -> Result<(), HostError> {
        if self.ending.load(Ordering::SeqCst) {
            return Err(HostError::InputClosed);
        }
        Ok(())
    }

    /// Closes the agent's input now (it sees EOF once no write holds the pipe).
    pub(crate) fn close_input(&self) {
        self.pipe.close();
    }

    /// Encodes one input record as one validated line and writes it whole (or queues it
    /// behind the write another thread is doing, which then writes it).
    pub(crate) fn write(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        if self.pipe.is_closed() {
            return Err(HostError::InputClosed);
        }
        self.input
            .push_bounded(record)
            .map(drop)
            .map_err(|e| match e {
                PushError::Failed(f) => match f.kind() {
                    FailureKind::Output(_) if self.pipe.is_closed() => HostError::InputClosed,
                    _ => HostError::refused(f),
                },
                PushError::TooLarge => {
                    HostError::refused(EncoderFailure::record(RecordFault::TooLarge))
                }
                PushError::Full => HostError::Encode("agent input queue full"),
                PushError::Reentrant => {
                    HostError::Encode("agent input sent from inside its encoder")
                }
            })
    }
}

/// A running agent session seen from the host.
///
/// `Send + Sync`: share it by reference between threads (calls are correlated; records go to
/// whoever calls [`recv`](Client::recv)).
pub struct Client {
    pub(crate) shared: Arc<Shared>,
    child: Option<Child>,
    stderr: Option<StderrCapture>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("pid", &self.child.as_ref().map(Child::id))
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts `command` with piped stdio and begins reading its output.
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, Client, ClientOptions};
    /// let client = Client::spawn(&AgentCommand::stream_json("agentx"), ClientOptions::default())?;
    /// println!("agent pid {:?}", client.pid());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn spawn(command: &AgentCommand, options: ClientOptions) -> Result<Client, HostError> {
        let mut child = command.spawn_blocking()?;
        let (stdin, stdout) = pipes(child.stdin.take(), child.stdout.take())?;
        let cap = options.stderr_cap;
        let stderr = child.stderr.take().map(|e| capture_stderr(e, cap));
        let mut client = Client::attach(stdout, stdin, options);
        client.child = Some(child);
        client.stderr = stderr;
        Ok(client)
    }

    /// Drives an agent over existing pipes: `output` is what the agent writes, `input` what
    /// it reads.
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions};
    /// use agentx_wire::wire::OutputRecord;
    /// // An agent that wrote one record of a type this profile does not define, then ended.
    /// let output = std::io::Cursor::new(b"{\"type\":\"custom_event\",\"n\":1}\n".to_vec());
    /// let client = Client::attach(output, std::io::sink(), ClientOptions::default());
    /// let record = client.recv().expect("one record")?;
    /// assert!(matches!(record, OutputRecord::Unknown(_))); // kept, never a crash (WIRE-002)
    /// assert!(client.recv().is_none()); // the output ended
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn attach(
        output: impl Read + Send + 'static,
        input: impl Write + Send + 'static,
        options: ClientOptions,
    ) -> Client {
        let pipe = Arc::new(InputPipe {
            writer: Mutex::new(Some(Box::new(input))),
            closed: AtomicBool::new(false),
        });
        let shared = Arc::new(Shared {
            input: OutputFifo::new(PipeWriter(Arc::clone(&pipe))),
            pipe,
            pending: Mutex::new(Pending::new(options.profile)),
            handler: options.handler.clone(),
            capabilities: Mutex::new(None),
            next_upload: std::sync::atomic::AtomicU64::new(0),
            profile: options.profile,
            inbound: Inbound::new(
                Box::new(output),
                Output::new(options.max_line, options.profile),
                options.bound,
            ),
            detached: Detached::default(),
            ending: AtomicBool::new(false),
        });
        let helper_shared = Arc::clone(&shared);
        thread::spawn(move || helper_shared.inbound.helper(&Routes(&helper_shared)));
        Client {
            shared,
            child: None,
            stderr: None,
        }
    }

    /// The child's process id, when spawned (`None` for [`attach`](Client::attach)).
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions};
    /// let client = Client::attach(std::io::empty(), std::io::sink(), ClientOptions::default());
    /// assert_eq!(client.pid(), None);
    /// ```
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// `initialize` (fieldless): the typed response with providers, models and capabilities
    /// (checked against WIRE-024). Remembers `input_capabilities` for [`Client::upload`].
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, Client, ClientOptions};
    /// use std::time::Duration;
    /// let client = Client::spawn(&AgentCommand::stream_json("agentx"), ClientOptions::default())?;
    /// let init = client.initialize(Duration::from_secs(10))?;
    /// for p in &init.providers {
    ///     println!("{} selected={:?}", p.id, p.selected);
    /// }
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn initialize(&self, timeout: Duration) -> Result<InitializeResponse<'static>, HostError> {
        let payload = self.control(ControlRequestBody::Initialize(Initialize), timeout)?;
        let response = initialize_response(payload)?;
        *lock(&self.shared.capabilities) = response
            .input_capabilities
            .as_ref()
            .map(|c| c.attachments.clone());
        Ok(response)
    }

    /// `initialize` read in the lenient peer profile's view: the payload's common fields with
    /// open vocabularies as strings (models, account, `apiKeySource`), and the whole payload.
    /// For a CLI of the Claude Code family (whose response has no WIRE-024 catalog, so
    /// [`Client::initialize`] refuses it); it also reads agentx's.
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, Client, ClientOptions, PeerProfile};
    /// use std::time::Duration;
    /// let options = ClientOptions::default().peer_profile(PeerProfile::Lenient);
    /// let client = Client::spawn(&AgentCommand::stream_json("claude").arg("--verbose"), options)?;
    /// let init = client.initialize_peer(Duration::from_secs(30))?;
    /// for m in &init.fields.models {
    ///     println!("{} -> {:?}", m.value, m.resolved_model);
    /// }
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn initialize_peer(
        &self,
        timeout: Duration,
    ) -> Result<PeerInitializeResponse<'static>, HostError> {
        let payload = self.control(ControlRequestBody::Initialize(Initialize), timeout)?;
        peer_initialize_response(payload)
    }

    /// `interrupt`: acknowledged at once (WIRE-010); the turn's own result follows later in
    /// the record stream.
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, Client, ClientOptions};
    /// use std::time::Duration;
    /// let client = Client::spawn(&AgentCommand::stream_json("agentx"), ClientOptions::default())?;
    /// client.send_text("!sleep 60000")?;
    /// client.interrupt(Duration::from_secs(5))?; // acknowledged; the cancelled result follows
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn interrupt(&self, timeout: Duration) -> Result<(), HostError> {
        self.control(ControlRequestBody::Interrupt(Interrupt), timeout)
            .map(drop)
    }

    /// Any control request, correlated: the success payload (`None` when the response has
    /// none). On timeout the pending request is removed and one `control_cancel_request` is
    /// sent (WIRE-007); a late response is ignored.
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, Client, ClientOptions};
    /// use agentx_wire::wire::subtypes::{ControlRequestBody, GetContextUsage};
    /// use std::time::Duration;
    /// let client = Client::spawn(&AgentCommand::stream_json("agentx"), ClientOptions::default())?;
    /// let usage = client.control(
    ///     ControlRequestBody::GetContextUsage(GetContextUsage),
    ///     Duration::from_secs(5),
    /// )?;
    /// println!("{:?}", usage.map(|raw| String::from_utf8_lossy(raw.as_bytes()).into_owned()));
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn control(
        &self,
        body: ControlRequestBody<'_>,
        timeout: Duration,
    ) -> Result<Option<RawJson<'static>>, HostError> {
        let subtype = body.subtype().map_or("control", |s| s.as_str());
        self.shared.accepting()?;
        let deadline = Instant::now() + timeout;
        let (tx, rx) = mpsc::channel();
        // WIRE-006: registered on the broker before its envelope is written.
        let (id, records) =
            self.shared
                .pending()
                .calls
                .start(body.into_owned(), tx, Instant::now())?;
        // The helper reads while this call waits (unless a `recv` does).
        let _reading = self.shared.inbound.demand();
        // Written by the client's writer thread: an agent that stopped reading its stdin
        // holds the write, not this call (`host::detached`).
        if let Err(e) = write_by(&self.shared, records, deadline, subtype) {
            let cancels = self.shared.pending().calls.abandon(&id, Instant::now());
            if matches!(e, HostError::Timeout { .. }) && !cancels.is_empty() {
                // WIRE-007: the cancel follows the request, whenever that is written.
                let _ = hand_over(&self.shared, cancels);
            }
            return Err(e);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(reply) => reply,
            Err(RecvTimeoutError::Disconnected) => Err(HostError::StreamClosed),
            Err(RecvTimeoutError::Timeout) => {
                let cancels = self.shared.pending().calls.abandon(&id, Instant::now());
                if cancels.is_empty() {
                    // Settled while we timed out: take the answer.
                    return rx.try_recv().unwrap_or(Err(HostError::StreamClosed));
                }
                // WIRE-007: cancelled on the wire (without waiting for the write); the
                // known-late response is ignored.
                let _ = hand_over(&self.shared, cancels);
                Err(HostError::Timeout { subtype })
            }
        }
    }

    /// Sends a plain text user message (legacy string form, priority `next`).
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions};
    /// let client = Client::attach(std::io::empty(), std::io::sink(), ClientOptions::default());
    /// client.send_text("hello")?;
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn send_text(&self, text: &str) -> Result<(), HostError> {
        self.send_user(text_record(text, self.shared.profile))
    }

    /// Sends any user record (text, priority, attachments, uuid).
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions};
    /// use agentx_wire::wire::{user::Priority, UserRecord};
    /// let client = Client::attach(std::io::empty(), std::io::sink(), ClientOptions::default());
    /// let mut record = UserRecord::text("now, please".to_owned());
    /// record.priority = Some(Priority::Now);
    /// client.send_user(record)?;
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn send_user(&self, record: UserRecord<'_>) -> Result<(), HostError> {
        self.shared.write_in_order(&InputRecord::User(record))
    }

    /// Sends any input record as it is.
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions};
    /// use agentx_wire::wire::InputRecord;
    /// let client = Client::attach(std::io::empty(), std::io::sink(), ClientOptions::default());
    /// client.send(&InputRecord::KeepAlive)?;
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn send(&self, record: &InputRecord<'_>) -> Result<(), HostError> {
        self.shared.write_in_order(record)
    }

    /// The next output record, waiting for it; `None` once the agent's output ended and every
    /// record was taken. An undecodable line is an `Err` item and the stream goes on. When
    /// nothing is queued and nobody else reads, the agent's output is read on this thread.
    ///
    /// Records wait in memory until a `recv` takes them, without a bound of their own: the
    /// client reads the agent's output whether or not the caller attends it, so the agent is
    /// never stalled by the host (its permission requests and control responses flow, and a
    /// host writing input while it does not read cannot deadlock against a full output pipe).
    /// A host that stops calling `recv` while the agent streams therefore holds every record
    /// the agent writes meanwhile; each one is at most [`ClientOptions::max_line`] bytes on
    /// the wire.
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions};
    /// let output = std::io::Cursor::new(b"not json\n{\"type\":\"keep_alive\"}\n".to_vec());
    /// let client = Client::attach(output, std::io::sink(), ClientOptions::default());
    /// assert!(client.recv().unwrap().is_err()); // the bad line, reported
    /// assert_eq!(client.recv().unwrap()?.record_type(), "keep_alive");
    /// assert!(client.recv().is_none());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn recv(&self) -> Option<RecordItem> {
        self.shared.inbound.recv(&Routes(&self.shared))
    }

    /// Like [`recv`](Client::recv) with a deadline: `Ok(None)` once the output ended,
    /// [`HostError::Timeout`] (subtype `recv`) when nothing came in time.
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions};
    /// use std::time::Duration;
    /// let client = Client::attach(std::io::empty(), std::io::sink(), ClientOptions::default());
    /// assert!(client.recv_timeout(Duration::from_secs(5))?.is_none());
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Option<RecordItem>, HostError> {
        self.shared.inbound.recv_until(Instant::now() + timeout)
    }

    /// Ends the agent's input (it sees EOF) while the record stream stays readable.
    ///
    /// ```
    /// use agentx_io::host::{Client, ClientOptions, HostError};
    /// let client = Client::attach(std::io::empty(), std::io::sink(), ClientOptions::default());
    /// client.end_input();
    /// assert!(matches!(client.send_text("late"), Err(HostError::InputClosed)));
    /// ```
    pub fn end_input(&self) {
        self.shared.ending.store(true, Ordering::SeqCst);
        detached::end_input(&self.shared);
    }

    /// Ends input, waits up to `timeout` for the agent to exit (then kills it), and returns its
    /// status and stderr. Records not yet received are dropped: drain [`recv`](Client::recv)
    /// first to keep them.
    ///
    /// ```no_run
    /// use agentx_io::host::{AgentCommand, Client, ClientOptions};
    /// use std::time::Duration;
    /// let client = Client::spawn(&AgentCommand::stream_json("agentx"), ClientOptions::default())?;
    /// let report = client.close(Duration::from_secs(10))?;
    /// assert!(report.success(), "agentx exited with {:?}", report.status);
    /// # Ok::<(), agentx_io::host::HostError>(())
    /// ```
    pub fn close(mut self, timeout: Duration) -> Result<ExitReport, HostError> {
        self.end_input();
        // The agent may still be writing: its output is read (and dropped) until it ends.
        self.shared.inbound.drain();
        let status = match self.child.take() {
            None => None,
            Some(mut child) => Some(wait_or_kill(&mut child, timeout)?),
        };
        let stderr = self
            .stderr
            .take()
            .map(|c| c.finish(STDERR_GRACE))
            .unwrap_or_default();
        Ok(ExitReport { status, stderr })
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.end_input();
        // The helper reads to the end (the killed agent's EOF) and exits.
        self.shared.inbound.drain();
        if let Some(mut child) = self.child.take() {
            if matches!(child.try_wait(), Ok(None)) {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// Waits for `child` up to `timeout`; kills it after that.
fn wait_or_kill(child: &mut Child, timeout: Duration) -> io::Result<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            return child.wait();
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// The blocking client's answers to what its read side routes.
pub(crate) struct Routes<'s>(pub(crate) &'s Arc<Shared>);

impl Route for Routes<'_> {
    fn control_response(&self, response: &ControlResponse<'_>) {
        self.0.pending().calls.on_response(response, Instant::now());
    }

    fn control_request(&self, request: ControlRequest<'static>) {
        on_agent_request(request, self.0);
    }

    fn control_cancel(&self, request_id: &str) {
        self.0.pending().permission_cancelled(request_id);
    }

    fn import(&self, upload_id: &str, event: ImportEvent) {
        self.0.pending().import(upload_id, event);
    }

    fn end(&self) {
        self.0.pending().end(Instant::now());
    }
}

/// An agent → host control request: `can_use_tool` goes to the callback on its own thread;
/// anything else gets the generic unsupported-control error.
fn on_agent_request(r: ControlRequest<'static>, shared: &Arc<Shared>) {
    let request = match classify(r) {
        AgentRequest::Answer(record) => {
            let _ = shared.write(&record);
            return;
        }
        AgentRequest::Permission(request) => request,
    };
    let started = shared.pending().permission_started(&request.request_id);
    match started {
        Started::Decide => {}
        Started::Ended => return,
        Started::Full => {
            if let Some(record) = too_many(&request) {
                let _ = shared.write(&record);
            }
            return;
        }
    }
    let shared = Arc::clone(shared);
    thread::spawn(move || {
        let decided = decide(shared.handler.as_deref(), &request);
        if !shared.pending().permission_decided(&request.request_id) {
            return;
        }
        if let Some(record) = answer(&request, decided) {
            let _ = shared.write(&record);
        }
    });
}
