//! The public projection of a registry: the WIRE-024 descriptors, the `models` compatibility
//! descriptor, and the WIRE-026 discovery document in both output formats.
//!
//! Owns: the descriptor field values (PROFILE §3 `displayName` and `description` defaults,
//! the effective `default`, flat and nested effort fields built from one declaration so they
//! always agree), and the final discovery bytes, validated against the complete credential
//! union before anybody may write them (WIRE-013, WIRE-026).
//!
//! Must never: project a private field. The output types are the `wire` layer's public
//! shapes ([`ProviderDescriptor`], [`ModelDescriptor`]), which have no member that could carry
//! an endpoint, deployment, API version, key, binding, header or credential path; and a
//! [`Catalog`] exists only after the collision rule passed. A catalog is complete or absent:
//! there is no partial or redacted form.

use std::borrow::Cow;

use agentx_wire::encode::CredentialSet;
use agentx_wire::wire::initialize::{ModelDescriptor, ProviderDescriptor, ProviderDiscovery};
use agentx_wire::wire::system_init::ReasoningCapabilities;
use agentx_wire::wire::WireValue;

use super::credentials::{check_collisions, credential_union};
use super::error::{Error, ErrorKind};
use super::providers::{Provider, Reasoning, Registry};

/// The discovery document's version (WIRE-026); unrelated to `auth.json`'s version 2.
pub const DISCOVERY_VERSION: u64 = 1;

/// The `--list-providers` output format (PROFILE §2; `text` is the default).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Format {
    /// One provider per line.
    #[default]
    Text,
    /// The public catalog as one JSON document (WIRE-024).
    Json,
}

/// The WIRE-023 reasoning declaration of a provider.
pub(crate) fn reasoning_capabilities(r: &Reasoning) -> ReasoningCapabilities<'static> {
    ReasoningCapabilities::new(
        r.efforts.iter().map(|e| Cow::Owned(e.clone())).collect(),
        r.default_effort.clone().map(Cow::Owned),
    )
}

fn descriptor(p: &Provider, default: bool, selected: bool) -> ProviderDescriptor<'static> {
    let reasoning = reasoning_capabilities(&p.reasoning);
    ProviderDescriptor {
        value: Cow::Owned(p.id.clone()),
        id: Cow::Owned(p.id.clone()),
        provider_type: Cow::Borrowed(p.provider_type().as_str()),
        model: Cow::Owned(p.model.clone()),
        display_name: Cow::Owned(p.shown_name()),
        description: Cow::Owned(p.shown_description().to_string()),
        default,
        selected,
        // Flat fields copied from the nested declaration: they cannot disagree (WIRE-024).
        supports_effort: reasoning.supported,
        supported_reasoning_efforts: reasoning.efforts.clone(),
        default_reasoning_effort: reasoning.default_effort.clone(),
        reasoning,
    }
}

/// The `models` compatibility descriptor of the selected logical model (WIRE-024): `value` and
/// `displayName` are the model name; `provider`, `providerType` and the effort fields
/// identify the frozen profile.
pub(crate) fn model_descriptor(p: &Provider) -> ModelDescriptor<'static> {
    let reasoning = reasoning_capabilities(&p.reasoning);
    ModelDescriptor {
        value: Cow::Owned(p.model.clone()),
        display_name: Cow::Owned(p.model.clone()),
        description: Cow::Owned(p.shown_description().to_string()),
        provider: Some(Cow::Owned(p.id.clone())),
        provider_type: Some(Cow::Borrowed(p.provider_type().as_str())),
        supports_effort: Some(reasoning.supported),
        supported_reasoning_efforts: Some(reasoning.efforts.clone()),
        default_reasoning_effort: Some(reasoning.default_effort.clone()),
        reasoning: Some(reasoning),
    }
}

/// The complete safe catalog of a registry: every provider once, in file order, none
/// selected. Built only when the credential union exists and no public string collides.
#[derive(Clone, Debug)]
pub struct Catalog {
    descriptors: Vec<ProviderDescriptor<'static>>,
    credentials: CredentialSet,
}

impl Catalog {
    /// Builds the credential union, applies the collision rule, projects every provider.
    pub fn build(registry: &Registry) -> Result<Catalog, Error> {
        let credentials = credential_union(registry)?;
        check_collisions(registry)?;
        let default = registry.effective_default();
        let descriptors = registry
            .providers
            .iter()
            .enumerate()
            .map(|(i, p)| descriptor(p, default == Some(i), false))
            .collect();
        Ok(Catalog {
            descriptors,
            credentials,
        })
    }

    /// The descriptors, in file order, every one `selected: false` (WIRE-026).
    pub fn descriptors(&self) -> &[ProviderDescriptor<'static>] {
        &self.descriptors
    }

    /// The complete registry credential union (for the session's encoder, WIRE-013).
    pub fn credentials(&self) -> &CredentialSet {
        &self.credentials
    }

    /// The initialize catalog (WIRE-024): the same descriptors with exactly `selected` marked.
    pub fn with_selected(&self, selected: usize) -> Vec<ProviderDescriptor<'static>> {
        let mut all = self.descriptors.clone();
        for (i, d) in all.iter_mut().enumerate() {
            d.selected = i == selected;
        }
        all
    }

    /// The exact bytes of `agentx --list-providers` in `format`, validated against the
    /// complete credential union (WIRE-026). `Err` means nothing may be written.
    pub fn discovery(&self, format: Format) -> Result<Vec<u8>, Error> {
        let bytes = match format {
            Format::Json => self.discovery_json_unchecked(),
            Format::Text => self.discovery_text_unchecked(),
        };
        self.validated(bytes)
    }

    /// One version-1 document plus `\n` (WIRE-026), compact, canonical member order.
    fn discovery_json_unchecked(&self) -> Vec<u8> {
        let doc = ProviderDiscovery {
            version: DISCOVERY_VERSION,
            providers: self.descriptors.clone(),
        };
        let mut out = Vec::with_capacity(512 * self.descriptors.len() + 32);
        doc.encode(&mut out);
        out.push(b'\n');
        out
    }

    /// One line per provider (PROFILE §3):
    /// `<id>  <providerType>  <model>  [default]  efforts: <e1>, <e2> (default <e>)`;
    /// `[default]` only on the effective default, `efforts: none` without efforts.
    fn discovery_text_unchecked(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128 * self.descriptors.len());
        for d in &self.descriptors {
            for part in [&*d.id, "  ", &*d.provider_type, "  ", &*d.model] {
                out.extend_from_slice(part.as_bytes());
            }
            if d.default {
                out.extend_from_slice(b"  [default]");
            }
            out.extend_from_slice(b"  efforts: ");
            if d.reasoning.efforts.is_empty() {
                out.extend_from_slice(b"none");
            } else {
                for (j, e) in d.reasoning.efforts.iter().enumerate() {
                    if j > 0 {
                        out.extend_from_slice(b", ");
                    }
                    out.extend_from_slice(e.as_bytes());
                }
                if let Some(def) = &d.reasoning.default_effort {
                    out.extend_from_slice(b" (default ");
                    out.extend_from_slice(def.as_bytes());
                    out.push(b')');
                }
            }
            out.push(b'\n');
        }
        out
    }

    /// WIRE-013 over the exact final bytes: raw, escaped and decoded spellings, across every
    /// field boundary and the final newline.
    fn validated(&self, bytes: Vec<u8>) -> Result<Vec<u8>, Error> {
        let mut scratch = Vec::new();
        if self.credentials.matches(&bytes, &mut scratch) {
            return Err(Error::simple(ErrorKind::Framing));
        }
        Ok(bytes)
    }
}
