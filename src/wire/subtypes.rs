//! The control-operation table (Control operations; STYLE #4): every request subtype is
//! declared once below, and the table generates [`ControlSubtype`], the request-payload enum
//! [`ControlRequestBody`], its decode dispatch and its encoder.
//!
//! Request payloads are closed: "do not silently accept untyped control objects", and
//! `initialize` in particular rejects any hook, MCP, schema, prompt, agent or other field.
//! The one exception is `set_permission_mode`, whose row says "any payload": it keeps its
//! `mode` when given and ignores the rest (the agent answers with the PROFILE §5 error
//! either way). An unknown subtype is not an error: it decodes as
//! [`ControlRequestBody::Unknown`] so the dispatcher can answer `unsupported control request
//! "<subtype>"` (PROFILE §5; WIRE-025's `set_provider` is one). Never dispatches.

use crate::json::{Object, Value};

use super::decode::{object, take, Closed, IntoOwned, Obj, Path, Text, WireValue};
use super::error::Error;
use super::permission::CanUseTool;
use super::raw::{RawJson, RawObject};
use super::table::wire_struct;

const RULE: &str = "control operations";

/// A request payload type: decodes the members of the `request` object (its `subtype`
/// already matched) and encodes them after `subtype`.
pub(crate) trait Payload<'a>: Sized {
    fn decode_payload(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error>;
    fn encode_payload(&self, w: &mut Obj<'_>);
}

macro_rules! struct_payloads {
    ($($ty:ident),*) => {$(
        impl<'a> Payload<'a> for $ty<'a> {
            fn decode_payload(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
                $ty::decode_members(obj, at)
            }
            fn encode_payload(&self, w: &mut Obj<'_>) {
                self.encode_members(w)
            }
        }
    )*};
}

/// Fieldless request payloads: closed, only `subtype`.
macro_rules! empty_payloads {
    ($($(#[$m:meta])* $ty:ident),*) => {$(
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        pub struct $ty;

        impl<'a> Payload<'a> for $ty {
            fn decode_payload(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
                take(obj, &["subtype"], &mut [None], Closed::Yes(RULE), at)?;
                Ok($ty)
            }
            fn encode_payload(&self, _w: &mut Obj<'_>) {}
        }

        super::table::owned_as_is!($ty);
    )*};
}

empty_payloads!(
    /// `initialize`: no operation fields (any other field is rejected).
    Initialize,
    /// `interrupt`: no fields (WIRE-010).
    Interrupt,
    /// `mcp_status`: none.
    McpStatus,
    /// `get_context_usage`: none.
    GetContextUsage,
    /// `reload_plugins`: none.
    ReloadPlugins,
    /// `get_settings`: none.
    GetSettings
);

impl<'a> Payload<'a> for CanUseTool<'a> {
    fn decode_payload(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        CanUseTool::decode_checked(obj, at)
    }
    fn encode_payload(&self, w: &mut Obj<'_>) {
        self.encode_members(w)
    }
}

wire_struct! {
    /// `set_permission_mode`: any payload (PROFILE §8); `mode` kept when it is a string.
    pub struct SetPermissionMode<'a> {
        closed: Closed::No,
        rule: "control operations",
        skip: ["subtype"],
        mode: Option<Text<'a>> = "mode" => opt,
    }
}

impl<'a> Payload<'a> for SetPermissionMode<'a> {
    /// PROFILE §8 "any payload": whatever the request holds decodes (the dispatcher answers
    /// PROFILE §5's fixed error); `mode` is kept only when it is a string.
    fn decode_payload(obj: Object<'_, 'a>, _at: &Path<'_>) -> Result<Self, Error> {
        let mode = super::decode::member(obj, "mode")
            .and_then(|v| v.as_str())
            .map(|s| s.decode());
        Ok(SetPermissionMode { mode })
    }
    fn encode_payload(&self, w: &mut Obj<'_>) {
        self.encode_members(w)
    }
}

wire_struct! {
    /// `set_model`: optional model identifier.
    pub struct SetModel<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        model: Option<Text<'a>> = "model" => opt,
    }
}

/// `set_max_thinking_tokens`: nullable maximum (required; `null` is `None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SetMaxThinkingTokens {
    /// The new maximum; `None` removes it.
    pub max_thinking_tokens: Option<u64>,
}

impl<'a> Payload<'a> for SetMaxThinkingTokens {
    fn decode_payload(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let mut s = [None, None];
        take(
            obj,
            &["max_thinking_tokens", "subtype"],
            &mut s,
            Closed::Yes(RULE),
            at,
        )?;
        let max_thinking_tokens = super::decode::req(s[0], &at.key("max_thinking_tokens"), RULE)?;
        Ok(SetMaxThinkingTokens {
            max_thinking_tokens,
        })
    }
    fn encode_payload(&self, w: &mut Obj<'_>) {
        self.max_thinking_tokens
            .encode(w.key("\"max_thinking_tokens\":"));
    }
}

super::table::owned_as_is!(SetMaxThinkingTokens);

wire_struct! {
    /// `rewind_files`: user message ID, optional dry run.
    pub struct RewindFiles<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        user_message_id: Text<'a> = "user_message_id" => req,
        dry_run: Option<bool> = "dry_run" => opt,
    }
}

wire_struct! {
    /// `cancel_async_message`: queued message UUID.
    pub struct CancelAsyncMessage<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        message_uuid: Text<'a> = "message_uuid" => req,
    }
}

wire_struct! {
    /// `seed_read_state`: normalized path and observed modification time.
    pub struct SeedReadState<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        path: Text<'a> = "path" => req,
        mtime: f64 = "mtime" => req,
    }
}

wire_struct! {
    /// `hook_callback`: callback ID, typed hook input, and the tool-use ID, `null` for events
    /// of no tool (PROFILE §16: `"tool_use_id":ID|null`; absent is tolerated on input).
    pub struct HookCallback<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        callback_id: Text<'a> = "callback_id" => req,
        input: RawJson<'a> = "input" => req,
        tool_use_id: Option<Text<'a>> = "tool_use_id" => nul,
    }
}

wire_struct! {
    /// `mcp_message`: server name and JSON-RPC message.
    pub struct McpMessage<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        server_name: Text<'a> = "server_name" => req,
        message: RawJson<'a> = "message" => req,
    }
}

wire_struct! {
    /// `mcp_set_servers`: the complete dynamic server map.
    pub struct McpSetServers<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        servers: RawObject<'a> = "servers" => req,
    }
}

wire_struct! {
    /// `mcp_reconnect`: server name.
    pub struct McpReconnect<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        server_name: Text<'a> = "serverName" => req,
    }
}

wire_struct! {
    /// `mcp_toggle`: server name and enabled flag.
    pub struct McpToggle<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        server_name: Text<'a> = "serverName" => req,
        enabled: bool = "enabled" => req,
    }
}

wire_struct! {
    /// `stop_task`: task ID.
    pub struct StopTask<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        task_id: Text<'a> = "task_id" => req,
    }
}

wire_struct! {
    /// `apply_flag_settings`: settings map.
    pub struct ApplyFlagSettings<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        settings: RawObject<'a> = "settings" => req,
    }
}

wire_struct! {
    /// `elicitation`: server, message, optional form/url mode, URL, ID and requested schema.
    pub struct Elicitation<'a> {
        closed: Closed::Yes("control operations"),
        rule: "control operations",
        skip: ["subtype"],
        mcp_server_name: Text<'a> = "mcp_server_name" => req,
        message: Text<'a> = "message" => req,
        mode: Option<Text<'a>> = "mode" => opt,
        url: Option<Text<'a>> = "url" => opt,
        elicitation_id: Option<Text<'a>> = "elicitation_id" => opt,
        requested_schema: Option<RawObject<'a>> = "requested_schema" => opt,
    }
}

struct_payloads!(
    SetModel,
    RewindFiles,
    CancelAsyncMessage,
    SeedReadState,
    HookCallback,
    McpMessage,
    McpSetServers,
    McpReconnect,
    McpToggle,
    StopTask,
    ApplyFlagSettings,
    Elicitation
);

/// A request whose subtype this profile does not define: kept whole so the dispatcher can
/// answer `unsupported control request "<subtype>"` (PROFILE §5).
#[derive(Clone, Debug, PartialEq)]
pub struct UnknownControl<'a> {
    /// The subtype exactly as written.
    pub subtype: Text<'a>,
    /// The complete `request` object, `subtype` included.
    pub request: RawObject<'a>,
}

macro_rules! control_subtypes {
    ($( $(#[$m:meta])* $variant:ident($ty:ty) = $name:literal, )*) => {
        /// Every control subtype this profile defines.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ControlSubtype { $( $(#[$m])* #[doc = concat!("\n\nOn the wire: `", $name, "`.")] $variant, )* }

        impl ControlSubtype {
            /// Every subtype, in declaration order.
            pub const ALL: &'static [ControlSubtype] = &[$(ControlSubtype::$variant),*];

            /// The wire spelling.
            pub fn as_str(self) -> &'static str {
                match self { $( ControlSubtype::$variant => $name, )* }
            }

            /// The subtype with this exact wire spelling, if any.
            pub fn from_name(s: &str) -> Option<ControlSubtype> {
                match s { $( $name => Some(ControlSubtype::$variant), )* _ => None }
            }
        }

        /// The `request` object of a `control_request`.
        #[derive(Clone, Debug, PartialEq)]
        pub enum ControlRequestBody<'a> {
            $( $(#[$m])* #[doc = concat!("\n\nThe `", $name, "` payload.")] $variant($ty), )*
            /// An undefined subtype (not an error: PROFILE §5).
            Unknown(UnknownControl<'a>),
        }

        impl<'a> ControlRequestBody<'a> {
            /// `None` for [`ControlRequestBody::Unknown`].
            pub fn subtype(&self) -> Option<ControlSubtype> {
                match self {
                    $( ControlRequestBody::$variant(_) => Some(ControlSubtype::$variant), )*
                    ControlRequestBody::Unknown(_) => None,
                }
            }

            /// The subtype as written on the wire.
            pub fn subtype_name(&self) -> &str {
                match self {
                    $( ControlRequestBody::$variant(_) => $name, )*
                    ControlRequestBody::Unknown(u) => &u.subtype,
                }
            }

            pub(crate) fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
                let obj = object(v, at, RULE)?;
                let st_at = at.key("subtype");
                let subtype = match super::decode::member(obj, "subtype") {
                    None => return Err(Error::missing(&st_at, RULE)),
                    Some(s) => s.as_str().ok_or_else(|| Error::wrong_type(&st_at, "a string", RULE))?,
                };
                $(
                    if super::decode::name_is(&subtype, $name) {
                        return <$ty as Payload<'a>>::decode_payload(obj, at).map(ControlRequestBody::$variant);
                    }
                )*
                Ok(ControlRequestBody::Unknown(UnknownControl {
                    subtype: subtype.decode(),
                    request: RawObject(RawJson::from_value(v)),
                }))
            }

            /// Appends the canonical JSON (one object, no newline) to `out`.
            pub fn encode(&self, out: &mut Vec<u8>) {
                match self {
                    $(
                        ControlRequestBody::$variant(p) => {
                            let mut w = Obj::begin(out);
                            w.constant(concat!("\"subtype\":\"", $name, "\""));
                            p.encode_payload(&mut w);
                            w.end();
                        }
                    )*
                    ControlRequestBody::Unknown(u) => u.request.encode(out),
                }
            }

            /// The owned form, for a value that must outlive its input line.
            pub fn into_owned(self) -> ControlRequestBody<'static> {
                match self {
                    $( ControlRequestBody::$variant(p) => ControlRequestBody::$variant(IntoOwned::into_owned(p)), )*
                    ControlRequestBody::Unknown(u) => ControlRequestBody::Unknown(UnknownControl {
                        subtype: IntoOwned::into_owned(u.subtype),
                        request: IntoOwned::into_owned(u.request),
                    }),
                }
            }
        }
    };
}

control_subtypes! {
    Initialize(Initialize) = "initialize",
    Interrupt(Interrupt) = "interrupt",
    CanUseTool(CanUseTool<'a>) = "can_use_tool",
    SetPermissionMode(SetPermissionMode<'a>) = "set_permission_mode",
    SetModel(SetModel<'a>) = "set_model",
    SetMaxThinkingTokens(SetMaxThinkingTokens) = "set_max_thinking_tokens",
    McpStatus(McpStatus) = "mcp_status",
    GetContextUsage(GetContextUsage) = "get_context_usage",
    RewindFiles(RewindFiles<'a>) = "rewind_files",
    CancelAsyncMessage(CancelAsyncMessage<'a>) = "cancel_async_message",
    SeedReadState(SeedReadState<'a>) = "seed_read_state",
    HookCallback(HookCallback<'a>) = "hook_callback",
    McpMessage(McpMessage<'a>) = "mcp_message",
    McpSetServers(McpSetServers<'a>) = "mcp_set_servers",
    ReloadPlugins(ReloadPlugins) = "reload_plugins",
    McpReconnect(McpReconnect<'a>) = "mcp_reconnect",
    McpToggle(McpToggle<'a>) = "mcp_toggle",
    StopTask(StopTask<'a>) = "stop_task",
    ApplyFlagSettings(ApplyFlagSettings<'a>) = "apply_flag_settings",
    GetSettings(GetSettings) = "get_settings",
    Elicitation(Elicitation<'a>) = "elicitation",
}

impl<'a> WireValue<'a> for ControlRequestBody<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        ControlRequestBody::decode(v, at)
    }
    fn encode(&self, out: &mut Vec<u8>) {
        ControlRequestBody::encode(self, out)
    }
}
