//! Google's providers, read as LiteLLM reads them.
//!
//! - Gemini (`gemini/<model>`, Google AI Studio): `api_key`, else `GEMINI_API_KEY`, else
//!   `GOOGLE_API_KEY`, sent as `x-goog-api-key`; `api_base` (the API root, `…/v1beta`) optional.
//! - Vertex AI (`vertex_ai/<model>`): Gemini models and Anthropic's (`claude-…`);
//!   `vertex_project` (else `VERTEXAI_PROJECT`, `VERTEX_PROJECT`, else the credentials'
//!   `project_id`), `vertex_location` (else `VERTEXAI_LOCATION`, `VERTEX_LOCATION`, else
//!   `us-central1`), `vertex_credentials` (a service-account JSON file's path or the JSON itself;
//!   else `VERTEXAI_CREDENTIALS`, else the file `GOOGLE_APPLICATION_CREDENTIALS` names), whose
//!   OAuth2 token the gateway obtains and refreshes itself. `api_base` replaces the regional host
//!   (a private endpoint); written with `/v1` or `/v1beta1`, that version is used.

use pointwork_core::upstream_auth::{GoogleServiceAccount, GOOGLE_CLOUD_SCOPE};
use pointwork_core::{Deployment, Dialect, Provider, UpstreamAuth};
use serde::Deserialize;

use crate::azure::lookup;
use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;

/// LiteLLM's Vertex AI location when none is given.
pub const DEFAULT_VERTEX_LOCATION: &str = "us-central1";
const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

pub(crate) struct VertexParams {
    project: Option<String>,
    location: Option<String>,
    credentials: Option<(String, KeyPath)>,
    written: Vec<KeyPath>,
}

pub(crate) fn read_vertex_params(c: &mut Checker, p: &mut Fields) -> VertexParams {
    let keys = ["vertex_project", "vertex_location", "vertex_credentials"];
    let written = keys.iter().filter(|k| p.is_set(k)).map(|k| p.path.key(k)).collect();
    let credentials_path = p.path.key("vertex_credentials");
    VertexParams {
        project: c.optional(p, "vertex_project", &kinds::NON_EMPTY_STRING),
        location: c.optional(p, "vertex_location", &kinds::NON_EMPTY_STRING),
        credentials: c.optional(p, "vertex_credentials", &kinds::SECRET).map(|v| (v, credentials_path)),
        written,
    }
}

/// A service-account file's members the token exchange reads.
#[derive(Deserialize)]
struct ServiceAccountFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    project_id: Option<String>,
    private_key_id: Option<String>,
    private_key: Option<String>,
    client_email: Option<String>,
    token_uri: Option<String>,
}

/// The service account a Vertex deployment authenticates as, and its project, from the
/// credentials written or the environment's; `Err` says what is wrong, where.
fn service_account(
    c: &mut Checker,
    params: &VertexParams,
) -> Result<(GoogleServiceAccount, Option<String>), (String, String)> {
    let (text, path) = match &params.credentials {
        Some((value, path)) => (credentials_text(value).map_err(|e| (path.to_string(), e))?, path.to_string()),
        None => match (lookup(c, "VERTEXAI_CREDENTIALS"), lookup(c, "GOOGLE_APPLICATION_CREDENTIALS")) {
            (Some(value), _) => {
                let path = "VERTEXAI_CREDENTIALS (environment)".to_string();
                (credentials_text(&value).map_err(|e| (path.clone(), e))?, path)
            }
            (None, Some(file)) => {
                let path = "GOOGLE_APPLICATION_CREDENTIALS (environment)".to_string();
                (read_file(&file).map_err(|e| (path.clone(), e))?, path)
            }
            (None, None) => {
                return Err((
                    String::new(),
                    "required for vertex_ai: vertex_credentials (a service-account JSON file or the JSON), or set VERTEXAI_CREDENTIALS or GOOGLE_APPLICATION_CREDENTIALS".into(),
                ))
            }
        },
    };
    let file: ServiceAccountFile =
        serde_json::from_str(&text).map_err(|e| (path.clone(), format!("not a service-account JSON: {e}")))?;
    match file.kind.as_deref() {
        Some("service_account") => {}
        other => {
            let kind = other.unwrap_or("none");
            let why = format!("credentials of type {kind:?} are not supported: give a service account's key file (type \"service_account\")");
            return Err((path, why));
        }
    }
    let (Some(client_email), Some(private_key)) = (file.client_email, file.private_key) else {
        return Err((path, "the service-account JSON lacks client_email or private_key".into()));
    };
    if !private_key.contains("-----BEGIN PRIVATE KEY-----") {
        return Err((path, "private_key is not a PEM PKCS#8 key (-----BEGIN PRIVATE KEY-----)".into()));
    }
    let account = GoogleServiceAccount {
        client_email,
        private_key_pem: private_key,
        private_key_id: file.private_key_id,
        token_uri: file.token_uri.unwrap_or_else(|| GOOGLE_TOKEN_URI.to_string()),
        scope: GOOGLE_CLOUD_SCOPE.to_string(),
    };
    Ok((account, file.project_id))
}

/// `vertex_credentials` is the JSON itself when it starts with `{`, else a file's path.
fn credentials_text(value: &str) -> Result<String, String> {
    match value.trim_start().starts_with('{') {
        true => Ok(value.to_string()),
        false => read_file(value.trim()),
    }
}

fn read_file(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read the credentials file {path:?}: {e}"))
}

/// A Vertex AI deployment's base (`…/v1/projects/{p}/locations/{l}/publishers/{google|anthropic}`,
/// under which the gateway adds `/models/{model}:{method}`) and its service account; `None`
/// after an error.
pub(crate) fn vertex_api_base(
    c: &mut Checker,
    written: Option<String>,
    upstream_model: &str,
    params: &VertexParams,
    entry: &KeyPath,
) -> Option<(String, Box<UpstreamAuth>)> {
    let (account, file_project) = match service_account(c, params) {
        Ok(found) => found,
        Err((path, why)) => {
            let path = if path.is_empty() { entry.key("vertex_credentials").to_string() } else { path };
            c.error(path, why);
            return None;
        }
    };
    let project = params
        .project
        .clone()
        .or_else(|| lookup(c, "VERTEXAI_PROJECT"))
        .or_else(|| lookup(c, "VERTEX_PROJECT"))
        .or(file_project);
    let Some(project) = project else {
        c.error(
            entry.key("vertex_project"),
            "required for vertex_ai: vertex_project (or VERTEXAI_PROJECT), or a project_id in the credentials",
        );
        return None;
    };
    let location = params
        .location
        .clone()
        .or_else(|| lookup(c, "VERTEXAI_LOCATION"))
        .or_else(|| lookup(c, "VERTEX_LOCATION"))
        .unwrap_or_else(|| DEFAULT_VERTEX_LOCATION.to_string());
    let (root, version) = match written {
        Some(base) => match base.split("://").nth(1).and_then(|rest| rest.find('/').map(|i| &rest[i..])) {
            None | Some("/") => (base.trim_end_matches('/').to_string(), "v1"),
            Some("/v1") => (base.trim_end_matches("/v1").to_string(), "v1"),
            Some("/v1beta1") => (base.trim_end_matches("/v1beta1").to_string(), "v1beta1"),
            Some(_) => {
                c.error(
                    entry.key("api_base"),
                    "for vertex_ai, the host of a private endpoint (optionally with /v1 or /v1beta1)",
                );
                return None;
            }
        },
        None if location == "global" => ("https://aiplatform.googleapis.com".to_string(), "v1"),
        None => (format!("https://{location}-aiplatform.googleapis.com"), "v1"),
    };
    let publisher = match Provider::VertexAi.dialect(upstream_model) {
        Dialect::AnthropicMessages => "anthropic",
        _ => "google",
    };
    let base = format!("{root}/{version}/projects/{project}/locations/{location}/publishers/{publisher}");
    Some((base, Box::new(UpstreamAuth::GoogleServiceAccount(account))))
}

/// Gemini's key, or the error saying it is missing.
pub(crate) fn gemini_key(c: &mut Checker, d: &mut Deployment, entry: &KeyPath) {
    if d.api_key.is_none() {
        d.api_key = lookup(c, "GEMINI_API_KEY").or_else(|| lookup(c, "GOOGLE_API_KEY"));
    }
    if d.api_key.is_none() {
        c.error(entry.key("api_key"), "required for gemini: api_key (or GEMINI_API_KEY / GOOGLE_API_KEY)");
    }
}

/// Warns that the Vertex keys are ignored on another provider.
pub(crate) fn warn_vertex_params_ignored(c: &mut Checker, params: &VertexParams, provider: Provider) {
    for path in &params.written {
        c.warn(path, format!("ignored: only vertex_ai deployments read it (this one is {})", provider.prefix()));
    }
}
