//! The `agentx-wire` tool (PROFILE §2): `check`, `canon` and `attach`, with its typed command
//! line (`wire_args`), and the one usage error of both command lines ([`UsageError`], used by
//! `agentx` too). I/O around the codec; every protocol rule lives in the crates below.
//! The library exists for the binary, its tests and examples; it is not a stable API.
//!
//! Exit status: 0 success; 1 a fatal stream or startup error or an invalid record; 2 a usage
//! error. A broken stdout pipe ends quietly with status 1.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod attach;
pub mod canon;
pub mod check;
pub mod usage;
pub mod wire_args;

use wire_args::WireArgs;

pub use usage::UsageError;
pub use wire_args::USAGE;

/// Runs the tool with `args` (without the program name); returns the exit status.
pub fn run(args: &[String]) -> i32 {
    match wire_args::parse(args) {
        Ok(WireArgs::Check(a)) => check::run(a),
        Ok(WireArgs::Canon(a)) => canon::run(a),
        Ok(WireArgs::Attach(a)) => attach::run(a),
        Ok(WireArgs::Help) => {
            println!("{USAGE}");
            0
        }
        Err(e) => {
            eprintln!("agentx-wire: {e}\n{}", e.usage());
            2
        }
    }
}
