//! The gateway's view of a routing snapshot: the core [`Snapshot`] plus, per deployment, what
//! forwarding needs precomputed (target, request head prefix, encoded model, timeouts), and
//! each router's compiled part (`policy`, `pareto`, `complexity`). Built off the hot path at
//! start and on every reload, published whole.

pub mod complexity;
pub mod pareto;
pub mod policy;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use pointwork_core::{Deployment, RouteKind, RoutingStrategy, Snapshot};

use crate::facts::Needs;
use crate::keys::Keys;
use crate::models_list::models_list;
use crate::providers;
use crate::upstream::target::Target;
use policy::PolicyRoutes;

/// Forwarding facts for one deployment, parallel to `Snapshot::deployments`.
pub struct Upstream {
    pub target: Arc<Target>,
    /// The upstream model as an encoded JSON string, spliced into the body.
    pub model_json: Vec<u8>,
    /// `POST {prefix}/chat/completions HTTP/1.1` and the fixed headers, up to `content-length`
    /// (an Anthropic deployment's: `POST {prefix}/v1/messages`, its key as `x-api-key`; the
    /// `anthropic-version` is added per request, the caller's or [`crate::request::ANTHROPIC_VERSION`]).
    pub chat_head: Vec<u8>,
    pub embeddings_head: Vec<u8>,
    /// What a `/v1/messages` request is sent with: the Messages API of an Anthropic deployment,
    /// the chat completions of any other (translated).
    pub messages_head: Vec<u8>,
    /// `POST {prefix}/responses`: a Responses request passed through to a provider that serves
    /// it (OpenAI, Azure OpenAI); empty for every other (translated to chat completions, sent
    /// with `chat_head`).
    pub responses_head: Vec<u8>,
    /// Whole-response timeout for non-streaming calls.
    pub timeout: Duration,
    /// Head and idle timeout for streaming calls.
    pub stream_timeout: Duration,
    /// What a health check sends: an embedding for `model_info.mode: embedding`, else a chat.
    pub probe_route: RouteKind,
    /// The chat and Messages heads of a streamed request, where the provider streams on another
    /// path (Gemini's `:streamGenerateContent?alt=sse`, Bedrock's `/converse-stream`).
    pub stream_heads: Option<Box<[Vec<u8>; 2]>>,
    /// Signs each request or adds its refreshed token (Bedrock, Entra ID, Vertex AI).
    pub auth: Option<crate::credentials::Authorizer>,
}

impl Upstream {
    pub fn head_for(&self, route: RouteKind) -> &[u8] {
        match route {
            RouteKind::ChatCompletions => &self.chat_head,
            RouteKind::Embeddings => &self.embeddings_head,
            RouteKind::Messages => &self.messages_head,
            RouteKind::Responses => &self.responses_head,
        }
    }

    /// The head of a request on `route`, streamed or not.
    pub fn head(&self, route: RouteKind, stream: bool) -> &[u8] {
        match (&self.stream_heads, route, stream) {
            (Some(heads), RouteKind::ChatCompletions, true) => &heads[0],
            (Some(heads), RouteKind::Messages, true) => &heads[1],
            _ => self.head_for(route),
        }
    }

    /// [`Upstream::head`] for a model a wildcard filled in, built per request: for the
    /// providers that name the model in the path (Azure, Bedrock, Vertex AI, Gemini).
    pub fn head_with_model(&self, d: &Deployment, model: &str, route: RouteKind, stream: bool) -> Vec<u8> {
        let stream =
            stream && self.stream_heads.is_some() && matches!(route, RouteKind::ChatCompletions | RouteKind::Messages);
        providers::request_head(&self.target, d, model, route, stream)
    }
}

pub struct Routes {
    pub snapshot: Snapshot,
    pub upstreams: Vec<Upstream>,
    /// The `GET /v1/models` body.
    pub models_body: Vec<u8>,
    /// The master key, admin and virtual keys: who may call what.
    pub keys: Keys,
    /// Which request facts the filters read (the rest is not extracted).
    pub facts_needed: Needs,
    /// The policy router's policies, catalogue and auto models; `None` without policies.
    pub policy: Option<PolicyRoutes>,
    /// The OpenRouter best-value walk's settings and deployment pins; `None` when it is off.
    pub pareto: Option<pareto::ParetoRoutes>,
    /// The complexity auto-routers; `None` without any.
    pub complexity: Option<complexity::ComplexityRoutes>,
    /// What `GET /model/info` lists: every deployment, the file's and the database's.
    pub model_info: Vec<crate::model_info::ModelInfoEntry>,
    /// Each deployment's names as a database key's spend rows carry them (by index).
    pub spend_places: Vec<pointwork_db::SpendPlace>,
    /// `/metrics` also carries LiteLLM's metric names (`callbacks: ["prometheus"]`), counted
    /// by `crate::metrics::litellm`.
    pub litellm_metrics: bool,
    /// The MCP servers behind `/mcp` (`mcp_servers`).
    pub mcp: std::sync::Arc<pointwork_config::McpSettings>,
    /// The response cache (`litellm_settings.cache`); `None`: no cache, nothing of it runs.
    pub(crate) cache: Option<std::sync::Arc<crate::cache::routes::CacheRoutes>>,
}

/// Whether building routes obtains the deployments' tokens from their token endpoints.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tokens {
    /// Serving: each credential's token is fetched (and then refreshed) now.
    Obtain,
    /// `pointwork check` and `route`: credentials are checked, no token endpoint is called.
    CheckOnly,
}

impl Routes {
    /// Deployment `idx` and its upstream's host and port (an attempt's span names them).
    pub(crate) fn attempt_place(&self, idx: pointwork_core::DeploymentIdx) -> (&pointwork_core::Deployment, &str) {
        (self.snapshot.deployment(idx), &self.upstreams[idx.get()].target.authority)
    }

    /// The routes a loaded config describes; the error names what is wrong. Keys' meters carry
    /// over from the `previous` routes (a reload). `tokens`: whether to obtain the deployments'
    /// tokens (serving) or only check their credentials (`check`, `route`: no network).
    pub fn from_config(
        config: &pointwork_config::Config,
        previous: Option<&Routes>,
        tokens: Tokens,
    ) -> Result<Routes, String> {
        let snapshot = config.snapshot().map_err(|e| e.to_string())?;
        let mut routes = Routes::build_with(snapshot, tokens)?;
        let previous_keys = previous.map(|p| &p.keys);
        let database = config.database.is_some();
        routes.keys = Keys::new(&config.auth, config.master_key.clone(), &routes.snapshot, previous_keys, database);
        routes.policy = PolicyRoutes::new(config, &routes.snapshot, previous.and_then(|p| p.policy.as_ref()));
        routes.pareto = pareto::ParetoRoutes::new(config, &routes.snapshot);
        routes.complexity = complexity::ComplexityRoutes::new(config, &routes.snapshot)?;
        routes.model_info = crate::model_info::model_info_entries(config);
        routes.litellm_metrics = config.export.litellm_metrics;
        routes.mcp = std::sync::Arc::new(config.mcp.clone());
        routes.cache = crate::cache::routes::CacheRoutes::new(config);
        if routes.policy.is_some() {
            // A policy request reads the prompt estimate (the context window) and the image flag.
            routes.facts_needed.prompt = true;
            routes.facts_needed.image = true;
        }
        if routes.policy.is_some() || routes.complexity.is_some() {
            let policy = routes.policy.iter().flat_map(|p| p.router_names());
            let complexity = routes.complexity.iter().flat_map(|c| c.names());
            routes.models_body = models_list(routes.snapshot.public_model_names().chain(policy).chain(complexity));
        }
        let embedding: HashSet<&str> = config
            .deployments
            .iter()
            .zip(&config.deployment_info)
            .filter(|(_, info)| info.model_info.get("mode").and_then(|m| m.as_str()) == Some("embedding"))
            .map(|(d, _)| d.id.as_str())
            .collect();
        for (d, upstream) in routes.snapshot.deployments.iter().zip(&mut routes.upstreams) {
            if embedding.contains(d.id.as_str()) {
                upstream.probe_route = RouteKind::Embeddings;
            }
        }
        Ok(routes)
    }

    /// Whether attempts count their requests and tokens (usage-based routing).
    pub fn counts_usage(&self) -> bool {
        self.snapshot.settings.routing_strategy == RoutingStrategy::UsageBasedV2
    }

    /// Precomputes forwarding facts, without obtaining tokens. Fails when an `api_base` cannot be
    /// parsed or a credential cannot be used.
    pub fn build(snapshot: Snapshot) -> Result<Routes, String> {
        Routes::build_with(snapshot, Tokens::CheckOnly)
    }

    fn build_with(snapshot: Snapshot, tokens: Tokens) -> Result<Routes, String> {
        let mut targets: HashMap<&str, Arc<Target>> = HashMap::new();
        let mut upstreams = Vec::with_capacity(snapshot.deployments.len());
        for d in &snapshot.deployments {
            let target = match targets.get(d.api_base.as_str()) {
                Some(t) => t.clone(),
                None => {
                    let t = Arc::new(Target::parse(&d.api_base).map_err(|e| format!("deployment {}: {e}", d.id))?);
                    targets.insert(&d.api_base, t.clone());
                    t
                }
            };
            let timeout = d.timeout.unwrap_or(snapshot.settings.timeout);
            let stream_timeout = d.stream_timeout.or(snapshot.settings.stream_timeout).unwrap_or(timeout);
            let head = |route, stream| providers::request_head(&target, d, &d.upstream_model, route, stream);
            let auth = match &d.auth {
                Some(auth) => {
                    let authorizer = crate::credentials::Authorizer::new(auth, tokens == Tokens::Obtain);
                    Some(authorizer.map_err(|e| format!("deployment {}: {e}", d.id))?)
                }
                None => None,
            };
            upstreams.push(Upstream {
                chat_head: head(RouteKind::ChatCompletions, false),
                embeddings_head: head(RouteKind::Embeddings, false),
                messages_head: head(RouteKind::Messages, false),
                responses_head: match d.provider.serves_responses() {
                    true => head(RouteKind::Responses, false),
                    false => Vec::new(),
                },
                stream_heads: providers::streams_elsewhere(d)
                    .then(|| Box::new([head(RouteKind::ChatCompletions, true), head(RouteKind::Messages, true)])),
                auth,
                model_json: serde_json::to_vec(&d.upstream_model).unwrap_or_default(),
                target,
                timeout,
                stream_timeout,
                probe_route: RouteKind::ChatCompletions,
            });
        }
        let models_body = models_list(snapshot.public_model_names());
        let facts_needed = facts_needed(&snapshot);
        let spend_places = snapshot
            .deployments
            .iter()
            .enumerate()
            .map(|(i, d)| pointwork_db::SpendPlace {
                model: d.upstream_model.as_str().into(),
                model_id: d.id.as_str().into(),
                model_group: snapshot
                    .group(snapshot.group_of(pointwork_core::DeploymentIdx(i as u32)))
                    .name
                    .as_str()
                    .into(),
                custom_llm_provider: d.provider.prefix().into(),
                api_base: d.api_base.as_str().into(),
            })
            .collect();
        Ok(Routes {
            snapshot,
            upstreams,
            models_body,
            keys: Keys::default(),
            facts_needed,
            policy: None,
            pareto: None,
            complexity: None,
            model_info: Vec::new(),
            spend_places,
            litellm_metrics: false,
            mcp: Default::default(),
            cache: None,
        })
    }
}

/// What the filters of `snapshot` read from a request. The walk over `messages` (the prompt
/// estimate, for the context-window check) doubles the extraction's cost; usage-based routing
/// counts body bytes instead.
fn facts_needed(snapshot: &Snapshot) -> Needs {
    let settings = &snapshot.settings;
    let affinity = &settings.affinity;
    Needs {
        prompt: settings.enable_pre_call_checks,
        image: mixes_vision(snapshot),
        params: settings.enable_pre_call_checks,
        metadata: settings.enable_tag_filtering
            || affinity.all_groups.session
            || affinity.per_group.iter().any(|(_, k)| k.session),
    }
}

/// Whether some group has deployments with and without vision: only then can the text-only
/// filter remove anything (it keeps all when none or all declare vision).
fn mixes_vision(snapshot: &Snapshot) -> bool {
    snapshot.groups.iter().any(|g| {
        let vision = g.members.iter().filter(|&&m| snapshot.deployment(m).supports_vision == Some(true)).count();
        vision > 0 && vision < g.members.len()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pointwork_core::{Deployment, Provider, RouterSettings};

    #[test]
    fn precomputes_heads_with_the_deployment_key() {
        let mut d = Deployment::new("a", "gpt", Provider::OpenAi, "gpt-4o-mini", "http://127.0.0.1:9/v1");
        d.api_key = Some("sk-secret".into());
        let routes = Routes::build(Snapshot::build(vec![d], RouterSettings::default()).unwrap()).unwrap();
        let head = String::from_utf8(routes.upstreams[0].chat_head.clone()).unwrap();
        assert!(head.starts_with("POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:9\r\n"), "{head}");
        assert!(head.contains("authorization: Bearer sk-secret\r\n"));
        assert_eq!(routes.upstreams[0].model_json, br#""gpt-4o-mini""#);
        let models: serde_json::Value = serde_json::from_slice(&routes.models_body).unwrap();
        assert_eq!(models["data"][0]["id"], "gpt");
    }

    #[test]
    fn an_azure_head_names_the_deployment_and_version_and_sends_its_key_as_api_key() {
        let mut d = Deployment::new("a", "gpt", Provider::Azure, "gpt 4o/eu", "https://r.openai.azure.com");
        d.api_key = Some("az-key".into());
        d.api_version = Some("2024-10-21".into());
        let mut token = Deployment::new("b", "gpt", Provider::Azure, "gpt-4o", "https://r.openai.azure.com");
        token.azure_ad_token = Some("eyJ.t.s".into());
        let routes = Routes::build(Snapshot::build(vec![d, token], RouterSettings::default()).unwrap()).unwrap();
        let head = |i: usize, route| String::from_utf8(routes.upstreams[i].head_for(route).to_vec()).unwrap();
        let chat = head(0, RouteKind::ChatCompletions);
        assert!(
            chat.starts_with(
                "POST /openai/deployments/gpt%204o%2Feu/chat/completions?api-version=2024-10-21 HTTP/1.1\r\n"
            ),
            "{chat}"
        );
        assert!(chat.contains("api-key: az-key\r\n") && !chat.contains("authorization"), "{chat}");
        let embeddings = head(0, RouteKind::Embeddings);
        assert!(embeddings.starts_with("POST /openai/deployments/gpt%204o%2Feu/embeddings?api-version=2024-10-21 "));
        // A Messages request is translated to chat completions, on the same path.
        assert!(head(0, RouteKind::Messages).starts_with("POST /openai/deployments/gpt%204o%2Feu/chat/completions?"));
        let with_token = head(1, RouteKind::ChatCompletions);
        assert!(with_token.contains(&format!("?api-version={} ", pointwork_config::AZURE_DEFAULT_API_VERSION)));
        assert!(
            with_token.contains("authorization: Bearer eyJ.t.s\r\n") && !with_token.contains("api-key"),
            "{with_token}"
        );
    }
}
