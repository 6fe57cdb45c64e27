//! The peer profiles a host reads agent output with: [`PeerProfile::Strict`] for agentx and
//! any agent of this profile (the default, unchanged), [`PeerProfile::Lenient`] for a CLI of the
//! Claude Code family (the `claude` binary of the TypeScript SDK), which writes members and
//! values our closed tables do not know: `pending_permission_requests` and
//! `pending_user_dialog_requests` on a success `control_response`, `apiKeySource: "none"`, a
//! `system/init` without WIRE-023's provider fields, an `interrupt` acknowledgement with a
//! payload, dozens of members of its own.
//!
//! Owns what leniency means, and only that:
//! - **What protects the host stays strict.** The line is parsed by the same strict parser
//!   (UTF-8, RFC 8259, duplicate and escape-equivalent member names at every depth: WIRE-014,
//!   PROFILE §2a) and framed under the same line limit; a top-level value that is not an object
//!   with a string `type` is still an error. Nothing here touches what the host *sends* (its
//!   encoder and credential validation are the same in both profiles).
//! - **A record the strict tables accept is the same typed record.** Leniency only applies
//!   where strict decoding fails.
//! - **Unknown members are kept, not rejected.** A `control_response` whose envelope carries
//!   members we do not know still correlates (its payload is kept whole as `RawJson`); a
//!   `can_use_tool` request with members of its own is typed from the members PERM-020 knows
//!   (the request's complete JSON is not needed to answer it); any other record strict decoding
//!   rejects comes through whole as [`OutputRecord::Unknown`], every member and value as written.
//! - **Open vocabularies are strings.** [`PeerInit`] and [`PeerInitializeResponse`] are typed
//!   views whose `apiKeySource`, account fields and models are the strings the peer wrote.
//!
//! Never does I/O; never decides what a host does with a record.

use crate::json::{self, Object, Parser, Value};

use super::control::{ControlRequest, ControlResponse};
use super::decode::{member, name_is, Closed, IntoOwned, Path, Text, WireValue};
use super::error::Error;
use super::raw::{RawJson, RawObject};
use super::record::{OutputRecord, UnknownRecord};
use super::subtypes::ControlRequestBody;
use super::table::wire_struct;

/// How closely the agent's output is held to this profile's closed tables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PeerProfile {
    /// agentx and any agent of this profile: closed where the protocol is closed.
    #[default]
    Strict,
    /// A CLI of the Claude Code family: see the module docs.
    Lenient,
}

impl<'a> OutputRecord<'a> {
    /// Parses and decodes one output line in `profile` (the strict parser in both).
    ///
    /// ```
    /// use agentx_wire::json::Parser;
    /// use agentx_wire::wire::{OutputRecord, PeerProfile};
    /// let line = br#"{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{},"pending_user_dialog_requests":[]}}"#;
    /// let mut p = Parser::new();
    /// assert!(OutputRecord::decode_line_as(line, &mut p, PeerProfile::Strict).is_err());
    /// let r = OutputRecord::decode_line_as(line, &mut p, PeerProfile::Lenient).unwrap();
    /// assert!(matches!(r, OutputRecord::ControlResponse(_)));
    /// // Duplicates stay an error in both profiles (WIRE-014).
    /// let dup = br#"{"type":"keep_alive","type":"keep_alive"}"#;
    /// assert!(OutputRecord::decode_line_as(dup, &mut p, PeerProfile::Lenient).is_err());
    /// ```
    pub fn decode_line_as(
        line: &'a [u8],
        parser: &mut Parser,
        profile: PeerProfile,
    ) -> Result<Self, Error> {
        let v = parser.parse(line).map_err(Error::json)?;
        match profile {
            PeerProfile::Strict => OutputRecord::decode(v),
            PeerProfile::Lenient => decode_lenient(v),
        }
    }
}

/// Strict first; where that fails, the lenient reading of the module docs.
fn decode_lenient<'a>(v: Value<'_, 'a>) -> Result<OutputRecord<'a>, Error> {
    let strict = match OutputRecord::decode(v) {
        Ok(r) => return Ok(r),
        Err(e) => e,
    };
    // PROFILE §2a stays: an object with a string `type`.
    let Some(obj) = v.as_object() else {
        return Err(strict);
    };
    let Some(ty) = member(obj, "type").and_then(|t| t.as_str()) else {
        return Err(strict);
    };
    if name_is(&ty, "control_response") {
        return ControlResponse::decode_members_as(obj, &Path::ROOT, true)
            .map(OutputRecord::ControlResponse);
    }
    if name_is(&ty, "control_request") {
        if let Some(r) = lenient_request(obj) {
            return Ok(OutputRecord::ControlRequest(r));
        }
    }
    Ok(OutputRecord::Unknown(UnknownRecord {
        record_type: ty.decode(),
        record: RawObject(RawJson::from_value(v)),
    }))
}

/// The members PERM-020 defines for `can_use_tool`, `subtype` included.
const CAN_USE_TOOL: &[&str] = &[
    "subtype",
    "tool_name",
    "input",
    "tool_use_id",
    "permission_suggestions",
    "blocked_path",
    "decision_reason",
    "title",
    "display_name",
    "description",
    "agent_id",
];

/// An agent → host request strict decoding rejected: `can_use_tool` typed from the members
/// PERM-020 knows (then without `permission_suggestions`, whose vocabulary is the peer's);
/// any other subtype as an unknown body, so the host answers it with the generic error rather
/// than leaving the agent waiting. `None` without a usable `request_id` and `request`.
fn lenient_request(obj: Object<'_, '_>) -> Option<ControlRequest<'static>> {
    let request_id = member(obj, "request_id")?;
    let request_value = member(obj, "request")?;
    let request = request_value.as_object()?;
    let subtype = member(request, "subtype")?.as_str()?;
    let at = Path::ROOT;
    let id = super::grammar::NonEmpty::decode(request_id, &at.key("request_id")).ok()?;
    let body = if name_is(&subtype, "can_use_tool") {
        let full = project(request, CAN_USE_TOOL);
        let fewer = project(request, &CAN_USE_TOOL[..4]);
        [full, fewer].into_iter().find_map(|bytes| {
            let raw = RawJson::parse_owned(bytes).ok()?;
            let doc = raw.document().ok()?;
            ControlRequestBody::decode(doc.root(), &at.key("request"))
                .ok()
                .map(ControlRequestBody::into_owned)
        })
    } else {
        None
    };
    let body = body.unwrap_or_else(|| {
        ControlRequestBody::Unknown(super::subtypes::UnknownControl {
            subtype: IntoOwned::into_owned(subtype.decode()),
            request: IntoOwned::into_owned(RawObject(RawJson::from_value(request_value))),
        })
    });
    Some(ControlRequest {
        request_id: id.into_owned(),
        request: body,
    })
}

/// `{"name":value,...}` with only the members of `obj` named in `names`, values as written.
fn project(obj: Object<'_, '_>, names: &[&str]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.push(b'{');
    for (name, value) in obj.iter() {
        if names.iter().any(|n| name_is(&name, n)) {
            if out.len() > 1 {
                out.push(b',');
            }
            json::write_str(&mut out, &name.decode());
            out.push(b':');
            RawJson::from_value(value).write_canonical(&mut out);
        }
    }
    out.push(b'}');
    out
}

wire_struct! {
    /// A slash command as a peer lists it.
    pub struct PeerCommand<'a> {
        closed: Closed::No,
        rule: "initialize",
        skip: [],
        name: Text<'a> = "name" => req,
        description: Option<Text<'a>> = "description" => opt,
        argument_hint: Option<Text<'a>> = "argumentHint" => opt,
    }
}

wire_struct! {
    /// A model as a peer lists it: names are the peer's own strings.
    pub struct PeerModel<'a> {
        closed: Closed::No,
        rule: "initialize",
        skip: [],
        value: Text<'a> = "value" => req,
        display_name: Option<Text<'a>> = "displayName" => opt,
        description: Option<Text<'a>> = "description" => opt,
        /// The model the alias resolves to (Claude Code family).
        resolved_model: Option<Text<'a>> = "resolvedModel" => opt,
    }
}

wire_struct! {
    /// The account identity as a peer reports it; every field an open string.
    pub struct PeerAccount<'a> {
        closed: Closed::No,
        rule: "initialize",
        skip: [],
        api_key_source: Option<Text<'a>> = "apiKeySource" => opt,
        token_source: Option<Text<'a>> = "tokenSource" => opt,
        api_provider: Option<Text<'a>> = "apiProvider" => opt,
        provider: Option<Text<'a>> = "provider" => opt,
        email: Option<Text<'a>> = "email" => opt,
        organization: Option<Text<'a>> = "organization" => opt,
        subscription_type: Option<Text<'a>> = "subscriptionType" => opt,
    }
}

wire_struct! {
    /// The fields of an `initialize` success payload every member of the family shares,
    /// open (unknown members ignored here, kept in [`PeerInitializeResponse::raw`]).
    pub struct PeerInitializeFields<'a> {
        closed: Closed::No,
        rule: "initialize",
        skip: [],
        commands: Vec<PeerCommand<'a>> = "commands" => dflt,
        output_style: Option<Text<'a>> = "output_style" => opt,
        available_output_styles: Vec<Text<'a>> = "available_output_styles" => dflt,
        models: Vec<PeerModel<'a>> = "models" => dflt,
        account: Option<PeerAccount<'a>> = "account" => opt,
        pid: Option<u64> = "pid" => opt,
        /// The product version (Claude Code family).
        claude_code_version: Option<Text<'a>> = "claude_code_version" => opt,
    }
}

/// An `initialize` success payload read in the lenient profile: the common fields typed with
/// open vocabularies, the whole payload kept.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerInitializeResponse<'a> {
    /// The typed fields.
    pub fields: PeerInitializeFields<'a>,
    /// The complete payload as received (every member, known or not).
    pub raw: RawJson<'a>,
}

impl PeerInitializeResponse<'_> {
    /// Decodes a payload (an object; every field optional or defaulted but command names).
    ///
    /// ```
    /// use agentx_wire::wire::{PeerInitializeResponse, RawJson};
    /// let raw = RawJson::parse(br#"{"models":[{"value":"default","resolvedModel":"m-1"}],"account":{"tokenSource":"none"},"x":1}"#).unwrap();
    /// let r = PeerInitializeResponse::decode(&raw).unwrap();
    /// assert_eq!(r.fields.models[0].resolved_model.as_deref(), Some("m-1"));
    /// assert_eq!(r.fields.account.unwrap().token_source.as_deref(), Some("none"));
    /// ```
    pub fn decode(raw: &RawJson<'_>) -> Result<PeerInitializeResponse<'static>, Error> {
        let doc = raw.document().map_err(Error::json)?;
        let fields = PeerInitializeFields::decode(doc.root(), &Path::ROOT)?.into_owned();
        Ok(PeerInitializeResponse {
            fields,
            raw: IntoOwned::into_owned(raw.clone()),
        })
    }
}

wire_struct! {
    /// `system/init` as a peer of the family writes it: the members hosts use, open
    /// vocabularies as strings (`apiKeySource` `none`, a model alias), WIRE-023's provider
    /// fields optional.
    pub struct PeerInit<'a> {
        closed: Closed::No,
        rule: "Initialization system event",
        skip: [],
        session_id: Text<'a> = "session_id" => req,
        model: Text<'a> = "model" => req,
        api_key_source: Option<Text<'a>> = "apiKeySource" => opt,
        claude_code_version: Option<Text<'a>> = "claude_code_version" => opt,
        cwd: Option<Text<'a>> = "cwd" => opt,
        tools: Vec<Text<'a>> = "tools" => dflt,
        permission_mode: Option<Text<'a>> = "permissionMode" => opt,
        provider: Option<Text<'a>> = "provider" => opt,
        output_style: Option<Text<'a>> = "output_style" => opt,
    }
}

impl PeerInit<'_> {
    /// The lenient view of a `system/init` record, typed or kept whole; `None` for any other
    /// record or one without `session_id` and `model` strings.
    pub fn from_record(record: &OutputRecord<'_>) -> Option<PeerInit<'static>> {
        let mut bytes = Vec::new();
        match record {
            OutputRecord::Unknown(u) if u.record_type == "system" => {
                u.record.0.write_canonical(&mut bytes)
            }
            OutputRecord::System(s) if s.subtype_name() == "init" => record.encode(&mut bytes),
            _ => return None,
        }
        let doc = json::parse(&bytes).ok()?;
        let obj = doc.root().as_object()?;
        if !member(obj, "subtype")?.as_str()?.eq_str("init") {
            return None;
        }
        Some(
            PeerInit::decode_members(obj, &Path::ROOT)
                .ok()?
                .into_owned(),
        )
    }
}
