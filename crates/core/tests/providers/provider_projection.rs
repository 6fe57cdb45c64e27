//! The public projection of the registry, the selection and the resume binding, against the
//! acceptance scenarios' registry/projection halves: 21 (apiKeySource), 25 (selected
//! nondefault provider in system/init), 26 (complete ordered catalog, one selected, models),
//! 27 (sentinels in every private field never projected, catalog never truncated), 28 (the
//! resume binding fails closed) and the collision and framing rules of WIRE-024/WIRE-026.

use std::borrow::Cow;
use std::ffi::OsString;

use agentx_core::registry::{
    discovery, parse_auth_json, Catalog, ErrorKind, Format, ProviderBinding, ProviderType,
    Registry, Selection,
};
use agentx_wire::encode::{ApiKeySource, FrameEncoder};
use agentx_wire::json;
use agentx_wire::wire::grammar::Uuid;
use agentx_wire::wire::initialize::{Account, InitializeResponse, ProviderDiscovery};
use agentx_wire::wire::system_init::InitEvent;
use agentx_wire::wire::{Path, WireValue};

/// Distinctive sentinels in every private field of every provider type, both key forms.
const SENTINELS: &[&str] = &[
    "SENTINEL-endpoint-sol",
    "SENTINEL-deployment-sol",
    "SENTINEL-apiversion-sol",
    "SENTINEL-key-sol",
    "SENTINEL-endpoint-west",
    "SENTINEL-deployment-west",
    "SENTINEL-apiversion-west",
    "SENTINEL_ENV_NAME_WEST",
    "SENTINEL-env-value-west",
    "SENTINEL-baseurl-oa",
    "SENTINEL-key-oa",
    "SENTINEL-org-oa",
    "SENTINEL_ENV_NAME_OA2",
    "SENTINEL-env-value-oa2",
    "SENTINEL-script-path",
];

/// Private member names that must never appear in any projection.
const PRIVATE_NAMES: &[&str] = &[
    "endpoint",
    "deployment",
    "api_version",
    "api_key",
    "base_url",
    "organization",
    "script",
    "route",
    "binding",
];

fn env(name: &str) -> Option<OsString> {
    match name {
        "SENTINEL_ENV_NAME_WEST" => Some("SENTINEL-env-value-west".into()),
        "SENTINEL_ENV_NAME_OA2" => Some("SENTINEL-env-value-oa2".into()),
        _ => None,
    }
}

/// Five providers, different models and reasoning subsets, the default on providers[1].
const MULTI: &str = r#"{
  "version": 2,
  "providers": [
    {"id": "sol-east", "type": "azure_openai", "model": "gpt-5.6-sol",
     "reasoning": {"efforts": ["low", "medium", "high"], "default_effort": "high"},
     "endpoint": "SENTINEL-endpoint-sol", "deployment": "SENTINEL-deployment-sol",
     "api_version": "SENTINEL-apiversion-sol", "api_key": "SENTINEL-key-sol"},
    {"id": "sol-west", "type": "azure_openai", "model": "gpt-5.6-sol", "default": true,
     "reasoning": {"efforts": ["medium", "low"], "default_effort": "low"},
     "endpoint": "SENTINEL-endpoint-west", "deployment": "SENTINEL-deployment-west",
     "api_version": "SENTINEL-apiversion-west", "api_key_env": "SENTINEL_ENV_NAME_WEST"},
    {"id": "oa", "type": "openai", "model": "gpt-x", "display_name": "OpenAI X",
     "description": "custom text", "base_url": "SENTINEL-baseurl-oa",
     "api_key": "SENTINEL-key-oa", "organization": "SENTINEL-org-oa"},
    {"id": "oa2", "type": "openai", "model": "gpt-y", "reasoning": {"efforts": ["minimal"], "default_effort": "minimal"},
     "api_key_env": "SENTINEL_ENV_NAME_OA2"},
    {"id": "local-script", "type": "scripted", "model": "echo", "script": "SENTINEL-script-path",
     "reasoning": {}}
  ]
}"#;

fn multi() -> Registry {
    parse_auth_json(MULTI.as_bytes(), &env).expect("valid registry")
}

fn assert_no_sentinel(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for s in SENTINELS {
        assert!(!text.contains(s), "{what} leaks {s}: {text}");
    }
    assert!(
        !text.contains("SENTINEL"),
        "{what} leaks a sentinel: {text}"
    );
}

fn assert_no_private_name(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for n in PRIVATE_NAMES {
        assert!(
            !text.contains(&format!("\"{n}\"")),
            "{what} has member {n}: {text}"
        );
    }
}

fn uuid(s: &'static str) -> Uuid<'static> {
    Uuid::new(s).expect("canonical uuid")
}

fn init_event() -> InitEvent<'static> {
    InitEvent {
        api_key_source: None,
        claude_code_version: Some(Cow::Borrowed("0.1.0")),
        agentx_version: None,
        cwd: Cow::Borrowed("/w"),
        tools: vec![],
        mcp_servers: vec![],
        model: Cow::Borrowed("placeholder"),
        provider: None,
        provider_type: None,
        reasoning_capabilities: None,
        permission_mode: Cow::Borrowed("default"),
        slash_commands: None,
        output_style: None,
        skills: None,
        plugins: None,
        agents: None,
        betas: None,
        fast_mode_state: None,
        input_capabilities: None,
        uuid: uuid("6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"),
        session_id: uuid("7f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"),
    }
}

fn initialize_response() -> InitializeResponse<'static> {
    InitializeResponse {
        commands: vec![],
        agents: vec![],
        output_style: Cow::Borrowed("default"),
        available_output_styles: vec![Cow::Borrowed("default")],
        models: vec![],
        providers: vec![],
        account: Account {
            api_key_source: None,
            provider: None,
            email: None,
            organization: None,
            subscription_type: None,
            token_source: None,
        },
        pid: None,
        input_capabilities: None,
    }
}

fn encode<'a>(v: &impl WireValue<'a>) -> Vec<u8> {
    let mut out = Vec::new();
    v.encode(&mut out);
    out
}

fn as_json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("valid JSON")
}

/// Scenario 26: complete, in source order, value == id, exactly one selected, the effective
/// default independent of it, flat and nested reasoning agreeing; `models` one element.
#[test]
fn scenario_26_initialize_catalog_complete_and_ordered() {
    let ids = ["sol-east", "sol-west", "oa", "oa2", "local-script"];
    for (chosen, requested) in [
        (1usize, None),
        (0, Some("sol-east")),
        (4, Some("local-script")),
    ] {
        let sel = Selection::select(multi(), requested).expect("selection");
        assert_eq!(sel.index(), chosen);
        let mut resp = initialize_response();
        sel.apply_to_initialize(&mut resp);
        let bytes = encode(&resp);
        // The wire layer's own WIRE-024 checks accept it (one selected, agreeing fields).
        let doc = json::parse(&bytes).expect("json");
        let decoded =
            InitializeResponse::decode_checked(doc.root(), &Path::ROOT).expect("WIRE-024");
        assert_eq!(decoded.providers.len(), ids.len(), "never truncated");
        let v = as_json(&bytes);
        let providers = v["providers"].as_array().expect("providers");
        for (i, p) in providers.iter().enumerate() {
            assert_eq!(p["id"], ids[i]);
            assert_eq!(p["value"], p["id"]);
            assert_eq!(p["selected"], i == chosen, "{p}");
            // The declared default is providers[1], whoever is selected.
            assert_eq!(p["default"], i == 1, "{p}");
            assert_eq!(p["supportsEffort"], p["reasoning"]["supported"]);
            assert_eq!(p["supportedReasoningEfforts"], p["reasoning"]["efforts"]);
            assert_eq!(p["defaultReasoningEffort"], p["reasoning"]["defaultEffort"]);
        }
        assert_eq!(
            providers[0]["supportedReasoningEfforts"],
            serde_json::json!(["low", "medium", "high"])
        );
        assert_eq!(
            providers[1]["supportedReasoningEfforts"],
            serde_json::json!(["medium", "low"])
        );
        assert_eq!(providers[1]["defaultReasoningEffort"], "low");
        assert_eq!(providers[2]["displayName"], "OpenAI X");
        assert_eq!(providers[2]["description"], "custom text");
        assert_eq!(providers[3]["displayName"], "oa2 (gpt-y)");
        assert_eq!(
            providers[3]["description"],
            "OpenAI-compatible model endpoint configured by AgentX-home auth.json"
        );
        assert_eq!(
            providers[4]["reasoning"],
            serde_json::json!({"supported": false, "efforts": [], "defaultEffort": null})
        );
        assert_eq!(
            providers[4]["defaultReasoningEffort"],
            serde_json::Value::Null
        );
        // models: one element, the selected logical model and its exact declaration.
        let models = v["models"].as_array().expect("models");
        assert_eq!(models.len(), 1);
        let m = &models[0];
        let p = &providers[chosen];
        assert_eq!(m["value"], p["model"]);
        assert_eq!(m["displayName"], p["model"]);
        assert_eq!(m["provider"], p["id"]);
        assert_eq!(m["providerType"], p["providerType"]);
        assert_eq!(m["reasoning"], p["reasoning"]);
        assert_eq!(
            m["supportedReasoningEfforts"],
            p["supportedReasoningEfforts"]
        );
        assert_eq!(m["defaultReasoningEffort"], p["defaultReasoningEffort"]);
        assert_eq!(m["supportsEffort"], p["supportsEffort"]);
        assert_eq!(v["account"]["apiKeySource"], "user");
        assert_no_sentinel("initialize", &bytes);
        assert_no_private_name("initialize", &bytes);
    }
}

/// Scenario 25: a selected nondefault provider's exact id, type, model and ordered reasoning
/// in system/init; no unselected descriptor and no routing field.
#[test]
fn scenario_25_init_names_the_selected_nondefault_provider() {
    let sel = Selection::select(multi(), Some("sol-east")).expect("selection");
    assert!(!sel.provider().declared_default());
    let f = sel.init_provider();
    assert_eq!(f.provider, "sol-east");
    assert_eq!(f.provider_type, ProviderType::AzureOpenAi);
    assert_eq!(f.model, "gpt-5.6-sol");
    assert_eq!(f.api_key_source, ApiKeySource::User);
    let mut init = init_event();
    sel.apply_to_init(&mut init);
    let bytes = encode(&init);
    let v = as_json(&bytes);
    assert_eq!(v["provider"], "sol-east");
    assert_eq!(v["provider_type"], "azure_openai");
    assert_eq!(v["model"], "gpt-5.6-sol");
    assert_eq!(
        v["reasoning_capabilities"],
        serde_json::json!({"supported": true, "efforts": ["low", "medium", "high"], "defaultEffort": "high"})
    );
    assert_eq!(v["apiKeySource"], "user");
    let text = String::from_utf8_lossy(&bytes);
    for other in ["sol-west", "oa2", "local-script", "\"providers\""] {
        assert!(!text.contains(other), "init carries {other}: {text}");
    }
    assert_no_sentinel("system/init", &bytes);
    assert_no_private_name("system/init", &bytes);
}

/// Scenario 21: apiKeySource is `user` in both initialization forms for the AgentX-home
/// auth.json profile (inline key and api_key_env alike) and for the built-in provider; neither
/// form carries the credential field name or value.
#[test]
fn scenario_21_api_key_source_user_in_both_forms() {
    let built_in = Registry::built_in();
    for (registry, id) in [(multi(), "sol-west"), (multi(), "oa"), (built_in, "local")] {
        let sel = Selection::select(registry, Some(id)).expect("selection");
        let mut init = init_event();
        sel.apply_to_init(&mut init);
        let mut resp = initialize_response();
        sel.apply_to_initialize(&mut resp);
        for bytes in [encode(&init), encode(&resp)] {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            assert!(text.contains("\"apiKeySource\":\"user\""), "{text}");
            assert!(!text.contains("temporary"), "{text}");
            assert!(!text.contains("api_key"), "{text}");
            assert_no_sentinel("init form", &bytes);
        }
    }
}

/// Scenario 27: sentinels in every private field of every provider never reach a projection,
/// Debug or an error; the catalog is complete whatever is selected; the final frames pass the
/// encoder's credential validation byte for byte.
#[test]
fn scenario_27_no_private_field_reaches_any_projection() {
    let reg = multi();
    assert_no_sentinel("Debug of Registry", format!("{reg:?}").as_bytes());
    let catalog = Catalog::build(&reg).expect("catalog");
    assert_no_sentinel("Debug of Catalog", format!("{catalog:?}").as_bytes());
    assert_eq!(catalog.credentials().len(), SENTINELS.len());
    for format in [Format::Json, Format::Text] {
        let bytes = catalog.discovery(format).expect("discovery");
        assert_no_sentinel("discovery", &bytes);
        assert_no_private_name("discovery", &bytes);
    }
    for id in ["sol-east", "sol-west", "oa", "oa2", "local-script"] {
        let sel = Selection::select(multi(), Some(id)).expect("selection");
        assert_no_sentinel("Debug of Selection", format!("{sel:?}").as_bytes());
        assert_eq!(sel.providers().len(), 5, "catalog truncated for {id}");
        let mut binding = Vec::new();
        sel.binding().encode(&mut binding);
        assert_no_sentinel("binding record", &binding);
        // Through the real encoder with the complete union installed (WIRE-013).
        let mut written = Vec::new();
        let mut encoder = FrameEncoder::new();
        encoder
            .set_credentials(sel.credentials().clone())
            .expect("configure");
        let mut init = init_event();
        sel.apply_to_init(&mut init);
        let mut resp = initialize_response();
        sel.apply_to_initialize(&mut resp);
        written.extend_from_slice(
            encoder
                .encode_with(|b| init.encode(b))
                .expect("init passes validation"),
        );
        written.extend_from_slice(
            encoder
                .encode_with(|b| resp.encode(b))
                .expect("initialize passes validation"),
        );
        let mut expected = encode(&init);
        expected.push(b'\n');
        expected.extend_from_slice(&encode(&resp));
        expected.push(b'\n');
        assert_eq!(written, expected, "byte-identical output");
        assert_no_sentinel("encoded session records", &written);
    }
}

/// Scenario 28's binding half (WIRE-025): resume compares id, type, model and the opaque
/// route; any difference fails closed; a rotated key keeps the route.
#[test]
fn scenario_28_resume_binding_fails_closed() {
    let sel = Selection::select(multi(), Some("sol-east")).expect("selection");
    let recorded = sel.binding().clone();
    let mut record = Vec::new();
    recorded.encode(&mut record);
    let decoded = ProviderBinding::decode(&record).expect("round trip");
    assert_eq!(decoded, recorded);
    assert_eq!(decoded.route().to_hex().len(), 64);
    sel.binding()
        .check_resume(&decoded)
        .expect("same binding resumes");

    let component = |doc: &str, id: &str| {
        let reg = parse_auth_json(doc.as_bytes(), &env).expect("valid");
        let other = Selection::select(reg, Some(id)).expect("selection");
        other
            .binding()
            .check_resume(&recorded)
            .err()
            .map(|e| (e.kind(), e.binding_component()))
    };
    assert_eq!(
        component(MULTI, "sol-west"),
        Some((ErrorKind::BindingMismatch, Some("id")))
    );
    assert_eq!(
        component(
            &MULTI.replace("SENTINEL-endpoint-sol", "SENTINEL-endpoint-moved"),
            "sol-east"
        ),
        Some((ErrorKind::BindingMismatch, Some("route")))
    );
    assert_eq!(
        component(
            &MULTI.replace("SENTINEL-deployment-sol", "SENTINEL-deployment-2"),
            "sol-east"
        ),
        Some((ErrorKind::BindingMismatch, Some("route")))
    );
    assert_eq!(
        component(
            &MULTI.replacen("\"gpt-5.6-sol\"", "\"gpt-6\"", 1),
            "sol-east"
        ),
        Some((ErrorKind::BindingMismatch, Some("model")))
    );
    assert_eq!(
        component(
            &MULTI.replace("SENTINEL-key-sol", "SENTINEL-key-rotated"),
            "sol-east"
        ),
        None
    );
    let retyped = r#"{"version":2,"providers":[{"id":"sol-east","type":"openai","model":"gpt-5.6-sol","api_key":"k"}]}"#;
    assert_eq!(
        component(retyped, "sol-east"),
        Some((ErrorKind::BindingMismatch, Some("type")))
    );
    // A mismatch error names the component, never a value.
    let e = Selection::select(multi(), Some("sol-west"))
        .expect("selection")
        .binding()
        .check_resume(&recorded)
        .expect_err("mismatch");
    assert_eq!(
        e.to_string(),
        "resume refused: the session is bound to another provider (its id differs) (WIRE-025)"
    );
    // Malformed or open records fail closed.
    for bad in [
        &b"{}"[..],
        b"not json",
        br#"{"provider":"a","provider_type":"openai","model":"m","route":"00"}"#,
        br#"{"provider":"a","provider_type":"openai","model":"m","route":"0000000000000000000000000000000000000000000000000000000000000000","x":1}"#,
        br#"{"provider":"a","provider_type":"nope","model":"m","route":"0000000000000000000000000000000000000000000000000000000000000000"}"#,
        br#"{"provider":"a","provider_type":"openai","model":"m","route":"000000000000000000000000000000000000000000000000000000000000000A"}"#,
    ] {
        assert_eq!(
            ProviderBinding::decode(bad).err().map(|e| e.kind()),
            Some(ErrorKind::BindingRecord)
        );
    }
}

#[test]
fn selection_rule_and_startup_errors() {
    // Declared default.
    assert_eq!(
        Selection::select(multi(), None)
            .expect("default")
            .provider()
            .id(),
        "sol-west"
    );
    // Singleton without a declared default.
    let single = r#"{"version":2,"providers":[{"id":"only","type":"scripted","model":"m"}]}"#;
    let reg = parse_auth_json(single.as_bytes(), &env).expect("valid");
    assert_eq!(
        Selection::select(reg, None)
            .expect("singleton")
            .provider()
            .id(),
        "only"
    );
    // Several, no default, no --provider: the ids are listed.
    let two = r#"{"version":2,"providers":[{"id":"a","type":"scripted","model":"m"},{"id":"b","type":"scripted","model":"m"}]}"#;
    let reg = parse_auth_json(two.as_bytes(), &env).expect("valid");
    let e = Selection::select(reg.clone(), None).expect_err("no default");
    assert_eq!(e.kind(), ErrorKind::NoSelection);
    assert!(e.to_string().ends_with("available: a, b"), "{e}");
    // An unknown --provider never echoes the argument.
    let e = Selection::select(reg.clone(), Some("SENTINEL-typed-secret")).expect_err("unknown");
    assert_eq!(e.kind(), ErrorKind::UnknownProvider);
    assert!(!e.to_string().contains("SENTINEL"), "{e}");
    assert!(e.to_string().ends_with("available: a, b"), "{e}");
    // Exact ids only: no case folding, no model names.
    assert!(Selection::select(reg.clone(), Some("A")).is_err());
    assert!(Selection::select(reg.clone(), Some("m")).is_err());
    assert_eq!(Selection::select(reg, Some("b")).expect("b").index(), 1);
}

fn collision(doc: &str) -> Option<(String, String, String)> {
    let reg = parse_auth_json(doc.as_bytes(), &env).expect("valid registry");
    let e = Catalog::build(&reg).err()?;
    assert_eq!(e.kind(), ErrorKind::Collision);
    assert!(
        Selection::select(reg, None).is_err(),
        "initialization fails too"
    );
    Some((
        e.path().unwrap_or_default(),
        e.private_field().unwrap_or_default().to_string(),
        e.to_string(),
    ))
}

/// PROFILE §3 / WIRE-024: a public string containing credential material fails the catalog,
/// naming the two fields and no value.
#[test]
fn collision_rule_names_fields_only() {
    let azure = |model: &str, deployment: &str| {
        format!(
            r#"{{"version":2,"providers":[{{"id":"a","type":"azure_openai","model":"{model}","endpoint":"https://e.invalid/","deployment":"{deployment}","api_version":"v1","api_key":"k-123456"}}]}}"#
        )
    };
    // The common case: a deployment named exactly like its model.
    let (path, private, text) = collision(&azure("gpt-5", "gpt-5")).expect("collision");
    assert_eq!(path, "providers[0].model");
    assert_eq!(private, "providers[0].deployment");
    assert_eq!(
        text,
        "invalid registry: public field providers[0].model contains the value of private field providers[0].deployment; rename one (PROFILE §3, WIRE-024)"
    );
    // The deployment is a substring of the displayName default "<id> (<model>)".
    let (path, private, _) = collision(&azure("gpt-5-large", "gpt-5")).expect("collision");
    assert_eq!(
        (path.as_str(), private.as_str()),
        ("providers[0].model", "providers[0].deployment")
    );
    // No collision when the names differ.
    assert!(collision(&azure("gpt-5", "prod-gpt")).is_none());

    let two = |second: &str| {
        format!(
            r#"{{"version":2,"providers":[{{"id":"a","type":"openai","model":"m","api_key":"SENTINEL-k"}},{second}]}}"#
        )
    };
    // Across providers: providers[1] shows providers[0]'s key.
    let (path, private, text) = collision(&two(
        r#"{"id":"b","type":"scripted","model":"n","description":"uses SENTINEL-k"}"#,
    ))
    .expect("collision");
    assert_eq!(
        (path.as_str(), private.as_str()),
        ("providers[1].description", "providers[0].api_key")
    );
    assert!(!text.contains("SENTINEL"), "{text}");
    // An id equal to a key: named by index, never by the id.
    let (path, _, text) =
        collision(&two(r#"{"id":"SENTINEL-k","type":"scripted","model":"n"}"#)).expect("collision");
    assert_eq!(path, "providers[1].id");
    assert!(!text.contains("SENTINEL"), "{text}");
    // An effort, a displayName, the resolved env value and the env variable name.
    let (path, _, _) = collision(&two(
        r#"{"id":"b","type":"scripted","model":"n","reasoning":{"efforts":["low","SENTINEL-k!"],"default_effort":"low"}}"#,
    ))
    .expect("collision");
    assert_eq!(path, "providers[1].reasoning.efforts[1]");
    let (path, private, _) = collision(
        r#"{"version":2,"providers":[{"id":"o","type":"openai","model":"SENTINEL-env-value-west","api_key_env":"SENTINEL_ENV_NAME_WEST"}]}"#,
    )
    .expect("collision");
    assert_eq!(path, "providers[0].model");
    assert_eq!(private, "providers[0].api_key_env (resolved value)");
    let (path, private, _) = collision(
        r#"{"version":2,"providers":[{"id":"o","type":"openai","model":"m","display_name":"via SENTINEL_ENV_NAME_WEST","api_key_env":"SENTINEL_ENV_NAME_WEST"}]}"#,
    )
    .expect("collision");
    assert_eq!(
        (path.as_str(), private.as_str()),
        ("providers[0].displayName", "providers[0].api_key_env")
    );
    // A private value equal to a type's fixed description phrase or to the providerType.
    let (path, _, _) = collision(
        r#"{"version":2,"providers":[{"id":"o","type":"openai","model":"m","api_key":"compatible model"}]}"#,
    )
    .expect("collision");
    assert_eq!(path, "providers[0].description");
    let (path, _, _) = collision(
        r#"{"version":2,"providers":[{"id":"o","type":"openai","model":"m","api_key":"openai"}]}"#,
    )
    .expect("collision");
    assert_eq!(path, "providers[0].providerType");
    // The escaped spelling: a key `\"` is what the writer makes of a `"` in the model.
    let (path, _, _) = collision(
        r#"{"version":2,"providers":[{"id":"o","type":"openai","model":"x\"y","api_key":"\\\""}]}"#,
    )
    .expect("collision");
    assert_eq!(path, "providers[0].model");
    // A lone `"` credential is framing, not a field collision (fuzz regression): the catalog
    // builds, and discovery refuses the frame instead.
    let quote =
        r#"{"version":2,"providers":[{"id":"o","type":"openai","model":"m","api_key":"\""}]}"#;
    assert!(collision(quote).is_none());
    let reg = parse_auth_json(quote.as_bytes(), &env).expect("valid");
    assert_eq!(
        discovery::discover(&reg, Format::Json)
            .err()
            .map(|e| e.kind()),
        Some(ErrorKind::Framing)
    );
}

/// WIRE-026 / scenario 29: credentials equal to pieces of the document's framing pass the
/// field-level rule but leave discovery with no bytes at all; never a shortened document.
#[test]
fn framing_credentials_refuse_the_whole_document() {
    let with_key = |key_json: &str| {
        format!(
            r#"{{"version":2,"providers":[{{"id":"a","type":"openai","model":"m","api_key":{key_json}}},{{"id":"b","type":"scripted","model":"n"}}]}}"#
        )
    };
    let json_framing = [
        r#""\"providerType\"""#,
        r#""providerType""#,
        r#""}]}\n""#,
        r#""]}\n""#,
        r#""{\"version\":1,\"providers\":[""#,
        r#"",\"selected\":false,""#,
        r#""\"defaultEffort\":null}""#,
        r#""},{\"value\":""#,
    ];
    let mut checked = 0;
    for key in json_framing {
        let reg = parse_auth_json(with_key(key).as_bytes(), &env).expect("valid registry");
        let catalog = Catalog::build(&reg).expect("no public string holds it");
        let e = catalog.discovery(Format::Json).expect_err(key);
        assert_eq!(e.kind(), ErrorKind::Framing, "{key}");
        assert_eq!(
            discovery::discover(&reg, Format::Json)
                .err()
                .map(|e| e.kind()),
            Some(ErrorKind::Framing)
        );
        checked += 1;
    }
    let with_default =
        |key: &str| with_key(key).replace(r#""model":"n""#, r#""model":"n","default":true"#);
    for doc in [
        with_key(r#""  scripted  n  ""#),
        with_key(r#""  efforts: none\n""#),
        with_key(r#""none\nb  ""#),
        with_key(r#""m  efforts""#),
        with_default(r#""  [default]""#),
        with_default(r#""n  [default]  efforts: none\n""#),
    ] {
        let key = &doc;
        let reg = parse_auth_json(doc.as_bytes(), &env).expect("valid registry");
        let catalog = Catalog::build(&reg).expect("no public string holds it");
        assert_eq!(
            catalog.discovery(Format::Text).err().map(|e| e.kind()),
            Some(ErrorKind::Framing),
            "{key}"
        );
        checked += 1;
    }
    eprintln!("checked {checked} framing credentials");
}

/// WIRE-026: the discovery document is version 1, complete, in file order, none selected; a
/// singleton is default, a multi-provider registry without default has none; the wire layer's
/// own decoder accepts it.
#[test]
fn discovery_document_shape() {
    let check = |doc: &str, defaults: &[bool]| {
        let reg = parse_auth_json(doc.as_bytes(), &env).expect("valid");
        let bytes = discovery::discover(&reg, Format::Json).expect("discovery");
        assert_eq!(bytes.last(), Some(&b'\n'));
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 1);
        let parsed = json::parse(&bytes).expect("json");
        let obj = parsed.root().as_object().expect("object");
        let d = ProviderDiscovery::decode_checked(obj, &Path::ROOT).expect("WIRE-026");
        assert_eq!(d.version, 1);
        let got: Vec<bool> = d.providers.iter().map(|p| p.default).collect();
        assert_eq!(got, defaults);
        assert!(d.providers.iter().all(|p| !p.selected));
        let ids: Vec<&str> = d.providers.iter().map(|p| &*p.id).collect();
        assert_eq!(ids, reg.ids());
    };
    check(
        r#"{"version":2,"providers":[{"id":"x","type":"scripted","model":"m"}]}"#,
        &[true],
    );
    check(
        r#"{"version":2,"providers":[{"id":"x","type":"scripted","model":"m"},{"id":"y","type":"scripted","model":"m"}]}"#,
        &[false, false],
    );
    check(MULTI, &[false, true, false, false, false]);
    // The built-in provider.
    let bytes = discovery::discover(&Registry::built_in(), Format::Json).expect("built-in");
    assert_eq!(
        bytes,
        br#"{"version":1,"providers":[{"value":"local","id":"local","providerType":"scripted","model":"agentx-echo","displayName":"local (agentx-echo)","description":"Deterministic local model built into agentx","default":true,"selected":false,"supportsEffort":false,"supportedReasoningEfforts":[],"defaultReasoningEffort":null,"reasoning":{"supported":false,"efforts":[],"defaultEffort":null}}]}
"#
    );
}

#[test]
fn discovery_text_lines() {
    let text = discovery::discover(&multi(), Format::Text).expect("text");
    assert_eq!(
        String::from_utf8(text).expect("utf8"),
        "sol-east  azure_openai  gpt-5.6-sol  efforts: low, medium, high (default high)\n\
         sol-west  azure_openai  gpt-5.6-sol  [default]  efforts: medium, low (default low)\n\
         oa  openai  gpt-x  efforts: none\n\
         oa2  openai  gpt-y  efforts: minimal (default minimal)\n\
         local-script  scripted  echo  efforts: none\n"
    );
}
