//! Fuzz entry point of the provider registry (`provider_registry` target): arbitrary
//! `auth.json` bytes through the strict loader, the collision rule and discovery.
//!
//! Properties (each a panic when broken):
//! - the collision rule agrees with an independent naive check: the catalog builds exactly
//!   when no public string of any descriptor contains any private value of the registry,
//!   collected here straight from the routes;
//! - whenever discovery bytes are produced, no credential of that registry occurs in them
//!   (naive substring search over the raw bytes and over every decoded JSON string), and the
//!   JSON document is accepted by the wire layer's WIRE-026 decoder with every provider once,
//!   in file order, none selected;
//! - every selection's projections (initialize catalog, `models`, `system/init` members)
//!   carry exactly one selected descriptor and no credential in any public string.

use std::ffi::OsString;

use crate::registry::{
    parse_auth_json, ApiKey, Catalog, ErrorKind, Format, Registry, Route, Selection,
};
use agentx_wire::json;
use agentx_wire::wire::initialize::ProviderDiscovery;
use agentx_wire::wire::Path;

/// What happened to one input (for the seed replay test's coverage check).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// The strict registry rejected the bytes.
    Rejected,
    /// The collision rule (or the union's limits) refused the catalog.
    Refused,
    /// The catalog was built; `listed` counts the formats whose discovery bytes were produced.
    Listed { listed: usize },
}

/// Variables named with an even number of bytes are set (to a value derived from the name);
/// the others are unset. Deterministic, so crashes reproduce.
fn env(name: &str) -> Option<OsString> {
    name.len()
        .is_multiple_of(2)
        .then(|| OsString::from(format!("env-{name}")))
}

/// The fuzz target.
pub fn registry(data: &[u8]) {
    let _ = registry_outcome(data);
}

/// The fuzz target's body, reporting what happened.
pub fn registry_outcome(data: &[u8]) -> Outcome {
    let registry = match parse_auth_json(data, &env) {
        Ok(r) => r,
        Err(e) => {
            assert_eq!(
                e.kind(),
                ErrorKind::Registry,
                "loader error of another kind"
            );
            return Outcome::Rejected;
        }
    };
    let credentials = independent_credentials(&registry);
    let publics = public_strings(&registry);
    // Both spellings of both sides: what the string is, and what the JSON writer makes of it.
    let spellings = |b: &[u8]| {
        let mut quoted = Vec::new();
        json::write_str_bytes(&mut quoted, b);
        let escaped = quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or(&[])
            .to_vec();
        [b.to_vec(), escaped]
    };
    let naive_collision = publics.iter().any(|p| {
        spellings(p.as_bytes()).iter().any(|ps| {
            credentials
                .iter()
                .any(|c| spellings(c).iter().any(|cs| contains(ps, cs)))
        })
    });
    let catalog = match Catalog::build(&registry) {
        Ok(c) => c,
        Err(e) => {
            match e.kind() {
                ErrorKind::Collision => assert!(naive_collision, "collision rule fired alone"),
                ErrorKind::CredentialUnion => {}
                other => panic!("unexpected catalog error {other:?}"),
            }
            return Outcome::Refused;
        }
    };
    // The field-level rule may be stricter than the naive raw check only through our own
    // escaped spelling of a credential; it must never be looser.
    assert!(
        !publics
            .iter()
            .any(|p| credentials.iter().any(|c| contains(p.as_bytes(), c))),
        "catalog built although a public string holds a credential"
    );

    let mut listed = 0;
    for format in [Format::Json, Format::Text] {
        let Ok(bytes) = catalog.discovery(format) else {
            continue;
        };
        listed += 1;
        for c in &credentials {
            assert!(!contains(&bytes, c), "discovery bytes carry a credential");
        }
        if format == Format::Json {
            check_document(&registry, &bytes, &credentials);
        }
    }

    // Bounded work per input: the first few providers are selected in turn.
    for (i, p) in registry.providers().iter().enumerate().take(8) {
        let sel = match Selection::select(registry.clone(), Some(p.id())) {
            Ok(s) => s,
            Err(e) => panic!("selecting an existing id failed: {:?}", e.kind()),
        };
        assert_eq!(sel.index(), i);
        let catalog = sel.providers();
        assert_eq!(
            catalog.len(),
            registry.providers().len(),
            "catalog truncated"
        );
        assert_eq!(catalog.iter().filter(|d| d.selected).count(), 1);
        assert!(catalog[i].selected);
        let init = sel.init_provider();
        let models = sel.models();
        let mut strings: Vec<&str> = vec![&init.provider, &init.model];
        for m in &models {
            strings.extend([&*m.value, &*m.display_name, &*m.description]);
        }
        for s in strings {
            for c in &credentials {
                assert!(
                    !contains(s.as_bytes(), c),
                    "projection carries a credential"
                );
            }
        }
    }
    Outcome::Listed { listed }
}

fn check_document(registry: &Registry, bytes: &[u8], credentials: &[Vec<u8>]) {
    let doc = json::parse(bytes).expect("discovery emits strict JSON");
    let obj = doc.root().as_object().expect("discovery emits an object");
    let d = ProviderDiscovery::decode_checked(obj, &Path::ROOT).expect("WIRE-026 document");
    assert_eq!(d.version, 1);
    assert_eq!(d.providers.len(), registry.providers().len());
    for (desc, p) in d.providers.iter().zip(registry.providers()) {
        assert_eq!(&*desc.id, p.id());
        assert!(!desc.selected);
    }
    let defaults = d.providers.iter().filter(|p| p.default).count();
    assert_eq!(
        defaults,
        usize::from(registry.effective_default().is_some())
    );
    // Every decoded string of the document, names included.
    let mut stack = vec![doc.root()];
    let mut decoded = Vec::new();
    while let Some(v) = stack.pop() {
        if let Some(s) = v.as_str() {
            decoded.clear();
            s.decode_into(&mut decoded);
            for c in credentials {
                assert!(
                    !contains(&decoded, c),
                    "a decoded string carries a credential"
                );
            }
        } else if let Some(a) = v.as_array() {
            stack.extend(a.iter());
        } else if let Some(o) = v.as_object() {
            for (name, value) in o.iter() {
                decoded.clear();
                name.decode_into(&mut decoded);
                for c in credentials {
                    assert!(!contains(&decoded, c), "a member name carries a credential");
                }
                stack.push(value);
            }
        }
    }
}

/// Every private value, collected from the routes directly (not through the layer's own
/// enumeration, which is what is under test).
fn independent_credentials(registry: &Registry) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let key = |k: &ApiKey, out: &mut Vec<Vec<u8>>| match k {
        ApiKey::Inline(s) => out.push(s.expose().to_vec()),
        ApiKey::Env { name, value } => {
            out.push(name.expose().to_vec());
            out.push(value.expose().to_vec());
        }
    };
    for p in registry.providers() {
        match p.route() {
            Route::AzureOpenAi {
                endpoint,
                deployment,
                api_version,
                key: k,
            } => {
                out.extend([endpoint, deployment, api_version].map(|s| s.expose().to_vec()));
                key(k, &mut out);
            }
            Route::OpenAi {
                base_url,
                key: k,
                organization,
            } => {
                out.extend(base_url.iter().map(|s| s.expose().to_vec()));
                out.extend(organization.iter().map(|s| s.expose().to_vec()));
                key(k, &mut out);
            }
            Route::Scripted { script } => out.extend(script.iter().map(|s| s.expose().to_vec())),
        }
    }
    out
}

/// The public strings of every descriptor, rebuilt from the PROFILE §3 rules.
fn public_strings(registry: &Registry) -> Vec<String> {
    let mut out = Vec::new();
    for p in registry.providers() {
        out.push(p.id().to_string());
        out.push(p.provider_type().as_str().to_string());
        out.push(p.model().to_string());
        out.push(match p.display_name() {
            Some(d) => d.to_string(),
            None => format!("{} ({})", p.id(), p.model()),
        });
        out.push(match p.description() {
            Some(d) => d.to_string(),
            None => p.provider_type().default_description().to_string(),
        });
        out.extend(p.reasoning().efforts.iter().cloned());
    }
    out
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}
