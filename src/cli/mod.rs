//! The `agentx-wire` tool (PROFILE §2): `check`, `canon` and `attach`. Argument parsing and
//! I/O around the codec; every protocol rule lives in the layers below.
//!
//! Exit status: 0 success; 1 a fatal stream or startup error or an invalid record; 2 a usage
//! error. A broken stdout pipe ends quietly with status 1.

pub mod agentx_args;
pub mod args;
pub mod attach;
pub mod canon;
pub mod check;
pub mod records;

pub const USAGE: &str = "usage: agentx-wire <check|canon|attach> [options] [FILE|-]\n  \
agentx-wire check [--level json|records] [--direction input|output] [--json] [FILE|-]\n  \
agentx-wire canon [--direction input|output] [--credentials FILE] [FILE|-]\n  \
agentx-wire attach [--home DIR] [--mime TYPE] [--name NAME] FILE";

/// Runs the tool with `args` (without the program name); returns the exit status.
pub fn run(args: &[String]) -> i32 {
    let Some((command, rest)) = args.split_first() else {
        eprintln!("{USAGE}");
        return 2;
    };
    match command.as_str() {
        "check" => check::run(rest),
        "canon" => canon::run(rest),
        "attach" => attach::run(rest),
        "--help" | "-h" | "help" => {
            println!("{USAGE}");
            0
        }
        _ => {
            eprintln!("agentx-wire: unknown command\n{USAGE}");
            2
        }
    }
}
