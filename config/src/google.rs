//! Google's providers, read as LiteLLM reads them.
//!
//! - Gemini (`gemini/<model>`, Google AI Studio): `api_key`, else `GEMINI_API_KEY`, else
//!   `GOOGLE_API_KEY`, sent as `x-goog-api-key`; `api_base` (the API root, `…/v1beta`) optional.
//! - Vertex AI (`vertex_ai/<model>`): Gemini models and Anthropic's (`claude-…`);
//!   `vertex_project` (else `vertex_ai_project`, `VERTEXAI_PROJECT`, `VERTEX_PROJECT`, the credentials'
//!   `project_id`, `GOOGLE_CLOUD_PROJECT`, else — with its token — the metadata server's
//!   project), `vertex_location` (else `vertex_ai_location`, `VERTEXAI_LOCATION`, `VERTEX_LOCATION`, else
//!   `us-central1`), the credential found as
//!   [`crate::google_adc`] says (Application Default Credentials), whose OAuth2 token the
//!   gateway obtains and refreshes itself. `api_base` replaces the regional host (a private
//!   endpoint); written with `/v1` or `/v1beta1`, that version is used.

use pointwork_core::{Deployment, Dialect, Provider, UpstreamAuth};

use crate::azure::lookup;
use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;

/// LiteLLM's Vertex AI location when none is given.
pub const DEFAULT_VERTEX_LOCATION: &str = "us-central1";

pub(crate) struct VertexParams {
    project: Option<String>,
    location: Option<String>,
    credentials: Option<(String, KeyPath)>,
    written: Vec<KeyPath>,
}

pub(crate) fn read_vertex_params(c: &mut Checker, p: &mut Fields) -> VertexParams {
    let keys = ["vertex_project", "vertex_ai_project", "vertex_location", "vertex_ai_location", "vertex_credentials"];
    let written = keys.iter().filter(|k| p.is_set(k)).map(|k| p.path.key(k)).collect();
    let credentials_path = p.path.key("vertex_credentials");
    // LiteLLM reads `vertex_ai_project` / `vertex_ai_location` when the shorter key is not set.
    let project = c.optional(p, "vertex_project", &kinds::NON_EMPTY_STRING);
    let ai_project = c.optional(p, "vertex_ai_project", &kinds::NON_EMPTY_STRING);
    let location = c.optional(p, "vertex_location", &kinds::NON_EMPTY_STRING);
    let ai_location = c.optional(p, "vertex_ai_location", &kinds::NON_EMPTY_STRING);
    VertexParams {
        project: project.or(ai_project),
        location: location.or(ai_location),
        credentials: c.optional(p, "vertex_credentials", &kinds::SECRET).map(|v| (v, credentials_path)),
        written,
    }
}

/// A Vertex AI deployment's base (`…/v1/projects/{p}/locations/{l}/publishers/{google|anthropic}`,
/// under which the gateway adds `/models/{model}:{method}`) and its credential; `None` after an
/// error.
pub(crate) fn vertex_api_base(
    c: &mut Checker,
    written: Option<String>,
    upstream_model: &str,
    params: &VertexParams,
    entry: &KeyPath,
) -> Option<(String, Box<UpstreamAuth>)> {
    let found = match crate::google_adc::find(c, params.credentials.as_ref(), entry) {
        Ok(found) => found,
        Err((path, why)) => {
            c.error(path, why);
            return None;
        }
    };
    let project = params
        .project
        .clone()
        .or_else(|| lookup(c, "VERTEXAI_PROJECT"))
        .or_else(|| lookup(c, "VERTEX_PROJECT"))
        .or(found.project)
        .or_else(|| lookup(c, "GOOGLE_CLOUD_PROJECT"));
    // Only a deployment that takes its token from the metadata server asks it for the project,
    // as google-auth does.
    let project = match (project, &found.auth) {
        (Some(project), _) => Ok(project),
        (None, UpstreamAuth::GoogleMetadata(_)) => {
            crate::google_adc::metadata_project(c).map_err(|why| format!("; {why}"))
        }
        (None, _) => Err(String::new()),
    };
    let project = match project {
        Ok(project) => project,
        Err(why) => {
            c.error(
                entry.key("vertex_project"),
                format!("required for vertex_ai: vertex_project (or VERTEXAI_PROJECT), a project_id in the credentials or GOOGLE_CLOUD_PROJECT{why}"),
            );
            return None;
        }
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
    Some((base, Box::new(found.auth)))
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
