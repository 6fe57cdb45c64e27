//! An async host running N `agentx` sessions at once on tokio (default 16), each with an
//! async permission callback, printing each session's result.
//!
//! ```text
//! cargo build --release && cargo run --release --example host_async_many -- 16
//! ```

use std::time::{Duration, Instant};

use agentx_io::host::{
    AgentCommand, AsyncClient, AsyncClientOptions, PermissionAnswer, ToolPermissionRequest,
};
use agentx_wire::wire::OutputRecord;

#[path = "host_common/mod.rs"]
mod host_common;

async fn session(
    i: usize,
    agentx: std::path::PathBuf,
    home: std::path::PathBuf,
) -> Result<String, String> {
    let options =
        AsyncClientOptions::default().can_use_tool(|r: ToolPermissionRequest| async move {
            Ok(if r.tool_name == "Read" {
                PermissionAnswer::allow()
            } else {
                PermissionAnswer::deny("read-only host")
            })
        });
    let command = AgentCommand::stream_json(agentx).env("AGENTX_HOME", home);
    let client = AsyncClient::spawn(&command, options)
        .await
        .map_err(|e| e.to_string())?;
    client
        .send_text(&format!("session {i} says hello"))
        .map_err(|e| e.to_string())?;
    let mut result = String::new();
    while let Some(record) = client.recv().await {
        if let OutputRecord::Result(r) = record.map_err(|e| e.to_string())? {
            result = r.result.as_deref().unwrap_or("").to_owned();
            break;
        }
    }
    client
        .close(Duration::from_secs(30))
        .await
        .map_err(|e| e.to_string())?;
    Ok(result)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(16);
    let agentx = host_common::agentx_path()?;
    let home = host_common::temp_home("many")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let started = Instant::now();
    let results = rt.block_on(async {
        let tasks: Vec<_> = (0..n)
            .map(|i| tokio::spawn(session(i, agentx.clone(), home.clone())))
            .collect();
        let mut out = Vec::new();
        for t in tasks {
            out.push(t.await.map_err(|e| e.to_string()).and_then(|r| r));
        }
        out
    });
    for (i, r) in results.iter().enumerate() {
        println!("session {i}: {r:?}");
    }
    println!("{n} sessions in {:?}", started.elapsed());
    Ok(())
}
