//! The credential union of a registry and the collision rule (PROFILE §3, WIRE-013, WIRE-024).
//!
//! Owns: turning every private value of every provider (keys, resolved `api_key_env` values
//! and the variable names, endpoints, base URLs, deployments, API versions, organizations,
//! script paths) into the encoder's [`CredentialSet`], and refusing a registry in which a
//! public string of any descriptor contains one of those values.
//!
//! Must never: name a value. A collision is reported as `providers[i].<public field>` against
//! `providers[j].<private field>`: indices and field names only, never an id (an id is a
//! public string that may itself be the colliding one).

use memchr::memmem;

use agentx_wire::encode::{escaped_spelling, CredentialSet};
use agentx_wire::json;

use super::error::{Error, ErrorKind};
use super::providers::Registry;

/// The credential union of `registry` as the encoder's validator.
pub fn credential_union(registry: &Registry) -> Result<CredentialSet, Error> {
    CredentialSet::new(registry.private_values().map(|(_, _, s)| s.expose()))
        .map_err(|_| Error::simple(ErrorKind::CredentialUnion))
}

/// Every public string a descriptor of provider `i` carries, with the field that carries it:
/// the same strings the projection writes (`value`/`id`, `providerType`, `model`,
/// `displayName`, `description`, each effort, `defaultReasoningEffort`).
pub(crate) fn public_strings(registry: &Registry, i: usize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(p) = registry.providers.get(i) else {
        return out;
    };
    let field = |name: &str| format!("providers[{i}].{name}");
    out.push((field("id"), p.id.clone()));
    out.push((
        field("providerType"),
        p.provider_type().as_str().to_string(),
    ));
    out.push((field("model"), p.model.clone()));
    out.push((field("displayName"), p.shown_name()));
    out.push((field("description"), p.shown_description().to_string()));
    for (j, e) in p.reasoning.efforts.iter().enumerate() {
        out.push((field(&format!("reasoning.efforts[{j}]")), e.clone()));
    }
    if let Some(d) = &p.reasoning.default_effort {
        out.push((field("reasoning.defaultEffort"), d.clone()));
    }
    out
}

/// The collision rule: fails when any public string of any provider contains any private
/// value of any provider, decoded or in the spelling our JSON writer gives it.
pub fn check_collisions(registry: &Registry) -> Result<(), Error> {
    let private: Vec<(usize, &'static str, &[u8], Vec<u8>)> = registry
        .private_values()
        .map(|(j, name, s)| (j, name, s.expose(), escaped_spelling(s.expose())))
        .collect();
    if private.is_empty() {
        return Ok(());
    }
    let mut escaped = Vec::new();
    for i in 0..registry.providers.len() {
        for (public_field, text) in public_strings(registry, i) {
            escaped.clear();
            json::write_str(&mut escaped, &text);
            // The writer's spelling between the quotes: the quotes are framing, not the field.
            let inner = escaped
                .get(1..escaped.len().saturating_sub(1))
                .unwrap_or(&[]);
            let spellings = [text.as_bytes(), inner];
            for (j, private_field, value, escaped_value) in &private {
                let hit = spellings.iter().any(|s| {
                    memmem::find(s, value).is_some() || memmem::find(s, escaped_value).is_some()
                });
                if hit {
                    return Err(Error::collision(
                        public_field,
                        format!("providers[{j}].{private_field}"),
                    ));
                }
            }
        }
    }
    Ok(())
}
