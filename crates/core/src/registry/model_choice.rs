//! The SDK profile's model options (PROFILE §15) on top of the selection rule of §3:
//! `--model M` must equal the selected provider's `model`, and without `--provider` it
//! selects the one provider whose `model` is M (the default one when several are and one is
//! the default); `--effort E` must be one of the selected provider's declared efforts and
//! replaces its default effort.
//!
//! Owns the exact stderr lines of these failures (status 1 before any output). Must never:
//! print a private field, or more than 64 bytes of a command-line value.

use std::fmt;

use super::error::Error;
use super::providers::Registry;
use super::selection::Selection;

/// Why `--model` / `--effort` cannot be honoured. `Display` is the complete stderr line.
#[derive(Debug)]
pub enum ChoiceError {
    /// No provider's `model` is M.
    NoProvider {
        /// M as given (at most 64 bytes are printed).
        model: String,
    },
    /// Several providers serve M and none of them is the default.
    Ambiguous {
        /// M as given.
        model: String,
    },
    /// `--provider ID` selects a provider whose `model` is not M.
    OtherModel {
        /// The selected provider's id.
        provider: String,
        /// M as given.
        model: String,
    },
    /// E is not one of the selected provider's declared efforts.
    Effort {
        /// The selected provider's id.
        provider: String,
        /// E as given.
        effort: String,
    },
    /// The selection rule of PROFILE §3 failed.
    Select(Error),
}

/// At most 64 bytes of a command-line value, cut on a character boundary, escaped so it
/// stays on one line.
fn shown(s: &str) -> String {
    let mut end = s.len().min(64);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].escape_debug().to_string()
}

impl fmt::Display for ChoiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChoiceError::NoProvider { model } => {
                write!(f, "agentx: no provider serves model \"{}\"", shown(model))
            }
            ChoiceError::Ambiguous { model } => write!(
                f,
                "agentx: model \"{}\" is served by several providers; choose one with --provider",
                shown(model)
            ),
            ChoiceError::OtherModel { provider, model } => write!(
                f,
                "agentx: provider \"{provider}\" does not serve model \"{}\"",
                shown(model)
            ),
            ChoiceError::Effort { provider, effort } => write!(
                f,
                "agentx: provider \"{provider}\" does not declare the effort \"{}\"",
                shown(effort)
            ),
            ChoiceError::Select(e) => write!(f, "agentx: {e}"),
        }
    }
}

impl std::error::Error for ChoiceError {}

impl Selection {
    /// PROFILE §3 selection with §15's `--model`: with `provider` the provider is selected as
    /// in §3 and must serve `model`; without it, `model` selects the one provider serving it
    /// (the effective default when several do and it is one of them).
    pub fn select_with_model(
        registry: Registry,
        provider: Option<&str>,
        model: Option<&str>,
    ) -> Result<Selection, ChoiceError> {
        let Some(model) = model else {
            return Selection::select(registry, provider).map_err(ChoiceError::Select);
        };
        if provider.is_some() {
            let s = Selection::select(registry, provider).map_err(ChoiceError::Select)?;
            if s.provider().model() != model {
                return Err(ChoiceError::OtherModel {
                    provider: s.provider().id().to_string(),
                    model: model.to_string(),
                });
            }
            return Ok(s);
        }
        let serving: Vec<usize> = registry
            .providers()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.model() == model)
            .map(|(i, _)| i)
            .collect();
        let chosen = match serving.as_slice() {
            [] => {
                return Err(ChoiceError::NoProvider {
                    model: model.to_string(),
                })
            }
            [one] => *one,
            several => match registry.effective_default() {
                Some(d) if several.contains(&d) => d,
                _ => {
                    return Err(ChoiceError::Ambiguous {
                        model: model.to_string(),
                    })
                }
            },
        };
        let id = registry.providers()[chosen].id().to_string();
        Selection::select(registry, Some(&id)).map_err(ChoiceError::Select)
    }

    /// PROFILE §15 `--effort E`: E when the selected provider declares it (it replaces the
    /// default effort).
    pub fn declared_effort(&self, effort: &str) -> Result<String, ChoiceError> {
        let p = self.provider();
        if p.reasoning().efforts.iter().any(|e| e == effort) {
            Ok(effort.to_string())
        } else {
            Err(ChoiceError::Effort {
                provider: p.id().to_string(),
                effort: effort.to_string(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::parse_auth_json;

    fn registry(json: &str) -> Registry {
        parse_auth_json(json.as_bytes(), &|_| None).unwrap()
    }

    const THREE: &str = r#"{"version":2,"providers":[
      {"id":"a","type":"scripted","model":"m1"},
      {"id":"b","type":"scripted","model":"m1","default":true},
      {"id":"c","type":"scripted","model":"m2",
       "reasoning":{"efforts":["low","high"],"default_effort":"high"}}]}"#;

    fn pick(json: &str, provider: Option<&str>, model: Option<&str>) -> Result<String, String> {
        Selection::select_with_model(registry(json), provider, model)
            .map(|s| s.provider().id().to_string())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn model_selects_its_one_provider_or_the_default_of_several() {
        assert_eq!(pick(THREE, None, Some("m2")), Ok("c".into()));
        assert_eq!(
            pick(THREE, None, Some("m1")),
            Ok("b".into()),
            "several serve m1; b is the default"
        );
        assert_eq!(pick(THREE, Some("a"), Some("m1")), Ok("a".into()));
        assert_eq!(pick(THREE, None, None), Ok("b".into()));
        assert_eq!(
            pick(THREE, None, Some("m3")),
            Err("agentx: no provider serves model \"m3\"".into())
        );
        assert_eq!(
            pick(THREE, Some("c"), Some("m1")),
            Err("agentx: provider \"c\" does not serve model \"m1\"".into())
        );
        let no_default = THREE.replace(r#","default":true"#, "");
        assert_eq!(
            pick(&no_default, None, Some("m1")),
            Err(
                "agentx: model \"m1\" is served by several providers; choose one with --provider"
                    .into()
            )
        );
        // At most 64 bytes of the value, on one line.
        let long = format!("{}\n", "m".repeat(100));
        let e = pick(THREE, None, Some(&long)).unwrap_err();
        assert_eq!(
            e,
            format!("agentx: no provider serves model \"{}\"", "m".repeat(64))
        );
    }

    #[test]
    fn effort_must_be_declared() {
        let s = Selection::select_with_model(registry(THREE), None, Some("m2")).unwrap();
        assert_eq!(s.declared_effort("low").unwrap(), "low");
        assert_eq!(
            s.declared_effort("max").unwrap_err().to_string(),
            "agentx: provider \"c\" does not declare the effort \"max\""
        );
        let s = Selection::select_with_model(registry(THREE), Some("a"), None).unwrap();
        assert!(s.declared_effort("low").is_err(), "a declares no efforts");
    }
}
