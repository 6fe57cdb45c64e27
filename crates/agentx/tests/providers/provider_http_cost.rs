//! PROFILE §19 cost and budget through the real `agentx` against the loopback Chat Completions
//! server: the operator's `pricing` prices every completed request (cached prompt tokens
//! apart), the result's `total_cost_usd` and `modelUsage[model].costUSD` are the exact sum,
//! a request without usage makes the total `null` (WIRE-012), `--max-budget-usd` triggers with
//! real prices, and `context_window`'s edges through `--list-providers`.

use std::process::{Command, Stdio};

use crate::provider_http_support;

use provider_http_support::agentx_home::*;
use provider_http_support::*;
use serde_json::{json, Value};

const INPUT: f64 = 2.5;
const OUTPUT: f64 = 10.0;
const CACHED: f64 = 1.25;

fn priced_auth(server: &Server, pricing: &str, extra: &str) -> String {
    format!(
        r#"{{"version":2,"providers":[{{"id":"oa","type":"openai","model":"gpt-x","api_key":"{KEY}","base_url":"{}","pricing":{pricing}{extra}}}]}}"#,
        server.base_url()
    )
}

fn pricing() -> String {
    format!(
        r#"{{"input_per_mtok":{INPUT},"output_per_mtok":{OUTPUT},"cached_input_per_mtok":{CACHED}}}"#
    )
}

/// PROFILE §19's formula, in the order the session adds the requests.
fn cost(prompt: u64, cached: u64, completion: u64, cached_price: f64) -> f64 {
    ((prompt - cached) as f64 * INPUT + cached as f64 * cached_price + completion as f64 * OUTPUT)
        / 1_000_000.0
}

/// The tool stream of the providers suite with another usage chunk.
fn tool_stream_with(call_id: &str, path: &str, usage: Vec<u8>) -> Vec<Vec<u8>> {
    let mut s = one_tool_stream(call_id, path);
    let at = s.len() - 2;
    s[at] = usage;
    s
}

/// An SDK-profile session (`--verbose`, stream-json in) with `prompts`, stdin closed after them.
fn sdk_session(home: &Home, extra: &[&str], prompts: &[&str]) -> (i32, Vec<Value>, String) {
    let args: Vec<&str> = std::iter::once("--verbose")
        .chain(extra.iter().copied())
        .collect();
    stream_session(home, &args, prompts)
}

#[test]
fn profile_19_pricing_with_cached_tokens_is_the_exact_sum() {
    let server = Server::start_in_thread(vec![
        Reply::Sse(tool_stream_with(
            "call_1",
            "notes.txt",
            usage_cached(1000, 400, 50),
        )),
        Reply::Sse(text_with_usage("done", usage_cached(1200, 1000, 30))),
    ]);
    let home = Home::new(&priced_auth(&server, &pricing(), ""));
    std::fs::write(home.cwd().join("notes.txt"), "x\n").unwrap();
    let run = one_shot(
        &home,
        "read it",
        &["--permission-mode", "bypassPermissions"],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let r = result(&run);
    assert_eq!(r["subtype"], "success");
    assert_eq!(r["num_turns"], 2);
    let expected = 0.0 + cost(1000, 400, 50, CACHED) + cost(1200, 1000, 30, CACHED);
    assert_eq!(r["total_cost_usd"].as_f64(), Some(expected), "{r}");
    assert_eq!(r["modelUsage"]["gpt-x"]["costUSD"].as_f64(), Some(expected));
    assert_eq!(r["usage"]["input_tokens"], 2200);
    assert_eq!(r["usage"]["output_tokens"], 80);
    assert_eq!(r["usage"]["cache_read_input_tokens"], 1400);
    assert_eq!(r["modelUsage"]["gpt-x"]["cacheReadInputTokens"], 1400);
    assert_eq!(server.requests().len(), 2);
    assert_no_private_material(&run, &home, &server);
}

#[test]
fn profile_19_cached_tokens_cost_the_input_price_without_a_cached_price() {
    let server = Server::start_in_thread(vec![Reply::Sse(text_with_usage(
        "hi",
        usage_cached(1000, 400, 50),
    ))]);
    let home = Home::new(&priced_auth(
        &server,
        &format!(r#"{{"input_per_mtok":{INPUT},"output_per_mtok":{OUTPUT}}}"#),
        "",
    ));
    let run = one_shot(&home, "hello", &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let expected = 0.0 + cost(1000, 400, 50, INPUT);
    assert_eq!(result(&run)["total_cost_usd"].as_f64(), Some(expected));
}

#[test]
fn profile_19_a_request_without_usage_makes_the_total_null() {
    // WIRE-012: the completed request reported no usage, so its cost is unknown.
    let no_usage = vec![
        delta(r#"{"role":"assistant","content":""}"#, "null"),
        delta(r#"{"content":"hi"}"#, "null"),
        delta("{}", r#""stop""#),
        done(),
    ];
    let server = Server::start_in_thread(vec![Reply::Sse(no_usage)]);
    let home = Home::new(&priced_auth(&server, &pricing(), ""));
    let run = one_shot(&home, "hello", &[]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let r = result(&run);
    assert_eq!(r["total_cost_usd"], Value::Null);
    assert_eq!(r["modelUsage"]["gpt-x"]["costUSD"], Value::Null);
}

#[test]
fn profile_19_budget_reached_with_real_prices() {
    // The first request costs (1000 × 2.5 + 100 × 10) / 1e6 = 0.0035 USD ≥ 0.003: its tool
    // runs and the turn ends error_max_budget_usd; the next turn makes no request.
    let server = Server::start_in_thread(vec![Reply::Sse(tool_stream_with(
        "call_1",
        "notes.txt",
        usage_cached(1000, 0, 100),
    ))]);
    let home = Home::new(&priced_auth(&server, &pricing(), ""));
    std::fs::write(home.cwd().join("notes.txt"), "x\n").unwrap();
    let (status, records, stderr) = sdk_session(
        &home,
        &[
            "--max-budget-usd",
            "0.003",
            "--permission-mode",
            "bypassPermissions",
        ],
        &["read it", "again"],
    );
    assert_eq!(status, 0, "{stderr}");
    let results = of_type(&records, "result");
    assert_eq!(results.len(), 2, "{records:?}");
    assert_eq!(results[0]["subtype"], "error_max_budget_usd");
    assert_eq!(results[0]["is_error"], true);
    assert_eq!(results[0]["errors"], json!(["budget reached: 0.003 USD"]));
    assert_eq!(results[0]["num_turns"], 1);
    assert_eq!(
        results[0]["total_cost_usd"].as_f64(),
        Some(0.0 + cost(1000, 0, 100, CACHED))
    );
    // The tool ran and its result was written before the result.
    let tool_results: Vec<&Value> = of_type(&records, "user")
        .into_iter()
        .filter(|u| u["message"]["content"][0]["type"] == "tool_result")
        .collect();
    assert_eq!(tool_results.len(), 1);
    assert_eq!(results[1]["subtype"], "error_max_budget_usd");
    assert_eq!(results[1]["num_turns"], 0);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn profile_19_context_window_edges_through_list_providers() {
    let server = Server::start_in_thread(vec![]);
    for (window, ok) in [
        ("1024", true),
        ("10000000", true),
        ("1023", false),
        ("10000001", false),
    ] {
        let home = Home::new(&priced_auth(
            &server,
            &pricing(),
            &format!(r#","context_window":{window}"#),
        ));
        let out = Command::new(agentx_test_support::bin("agentx"))
            .args(["--list-providers", "--output-format", "json"])
            .env("AGENTX_HOME", &home.0)
            .env("HOME", &home.0)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        );
        if ok {
            assert_eq!(out.status.code(), Some(0), "{window}: {stderr}");
            assert!(stdout.contains(r#""id":"oa""#), "{stdout}");
            assert!(!stdout.contains("context_window") && !stdout.contains("pricing"));
        } else {
            assert_eq!(out.status.code(), Some(1), "{window}");
            assert_eq!(stdout, "");
            assert_eq!(
                stderr,
                "agentx: invalid registry: auth.json providers[0].context_window: must be an integer from 1024 to 10000000 (PROFILE §19)\n",
                "{window}"
            );
        }
    }
    // An unknown pricing member, by its path.
    let home = Home::new(&priced_auth(
        &server,
        r#"{"input_per_mtok":1,"output_per_mtok":2,"foo":3}"#,
        "",
    ));
    let run = agentx(&home, &["-p", "hi"]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        "agentx: invalid registry: auth.json providers[0].pricing.foo: is not allowed here (closed object) (PROFILE §19)\n"
    );
}
