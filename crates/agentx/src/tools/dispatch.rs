//! One validated [`ToolCall`] to its runner, with what the runners share for the process:
//! the cwd, the read-before-write [`Ledger`], the todo list, and `Bash`'s environment and
//! kill switch. Every outcome carries its `tool_use_result` (PROFILE §17).

use std::path::PathBuf;

use agentx_core::session::ToolOutcome;

use super::edit::{edit, EditInput};
use super::fsx::{failed, succeeded};
use super::process::KillSwitch;
use super::result_json::Obj;
use super::seen::Ledger;
use super::todo::TodoList;
use super::{bash, glob, grep, read, write, ToolCall};

/// What the runners share for the life of the process.
#[derive(Clone, Debug)]
pub struct ToolContext {
    /// `--cwd` (canonical).
    pub cwd: PathBuf,
    /// Files read or written by this process.
    pub ledger: Ledger,
    /// The session's todo list.
    pub todos: TodoList,
}

/// Runs `call` to its end (blocking).
pub fn run(
    ctx: &ToolContext,
    call: &ToolCall,
    env: &super::env::EnvOverrides,
    kill: &KillSwitch,
) -> ToolOutcome {
    let cwd = &ctx.cwd;
    match call {
        ToolCall::Read {
            file_path,
            offset,
            limit,
        } => read::read(cwd, &ctx.ledger, file_path, *offset, *limit),
        ToolCall::Write { file_path, content } => {
            write::write(cwd, &ctx.ledger, file_path, content)
        }
        ToolCall::Edit {
            file_path,
            old_string,
            new_string,
            replace_all,
        } => edit(
            cwd,
            &ctx.ledger,
            &EditInput {
                file_path,
                old_string,
                new_string,
                replace_all: *replace_all,
            },
        ),
        ToolCall::Glob { pattern, path } => glob::glob(cwd, pattern, path.as_deref()),
        ToolCall::Grep(input) => grep::grep(cwd, input),
        ToolCall::TodoWrite { todos } => ctx.todos.write(todos.clone()),
        ToolCall::Bash {
            command,
            timeout_ms,
            ..
        } => {
            let ran = bash::run(cwd, command, *timeout_ms, env, kill);
            if ran.out.is_error {
                return failed(ran.out.content);
            }
            // PROFILE §17: BashOutput's `stdout` and `stderr`, each stream on its own.
            let result = Obj::new()
                .str("stdout", &ran.stdout)
                .str("stderr", &ran.stderr)
                .bool("interrupted", false)
                .end();
            succeeded(ran.out.content, [result])
        }
    }
}
