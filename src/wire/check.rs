//! `check --level records` (the `agentx-wire` tool): one line in, the record layer's verdict out.
//!
//! Owns the mapping from `wire` decoding to PROFILE §2's `check` vocabulary: a valid record,
//! a warning of kind `unknown_type` (a preserved unknown top-level type or `system` subtype,
//! WIRE-002), or an error whose kind is the JSON error's (`invalid_utf8`, `malformed_json`,
//! `duplicate_member`, `too_deep`), `not_an_object`, or `schema` for every record-level rule.
//! Messages are the `wire` error's: they name the JSON path and the rule and never echo a
//! value. Does no I/O.

use crate::json::Parser;
use crate::wire::{self, Direction, InputRecord, OutputRecord};

/// The record layer's verdict on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecordCheck {
    /// A defined record, valid.
    Valid,
    /// Valid but ignored: `kind` is `unknown_type`.
    Warning {
        /// `unknown_type`.
        kind: &'static str,
        /// The diagnostic text (PROFILE §5).
        message: String,
    },
    /// Invalid: `kind` is one of PROFILE §2's kinds; `fatal` per WIRE-021.
    Error {
        /// One of PROFILE §2's error kinds.
        kind: &'static str,
        /// The diagnostic text (never a value from the line).
        message: String,
        /// Whether the error ends the stream (WIRE-021).
        fatal: bool,
    },
}

/// PROFILE §5's wording for an ignored record.
const UNKNOWN_TYPE: &str = "ignored record of unknown type";
const UNKNOWN_SUBTYPE: &str = "ignored system record of unknown subtype";

#[cold]
fn error(e: wire::Error) -> RecordCheck {
    RecordCheck::Error {
        kind: e.check_kind(),
        message: e.to_string(),
        fatal: e.is_fatal(),
    }
}

/// PROFILE §2b: an input line rejected for a duplicate member is fatal when its top-level
/// `type` is `attachment_import` (an import-schema error, WIRE-021), record-level otherwise.
#[cold]
fn duplicate(e: wire::Error, line: &[u8]) -> RecordCheck {
    let fatal = wire::classify_rejected_line(line) == wire::RejectedLineClass::Import;
    RecordCheck::Error {
        kind: e.check_kind(),
        message: e.to_string(),
        fatal: fatal || e.is_fatal(),
    }
}

fn warning(unknown_record: bool) -> RecordCheck {
    let message = if unknown_record {
        UNKNOWN_TYPE
    } else {
        UNKNOWN_SUBTYPE
    };
    RecordCheck::Warning {
        kind: wire::UNKNOWN_TYPE_WARNING,
        message: message.to_owned(),
    }
}

/// Decodes `line` as a record of `direction` and reports the verdict.
pub fn check_record(line: &[u8], direction: Direction, parser: &mut Parser) -> RecordCheck {
    match direction {
        Direction::Input => match InputRecord::decode_line(line, parser) {
            Err(e) if e.check_kind() == "duplicate_member" => duplicate(e, line),
            Err(e) => error(e),
            Ok(InputRecord::Unknown(_)) => warning(true),
            Ok(_) => RecordCheck::Valid,
        },
        Direction::Output => match OutputRecord::decode_line(line, parser) {
            Err(e) => error(e),
            Ok(OutputRecord::Unknown(_)) => warning(true),
            Ok(r) if r.warning().is_some() => warning(false),
            Ok(_) => RecordCheck::Valid,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &str, d: Direction) -> RecordCheck {
        check_record(line.as_bytes(), d, &mut Parser::new())
    }

    #[test]
    fn verdicts_map_to_profile_kinds() {
        assert_eq!(
            check(r#"{"type":"keep_alive"}"#, Direction::Input),
            RecordCheck::Valid
        );
        assert!(matches!(
            check(r#"{"type":"nope"}"#, Direction::Input),
            RecordCheck::Warning {
                kind: "unknown_type",
                ..
            }
        ));
        assert!(matches!(
            check(
                r#"{"type":"system","subtype":"nope","uuid":"x"}"#,
                Direction::Output
            ),
            RecordCheck::Warning {
                kind: "unknown_type",
                ..
            }
        ));
        let kinds = [
            ("{", "malformed_json", true),
            ("[]", "not_an_object", true),
            (r#"{"a":1,"a":2}"#, "duplicate_member", false),
            // PROFILE §2b: classified by the rejected line's top-level type.
            (
                r#"{"type":"attachment_import","version":1,"version":1}"#,
                "duplicate_member",
                true,
            ),
            (
                r#"{"type":"user","message":{"a":1,"a":1}}"#,
                "duplicate_member",
                false,
            ),
            (r#"{"type":"user","message":"x"}"#, "schema", false),
            (
                r#"{"type":"attachment_import","version":2}"#,
                "schema",
                true,
            ),
        ];
        for (line, kind, fatal) in kinds {
            match check(line, Direction::Input) {
                RecordCheck::Error {
                    kind: k,
                    fatal: f,
                    message,
                } => {
                    assert_eq!((k, f), (kind, fatal), "{line}: {message}")
                }
                other => panic!("{line}: {other:?}"),
            }
        }
        // Direction matters: an assistant record is unknown on input, valid on output.
        let a = r#"{"type":"assistant","message":{},"parent_tool_use_id":null,"uuid":"3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27","session_id":"3f1e7948-5c1f-4c1f-8e2c-88bc9839ec27"}"#;
        assert!(matches!(
            check(a, Direction::Input),
            RecordCheck::Warning { .. }
        ));
        assert_eq!(check(a, Direction::Output), RecordCheck::Valid);
    }
}
