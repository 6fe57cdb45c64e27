//! PROFILE §16 structured output against the real binary with `agentx-echo`: `--json-schema`
//! (checked at startup: a usage error naming the option), `!json VALUE`, `structured_output`
//! on the result, the corrective retries (valid at the 3rd attempt through a provider
//! `script`, whose blocks answer the corrective prompts; still invalid after 3 attempts:
//! `error_max_structured_output_retries`), initialize `jsonSchema` winning over the option,
//! and a resume that sees the corrective prompts.

use crate::harness;

use harness::{check_output, is_result, run, TempDir};
use serde_json::{json, Value};

const SDK: [&str; 5] = [
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
];

const SCHEMA: &str =
    r#"{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}"#;

fn user_line(text: &str) -> String {
    json!({"type":"user","message":{"role":"user","content":text},"parent_tool_use_id":null})
        .to_string()
        + "\n"
}

fn sdk_lines(home: &TempDir, extra: &[&str], lines: &str) -> (Option<i32>, Vec<Value>, String) {
    let cwd = home.path().to_string_lossy().into_owned();
    let mut args = SDK.to_vec();
    args.extend_from_slice(extra);
    args.extend(["--cwd", cwd.as_str()]);
    let (status, stdout, stderr) = run(home.path(), &args, lines.as_bytes());
    check_output(&stdout);
    let records = stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    (status, records, stderr)
}

fn sdk(home: &TempDir, extra: &[&str], prompts: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let stdin: String = prompts.iter().map(|p| user_line(p)).collect();
    sdk_lines(home, extra, &stdin)
}

fn results(records: &[Value]) -> Vec<&Value> {
    records.iter().filter(|v| is_result(v)).collect()
}

fn texts(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|v| v["type"] == "assistant")
        .filter_map(|v| {
            v["message"]["content"][0]["text"]
                .as_str()
                .map(String::from)
        })
        .collect()
}

fn scripted_home(script: &str) -> TempDir {
    let home = TempDir::new("structured");
    let path = home.path().join("script.txt");
    std::fs::write(&path, script).unwrap();
    std::fs::write(
        home.path().join("auth.json"),
        json!({"version":2,"providers":[{"id":"s","type":"scripted","model":"echo","script":path}]})
            .to_string(),
    )
    .unwrap();
    home
}

#[test]
fn profile_16_json_answer_valid_is_the_structured_output() {
    let home = TempDir::new("structured");
    let schema = format!("--json-schema={SCHEMA}");
    let (status, recs, stderr) = sdk(&home, &[&schema], &["!json {\"answer\": 42}"]);
    assert_eq!(status, Some(0), "{stderr}");
    let r = results(&recs);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["subtype"], "success");
    assert_eq!(r[0]["is_error"], false);
    assert_eq!(r[0]["structured_output"], json!({"answer": 42}));
    assert_eq!(r[0]["result"], "{\"answer\": 42}");
    assert_eq!(r[0]["num_turns"], 1);
}

/// The prompt's `!json` answer is invalid; the two corrective prompts have no directives, so
/// `agentx-echo` answers them with `echo: …`, which is no JSON: 3 attempts, then the error.
#[test]
fn profile_16_json_answer_invalid_after_three_attempts() {
    let home = TempDir::new("structured");
    let schema = format!("--json-schema={SCHEMA}");
    let (status, recs, stderr) = sdk(&home, &[&schema], &["!json {\"answer\": \"x\"}"]);
    assert_eq!(status, Some(0), "{stderr}");
    let t = texts(&recs);
    assert_eq!(t.len(), 3, "{t:?}");
    assert_eq!(t[0], "{\"answer\": \"x\"}");
    assert!(
        t[1].starts_with("echo: structured output: the answer does not match the JSON schema"),
        "{}",
        t[1]
    );
    assert!(
        t[2].starts_with("echo: structured output: the answer is not one JSON value"),
        "{}",
        t[2]
    );
    let r = results(&recs);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0]["subtype"], "error_max_structured_output_retries");
    assert_eq!(r[0]["is_error"], true);
    assert_eq!(r[0]["num_turns"], 3);
    assert!(r[0].get("structured_output").is_none());
    assert!(r[0]["errors"][0]
        .as_str()
        .unwrap()
        .starts_with("structured output not valid after 3 attempts: "));
    // The corrective prompts never reach stdout.
    assert!(!recs.iter().any(|v| v["type"] == "user"));
}

/// Valid at the 3rd attempt: the script's blocks 2 and 3 answer the corrective prompts.
#[test]
fn profile_16_valid_at_the_third_attempt_then_resume_sees_the_retries() {
    let home =
        scripted_home("!json \"one\"\n---\n!json [2]\n---\n!json {\"answer\": 3}\n---\n!history");
    let schema = format!("--json-schema={SCHEMA}");
    let (status, recs, stderr) = sdk(&home, &[&schema], &["first"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(texts(&recs), ["\"one\"", "[2]", "{\"answer\": 3}"]);
    let r = results(&recs);
    assert_eq!(r[0]["subtype"], "success");
    assert_eq!(r[0]["structured_output"], json!({"answer": 3}));
    assert_eq!(r[0]["num_turns"], 3);
    // PROFILE §11: resumed without a schema, the model's context holds the prompt, the three
    // answers and the two corrective prompts.
    let sid = r[0]["session_id"].as_str().unwrap().to_string();
    let (status, recs, stderr) = sdk(&home, &["--resume", &sid], &["!history"]);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(texts(&recs), ["history: 6 messages"]);
}

/// PROFILE §16: initialize `jsonSchema` wins when it differs from `--json-schema`.
#[test]
fn profile_16_initialize_json_schema_wins() {
    let home = TempDir::new("structured");
    let schema = format!("--json-schema={SCHEMA}");
    let init = json!({"type":"control_request","request_id":"init_1","request":{
        "subtype":"initialize","hooks":null,"jsonSchema":{"type":"string"}}})
    .to_string()
        + "\n";
    let lines = init + &user_line("!json \"a string\"");
    let (status, recs, stderr) = sdk_lines(&home, &[&schema], &lines);
    assert_eq!(status, Some(0), "{stderr}");
    let resp = recs
        .iter()
        .find(|v| v["type"] == "control_response")
        .unwrap();
    assert_eq!(resp["response"]["subtype"], "success", "{resp}");
    let r = results(&recs);
    assert_eq!(r[0]["subtype"], "success", "{}", r[0]);
    assert_eq!(r[0]["structured_output"], "a string");
}

#[test]
fn profile_16_a_bad_json_schema_is_a_usage_error_naming_the_option() {
    let home = TempDir::new("structured");
    for (value, why) in [
        ("{", "it is not JSON"),
        (r#"{"a":1,"a":2}"#, "it is not JSON"),
        (r#"{"type":7}"#, "it is not a valid schema"),
        (
            r#"{"$ref":"https://example.invalid/s.json"}"#,
            "it is not a valid schema",
        ),
    ] {
        let arg = format!("--json-schema={value}");
        let (status, recs, stderr) = sdk(&home, &[&arg], &["hi"]);
        assert_eq!(status, Some(2), "{value}: {stderr}");
        assert!(recs.is_empty());
        assert!(
            stderr.contains(&format!(
                "agentx: --json-schema takes a JSON Schema (drafts 7 and 2020-12): {why}"
            )),
            "{value}: {stderr}"
        );
        // Never echoed.
        assert!(!stderr.contains("example.invalid"), "{stderr}");
    }
    // Only in the SDK profile.
    let (status, _, stderr) = run(
        home.path(),
        &[
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--json-schema={}",
        ],
        b"",
    );
    assert_eq!(status, Some(2));
    assert!(
        stderr.contains("--json-schema is only valid with --verbose"),
        "{stderr}"
    );
}
