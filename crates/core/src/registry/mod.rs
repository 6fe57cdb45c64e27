//! The provider registry: the strict `auth.json` registry, its credential union, the safe
//! public catalog, prelaunch discovery, the process-frozen selection and the resume binding
//! (PROFILE §3; WIRE-016, WIRE-023 to WIRE-026).
//!
//! Owns:
//! - the AgentX home rule and the registry loader ([`agentx_home`], [`load_registry`],
//!   [`parse_auth_json`]): version 2 only, closed at every level, every grammar and limit,
//!   `api_key_env` resolved through a caller-supplied lookup; the built-in `local` provider
//!   when `auth.json` is absent;
//! - the credential union ([`credential_union`]) handed to the encoder (WIRE-013) and the
//!   collision rule ([`check_collisions`]): no public string may contain private material;
//! - the public projection ([`Catalog`], [`Selection`]): WIRE-024 descriptors in file order,
//!   the `models` compatibility descriptor, the WIRE-023 `system/init` members, `apiKeySource`;
//! - discovery ([`discovery`]): the `--list-providers` grammar and its exact validated bytes;
//! - the resume binding ([`ProviderBinding`], WIRE-025).
//!
//! Must never: emit a private field (endpoint, deployment, API version, key, `api_key_env`,
//! base URL, organization, script path) or put one in a diagnostic or a `Debug` output; read
//! a file, the environment or a clock (the binary does that and passes values in); produce a
//! partial or redacted catalog.
//!
//! ```
//! use agentx_core::registry::{discovery, parse_auth_json, Format, Selection};
//!
//! let auth = br#"{"version":2,"providers":[
//!   {"id":"a","type":"openai","model":"m1","api_key":"sk-secret"},
//!   {"id":"b","type":"scripted","model":"m2","default":true}]}"#;
//! let registry = parse_auth_json(auth, &|_| None).unwrap();
//! let doc = discovery::discover(&registry, Format::Json).unwrap();
//! assert!(doc.ends_with(b"}\n") && !doc.windows(9).any(|w| w == b"sk-secret"));
//! let selection = Selection::select(registry, Some("a")).unwrap();
//! assert_eq!(selection.init_provider().provider, "a");
//! ```

mod binding;
mod catalog;
mod credentials;
pub mod discovery;
mod error;
mod home;
mod model_choice;
mod parse;
mod providers;
mod selection;
mod transport;

pub use binding::{ProviderBinding, RouteFingerprint};
pub use catalog::{Catalog, Format, DISCOVERY_VERSION};
pub use credentials::{check_collisions, credential_union};
pub use error::{At, Error, ErrorKind, MemberName, Rule};
pub use home::{agentx_home, load_registry, AUTH_JSON, BUILT_IN_NOTICE};
pub use model_choice::ChoiceError;
pub use parse::{
    id_grammar, parse_auth_json, EnvLookup, MAX_AUTH_JSON_LEN, MAX_CONTEXT_WINDOW,
    MAX_DESCRIPTION_LEN, MAX_DISPLAY_NAME_LEN, MAX_EFFORTS, MAX_EFFORT_LEN, MAX_ENV_NAME_LEN,
    MAX_ID_LEN, MAX_MODEL_LEN, MAX_PRIVATE_LEN, MAX_PROVIDERS, MIN_CONTEXT_WINDOW,
};
pub use providers::{
    ApiKey, Pricing, Provider, ProviderType, Reasoning, Registry, RegistrySource, Route, Secret,
    BUILT_IN_DESCRIPTION,
};
pub use selection::{InitProvider, Selection};
pub use transport::Transport;
