//! `agentx`: the headless agent endpoint (PROFILE §2). This binary is argument dispatch only;
//! everything it runs is the `agentx` library of this package.
//!
//! Exit status: 0 success; 1 a startup error (invalid registry, collision, unknown provider,
//! resume binding mismatch, refused output, unreadable `auth.json`), a fatal input error, an
//! error result in `-p` mode, a failed or broken stdout; 2 a usage error.

#![deny(unsafe_code)]

use std::ffi::OsString;
use std::io::{self, Write};

use agentx::args::agentx_args::{self, AgentxArgs};
use agentx::run;
use agentx::run::startup::{home, read_auth_json};
use agentx_core::registry::{discovery, load_registry, Error, Format, BUILT_IN_NOTICE};

fn main() {
    std::process::exit(run());
}

fn run() -> i32 {
    let args: Vec<String> = match std::env::args_os()
        .skip(1)
        .map(OsString::into_string)
        .collect()
    {
        Ok(args) => args,
        Err(_) => {
            eprintln!("agentx: arguments must be valid UTF-8");
            return 2;
        }
    };
    match agentx_args::parse(&args) {
        Ok(AgentxArgs::ListProviders { format }) => list_providers(format),
        Ok(AgentxArgs::Version) => {
            print_stdout(format!("agentx {}\n", env!("CARGO_PKG_VERSION")).as_bytes())
        }
        Ok(AgentxArgs::Help) => print_stdout(agentx_args::HELP.as_bytes()),
        Ok(AgentxArgs::Session(args)) => run::run_session(&args),
        Ok(AgentxArgs::SdkSession(args)) => run::run_sdk_session(&args),
        Ok(AgentxArgs::OneShot(args)) => run::oneshot::run_one_shot(&args),
        Err(e) => {
            eprintln!("agentx: {e}\n{}", e.usage());
            2
        }
    }
}

/// WIRE-026: registry → catalog → exact validated bytes → one write. Any failure before the
/// write leaves stdout empty.
fn list_providers(format: Format) -> i32 {
    let bytes = match discovery_bytes(format) {
        Ok(b) => b,
        Err(line) => {
            eprintln!("{line}");
            return 1;
        }
    };
    print_stdout(&bytes)
}

/// The discovery document, or the complete stderr line of why there is none.
fn discovery_bytes(format: Format) -> Result<Vec<u8>, String> {
    let home = home().map_err(|e| e.to_string())?;
    let auth = read_auth_json(&home).map_err(|e| e.to_string())?;
    if auth.is_none() {
        eprintln!("{BUILT_IN_NOTICE}");
    }
    let failed = |e: Error| format!("agentx: {e}");
    let env = |name: &str| std::env::var_os(name);
    let registry = load_registry(auth.as_deref(), &env).map_err(failed)?;
    discovery::discover(&registry, format).map_err(failed)
}

/// One write of complete bytes; a broken pipe ends quietly with status 1 (PROFILE §2).
fn print_stdout(bytes: &[u8]) -> i32 {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => 1,
        Err(_) => {
            eprintln!("agentx: output failed: stdout could not be written");
            1
        }
    }
}
