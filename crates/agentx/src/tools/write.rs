//! `Write {file_path, content}` (PROFILE §10, §17): creates a file, or replaces one this
//! process read (or wrote) and that has not changed since ([`Ledger`]); atomic, keeping the
//! file's permissions. `tool_use_result` is `{type, filePath, content, structuredPatch,
//! originalFile}`.

use std::path::Path;

use agentx_core::session::ToolOutcome;

use super::fsx::{absolute, failed, io_reason, succeeded, write_atomic};
use super::patch::structured_patch;
use super::result_json::Obj;
use super::seen::Ledger;

/// Creates or replaces the file.
pub fn write(cwd: &Path, ledger: &Ledger, file_path: &str, content: &str) -> ToolOutcome {
    let path = absolute(cwd, file_path);
    let shown = path.display();
    let _serial = ledger.lock_writes();
    let original = match std::fs::read(&path) {
        Ok(bytes) => {
            if let Err(stale) = ledger.check(&path, &bytes) {
                return failed(stale.message(&path));
            }
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return failed(format!("cannot write {shown}: {}", io_reason(&e))),
    };
    if let Err(e) = write_atomic(&path, content.as_bytes()) {
        return failed(format!("cannot write {shown}: {}", io_reason(&e)));
    }
    ledger.record(&path, content.as_bytes());
    let patch = match &original {
        Some(old) => structured_patch(old, content),
        None => "[]".to_string(),
    };
    let file_path = path.to_string_lossy();
    let kind = if original.is_some() {
        "update"
    } else {
        "create"
    };
    let form = |content: Option<&str>, original: Option<&str>| {
        Obj::new()
            .str("type", kind)
            .str("filePath", &file_path)
            .opt_str("content", content)
            .raw("structuredPatch", &patch)
            .opt_str("originalFile", original)
            .end()
    };
    let old = original.as_deref();
    succeeded(
        format!("wrote {} bytes to {shown}", content.len()),
        [
            form(Some(content), old),
            form(Some(content), None),
            form(None, None),
        ],
    )
}
