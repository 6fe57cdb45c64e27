//! The host's `can_use_tool` callback (PERM-020..053 from the host's end).
//!
//! Owns: the owned view of a permission request handed to the callback, the callback's answer,
//! and its translation into the decision payload (PERM-040..046). A callback error or panic
//! becomes a deny, never an allow (WIRE-PERM-002).

use std::panic::{catch_unwind, AssertUnwindSafe};

use agentx_wire::wire::permission::PermissionDecision;
use agentx_wire::wire::{CanUseTool, RawObject};

/// What the agent asks permission for, owned so a callback can keep it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolPermissionRequest {
    /// The control request's id (the answer is correlated to it).
    pub request_id: String,
    /// `tool_name` (`SandboxNetworkAccess` for the sandbox network request, PERM-022).
    pub tool_name: String,
    /// `tool_use_id`.
    pub tool_use_id: String,
    /// The tool input object as compact JSON text.
    pub input: String,
    /// The safe summary (PERM-021), when the agent sent one.
    pub description: Option<String>,
    /// The complete decoded request.
    pub request: CanUseTool<'static>,
}

impl ToolPermissionRequest {
    pub(crate) fn new(request_id: &str, req: CanUseTool<'static>) -> Self {
        ToolPermissionRequest {
            request_id: request_id.to_owned(),
            tool_name: req.tool_name.as_str().to_owned(),
            tool_use_id: req.tool_use_id.as_str().to_owned(),
            input: String::from_utf8_lossy(req.input.0.as_bytes()).into_owned(),
            description: req.description.as_deref().map(str::to_owned),
            request: req,
        }
    }
}

/// A callback's decision.
#[derive(Clone, Debug, PartialEq)]
pub enum PermissionAnswer {
    /// Allow, optionally with a replacement input object (compact JSON text, PERM-042).
    Allow {
        /// The replacement input object as compact JSON, if any.
        updated_input: Option<String>,
    },
    /// Deny with a message; `interrupt` also interrupts the active turn (PERM-045).
    Deny {
        /// The denial message shown to the model.
        message: String,
        /// Whether to interrupt the active turn too.
        interrupt: bool,
    },
}

impl PermissionAnswer {
    /// Allow with the original input.
    ///
    /// ```
    /// use agentx_io::host::PermissionAnswer;
    /// assert_eq!(PermissionAnswer::allow(), PermissionAnswer::Allow { updated_input: None });
    /// ```
    pub fn allow() -> Self {
        PermissionAnswer::Allow {
            updated_input: None,
        }
    }

    /// Deny with `message`, without interrupting the turn.
    ///
    /// ```
    /// use agentx_io::host::PermissionAnswer;
    /// assert!(matches!(PermissionAnswer::deny("no"), PermissionAnswer::Deny { interrupt: false, .. }));
    /// ```
    pub fn deny(message: impl Into<String>) -> Self {
        PermissionAnswer::Deny {
            message: message.into(),
            interrupt: false,
        }
    }
}

/// The error type a callback may return; its content is never formatted or sent.
pub type CallbackError = Box<dyn std::error::Error + Send + Sync>;

/// A `can_use_tool` callback. Implemented for closures
/// `Fn(&ToolPermissionRequest) -> Result<PermissionAnswer, CallbackError>`.
pub trait CanUseToolHandler: Send + Sync + 'static {
    /// Decides one request. Runs on its own thread; may block.
    fn can_use_tool(
        &self,
        request: &ToolPermissionRequest,
    ) -> Result<PermissionAnswer, CallbackError>;
}

impl<F> CanUseToolHandler for F
where
    F: Fn(&ToolPermissionRequest) -> Result<PermissionAnswer, CallbackError>
        + Send
        + Sync
        + 'static,
{
    fn can_use_tool(
        &self,
        request: &ToolPermissionRequest,
    ) -> Result<PermissionAnswer, CallbackError> {
        self(request)
    }
}

/// The deny message when the callback failed or panicked (WIRE-PERM-002).
pub const CALLBACK_FAILED: &str = "permission callback failed";
/// The deny message when no callback is installed.
pub const NO_CALLBACK: &str = "no permission callback installed";
/// The deny message of a permission request over the host's bound of pending ones
/// (`MAX_PENDING_PERMISSIONS`, 256).
pub const TOO_MANY_PERMISSION_REQUESTS: &str =
    "denied by the host: 256 permission requests are already pending";

/// Runs the callback with its errors and panics contained: either is a deny.
pub(crate) fn decide(
    handler: Option<&dyn CanUseToolHandler>,
    request: &ToolPermissionRequest,
) -> PermissionAnswer {
    let Some(handler) = handler else {
        return PermissionAnswer::deny(NO_CALLBACK);
    };
    match catch_unwind(AssertUnwindSafe(|| handler.can_use_tool(request))) {
        Ok(Ok(answer)) => answer,
        // WIRE-PERM-002: never format or inspect the callback's error; deny.
        Ok(Err(e)) => {
            agentx_wire::encode::discard_foreign(e);
            PermissionAnswer::deny(CALLBACK_FAILED)
        }
        Err(panic) => {
            agentx_wire::encode::discard_foreign(panic);
            PermissionAnswer::deny(CALLBACK_FAILED)
        }
    }
}

/// The decision payload (PERM-040..046) for `answer`; an `updated_input` that is not a JSON
/// object is a deny (the callback answered something the protocol cannot carry).
pub(crate) fn decision(answer: PermissionAnswer, tool_use_id: &str) -> PermissionDecision<'static> {
    match answer {
        PermissionAnswer::Allow { updated_input } => {
            let updated_input = match updated_input {
                None => None,
                Some(text) => match agentx_wire::wire::RawJson::parse_owned(text.into_bytes()) {
                    Ok(raw) if raw.is_object() => Some(RawObject(raw)),
                    _ => {
                        return PermissionDecision::Deny {
                            message: CALLBACK_FAILED.into(),
                            interrupt: None,
                            tool_use_id: Some(tool_use_id.to_owned().into()),
                        }
                    }
                },
            };
            PermissionDecision::Allow {
                updated_input,
                updated_permissions: None,
                tool_use_id: Some(tool_use_id.to_owned().into()),
            }
        }
        PermissionAnswer::Deny { message, interrupt } => PermissionDecision::Deny {
            message: message.into(),
            interrupt: interrupt.then_some(true),
            tool_use_id: Some(tool_use_id.to_owned().into()),
        },
    }
}
