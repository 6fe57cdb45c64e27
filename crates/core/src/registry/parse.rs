//! The strict `auth.json` version-2 decoder (PROFILE §3).
//!
//! Owns: every rule of the registry file. The document is parsed by our strict `json` layer
//! (duplicate and escape-equivalent member names rejected at every depth, WIRE-014); then
//! every object is closed (unknown members rejected), every member typed exactly (`version`
//! is the integer 2: `2.0` is not an integer, PROFILE §2a), every grammar and limit checked,
//! and `api_key_env` resolved through the caller's lookup function.
//!
//! Must never: read a file or the environment itself (the caller passes bytes and a lookup
//! function), or put a value into a diagnostic (errors carry a path and a [`Rule`]).
//!
//! Limits beyond PROFILE §3's own (ours, each tested at its edge): the file at most
//! [`MAX_AUTH_JSON_LEN`] bytes; at most [`MAX_PROVIDERS`] providers; `display_name` at most
//! [`MAX_DISPLAY_NAME_LEN`] and `description` at most [`MAX_DESCRIPTION_LEN`] bytes; at most
//! [`MAX_EFFORTS`] efforts of at most [`MAX_EFFORT_LEN`] bytes; a private value at most
//! [`MAX_PRIVATE_LEN`] bytes (the credential union's per-value limit); an `api_key_env` name
//! at most [`MAX_ENV_NAME_LEN`] bytes. Strings printed on one text line (`model`, efforts,
//! `display_name`) hold no control characters and no U+2028/U+2029.

use std::borrow::Cow;
use std::ffi::OsString;

use agentx_wire::json::{self, Object, Value};

use super::error::{At, Error, MemberName, Rule};
use super::providers::{
    ApiKey, Pricing, Provider, ProviderType, Reasoning, Registry, RegistrySource, Route, Secret,
};
use super::transport::Transport;

/// Largest `auth.json` accepted, in bytes.
pub const MAX_AUTH_JSON_LEN: usize = 1 << 20;
/// Most providers in one registry (keeps the credential union under its 1,024 values).
pub const MAX_PROVIDERS: usize = 128;
/// Longest `id` (PROFILE §3 grammar: 1 + 63).
pub const MAX_ID_LEN: usize = 64;
/// Longest `model` (PROFILE §3).
pub const MAX_MODEL_LEN: usize = 128;
/// Longest `display_name`.
pub const MAX_DISPLAY_NAME_LEN: usize = 256;
/// Longest `description`.
pub const MAX_DESCRIPTION_LEN: usize = 1024;
/// Most reasoning efforts of one provider.
pub const MAX_EFFORTS: usize = 16;
/// Longest reasoning effort.
pub const MAX_EFFORT_LEN: usize = 64;
/// Longest private value (a key, endpoint, deployment, ...): the credential union's limit.
pub const MAX_PRIVATE_LEN: usize = agentx_wire::encode::MAX_CREDENTIAL_LEN;
/// Longest `api_key_env` name.
pub const MAX_ENV_NAME_LEN: usize = 256;

const TOP: &[&str] = &["version", "providers"];
const COMMON: &[&str] = &[
    "id",
    "type",
    "model",
    "default",
    "display_name",
    "description",
    "reasoning",
    "context_window",
];
const AZURE: &[&str] = &[
    "endpoint",
    "deployment",
    "api_version",
    "api_key",
    "api_key_env",
    "pricing",
];
const OPENAI: &[&str] = &[
    "base_url",
    "api_key",
    "api_key_env",
    "organization",
    "pricing",
];
const SCRIPTED: &[&str] = &["script"];
const REASONING: &[&str] = &["efforts", "default_effort"];
const PRICING: &[&str] = &["input_per_mtok", "output_per_mtok", "cached_input_per_mtok"];

/// Smallest `context_window` (PROFILE §19).
pub const MIN_CONTEXT_WINDOW: u32 = 1_024;
/// Largest `context_window` (PROFILE §19).
pub const MAX_CONTEXT_WINDOW: u32 = 10_000_000;

/// The environment as the registry sees it: a variable's value by name, `None` when unset.
pub type EnvLookup<'e> = &'e dyn Fn(&str) -> Option<OsString>;

/// Decodes `auth.json` bytes into the strict registry. `env` resolves `api_key_env`.
pub fn parse_auth_json(bytes: &[u8], env: EnvLookup<'_>) -> Result<Registry, Error> {
    if bytes.len() > MAX_AUTH_JSON_LEN {
        return Err(Error::registry(
            At::Root,
            Rule::FileTooLarge {
                max: MAX_AUTH_JSON_LEN,
            },
        ));
    }
    let doc = json::parse(bytes).map_err(|e| Error::registry(At::Root, Rule::Json(e)))?;
    let root = object(doc.root(), At::Root)?;
    closed(root, TOP, At::Root)?;

    let version = required(root, "version", At::Top("version"))?;
    match version.as_number() {
        Some(n) if n.is_integer() && n.as_u64() == Some(2) => {}
        _ => return Err(Error::registry(At::Top("version"), Rule::Version)),
    }

    let list = required(root, "providers", At::Top("providers"))?
        .as_array()
        .ok_or_else(|| wrong_type(At::Top("providers"), "an array"))?;
    if list.is_empty() {
        return Err(Error::registry(At::Top("providers"), Rule::NoProviders));
    }
    if list.len() > MAX_PROVIDERS {
        return Err(Error::registry(
            At::Top("providers"),
            Rule::TooManyProviders { max: MAX_PROVIDERS },
        ));
    }
    let mut providers: Vec<Provider> = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let p = provider(i, v, env, &providers)?;
        providers.push(p);
    }
    Ok(Registry {
        providers,
        source: RegistrySource::AuthJson,
    })
}

fn provider(
    i: usize,
    v: Value<'_, '_>,
    env: EnvLookup<'_>,
    earlier: &[Provider],
) -> Result<Provider, Error> {
    let obj = object(v, At::Provider(i))?;

    // The type decides which members the object may have, so it comes first.
    let ty_at = At::Field(i, "type");
    let ty_name = string(required(obj, "type", ty_at)?, ty_at)?;
    let ty = ProviderType::from_name(&ty_name)
        .ok_or_else(|| Error::registry(ty_at, Rule::UnknownType))?;
    let private_names = match ty {
        ProviderType::AzureOpenAi => AZURE,
        ProviderType::OpenAi => OPENAI,
        ProviderType::Scripted => SCRIPTED,
    };
    for (position, (name, _)) in obj.iter().enumerate() {
        let known = |list: &[&str]| list.iter().any(|n| name.eq_str(n));
        if name.eq_str("pricing") && ty == ProviderType::Scripted {
            // PROFILE §19: prices are declared for `openai` and `azure_openai` only.
            return Err(Error::registry(
                At::Field(i, "pricing"),
                Rule::PricingNotForType,
            ));
        }
        if !known(COMMON) && !known(private_names) {
            return Err(unknown_member(At::Provider(i), position));
        }
    }

    let id_at = At::Field(i, "id");
    let id = string(required(obj, "id", id_at)?, id_at)?;
    if !id_grammar(&id) {
        return Err(Error::registry(id_at, Rule::IdGrammar));
    }
    if let Some(first) = earlier.iter().position(|p| p.id == id) {
        return Err(Error::registry(id_at, Rule::DuplicateId { first }));
    }

    let model_at = At::Field(i, "model");
    let model = public_text(
        required(obj, "model", model_at)?,
        model_at,
        MAX_MODEL_LEN,
        true,
    )?;

    let default_at = At::Field(i, "default");
    let declared_default = match obj.get("default") {
        None => false,
        Some(v) => v
            .as_bool()
            .ok_or_else(|| wrong_type(default_at, "a boolean"))?,
    };
    if declared_default {
        if let Some(first) = earlier.iter().position(|p| p.declared_default) {
            return Err(Error::registry(default_at, Rule::SecondDefault { first }));
        }
    }

    let display_name = optional(obj, "display_name", |v| {
        public_text(v, At::Field(i, "display_name"), MAX_DISPLAY_NAME_LEN, true)
    })?;
    let description = optional(obj, "description", |v| {
        public_text(v, At::Field(i, "description"), MAX_DESCRIPTION_LEN, false)
    })?;
    let reasoning = match obj.get("reasoning") {
        None => Reasoning::default(),
        Some(v) => reasoning(i, v)?,
    };

    let context_window = optional(obj, "context_window", |v| context_window(i, v))?;
    let pricing = optional(obj, "pricing", |v| pricing(i, v))?;

    let private = |name: &'static str| -> Result<Secret, Error> {
        let at = At::Field(i, name);
        private_text(required(obj, name, at)?, at)
    };
    let private_opt = |name: &'static str| -> Result<Option<Secret>, Error> {
        optional(obj, name, |v| private_text(v, At::Field(i, name)))
    };
    // PROFILE §14: TLS except to loopback hosts, checked where the URL is read.
    let url = |name: &'static str| -> Result<Option<Secret>, Error> {
        let value = private_opt(name)?;
        if let Some(v) = &value {
            if Transport::of(v.expose()) == Transport::PlainHttp {
                return Err(Error::registry(At::Field(i, name), Rule::PlainHttp));
            }
        }
        Ok(value)
    };
    let route = match ty {
        ProviderType::AzureOpenAi => Route::AzureOpenAi {
            endpoint: match url("endpoint")? {
                Some(e) => e,
                None => private("endpoint")?,
            },
            deployment: private("deployment")?,
            api_version: private("api_version")?,
            key: api_key(i, obj, env)?,
        },
        ProviderType::OpenAi => Route::OpenAi {
            base_url: url("base_url")?,
            key: api_key(i, obj, env)?,
            organization: private_opt("organization")?,
        },
        ProviderType::Scripted => Route::Scripted {
            script: private_opt("script")?,
        },
    };

    Ok(Provider {
        id: id.into_owned(),
        model,
        declared_default,
        display_name,
        description,
        reasoning,
        route,
        context_window,
        pricing,
    })
}

/// PROFILE §19 `context_window`: an integer literal from [`MIN_CONTEXT_WINDOW`] to
/// [`MAX_CONTEXT_WINDOW`] (`2048.0` and `2e3` are not integer literals, PROFILE §2a).
fn context_window(i: usize, v: Value<'_, '_>) -> Result<u32, Error> {
    let at = At::Field(i, "context_window");
    let n = v
        .as_number()
        .filter(|n| n.is_integer())
        .ok_or_else(|| wrong_type(at, "an integer"))?;
    match n.as_u64() {
        Some(w) if (u64::from(MIN_CONTEXT_WINDOW)..=u64::from(MAX_CONTEXT_WINDOW)).contains(&w) => {
            Ok(w as u32)
        }
        _ => Err(Error::registry(
            at,
            Rule::OutOfRange {
                min: u64::from(MIN_CONTEXT_WINDOW),
                max: u64::from(MAX_CONTEXT_WINDOW),
            },
        )),
    }
}

/// PROFILE §19 `pricing`: closed; `input_per_mtok` and `output_per_mtok` required,
/// `cached_input_per_mtok` optional; each a finite number ≥ 0.
fn pricing(i: usize, v: Value<'_, '_>) -> Result<Pricing, Error> {
    let obj = object(v, At::Field(i, "pricing"))?;
    for (position, (name, _)) in obj.iter().enumerate() {
        if !PRICING.iter().any(|n| name.eq_str(n)) {
            // PROFILE §19 names an unknown member by its path; a name that is not a plain
            // lowercase identifier could be anything (a pasted key) and is named by position.
            return Err(match MemberName::of(name.raw()) {
                Some(member) => Error::registry(At::PricingMember(i, member), Rule::NotAllowed),
                None => unknown_member(At::Field(i, "pricing"), position),
            });
        }
    }
    let price = |name: &'static str, v: Value<'_, '_>| -> Result<f64, Error> {
        let at = At::Pricing(i, name);
        let n = v.as_number().ok_or_else(|| wrong_type(at, "a number"))?;
        match n.as_f64() {
            Some(p) if p >= 0.0 => Ok(p),
            _ => Err(Error::registry(at, Rule::Price)),
        }
    };
    let required_price = |name: &'static str| -> Result<f64, Error> {
        let at = At::Pricing(i, name);
        price(name, required(obj, name, at)?)
    };
    Ok(Pricing {
        input_per_mtok: required_price("input_per_mtok")?,
        output_per_mtok: required_price("output_per_mtok")?,
        cached_input_per_mtok: optional(obj, "cached_input_per_mtok", |v| {
            price("cached_input_per_mtok", v)
        })?,
    })
}

fn reasoning(i: usize, v: Value<'_, '_>) -> Result<Reasoning, Error> {
    let obj = object(v, At::Field(i, "reasoning"))?;
    closed(obj, REASONING, At::Field(i, "reasoning"))?;
    let mut efforts: Vec<String> = Vec::new();
    if let Some(list) = obj.get("efforts") {
        let efforts_at = At::Reasoning(i, "efforts");
        let list = list
            .as_array()
            .ok_or_else(|| wrong_type(efforts_at, "an array"))?;
        if list.len() > MAX_EFFORTS {
            return Err(Error::registry(
                efforts_at,
                Rule::TooManyEfforts { max: MAX_EFFORTS },
            ));
        }
        for (j, e) in list.iter().enumerate() {
            let effort = public_text(e, At::Effort(i, j), MAX_EFFORT_LEN, true)?;
            if let Some(first) = efforts.iter().position(|x| *x == effort) {
                return Err(Error::registry(
                    At::Effort(i, j),
                    Rule::DuplicateEffort { first },
                ));
            }
            efforts.push(effort);
        }
    }
    let default_at = At::Reasoning(i, "default_effort");
    let default_effort = match obj.get("default_effort") {
        None if efforts.is_empty() => None,
        None => return Err(Error::registry(default_at, Rule::DefaultEffortMissing)),
        Some(v) => {
            let d = string(v, default_at)?;
            if efforts.is_empty() {
                return Err(Error::registry(
                    default_at,
                    Rule::DefaultEffortWithoutEfforts,
                ));
            }
            match efforts.iter().find(|e| **e == *d) {
                Some(e) => Some(e.clone()),
                None => return Err(Error::registry(default_at, Rule::DefaultEffortNotMember)),
            }
        }
    };
    Ok(Reasoning {
        efforts,
        default_effort,
    })
}

/// Exactly one of `api_key` / `api_key_env`; the variable resolved now (PROFILE §3).
fn api_key(i: usize, obj: Object<'_, '_>, env: EnvLookup<'_>) -> Result<ApiKey, Error> {
    match (obj.get("api_key"), obj.get("api_key_env")) {
        (Some(_), Some(_)) => Err(Error::registry(At::Provider(i), Rule::BothKeys)),
        (None, None) => Err(Error::registry(At::Provider(i), Rule::NoKey)),
        (Some(v), None) => Ok(ApiKey::Inline(private_text(v, At::Field(i, "api_key"))?)),
        (None, Some(v)) => {
            let at = At::Field(i, "api_key_env");
            let name = string(v, at)?;
            if name.len() > MAX_ENV_NAME_LEN {
                return Err(Error::registry(
                    at,
                    Rule::TooLong {
                        max: MAX_ENV_NAME_LEN,
                    },
                ));
            }
            if !env_name_grammar(&name) {
                return Err(Error::registry(at, Rule::EnvName));
            }
            let value = match env(&name) {
                Some(v) if !v.is_empty() => v,
                _ => return Err(Error::registry(at, Rule::EnvUnset)),
            };
            let value = value.as_encoded_bytes();
            if value.len() > MAX_PRIVATE_LEN {
                return Err(Error::registry(
                    at,
                    Rule::TooLong {
                        max: MAX_PRIVATE_LEN,
                    },
                ));
            }
            Ok(ApiKey::Env {
                name: Secret::new(name.as_bytes()),
                value: Secret::new(value),
            })
        }
    }
}

/// `[A-Za-z0-9][A-Za-z0-9._-]{0,63}` (PROFILE §3).
pub fn id_grammar(id: &str) -> bool {
    let b = id.as_bytes();
    match b.split_first() {
        Some((first, rest)) => {
            b.len() <= MAX_ID_LEN
                && first.is_ascii_alphanumeric()
                && rest
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
        }
        None => false,
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*` (the environment-variable grammar of PROFILE §2b).
fn env_name_grammar(name: &str) -> bool {
    let b = name.as_bytes();
    match b.split_first() {
        Some((first, rest)) => {
            (first.is_ascii_alphabetic() || *first == b'_')
                && rest.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        }
        None => false,
    }
}

fn object<'d, 'a>(v: Value<'d, 'a>, at: At) -> Result<Object<'d, 'a>, Error> {
    v.as_object().ok_or_else(|| wrong_type(at, "an object"))
}

fn required<'d, 'a>(obj: Object<'d, 'a>, name: &str, at: At) -> Result<Value<'d, 'a>, Error> {
    obj.get(name)
        .ok_or_else(|| Error::registry(at, Rule::Missing))
}

fn optional<'d, 'a, T>(
    obj: Object<'d, 'a>,
    name: &str,
    f: impl FnOnce(Value<'d, 'a>) -> Result<T, Error>,
) -> Result<Option<T>, Error> {
    obj.get(name).map(f).transpose()
}

/// Every member of `obj` must be one of `names` (closed at every level, PROFILE §3).
fn closed(obj: Object<'_, '_>, names: &[&str], at: At) -> Result<(), Error> {
    match obj.unknown_member(names) {
        Some(position) => Err(unknown_member(at, position)),
        None => Ok(()),
    }
}

fn string<'a>(v: Value<'_, 'a>, at: At) -> Result<Cow<'a, str>, Error> {
    v.as_str()
        .map(|s| s.decode())
        .ok_or_else(|| wrong_type(at, "a string"))
}

/// A public string: nonempty, at most `max` bytes, optionally free of control characters.
fn public_text(v: Value<'_, '_>, at: At, max: usize, one_line: bool) -> Result<String, Error> {
    let s = string(v, at)?;
    if s.is_empty() {
        return Err(Error::registry(at, Rule::Empty));
    }
    if s.len() > max {
        return Err(Error::registry(at, Rule::TooLong { max }));
    }
    // One text line: no C0/C1 controls and no Unicode line or paragraph separator.
    if one_line
        && s.chars()
            .any(|c| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
    {
        return Err(Error::registry(at, Rule::ControlCharacter));
    }
    Ok(s.into_owned())
}

/// A private string: nonempty, at most [`MAX_PRIVATE_LEN`] bytes.
fn private_text(v: Value<'_, '_>, at: At) -> Result<Secret, Error> {
    let s = string(v, at)?;
    if s.is_empty() {
        return Err(Error::registry(at, Rule::Empty));
    }
    if s.len() > MAX_PRIVATE_LEN {
        return Err(Error::registry(
            at,
            Rule::TooLong {
                max: MAX_PRIVATE_LEN,
            },
        ));
    }
    Ok(Secret::new(s.as_bytes()))
}

#[cold]
fn wrong_type(at: At, expected: &'static str) -> Error {
    Error::registry(at, Rule::WrongType { expected })
}

#[cold]
fn unknown_member(at: At, position: usize) -> Error {
    Error::registry(
        at,
        Rule::UnknownMember {
            position: position + 1,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_grammar_edges() {
        assert!(id_grammar("a"));
        assert!(id_grammar(&"a".repeat(64)));
        assert!(!id_grammar(&"a".repeat(65)));
        assert!(!id_grammar(""));
        assert!(!id_grammar("-a"));
        assert!(!id_grammar(".a"));
        assert!(id_grammar("0a._-Z"));
        assert!(!id_grammar("a b"));
        assert!(!id_grammar("é"));
    }

    #[test]
    fn env_name_edges() {
        assert!(env_name_grammar("_"));
        assert!(env_name_grammar("OPENAI_API_KEY2"));
        assert!(!env_name_grammar("2KEY"));
        assert!(!env_name_grammar(""));
        assert!(!env_name_grammar("A-B"));
    }
}
