//! Where a request goes and how it authenticates (PROFILE §14), from the provider's private
//! route: the URL and the authentication headers. Pure.
//!
//! Owns: the URL joining rules (`{base_url}/chat/completions`, exactly one `/`, default
//! `https://api.openai.com/v1`; `{endpoint}openai/deployments/{deployment}/chat/completions
//! ?api-version={api_version}`), the header set (`Authorization: Bearer` + optional
//! `OpenAI-Organization`, or `api-key` and no `Authorization`), and the transport rule (TLS
//! except to loopback hosts).
//!
//! Must never: show a URL or a header value in `Debug`, `Display` or an error: they are all
//! private values of the credential union.

use std::fmt;

use agentx_core::registry::{Provider, Route, Secret, Transport};

/// The default `base_url` of an `openai` provider.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// A resolved model endpoint: the request URL and the authentication headers.
#[derive(Clone)]
pub struct Endpoint {
    url: String,
    headers: Vec<(&'static str, Vec<u8>)>,
}

/// Why a provider cannot be used as an HTTP endpoint. Names fields, never values.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EndpointError {
    /// The provider is `scripted`: no HTTP endpoint.
    NotHttp,
    /// `field` is neither `https://` nor loopback `http://` (PROFILE §14).
    Transport {
        /// The registry field.
        field: &'static str,
    },
    /// `field` holds bytes that cannot appear in a URL or header (not UTF-8, or controls).
    Unusable {
        /// The registry field.
        field: &'static str,
    },
}

impl fmt::Display for EndpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndpointError::NotHttp => f.write_str("the provider has no HTTP endpoint"),
            EndpointError::Transport { field } => write!(
                f,
                "{field} must be an https:// URL (plain http:// only to 127.0.0.1, localhost \
                 or [::1]) (PROFILE §14)"
            ),
            EndpointError::Unusable { field } => {
                write!(f, "{field} holds characters that cannot be sent over HTTP")
            }
        }
    }
}

impl std::error::Error for EndpointError {}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| *n).collect();
        f.debug_struct("Endpoint")
            .field("headers", &names)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// The endpoint of an `openai` or `azure_openai` provider.
    pub fn of(provider: &Provider) -> Result<Endpoint, EndpointError> {
        match provider.route() {
            Route::OpenAi {
                base_url,
                key,
                organization,
            } => {
                let base = match base_url {
                    Some(b) => text(b, "base_url")?,
                    None => OPENAI_DEFAULT_BASE_URL,
                };
                check_transport(base, "base_url")?;
                let url = format!("{}/chat/completions", base.trim_end_matches('/'));
                let mut bearer = b"Bearer ".to_vec();
                bearer.extend_from_slice(header_value(key.key(), "api_key")?);
                let mut headers = vec![("authorization", bearer)];
                if let Some(org) = organization {
                    let v = header_value(org, "organization")?;
                    headers.push(("openai-organization", v.to_vec()));
                }
                Ok(Endpoint { url, headers })
            }
            Route::AzureOpenAi {
                endpoint,
                deployment,
                api_version,
                key,
            } => {
                let base = text(endpoint, "endpoint")?;
                check_transport(base, "endpoint")?;
                let mut url = base.trim_end_matches('/').to_string();
                url.push_str("/openai/deployments/");
                push_component(&mut url, text(deployment, "deployment")?);
                url.push_str("/chat/completions?api-version=");
                push_component(&mut url, text(api_version, "api_version")?);
                let headers = vec![("api-key", header_value(key.key(), "api_key")?.to_vec())];
                Ok(Endpoint { url, headers })
            }
            Route::Scripted { .. } => Err(EndpointError::NotHttp),
        }
    }

    /// An endpoint from parts (tests and tools). `url` must pass the transport rule.
    pub fn from_parts(
        url: &str,
        headers: Vec<(&'static str, Vec<u8>)>,
    ) -> Result<Endpoint, EndpointError> {
        check_transport(url, "url")?;
        Ok(Endpoint {
            url: url.to_string(),
            headers,
        })
    }

    /// The request URL. Private: never print it.
    pub fn expose_url(&self) -> &str {
        &self.url
    }

    /// The authentication headers (lower-case names). Private: never print the values.
    pub fn expose_headers(&self) -> &[(&'static str, Vec<u8>)] {
        &self.headers
    }

    /// Every private value this endpoint sends (URL, header values), to recognise them.
    pub fn private_values(&self) -> impl Iterator<Item = &[u8]> {
        std::iter::once(self.url.as_bytes()).chain(self.headers.iter().map(|(_, v)| &v[..]))
    }
}

fn text<'s>(s: &'s Secret, field: &'static str) -> Result<&'s str, EndpointError> {
    s.expose_str()
        .filter(|t| !t.bytes().any(|b| b.is_ascii_control()))
        .ok_or(EndpointError::Unusable { field })
}

fn check_transport(url: &str, field: &'static str) -> Result<(), EndpointError> {
    match Transport::of(url.as_bytes()) {
        Transport::Tls | Transport::LoopbackHttp => Ok(()),
        Transport::PlainHttp | Transport::Unsupported => Err(EndpointError::Transport { field }),
    }
}

/// A header value must be visible ASCII or spaces/tabs (RFC 9110 field-value, no obs-text).
fn header_value<'s>(s: &'s Secret, field: &'static str) -> Result<&'s [u8], EndpointError> {
    let v = s.expose();
    if v.is_empty()
        || v.iter()
            .any(|&b| !(b == b' ' || b == b'\t' || (0x21..0x7f).contains(&b)))
    {
        return Err(EndpointError::Unusable { field });
    }
    Ok(v)
}

/// Percent-encodes everything outside RFC 3986 unreserved characters.
fn push_component(url: &mut String, part: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for b in part.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            url.push(b as char);
        } else {
            url.push('%');
            url.push(HEX[(b >> 4) as usize] as char);
            url.push(HEX[(b & 15) as usize] as char);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentx_core::registry::parse_auth_json;

    fn provider(json: &str) -> Provider {
        let doc = format!(r#"{{"version":2,"providers":[{json}]}}"#);
        let registry = parse_auth_json(doc.as_bytes(), &|name| {
            (name == "KEY_VAR").then(|| "sk-from-env".into())
        })
        .unwrap();
        registry.providers()[0].clone()
    }

    #[test]
    fn profile_14_openai_url_joins_with_exactly_one_slash() {
        for (base, want) in [
            (None, "https://api.openai.com/v1/chat/completions"),
            (
                Some("https://h.invalid/v1"),
                "https://h.invalid/v1/chat/completions",
            ),
            (
                Some("https://h.invalid/v1/"),
                "https://h.invalid/v1/chat/completions",
            ),
            (
                Some("http://127.0.0.1:8/v1//"),
                "http://127.0.0.1:8/v1/chat/completions",
            ),
        ] {
            let base = base
                .map(|b| format!(r#","base_url":"{b}""#))
                .unwrap_or_default();
            let p = provider(&format!(
                r#"{{"id":"o","type":"openai","model":"m","api_key":"sk-1"{base}}}"#
            ));
            assert_eq!(Endpoint::of(&p).unwrap().expose_url(), want);
        }
    }

    #[test]
    fn profile_14_openai_headers_bearer_and_organization() {
        let p = provider(
            r#"{"id":"o","type":"openai","model":"m","api_key_env":"KEY_VAR","organization":"org-9"}"#,
        );
        let e = Endpoint::of(&p).unwrap();
        assert_eq!(
            e.expose_headers(),
            &[
                ("authorization", b"Bearer sk-from-env".to_vec()),
                ("openai-organization", b"org-9".to_vec())
            ]
        );
        let p = provider(r#"{"id":"o","type":"openai","model":"m","api_key":"sk-1"}"#);
        assert_eq!(
            Endpoint::of(&p).unwrap().expose_headers(),
            &[("authorization", b"Bearer sk-1".to_vec())]
        );
    }

    #[test]
    fn profile_14_azure_url_and_api_key_header() {
        for endpoint in ["https://sol.invalid/", "https://sol.invalid"] {
            let p = provider(&format!(
                r#"{{"id":"a","type":"azure_openai","model":"m","endpoint":"{endpoint}","deployment":"dep 7","api_version":"2026-10-01-preview","api_key":"k-az"}}"#
            ));
            let e = Endpoint::of(&p).unwrap();
            assert_eq!(
                e.expose_url(),
                "https://sol.invalid/openai/deployments/dep%207/chat/completions?api-version=2026-10-01-preview"
            );
            assert_eq!(e.expose_headers(), &[("api-key", b"k-az".to_vec())]);
        }
    }

    #[test]
    fn profile_14_transport_rule_and_debug_hides_values() {
        let p = provider(
            r#"{"id":"o","type":"openai","model":"m","api_key":"sk-1","base_url":"SENTINEL-b"}"#,
        );
        let err = Endpoint::of(&p).unwrap_err();
        assert_eq!(err, EndpointError::Transport { field: "base_url" });
        assert!(!err.to_string().contains("SENTINEL"));
        let p = provider(r#"{"id":"o","type":"openai","model":"m","api_key":"sk-1"}"#);
        let shown = format!("{:?}", Endpoint::of(&p).unwrap());
        assert!(
            !shown.contains("sk-1") && !shown.contains("openai.com"),
            "{shown}"
        );
        let p = provider(r#"{"id":"s","type":"scripted","model":"m"}"#);
        assert_eq!(Endpoint::of(&p).unwrap_err(), EndpointError::NotHttp);
    }

    #[test]
    fn a_key_that_cannot_be_a_header_is_refused_by_field_name() {
        let p = provider(r#"{"id":"o","type":"openai","model":"m","api_key":"sk\u0001x"}"#);
        assert_eq!(
            Endpoint::of(&p).unwrap_err(),
            EndpointError::Unusable { field: "api_key" }
        );
    }
}
