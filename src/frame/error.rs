//! `FrameError`: the one error type of the framing layer.
//!
//! Owns the classification (`kind()`, `line()`) and the Display text of framing failures.
//! Must never hold or print line content: a too-long line is reported by number and limit
//! only, so no input bytes (or credentials in them) reach diagnostics.

use std::fmt;

/// What went wrong while splitting the stream into lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FrameErrorKind {
    /// The line is longer than the configured limit (PROFILE §2a; LF excluded, CR counted).
    LineTooLong,
}

impl FrameErrorKind {
    /// The `kind` string of `agentx-wire check --json` (PROFILE §2): `"line_too_long"`.
    pub fn as_str(self) -> &'static str {
        match self {
            FrameErrorKind::LineTooLong => "line_too_long",
        }
    }
}

/// A framing failure of one physical line. The reader goes on with the next line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameError {
    kind: FrameErrorKind,
    line: u64,
    limit: usize,
}

impl FrameError {
    /// A line longer than `limit` bytes.
    #[cold]
    pub(crate) fn line_too_long(line: u64, limit: usize) -> FrameError {
        FrameError {
            kind: FrameErrorKind::LineTooLong,
            line,
            limit,
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> FrameErrorKind {
        self.kind
    }

    /// The physical, 1-based number of the offending line (blank lines count).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The line-length limit in force, in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            FrameErrorKind::LineTooLong => {
                write!(f, "line too long (limit {} bytes)", self.limit)
            }
        }
    }
}

impl std::error::Error for FrameError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_classification() {
        let e = FrameError::line_too_long(7, 8_388_608);
        assert_eq!(e.to_string(), "line too long (limit 8388608 bytes)");
        assert_eq!(e.kind(), FrameErrorKind::LineTooLong);
        assert_eq!(e.kind().as_str(), "line_too_long");
        assert_eq!(e.line(), 7);
        assert_eq!(e.limit(), 8_388_608);
        assert!(std::mem::size_of::<FrameError>() <= 24);
    }
}
