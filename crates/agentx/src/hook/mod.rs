//! `settings.json` in the AgentX home and the permission hook it configures (PROFILE §10).
//!
//! Owns the strict `settings.json` grammar ([`Settings::parse`]: version 1, closed at every
//! level, duplicate members rejected; diagnostics name the JSON path and the rule, never a
//! value), the hook's stdin line and answer grammar ([`HookDecision`]), and running one hook
//! process per permission prompt ([`run_hook`]) with `AGENTX_SESSION_ID` in its environment,
//! a timeout, and a kill switch for when the host wins the race.
//!
//! Must never: turn a hook failure (nonzero exit, malformed answer, timeout) into anything but
//! a decisive deny (WIRE-PERM-002); print a hook's output.

mod decision;
mod runner;
mod settings;

pub use decision::HookDecision;
pub use runner::run_hook;
pub use settings::{PermissionHook, Settings, SettingsError, MAX_SETTINGS_LEN, SETTINGS_JSON};
