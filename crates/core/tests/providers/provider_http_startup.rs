//! PROFILE §14 startup rules where the registry is read: plain `http://` only to loopback
//! hosts, and an unset `api_key_env` — both name the JSON path, never the value.

use agentx_core::registry::parse_auth_json;

fn load(provider: &str) -> Result<(), String> {
    let doc = format!(r#"{{"version":2,"providers":[{provider}]}}"#);
    parse_auth_json(doc.as_bytes(), &|name| {
        (name == "SET_KEY").then(|| "sk-env".into())
    })
    .map(|_| ())
    .map_err(|e| {
        assert_eq!(e.rule().map(|r| r.code()), Some(e.rule().unwrap().code()));
        format!("{} | {}", e.rule().unwrap().code(), e)
    })
}

#[test]
fn profile_14_non_loopback_http_is_a_startup_error_naming_the_path() {
    let err = load(
        r#"{"id":"o","type":"openai","model":"m","api_key":"k","base_url":"http://models.example.invalid/v1"}"#,
    )
    .unwrap_err();
    assert_eq!(
        err,
        "plain_http | invalid registry: auth.json providers[0].base_url: must use https:// \
         (plain http:// only to 127.0.0.1, localhost or [::1]) (PROFILE §14)"
    );
    let err = load(
        r#"{"id":"a","type":"azure_openai","model":"m","endpoint":"HTTP://10.0.0.7:8080/","deployment":"d","api_version":"v","api_key":"k"}"#,
    )
    .unwrap_err();
    assert!(
        err.starts_with("plain_http | invalid registry: auth.json providers[0].endpoint: "),
        "{err}"
    );
    assert!(!err.contains("10.0.0.7"));
}

#[test]
fn profile_14_loopback_http_and_https_are_accepted() {
    for url in [
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8000/v1",
        "https://api.openai.com/v1",
    ] {
        load(&format!(
            r#"{{"id":"o","type":"openai","model":"m","api_key":"k","base_url":"{url}"}}"#
        ))
        .unwrap();
        load(&format!(
            r#"{{"id":"a","type":"azure_openai","model":"m","endpoint":"{url}","deployment":"d","api_version":"v","api_key":"k"}}"#
        ))
        .unwrap();
    }
}

#[test]
fn profile_14_unset_api_key_env_is_a_startup_error_naming_the_path() {
    let err =
        load(r#"{"id":"o","type":"openai","model":"m","api_key_env":"UNSET_KEY"}"#).unwrap_err();
    assert_eq!(
        err,
        "env_unset | invalid registry: auth.json providers[0].api_key_env: names an environment \
         variable that is unset or empty (PROFILE §3)"
    );
    load(r#"{"id":"o","type":"openai","model":"m","api_key_env":"SET_KEY"}"#).unwrap();
}
