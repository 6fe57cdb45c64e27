//! The environment overrides of later tool and hook processes
//! (`update_environment_variables`, PROFILE §8 "Environment updates").
//!
//! Owns the map the driver applies to each child's `Command`: a set name and its value, or an
//! inherited name removed. Applying an update costs time linear in the update (one hash probe
//! per entry); the session core has already bounded what is held (1,000 names, 1,048,576
//! bytes), and an unset of a name the process did not inherit is forgotten, so nothing here
//! grows past that bound. Must never: change agentx's own environment, or show a value in
//! `Debug` output (values may be secrets).

use std::collections::{HashMap, HashSet};
use std::process::Command;

/// What later child processes see on top of agentx's inherited environment.
#[derive(Clone, Default)]
pub struct EnvOverrides {
    set: HashMap<String, String>,
    /// Inherited names that an update unset.
    unset: HashSet<String>,
}

impl std::fmt::Debug for EnvOverrides {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvOverrides")
            .field("set", &self.set.len())
            .field("unset", &self.unset.len())
            .finish()
    }
}

impl EnvOverrides {
    /// Applies one validated update in order (`None` unsets the name).
    pub fn update(&mut self, variables: Vec<(String, Option<String>)>) {
        for (name, value) in variables {
            match value {
                Some(v) => {
                    self.unset.remove(&name);
                    self.set.insert(name, v);
                }
                None => {
                    self.set.remove(&name);
                    if std::env::var_os(&name).is_some() {
                        self.unset.insert(name);
                    }
                }
            }
        }
    }

    /// Gives `cmd` these overrides.
    pub fn apply(&self, cmd: &mut Command) {
        for name in &self.unset {
            cmd.env_remove(name);
        }
        cmd.envs(&self.set);
    }

    /// Overrides from `(name, value)` pairs, for tests.
    pub fn from_pairs(pairs: &[(&str, Option<&str>)]) -> EnvOverrides {
        let mut env = EnvOverrides::default();
        env.update(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.map(str::to_string)))
                .collect(),
        );
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_value() {
        let env = EnvOverrides::from_pairs(&[("TOKEN", Some("sk-secret-value"))]);
        let shown = format!("{env:?}");
        assert!(!shown.contains("sk-secret"), "{shown}");
    }

    #[test]
    fn an_unset_of_a_name_not_inherited_is_forgotten() {
        let env = EnvOverrides::from_pairs(&[
            ("AGENTX_TEST_NEVER_SET_X", Some("1")),
            ("AGENTX_TEST_NEVER_SET_X", None),
        ]);
        assert!(env.set.is_empty() && env.unset.is_empty());
        let env = EnvOverrides::from_pairs(&[("PATH", None)]);
        assert!(env.unset.contains("PATH"));
    }
}
