//! `TodoWrite {todos}` (PROFILE §17): replaces the session's todo list, held here for the
//! process and seeded on `--resume` from the input of the last successful `TodoWrite` of the
//! rebuilt context. `tool_use_result` is `{oldTodos, newTodos}`.

use std::sync::{Arc, Mutex};

use agentx_core::session::ToolOutcome;

use super::fsx::succeeded;
use super::result_json::{array, Obj};
use super::{Todo, TodoStatus};

/// The session's todo list, shared by the tool threads.
#[derive(Clone, Debug, Default)]
pub struct TodoList {
    todos: Arc<Mutex<Vec<Todo>>>,
}

impl TodoList {
    /// A list holding `todos` (a resumed session's).
    pub fn new(todos: Vec<Todo>) -> TodoList {
        TodoList {
            todos: Arc::new(Mutex::new(todos)),
        }
    }

    /// The current list.
    pub fn get(&self) -> Vec<Todo> {
        self.todos.lock().map(|t| t.clone()).unwrap_or_default()
    }

    /// Replaces the list.
    pub fn write(&self, todos: Vec<Todo>) -> ToolOutcome {
        let old = match self.todos.lock() {
            Ok(mut t) => std::mem::replace(&mut *t, todos.clone()),
            Err(_) => Vec::new(),
        };
        let n = |s: TodoStatus| todos.iter().filter(|t| t.status == s).count();
        let text = format!(
            "todo list updated: {} pending, {} in progress, {} completed",
            n(TodoStatus::Pending),
            n(TodoStatus::InProgress),
            n(TodoStatus::Completed)
        );
        let result = Obj::new()
            .raw("oldTodos", &json(&old))
            .raw("newTodos", &json(&todos))
            .end();
        succeeded(text, [result])
    }
}

/// The list as the JSON array `TodoWrite` takes.
pub fn json(todos: &[Todo]) -> String {
    let items: Vec<String> = todos
        .iter()
        .map(|t| {
            Obj::new()
                .str("content", &t.content)
                .str("status", t.status.as_str())
                .str("activeForm", &t.active_form)
                .end()
        })
        .collect();
    array(&items)
}

/// The list a resumed session starts with (PROFILE §17): the input of the last `TodoWrite`
/// of `history` whose `tool_result` is not an error; empty when there is none.
pub fn from_history(history: &[agentx_core::model::Message]) -> Vec<Todo> {
    use agentx_core::model::{Block, Message};
    let ok = |id: &str| {
        history.iter().any(|m| {
            matches!(m, Message::ToolResult { tool_use_id, is_error: false, .. } if tool_use_id == id)
        })
    };
    history
        .iter()
        .rev()
        .filter_map(|m| match m {
            Message::Assistant { blocks, .. } => Some(blocks),
            _ => None,
        })
        .flat_map(|blocks| blocks.iter().rev())
        .find_map(|b| match b {
            Block::ToolUse { id, name, input } if name == "TodoWrite" && ok(id) => {
                match super::ToolCall::parse(name, input) {
                    Ok(super::ToolCall::TodoWrite { todos }) => Some(todos),
                    _ => None,
                }
            }
            _ => None,
        })
        .unwrap_or_default()
}
