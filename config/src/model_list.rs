//! LiteLLM's `model_list`: each entry becomes one [`Deployment`], or is left out with a warning
//! when Pointwork does not serve its provider yet or its `supported_environments` exclude this
//! one. An entry of `pointwork/policy_router` declares an auto model instead (see
//! `policy_router.rs`), and one of `auto_router/complexity_router` a complexity router (see
//! `complexity_router.rs`).

use pointwork_core::policy::PolicyAttrs;
use pointwork_core::{Deployment, Param, Provider};

use crate::api_base::parse_api_base;
use crate::check::{Checker, Fields, KeyPath};
use crate::complexity_router::{
    read_complexity_params, DeclaredComplexityRouter, DeclaredConfig, COMPLEXITY_ROUTER_MODEL,
};
use crate::cost_map;
use crate::deployment_id::derive_id;
use crate::extra_body::read_extra_body;
use crate::include::ModelList;
use crate::kinds;
use crate::model_ref::{parse_model_ref, ModelRef};
use crate::node::Node;
use crate::pass_through::{self, PASS_THROUGH_MODEL};
use crate::policy_attrs::read_policy_attrs;
use crate::policy_router::{read_router_params, DeclaredRouter, POINTWORK_PREFIX, POLICY_ROUTER_MODEL};
use crate::provider_params::{apply_provider_params, endpoint, read_provider_params, Endpoint};
use crate::request_defaults::{read_request_defaults, takes_max_completion_tokens};
use crate::{DeploymentInfo, EntrySource, LeftOut, LeftOutBecause};

/// LiteLLM's environments (`LITELLM_ENVIRONMENT`, `model_info.supported_environments`).
const ENVIRONMENTS: [&str; 3] = ["development", "staging", "production"];
const LITELLM_ENVIRONMENT: &str = "LITELLM_ENVIRONMENT";

/// One compiled entry: the router's view and the rest of what the config says about it.
pub(crate) struct CompiledEntry {
    pub(crate) deployment: Deployment,
    pub(crate) info: DeploymentInfo,
    /// `litellm_params.model` as written (after `os.environ/`), for the model cost map.
    pub(crate) model: String,
}

/// What became of the entries of every file's `model_list`.
#[derive(Default)]
pub(crate) struct ModelLists {
    pub(crate) compiled: Vec<CompiledEntry>,
    pub(crate) left_out: Vec<LeftOut>,
    /// The auto models (`pointwork/policy_router` entries): not deployments, not counted in
    /// `total`.
    pub(crate) policy_routers: Vec<DeclaredRouter>,
    /// The complexity routers (`auto_router/complexity_router` entries): not counted in `total`
    /// either.
    pub(crate) complexity_routers: Vec<DeclaredComplexityRouter>,
    /// The `model_name`s of entries that failed to compile (their errors explain references to
    /// them).
    pub(crate) failed_names: Vec<String>,
    /// How many deployment entries there were in all (to tell an empty list from a list of bad
    /// entries).
    pub(crate) total: usize,
}

/// One entry read: compiled, left out (with its warning given), or an auto model.
enum Entry {
    /// One deployment, or a pass-through entry's several.
    Compiled(Vec<CompiledEntry>),
    LeftOut(LeftOut),
    PolicyRouter(DeclaredRouter),
    ComplexityRouter(Box<DeclaredComplexityRouter>),
}

/// Compiles every file's `model_list`.
pub(crate) fn read_model_lists(c: &mut Checker, lists: &[ModelList]) -> ModelLists {
    let mut out = ModelLists::default();
    for list in lists {
        if matches!(list.node, Node::Null) {
            continue;
        }
        let Some(items) = c.list(&list.node, &list.path) else {
            continue;
        };
        for (index, item) in items.iter().enumerate() {
            let source = EntrySource { file: list.path.file().map(|f| f.to_string()), index, stored: None };
            let entry = read_entry(c, item, list.path.index(index), source);
            out.total += usize::from(!matches!(entry, Some(Entry::PolicyRouter(_) | Entry::ComplexityRouter(_))));
            match entry {
                Some(Entry::Compiled(entries)) => out.compiled.extend(entries),
                Some(Entry::LeftOut(entry)) => out.left_out.push(entry),
                Some(Entry::PolicyRouter(router)) => out.policy_routers.push(router),
                Some(Entry::ComplexityRouter(router)) => out.complexity_routers.push(*router),
                None => out.failed_names.extend(entry_string(item, "model_name")),
            }
        }
    }
    out
}

/// Compiles one entry stored in the database (`crate::stored_models`): a deployment, or
/// `None` with a warning or errors said (an auto model is not served from there).
pub(crate) fn read_stored_entry(
    c: &mut Checker,
    node: &Node,
    path: KeyPath,
    source: EntrySource,
) -> Option<CompiledEntry> {
    match read_entry(c, node, path.clone(), source)? {
        Entry::Compiled(mut entries) if entries.len() == 1 => entries.pop(),
        Entry::Compiled(_) => {
            c.error(
                path.key("litellm_params").key("model"),
                "a pass-through entry is served from the config file only",
            );
            None
        }
        Entry::LeftOut(_) => None,
        Entry::PolicyRouter(_) | Entry::ComplexityRouter(_) => {
            c.error(path.key("litellm_params").key("model"), "an auto model is served from the config file only");
            None
        }
    }
}

fn read_entry(c: &mut Checker, node: &Node, path: KeyPath, source: EntrySource) -> Option<Entry> {
    let mut entry = c.map(node, path)?;
    let model_name = c.required(&mut entry, "model_name", &kinds::NON_EMPTY_STRING);
    let raw_model_name = entry_string(node, "model_name");
    let params = match entry.take("litellm_params") {
        None | Some((Node::Null, _)) => {
            let path = entry.path.key("litellm_params");
            c.error(path, "required key is missing (expected a map)");
            None
        }
        Some((params_node, params_path)) => {
            c.map(params_node, params_path).and_then(|fields| read_litellm_params(c, fields)).map(|p| (p, params_node))
        }
    };
    let router_kind = match &params {
        Some((Params::PolicyRouter { .. }, _)) => Some("a policy router"),
        Some((Params::ComplexityRouter(_), _)) => Some("a complexity router"),
        _ => None,
    };
    let info = if let Some(kind) = router_kind {
        for (_, _, path) in entry.untaken() {
            c.warn(path, format!("ignored: {kind} is not a deployment"));
        }
        ModelInfo::default()
    } else {
        let info = read_model_info(c, &mut entry);
        c.warn_ignored(&entry);
        info
    };

    let ((params, params_node), model_name) = (params?, model_name?);
    let (mut deployment, model, pass_through) = match params {
        Params::Served(deployment, model) => (*deployment, model, None),
        Params::PassThrough { template, base, key } => (*template, PASS_THROUGH_MODEL.to_string(), Some((base, key))),
        Params::PolicyRouter { pool } => {
            return Some(Entry::PolicyRouter(DeclaredRouter { model_name, entry: entry.path, pool }));
        }
        Params::ComplexityRouter(config) => {
            return Some(Entry::ComplexityRouter(Box::new(DeclaredComplexityRouter {
                model_name,
                entry: entry.path,
                config: *config,
            })));
        }
        Params::LeftOut { because, model, at } => {
            c.warn(at, left_out_warning(&because));
            return Some(Entry::LeftOut(LeftOut { source, model_name, model, because }));
        }
    };
    if let Some(because) = environment_excludes(c, &info, &entry.path) {
        c.warn(entry.path.key("model_info").key("supported_environments"), left_out_warning(&because));
        return Some(Entry::LeftOut(LeftOut { source, model_name, model, because }));
    }
    let knobs = info.knobs;
    deployment.model_name = model_name;
    // LiteLLM reads these from model_info when litellm_params does not set them.
    deployment.rpm = deployment.rpm.or(knobs.rpm);
    deployment.tpm = deployment.tpm.or(knobs.tpm);
    deployment.input_cost_per_token = deployment.input_cost_per_token.or(knobs.input_cost_per_token);
    deployment.output_cost_per_token = deployment.output_cost_per_token.or(knobs.output_cost_per_token);
    deployment.blocked = knobs.blocked.unwrap_or(false);
    deployment.supports_vision = knobs.supports_vision;
    deployment.max_input_tokens = knobs.max_input_tokens;
    deployment.max_tokens = knobs.max_tokens;
    deployment.max_output_tokens = knobs.max_output_tokens;
    deployment.native_responses = info
        .supported_endpoints
        .as_ref()
        .map(|endpoints| endpoints.iter().any(|e| matches!(e.trim_end_matches('/'), "/v1/responses" | "/responses")));
    deployment.policy = info.policy.map(Box::new);
    for (param, supported) in Param::ALL.into_iter().zip(knobs.supports) {
        if supported == Some(false) {
            deployment.unsupported_params.insert(param);
        }
    }
    let derived_id = info.id.is_none();
    deployment.id = match info.id {
        Some(id) => id,
        None => derive_id(&raw_model_name?, params_node),
    };
    let deployments = match pass_through {
        None => vec![deployment],
        Some((base, key)) => {
            let params = entry.path.key("litellm_params");
            let expanded = pass_through::expand(c, &deployment, base.as_deref(), key.as_deref(), &params);
            if expanded.is_empty() {
                let because = LeftOutBecause::NoPassThroughKey;
                c.warn(params.key("model"), left_out_warning(&because));
                return Some(Entry::LeftOut(LeftOut { source, model_name: deployment.model_name, model, because }));
            }
            expanded
        }
    };
    let info = DeploymentInfo {
        source,
        derived_id,
        model_info: info.kept,
        access_groups: info.access_groups,
        model: model.clone(),
    };
    let compiled = deployments.into_iter().map(|deployment| CompiledEntry {
        deployment,
        info: info.clone(),
        model: model.clone(),
    });
    Some(Entry::Compiled(compiled.collect()))
}

fn left_out_warning(because: &LeftOutBecause) -> String {
    format!("left out: {because}; the rest of the config serves without this deployment")
}

/// Why the entry is left out in this environment, if it is: `supported_environments` that do
/// not include `LITELLM_ENVIRONMENT` (LiteLLM's rule; with the variable unset the entry serves,
/// with a warning).
fn environment_excludes(c: &mut Checker, info: &ModelInfo, entry: &KeyPath) -> Option<LeftOutBecause> {
    let supported = info.supported_environments.as_ref()?;
    let path = entry.key("model_info").key("supported_environments");
    for (i, env) in supported.iter().enumerate() {
        if !ENVIRONMENTS.contains(&env.as_str()) {
            c.error(path.index(i), format!("unknown environment {env:?}; valid: {}", ENVIRONMENTS.join(", ")));
        }
    }
    // With the variable unset LiteLLM's router refuses to build, while its proxy's model checks
    // count such an entry active (`_expects_liveness_on_this_pod`): that default here, the
    // entry serving and the warning saying how to gate it.
    let Some(current) = c.env.lookup(LITELLM_ENVIRONMENT) else {
        c.warn(
            &path,
            format!(
                "{LITELLM_ENVIRONMENT} is unset, so this entry serves in every environment; set it ({}) to apply the list",
                ENVIRONMENTS.join(", ")
            ),
        );
        return None;
    };
    if !ENVIRONMENTS.contains(&current.as_str()) {
        c.error(&path, format!("{LITELLM_ENVIRONMENT} is {current:?}; valid: {}", ENVIRONMENTS.join(", ")));
        return None;
    }
    (!supported.contains(&current)).then_some(LeftOutBecause::Environment(current))
}

/// A string value as written (before `os.environ/` substitution), for the derived id.
fn entry_string(node: &Node, key: &str) -> Option<String> {
    match node.get(key) {
        Some(Node::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

/// What `litellm_params` describe.
enum Params {
    /// A deployment with an empty id and group name (the caller sets them), and the model as
    /// written.
    Served(Box<Deployment>, String),
    /// `model: "*"`: everything the entry says but the endpoint, and the `api_base` and
    /// `api_key` written, for each provider's deployment ([`crate::pass_through`]).
    PassThrough { template: Box<Deployment>, base: Option<String>, key: Option<String> },
    /// An entry left out (its warning at `at`): a provider Pointwork does not serve yet or
    /// cannot place (the rest of the entry is not read), or an address that is a placeholder.
    LeftOut { because: LeftOutBecause, model: String, at: KeyPath },
    /// `pointwork/policy_router`: an auto model and its `policy_router_config.pool`.
    PolicyRouter { pool: Option<Vec<(String, KeyPath)>> },
    /// `auto_router/complexity_router`: a complexity router and its config, groups unchecked.
    ComplexityRouter(Box<DeclaredConfig>),
}

fn read_litellm_params(c: &mut Checker, mut p: Fields) -> Option<Params> {
    let model_path = p.path.key("model");
    let model = c.required(&mut p, "model", &kinds::NON_EMPTY_STRING);
    // Pointwork's own models come before the providers: `pointwork/` is none of them.
    match model.as_deref().map(str::trim) {
        Some(POLICY_ROUTER_MODEL) => return Some(Params::PolicyRouter { pool: read_router_params(c, p) }),
        // LiteLLM's own router model; its other `auto_router/` models stay left out.
        Some(COMPLEXITY_ROUTER_MODEL) => {
            return read_complexity_params(c, p).map(|config| Params::ComplexityRouter(Box::new(config)));
        }
        Some(m) if m.starts_with(POINTWORK_PREFIX) => {
            c.error(&model_path, format!("unknown Pointwork model {m:?}; the one there is: {POLICY_ROUTER_MODEL}"));
            c.warn_ignored(&p);
            return None;
        }
        _ => {}
    }
    let pass_through = model.as_deref().map(str::trim) == Some(PASS_THROUGH_MODEL);
    let model = model.and_then(|m| {
        if pass_through {
            let template = ModelRef::Served { provider: Provider::OpenAi, upstream_model: m.trim().to_string() };
            return Some((template, m.trim().to_string()));
        }
        let parsed = parse_model_ref(&m, cost_map::bundled()).map_err(|e| c.error(&model_path, e)).ok()?;
        Some((parsed, m.trim().to_string()))
    });
    let (model, written_model) = match model {
        Some((ModelRef::NotServed { provider }, written)) => {
            let because = LeftOutBecause::ProviderNotServed(provider);
            return Some(Params::LeftOut { because, model: written, at: model_path });
        }
        Some((ModelRef::Unplaced(why), written)) => {
            let because = LeftOutBecause::ProviderUnknown(why);
            return Some(Params::LeftOut { because, model: written, at: model_path });
        }
        Some((ModelRef::Served { provider, upstream_model }, written)) => (Some((provider, upstream_model)), written),
        None => (None, String::new()),
    };
    let api_base_path = p.path.key("api_base");
    let written_base = c.optional(&mut p, "api_base", &kinds::STRING);
    let api_base = match written_base.as_deref().map(parse_api_base) {
        Some(Err(_)) => {
            // The rest of the entry is not read, as for a provider not served.
            let because = LeftOutBecause::Placeholder { key: "api_base", value: written_base.unwrap_or_default() };
            return Some(Params::LeftOut { because, model: written_model, at: api_base_path });
        }
        Some(Ok(base)) => Some(base),
        None => None,
    };
    let api_key = c.optional(&mut p, "api_key", &kinds::SECRET);
    let rpm = c.optional(&mut p, "rpm", &kinds::NON_NEGATIVE_INT);
    let tpm = c.optional(&mut p, "tpm", &kinds::NON_NEGATIVE_INT);
    let weight = c.optional(&mut p, "weight", &kinds::POSITIVE_INT);
    // LiteLLM takes any integer; 0 is a tier like the others, before 1.
    let order = c.optional(&mut p, "order", &kinds::NON_NEGATIVE_U32);
    let tags = c.optional(&mut p, "tags", &kinds::STRING_LIST);
    let region_name = c.optional(&mut p, "region_name", &kinds::STRING);
    let timeout = c.optional(&mut p, "timeout", &kinds::POSITIVE_SECONDS);
    let stream_timeout = c.optional(&mut p, "stream_timeout", &kinds::POSITIVE_SECONDS);
    let max_parallel = c.optional(&mut p, "max_parallel_requests", &kinds::POSITIVE_U32);
    let cooldown_time = c.optional(&mut p, "cooldown_time", &kinds::NON_NEGATIVE_SECONDS);
    let input_cost = c.optional(&mut p, "input_cost_per_token", &kinds::NON_NEGATIVE_NUMBER);
    let output_cost = c.optional(&mut p, "output_cost_per_token", &kinds::NON_NEGATIVE_NUMBER);
    let extra_body = read_extra_body(c, &mut p);
    let request_defaults = read_request_defaults(c, &mut p);
    let provider_params = read_provider_params(c, &mut p);
    c.warn_ignored(&p);

    let (provider, upstream_model) = model?;
    let written = pass_through.then(|| (api_base.clone(), api_key.clone()));
    let endpoint = match pass_through {
        true => Endpoint { upstream_model, api_base: String::new(), auth: None },
        false => endpoint(c, provider, upstream_model, api_base, &provider_params, &p.path)?,
    };
    let mut d = Deployment::new("", "", provider, &endpoint.upstream_model, &endpoint.api_base);
    d.auth = endpoint.auth;
    d.api_key = api_key;
    d.rpm = rpm;
    d.tpm = tpm;
    d.weight = weight;
    d.order = order;
    d.tags = tags.unwrap_or_default();
    d.region_name = region_name;
    d.timeout = timeout;
    d.stream_timeout = stream_timeout;
    d.max_parallel_requests = max_parallel;
    d.cooldown_time = cooldown_time;
    d.input_cost_per_token = input_cost;
    d.output_cost_per_token = output_cost;
    d.extra_body = extra_body;
    d.request_defaults = request_defaults;
    if let Some((base, key)) = written {
        return Some(Params::PassThrough { template: Box::new(d), base, key });
    }
    d.max_tokens_as_max_completion_tokens = takes_max_completion_tokens(provider, &d.upstream_model);
    apply_provider_params(c, provider_params, &mut d, &p.path);
    Some(Params::Served(Box::new(d), written_model))
}

/// What `model_info` may set for the router when `litellm_params` does not, and what the
/// filters read from it.
#[derive(Default)]
struct InfoKnobs {
    rpm: Option<u64>,
    tpm: Option<u64>,
    input_cost_per_token: Option<f64>,
    output_cost_per_token: Option<f64>,
    blocked: Option<bool>,
    supports_vision: Option<bool>,
    max_input_tokens: Option<u64>,
    max_tokens: Option<u64>,
    max_output_tokens: Option<u64>,
    /// `supports_*` for each of [`Param::ALL`], in that order.
    supports: [Option<bool>; Param::ALL.len()],
}

/// What `model_info` says.
#[derive(Default)]
struct ModelInfo {
    id: Option<String>,
    /// Everything but the id as JSON (with `os.environ/` substituted).
    kept: serde_json::Map<String, serde_json::Value>,
    knobs: InfoKnobs,
    /// `access_groups`: names a virtual key's `models` may use for this entry's group.
    access_groups: Vec<String>,
    /// `supported_environments`: where this entry serves (`None` = everywhere).
    supported_environments: Option<Vec<String>>,
    /// The policy router's attributes, when the entry sets any.
    policy: Option<PolicyAttrs>,
    /// `supported_endpoints` (LiteLLM's: `/v1/chat/completions`, `/v1/responses`, …).
    supported_endpoints: Option<Vec<String>>,
}

/// `model_info`: its `id`, the router's knobs, access groups, environments, and everything but
/// the id kept as JSON.
fn read_model_info(c: &mut Checker, entry: &mut Fields) -> ModelInfo {
    let mut kept = serde_json::Map::new();
    let Some(mut info) = c.optional_map(entry, "model_info") else {
        return ModelInfo::default();
    };
    let id = c.optional(&mut info, "id", &kinds::ID);
    // Read, with errors for bad values, and kept like the rest (the gateway's model info shows
    // them), as the numbers they were read as.
    let knobs = InfoKnobs {
        rpm: c.optional(&mut info, "rpm", &kinds::NON_NEGATIVE_INT),
        tpm: c.optional(&mut info, "tpm", &kinds::NON_NEGATIVE_INT),
        input_cost_per_token: c.optional(&mut info, "input_cost_per_token", &kinds::NON_NEGATIVE_NUMBER),
        output_cost_per_token: c.optional(&mut info, "output_cost_per_token", &kinds::NON_NEGATIVE_NUMBER),
        blocked: c.optional(&mut info, "blocked", &kinds::BOOL),
        supports_vision: c.optional(&mut info, "supports_vision", &kinds::BOOL),
        max_input_tokens: c.optional(&mut info, "max_input_tokens", &kinds::NON_NEGATIVE_INT),
        max_tokens: c.optional(&mut info, "max_tokens", &kinds::NON_NEGATIVE_INT),
        max_output_tokens: c.optional(&mut info, "max_output_tokens", &kinds::NON_NEGATIVE_INT),
        supports: Param::ALL.map(|p| c.optional(&mut info, p.supports_key(), &kinds::BOOL)),
    };
    let access_groups = c.optional(&mut info, "access_groups", &kinds::STRING_LIST);
    let supported_environments = c.optional(&mut info, "supported_environments", &kinds::STRING_LIST);
    let supported_endpoints = c.optional(&mut info, "supported_endpoints", &kinds::STRING_LIST);
    let policy = read_policy_attrs(c, &mut info);
    for (key, value, path) in info.untaken() {
        if let Some(value) = c.resolved(value, &path) {
            kept.insert(key.to_string(), value.to_json());
        }
    }
    let numbers = [("rpm", knobs.rpm.map(serde_json::Value::from)), ("tpm", knobs.tpm.map(serde_json::Value::from))];
    let prices = [
        ("input_cost_per_token", knobs.input_cost_per_token.map(serde_json::Value::from)),
        ("output_cost_per_token", knobs.output_cost_per_token.map(serde_json::Value::from)),
    ];
    let limits = [
        ("max_input_tokens", knobs.max_input_tokens.map(serde_json::Value::from)),
        ("max_tokens", knobs.max_tokens.map(serde_json::Value::from)),
        ("max_output_tokens", knobs.max_output_tokens.map(serde_json::Value::from)),
    ];
    let lists = [
        ("access_groups", &access_groups),
        ("supported_environments", &supported_environments),
        ("supported_endpoints", &supported_endpoints),
    ]
    .map(|(k, v)| (k, v.as_ref().map(|v| serde_json::Value::from(v.clone()))));
    let flags = [("blocked", knobs.blocked), ("supports_vision", knobs.supports_vision)]
        .into_iter()
        .chain(Param::ALL.into_iter().map(|p| p.supports_key()).zip(knobs.supports))
        .map(|(k, v)| (k, v.map(serde_json::Value::from)));
    for (key, value) in numbers.into_iter().chain(prices).chain(limits).chain(lists).chain(flags) {
        if let Some(value) = value {
            kept.insert(key.to_string(), value);
        }
    }
    for (key, value) in policy.kept {
        kept.insert(key.to_string(), value);
    }
    ModelInfo {
        id,
        kept,
        knobs,
        access_groups: access_groups.unwrap_or_default(),
        supported_environments,
        policy: policy.attrs,
        supported_endpoints,
    }
}
