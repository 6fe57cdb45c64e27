//! Provider selection, frozen for the process (WIRE-025), and everything a model-backed
//! session projects from it: the WIRE-023 `system/init` fields, the WIRE-024 `initialize`
//! catalog and `models` descriptor, `apiKeySource` (WIRE-016) and the resume binding.
//!
//! Owns: the selection rule of PROFILE §3 (`--provider ID`, else the declared default, else
//! the only provider, else a startup error listing the ids) and the immutable [`Selection`]
//! value. A `Selection` has no setter: there is no `set_provider`, and the logical model
//! cannot be reinterpreted (WIRE-025). It owns its registry and catalog, so a session holds
//! exactly one frozen choice.
//!
//! Must never: emit a private field, or build a catalog that skipped the collision rule.

use std::borrow::Cow;

use agentx_wire::encode::CredentialSet;
use agentx_wire::wire::initialize::{InitializeResponse, ModelDescriptor, ProviderDescriptor};
use agentx_wire::wire::system_init::{InitEvent, ReasoningCapabilities};
use agentx_wire::wire::{ApiKeySource, Provenance};

use super::binding::ProviderBinding;
use super::catalog::{model_descriptor, reasoning_capabilities, Catalog};
use super::error::Error;
use super::providers::{Provider, ProviderType, Registry, RegistrySource};

/// The WIRE-023 selected-provider members of every model-backed `system/init`, plus
/// `apiKeySource` (WIRE-016).
#[derive(Clone, PartialEq, Debug)]
pub struct InitProvider {
    /// `provider`: the exact stable registry id.
    pub provider: String,
    /// `provider_type`.
    pub provider_type: ProviderType,
    /// `model`: the logical model.
    pub model: String,
    /// `reasoning_capabilities`: the selected declaration, configured order kept.
    pub reasoning_capabilities: ReasoningCapabilities<'static>,
    /// `apiKeySource`.
    pub api_key_source: ApiKeySource,
}

/// The process-frozen provider selection.
#[derive(Clone, Debug)]
pub struct Selection {
    registry: Registry,
    catalog: Catalog,
    selected: usize,
    binding: ProviderBinding,
}

impl Selection {
    /// Selects a provider once for the process: `requested` (the `--provider` value, an exact
    /// id), else the declared default, else the only provider; otherwise an error listing the
    /// ids. The catalog (credential union and collision rule) is built first, so an invalid
    /// registry fails here and the ids printed by a selection error are known to be safe.
    pub fn select(registry: Registry, requested: Option<&str>) -> Result<Selection, Error> {
        let catalog = Catalog::build(&registry)?;
        let selected = match requested {
            Some(id) => registry
                .providers
                .iter()
                .position(|p| p.id == id)
                .ok_or_else(|| Error::unknown_provider(registry.ids()))?,
            None => registry
                .effective_default()
                .ok_or_else(|| Error::no_selection(registry.ids()))?,
        };
        let binding = match registry.providers.get(selected) {
            Some(p) => ProviderBinding::of(p),
            None => return Err(Error::unknown_provider(registry.ids())),
        };
        Ok(Selection {
            registry,
            catalog,
            selected,
            binding,
        })
    }

    /// The selected provider, private route included (for building the provider client).
    pub fn provider(&self) -> &Provider {
        // `selected` was checked against this very registry in `select`.
        &self.registry.providers[self.selected]
    }

    /// The selected provider's position in file order.
    pub fn index(&self) -> usize {
        self.selected
    }

    /// The registry the selection was made from.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The complete safe catalog (none selected).
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The complete registry credential union, for the session encoder (WIRE-013).
    pub fn credentials(&self) -> &CredentialSet {
        self.catalog.credentials()
    }

    /// The registry's credential union with `extra` secrets joined (PROFILE §18: the
    /// `--mcp-config` servers' secrets); `None` when the union cannot be built.
    pub fn credentials_with(&self, extra: &[String]) -> Option<CredentialSet> {
        if extra.is_empty() {
            return Some(self.credentials().clone());
        }
        let registry = self
            .registry
            .private_values()
            .map(|(_, _, s)| s.expose().to_vec());
        CredentialSet::new(registry.chain(extra.iter().map(|e| e.as_bytes().to_vec()))).ok()
    }

    /// The binding a durable session records and a resume compares (WIRE-025).
    pub fn binding(&self) -> &ProviderBinding {
        &self.binding
    }

    /// WIRE-016: the `auth.json` profile is file-backed, so `user`; the built-in provider has
    /// no key at all (absent provenance), also `user`.
    pub fn api_key_source(&self) -> ApiKeySource {
        match self.registry.source {
            RegistrySource::AuthJson => ApiKeySource::from_provenance(Some(Provenance::File)),
            RegistrySource::BuiltIn => ApiKeySource::from_provenance(None),
        }
    }

    /// `initialize.providers` (WIRE-024): every provider in file order, exactly the selected
    /// one `selected: true`, effective defaults independent of the selection.
    pub fn providers(&self) -> Vec<ProviderDescriptor<'static>> {
        self.catalog.with_selected(self.selected)
    }

    /// `initialize.models` (WIRE-024): one element, the selected logical model.
    pub fn models(&self) -> Vec<ModelDescriptor<'static>> {
        vec![model_descriptor(self.provider())]
    }

    /// The WIRE-023 members of `system/init`.
    pub fn init_provider(&self) -> InitProvider {
        let p = self.provider();
        InitProvider {
            provider: p.id.clone(),
            provider_type: p.provider_type(),
            model: p.model.clone(),
            reasoning_capabilities: reasoning_capabilities(&p.reasoning),
            api_key_source: self.api_key_source(),
        }
    }

    /// Sets the selected-provider members of a `system/init` record: `apiKeySource`, `model`,
    /// `provider`, `provider_type`, `reasoning_capabilities` (WIRE-016, WIRE-023). The record
    /// carries no unselected descriptor.
    pub fn apply_to_init(&self, init: &mut InitEvent<'_>) {
        let f = self.init_provider();
        init.api_key_source = Some(f.api_key_source);
        init.model = Cow::Owned(f.model);
        init.provider = Some(Cow::Owned(f.provider));
        init.provider_type = Some(Cow::Borrowed(f.provider_type.as_str()));
        init.reasoning_capabilities = Some(f.reasoning_capabilities);
    }

    /// Sets `models`, `providers` and `account.apiKeySource` of an `initialize` response
    /// (WIRE-016, WIRE-024).
    pub fn apply_to_initialize(&self, response: &mut InitializeResponse<'_>) {
        response.models = self.models();
        response.providers = self.providers();
        response.account.api_key_source = Some(self.api_key_source());
        response.account.provider = Some(Cow::Owned(self.provider().id.clone()));
    }
}
