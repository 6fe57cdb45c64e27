//! The `agentx` endpoint driver (PROFILE §2, §8–§13): the real-time, real-process side of the
//! sans-IO [`Session`](agentx_core::session::Session).
//!
//! Owns: startup in PROFILE §8 order ([`startup`]); the loop's one wait ([`inbox`]: stdin read
//! by the loop itself while it waits, or by a stdin thread, through `driver::Pump`: any
//! chunking, the EOF tail, the 8 MiB line limit) and the signal thread (SIGINT → interrupt,
//! SIGTERM and SIGHUP → input EOF) ([`event`]); the loop that feeds the session with the clock and writes
//! only its validated frames ([`run`]) to stdout ([`stdout`]: one write per drain, reading stdin
//! ahead while a write waits); model calls behind [`model::ModelRunner`] (the
//! scripted model on its own thread; the HTTP providers with their runtime inside); tool and
//! hook processes ([`workers`]); the session store, its lock and its disk-error retries
//! ([`persist`]); the blob store opened with PROFILE §12's reclamation ([`blobs`]); one-shot
//! `-p` ([`oneshot`]).
//!
//! Must never: write to stdout anything but the session's validated frames (or, in one-shot
//! `text`/`json`, the result projected from them); decide a protocol question itself.

pub mod blobs;
pub mod driver_loop;
pub mod event;
mod identity;
pub mod inbox;
pub mod model;
pub mod oneshot;
pub mod persist;
mod sdk_options;
pub mod startup;
mod startup_error;
pub mod stdout;
pub mod system_prompt;
pub mod workers;

use crate::args::agentx_args::{SdkSessionArgs, SessionArgs};
use crate::args::sdk_args::SdkArgs;

/// `agentx --input-format stream-json --output-format stream-json …`: returns the exit status.
pub fn run_session(args: &SessionArgs) -> i32 {
    run(args, None)
}

/// PROFILE §18: every `--mcp-config` file is read and checked before anything starts; a bad
/// one is a usage error (status 2) naming the server.
fn resolve_mcp_configs(args: &SessionArgs) -> Result<SessionArgs, i32> {
    let mut args = args.clone();
    match crate::mcp::config::resolve(&args.mcp_configs) {
        Ok(servers) => {
            args.mcp_configs = vec![crate::args::sdk_args::McpConfigArg::Servers(servers)];
            Ok(args)
        }
        Err(e) => {
            eprintln!("agentx: {e}\n{}", crate::args::agentx_args::USAGE);
            Err(2)
        }
    }
}

/// `agentx … --verbose`: the Claude Agent SDK profile (PROFILE §15); returns the exit status.
/// Each accepted-and-ignored option gets its WARN line once startup succeeded
/// (`startup::start`).
pub fn run_sdk_session(args: &SdkSessionArgs) -> i32 {
    run(&args.session, Some(&args.sdk))
}

fn run(args: &SessionArgs, sdk: Option<&SdkArgs>) -> i32 {
    let args = match resolve_mcp_configs(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let args = &args;
    let mut startup = match startup::start(
        &args.common,
        args.replay_user_messages,
        true,
        sdk,
        &args.mcp_configs,
    ) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    startup.say_notices();
    // PROFILE §12: the upload lifecycle over the blob store under AgentX home, unless
    // `--no-attachments`. A store that cannot open leaves the session without uploads (every
    // import is then rejected `capability_absent`), with one stderr line.
    let attachments: Option<Box<dyn agentx_core::session::Attachments>> =
        if args.common.no_attachments {
            None
        } else {
            use agentx_core::attach::{Limits, Uploads};
            let limits = Limits::default();
            match blobs::open_and_reclaim(&startup.home, &limits) {
                Ok(store) => Some(Box::new(Uploads::new(store, limits))),
                Err(code) => {
                    eprintln!("agentx: attachment store unavailable: {code}");
                    None
                }
            }
        };
    let inbox = inbox::Inbox::stdin();
    let mut sink = stdout::StdoutSink::new(inbox.read_ahead());
    driver_loop::run_loop(startup, inbox, &mut sink, attachments, false)
}
