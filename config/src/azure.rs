//! Azure OpenAI deployments (`azure/<deployment>`) and Azure AI Foundry's (`azure_ai/<model>`),
//! read as LiteLLM reads them: the resource endpoint `api_base` (else `AZURE_API_BASE` /
//! `AZURE_AI_API_BASE`), `api_version` (else `AZURE_API_VERSION`, else LiteLLM's default; Azure
//! AI sends one only when given), and the credential, the first of: `api_key` (else
//! `AZURE_OPENAI_API_KEY`, else `AZURE_API_KEY`; Azure AI: `AZURE_AI_API_KEY`); `azure_ad_token`
//! (else `AZURE_AD_TOKEN`), a Microsoft Entra ID bearer token; Entra ID client credentials
//! (`tenant_id`, `client_id`, `client_secret`, else `AZURE_TENANT_ID`, `AZURE_CLIENT_ID`,
//! `AZURE_CLIENT_SECRET`; `azure_scope` and `AZURE_AUTHORITY_HOST` optional), whose token the
//! gateway fetches and refreshes itself.

use pointwork_core::upstream_auth::{EntraClient, AZURE_COGNITIVE_SCOPE, ENTRA_AUTHORITY_HOST};
use pointwork_core::{Deployment, Provider, UpstreamAuth};

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;

/// LiteLLM 1.110.2's `AZURE_DEFAULT_API_VERSION`.
pub const DEFAULT_API_VERSION: &str = "2025-02-01-preview";

/// What an entry may say that only Azure reads.
pub(crate) struct AzureParams {
    api_version: Option<(String, KeyPath)>,
    azure_ad_token: Option<String>,
    /// Entra ID client credentials: `tenant_id`, `client_id`, `client_secret`, each with its path.
    client_credentials: [Option<(String, KeyPath)>; 3],
    azure_scope: Option<(String, KeyPath)>,
}

const CLIENT_CREDENTIAL_KEYS: [&str; 3] = ["tenant_id", "client_id", "client_secret"];
const CLIENT_CREDENTIAL_ENV: [&str; 3] = ["AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET"];

/// Takes the Azure keys from any entry (so that they are never reported as unknown).
pub(crate) fn read_azure_params(c: &mut Checker, p: &mut Fields) -> AzureParams {
    let api_version_path = p.path.key("api_version");
    let api_version = c.optional(p, "api_version", &kinds::NON_EMPTY_STRING).map(|v| (v, api_version_path));
    let azure_ad_token = c.optional(p, "azure_ad_token", &kinds::SECRET);
    let client_credentials = CLIENT_CREDENTIAL_KEYS.map(|key| {
        let path = p.path.key(key);
        let kind = if key == "client_secret" { &kinds::SECRET } else { &kinds::NON_EMPTY_STRING };
        c.optional(p, key, kind).map(|v| (v, path))
    });
    let scope_path = p.path.key("azure_scope");
    let azure_scope = c.optional(p, "azure_scope", &kinds::NON_EMPTY_STRING).map(|v| (v, scope_path));
    AzureParams { api_version, azure_ad_token, client_credentials, azure_scope }
}

fn is_azure(provider: Provider) -> bool {
    matches!(provider, Provider::Azure | Provider::AzureAi)
}

/// The resource endpoint of an Azure deployment: `api_base` as written, else `AZURE_API_BASE`;
/// a trailing `/openai` is cut (the deployment path adds it).
pub(crate) fn azure_api_base(
    c: &mut Checker,
    provider: Provider,
    written: Option<String>,
    path: &KeyPath,
) -> Option<String> {
    let env = if provider == Provider::AzureAi { "AZURE_AI_API_BASE" } else { "AZURE_API_BASE" };
    let base = match (written, lookup(c, env)) {
        (Some(base), _) => base,
        (None, Some(env)) => match crate::api_base::parse_api_base(&env) {
            Ok(base) => base,
            Err(e) => {
                c.error(format!("{env} (environment)"), e);
                return None;
            }
        },
        (None, None) if provider == Provider::AzureAi => {
            let example = "https://NAME.services.ai.azure.com";
            c.error(path, format!("required for azure_ai: the endpoint ({example}), or set {env}"));
            return None;
        }
        (None, None) => {
            let example = "https://NAME.openai.azure.com";
            c.error(path, format!("required for azure: the resource endpoint ({example}), or set {env}"));
            return None;
        }
    };
    let base = base.trim_end_matches('/');
    if provider == Provider::AzureAi {
        return Some(azure_ai_base(base));
    }
    Some(base.strip_suffix("/openai").unwrap_or(base).to_string())
}

/// Azure AI's chat completions are `{base}/chat/completions`; an AI Foundry endpoint
/// (`*.services.ai.azure.com`) serves them under `/models`, as LiteLLM sends them. A base
/// written with the whole path keeps it once.
fn azure_ai_base(base: &str) -> String {
    let base = base.strip_suffix("/chat/completions").unwrap_or(base);
    let foundry = base.split("://").nth(1).and_then(|rest| rest.split('/').next()).is_some_and(|host| {
        let host = host.split(':').next().unwrap_or(host);
        host.ends_with(".services.ai.azure.com")
    });
    match foundry && !base.ends_with("/models") {
        true => format!("{base}/models"),
        false => base.to_string(),
    }
}

/// Fills an Azure deployment's version and credential, or says what is missing; for any other
/// provider, warns that the Azure keys are ignored.
pub(crate) fn apply_azure_params(c: &mut Checker, params: AzureParams, d: &mut Deployment, entry: &KeyPath) {
    if !is_azure(d.provider) {
        let set = params.api_version.as_ref().map(|(_, p)| p.clone()).into_iter();
        let token = params.azure_ad_token.is_some().then(|| entry.key("azure_ad_token"));
        let client = params.client_credentials.iter().flatten().map(|(_, p)| p.clone());
        let scope = params.azure_scope.iter().map(|(_, p)| p.clone());
        for path in set.chain(token).chain(client).chain(scope) {
            c.warn(path, format!("ignored: only azure deployments read it (this one is {})", d.provider.prefix()));
        }
        return;
    }
    let ai = d.provider == Provider::AzureAi;
    d.api_version = match params.api_version {
        Some((v, path)) => valid_version(c, v, path),
        None if ai => None,
        None => match lookup(c, "AZURE_API_VERSION") {
            Some(v) => valid_version(c, v, "AZURE_API_VERSION (environment)"),
            None => Some(DEFAULT_API_VERSION.to_string()),
        },
    };
    if d.api_key.is_none() {
        d.api_key = match ai {
            true => lookup(c, "AZURE_AI_API_KEY"),
            false => lookup(c, "AZURE_OPENAI_API_KEY").or_else(|| lookup(c, "AZURE_API_KEY")),
        };
    }
    if d.api_key.is_some() {
        return;
    }
    d.azure_ad_token = params.azure_ad_token.or_else(|| lookup(c, "AZURE_AD_TOKEN"));
    if d.azure_ad_token.is_some() {
        return;
    }
    match entra_client(c, params.client_credentials, params.azure_scope) {
        Ok(Some(client)) => d.auth = Some(Box::new(UpstreamAuth::EntraClientCredentials(client))),
        Ok(None) => {
            let keys = if ai { "AZURE_AI_API_KEY" } else { "AZURE_OPENAI_API_KEY / AZURE_API_KEY" };
            c.error(
                entry.key("api_key"),
                format!(
                    "required for {}: api_key (or {keys}), azure_ad_token (or AZURE_AD_TOKEN), or Entra ID client credentials (tenant_id, client_id, client_secret, or AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET)",
                    d.provider.prefix()
                ),
            );
        }
        Err((path, missing)) => c.error(path, format!("Entra ID client credentials need {missing} too")),
    }
}

/// The client credentials written (all three), else the environment's (all three); `Err` names
/// what a partial set lacks, at the path of one that is there.
fn entra_client(
    c: &mut Checker,
    written: [Option<(String, KeyPath)>; 3],
    scope: Option<(String, KeyPath)>,
) -> Result<Option<EntraClient>, (String, String)> {
    let values: [Option<String>; 3] = if written.iter().any(Option::is_some) {
        if let Some(first) = written.iter().flatten().next() {
            let missing: Vec<&str> =
                CLIENT_CREDENTIAL_KEYS.iter().zip(&written).filter(|(_, v)| v.is_none()).map(|(k, _)| *k).collect();
            if !missing.is_empty() {
                return Err((first.1.to_string(), missing.join(", ")));
            }
        }
        written.map(|v| v.map(|(v, _)| v))
    } else {
        let env = CLIENT_CREDENTIAL_ENV.map(|name| lookup(c, name));
        if env.iter().all(Option::is_none) {
            return Ok(None);
        }
        if env.iter().any(Option::is_none) {
            let missing: Vec<&str> =
                CLIENT_CREDENTIAL_ENV.iter().zip(&env).filter(|(_, v)| v.is_none()).map(|(k, _)| *k).collect();
            return Err(("AZURE_TENANT_ID (environment)".to_string(), missing.join(", ")));
        }
        env
    };
    let [Some(tenant_id), Some(client_id), Some(client_secret)] = values else { return Ok(None) };
    let authority_host = lookup(c, "AZURE_AUTHORITY_HOST").unwrap_or_else(|| ENTRA_AUTHORITY_HOST.to_string());
    Ok(Some(EntraClient {
        authority_host: authority_host.trim_end_matches('/').to_string(),
        tenant_id,
        client_id,
        client_secret,
        scope: scope.map_or_else(|| AZURE_COGNITIVE_SCOPE.to_string(), |(s, _)| s),
    }))
}

/// An `api-version` goes into the query as written: letters, digits, `-`, `.` and `_` only.
fn valid_version(c: &mut Checker, v: String, path: impl std::fmt::Display) -> Option<String> {
    let v = v.trim().to_string();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b)) {
        return Some(v);
    }
    c.error(path, format!("{v:?} is not an api-version (e.g. 2024-10-21 or 2025-02-01-preview)"));
    None
}

pub(crate) fn lookup(c: &Checker, name: &str) -> Option<String> {
    c.env.lookup(name).filter(|v| !v.trim().is_empty())
}
