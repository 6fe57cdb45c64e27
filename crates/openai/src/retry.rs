//! The retry policy and failure categories of PROFILE §14. Pure: the caller passes the
//! failure, the attempt number and `now`.
//!
//! Owns: which failures before the first response-body byte are retried (connection
//! failures, 408, 429, 5xx), at most [`MAX_RETRIES`] times; the wait (`Retry-After` in
//! seconds or as an HTTP date, capped at 30 s, else 500 ms × 2^(N−1)); the stderr line
//! `agentx: WARN provider retry N/3: <what>`; the category a failure ends the turn with.
//!
//! Must never: sleep, read a clock, or put a provider's text in a WARN line (only a decimal
//! status or one of the fixed connection words).

use std::time::{Duration, SystemTime};

use agentx_wire::wire::output::AssistantError;

/// Retries after the first attempt, at most.
pub const MAX_RETRIES: u32 = 3;
/// The cap on a `Retry-After` wait.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);
/// The first backoff wait (then doubled per retry).
pub const BASE_BACKOFF: Duration = Duration::from_millis(500);

/// How a connection attempt failed before any response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connection {
    /// Nothing listens on the port.
    Refused,
    /// The connection was reset.
    Reset,
    /// Connecting or reading timed out.
    Timeout,
    /// The TLS handshake failed.
    Tls,
    /// Any other connection failure.
    Failed,
}

impl Connection {
    /// The WARN line's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Connection::Refused => "connection refused",
            Connection::Reset => "connection reset",
            Connection::Timeout => "timeout",
            Connection::Tls => "tls error",
            Connection::Failed => "connection failed",
        }
    }
}

/// A failure before the first response-body byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Opening {
    /// A non-success status, with its `Retry-After` header value if any.
    Status {
        /// The HTTP status.
        status: u16,
        /// The `Retry-After` header's raw value.
        retry_after: Option<Vec<u8>>,
    },
    /// The connection failed.
    Connection(Connection),
}

/// What to do after a failed attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Write `warn` to stderr, wait `wait`, try again.
    Retry {
        /// How long to wait.
        wait: Duration,
        /// The WARN line.
        warn: String,
    },
    /// End the turn with this category.
    GiveUp(AssistantError),
}

/// The decision after attempt `retries_done + 1` failed with `failure` (`retries_done` retries
/// already made) at `now`.
pub fn decide(failure: &Opening, retries_done: u32, now: SystemTime) -> Decision {
    let retryable = match failure {
        Opening::Connection(_) => true,
        Opening::Status { status, .. } => matches!(status, 408 | 429 | 500..=599),
    };
    if !retryable || retries_done >= MAX_RETRIES {
        return Decision::GiveUp(category(failure));
    }
    let n = retries_done + 1;
    let backoff = BASE_BACKOFF * (1 << (n - 1));
    let (wait, what) = match failure {
        Opening::Status {
            status,
            retry_after,
        } => (
            retry_after
                .as_deref()
                .and_then(|v| retry_after_wait(v, now))
                .unwrap_or(backoff),
            status.to_string(),
        ),
        Opening::Connection(c) => (backoff, c.as_str().to_string()),
    };
    Decision::Retry {
        wait,
        warn: format!("agentx: WARN provider retry {n}/{MAX_RETRIES}: {what}"),
    }
}

/// The category a failure ends the turn with (after retries, PROFILE §14).
pub fn category(failure: &Opening) -> AssistantError {
    match failure {
        Opening::Status { status, .. } => status_category(*status),
        Opening::Connection(_) => AssistantError::Unknown,
    }
}

/// 401/403 `authentication_failed`, 402 `billing_error`, 429 `rate_limit`,
/// 400/404/413/422 `invalid_request`, 5xx `server_error`, anything else (408 too) `unknown`.
/// A redirect (301/302/303/307/308) is never followed (PROFILE §14): `invalid_request`.
pub fn status_category(status: u16) -> AssistantError {
    match status {
        401 | 403 => AssistantError::AuthenticationFailed,
        402 => AssistantError::BillingError,
        429 => AssistantError::RateLimit,
        400 | 404 | 413 | 422 => AssistantError::InvalidRequest,
        301 | 302 | 303 | 307 | 308 => AssistantError::InvalidRequest,
        500..=599 => AssistantError::ServerError,
        _ => AssistantError::Unknown,
    }
}

/// The wait a `Retry-After` value asks for at `now`, capped at [`MAX_RETRY_AFTER`]; `None`
/// when it is neither delay-seconds nor an HTTP date (then the backoff applies).
pub fn retry_after_wait(value: &[u8], now: SystemTime) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?.trim();
    let wait = if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // Any number of digits: a huge value is simply capped.
        let secs = text.parse::<u64>().unwrap_or(u64::MAX);
        Duration::from_secs(secs.min(MAX_RETRY_AFTER.as_secs() + 1))
    } else {
        let at = httpdate::parse_http_date(text).ok()?;
        at.duration_since(now).unwrap_or(Duration::ZERO)
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(s: u16, retry_after: Option<&str>) -> Opening {
        Opening::Status {
            status: s,
            retry_after: retry_after.map(|v| v.as_bytes().to_vec()),
        }
    }

    fn retry(wait_ms: u64, line: &str) -> Decision {
        Decision::Retry {
            wait: Duration::from_millis(wait_ms),
            warn: line.to_string(),
        }
    }

    #[test]
    fn profile_14_three_retries_with_doubling_backoff_then_the_category() {
        let now = SystemTime::UNIX_EPOCH;
        let f = status(503, None);
        assert_eq!(
            decide(&f, 0, now),
            retry(500, "agentx: WARN provider retry 1/3: 503")
        );
        assert_eq!(
            decide(&f, 1, now),
            retry(1000, "agentx: WARN provider retry 2/3: 503")
        );
        assert_eq!(
            decide(&f, 2, now),
            retry(2000, "agentx: WARN provider retry 3/3: 503")
        );
        assert_eq!(
            decide(&f, 3, now),
            Decision::GiveUp(AssistantError::ServerError)
        );
        let c = Opening::Connection(Connection::Refused);
        assert_eq!(
            decide(&c, 0, now),
            retry(500, "agentx: WARN provider retry 1/3: connection refused")
        );
        assert_eq!(
            decide(&c, 3, now),
            Decision::GiveUp(AssistantError::Unknown)
        );
        for (conn, word) in [
            (Connection::Reset, "connection reset"),
            (Connection::Timeout, "timeout"),
            (Connection::Tls, "tls error"),
            (Connection::Failed, "connection failed"),
        ] {
            assert_eq!(
                decide(&Opening::Connection(conn), 1, now),
                retry(1000, &format!("agentx: WARN provider retry 2/3: {word}"))
            );
        }
    }

    #[test]
    fn profile_14_retryable_statuses_and_categories() {
        let now = SystemTime::UNIX_EPOCH;
        for s in [408, 429, 500, 502, 503, 504, 599] {
            assert!(
                matches!(decide(&status(s, None), 0, now), Decision::Retry { .. }),
                "{s}"
            );
        }
        for (s, cat) in [
            (400, AssistantError::InvalidRequest),
            (401, AssistantError::AuthenticationFailed),
            (402, AssistantError::BillingError),
            (403, AssistantError::AuthenticationFailed),
            (404, AssistantError::InvalidRequest),
            (409, AssistantError::Unknown),
            (413, AssistantError::InvalidRequest),
            (422, AssistantError::InvalidRequest),
            (418, AssistantError::Unknown),
            // PROFILE §14: a redirect is a failure of the request, never followed nor retried.
            (301, AssistantError::InvalidRequest),
            (302, AssistantError::InvalidRequest),
            (303, AssistantError::InvalidRequest),
            (307, AssistantError::InvalidRequest),
            (308, AssistantError::InvalidRequest),
            (304, AssistantError::Unknown),
        ] {
            assert_eq!(
                decide(&status(s, None), 0, now),
                Decision::GiveUp(cat),
                "{s}"
            );
        }
        assert_eq!(
            decide(&status(429, None), 3, now),
            Decision::GiveUp(AssistantError::RateLimit)
        );
        assert_eq!(
            decide(&status(408, None), 3, now),
            Decision::GiveUp(AssistantError::Unknown)
        );
    }

    #[test]
    fn profile_14_retry_after_seconds_date_and_cap_at_the_edge() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let wait = |v: &str| retry_after_wait(v.as_bytes(), now);
        assert_eq!(wait("0"), Some(Duration::ZERO));
        assert_eq!(wait("2"), Some(Duration::from_secs(2)));
        assert_eq!(wait(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(wait("30"), Some(MAX_RETRY_AFTER));
        assert_eq!(wait("31"), Some(MAX_RETRY_AFTER));
        assert_eq!(wait("99999999999999999999999"), Some(MAX_RETRY_AFTER));
        assert_eq!(
            wait("Sun, 06 Nov 1994 08:49:40 GMT"),
            Some(Duration::from_secs(3))
        );
        assert_eq!(
            wait("Sunday, 06-Nov-94 08:50:07 GMT"),
            Some(MAX_RETRY_AFTER)
        );
        assert_eq!(wait("Sun Nov  6 08:49:37 1994"), Some(Duration::ZERO));
        assert_eq!(wait("Sun, 06 Nov 1994 08:49:00 GMT"), Some(Duration::ZERO));
        for bad in ["", "-1", "1.5", "soon", "\u{ff}"] {
            assert_eq!(wait(bad), None, "{bad:?}");
        }
        // Honoured in the decision; a bad value falls back to the backoff.
        assert_eq!(
            decide(&status(429, Some("3")), 1, now),
            retry(3000, "agentx: WARN provider retry 2/3: 429")
        );
        assert_eq!(
            decide(&status(429, Some("later")), 1, now),
            retry(1000, "agentx: WARN provider retry 2/3: 429")
        );
    }
}
