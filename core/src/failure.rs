//! What went wrong with one attempt, and what LiteLLM makes of it: whether it counts towards a
//! cooldown (`_is_cooldown_required`) and whether it may be retried (`_should_retry`).

use std::fmt;

/// How one attempt at one deployment failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Failure {
    /// The upstream answered with this HTTP status (expected ≥ 400).
    Status(u16),
    /// Connecting failed: refused, unreachable, or the TLS handshake failed.
    Connect,
    /// The connect timeout or the response timeout fired.
    Timeout,
    /// The upstream reset the connection or sent a malformed or truncated response.
    Protocol,
}

impl Failure {
    /// LiteLLM's `_is_cooldown_required`: 401, 404, 408, 429 and every 5xx count towards a
    /// cooldown; any other 4xx is the caller's fault, not the deployment's. A status outside
    /// 4xx (which should not reach here) counts, as LiteLLM's fallback does. Transport failures
    /// always count.
    pub fn counts_for_cooldown(self) -> bool {
        match self {
            Failure::Status(401 | 404 | 408 | 429) => true,
            Failure::Status(400..=499) => false,
            Failure::Status(_) => true,
            Failure::Connect | Failure::Timeout | Failure::Protocol => true,
        }
    }

    /// LiteLLM's `_should_retry`: 408, 409, 429 and every 5xx are transient, and so are the
    /// transport failures. 401 is *not* retryable here; the attempt plan retries it only when
    /// another deployment remains (see [`crate::Walk`]). Every other status is final.
    pub fn is_retryable(self) -> bool {
        match self {
            Failure::Status(408 | 409 | 429) => true,
            Failure::Status(status) => status >= 500,
            Failure::Connect | Failure::Timeout | Failure::Protocol => true,
        }
    }

    /// A stable, low-cardinality label for logs and metrics. Statuses the router treats
    /// specially, and the common gateway errors, get their own label; the rest fall into
    /// `status_4xx`, `status_5xx` or `status_other`.
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::Status(400) => "status_400",
            Failure::Status(401) => "status_401",
            Failure::Status(403) => "status_403",
            Failure::Status(404) => "status_404",
            Failure::Status(408) => "status_408",
            Failure::Status(409) => "status_409",
            Failure::Status(413) => "status_413",
            Failure::Status(422) => "status_422",
            Failure::Status(429) => "status_429",
            Failure::Status(400..=499) => "status_4xx",
            Failure::Status(500) => "status_500",
            Failure::Status(502) => "status_502",
            Failure::Status(503) => "status_503",
            Failure::Status(504) => "status_504",
            Failure::Status(500..=599) => "status_5xx",
            Failure::Status(_) => "status_other",
            Failure::Connect => "connect",
            Failure::Timeout => "timeout",
            Failure::Protocol => "protocol",
        }
    }
}

impl fmt::Display for Failure {
    /// The exact status (`status 418`), where [`Failure::as_str`] groups them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Status(status) => write!(f, "status {status}"),
            other => f.write_str(other.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cooldown_counts_auth_not_found_timeout_rate_limit_and_server_errors() {
        for status in [401, 404, 408, 429, 500, 502, 503, 504, 529, 599] {
            assert!(Failure::Status(status).counts_for_cooldown(), "{status}");
        }
        for status in [400, 402, 403, 409, 413, 422, 451, 499] {
            assert!(!Failure::Status(status).counts_for_cooldown(), "{status}");
        }
        for f in [Failure::Connect, Failure::Timeout, Failure::Protocol] {
            assert!(f.counts_for_cooldown());
        }
    }

    #[test]
    fn retryable_are_timeouts_conflicts_rate_limits_server_and_transport_errors() {
        for status in [408, 409, 429, 500, 503, 599] {
            assert!(Failure::Status(status).is_retryable(), "{status}");
        }
        for status in [400, 401, 403, 404, 413, 422] {
            assert!(!Failure::Status(status).is_retryable(), "{status}");
        }
        for f in [Failure::Connect, Failure::Timeout, Failure::Protocol] {
            assert!(f.is_retryable());
        }
    }

    #[test]
    fn labels_are_stable() {
        assert_eq!(Failure::Status(429).as_str(), "status_429");
        assert_eq!(Failure::Status(418).as_str(), "status_4xx");
        assert_eq!(Failure::Status(507).as_str(), "status_5xx");
        assert_eq!(Failure::Status(302).as_str(), "status_other");
        assert_eq!(Failure::Connect.as_str(), "connect");
        assert_eq!(Failure::Timeout.as_str(), "timeout");
        assert_eq!(Failure::Protocol.as_str(), "protocol");
        assert_eq!(Failure::Status(418).to_string(), "status 418");
        assert_eq!(Failure::Timeout.to_string(), "timeout");
    }
}
