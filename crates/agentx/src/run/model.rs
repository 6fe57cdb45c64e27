//! The model runner: how the `agentx` driver runs one model call on real time, whatever the
//! model is.
//!
//! A [`ModelRunner`] starts a call for a [`ModelRequest`] and reports its events through a
//! [`ModelSink`] (from any thread, in order); the returned [`ModelCall`] handle cancels it or
//! answers its `!network` request. The scripted model ([`ScriptedRunner`]: the sans-IO
//! [`ScriptRun`] polled with `Instant::now()`) runs inside `start` while it has events ready,
//! and only a call that must wait goes on on a thread of its own, sleeping on its control
//! channel until the next wake-up. An HTTP provider implements the same trait
//! with its own runtime inside (`driver::openai::BlockingClient` on a thread per call, see
//! [`HttpRunner`] under the `openai` feature).

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Instant;

use agentx_core::model::scripted::{ScriptRun, ScriptedModel, Step};
use agentx_core::model::{ModelEvent, ModelRequest, NetworkDecision, TurnId};

use super::event::{model_event_weight, Budget, Event, EventSender};

/// Where a call reports: its events and provider warnings, tagged with its turn.
#[derive(Clone)]
pub struct ModelSink {
    turn: TurnId,
    tx: EventSender,
    budget: Budget,
}

impl std::fmt::Debug for ModelSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSink")
            .field("turn", &self.turn)
            .finish()
    }
}

impl ModelSink {
    pub(crate) fn new(turn: TurnId, tx: EventSender, budget: Budget) -> ModelSink {
        ModelSink { turn, tx, budget }
    }

    /// Reports one event from the loop's own thread (the scripted model inside `start`),
    /// which must never wait for the loop; false when the driver is gone (stop the call).
    pub fn send(&self, event: ModelEvent) -> bool {
        self.tx.send(Event::Model(self.turn, event, 0)).is_ok()
    }

    /// Reports one event from a call's own thread: first waits while the loop is more than
    /// [`MAX_MODEL_BYTES_IN_FLIGHT`](super::event::MAX_MODEL_BYTES_IN_FLIGHT) behind, so a
    /// provider's stream waits in its socket rather than in memory. False when the driver is
    /// gone.
    pub fn send_paced(&self, event: ModelEvent) -> bool {
        let weight = model_event_weight(&event);
        self.budget.acquire(weight);
        match self.tx.send(Event::Model(self.turn, event, weight)) {
            Ok(()) => true,
            Err(_) => {
                self.budget.release(weight);
                false
            }
        }
    }

    /// One stderr line (a provider retry warning, PROFILE §14); never a credential.
    pub fn warn(&self, line: String) {
        let _ = self.tx.send(Event::Diagnostic(line));
    }
}

/// Starts model calls.
pub trait ModelRunner: Send {
    /// Starts `request`; its events go to `sink`, ending as the model interface says
    /// (`MessageStop`, `Failed` or `Cancelled`, then a scripted model's task events).
    fn start(&mut self, request: ModelRequest, sink: ModelSink) -> Box<dyn ModelCall>;
}

/// A running call.
pub trait ModelCall: Send {
    /// Cancels the call: it ends with `Cancelled` (if its message was still open).
    fn cancel(&self);
    /// Answers the call's pending `NetworkAccess`.
    fn network_decision(&self, decision: NetworkDecision);
}

/// The scripted model `agentx-echo` (PROFILE §9) on real time: inside `start` while it has
/// events ready, on a thread of its own once a call has to wait.
pub struct ScriptedRunner {
    model: ScriptedModel,
}

impl ScriptedRunner {
    /// A runner of the scripted model (`agentx-echo`).
    pub fn new(model: ScriptedModel) -> ScriptedRunner {
        ScriptedRunner { model }
    }
}

enum Control {
    Cancel,
    Network(NetworkDecision),
}

struct ScriptedCall(Sender<Control>);

/// A call that ran to its end inside `start`: nothing is left to cancel or answer.
struct FinishedCall;

impl ModelCall for FinishedCall {
    fn cancel(&self) {}

    fn network_decision(&self, _: NetworkDecision) {}
}

impl ModelCall for ScriptedCall {
    fn cancel(&self) {
        let _ = self.0.send(Control::Cancel);
    }

    fn network_decision(&self, decision: NetworkDecision) {
        let _ = self.0.send(Control::Network(decision));
    }
}

impl ModelRunner for ScriptedRunner {
    fn start(&mut self, request: ModelRequest, sink: ModelSink) -> Box<dyn ModelCall> {
        let mut run = self.model.start(&request, Instant::now());
        // A reply with nothing to wait for (an echo, `!say`, `!tool`...) is polled to its end
        // right here: its events go to the same channel in the same order, and no thread is
        // started and joined per turn. A call that has to wait (`!sleep`, `!task`,
        // `!network`) goes on on a thread of its own.
        loop {
            match run.poll(Instant::now()) {
                Step::Event(e) => {
                    if !sink.send(e) {
                        return Box::new(FinishedCall);
                    }
                }
                Step::Done => return Box::new(FinishedCall),
                Step::Pending(_) => break,
            }
        }
        let (tx, rx) = mpsc::channel();
        let fallback = sink.clone();
        let spawned = std::thread::Builder::new()
            .name("agentx-echo".into())
            .spawn(move || drive_script(run, &rx, &sink));
        if spawned.is_err() {
            // No thread: fail the call rather than hang the turn.
            fallback.send(ModelEvent::Failed {
                category: agentx_wire::wire::output::AssistantError::Unknown,
                message: None,
            });
        }
        Box::new(ScriptedCall(tx))
    }
}

fn drive_script(mut run: ScriptRun, control: &Receiver<Control>, sink: &ModelSink) {
    loop {
        // Controls that arrived meanwhile apply before the next step.
        while let Ok(c) = control.try_recv() {
            apply(&mut run, c);
        }
        match run.poll(Instant::now()) {
            Step::Event(e) => {
                if !sink.send_paced(e) {
                    return;
                }
            }
            Step::Done => return,
            Step::Pending(wake) => {
                let got = match wake {
                    Some(t) => control.recv_timeout(t.saturating_duration_since(Instant::now())),
                    None => control.recv().map_err(|_| RecvTimeoutError::Disconnected),
                };
                match got {
                    Ok(c) => apply(&mut run, c),
                    Err(RecvTimeoutError::Timeout) => {}
                    // The driver dropped the handle: nobody listens any more.
                    Err(RecvTimeoutError::Disconnected) => run.cancel(),
                }
            }
        }
    }
}

fn apply(run: &mut ScriptRun, c: Control) {
    match c {
        Control::Cancel => run.cancel(),
        Control::Network(d) => run.network_decision(d, Instant::now()),
    }
}

pub use http::HttpRunner;

mod http {
    //! The `openai` / `azure_openai` providers (PROFILE §14) behind [`ModelRunner`]: each call
    //! runs `BlockingClient::call` (a current-thread tokio runtime inside) on its own thread.

    use std::sync::Arc;

    use super::{ModelCall, ModelRunner, ModelSink};
    use agentx_core::model::{ModelEvent, ModelRequest, NetworkDecision};
    use agentx_openai::{BlockingClient, Interrupt, Report};
    use agentx_wire::wire::output::AssistantError;

    /// Runs calls of an HTTP provider (PROFILE §14), each on a thread of its own with the blocking client.
    pub struct HttpRunner {
        client: Arc<BlockingClient>,
    }

    impl HttpRunner {
        /// A runner sharing one client between calls.
        pub fn new(client: BlockingClient) -> HttpRunner {
            HttpRunner {
                client: Arc::new(client),
            }
        }
    }

    struct HttpCall(Interrupt);

    impl ModelCall for HttpCall {
        fn cancel(&self) {
            self.0.trigger();
        }
        fn network_decision(&self, _decision: NetworkDecision) {}
    }

    impl ModelRunner for HttpRunner {
        fn start(&mut self, request: ModelRequest, sink: ModelSink) -> Box<dyn ModelCall> {
            let interrupt = Interrupt::new();
            let call_interrupt = interrupt.clone();
            let client = Arc::clone(&self.client);
            let fallback = sink.clone();
            let spawned = std::thread::Builder::new()
                .name("agentx-http".into())
                .spawn(move || {
                    client.call(&request, &call_interrupt, &mut |report| match report {
                        Report::Event(e) => {
                            sink.send_paced(e);
                        }
                        Report::Warn(line) => sink.warn(line),
                    });
                });
            if spawned.is_err() {
                // No thread: fail the call rather than hang the turn.
                fallback.send(ModelEvent::Failed {
                    category: AssistantError::Unknown,
                    message: None,
                });
            }
            Box::new(HttpCall(interrupt))
        }
    }
}
