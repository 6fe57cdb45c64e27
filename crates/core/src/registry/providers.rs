//! The strict provider registry as values: providers in `auth.json` order, each with its
//! public declaration and its private route (PROFILE §3).
//!
//! Owns: the registry types, the built-in `local` provider, the effective default, and the
//! enumeration of every private value (the raw material of the credential union).
//!
//! Must never: print a private value. [`Secret`] and [`Route`] have hand-written `Debug`
//! impls that show field names only; every other type here holds public strings.

use std::fmt;

/// Where the registry came from; decides the `apiKeySource` provenance (WIRE-016).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RegistrySource {
    /// `auth.json` in the AgentX home (file-backed: `user`).
    AuthJson,
    /// No `auth.json`: the built-in `local` provider (absent provenance: `user`).
    BuiltIn,
}

/// The closed set of provider types (PROFILE §3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ProviderType {
    /// `azure_openai`.
    AzureOpenAi,
    /// `openai`.
    OpenAi,
    /// `scripted` (the built-in `agentx-echo` model).
    Scripted,
}

impl ProviderType {
    /// The `type` / `providerType` / `provider_type` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderType::AzureOpenAi => "azure_openai",
            ProviderType::OpenAi => "openai",
            ProviderType::Scripted => "scripted",
        }
    }

    /// Parses the spelling; `None` outside the closed set.
    pub fn from_name(name: &str) -> Option<ProviderType> {
        match name {
            "azure_openai" => Some(ProviderType::AzureOpenAi),
            "openai" => Some(ProviderType::OpenAi),
            "scripted" => Some(ProviderType::Scripted),
            _ => None,
        }
    }

    /// PROFILE §3's default `description` of a configured provider of this type.
    pub fn default_description(self) -> &'static str {
        match self {
            ProviderType::AzureOpenAi => {
                "Deployment-backed model endpoint configured by AgentX-home auth.json"
            }
            ProviderType::OpenAi => {
                "OpenAI-compatible model endpoint configured by AgentX-home auth.json"
            }
            ProviderType::Scripted => {
                "Deterministic local model configured by AgentX-home auth.json"
            }
        }
    }
}

/// The description of the built-in `local` provider (PROFILE §3).
pub const BUILT_IN_DESCRIPTION: &str = "Deterministic local model built into agentx";

/// A private value: a key, an endpoint, a deployment, a path. Its `Debug` shows nothing.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(Box<[u8]>);

impl Secret {
    pub(crate) fn new(bytes: impl Into<Box<[u8]>>) -> Secret {
        Secret(bytes.into())
    }

    /// The value, for the code that must use it (building a provider client). The name says
    /// what it does: nothing printed from here is ever safe.
    pub fn expose(&self) -> &[u8] {
        &self.0
    }

    /// The value as text, when it is UTF-8 (every value read from `auth.json` is; a key read
    /// from the environment may not be).
    pub fn expose_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Where an API key comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum ApiKey {
    /// `api_key`: the key itself.
    Inline(Secret),
    /// `api_key_env`: the variable's name (itself a credential source value, never public)
    /// and its value, resolved once at load.
    Env {
        /// The variable's name.
        name: Secret,
        /// The key read from it.
        value: Secret,
    },
}

impl ApiKey {
    /// The key.
    pub fn key(&self) -> &Secret {
        match self {
            ApiKey::Inline(k) => k,
            ApiKey::Env { value, .. } => value,
        }
    }
}

/// A provider's private routing and authentication fields, by type (PROFILE §3).
#[derive(Clone, PartialEq, Eq)]
pub enum Route {
    /// `azure_openai`: an Azure OpenAI deployment.
    AzureOpenAi {
        /// The resource endpoint URL.
        endpoint: Secret,
        /// The deployment name.
        deployment: Secret,
        /// The `api-version` query value.
        api_version: Secret,
        /// The API key (sent as `api-key`).
        key: ApiKey,
    },
    /// `openai`: the OpenAI API or a compatible server.
    OpenAi {
        /// The base URL; `None` is `https://api.openai.com/v1`.
        base_url: Option<Secret>,
        /// The API key (sent as a bearer token).
        key: ApiKey,
        /// The `OpenAI-Organization` header, if any.
        organization: Option<Secret>,
    },
    /// `scripted`: the built-in deterministic model.
    Scripted {
        /// Reserved; the scripted model reads its directives from the prompt.
        script: Option<Secret>,
    },
}

impl Route {
    /// The provider type this route belongs to.
    pub fn provider_type(&self) -> ProviderType {
        match self {
            Route::AzureOpenAi { .. } => ProviderType::AzureOpenAi,
            Route::OpenAi { .. } => ProviderType::OpenAi,
            Route::Scripted { .. } => ProviderType::Scripted,
        }
    }

    /// Every private value with the name of its field, in a fixed order. The resolved value of
    /// `api_key_env` is named `api_key_env (resolved value)`.
    pub(crate) fn private_values(&self) -> Vec<(&'static str, &Secret)> {
        let mut out = Vec::with_capacity(5);
        match self {
            Route::AzureOpenAi {
                endpoint,
                deployment,
                api_version,
                key,
            } => {
                out.push(("endpoint", endpoint));
                out.push(("deployment", deployment));
                out.push(("api_version", api_version));
                push_key(&mut out, key);
            }
            Route::OpenAi {
                base_url,
                key,
                organization,
            } => {
                if let Some(b) = base_url {
                    out.push(("base_url", b));
                }
                push_key(&mut out, key);
                if let Some(o) = organization {
                    out.push(("organization", o));
                }
            }
            Route::Scripted { script } => {
                if let Some(s) = script {
                    out.push(("script", s));
                }
            }
        }
        out
    }
}

fn push_key<'r>(out: &mut Vec<(&'static str, &'r Secret)>, key: &'r ApiKey) {
    match key {
        ApiKey::Inline(k) => out.push(("api_key", k)),
        ApiKey::Env { name, value } => {
            out.push(("api_key_env", name));
            out.push(("api_key_env (resolved value)", value));
        }
    }
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Field names only: which private fields exist, never their values.
        let mut d = f.debug_struct("Route");
        d.field("type", &self.provider_type().as_str());
        let names: Vec<&'static str> = self.private_values().iter().map(|(n, _)| *n).collect();
        d.field("private_fields", &names);
        d.finish_non_exhaustive()
    }
}

/// A reasoning declaration (PROFILE §3): efforts in declared order and the default effort,
/// present exactly when `efforts` is nonempty.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct Reasoning {
    /// The reasoning efforts, in declared order.
    pub efforts: Vec<String>,
    /// The default effort; present exactly when `efforts` is nonempty.
    pub default_effort: Option<String>,
}

impl Reasoning {
    /// True exactly when `efforts` is nonempty (WIRE-023).
    pub fn supported(&self) -> bool {
        !self.efforts.is_empty()
    }
}

/// An operator's price table for a provider (PROFILE §19): US dollars per million tokens, each
/// finite and ≥ 0. Public-safe, never in the catalog.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Pricing {
    /// `input_per_mtok`: uncached prompt tokens.
    pub input_per_mtok: f64,
    /// `output_per_mtok`: completion tokens.
    pub output_per_mtok: f64,
    /// `cached_input_per_mtok`: cached prompt tokens; `None` prices them at `input_per_mtok`.
    pub cached_input_per_mtok: Option<f64>,
}

// The parser admits only finite numbers, so equality is reflexive.
impl Eq for Pricing {}

impl Pricing {
    /// The cost of one completed request (PROFILE §19): `((prompt − cached) × input + cached ×
    /// cached_input + completion × output) / 1,000,000`, with `cached` at most `prompt`.
    pub fn cost(&self, prompt_tokens: u64, cached_tokens: u64, completion_tokens: u64) -> f64 {
        let cached = cached_tokens.min(prompt_tokens);
        let uncached = prompt_tokens - cached;
        let cached_price = self.cached_input_per_mtok.unwrap_or(self.input_per_mtok);
        (uncached as f64 * self.input_per_mtok
            + cached as f64 * cached_price
            + completion_tokens as f64 * self.output_per_mtok)
            / 1_000_000.0
    }
}

/// One provider of the registry.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Provider {
    pub(crate) id: String,
    pub(crate) model: String,
    pub(crate) declared_default: bool,
    pub(crate) display_name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) reasoning: Reasoning,
    pub(crate) route: Route,
    /// PROFILE §19 `context_window`, in tokens (1,024..=10,000,000).
    pub(crate) context_window: Option<u32>,
    /// PROFILE §19 `pricing` (`openai` / `azure_openai` only).
    pub(crate) pricing: Option<Pricing>,
}

impl Provider {
    /// `displayName` as the catalog shows it: the given one, else `"<id> (<model>)"`
    /// (PROFILE §3).
    pub(crate) fn shown_name(&self) -> String {
        match &self.display_name {
            Some(d) => d.clone(),
            None => format!("{} ({})", self.id, self.model),
        }
    }

    /// `description` as the catalog shows it: the given one, else the type's default (PROFILE
    /// §3). The built-in `local` provider carries its own description.
    pub(crate) fn shown_description(&self) -> &str {
        match &self.description {
            Some(d) => d,
            None => self.provider_type().default_description(),
        }
    }

    /// The stable registry id.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The logical model.
    pub fn model(&self) -> &str {
        &self.model
    }
    /// The provider type.
    pub fn provider_type(&self) -> ProviderType {
        self.route.provider_type()
    }
    /// `default: true` in the source object.
    pub fn declared_default(&self) -> bool {
        self.declared_default
    }
    /// `display_name`, if declared.
    pub fn display_name(&self) -> Option<&str> {
        self.display_name.as_deref()
    }
    /// `description`, if declared.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }
    /// The reasoning declaration.
    pub fn reasoning(&self) -> &Reasoning {
        &self.reasoning
    }
    /// PROFILE §19: the declared context window in tokens, if any.
    pub fn context_window(&self) -> Option<u32> {
        self.context_window
    }
    /// PROFILE §19: the operator's price table, if declared.
    pub fn pricing(&self) -> Option<Pricing> {
        self.pricing
    }
    /// The same provider with another context window (tests and tools that build one).
    pub fn with_context_window(mut self, window: Option<u32>) -> Provider {
        self.context_window = window;
        self
    }
    /// The private route, for the code that builds a provider client. Never project it.
    pub fn route(&self) -> &Route {
        &self.route
    }
}

/// The strict registry: providers in `auth.json` order.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Registry {
    pub(crate) providers: Vec<Provider>,
    pub(crate) source: RegistrySource,
}

impl Registry {
    /// The registry without `auth.json`: one built-in scripted provider `local` with model
    /// `agentx-echo` (PROFILE §3). The binary prints the one-line notice.
    pub fn built_in() -> Registry {
        Registry {
            providers: vec![Provider {
                id: "local".to_string(),
                model: "agentx-echo".to_string(),
                declared_default: false,
                display_name: None,
                description: Some(BUILT_IN_DESCRIPTION.to_string()),
                reasoning: Reasoning::default(),
                route: Route::Scripted { script: None },
                context_window: None,
                pricing: None,
            }],
            source: RegistrySource::BuiltIn,
        }
    }

    /// The providers, in file order.
    pub fn providers(&self) -> &[Provider] {
        &self.providers
    }

    /// Where the registry was read from.
    pub fn source(&self) -> RegistrySource {
        self.source
    }

    /// The effective default (WIRE-024): the declared `default: true`, else the only provider
    /// of a singleton, else none.
    pub fn effective_default(&self) -> Option<usize> {
        if let Some(i) = self.providers.iter().position(|p| p.declared_default) {
            return Some(i);
        }
        if self.providers.len() == 1 {
            return Some(0);
        }
        None
    }

    /// The ids in file order.
    pub fn ids(&self) -> Vec<String> {
        self.providers.iter().map(|p| p.id.clone()).collect()
    }

    /// Every private value of every provider: `(provider index, field name, value)`.
    pub fn private_values(&self) -> impl Iterator<Item = (usize, &'static str, &Secret)> + '_ {
        self.providers.iter().enumerate().flat_map(|(i, p)| {
            p.route
                .private_values()
                .into_iter()
                .map(move |(n, s)| (i, n, s))
        })
    }
}
