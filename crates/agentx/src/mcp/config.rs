//! Where the user's MCP configuration comes from at startup (PROFILE §18): every
//! `--mcp-config` in order (JSON text checked by the argument parser, a file read here) merged
//! into one list (a later definition of a name replaces the earlier one in its place; at
//! most 64), and the timeouts from the environment (`MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT`).
//!
//! Must never: quote a file's content in an error (it may hold secrets).

use std::time::Duration;

use agentx_core::session::mcp_config::{self, ServerDef};
use agentx_core::session::{DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT};

use crate::args::sdk_args::McpConfigArg;

/// A configuration file larger than this is refused.
pub const MAX_CONFIG_FILE: u64 = 4 * 1024 * 1024;

/// The servers of every `--mcp-config`, in order; `Err` is the usage error's text.
pub fn resolve(args: &[McpConfigArg]) -> Result<Vec<ServerDef>, String> {
    let mut all = Vec::new();
    for a in args {
        let defs = match a {
            McpConfigArg::Servers(defs) => defs.clone(),
            McpConfigArg::File(path, _) => {
                let text = read(path)?;
                mcp_config::servers_of_config(&text).map_err(|e| format!("--mcp-config: {e}"))?
            }
        };
        mcp_config::merge(&mut all, defs).map_err(|e| format!("--mcp-config: {e}"))?;
    }
    Ok(all)
}

fn read(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path)
        .map_err(|e| format!("--mcp-config: the file cannot be read ({})", e.kind()))?;
    let mut text = String::new();
    file.take(MAX_CONFIG_FILE + 1)
        .read_to_string(&mut text)
        .map_err(|_| "--mcp-config: the file is not UTF-8 text".to_string())?;
    if text.len() as u64 > MAX_CONFIG_FILE {
        return Err(format!(
            "--mcp-config: the file is over {MAX_CONFIG_FILE} bytes"
        ));
    }
    Ok(text)
}

/// A duration in ms from the environment variable `name`, else `default`.
fn env_ms(name: &str, default: Duration) -> Duration {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(default, Duration::from_millis)
}

/// `MCP_TIMEOUT` (default 30,000 ms).
pub fn connect_timeout() -> Duration {
    env_ms("MCP_TIMEOUT", DEFAULT_CONNECT_TIMEOUT)
}

/// `MCP_TOOL_TIMEOUT` (default 600,000 ms).
pub fn tool_timeout() -> Duration {
    env_ms("MCP_TOOL_TIMEOUT", DEFAULT_CALL_TIMEOUT)
}
