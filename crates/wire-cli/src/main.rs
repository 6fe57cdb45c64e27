//! `agentx-wire`: the codec's own tool (PROFILE §2). All logic lives in the library.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(agentx_wire_cli::run(&args));
}
