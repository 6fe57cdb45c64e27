//! [`UsageError`]: the one usage error of both command lines (`agentx`, `agentx-wire`),
//! status 2.
//!
//! Owns what a refused command line reports: what was wrong, the 1-based position of the
//! argument to blame when there is one, and the usage text printed after it. Must never hold
//! more of an argument than its grammar module put in (`agentx` names only options of its own
//! table; `agentx-wire` echoes at most 64 bytes, PROFILE §5).

use std::fmt;

/// A usage error. `Display` is the line after the program's name (`agentx: `,
/// `agentx-wire: `): what was wrong, then ` (argument N)` when a position is to blame; the
/// caller prints [`UsageError::usage`] on the next line and exits with status 2.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageError {
    what: String,
    position: Option<usize>,
    usage: &'static str,
}

impl UsageError {
    /// `what` is wrong with the command line as a whole.
    #[cold]
    pub fn new(what: impl Into<String>, usage: &'static str) -> UsageError {
        UsageError {
            what: what.into(),
            position: None,
            usage,
        }
    }

    /// `what` is wrong with the argument at `position` (1-based, after the program name).
    #[cold]
    pub fn at(what: impl Into<String>, position: usize, usage: &'static str) -> UsageError {
        UsageError {
            what: what.into(),
            position: Some(position),
            usage,
        }
    }

    /// The same error with a narrower usage text (a subcommand's).
    pub fn with_usage(mut self, usage: &'static str) -> UsageError {
        self.usage = usage;
        self
    }

    /// What was wrong, without the position.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// The 1-based position of the offending argument, when one is to blame.
    pub fn position(&self) -> Option<usize> {
        self.position
    }

    /// The usage text printed after the error (the subcommand's, or the whole tool's).
    pub fn usage(&self) -> &'static str {
        self.usage
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(f, "{} (argument {p})", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for UsageError {}
