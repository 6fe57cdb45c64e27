//! The restart-bound provider binding a durable session records and a resume compares
//! (WIRE-025).
//!
//! Owns: the binding value (provider id, provider type, logical model and an opaque route
//! fingerprint), its comparison, which fails closed on any difference before replay or
//! provider I/O, and its closed JSON record for the session store.
//!
//! The fingerprint is SHA-256 over the provider's private routing fields (type, endpoint,
//! deployment, API version, base URL, organization, script), each length-prefixed under a
//! domain-separation label, so equal routes give equal fingerprints and nothing can be read
//! back out of it except by guessing every routing value at once. API keys are left out: a
//! rotated key keeps the route. The fingerprint is never part of any public projection
//! (WIRE-024 excludes the provider binding); it lives only in the local session store.
//!
//! Must never: print a private value, or accept a recorded binding it cannot fully check.

use sha2::{Digest as _, Sha256};

use agentx_wire::json::{self, write_str};

use super::error::{Error, ErrorKind};
use super::parse::id_grammar;
use super::providers::{Provider, ProviderType, Route, Secret};

const DOMAIN: &[u8] = b"agentx-wire/provider-route-binding/v1\0";

/// The opaque SHA-256 route fingerprint.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RouteFingerprint([u8; 32]);

impl RouteFingerprint {
    /// The fingerprint of a provider's private routing fields.
    pub fn of(route: &Route) -> RouteFingerprint {
        let mut h = Sha256::new();
        h.update(DOMAIN);
        let mut field = |name: &str, value: Option<&[u8]>| {
            h.update((name.len() as u64).to_be_bytes());
            h.update(name.as_bytes());
            match value {
                None => h.update([0u8]),
                Some(v) => {
                    h.update([1u8]);
                    h.update((v.len() as u64).to_be_bytes());
                    h.update(v);
                }
            }
        };
        field("type", Some(route.provider_type().as_str().as_bytes()));
        let opt = |s: &Option<Secret>| s.as_ref().map(|s| s.expose().to_vec());
        match route {
            Route::AzureOpenAi {
                endpoint,
                deployment,
                api_version,
                key: _,
            } => {
                field("endpoint", Some(endpoint.expose()));
                field("deployment", Some(deployment.expose()));
                field("api_version", Some(api_version.expose()));
            }
            Route::OpenAi {
                base_url,
                key: _,
                organization,
            } => {
                field("base_url", opt(base_url).as_deref());
                field("organization", opt(organization).as_deref());
            }
            Route::Scripted { script } => field("script", opt(script).as_deref()),
        }
        let out = h.finalize();
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(out.as_slice());
        RouteFingerprint(bytes)
    }

    /// 64 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        agentx_wire::hex::lower(&self.0)
    }

    /// Parses exactly 64 lowercase hex digits.
    pub fn from_hex(s: &str) -> Option<RouteFingerprint> {
        agentx_wire::hex::parse32(s).map(RouteFingerprint)
    }
}

/// What a durable session records about its provider, and what a resume must match.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ProviderBinding {
    id: String,
    provider_type: ProviderType,
    model: String,
    route: RouteFingerprint,
}

impl agentx_wire::wire::Encode for ProviderBinding {
    fn encode(&self, out: &mut Vec<u8>) {
        ProviderBinding::encode(self, out)
    }
}

impl ProviderBinding {
    /// The binding of a selected provider.
    pub fn of(p: &Provider) -> ProviderBinding {
        ProviderBinding {
            id: p.id.clone(),
            provider_type: p.provider_type(),
            model: p.model.clone(),
            route: RouteFingerprint::of(&p.route),
        }
    }

    /// The provider ID.
    pub fn id(&self) -> &str {
        &self.id
    }
    /// The provider type.
    pub fn provider_type(&self) -> ProviderType {
        self.provider_type
    }
    /// The model.
    pub fn model(&self) -> &str {
        &self.model
    }
    /// A fingerprint of the private route (never the route itself).
    pub fn route(&self) -> RouteFingerprint {
        self.route
    }

    /// WIRE-025: a resume of a session recorded with `recorded` is allowed only when id, type,
    /// model and route all match this process's frozen selection. Call before any replay or
    /// provider I/O. The error names the first differing component, never a value.
    pub fn check_resume(&self, recorded: &ProviderBinding) -> Result<(), Error> {
        if self.id != recorded.id {
            return Err(Error::binding_mismatch("id"));
        }
        if self.provider_type != recorded.provider_type {
            return Err(Error::binding_mismatch("type"));
        }
        if self.model != recorded.model {
            return Err(Error::binding_mismatch("model"));
        }
        // Not secret-dependent timing worth hiding: the fingerprint is not a key. Compare all
        // bytes anyway.
        let differ = self
            .route
            .0
            .iter()
            .zip(recorded.route.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if differ != 0 {
            return Err(Error::binding_mismatch("route"));
        }
        Ok(())
    }

    /// The closed record for the session store:
    /// `{"provider":ID,"provider_type":TYPE,"model":MODEL,"route":HEX}`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"provider\":");
        write_str(out, &self.id);
        out.extend_from_slice(b",\"provider_type\":");
        write_str(out, self.provider_type.as_str());
        out.extend_from_slice(b",\"model\":");
        write_str(out, &self.model);
        out.extend_from_slice(b",\"route\":");
        write_str(out, &self.route.to_hex());
        out.push(b'}');
    }

    /// Decodes a record written by [`encode`](Self::encode): strict JSON, closed, every member
    /// required and well-formed; anything else fails closed.
    pub fn decode(bytes: &[u8]) -> Result<ProviderBinding, Error> {
        let bad = || Error::simple(ErrorKind::BindingRecord);
        let doc = json::parse(bytes).map_err(|_| bad())?;
        let obj = doc.root().as_object().ok_or_else(bad)?;
        const NAMES: [&str; 4] = ["provider", "provider_type", "model", "route"];
        if obj.len() != NAMES.len() || obj.unknown_member(&NAMES).is_some() {
            return Err(bad());
        }
        let text = |name: &str| {
            obj.get(name)
                .and_then(|v| v.as_str())
                .map(|s| s.decode().into_owned())
                .ok_or_else(bad)
        };
        let id = text("provider")?;
        let provider_type = ProviderType::from_name(&text("provider_type")?).ok_or_else(bad)?;
        let model = text("model")?;
        let route = RouteFingerprint::from_hex(&text("route")?).ok_or_else(bad)?;
        if !id_grammar(&id) || model.is_empty() {
            return Err(bad());
        }
        Ok(ProviderBinding {
            id,
            provider_type,
            model,
            route,
        })
    }
}
