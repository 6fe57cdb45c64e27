//! The driver loop: one thread owns the [`Session`] and feeds it every [`Event`] with the real
//! clock; it writes the session's validated frames (only those) to the [`RecordWriter`] (the
//! driver layer's one frame sink, contained as the FIFO's is, WIRE-015), its
//! diagnostics to stderr, and carries out its [`Action`]s with the model runner, the tool and
//! hook workers and the session store.
//!
//! Backpressure: frames are written synchronously, so a host that stops reading stdout blocks
//! this loop; then input lines stop being consumed and stdin is no longer read (the loop reads
//! it only while it waits, a stdin thread stops at its line budget, a provider thread at its
//! model budget): memory stays bounded.

use std::time::Instant;

use agentx_core::model::TurnId;
use agentx_core::session::{Action, Attachments, Session};
use agentx_io::RecordWriter;
use agentx_io::{flush_writer, write_frame};
use agentx_wire::encode::{EncoderFailure, FailureKind, OutputFault};

use super::event::{spawn_signals, Budget, Event};
use super::inbox::Inbox;
use super::model::{ModelCall, ModelSink};
use super::persist::Persister;
use super::startup::Startup;
use super::workers::Workers;

/// At most this many model events already waiting in the channel are handled before the
/// loop writes their frames (one burst of a provider's HTTP chunk; bounded so stdin and
/// other events are not starved).
const MODEL_BATCH: usize = 256;

/// PROFILE §2: a broken stdout pipe ends quietly with status 1; any other writer failure is
/// the latched diagnostic of PROFILE §5.
/// Writes the session's pending diagnostics to stderr and its frames to `sink`, in order.
fn drain_output(session: &mut Session, sink: &mut dyn RecordWriter) -> Result<(), EncoderFailure> {
    while let Some(d) = session.poll_diagnostic() {
        eprintln!("{d}");
    }
    while let Some(f) = session.poll_transmit() {
        write_frame(sink, &f)?;
    }
    Ok(())
}

#[cold]
fn output_failed(f: EncoderFailure) -> i32 {
    if f.kind() != FailureKind::Output(OutputFault::BrokenPipe) {
        eprintln!("agentx: output failed: the record writer failed");
    }
    1
}

/// Whether an input line may be a `user` record (its bytes hold `"user"`): a cheap filter, so
/// a flood of other records does not retry a failing store once per line.
fn may_be_user_record(line: &[u8]) -> bool {
    line.windows(6).any(|w| w == b"\"user\"")
}

/// Runs a session over `inbox`'s input until it exits; returns the exit status. With `defer_eof`
/// (one-shot mode, whose input is only the prompt) the input's EOF is handed to the session
/// only once it is idle, so the turn runs as without a host (PROFILE §13: ask = deny
/// `no permission prompt available`) rather than as after a closed control stream.
pub fn run_loop(
    startup: Startup,
    mut inbox: Inbox,
    sink: &mut dyn RecordWriter,
    attachments: Option<Box<dyn Attachments>>,
    defer_eof: bool,
) -> i32 {
    let Startup {
        config,
        home,
        cwd,
        selection,
        hook,
        mut model,
        store,
        persist: store_turns,
        notices: _,
    } = startup;
    let mut persist = Persister::new(home, store);
    let session_add_dirs = config.add_dirs.clone();
    let mcp_connect_timeout = config.mcp.connect_timeout;
    let sdk_profile = config.profile == agentx_core::session::Profile::Sdk;
    // PROFILE §17: a resumed session's todo list is its last successful TodoWrite's input.
    let todos =
        crate::tools::todo::TodoList::new(crate::tools::todo::from_history(&config.history));
    let mut session = match Session::new(config, Instant::now()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("agentx: {e}");
            return 1;
        }
    };
    if let Some(a) = attachments {
        session.set_attachments(a);
    }
    let tx = inbox.sender();
    spawn_signals(tx.clone());
    let mut mcp = crate::mcp::Clients::new(
        tx.clone(),
        cwd.clone(),
        &session_add_dirs,
        mcp_connect_timeout,
    )
    .with_elicitation(sdk_profile);
    let mut workers = Workers::new(tx.clone(), cwd, hook, todos);
    let mut calls: Vec<(TurnId, Box<dyn ModelCall>)> = Vec::new();
    let model_budget = Budget::model_events();
    let mut input_closed = false;
    let mut eof_pending = false;
    // An event received while batching model events, handled next.
    let mut lookahead: Option<Event> = None;

    loop {
        if eof_pending && !session.turn_active() && session.queued_user_records() == 0 {
            eof_pending = false;
            session.handle_eof(Instant::now());
        }
        // Frames and actions in the session's order until nothing moves, then one flush: a
        // finished turn's result and `idle` are held back by the session until its
        // `Action::Persist` is taken, and that persist (append + fsync) is done before the
        // next frames are handed over (PROFILE §11 "durable before idle"). Frames before it
        // may still sit in the sink's buffer: they are written with the rest of the drain,
        // so a drain is still one write.
        let mut exit = None;
        let mut started_model = false;
        loop {
            if let Err(e) = drain_output(&mut session, sink) {
                workers.kill_all();
                mcp.shut_down();
                return output_failed(e);
            }
            let mut persisted = false;
            while let Some(action) = session.poll_action() {
                match action {
                    Action::StartModel(request) => {
                        started_model = true;
                        let turn = request.turn;
                        // Calls of earlier turns are over (their results were written).
                        calls.retain(|(t, _)| *t == turn);
                        let sink = ModelSink::new(turn, tx.clone(), model_budget.clone());
                        let call = model.start(request, sink);
                        calls.push((turn, call));
                    }
                    Action::CancelModel { turn } => {
                        for (_, c) in calls.iter().filter(|(t, _)| *t == turn) {
                            c.cancel();
                        }
                    }
                    Action::ResumeModel { turn, decision } => {
                        if let Some((_, c)) = calls.iter().rev().find(|(t, _)| *t == turn) {
                            c.network_decision(decision);
                        }
                    }
                    Action::RunTool {
                        tool_use_id,
                        name,
                        input_json,
                    } => workers.run_tool(tool_use_id, &name, &input_json),
                    Action::CancelTool { tool_use_id } => {
                        if !mcp.cancel(&tool_use_id, "interrupted") {
                            workers.cancel_tool(&tool_use_id)
                        }
                    }
                    Action::McpConnect {
                        name,
                        epoch,
                        server,
                    } => {
                        // Scenario 8 (PROFILE §18): the frames before this connection (an
                        // `mcp_set_servers` response) reach stdout before its process starts.
                        if let Err(e) = flush_writer(sink) {
                            workers.kill_all();
                            mcp.shut_down();
                            return output_failed(e);
                        }
                        mcp.connect(name, epoch, server)
                    }
                    Action::McpClose { name } => mcp.close(&name),
                    Action::McpElicitationAnswer {
                        name,
                        epoch,
                        key,
                        result,
                    } => mcp.answer_elicitation(&name, epoch, key, &result),
                    Action::McpCall {
                        tool_use_id,
                        server,
                        tool,
                        input_json,
                        timeout_ms,
                    } => mcp.call(tool_use_id, &server, &tool, &input_json, timeout_ms),
                    Action::StartHook {
                        tool_use_id,
                        session_id,
                        tool_name,
                        input_json,
                    } => workers.start_hook(tool_use_id, session_id, tool_name, input_json),
                    Action::KillHook { tool_use_id } => workers.kill_hook(&tool_use_id),
                    Action::UpdateEnvironment { variables } => workers.update_env(variables),
                    Action::ConnectMcpServer { .. } => {}
                    // `--no-session-persistence` (PROFILE §15): nothing is stored; the held
                    // frames are released all the same.
                    Action::Persist { .. } if !store_turns => persisted = true,
                    Action::Persist { lines, .. } => {
                        persist.turn(&lines, session.session_id(), &selection);
                        session.set_store_unavailable(persist.unavailable());
                        persisted = true;
                    }
                    Action::Exit { code } => exit = Some(code),
                }
            }
            // Only a persist releases frames; no other action feeds the session.
            if !persisted {
                break;
            }
        }
        if let Some(code) = exit {
            persist.retry(session.session_id(), &selection);
            workers.kill_all();
            for (_, c) in &calls {
                c.cancel();
            }
            let flushed = flush_writer(sink);
            // PROFILE §18 "Shutdown": after the last record is stored and written.
            mcp.shut_down();
            return match flushed {
                Ok(()) => code,
                Err(e) => output_failed(e),
            };
        }
        // A model that answered inside `start` (the built-in echo) already queued its events:
        // they are handled before this drain's frames (`running`) are written, so the turn
        // reaches the host in one write (one wake-up of its reader) instead of two. Once per
        // started model, and only for an event already waiting: a frame never waits for a
        // later one.
        let held = started_model
            && lookahead.is_none()
            && match inbox.try_next() {
                Some(e) => {
                    lookahead = Some(e);
                    true
                }
                None => false,
            };
        if !held {
            if let Err(e) = flush_writer(sink) {
                workers.kill_all();
                mcp.shut_down();
                return output_failed(e);
            }
        }

        let deadline = session.poll_timeout();
        let event = match lookahead.take() {
            Some(e) => Some(e),
            None => inbox.next(deadline),
        };
        let now = Instant::now();
        // A deadline that passed is handled first even when an event came with it (input
        // that never pauses, a read-ahead or a provider's burst being drained): a timeout
        // never waits for a quiet moment.
        if event.is_none() || deadline.is_some_and(|t| t <= now) {
            session.handle_timeout(now);
        }
        let Some(event) = event else {
            continue;
        };
        match event {
            Event::Line(bytes, number) => {
                if persist.unavailable().is_some() && may_be_user_record(&bytes) {
                    // PROFILE §11: the store is retried at the next prompt.
                    persist.retry(session.session_id(), &selection);
                    session.set_store_unavailable(persist.unavailable());
                }
                if !input_closed {
                    session.handle_line(&bytes, number, now);
                }
                inbox.release(bytes.len());
            }
            Event::FrameError(e) => {
                if !input_closed {
                    session.handle_frame_error(&e, now);
                }
            }
            Event::Eof if defer_eof && !input_closed => {
                input_closed = true;
                eof_pending = true;
            }
            // PROFILE §8 Signals: EOF, and the active turn interrupted; queued prompts are
            // refused. The exit follows within 2 s whatever a tool or model server does: the
            // interrupt settles the turn at once, and its killed tools are not waited for.
            // PROFILE §18: every MCP call in flight gets `notifications/cancelled`.
            Event::Terminate => {
                mcp.cancel_all("agentx is terminating");
                input_closed = true;
                eof_pending = false;
                session.handle_terminate(now);
            }
            Event::Eof | Event::StdinFailed => {
                if !input_closed || eof_pending {
                    input_closed = true;
                    eof_pending = false;
                    session.handle_eof(now);
                }
            }
            Event::Interrupt => session.handle_signal_interrupt(now),
            Event::Model(turn, e, weight) => {
                session.handle_model(turn, e, now);
                // The burst's budget is given back once, after it.
                let mut handled = weight;
                // The rest of a provider's burst, in arrival order, before the frames are
                // written (one write for the burst); any other event waits in `lookahead`.
                for _ in 1..MODEL_BATCH {
                    match inbox.try_recv() {
                        Some(Event::Model(turn, e, weight)) => {
                            session.handle_model(turn, e, Instant::now());
                            handled += weight;
                        }
                        Some(other) => {
                            lookahead = Some(other);
                            break;
                        }
                        None => break,
                    }
                }
                model_budget.release(handled);
            }
            Event::ToolDone(id, outcome) => session.handle_tool_done(&id, outcome, now),
            Event::HookDone(id, outcome) => session.handle_hook_done(&id, outcome, now),
            Event::Diagnostic(d) => eprintln!("{d}"),
            Event::McpServer(name, epoch, report) => {
                session.handle_mcp_server(&name, epoch, report, now)
            }
        }
    }
}
