//! A minimal Rust host: start `agentx` on its built-in model, initialize, send one prompt,
//! print every record of the turn, close.
//!
//! ```text
//! cargo build --release && cargo run --release --example host_minimal -- "hello there"
//! ```
//! `AGENTX=/path/to/agentx` picks another agent binary (any program speaking the protocol).

use std::time::Duration;

use agentx_io::host::{AgentCommand, Client, ClientOptions};
use agentx_wire::wire::OutputRecord;

#[path = "host_common/mod.rs"]
mod host_common;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let prompt = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "hello from a Rust host".into());
    let home = host_common::temp_home("minimal")?;
    let command = AgentCommand::stream_json(host_common::agentx_path()?).env("AGENTX_HOME", &home);
    let client = Client::spawn(&command, ClientOptions::default())?;
    let init = client.initialize(Duration::from_secs(30))?;
    for p in &init.providers {
        println!("provider {} ({}) selected={}", p.id, p.model, p.selected);
    }
    client.send_text(&prompt)?;
    while let Some(record) = client.recv() {
        let record = record?;
        println!("{}", host_common::describe(&record));
        if matches!(record, OutputRecord::Result(_)) {
            break;
        }
    }
    let exit = client.close(Duration::from_secs(30))?;
    println!("agentx exited: {:?}", exit.status);
    Ok(())
}
