//! A host whose `can_use_tool` callback asks on the terminal: the built-in model is told to
//! write a file, and you answer the permission prompt with `y` or `n`.
//!
//! ```text
//! cargo build --release && cargo run --release --example host_permission_prompt
//! ```

use std::io::{BufRead, Write};
use std::time::Duration;

use agentx_io::host::{
    AgentCommand, Client, ClientOptions, PermissionAnswer, ToolPermissionRequest,
};
use agentx_wire::wire::OutputRecord;

#[path = "host_common/mod.rs"]
mod host_common;

fn ask(req: &ToolPermissionRequest) -> Result<PermissionAnswer, agentx_io::host::CallbackError> {
    let mut out = std::io::stderr();
    write!(
        out,
        "\nallow {} ({})? [y/N] ",
        req.tool_name,
        req.description.as_deref().unwrap_or(&req.input)
    )?;
    out.flush()?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    Ok(if line.trim().eq_ignore_ascii_case("y") {
        PermissionAnswer::allow()
    } else {
        PermissionAnswer::deny("the user said no")
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let home = host_common::temp_home("prompt")?;
    let cwd = home.join("work");
    std::fs::create_dir_all(&cwd)?;
    let command = AgentCommand::stream_json(host_common::agentx_path()?)
        .arg("--cwd")
        .arg(&cwd)
        .env("AGENTX_HOME", &home);
    let client = Client::spawn(&command, ClientOptions::default().can_use_tool(ask))?;
    let prompt = "!tool Write {\"file_path\":\"hello.txt\",\"content\":\"hi\\n\"}\n!say done";
    client.send_text(prompt)?;
    while let Some(record) = client.recv() {
        let record = record?;
        println!("{}", host_common::describe(&record));
        if matches!(record, OutputRecord::Result(_)) {
            break;
        }
    }
    client.close(Duration::from_secs(30))?;
    let written = std::fs::read_to_string(cwd.join("hello.txt")).ok();
    println!("hello.txt: {written:?}");
    Ok(())
}
