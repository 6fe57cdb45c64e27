//! PROFILE §14 "Redirects are not followed" through the real `agentx` binary: a provider
//! whose server answers 301, 302, 303, 307 or 308 fails the request (`invalid_request`, no
//! retry), and the key header (`Authorization` for `openai`, `api-key` for `azure_openai`)
//! reaches only the configured URL. The redirect points at a trap that records any request
//! it gets (and would answer it with a normal stream): once on the same origin (`/trap` on the
//! provider's own server, where a client keeps every header) and once on another origin (a
//! second server, where reqwest strips `Authorization` but knows nothing of `api-key`).

use crate::provider_http_support;

use provider_http_support::agentx_home::*;
use provider_http_support::*;

const REDIRECTS: [u16; 5] = [301, 302, 303, 307, 308];

#[derive(Clone, Copy, Debug)]
enum Provider {
    OpenAi,
    Azure,
}

impl Provider {
    fn auth(self, server: &Server) -> String {
        match self {
            Provider::OpenAi => openai_auth(server),
            Provider::Azure => azure_auth(server),
        }
    }

    /// The request target of the configured URL.
    fn target(self) -> String {
        match self {
            Provider::OpenAi => "/v1/chat/completions".to_string(),
            Provider::Azure => format!(
                "/openai/deployments/{DEPLOYMENT}/chat/completions?api-version={API_VERSION}"
            ),
        }
    }

    /// The key header and its value on the configured request.
    fn key_header(self) -> (&'static str, String) {
        match self {
            Provider::OpenAi => ("authorization", format!("Bearer {KEY}")),
            Provider::Azure => ("api-key", KEY.to_string()),
        }
    }
}

/// Any header of any request that carries the key.
fn key_carriers(requests: &[Request]) -> Vec<String> {
    requests
        .iter()
        .flat_map(|r| {
            r.headers
                .iter()
                .filter(|(_, v)| v.contains(KEY))
                .map(move |(n, _)| format!("{} {}: {n}", r.method, r.target))
        })
        .collect()
}

fn assert_redirect_refused(provider: Provider, code: u16, cross_origin: bool) {
    let what = format!("{provider:?} {code} cross_origin={cross_origin}");
    let trap = Server::start_in_thread(vec![Reply::Sse(text_stream())]);
    let location = if cross_origin {
        format!("http://127.0.0.1:{}/trap", trap.port)
    } else {
        "/trap".to_string()
    };
    let server = Server::start_in_thread(vec![
        status(code, &[("location", &location)], r#"{"moved":true}"#),
        // What the same-origin trap would be answered with if the redirect were followed.
        Reply::Sse(text_stream()),
    ]);
    let home = Home::new(&provider.auth(&server));
    let run = one_shot(&home, "hello", &[]);

    // The key reached the configured URL exactly once, and nothing else was requested.
    let reqs = server.requests();
    let targets: Vec<&str> = reqs.iter().map(|r| r.target.as_str()).collect();
    assert_eq!(targets, [provider.target().as_str()], "{what}");
    let (name, value) = provider.key_header();
    assert_eq!(reqs[0].header(name), Some(value.as_str()), "{what}");
    assert_eq!(key_carriers(&reqs).len(), 1, "{what}");
    assert!(trap.requests().is_empty(), "{what}: the trap was reached");

    // The 3xx is a failure of the request: `invalid_request`, no retry, no WARN line.
    assert_eq!(run.status, 1, "{what}: {}", run.stdout);
    assert_eq!(run.stderr, "", "{what}");
    let assistants = of_type(&run.records, "assistant");
    assert_eq!(assistants.len(), 1, "{what}: {}", run.stdout);
    assert_eq!(assistants[0]["error"], "invalid_request", "{what}");
    let r = result(&run);
    assert_eq!(r["subtype"], "error_during_execution", "{what}");
    assert_eq!(r["is_error"], true, "{what}");
    assert_eq!(r["num_turns"], 1, "{what}");
    assert_no_private_material(&run, &home, &server);
    assert!(
        !run.stdout.contains(&location),
        "{what}: the location was echoed"
    );
}

#[test]
fn profile_14_openai_redirects_are_not_followed_same_origin() {
    for code in REDIRECTS {
        assert_redirect_refused(Provider::OpenAi, code, false);
    }
}

#[test]
fn profile_14_openai_redirects_are_not_followed_cross_origin() {
    for code in REDIRECTS {
        assert_redirect_refused(Provider::OpenAi, code, true);
    }
}

#[test]
fn profile_14_azure_redirects_are_not_followed_same_origin() {
    for code in REDIRECTS {
        assert_redirect_refused(Provider::Azure, code, false);
    }
}

/// An `azure_openai` server answering 302 to another location got the
/// `api-key` header sent there.
#[test]
fn profile_14_azure_redirects_are_not_followed_cross_origin() {
    for code in REDIRECTS {
        assert_redirect_refused(Provider::Azure, code, true);
    }
}
