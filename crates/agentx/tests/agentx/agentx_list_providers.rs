//! `agentx --list-providers` as a black box (WIRE-026, PROFILE §2/§3, scenario 29 and the
//! discovery halves of 27): the real binary, an AgentX home in a fresh temp directory.
//! Any failure leaves stdout empty; no sentinel of any private field reaches stdout or stderr;
//! the grammar is exact.

use std::process::{Command, Output};

use agentx_core::registry::{parse_auth_json, Selection};

use crate::harness;

use harness::TempDir;

/// A fresh AgentX home holding `auth`.
fn home_with_auth(name: &str, auth: &str) -> TempDir {
    let home = TempDir::new(name);
    std::fs::write(home.path().join("auth.json"), auth).expect("write auth.json");
    home
}

const ENV: &[(&str, &str)] = &[
    ("AGENTX_TEST_ENV_KEY_A", "SENTINEL-env-value-a"),
    ("AGENTX_TEST_ENV_KEY_B", "SENTINEL-env-value-b"),
];

fn agentx(home: &TempDir, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentx"));
    cmd.args(args)
        .env("AGENTX_HOME", home.path())
        .env("HOME", home.path().join("not-used"));
    for (k, v) in ENV {
        cmd.env(k, v);
    }
    cmd.output().expect("run agentx")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn env_lookup(name: &str) -> Option<std::ffi::OsString> {
    ENV.iter().find(|(k, _)| *k == name).map(|(_, v)| v.into())
}

/// Every private field of every provider type holds a sentinel; no provider is default.
const MULTI_NO_DEFAULT: &str = r#"{"version":2,"providers":[
 {"id":"sol-east","type":"azure_openai","model":"gpt-5.6-sol",
  "reasoning":{"efforts":["low","medium","high"],"default_effort":"high"},
  "endpoint":"https://SENTINEL-endpoint-1.invalid/","deployment":"SENTINEL-deployment-1",
  "api_version":"SENTINEL-apiversion-1","api_key":"SENTINEL-key-1"},
 {"id":"sol-west","type":"azure_openai","model":"gpt-5.6-sol",
  "endpoint":"https://SENTINEL-endpoint-2.invalid/","deployment":"SENTINEL-deployment-2",
  "api_version":"SENTINEL-apiversion-2","api_key_env":"AGENTX_TEST_ENV_KEY_A"},
 {"id":"oa","type":"openai","model":"gpt-x","base_url":"https://SENTINEL-baseurl.invalid/",
  "api_key":"SENTINEL-key-3","organization":"SENTINEL-org-3",
  "reasoning":{"efforts":["minimal","low"],"default_effort":"minimal"}},
 {"id":"oa-env","type":"openai","model":"gpt-y","api_key_env":"AGENTX_TEST_ENV_KEY_B"},
 {"id":"local","type":"scripted","model":"echo","script":"/SENTINEL-script/path.txt"}
]}"#;

const IDS: [&str; 5] = ["sol-east", "sol-west", "oa", "oa-env", "local"];

fn assert_clean(what: &str, out: &Output) {
    for stream in [&out.stdout, &out.stderr] {
        let t = text(stream);
        for needle in [
            "SENTINEL",
            "AGENTX_TEST_ENV_KEY",
            "endpoint\"",
            "deployment\"",
            "api_key",
            "base_url",
            "organization",
            "script\"",
        ] {
            assert!(!t.contains(needle), "{what}: {needle} in output: {t}");
        }
    }
}

/// Scenario 29: one version-1 document, all descriptors in file order, every selected:false,
/// every default:false without a declared default; no init record, no session constructed;
/// each descriptor equals the one a process started with `--provider <id>` would list, except
/// that exactly the chosen one is selected.
#[test]
fn scenario_29_discovery_of_a_multi_provider_registry_without_default() {
    let home = home_with_auth("s29", MULTI_NO_DEFAULT);
    let out = agentx(&home, &["--list-providers", "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    assert_clean("discovery", &out);
    assert_eq!(out.stdout.last(), Some(&b'\n'));
    assert_eq!(
        out.stdout.iter().filter(|b| **b == b'\n').count(),
        1,
        "one document"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let top: Vec<&String> = doc.as_object().expect("object").keys().collect();
    assert_eq!(top.len(), 2, "only version and providers: {top:?}");
    assert_eq!(doc["version"], 1);
    assert!(doc.get("type").is_none(), "not an SDK record");
    let providers = doc["providers"].as_array().expect("providers");
    let ids: Vec<&str> = providers
        .iter()
        .map(|p| p["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, IDS);
    for p in providers {
        assert_eq!(p["selected"], false);
        assert_eq!(p["default"], false);
        assert_eq!(p["value"], p["id"]);
        assert_eq!(
            p.as_object().map(|o| o.len()),
            Some(12),
            "closed shape: {p}"
        );
    }
    // No provider or session was constructed: nothing appeared in the AgentX home.
    let entries: Vec<_> = std::fs::read_dir(home.path())
        .expect("home")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(entries, ["auth.json"]);

    // The second process's initialize catalog, projected by the same library.
    let registry = parse_auth_json(MULTI_NO_DEFAULT.as_bytes(), &env_lookup).expect("valid");
    for (chosen, id) in IDS.iter().enumerate() {
        let sel = Selection::select(registry.clone(), Some(id)).expect("select");
        let catalog: Vec<serde_json::Value> = sel
            .providers()
            .iter()
            .map(|d| {
                let mut b = Vec::new();
                agentx_wire::wire::WireValue::encode(d, &mut b);
                serde_json::from_slice(&b).expect("descriptor")
            })
            .collect();
        assert_eq!(catalog.len(), providers.len());
        for (i, (listed, init)) in providers.iter().zip(&catalog).enumerate() {
            let mut expected = listed.clone();
            expected["selected"] = serde_json::Value::Bool(i == chosen);
            assert_eq!(init, &expected, "descriptor {i} with --provider {id}");
        }
    }
}

/// Both formats, every private field a sentinel: nothing leaks to stdout or stderr.
#[test]
fn scenario_27_sentinels_never_reach_stdout_or_stderr() {
    let home = home_with_auth("s27", MULTI_NO_DEFAULT);
    for args in [
        &["--list-providers"][..],
        &["--list-providers", "--output-format", "text"],
        &["--output-format", "json", "--list-providers", "--"],
    ] {
        let out = agentx(&home, args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_clean("discovery", &out);
        for id in IDS {
            assert!(text(&out.stdout).contains(id), "{args:?}: {id} missing");
        }
    }
    let out = agentx(&home, &["--list-providers"]);
    assert_eq!(
        text(&out.stdout),
        "sol-east  azure_openai  gpt-5.6-sol  efforts: low, medium, high (default high)\n\
         sol-west  azure_openai  gpt-5.6-sol  efforts: none\n\
         oa  openai  gpt-x  efforts: minimal, low (default minimal)\n\
         oa-env  openai  gpt-y  efforts: none\n\
         local  scripted  echo  efforts: none\n"
    );
}

/// Credentials equal to pieces of the document framing, or colliding with public fields, or an
/// invalid registry: stdout stays empty, the exit status is 1, stderr names no value.
#[test]
fn unsafe_projections_leave_stdout_empty() {
    let with_key = |key: &str| {
        format!(
            r#"{{"version":2,"providers":[{{"id":"a","type":"openai","model":"m","api_key":{key}}},{{"id":"b","type":"scripted","model":"n","default":true}}]}}"#
        )
    };
    let cases: Vec<(String, &[&str], &str)> = vec![
        (with_key(r#""\"providerType\"""#), &["--list-providers", "--output-format", "json"], "provider catalog refused"),
        (with_key(r#""providerType""#), &["--list-providers", "--output-format", "json"], "provider catalog refused"),
        (with_key(r#""}]}\n""#), &["--list-providers", "--output-format", "json"], "provider catalog refused"),
        (with_key(r#""\"selected\":false""#), &["--list-providers", "--output-format", "json"], "provider catalog refused"),
        (with_key(r#""  [default]""#), &["--list-providers"], "provider catalog refused"),
        (with_key(r#""none\n""#), &["--list-providers", "--output-format", "text"], "provider catalog refused"),
        (with_key(r#""scripted""#), &["--list-providers"], "invalid registry: public field providers[1].providerType contains the value of private field providers[0].api_key"),
        (with_key(r#""m""#), &["--list-providers", "--output-format", "json"], "invalid registry: public field providers[0].model contains the value of private field providers[0].api_key"),
        (with_key(r#""SENTINEL-1","api_key_env":"AGENTX_TEST_ENV_KEY_A""#), &["--list-providers"], "invalid registry: auth.json providers[0]: must have exactly one of api_key or api_key_env, not both"),
        (MULTI_NO_DEFAULT.replace("\"sol-west\"", "\"sol-east\""), &["--list-providers", "--output-format", "json"], "invalid registry: auth.json providers[1].id: must be unique"),
        (MULTI_NO_DEFAULT.replace("\"version\":2", "\"version\":2.0"), &["--list-providers"], "invalid registry: auth.json version: must be the integer 2"),
        (MULTI_NO_DEFAULT.replace("AGENTX_TEST_ENV_KEY_B", "AGENTX_TEST_ENV_UNSET"), &["--list-providers"], "invalid registry: auth.json providers[3].api_key_env: names an environment variable that is unset or empty"),
        (MULTI_NO_DEFAULT.replace(r#""api_key":"SENTINEL-key-1""#, r#""api_key":"SENTINEL-key-1","\u0061pi_key":"SENTINEL-x""#), &["--list-providers"], "invalid registry: auth.json (top level): ambiguous JSON: duplicate member name at byte "),
        (MULTI_NO_DEFAULT.replace(r#""model":"echo""#, r#""model":"echo","token":"SENTINEL-t""#), &["--list-providers"], "invalid registry: auth.json providers[4]: member #4 is not allowed here"),
    ];
    let mut checked = 0;
    for (i, (auth, args, diagnostic)) in cases.iter().enumerate() {
        let home = home_with_auth(&format!("unsafe{i}"), auth);
        let out = agentx(&home, args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "case {i}: {}",
            text(&out.stderr)
        );
        assert!(
            out.stdout.is_empty(),
            "case {i}: stdout {:?}",
            text(&out.stdout)
        );
        let err = text(&out.stderr);
        assert!(
            err.starts_with(&format!("agentx: {diagnostic}")),
            "case {i}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "case {i}: {err}");
        assert!(!err.contains("SENTINEL"), "case {i}: {err}");
        assert!(
            !err.contains(home.path().to_str().unwrap_or("?")),
            "case {i}: path in {err}"
        );
        checked += 1;
    }
    eprintln!("checked {checked} unsafe registries");
}

/// PROFILE §3: without auth.json the built-in `local` provider, with a one-line notice.
#[test]
fn absent_auth_json_lists_the_built_in_provider() {
    let home = TempDir::new("absent");
    let out = agentx(&home, &["--list-providers"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        "local  scripted  agentx-echo  [default]  efforts: none\n"
    );
    assert_eq!(
        text(&out.stderr),
        "agentx: no auth.json in the AgentX home; using the built-in provider \"local\" (scripted, agentx-echo)\n"
    );
    let out = agentx(&home, &["--list-providers", "--output-format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["providers"][0]["default"], true);
    assert_eq!(
        doc["providers"][0]["description"],
        "Deterministic local model built into agentx"
    );
    // The home is not created or written.
    let entries = std::fs::read_dir(home.path()).expect("home").count();
    assert_eq!(entries, 0);
}

#[test]
fn unreadable_auth_json_and_unresolvable_home() {
    let home = TempDir::new("unreadable");
    std::fs::create_dir(home.path().join("auth.json")).expect("dir");
    let out = agentx(&home, &["--list-providers"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    // PROFILE §3: an auth.json that is not a regular file is refused unread.
    assert_eq!(
        text(&out.stderr),
        "agentx: auth.json is not a regular file\n"
    );

    // PROFILE §3: a home that exists but is not a directory names itself.
    let parent = TempDir::new("home-file");
    let file_home = parent.path().join("home");
    std::fs::write(&file_home, b"").expect("file");
    for stream_json in [false, true] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_agentx"));
        if stream_json {
            cmd.args([
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ]);
        } else {
            cmd.arg("--list-providers");
        }
        let out = cmd
            .env("AGENTX_HOME", &file_home)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1), "stream-json {stream_json}");
        assert!(out.stdout.is_empty());
        assert_eq!(
            text(&out.stderr),
            format!(
                "agentx: AgentX home {} is not a directory\n",
                file_home.display()
            ),
            "stream-json {stream_json}"
        );
    }

    let out = Command::new(env!("CARGO_BIN_EXE_agentx"))
        .arg("--list-providers")
        .env_remove("AGENTX_HOME")
        .env_remove("HOME")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(text(&out.stderr).starts_with("agentx: cannot resolve the AgentX home"));

    // An empty AGENTX_HOME falls back to $HOME/.agentx.
    let fallback = TempDir::new("fallback");
    std::fs::create_dir(fallback.path().join(".agentx")).expect("dir");
    std::fs::write(
        fallback.path().join(".agentx/auth.json"),
        r#"{"version":2,"providers":[{"id":"via-home","type":"scripted","model":"m"}]}"#,
    )
    .expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_agentx"))
        .arg("--list-providers")
        .env("AGENTX_HOME", "")
        .env("HOME", fallback.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "via-home  scripted  m  [default]  efforts: none\n"
    );
}

/// PROFILE §2 / WIRE-026 grammar: either order, each once, optional final `--`, nothing else.
#[test]
fn discovery_grammar() {
    let home = home_with_auth(
        "grammar",
        r#"{"version":2,"providers":[{"id":"x","type":"scripted","model":"m"}]}"#,
    );
    let good: &[&[&str]] = &[
        &["--list-providers"],
        &["--list-providers", "--"],
        &["--list-providers", "--output-format", "text"],
        &["--list-providers", "--output-format", "json", "--"],
        &["--output-format", "json", "--list-providers"],
        &["--output-format", "text", "--list-providers", "--"],
    ];
    for args in good {
        let out = agentx(&home, args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(!out.stdout.is_empty());
    }
    let bad: &[&[&str]] = &[
        &["--list-providers", "--list-providers"],
        &["--list-providers", "--output-format"],
        &["--list-providers", "--output-format", "stream-json"],
        &[
            "--list-providers",
            "--output-format",
            "json",
            "--output-format",
            "json",
        ],
        &["--list-providers", "--output-format=json"],
        &["--list-providers", "summarize SENTINEL-prompt"],
        &["--list-providers", "-p", "hi"],
        &["--list-providers", "--", "prompt"],
        &["--list-providers", "--", "--"],
        &["--list-providers", "--help"],
        &["--help", "--list-providers"],
        &["--list-providers", "--version"],
        &["--version", "--list-providers"],
        &["--list-providers", "--provider", "x"],
        &[
            "--output-format",
            "json",
            "--list-providers",
            "--input-format",
            "stream-json",
        ],
    ];
    for args in bad {
        let out = agentx(&home, args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("usage: agentx --list-providers [--output-format text|json] [--]"),
            "{err}"
        );
        assert!(!err.contains("SENTINEL"), "{err}");
    }
    eprintln!(
        "checked {} good and {} bad argument lists",
        good.len(),
        bad.len()
    );
}

#[test]
fn version_help_and_usage_errors() {
    let home = TempDir::new("misc");
    let out = agentx(&home, &["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stdout),
        format!("agentx {}\n", env!("CARGO_PKG_VERSION"))
    );
    let out = agentx(&home, &["--help"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("agentx --list-providers [--output-format text|json] [--]"));
    // PROFILE §2: no mode, a combined --version/--help, an operand: usage errors (status 2).
    for (args, first_line) in [
        (&[][..], "agentx: no mode given: use --list-providers, --input-format stream-json --output-format stream-json, -p PROMPT, --version or --help"),
        (&["--version", "--help"], "agentx: --version takes no other arguments (argument 1)"),
        (&["--", "--list-providers"], "agentx: nothing may follow the final -- (argument 2)"),
    ] {
        let out = agentx(&home, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = text(&out.stderr);
        assert_eq!(err.lines().next(), Some(first_line), "{args:?}");
    }
}
