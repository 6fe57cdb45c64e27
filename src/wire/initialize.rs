//! The `initialize` control operation's success payload and the public provider descriptor
//! (WIRE-024), plus the WIRE-026 discovery document that reuses it.
//!
//! Owns the closed descriptor shape and its agreement rules: `value` equals `id`, the flat
//! effort fields equal the nested `reasoning` declaration, `reasoning` satisfies WIRE-023, and
//! exactly one descriptor of an initialize catalog is `selected` (none of a discovery
//! document). The descriptor has no member that could carry an endpoint, deployment, key or
//! path; credential validation of the final bytes is the encoder's (WIRE-013). Never builds
//! a catalog from a registry (`agentx_core::registry` does).

use crate::json::{Object, Value};

use super::api_key_source::ApiKeySource;
use super::decode::{Closed, Path, Text, WireValue};
use super::error::Error;
use super::raw::RawJson;
use super::system_init::{InputCapabilities, ReasoningCapabilities};
use super::table::wire_struct;

wire_struct! {
    /// One public provider descriptor (WIRE-024), closed. Canonical order as declared.
    pub struct ProviderDescriptor<'a> {
        closed: Closed::Yes("WIRE-024"),
        rule: "WIRE-024",
        skip: [],
        value: Text<'a> = "value" => req,
        id: Text<'a> = "id" => req,
        provider_type: Text<'a> = "providerType" => req,
        model: Text<'a> = "model" => req,
        display_name: Text<'a> = "displayName" => req,
        description: Text<'a> = "description" => req,
        default: bool = "default" => req,
        selected: bool = "selected" => req,
        supports_effort: bool = "supportsEffort" => req,
        supported_reasoning_efforts: Vec<Text<'a>> = "supportedReasoningEfforts" => req,
        default_reasoning_effort: Option<Text<'a>> = "defaultReasoningEffort" => req,
        reasoning: ReasoningCapabilities<'a> = "reasoning" => req,
    }
}

impl ProviderDescriptor<'_> {
    /// WIRE-024 agreement rules for one descriptor.
    pub(crate) fn check(&self, at: &Path<'_>) -> Result<(), Error> {
        const RULE: &str = "WIRE-024";
        if self.value != self.id {
            return Err(Error::invalid(&at.key("value"), "the provider id", RULE));
        }
        self.reasoning.check(&at.key("reasoning"))?;
        if self.supports_effort != self.reasoning.supported {
            return Err(Error::invalid(
                &at.key("supportsEffort"),
                "reasoning.supported",
                RULE,
            ));
        }
        if self.supported_reasoning_efforts != self.reasoning.efforts {
            return Err(Error::invalid(
                &at.key("supportedReasoningEfforts"),
                "reasoning.efforts",
                RULE,
            ));
        }
        if self.default_reasoning_effort != self.reasoning.default_effort {
            return Err(Error::invalid(
                &at.key("defaultReasoningEffort"),
                "reasoning.defaultEffort",
                RULE,
            ));
        }
        Ok(())
    }
}

/// A checked provider catalog: each descriptor valid; `selected` counted by the caller.
fn check_catalog(
    providers: &[ProviderDescriptor<'_>],
    at: &Path<'_>,
    selected: usize,
) -> Result<(), Error> {
    for (i, p) in providers.iter().enumerate() {
        p.check(&at.index(i))?;
    }
    if providers.iter().filter(|p| p.selected).count() != selected {
        let expected = if selected == 1 {
            "exactly one selected descriptor"
        } else {
            "no selected descriptor"
        };
        return Err(Error::invalid(at, expected, "WIRE-024"));
    }
    Ok(())
}

wire_struct! {
    /// A slash command of the initialize response.
    pub struct SlashCommand<'a> {
        closed: Closed::No,
        rule: "initialize",
        skip: [],
        name: Text<'a> = "name" => req,
        description: Text<'a> = "description" => req,
        argument_hint: Option<Text<'a>> = "argumentHint" => opt,
    }
}

wire_struct! {
    /// The selected logical-model compatibility descriptor (`models`, one element).
    pub struct ModelDescriptor<'a> {
        closed: Closed::No,
        rule: "WIRE-024",
        skip: [],
        value: Text<'a> = "value" => req,
        display_name: Text<'a> = "displayName" => req,
        description: Text<'a> = "description" => req,
        provider: Option<Text<'a>> = "provider" => opt,
        provider_type: Option<Text<'a>> = "providerType" => opt,
        supports_effort: Option<bool> = "supportsEffort" => opt,
        supported_reasoning_efforts: Option<Vec<Text<'a>>> = "supportedReasoningEfforts" => opt,
        default_reasoning_effort: Option<Option<Text<'a>>> = "defaultReasoningEffort" => opt,
        reasoning: Option<ReasoningCapabilities<'a>> = "reasoning" => opt,
    }
}

wire_struct! {
    /// The selected-provider account identity (WIRE-016: `apiKeySource` is `user` for the
    /// application-home profile).
    pub struct Account<'a> {
        closed: Closed::No,
        rule: "WIRE-016",
        skip: [],
        api_key_source: Option<ApiKeySource> = "apiKeySource" => opt,
        /// The selected provider's id (PROFILE §8 `account`).
        provider: Option<Text<'a>> = "provider" => opt,
        email: Option<Text<'a>> = "email" => opt,
        organization: Option<Text<'a>> = "organization" => opt,
        subscription_type: Option<Text<'a>> = "subscriptionType" => opt,
        token_source: Option<Text<'a>> = "tokenSource" => opt,
    }
}

wire_struct! {
    /// The successful `initialize` response payload. Canonical order as declared.
    pub struct InitializeResponse<'a> {
        closed: Closed::No,
        rule: "initialize",
        skip: [],
        commands: Vec<SlashCommand<'a>> = "commands" => req,
        /// Empty in this profile; elements kept as validated JSON.
        agents: Vec<RawJson<'a>> = "agents" => req,
        output_style: Text<'a> = "output_style" => req,
        available_output_styles: Vec<Text<'a>> = "available_output_styles" => req,
        models: Vec<ModelDescriptor<'a>> = "models" => req,
        providers: Vec<ProviderDescriptor<'a>> = "providers" => req,
        account: Account<'a> = "account" => req,
        pid: Option<u64> = "pid" => opt,
        input_capabilities: Option<InputCapabilities<'a>> = "input_capabilities" => opt,
    }
}

impl<'a> InitializeResponse<'a> {
    /// Decodes and checks WIRE-024 (one selected descriptor, agreeing fields, at most one
    /// effective default, a one-element `models` naming the selected provider).
    pub fn decode_checked(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let r = <InitializeResponse<'a> as WireValue<'a>>::decode(v, at)?;
        let providers_at = at.key("providers");
        check_catalog(&r.providers, &providers_at, 1)?;
        if r.providers.iter().filter(|p| p.default).count() > 1 {
            return Err(Error::invalid(
                &providers_at,
                "at most one effective default descriptor",
                "WIRE-024",
            ));
        }
        // `models` is the one-element compatibility array of the selected logical model.
        let selected = r.providers.iter().find(|p| p.selected);
        let names_selection = match (r.models.as_slice(), selected) {
            ([m], Some(p)) => m.provider.as_ref() == Some(&p.id),
            _ => false,
        };
        if !names_selection {
            return Err(Error::invalid(
                &at.key("models"),
                "one element whose provider is the selected descriptor's id",
                "WIRE-024",
            ));
        }
        Ok(r)
    }
}

/// The SDK profile's `initialize` success payload (PROFILE §15, §16): the
/// [`InitializeResponse`] members, then what the SDKs read: `hook_on_failure_supported`
/// (this profile honours `onFailure`), `hooks_applied` when the request registered hook
/// callbacks, and `mcp_servers_applied` when it sent MCP servers (TypeScript ends the session
/// unless it is a boolean then).
#[derive(Clone, Debug, PartialEq)]
pub struct SdkInitializeResponse<'a> {
    /// The members every profile answers.
    pub response: InitializeResponse<'a>,
    /// Written when `Some`.
    pub hook_on_failure_supported: Option<bool>,
    /// Written when `Some`.
    pub hooks_applied: Option<bool>,
    /// Written when `Some`.
    pub mcp_servers_applied: Option<bool>,
}

impl<'a> WireValue<'a> for SdkInitializeResponse<'a> {
    fn decode(v: Value<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let response = InitializeResponse::decode(v, at)?;
        let obj = super::decode::object(v, at, "initialize")?;
        let flag = |name: &'static str| {
            super::decode::opt::<bool>(super::decode::member(obj, name), &at.key(name))
        };
        Ok(SdkInitializeResponse {
            response,
            hook_on_failure_supported: flag("hook_on_failure_supported")?,
            hooks_applied: flag("hooks_applied")?,
            mcp_servers_applied: flag("mcp_servers_applied")?,
        })
    }

    fn encode(&self, out: &mut Vec<u8>) {
        let mut w = super::decode::Obj::begin(out);
        self.response.encode_members(&mut w);
        for (key, v) in [
            (
                "\"hook_on_failure_supported\":",
                self.hook_on_failure_supported,
            ),
            ("\"hooks_applied\":", self.hooks_applied),
            ("\"mcp_servers_applied\":", self.mcp_servers_applied),
        ] {
            if let Some(v) = v {
                v.encode(w.key(key));
            }
        }
        w.end();
    }
}

wire_struct! {
    /// WIRE-026 `--list-providers --output-format json` document, closed.
    pub struct ProviderDiscovery<'a> {
        closed: Closed::Yes("WIRE-026"),
        rule: "WIRE-026",
        skip: [],
        version: u64 = "version" => req,
        providers: Vec<ProviderDescriptor<'a>> = "providers" => req,
    }
}

impl<'a> ProviderDiscovery<'a> {
    /// Decodes and checks WIRE-026: `version` 1 (checked before descriptors), every
    /// descriptor valid and none selected.
    pub fn decode_checked(obj: Object<'_, 'a>, at: &Path<'_>) -> Result<Self, Error> {
        let v_at = at.key("version");
        match obj
            .get("version")
            .and_then(|v| v.as_number())
            .and_then(|n| n.as_u64())
        {
            Some(1) => {}
            _ => return Err(Error::invalid(&v_at, "the integer 1", "WIRE-026")),
        }
        let d = ProviderDiscovery::decode_members(obj, at)?;
        check_catalog(&d.providers, &at.key("providers"), 0)?;
        Ok(d)
    }
}
