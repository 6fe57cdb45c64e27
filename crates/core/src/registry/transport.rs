//! The transport rule of model endpoints (PROFILE §14): TLS is required except for loopback
//! hosts, so a key never crosses a network in clear.
//!
//! Owns: classifying an `endpoint` / `base_url` value by scheme and host. The registry refuses
//! a plain `http://` URL to a non-loopback host at load (naming the JSON path); the HTTP driver
//! refuses anything that is neither `https://` nor loopback `http://` before it connects.
//!
//! Must never: print or keep the URL (it is a private value of the credential union).

/// How a URL may be used as a model endpoint.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Transport {
    /// `https://…`.
    Tls,
    /// `http://127.0.0.1…`, `http://localhost…` or `http://[::1]…` (any port).
    LoopbackHttp,
    /// `http://` to any other host: refused (PROFILE §14).
    PlainHttp,
    /// Any other scheme, or no scheme at all.
    Unsupported,
}

impl Transport {
    /// Classifies `url` (scheme case-insensitive, as URLs are).
    pub fn of(url: &[u8]) -> Transport {
        if let Some(rest) = strip_scheme(url, b"https://") {
            return if rest.is_empty() {
                Transport::Unsupported
            } else {
                Transport::Tls
            };
        }
        let Some(rest) = strip_scheme(url, b"http://") else {
            return Transport::Unsupported;
        };
        let end = rest
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#'))
            .unwrap_or(rest.len());
        let authority = &rest[..end];
        // Userinfo would let `http://127.0.0.1@host/` look local; refuse it outright.
        if authority.contains(&b'@') {
            return Transport::PlainHttp;
        }
        let host = if authority.starts_with(b"[") {
            match authority.iter().position(|&b| b == b']') {
                Some(close) => (&authority[..=close], &authority[close + 1..]),
                None => return Transport::PlainHttp,
            }
        } else {
            match authority.iter().position(|&b| b == b':') {
                Some(colon) => (&authority[..colon], &authority[colon..]),
                None => (authority, &authority[authority.len()..]),
            }
        };
        let (host, port) = host;
        let port_ok = port.is_empty()
            || (port.len() > 1 && port[0] == b':' && port[1..].iter().all(u8::is_ascii_digit));
        let loopback =
            host == b"127.0.0.1" || host.eq_ignore_ascii_case(b"localhost") || host == b"[::1]";
        if loopback && port_ok {
            Transport::LoopbackHttp
        } else {
            Transport::PlainHttp
        }
    }
}

fn strip_scheme<'u>(url: &'u [u8], scheme: &[u8]) -> Option<&'u [u8]> {
    if url.len() >= scheme.len() && url[..scheme.len()].eq_ignore_ascii_case(scheme) {
        Some(&url[scheme.len()..])
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Transport;

    #[test]
    fn profile_14_loopback_hosts_only_for_plain_http() {
        for ok in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:11434/v1",
            "HTTP://LOCALHOST/",
            "http://[::1]:9/",
            "http://127.0.0.1",
            "http://localhost?x",
        ] {
            assert_eq!(
                Transport::of(ok.as_bytes()),
                Transport::LoopbackHttp,
                "{ok}"
            );
        }
        for bad in [
            "http://example.com/v1",
            "http://127.0.0.1.example.com/",
            "http://127.0.0.2/",
            "http://localhost.evil:80/",
            "http://127.0.0.1@evil.example/",
            "http://[::2]/",
            "http://[::1/",
            "http://127.0.0.1:/",
            "http://127.0.0.1:80x/",
            "http://",
        ] {
            assert_eq!(Transport::of(bad.as_bytes()), Transport::PlainHttp, "{bad}");
        }
        assert_eq!(Transport::of(b"https://api.openai.com/v1"), Transport::Tls);
        assert_eq!(Transport::of(b"HTTPS://x.invalid/"), Transport::Tls);
        for other in ["https://", "ftp://x/", "SENTINEL-e", "", "httpx://a"] {
            assert_eq!(
                Transport::of(other.as_bytes()),
                Transport::Unsupported,
                "{other}"
            );
        }
    }
}
