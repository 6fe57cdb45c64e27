//! The command lines (PROFILE §2): one typed argument module per binary (`wire_args` for
//! `agentx-wire`, `agentx_args` for `agentx`), and the `agentx-wire` tool itself (`check`,
//! `canon`, `attach`): I/O around the codec; every protocol rule lives in the layers below.
//!
//! Exit status: 0 success; 1 a fatal stream or startup error or an invalid record; 2 a usage
//! error. A broken stdout pipe ends quietly with status 1.

pub mod agentx_args;
pub mod attach;
pub mod canon;
pub mod check;
pub mod records;
pub mod sdk_args;
mod usage;
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
