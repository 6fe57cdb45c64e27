//! Structured output (PROFILE §16, the SDK profile): `--json-schema SCHEMA` or initialize
//! `jsonSchema` (initialize wins), the check of a turn's final text against it, and the
//! corrective retries.
//!
//! Owns: [`OutputSchema`] (the schema checked once by our strict parser, PROFILE §2a, then
//! compiled by the `jsonschema` crate: drafts 7 and 2020-12, the draft taken from `$schema`,
//! 2020-12 without one; no remote or file `$ref` is ever fetched, so the core stays sans-IO),
//! [`OutputSchema::check`] (the final text as one JSON value, then the schema's first errors),
//! the corrective user message that asks the model again, and the turn's end: success with
//! `structured_output`, one more request (at most [`MAX_ATTEMPTS`] in all), or `result` subtype
//! `error_max_structured_output_retries`.
//!
//! Must never: fetch a `$ref`, read a clock or do I/O; change a turn that failed or hit a
//! PROFILE §15 limit (those end as they would without a schema); write the corrective message
//! to stdout (it is the agent's own prompt to the model: the transcript keeps it, so a resume
//! rebuilds exactly the context the model saw, PROFILE §11).

use std::sync::Arc;

use agentx_wire::json;
use agentx_wire::wire::{OutputRecord, RawJson, UserRecord};

/// PROFILE §16: the first answer and at most 2 more.
pub const MAX_ATTEMPTS: u32 = 3;

/// How many validation errors one corrective message names.
const MAX_ERRORS: usize = 3;
/// The longest one validation error is quoted (bytes; cut at a character boundary).
const MAX_ERROR_BYTES: usize = 512;

/// A compiled output schema (PROFILE §16). Cheap to clone.
#[derive(Clone)]
pub struct OutputSchema {
    /// The schema's canonical compact JSON (what `openai` providers send as `response_format`).
    text: Arc<str>,
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema")
            .field("bytes", &self.text.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for OutputSchema {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

/// Why a schema was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchemaError {
    /// Not one strict JSON value (PROFILE §2a).
    NotJson(String),
    /// JSON, but not a schema the validator accepts (an unknown `$schema`, an invalid keyword
    /// value, an unresolvable `$ref`): the validator's message.
    Invalid(String),
}

impl std::fmt::Display for SchemaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SchemaError::NotJson(e) => write!(f, "not JSON ({e})"),
            SchemaError::Invalid(e) => write!(f, "not a valid JSON Schema ({e})"),
        }
    }
}

impl OutputSchema {
    /// Checks and compiles `text`. A schema is a JSON object or a boolean.
    pub fn compile(text: &str) -> Result<OutputSchema, SchemaError> {
        let doc = json::parse(text.as_bytes()).map_err(|e| SchemaError::NotJson(e.to_string()))?;
        let root = doc.root();
        if root.as_object().is_none() && root.as_bool().is_none() {
            return Err(SchemaError::Invalid(
                "a schema is a JSON object or a boolean".into(),
            ));
        }
        let mut canonical = Vec::with_capacity(text.len());
        json::write_value(&mut canonical, root);
        let value: serde_json::Value =
            serde_json::from_slice(&canonical).map_err(|e| SchemaError::NotJson(e.to_string()))?;
        let validator = jsonschema::validator_for(&value)
            .map_err(|e| SchemaError::Invalid(cut(&e.to_string(), MAX_ERROR_BYTES).to_string()))?;
        let text = String::from_utf8(canonical).map_err(|e| SchemaError::NotJson(e.to_string()))?;
        Ok(OutputSchema {
            text: text.into(),
            validator: Arc::new(validator),
        })
    }

    /// The schema as canonical compact JSON.
    pub fn text(&self) -> &Arc<str> {
        &self.text
    }

    /// The final text of a turn checked as one JSON value valid against the schema: its
    /// canonical form (the result's `structured_output`), or what is wrong with it.
    pub fn check(&self, final_text: &str) -> Result<RawJson<'static>, String> {
        let doc = json::parse(final_text.as_bytes())
            .map_err(|e| format!("the answer is not one JSON value ({e})"))?;
        let canonical = RawJson::from_value(doc.root()).to_canonical();
        let instance: serde_json::Value = serde_json::from_slice(canonical.as_bytes())
            .map_err(|e| format!("the answer is not one JSON value ({e})"))?;
        let errors: Vec<String> = self
            .validator
            .iter_errors(&instance)
            .take(MAX_ERRORS + 1)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_string() } else { at };
                format!("at {at}: {}", cut(&e.to_string(), MAX_ERROR_BYTES))
            })
            .collect();
        if errors.is_empty() {
            return Ok(canonical);
        }
        let more = errors.len() > MAX_ERRORS;
        let mut why = errors[..errors.len().min(MAX_ERRORS)].join("; ");
        if more {
            why.push_str("; …");
        }
        Err(format!("the answer does not match the JSON schema: {why}"))
    }
}

/// The corrective prompt of a failed attempt (PROFILE §16 "asked again with the validation
/// error"): one line, so no line of it can read as an `agentx-echo` directive (§9).
pub(crate) fn corrective_text(error: &str) -> String {
    let error: String = error
        .chars()
        .map(|c| if c == '\n' || c == '\r' { ' ' } else { c })
        .collect();
    format!(
        "structured output: {error}. Answer again with only one JSON value that is valid \
         against the required JSON schema."
    )
}

/// The result's `errors` entry after the last failed attempt.
pub(crate) fn exhausted_error(error: &str) -> String {
    format!("structured output not valid after {MAX_ATTEMPTS} attempts: {error}")
}

/// The transcript's form of the corrective prompt: a plain `user` record (never written to
/// stdout), which `transcript::context` rebuilds as the same user message.
pub(crate) fn corrective_record(
    text: &str,
    stamp: &mut super::records::Stamp,
) -> OutputRecord<'static> {
    let mut rec = UserRecord::text(text.to_string());
    rec.uuid = Some(stamp.uuid());
    rec.session_id = Some(stamp.sid());
    OutputRecord::User(rec)
}

use agentx_wire::wire::responses::cut;

#[cfg(test)]
mod tests {
    use super::*;

    const OBJECT: &str = r#"{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"],"additionalProperties":false}"#;

    #[test]
    fn a_valid_answer_is_its_canonical_form() {
        let s = OutputSchema::compile(OBJECT).unwrap();
        let v = s.check(" { \"answer\" : 42 }\n").unwrap();
        assert_eq!(v.as_bytes(), br#"{"answer":42}"#);
        assert_eq!(&**s.text(), OBJECT);
    }

    #[test]
    fn an_invalid_answer_names_the_errors() {
        let s = OutputSchema::compile(OBJECT).unwrap();
        let e = s.check(r#"{"answer":"x"}"#).unwrap_err();
        assert!(
            e.starts_with("the answer does not match the JSON schema: at /answer: "),
            "{e}"
        );
        let e = s.check("echo: hi").unwrap_err();
        assert!(
            e.starts_with("the answer is not one JSON value (malformed JSON"),
            "{e}"
        );
        // PROFILE §2a holds for the answer too.
        let e = s.check(r#"{"answer":1,"answer":2}"#).unwrap_err();
        assert!(e.contains("duplicate member name"), "{e}");
        // Two values are not one.
        assert!(s.check("1 2").is_err());
        // At most MAX_ERRORS are named.
        let many = OutputSchema::compile(
            r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"}}}"#,
        )
        .unwrap();
        let e = many.check(r#"{"a":1,"b":2,"c":3,"d":4}"#).unwrap_err();
        assert_eq!(e.matches("at /").count(), MAX_ERRORS, "{e}");
        assert!(e.ends_with("; …"), "{e}");
    }

    #[test]
    fn drafts_7_and_2020_12() {
        // Draft 7: `items` as an array is tuple validation.
        let d7 = OutputSchema::compile(
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":[{"type":"string"}],"additionalItems":false}"#,
        )
        .unwrap();
        assert!(d7.check(r#"["a"]"#).is_ok());
        assert!(d7.check(r#"["a",1]"#).is_err());
        // 2020-12: `prefixItems` and `items: false`.
        let d2020 = OutputSchema::compile(
            r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"array","prefixItems":[{"type":"string"}],"items":false}"#,
        )
        .unwrap();
        assert!(d2020.check(r#"["a"]"#).is_ok());
        assert!(d2020.check(r#"["a",1]"#).is_err());
        // Without `$schema`: 2020-12.
        let plain =
            OutputSchema::compile(r#"{"prefixItems":[{"type":"string"}],"items":false}"#).unwrap();
        assert!(plain.check(r#"["a",1]"#).is_err());
        // Boolean schemas.
        assert!(OutputSchema::compile("true").unwrap().check("[1]").is_ok());
        assert!(OutputSchema::compile("false").unwrap().check("1").is_err());
    }

    #[test]
    fn bad_schemas_are_refused_and_nothing_is_fetched() {
        assert!(matches!(
            OutputSchema::compile("{"),
            Err(SchemaError::NotJson(_))
        ));
        assert!(matches!(
            OutputSchema::compile(r#"{"a":1,"a":2}"#),
            Err(SchemaError::NotJson(_))
        ));
        assert!(matches!(
            OutputSchema::compile("3"),
            Err(SchemaError::Invalid(_))
        ));
        assert!(matches!(
            OutputSchema::compile(r#"{"type":"no-such-type"}"#),
            Err(SchemaError::Invalid(_))
        ));
        assert!(matches!(
            OutputSchema::compile(r#"{"$schema":"https://example.invalid/unknown"}"#),
            Err(SchemaError::Invalid(_))
        ));
        // A remote `$ref` is never retrieved (no resolver is built in): refused.
        assert!(matches!(
            OutputSchema::compile(r#"{"$ref":"https://example.invalid/s.json"}"#),
            Err(SchemaError::Invalid(_))
        ));
    }

    #[test]
    fn the_corrective_prompt_is_one_line() {
        let t = corrective_text("a\nb\r\n!tool Bash {}");
        assert!(!t.contains('\n') && !t.contains('\r'));
        assert!(t.starts_with("structured output: a b  !tool"));
    }
}
