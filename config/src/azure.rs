//! Azure OpenAI deployments (`azure/<deployment>`), read as LiteLLM reads them: the resource
//! endpoint `api_base` (else `AZURE_API_BASE`), `api_version` (else `AZURE_API_VERSION`, else
//! LiteLLM's default), and the credential: `api_key` (else `AZURE_OPENAI_API_KEY`, else
//! `AZURE_API_KEY`), sent as `api-key`, or `azure_ad_token` (else `AZURE_AD_TOKEN`), a Microsoft
//! Entra ID bearer token.

use pointwork_core::{Deployment, Provider};

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;

/// LiteLLM 1.110.2's `AZURE_DEFAULT_API_VERSION`.
pub const DEFAULT_API_VERSION: &str = "2025-02-01-preview";

/// What an entry may say that only Azure reads.
pub(crate) struct AzureParams {
    api_version: Option<(String, KeyPath)>,
    azure_ad_token: Option<String>,
    /// Entra ID client credentials (`tenant_id`, `client_id`, `client_secret`), by key path.
    client_credentials: Vec<KeyPath>,
}

/// Takes the Azure keys from any entry (so that they are never reported as unknown).
pub(crate) fn read_azure_params(c: &mut Checker, p: &mut Fields) -> AzureParams {
    let api_version_path = p.path.key("api_version");
    let api_version = c.optional(p, "api_version", &kinds::NON_EMPTY_STRING).map(|v| (v, api_version_path));
    let azure_ad_token = c.optional(p, "azure_ad_token", &kinds::SECRET);
    let client_credentials = ["tenant_id", "client_id", "client_secret"]
        .into_iter()
        .filter_map(|key| p.take(key).map(|(_, path)| path))
        .collect();
    AzureParams { api_version, azure_ad_token, client_credentials }
}

/// The resource endpoint of an Azure deployment: `api_base` as written, else `AZURE_API_BASE`;
/// a trailing `/openai` is cut (the deployment path adds it).
pub(crate) fn azure_api_base(c: &mut Checker, written: Option<String>, path: &KeyPath) -> Option<String> {
    let base = match (written, lookup(c, "AZURE_API_BASE")) {
        (Some(base), _) => base,
        (None, Some(env)) => match crate::api_base::parse_api_base(&env) {
            Ok(base) => base,
            Err(e) => {
                c.error("AZURE_API_BASE (environment)", e);
                return None;
            }
        },
        (None, None) => {
            c.error(
                path,
                "required for azure: the resource endpoint (https://NAME.openai.azure.com), or set AZURE_API_BASE",
            );
            return None;
        }
    };
    let base = base.trim_end_matches('/');
    Some(base.strip_suffix("/openai").unwrap_or(base).to_string())
}

/// Fills an Azure deployment's version and credential, or says what is missing; for any other
/// provider, warns that the Azure keys are ignored.
pub(crate) fn apply_azure_params(c: &mut Checker, params: AzureParams, d: &mut Deployment, entry: &KeyPath) {
    if d.provider != Provider::Azure {
        let set = params.api_version.as_ref().map(|(_, p)| p.clone()).into_iter();
        let token = params.azure_ad_token.is_some().then(|| entry.key("azure_ad_token"));
        for path in set.chain(token).chain(params.client_credentials) {
            c.warn(path, format!("ignored: only azure deployments read it (this one is {})", d.provider.prefix()));
        }
        return;
    }
    let version = match params.api_version {
        Some((v, path)) => valid_version(c, v, path),
        None => match lookup(c, "AZURE_API_VERSION") {
            Some(v) => valid_version(c, v, "AZURE_API_VERSION (environment)"),
            None => Some(DEFAULT_API_VERSION.to_string()),
        },
    };
    d.api_version = version;
    if d.api_key.is_none() {
        d.api_key = lookup(c, "AZURE_OPENAI_API_KEY").or_else(|| lookup(c, "AZURE_API_KEY"));
    }
    d.azure_ad_token = params.azure_ad_token.or_else(|| lookup(c, "AZURE_AD_TOKEN"));
    if let Some(path) = params.client_credentials.first() {
        c.error(
            path,
            "Microsoft Entra ID client credentials (tenant_id, client_id, client_secret) are not supported yet; use api_key or azure_ad_token",
        );
    } else if d.api_key.is_none() && d.azure_ad_token.is_none() {
        c.error(
            entry.key("api_key"),
            "required for azure: api_key (or AZURE_OPENAI_API_KEY / AZURE_API_KEY), or azure_ad_token (or AZURE_AD_TOKEN)",
        );
    }
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

fn lookup(c: &Checker, name: &str) -> Option<String> {
    c.env.lookup(name).filter(|v| !v.trim().is_empty())
}
