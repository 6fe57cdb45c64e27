//! Every rule of the strict `auth.json` registry (PROFILE §3) at its edge: the accepted
//! value at the limit, the rejected value one past it, each with the exact JSON path and rule
//! of its diagnostic. Every private value is a sentinel; no diagnostic, `Debug` or `Display`
//! ever shows one.

use std::ffi::OsString;

use agentx_core::registry::{
    parse_auth_json, ErrorKind, Registry, MAX_AUTH_JSON_LEN, MAX_DESCRIPTION_LEN,
    MAX_DISPLAY_NAME_LEN, MAX_EFFORTS, MAX_EFFORT_LEN, MAX_MODEL_LEN, MAX_PRIVATE_LEN,
    MAX_PROVIDERS,
};

const SENTINEL: &str = "SENTINEL";

fn env(name: &str) -> Option<OsString> {
    match name {
        "AGENTX_TEST_KEY" => Some(OsString::from("SENTINEL-env-value")),
        "AGENTX_TEST_EMPTY" => Some(OsString::new()),
        "AGENTX_TEST_LONG" => Some(OsString::from("S".repeat(MAX_PRIVATE_LEN + 1))),
        "AGENTX_TEST_AT_LIMIT" => Some(OsString::from("S".repeat(MAX_PRIVATE_LEN))),
        _ => None,
    }
}

fn registry(providers: &[String]) -> String {
    format!(r#"{{"version":2,"providers":[{}]}}"#, providers.join(","))
}

fn azure(id: &str, extra: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"azure_openai","model":"m-{id}","endpoint":"SENTINEL-endpoint-{id}","deployment":"SENTINEL-deployment-{id}","api_version":"SENTINEL-version-{id}","api_key":"SENTINEL-key-{id}"{extra}}}"#
    )
}

fn scripted(id: &str, extra: &str) -> String {
    format!(r#"{{"id":"{id}","type":"scripted","model":"m-{id}"{extra}}}"#)
}

fn openai(id: &str, extra: &str) -> String {
    format!(r#"{{"id":"{id}","type":"openai","model":"m-{id}"{extra}}}"#)
}

fn load(doc: &str) -> Result<Registry, agentx_core::registry::Error> {
    parse_auth_json(doc.as_bytes(), &env)
}

/// (case, document, expected path and rule code); `None` means accepted.
type Case = (&'static str, String, Option<(&'static str, &'static str)>);

fn cases() -> Vec<Case> {
    let a = |extra: &str| registry(&[azure("a", extra)]);
    let s = |extra: &str| registry(&[scripted("s", extra)]);
    let efforts =
        |list: &str, default: &str| s(&format!(r#","reasoning":{{"efforts":[{list}]{default}}}"#));
    let many = |n: usize| {
        (0..n)
            .map(|i| format!("\"e{i}\""))
            .collect::<Vec<_>>()
            .join(",")
    };
    let id = |len: usize| registry(&[scripted(&"i".repeat(len), "")]);
    let model = |len: usize| {
        registry(&[format!(
            r#"{{"id":"s","type":"scripted","model":"{}"}}"#,
            "m".repeat(len)
        )])
    };
    let providers = |n: usize| {
        registry(
            &(0..n)
                .map(|i| scripted(&format!("p{i}"), ""))
                .collect::<Vec<_>>(),
        )
    };
    vec![
        // The document.
        ("valid azure", a(""), None),
        (
            "malformed",
            "{\"version\":2,".to_string(),
            Some(("(top level)", "malformed_json")),
        ),
        (
            "not an object",
            "[]".to_string(),
            Some(("(top level)", "wrong_type")),
        ),
        (
            "unknown top-level member",
            r#"{"version":2,"providers":[],"x":1}"#.to_string(),
            Some(("(top level)", "unknown_member")),
        ),
        (
            "duplicate top-level member",
            r#"{"version":2,"version":2,"providers":[]}"#.to_string(),
            Some(("(top level)", "duplicate_member")),
        ),
        (
            "escape-equivalent duplicate in a provider",
            registry(&[r#"{"id":"a","\u0069d":"b","type":"scripted","model":"m"}"#.to_string()]),
            Some(("(top level)", "duplicate_member")),
        ),
        (
            "escape-equivalent duplicate in reasoning",
            s(r#","reasoning":{"efforts":["x"],"default_effort":"x","default_\u0065ffort":"x"}"#),
            Some(("(top level)", "duplicate_member")),
        ),
        (
            "duplicate private member",
            a(r#","api_key":"SENTINEL-second""#),
            Some(("(top level)", "duplicate_member")),
        ),
        // version
        (
            "version missing",
            r#"{"providers":[]}"#.to_string(),
            Some(("version", "missing")),
        ),
        (
            "version 2.0",
            registry(&[scripted("s", "")]).replace("\"version\":2", "\"version\":2.0"),
            Some(("version", "version")),
        ),
        (
            "version 2e0",
            registry(&[scripted("s", "")]).replace("\"version\":2", "\"version\":2e0"),
            Some(("version", "version")),
        ),
        (
            "version string",
            registry(&[scripted("s", "")]).replace("\"version\":2", "\"version\":\"2\""),
            Some(("version", "version")),
        ),
        (
            "version 1",
            registry(&[scripted("s", "")]).replace("\"version\":2", "\"version\":1"),
            Some(("version", "version")),
        ),
        // providers
        (
            "providers missing",
            r#"{"version":2}"#.to_string(),
            Some(("providers", "missing")),
        ),
        (
            "providers empty",
            r#"{"version":2,"providers":[]}"#.to_string(),
            Some(("providers", "no_providers")),
        ),
        (
            "providers object",
            r#"{"version":2,"providers":{}}"#.to_string(),
            Some(("providers", "wrong_type")),
        ),
        ("providers at limit", providers(MAX_PROVIDERS), None),
        (
            "providers past limit",
            providers(MAX_PROVIDERS + 1),
            Some(("providers", "too_many_providers")),
        ),
        (
            "provider not an object",
            r#"{"version":2,"providers":[1]}"#.to_string(),
            Some(("providers[0]", "wrong_type")),
        ),
        // id
        ("id 64 chars", id(64), None),
        (
            "id 65 chars",
            id(65),
            Some(("providers[0].id", "id_grammar")),
        ),
        ("id empty", id(0), Some(("providers[0].id", "id_grammar"))),
        (
            "id leading dash",
            registry(&[scripted("-a", "")]),
            Some(("providers[0].id", "id_grammar")),
        ),
        (
            "id with space",
            registry(&[scripted("a b", "")]),
            Some(("providers[0].id", "id_grammar")),
        ),
        (
            "id missing",
            registry(&[r#"{"type":"scripted","model":"m"}"#.to_string()]),
            Some(("providers[0].id", "missing")),
        ),
        (
            "id number",
            registry(&[r#"{"id":1,"type":"scripted","model":"m"}"#.to_string()]),
            Some(("providers[0].id", "wrong_type")),
        ),
        (
            "duplicate ids",
            registry(&[scripted("a", ""), scripted("b", ""), scripted("a", "")]),
            Some(("providers[2].id", "duplicate_id")),
        ),
        (
            "ids differ by case",
            registry(&[scripted("a", ""), scripted("A", "")]),
            None,
        ),
        // model
        ("model 128 bytes", model(MAX_MODEL_LEN), None),
        (
            "model 129 bytes",
            model(MAX_MODEL_LEN + 1),
            Some(("providers[0].model", "too_long")),
        ),
        (
            "model empty",
            model(0),
            Some(("providers[0].model", "empty")),
        ),
        (
            "model with newline",
            registry(&[r#"{"id":"s","type":"scripted","model":"a\nb"}"#.to_string()]),
            Some(("providers[0].model", "control_character")),
        ),
        (
            "model with U+2028",
            registry(&[r#"{"id":"s","type":"scripted","model":"a\u2028b"}"#.to_string()]),
            Some(("providers[0].model", "control_character")),
        ),
        (
            "model with DEL",
            registry(&[r#"{"id":"s","type":"scripted","model":"a\u007fb"}"#.to_string()]),
            Some(("providers[0].model", "control_character")),
        ),
        (
            "effort with tab",
            s(r#","reasoning":{"efforts":["a\tb"],"default_effort":"a\tb"}"#),
            Some(("providers[0].reasoning.efforts[0]", "control_character")),
        ),
        (
            "description may hold a newline",
            s(r#","description":"two\nlines""#),
            None,
        ),
        (
            "model non-ASCII",
            registry(&[r#"{"id":"s","type":"scripted","model":"modèle-é"}"#.to_string()]),
            None,
        ),
        (
            "model missing",
            registry(&[r#"{"id":"s","type":"scripted"}"#.to_string()]),
            Some(("providers[0].model", "missing")),
        ),
        // default
        (
            "one default",
            registry(&[scripted("a", ""), scripted("b", r#","default":true"#)]),
            None,
        ),
        (
            "default false twice",
            registry(&[
                scripted("a", r#","default":false"#),
                scripted("b", r#","default":false"#),
            ]),
            None,
        ),
        (
            "two defaults",
            registry(&[
                scripted("a", r#","default":true"#),
                scripted("b", r#","default":true"#),
            ]),
            Some(("providers[1].default", "second_default")),
        ),
        (
            "default string",
            s(r#","default":"true""#),
            Some(("providers[0].default", "wrong_type")),
        ),
        // display_name, description
        (
            "display_name at limit",
            s(&format!(
                r#","display_name":"{}""#,
                "d".repeat(MAX_DISPLAY_NAME_LEN)
            )),
            None,
        ),
        (
            "display_name past limit",
            s(&format!(
                r#","display_name":"{}""#,
                "d".repeat(MAX_DISPLAY_NAME_LEN + 1)
            )),
            Some(("providers[0].display_name", "too_long")),
        ),
        (
            "display_name empty",
            s(r#","display_name":"""#),
            Some(("providers[0].display_name", "empty")),
        ),
        (
            "description at limit",
            s(&format!(
                r#","description":"{}""#,
                "d".repeat(MAX_DESCRIPTION_LEN)
            )),
            None,
        ),
        (
            "description past limit",
            s(&format!(
                r#","description":"{}""#,
                "d".repeat(MAX_DESCRIPTION_LEN + 1)
            )),
            Some(("providers[0].description", "too_long")),
        ),
        (
            "description null",
            s(r#","description":null"#),
            Some(("providers[0].description", "wrong_type")),
        ),
        // type
        (
            "type missing",
            registry(&[r#"{"id":"s","model":"m"}"#.to_string()]),
            Some(("providers[0].type", "missing")),
        ),
        (
            "type unknown",
            registry(&[r#"{"id":"s","type":"anthropic","model":"m"}"#.to_string()]),
            Some(("providers[0].type", "unknown_type")),
        ),
        (
            "type case",
            registry(&[r#"{"id":"s","type":"Scripted","model":"m"}"#.to_string()]),
            Some(("providers[0].type", "unknown_type")),
        ),
        (
            "type number",
            registry(&[r#"{"id":"s","type":3,"model":"m"}"#.to_string()]),
            Some(("providers[0].type", "wrong_type")),
        ),
        // closed provider objects
        (
            "unknown provider member",
            s(r#","region":"x""#),
            Some(("providers[0]", "unknown_member")),
        ),
        (
            "azure field on openai",
            registry(&[openai(
                "o",
                r#","api_key":"SENTINEL-k","endpoint":"SENTINEL-e""#,
            )]),
            Some(("providers[0]", "unknown_member")),
        ),
        (
            "key on scripted",
            s(r#","api_key":"SENTINEL-k""#),
            Some(("providers[0]", "unknown_member")),
        ),
        (
            "openai field on azure",
            a(r#","base_url":"SENTINEL-b""#),
            Some(("providers[0]", "unknown_member")),
        ),
        // azure_openai private fields
        (
            "azure endpoint missing",
            registry(&[azure("a", "").replace(r#""endpoint":"SENTINEL-endpoint-a","#, "")]),
            Some(("providers[0].endpoint", "missing")),
        ),
        (
            "azure deployment missing",
            registry(&[azure("a", "").replace(r#""deployment":"SENTINEL-deployment-a","#, "")]),
            Some(("providers[0].deployment", "missing")),
        ),
        (
            "azure api_version missing",
            registry(&[azure("a", "").replace(r#""api_version":"SENTINEL-version-a","#, "")]),
            Some(("providers[0].api_version", "missing")),
        ),
        (
            "azure no key",
            registry(&[azure("a", "").replace(r#","api_key":"SENTINEL-key-a""#, "")]),
            Some(("providers[0]", "no_key")),
        ),
        (
            "azure both keys",
            a(r#","api_key_env":"AGENTX_TEST_KEY""#),
            Some(("providers[0]", "both_keys")),
        ),
        (
            "azure endpoint empty",
            registry(&[azure("a", "").replace("SENTINEL-endpoint-a", "")]),
            Some(("providers[0].endpoint", "empty")),
        ),
        (
            "azure endpoint number",
            registry(&[azure("a", "").replace(r#""SENTINEL-endpoint-a""#, "7")]),
            Some(("providers[0].endpoint", "wrong_type")),
        ),
        (
            "azure key empty",
            registry(&[azure("a", "").replace("SENTINEL-key-a", "")]),
            Some(("providers[0].api_key", "empty")),
        ),
        (
            "private value at limit",
            registry(&[azure("a", "").replace("SENTINEL-key-a", &"S".repeat(MAX_PRIVATE_LEN))]),
            None,
        ),
        (
            "private value past limit",
            registry(&[azure("a", "").replace("SENTINEL-key-a", &"S".repeat(MAX_PRIVATE_LEN + 1))]),
            Some(("providers[0].api_key", "too_long")),
        ),
        // openai
        (
            "openai minimal",
            registry(&[openai("o", r#","api_key":"SENTINEL-k""#)]),
            None,
        ),
        (
            "openai full",
            registry(&[openai(
                "o",
                r#","base_url":"SENTINEL-b","api_key_env":"AGENTX_TEST_KEY","organization":"SENTINEL-org""#,
            )]),
            None,
        ),
        (
            "openai no key",
            registry(&[openai("o", r#","base_url":"SENTINEL-b""#)]),
            Some(("providers[0]", "no_key")),
        ),
        (
            "openai both keys",
            registry(&[openai(
                "o",
                r#","api_key":"SENTINEL-k","api_key_env":"AGENTX_TEST_KEY""#,
            )]),
            Some(("providers[0]", "both_keys")),
        ),
        (
            "openai base_url empty",
            registry(&[openai("o", r#","api_key":"SENTINEL-k","base_url":"""#)]),
            Some(("providers[0].base_url", "empty")),
        ),
        (
            "openai organization not a string",
            registry(&[openai("o", r#","api_key":"SENTINEL-k","organization":[]"#)]),
            Some(("providers[0].organization", "wrong_type")),
        ),
        // api_key_env
        (
            "api_key_env unset",
            registry(&[openai("o", r#","api_key_env":"AGENTX_TEST_UNSET""#)]),
            Some(("providers[0].api_key_env", "env_unset")),
        ),
        (
            "api_key_env empty value",
            registry(&[openai("o", r#","api_key_env":"AGENTX_TEST_EMPTY""#)]),
            Some(("providers[0].api_key_env", "env_unset")),
        ),
        (
            "api_key_env bad name",
            registry(&[openai("o", r#","api_key_env":"1KEY""#)]),
            Some(("providers[0].api_key_env", "env_name")),
        ),
        (
            "api_key_env value at limit",
            registry(&[openai("o", r#","api_key_env":"AGENTX_TEST_AT_LIMIT""#)]),
            None,
        ),
        (
            "api_key_env value past limit",
            registry(&[openai("o", r#","api_key_env":"AGENTX_TEST_LONG""#)]),
            Some(("providers[0].api_key_env", "too_long")),
        ),
        // scripted
        ("scripted script", s(r#","script":"SENTINEL-script""#), None),
        (
            "scripted script empty",
            s(r#","script":"""#),
            Some(("providers[0].script", "empty")),
        ),
        // reasoning
        ("reasoning empty object", s(r#","reasoning":{}"#), None),
        (
            "reasoning not an object",
            s(r#","reasoning":["low"]"#),
            Some(("providers[0].reasoning", "wrong_type")),
        ),
        (
            "reasoning unknown member",
            s(r#","reasoning":{"efforts":["x"],"default_effort":"x","budget":1}"#),
            Some(("providers[0].reasoning", "unknown_member")),
        ),
        (
            "efforts ok",
            efforts(r#""low","medium","high""#, r#","default_effort":"high""#),
            None,
        ),
        (
            "efforts not an array",
            s(r#","reasoning":{"efforts":"low"}"#),
            Some(("providers[0].reasoning.efforts", "wrong_type")),
        ),
        (
            "effort not a string",
            efforts(r#""low",2"#, r#","default_effort":"low""#),
            Some(("providers[0].reasoning.efforts[1]", "wrong_type")),
        ),
        (
            "effort empty",
            efforts(r#""""#, r#","default_effort":"""#),
            Some(("providers[0].reasoning.efforts[0]", "empty")),
        ),
        (
            "effort duplicate",
            efforts(r#""low","high","low""#, r#","default_effort":"low""#),
            Some(("providers[0].reasoning.efforts[2]", "duplicate_effort")),
        ),
        (
            "effort at limit",
            efforts(
                &format!("\"{}\"", "e".repeat(MAX_EFFORT_LEN)),
                &format!(r#","default_effort":"{}""#, "e".repeat(MAX_EFFORT_LEN)),
            ),
            None,
        ),
        (
            "effort past limit",
            efforts(
                &format!("\"{}\"", "e".repeat(MAX_EFFORT_LEN + 1)),
                r#","default_effort":"x""#,
            ),
            Some(("providers[0].reasoning.efforts[0]", "too_long")),
        ),
        (
            "efforts at limit",
            efforts(&many(MAX_EFFORTS), r#","default_effort":"e0""#),
            None,
        ),
        (
            "efforts past limit",
            efforts(&many(MAX_EFFORTS + 1), r#","default_effort":"e0""#),
            Some(("providers[0].reasoning.efforts", "too_many_efforts")),
        ),
        (
            "default_effort not in efforts",
            efforts(r#""low","medium""#, r#","default_effort":"high""#),
            Some((
                "providers[0].reasoning.default_effort",
                "default_effort_not_member",
            )),
        ),
        (
            "default_effort case differs",
            efforts(r#""low""#, r#","default_effort":"Low""#),
            Some((
                "providers[0].reasoning.default_effort",
                "default_effort_not_member",
            )),
        ),
        (
            "default_effort missing",
            efforts(r#""low""#, ""),
            Some((
                "providers[0].reasoning.default_effort",
                "default_effort_missing",
            )),
        ),
        (
            "default_effort without efforts",
            s(r#","reasoning":{"default_effort":"low"}"#),
            Some((
                "providers[0].reasoning.default_effort",
                "default_effort_without_efforts",
            )),
        ),
        (
            "default_effort with empty efforts",
            efforts("", r#","default_effort":"low""#),
            Some((
                "providers[0].reasoning.default_effort",
                "default_effort_without_efforts",
            )),
        ),
        (
            "default_effort null",
            efforts(r#""low""#, r#","default_effort":null"#),
            Some(("providers[0].reasoning.default_effort", "wrong_type")),
        ),
        ("empty efforts alone", efforts("", ""), None),
        // the second provider's paths
        (
            "error in providers[1]",
            registry(&[
                scripted("a", ""),
                azure("b", "").replace(r#""deployment":"SENTINEL-deployment-b","#, ""),
            ]),
            Some(("providers[1].deployment", "missing")),
        ),
    ]
}

#[test]
fn every_rule_at_its_edge() {
    let cases = cases();
    let mut checked = 0;
    for (name, doc, expected) in &cases {
        let got = load(doc);
        match (expected, &got) {
            (None, Ok(reg)) => {
                let dbg = format!("{reg:?}");
                assert!(!dbg.contains(SENTINEL), "{name}: Debug leaks: {dbg}");
            }
            (None, Err(e)) => panic!("{name}: expected acceptance, got {e}"),
            (Some((path, rule)), Ok(_)) => panic!("{name}: expected {path} {rule}, accepted"),
            (Some((path, rule)), Err(e)) => {
                assert_eq!(e.kind(), ErrorKind::Registry, "{name}: {e}");
                assert_eq!(e.path().as_deref(), Some(*path), "{name}: {e}");
                assert_eq!(e.rule().map(|r| r.code()), Some(*rule), "{name}: {e}");
                let shown = format!("{e} {e:?}");
                assert!(
                    !shown.contains(SENTINEL),
                    "{name}: diagnostic leaks: {shown}"
                );
                assert!(
                    shown.starts_with(&format!("invalid registry: auth.json {path}: ")),
                    "{name}: {shown}"
                );
            }
        }
        checked += 1;
    }
    eprintln!("checked {checked} registry rule cases");
    assert!(checked >= 90);
}

#[test]
fn exact_diagnostic_texts() {
    let text = |doc: &str| load(doc).err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(
        text(&registry(&[scripted("a", r#","reasoning":{"efforts":["low"],"default_effort":"high"}"#)])),
        "invalid registry: auth.json providers[0].reasoning.default_effort: must be a member of efforts (PROFILE §3)"
    );
    assert_eq!(
        text(&registry(&[scripted("a", r#","default":true"#), scripted("b", r#","default":true"#)])),
        "invalid registry: auth.json providers[1].default: at most one provider may be default: true (providers[0] already is) (PROFILE §3)"
    );
    assert_eq!(
        text(r#"{"version":2.0,"providers":[]}"#),
        "invalid registry: auth.json version: must be the integer 2 (PROFILE §3)"
    );
    assert_eq!(
        text(r#"{"version":2,"vers\u0069on":2}"#),
        "invalid registry: auth.json (top level): ambiguous JSON: duplicate member name at byte 13 (WIRE-014)"
    );
    assert_eq!(
        text(&registry(&[scripted("a", r#","SENTINEL-as-a-name":1"#)])),
        "invalid registry: auth.json providers[0]: member #4 is not allowed here (closed object) (PROFILE §3)"
    );
    assert_eq!(
        text(&registry(&[azure("a", r#","api_key_env":"AGENTX_TEST_KEY""#)])),
        "invalid registry: auth.json providers[0]: must have exactly one of api_key or api_key_env, not both (PROFILE §3)"
    );
}

#[test]
fn file_size_limit_at_edge() {
    let base = registry(&[scripted("a", "")]);
    // Pad with JSON whitespace to exactly the limit, then one past it.
    let mut at = base.clone().into_bytes();
    at.resize(MAX_AUTH_JSON_LEN, b' ');
    assert!(parse_auth_json(&at, &env).is_ok());
    at.push(b' ');
    let e = parse_auth_json(&at, &env).expect_err("past the limit");
    assert_eq!(e.path().as_deref(), Some("(top level)"));
    assert_eq!(e.rule().map(|r| r.code()), Some("file_too_large"));
}

#[test]
fn env_resolution_reads_only_the_named_variable() {
    use std::cell::RefCell;
    let asked = RefCell::new(Vec::new());
    let lookup = |name: &str| {
        asked.borrow_mut().push(name.to_string());
        env(name)
    };
    let doc = registry(&[
        openai("o", r#","api_key_env":"AGENTX_TEST_KEY""#),
        scripted("s", ""),
    ]);
    let reg = parse_auth_json(doc.as_bytes(), &lookup).expect("valid");
    assert_eq!(*asked.borrow(), ["AGENTX_TEST_KEY"]);
    match reg.providers()[0].route() {
        agentx_core::registry::Route::OpenAi { key, .. } => {
            assert_eq!(key.key().expose(), b"SENTINEL-env-value")
        }
        other => panic!("unexpected route {other:?}"),
    }
}
