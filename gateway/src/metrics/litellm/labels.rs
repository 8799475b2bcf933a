//! LiteLLM's label values — who called ([`Who`]) and which deployment answered ([`Where`]) —
//! filled as LiteLLM 1.110's Prometheus integration fills them, and its error names.

use std::sync::Arc;

use pointwork_core::{DeploymentIdx, Failure};

use crate::keys::VirtualKey;
use crate::routes::Routes;

/// What LiteLLM writes for a label it has no value for (Python's `None`).
pub(super) const NONE: &str = "None";
/// The `requested_model` of a request for a name the router does not know (LiteLLM bounds
/// the label's values the same way).
pub(super) const OTHER_MODEL: &str = "other";
/// LiteLLM's `hashed_api_key` for the master key: it never labels with the master key or its
/// hash.
const MASTER_KEY: &str = "litellm_proxy_master_key";
/// The user LiteLLM books the master key's requests to.
const MASTER_USER: &str = "default_user_id";

/// The caller as LiteLLM's key labels name it. Never the key: `hashed_api_key` is its SHA-256
/// in hex (what LiteLLM's database stores), or LiteLLM's stand-in for the master key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Who {
    pub hashed_api_key: Option<Arc<str>>,
    pub api_key_alias: Option<Arc<str>>,
    pub team: Option<Arc<str>>,
    pub team_alias: Option<Arc<str>>,
    pub user: Option<Arc<str>>,
}

impl Who {
    pub(super) fn master() -> Who {
        Who { hashed_api_key: Some(MASTER_KEY.into()), user: Some(MASTER_USER.into()), ..Who::default() }
    }

    /// A virtual key: a config key by its digest and name; a database key by its row (alias,
    /// team, user).
    pub(super) fn of_key(key: &VirtualKey) -> Who {
        let text = |s: &Option<String>| s.as_deref().map(Arc::from);
        match &key.db {
            Some(entry) => {
                let row = &entry.record;
                let team = row.team.as_ref();
                Who {
                    hashed_api_key: Some(row.token.as_str().into()),
                    api_key_alias: text(&row.key_alias),
                    team: team.map(|t| t.team_id.as_str().into()),
                    team_alias: team.and_then(|t| text(&t.team_alias)),
                    user: text(&row.user_id),
                }
            }
            None => Who {
                hashed_api_key: Some(key.digest_hex().into()),
                api_key_alias: Some(key.name.as_str().into()),
                ..Who::default()
            },
        }
    }
}

/// A deployment as LiteLLM's deployment labels name it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Where {
    pub model_group: Arc<str>,
    /// `model` / `litellm_model_name`: the model sent upstream, without the provider prefix.
    pub model: Arc<str>,
    pub model_id: Arc<str>,
    pub api_base: Arc<str>,
    pub api_provider: &'static str,
}

impl Where {
    pub(super) fn of(routes: &Routes, idx: DeploymentIdx) -> Where {
        let snap = &routes.snapshot;
        let d = snap.deployment(idx);
        Where {
            model_group: snap.group(snap.group_of(idx)).name.as_str().into(),
            model: d.upstream_model.as_str().into(),
            model_id: d.id.as_str().into(),
            api_base: without_credentials(&d.api_base).into(),
            api_provider: d.provider.prefix(),
        }
    }
}

/// An `api_base` without what may carry a credential: user info and the query.
pub(super) fn without_credentials(url: &str) -> String {
    let url = url.split_once('?').map_or(url, |(u, _)| u);
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host_end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(host_end);
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

/// LiteLLM's `exception_status` of a failed attempt: the status, or that of the exception
/// LiteLLM raises for a transport failure (`Timeout` 408, `APIConnectionError` 500).
pub(super) fn exception_status(failure: Failure) -> u16 {
    match failure {
        Failure::Status(status) => status,
        Failure::Timeout => 408,
        Failure::Connect | Failure::Protocol => 500,
    }
}

/// The class of the exception LiteLLM maps a provider's failure to.
pub(super) fn exception_class(failure: Failure) -> &'static str {
    match failure {
        Failure::Timeout => "Timeout",
        Failure::Connect | Failure::Protocol => "APIConnectionError",
        Failure::Status(status) => class_of_status(status),
    }
}

fn class_of_status(status: u16) -> &'static str {
    match status {
        401 => "AuthenticationError",
        403 => "PermissionDeniedError",
        404 => "NotFoundError",
        408 | 504 => "Timeout",
        422 => "UnprocessableEntityError",
        429 => "RateLimitError",
        500 => "InternalServerError",
        502 => "BadGatewayError",
        503 => "ServiceUnavailableError",
        // 400 and every other 4xx.
        400..=499 => "BadRequestError",
        _ => "APIError",
    }
}

/// `exception_class` as LiteLLM prints a provider's error: the provider capitalised, a dot,
/// the class (`Openai.RateLimitError`).
pub(super) fn provider_class(provider: &str, failure: Failure) -> String {
    let mut chars = provider.chars();
    let first = chars.next().map(|c| c.to_ascii_uppercase().to_string()).unwrap_or_default();
    format!("{first}{}.{}", chars.as_str(), exception_class(failure))
}

/// `exception_class` of a request the gateway refused itself (no deployment answered): the
/// proxy's own exceptions, as LiteLLM names them.
pub(super) fn refusal_class(status: u16) -> &'static str {
    match status {
        429 => "HTTPException",
        401 | 403 => "ProxyException",
        _ => class_of_status(status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_bases_lose_user_info_and_query() {
        assert_eq!(without_credentials("https://u:p@h.example:8443/v1?key=s"), "https://h.example:8443/v1");
        assert_eq!(without_credentials("http://127.0.0.1:9/v1"), "http://127.0.0.1:9/v1");
        assert_eq!(without_credentials("https://h.example"), "https://h.example");
    }

    #[test]
    fn failures_take_litellm_exception_names() {
        assert_eq!(provider_class("openai", Failure::Status(429)), "Openai.RateLimitError");
        assert_eq!(provider_class("azure_ai", Failure::Status(500)), "Azure_ai.InternalServerError");
        assert_eq!(provider_class("anthropic", Failure::Timeout), "Anthropic.Timeout");
        assert_eq!(
            (exception_status(Failure::Connect), exception_class(Failure::Connect)),
            (500, "APIConnectionError")
        );
        assert_eq!(exception_class(Failure::Status(418)), "BadRequestError");
        assert_eq!(refusal_class(429), "HTTPException");
    }
}
