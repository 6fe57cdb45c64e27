//! PROFILE §19's auth.json members at their edges: `context_window` (an integer literal,
//! 1,024 to 10,000,000, every type) and `pricing` (`openai` / `azure_openai` only; closed;
//! `input_per_mtok` and `output_per_mtok` required; each a finite number ≥ 0). Diagnostics
//! follow §3: the JSON path and the rule, never a value.

use agentx_core::registry::{
    parse_auth_json, ErrorKind, Pricing, Registry, MAX_CONTEXT_WINDOW, MIN_CONTEXT_WINDOW,
};

const SENTINEL: &str = "SENTINEL";

fn registry(providers: &[String]) -> String {
    format!(r#"{{"version":2,"providers":[{}]}}"#, providers.join(","))
}

fn scripted(id: &str, extra: &str) -> String {
    format!(r#"{{"id":"{id}","type":"scripted","model":"m-{id}"{extra}}}"#)
}

fn openai(id: &str, extra: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"openai","model":"m-{id}","api_key":"SENTINEL-key-{id}"{extra}}}"#
    )
}

fn azure(id: &str, extra: &str) -> String {
    format!(
        r#"{{"id":"{id}","type":"azure_openai","model":"m-{id}","endpoint":"https://SENTINEL-endpoint-{id}/","deployment":"SENTINEL-deployment-{id}","api_version":"SENTINEL-version-{id}","api_key":"SENTINEL-key-{id}"{extra}}}"#
    )
}

fn load(doc: &str) -> Result<Registry, agentx_core::registry::Error> {
    parse_auth_json(doc.as_bytes(), &|_| None)
}

/// The diagnostic of a refused document: its path, rule code and text (checked for leaks).
fn refused(doc: &str) -> (String, &'static str, String) {
    let e = load(doc).expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Registry, "{e}");
    let shown = format!("{e} {e:?}");
    assert!(!shown.contains(SENTINEL), "diagnostic leaks: {shown}");
    (
        e.path().expect("a path"),
        e.rule().expect("a rule").code(),
        e.to_string(),
    )
}

#[test]
fn context_window_at_its_edges_on_every_type() {
    assert_eq!(MIN_CONTEXT_WINDOW, 1_024);
    assert_eq!(MAX_CONTEXT_WINDOW, 10_000_000);
    for make in [scripted, openai, azure] {
        for ok in [1_024u64, 32_000, 10_000_000] {
            let reg = load(&registry(&[make(
                "p",
                &format!(r#","context_window":{ok}"#),
            )]))
            .unwrap_or_else(|e| panic!("{ok} accepted: {e}"));
            assert_eq!(reg.providers()[0].context_window(), Some(ok as u32));
        }
        let reg = load(&registry(&[make("p", "")])).expect("absent is fine");
        assert_eq!(reg.providers()[0].context_window(), None);
        for (bad, rule) in [
            ("1023", "out_of_range"),
            ("10000001", "out_of_range"),
            ("0", "out_of_range"),
            ("-1", "out_of_range"),
            ("18446744073709551616", "out_of_range"),
            ("2048.0", "wrong_type"),
            ("2e3", "wrong_type"),
            ("\"2048\"", "wrong_type"),
            ("null", "wrong_type"),
        ] {
            let doc = registry(&[
                scripted("a", ""),
                make("p", &format!(r#","context_window":{bad}"#)),
            ]);
            let (path, code, _) = refused(&doc);
            assert_eq!(path, "providers[1].context_window", "{bad}");
            assert_eq!(code, rule, "{bad}");
        }
    }
    let (_, _, text) = refused(&registry(&[scripted("a", r#","context_window":10000001"#)]));
    assert_eq!(
        text,
        "invalid registry: auth.json providers[0].context_window: must be an integer from 1024 to 10000000 (PROFILE §19)"
    );
}

#[test]
fn pricing_is_read_exactly() {
    let reg = load(&registry(&[
        openai("o", r#","pricing":{"input_per_mtok":2.5,"output_per_mtok":10,"cached_input_per_mtok":1.25}"#),
        azure("z", r#","pricing":{"input_per_mtok":0,"output_per_mtok":0}"#),
        scripted("s", ""),
    ]))
    .expect("valid");
    assert_eq!(
        reg.providers()[0].pricing(),
        Some(Pricing {
            input_per_mtok: 2.5,
            output_per_mtok: 10.0,
            cached_input_per_mtok: Some(1.25),
        })
    );
    assert_eq!(
        reg.providers()[1].pricing(),
        Some(Pricing {
            input_per_mtok: 0.0,
            output_per_mtok: 0.0,
            cached_input_per_mtok: None,
        })
    );
    assert_eq!(reg.providers()[2].pricing(), None);
    // The catalog never shows the declarations (WIRE-024's shape does not change).
    let doc = agentx_core::registry::discovery::discover(&reg, agentx_core::registry::Format::Json)
        .expect("discovery");
    let doc = String::from_utf8(doc).expect("utf-8");
    assert!(
        !doc.contains("pricing") && !doc.contains("per_mtok") && !doc.contains("context_window")
    );
}

#[test]
fn pricing_rules_name_the_path() {
    let o = |pricing: &str| {
        registry(&[
            scripted("a", ""),
            openai("o", &format!(r#","pricing":{pricing}"#)),
        ])
    };
    let cases: &[(&str, &str, &str)] = &[
        (
            r#"{"input_per_mtok":1,"output_per_mtok":2,"foo":3}"#,
            "providers[1].pricing.foo",
            "unknown_member",
        ),
        (
            r#"{"output_per_mtok":2}"#,
            "providers[1].pricing.input_per_mtok",
            "missing",
        ),
        (
            r#"{"input_per_mtok":1}"#,
            "providers[1].pricing.output_per_mtok",
            "missing",
        ),
        (
            r#"{"input_per_mtok":-0.5,"output_per_mtok":2}"#,
            "providers[1].pricing.input_per_mtok",
            "price",
        ),
        (
            r#"{"input_per_mtok":1,"output_per_mtok":1e999}"#,
            "providers[1].pricing.output_per_mtok",
            "price",
        ),
        (
            r#"{"input_per_mtok":1,"output_per_mtok":2,"cached_input_per_mtok":-1}"#,
            "providers[1].pricing.cached_input_per_mtok",
            "price",
        ),
        (
            r#"{"input_per_mtok":"1","output_per_mtok":2}"#,
            "providers[1].pricing.input_per_mtok",
            "wrong_type",
        ),
        (
            r#"{"input_per_mtok":1,"output_per_mtok":2,"cached_input_per_mtok":null}"#,
            "providers[1].pricing.cached_input_per_mtok",
            "wrong_type",
        ),
        ("[1,2]", "providers[1].pricing", "wrong_type"),
        ("null", "providers[1].pricing", "wrong_type"),
        // A member name that is not a plain identifier could be a pasted key: by position.
        (
            r#"{"input_per_mtok":1,"output_per_mtok":2,"SENTINEL-sk-1":3}"#,
            "providers[1].pricing",
            "unknown_member",
        ),
        (
            r#"{"input_per_mtok":1,"input_per_mtok":2,"output_per_mtok":2}"#,
            "(top level)",
            "duplicate_member",
        ),
    ];
    for (pricing, path, rule) in cases {
        let (got_path, got_rule, text) = refused(&o(pricing));
        assert_eq!(
            (got_path.as_str(), got_rule),
            (*path, *rule),
            "{pricing}: {text}"
        );
    }
    let (_, _, text) = refused(&o(r#"{"input_per_mtok":1,"output_per_mtok":2,"foo":3}"#));
    assert_eq!(
        text,
        "invalid registry: auth.json providers[1].pricing.foo: is not allowed here (closed object) (PROFILE §19)"
    );
    let (_, _, text) = refused(&o(r#"{"input_per_mtok":1,"output_per_mtok":-2}"#));
    assert_eq!(
        text,
        "invalid registry: auth.json providers[1].pricing.output_per_mtok: must be a finite number >= 0 (PROFILE §19)"
    );
    // `scripted` declares no prices.
    let (path, rule, text) = refused(&registry(&[scripted(
        "s",
        r#","pricing":{"input_per_mtok":1,"output_per_mtok":2}"#,
    )]));
    assert_eq!(
        (path.as_str(), rule),
        ("providers[0].pricing", "pricing_not_for_type")
    );
    assert_eq!(
        text,
        "invalid registry: auth.json providers[0].pricing: is declared only for openai and azure_openai providers (PROFILE §19)"
    );
}

#[test]
fn cost_formula_prices_cached_tokens_apart() {
    let p = Pricing {
        input_per_mtok: 2.0,
        output_per_mtok: 8.0,
        cached_input_per_mtok: Some(0.5),
    };
    // ((1000 − 400) × 2 + 400 × 0.5 + 50 × 8) / 1e6
    assert_eq!(
        p.cost(1000, 400, 50),
        (600.0 * 2.0 + 400.0 * 0.5 + 50.0 * 8.0) / 1e6
    );
    let uncached = Pricing {
        cached_input_per_mtok: None,
        ..p
    };
    // Without a cached price, cached tokens cost the input price.
    assert_eq!(
        uncached.cost(1000, 400, 50),
        (1000.0 * 2.0 + 50.0 * 8.0) / 1e6
    );
    assert_eq!(p.cost(0, 0, 0), 0.0);
}
