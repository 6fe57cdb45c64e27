//! The providers for a thread-based caller (the `agentx` binary): a [`BlockingClient`] that
//! owns a current-thread tokio runtime and runs one call at a time on the calling thread, and
//! an [`Interrupt`] that any thread can trigger.
//!
//! Must never: spawn threads of its own or outlive the call it runs (the runtime is idle
//! between calls; dropping the client closes its pooled connections).

use std::sync::Arc;

use tokio::sync::watch;

use crate::model::ModelRequest;

use super::client::{Client, ClientError, Report};
use super::endpoint::Endpoint;

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
    pub fn new() -> Interrupt {
        Interrupt(Arc::new(watch::Sender::new(false)))
    }

    /// Interrupts the call in progress (or the next one, if none is running).
    pub fn trigger(&self) {
        self.0.send_replace(true);
    }

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

/// A [`Client`] with its own current-thread runtime.
#[derive(Debug)]
pub struct BlockingClient {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

impl BlockingClient {
    /// A client for `endpoint` with the PROFILE §14 timeouts.
    pub fn new(endpoint: Endpoint) -> Result<BlockingClient, ClientError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(ClientError::runtime)?;
        // reqwest's client must be built inside a runtime context for its connector.
        let client = {
            let _guard = runtime.enter();
            Client::new(endpoint)?
        };
        Ok(BlockingClient { runtime, client })
    }

    /// Runs one call to its end on this thread (see [`Client::call`]); `interrupt` triggered
    /// from another thread cancels it.
    pub fn call(
        &self,
        request: &ModelRequest,
        interrupt: &Interrupt,
        sink: &mut dyn FnMut(Report),
    ) {
        self.runtime
            .block_on(self.client.call(request, interrupt.triggered(), sink));
    }
}
