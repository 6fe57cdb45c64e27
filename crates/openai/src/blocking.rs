//! The providers for a thread-based caller (the `agentx` binary): a [`BlockingClient`] that
//! owns a current-thread tokio runtime and runs calls on the calling thread, and an
//! [`Interrupt`] that any thread can trigger.
//!
//! Cancellation closes the socket (PROFILE §14: "the server sees it"). On a current-thread
//! runtime hyper's connection task only runs while some call is inside `block_on`, so dropping
//! the response alone would leave the socket open until the next call. A cancelled call
//! therefore shuts its runtime down (dropping every connection task, and with it every socket)
//! *before* it reports [`ModelEvent::Cancelled`]; the next call builds a fresh runtime and
//! reqwest client (the pool of the old one went with its runtime). A call whose message ended
//! before its response did (cut at the mapper's bounds) is shut down the same way, after its
//! last event. Calls that end otherwise keep the runtime, so pooled keep-alive connections are
//! reused.
//!
//! Must never: spawn threads of its own (besides the caller-requested [`BlockingClient::spawn`])
//! or keep a cancelled call's connection open.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use agentx_core::model::{BlobSource, ModelEvent, ModelRequest, NoBlobs};
use agentx_wire::wire::output::AssistantError;

use super::client::{CallEnd, Client, ClientError, Report};
use super::endpoint::{Endpoint, EndpointError};
use agentx_core::registry::{Pricing, Provider};

/// The caller's interrupt: clone it, hand one to the call, trigger another from any thread.
/// Once triggered it stays triggered until [`Interrupt::reset`].
#[derive(Clone, Debug)]
pub struct Interrupt(Arc<watch::Sender<bool>>);

impl Default for Interrupt {
    fn default() -> Interrupt {
        Interrupt::new()
    }
}

impl Interrupt {
    /// A switch not yet triggered.
    pub fn new() -> Interrupt {
        Interrupt(Arc::new(watch::Sender::new(false)))
    }

    /// Interrupts the call in progress (or the next one, if none is running).
    pub fn trigger(&self) {
        self.0.send_replace(true);
    }

    /// Whether the switch was triggered.
    pub fn is_triggered(&self) -> bool {
        *self.0.borrow()
    }

    /// Clears the trigger before the next call.
    pub fn reset(&self) {
        self.0.send_replace(false);
    }

    /// Completes once triggered.
    pub async fn triggered(&self) {
        let mut rx = self.0.subscribe();
        // The sender lives in `self`, so `wait_for` cannot see a closed channel.
        let _ = rx.wait_for(|v| *v).await;
    }
}

/// A runtime and the reqwest client whose connection tasks live on it: built and discarded
/// together (a client must not outlive the runtime of its pool).
#[derive(Debug)]
struct Engine {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

impl Engine {
    fn new(
        endpoint: &Endpoint,
        blobs: &Arc<dyn BlobSource>,
        pricing: Option<Pricing>,
    ) -> Result<Engine, ClientError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(ClientError::runtime)?;
        // reqwest's client must be built inside a runtime context for its connector.
        let client = {
            let _guard = runtime.enter();
            Client::new(endpoint.clone())?
                .with_blobs(Arc::clone(blobs))
                .with_pricing(pricing)
        };
        Ok(Engine { runtime, client })
    }

    /// Drops the client, then every task of the runtime (connection tasks and their sockets)
    /// on this thread, without waiting for a blocking DNS lookup still running.
    fn shut_down(self) {
        drop(self.client);
        self.runtime.shutdown_background();
    }
}

/// A [`Client`] with its own current-thread runtime.
pub struct BlockingClient {
    endpoint: Endpoint,
    /// Where attachment bytes are read (PROFILE §14).
    blobs: Arc<dyn BlobSource>,
    /// PROFILE §19: the operator's prices, applied to every completed request.
    pricing: Option<Pricing>,
    /// The engine calls use; `None` after a cancellation discarded it (rebuilt on demand).
    engine: Mutex<Option<Arc<Engine>>>,
}

impl std::fmt::Debug for BlockingClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingClient")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl BlockingClient {
    /// A client for `endpoint` with the PROFILE §14 timeouts.
    pub fn new(endpoint: Endpoint) -> Result<BlockingClient, ClientError> {
        BlockingClient::with_blobs(endpoint, Arc::new(NoBlobs))
    }

    /// A client whose requests read attachment bytes from `blobs` (PROFILE §14).
    pub fn with_blobs(
        endpoint: Endpoint,
        blobs: Arc<dyn BlobSource>,
    ) -> Result<BlockingClient, ClientError> {
        // Built now so a TLS setup failure is a startup error, not a failed first turn.
        BlockingClient::priced(endpoint, blobs, None)
    }

    /// A client reading blobs from `blobs` that prices every completed request with the
    /// operator's table (PROFILE §19; `None`: every cost is unknown, WIRE-012).
    pub fn priced(
        endpoint: Endpoint,
        blobs: Arc<dyn BlobSource>,
        pricing: Option<Pricing>,
    ) -> Result<BlockingClient, ClientError> {
        // Built now so a TLS setup failure is a startup error, not a failed first turn.
        let engine = Engine::new(&endpoint, &blobs, pricing)?;
        Ok(BlockingClient {
            endpoint,
            blobs,
            pricing,
            engine: Mutex::new(Some(Arc::new(engine))),
        })
    }

    /// The client of a selected `openai` / `azure_openai` provider, or the startup diagnostic
    /// (PROFILE §14: naming the JSON path `providers[index].<field>`, never a value).
    pub fn for_provider(provider: &Provider, index: usize) -> Result<BlockingClient, String> {
        let endpoint = Endpoint::of(provider).map_err(|e| startup_diagnostic(index, e))?;
        BlockingClient::new(endpoint).map_err(|e| e.to_string())
    }

    /// Runs one call on a new thread; `sink` gets every report there. The thread ends with
    /// the call (after its terminal event).
    pub fn spawn(
        self: &Arc<Self>,
        request: ModelRequest,
        interrupt: Interrupt,
        mut sink: impl FnMut(Report) + Send + 'static,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        let client = Arc::clone(self);
        std::thread::Builder::new()
            .name("agentx-provider".into())
            .spawn(move || client.call(&request, &interrupt, &mut sink))
    }

    /// Runs one call to its end on this thread (see [`Client::call`]); `interrupt` triggered
    /// from another thread cancels it. When it is cancelled, its connection is closed before
    /// [`ModelEvent::Cancelled`] reaches `sink`.
    pub fn call(
        &self,
        request: &ModelRequest,
        interrupt: &Interrupt,
        sink: &mut dyn FnMut(Report),
    ) {
        let engine = match self.engine() {
            Ok(e) => e,
            Err(_) => {
                // The runtime or TLS setup failed when rebuilding: the call fails (the
                // error's text is not a provider message and is not shown).
                sink(Report::Event(ModelEvent::Failed {
                    category: AssistantError::Unknown,
                    message: None,
                }));
                return;
            }
        };
        let mut cancelled = false;
        let end = engine.runtime.block_on(engine.client.call(
            request,
            interrupt.triggered(),
            &mut |report| match report {
                Report::Event(ModelEvent::Cancelled) => cancelled = true,
                other => sink(other),
            },
        ));
        if cancelled {
            self.discard(engine);
            sink(Report::Event(ModelEvent::Cancelled));
        } else if end == CallEnd::BodyLeftOpen {
            // A response cut at the mapper's bounds: its socket is closed like a cancelled
            // call's, so the server stops sending.
            self.discard(engine);
        }
    }

    /// The current engine, built if a cancellation discarded the last one.
    fn engine(&self) -> Result<Arc<Engine>, ClientError> {
        let mut slot = self.engine.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = slot.as_ref() {
            return Ok(Arc::clone(e));
        }
        let e = Arc::new(Engine::new(&self.endpoint, &self.blobs, self.pricing)?);
        *slot = Some(Arc::clone(&e));
        Ok(e)
    }

    /// Takes `engine` out of use and shuts it down now if no other call holds it (a call
    /// still running on it keeps driving its tasks, so the dropped connection closes there,
    /// and the engine goes down when that call lets go of it).
    fn discard(&self, engine: Arc<Engine>) {
        {
            let mut slot = self.engine.lock().unwrap_or_else(|e| e.into_inner());
            if slot.as_ref().is_some_and(|e| Arc::ptr_eq(e, &engine)) {
                *slot = None;
            }
        }
        if let Ok(engine) = Arc::try_unwrap(engine) {
            engine.shut_down();
        }
    }
}

/// `invalid registry: auth.json providers[i].<field>: <rule>`, the registry's diagnostic shape.
pub fn startup_diagnostic(index: usize, error: EndpointError) -> String {
    match error {
        EndpointError::Transport { field } | EndpointError::Unusable { field } => {
            format!("invalid registry: auth.json providers[{index}].{field}: {error}")
        }
        EndpointError::NotHttp => {
            format!("invalid registry: auth.json providers[{index}]: {error}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentx_core::model::{Message, ModelEvent};

    #[test]
    fn startup_diagnostics_name_the_path_never_the_value() {
        let doc = br#"{"version":2,"providers":[{"id":"s","type":"scripted","model":"m"},{"id":"o","type":"openai","model":"m","api_key":"k","base_url":"ftp://SENTINEL/"}]}"#;
        let registry = agentx_core::registry::parse_auth_json(doc, &|_| None).unwrap();
        let err = BlockingClient::for_provider(&registry.providers()[1], 1).unwrap_err();
        assert_eq!(
            err,
            "invalid registry: auth.json providers[1].base_url: base_url must be an https:// URL \
             (plain http:// only to 127.0.0.1, localhost or [::1]) (PROFILE §14)"
        );
        let err = BlockingClient::for_provider(&registry.providers()[0], 0).unwrap_err();
        assert_eq!(
            err,
            "invalid registry: auth.json providers[0]: the provider has no HTTP endpoint"
        );
    }

    #[test]
    fn a_triggered_interrupt_cancels_before_any_connection() {
        // Port 9 on loopback: nothing is contacted because the interrupt is already set.
        let endpoint =
            Endpoint::from_parts("http://127.0.0.1:9/v1/chat/completions", vec![]).unwrap();
        let client = Arc::new(BlockingClient::new(endpoint).unwrap());
        let interrupt = Interrupt::new();
        interrupt.trigger();
        assert!(interrupt.is_triggered());
        let (tx, rx) = std::sync::mpsc::channel();
        let request = ModelRequest {
            turn: 1,
            index: 0,
            model: "m".into(),
            effort: None,
            messages: vec![Message::user("x")].into(),
            tools: vec![],
            system: None,
            output_schema: None,
        };
        client
            .spawn(request, interrupt.clone(), move |r| tx.send(r).unwrap())
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(
            rx.try_iter().collect::<Vec<_>>(),
            vec![Report::Event(ModelEvent::Cancelled)]
        );
        interrupt.reset();
        assert!(!interrupt.is_triggered());
    }
}
