//! Shared bits of the host examples: where `agentx` is, a throwaway AgentX home, and a
//! one-line description of a record.

#![allow(dead_code)]

use std::path::PathBuf;

use agentx_wire::wire::{OutputRecord, SystemEvent};

/// `$AGENTX`, else `agentx` next to this example's own target directory.
pub fn agentx_path() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("AGENTX") {
        return Ok(p.into());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // target/<profile>/examples/<name> → target/<profile>/agentx
    let candidate = exe
        .parent()
        .and_then(|d| d.parent())
        .map(|d| d.join("agentx"))
        .ok_or("no target directory")?;
    if candidate.exists() {
        Ok(candidate)
    } else {
        Err(format!(
            "{} not found: build it first (`cargo build --release`) or set AGENTX",
            candidate.display()
        ))
    }
}

/// A fresh AgentX home under the temp directory (no auth.json: the built-in model).
pub fn temp_home(tag: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("agentx-example-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// One readable line for a record.
pub fn describe(r: &OutputRecord<'_>) -> String {
    match r {
        OutputRecord::Assistant(a) => {
            format!(
                "assistant: {}",
                String::from_utf8_lossy(&a.message.to_json())
            )
        }
        OutputRecord::User(u) => format!("user: {:?}", u.message),
        OutputRecord::Result(res) => format!(
            "result: {:?} {:?} (turns {}, cost {:?})",
            res.subtype, res.result, res.num_turns, res.total_cost_usd
        ),
        OutputRecord::System(SystemEvent::Unknown(_)) => "system (unknown subtype)".into(),
        other => other.record_type().to_owned(),
    }
}
