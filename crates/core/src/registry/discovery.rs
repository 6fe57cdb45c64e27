//! The prelaunch discovery command line (WIRE-026, PROFILE §2):
//! `agentx --list-providers [--output-format text|json] [--]`. Its grammar lives with the rest
//! of the `agentx` command line in `agentx::args::agentx_args`.
//!
//! Owns: the pure discovery step from a loaded registry to the exact validated stdout bytes.
//!
//! Must never: construct a provider or a session, or make a selection.

use super::catalog::{Catalog, Format};
use super::error::Error;
use super::providers::Registry;

/// The whole discovery step over a loaded registry: the complete catalog (credential union,
/// collision rule) and the exact final bytes, validated before the caller writes any of them.
/// Makes no selection and constructs no provider or session (WIRE-026).
pub fn discover(registry: &Registry, format: Format) -> Result<Vec<u8>, Error> {
    Catalog::build(registry)?.discovery(format)
}
