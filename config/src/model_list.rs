//! LiteLLM's `model_list`: each entry becomes one [`Deployment`].

use pointwork_core::{Deployment, Param};

use crate::api_base::parse_api_base;
use crate::check::{Checker, Fields, KeyPath};
use crate::deployment_id::derive_id;
use crate::include::ModelList;
use crate::kinds;
use crate::model_ref::parse_model_ref;
use crate::node::Node;
use crate::{DeploymentInfo, EntrySource};

/// One compiled entry: the router's view and the rest of what the config says about it.
pub(crate) struct CompiledEntry {
    pub(crate) deployment: Deployment,
    pub(crate) info: DeploymentInfo,
    /// `litellm_params.model` as written (after `os.environ/`), for the model cost map.
    pub(crate) model: String,
}

/// Compiles every file's `model_list`. Returns the entries that compiled and how many entries
/// there were in all (to tell an empty list from a list of bad entries).
pub(crate) fn read_model_lists(c: &mut Checker, lists: &[ModelList]) -> (Vec<CompiledEntry>, usize) {
    let mut compiled = Vec::new();
    let mut total = 0;
    for list in lists {
        if matches!(list.node, Node::Null) {
            continue;
        }
        let Some(items) = c.list(&list.node, &list.path) else {
            continue;
        };
        for (index, item) in items.iter().enumerate() {
            total += 1;
            let source = EntrySource { file: list.path.file().map(|f| f.to_string()), index };
            if let Some(entry) = read_entry(c, item, list.path.index(index), source) {
                compiled.push(entry);
            }
        }
    }
    (compiled, total)
}

fn read_entry(c: &mut Checker, node: &Node, path: KeyPath, source: EntrySource) -> Option<CompiledEntry> {
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
    let (explicit_id, model_info, info_knobs) = read_model_info(c, &mut entry);
    c.warn_ignored(&entry);

    let (((mut deployment, model), params_node), model_name) = (params?, model_name?);
    deployment.model_name = model_name;
    // LiteLLM reads these from model_info when litellm_params does not set them.
    deployment.rpm = deployment.rpm.or(info_knobs.rpm);
    deployment.tpm = deployment.tpm.or(info_knobs.tpm);
    deployment.input_cost_per_token = deployment.input_cost_per_token.or(info_knobs.input_cost_per_token);
    deployment.output_cost_per_token = deployment.output_cost_per_token.or(info_knobs.output_cost_per_token);
    deployment.blocked = info_knobs.blocked.unwrap_or(false);
    deployment.supports_vision = info_knobs.supports_vision;
    deployment.max_input_tokens = info_knobs.max_input_tokens;
    deployment.max_tokens = info_knobs.max_tokens;
    for (param, supported) in Param::ALL.into_iter().zip(info_knobs.supports) {
        if supported == Some(false) {
            deployment.unsupported_params.insert(param);
        }
    }
    let derived_id = explicit_id.is_none();
    deployment.id = match explicit_id {
        Some(id) => id,
        None => derive_id(&raw_model_name?, params_node),
    };
    Some(CompiledEntry { deployment, info: DeploymentInfo { source, derived_id, model_info }, model })
}

/// A string value as written (before `os.environ/` substitution), for the derived id.
fn entry_string(node: &Node, key: &str) -> Option<String> {
    match node.get(key) {
        Some(Node::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

/// `litellm_params` → a deployment with an empty id and group name (the caller sets them), and
/// the model as written.
fn read_litellm_params(c: &mut Checker, mut p: Fields) -> Option<(Deployment, String)> {
    let model_path = p.path.key("model");
    let model = c.required(&mut p, "model", &kinds::NON_EMPTY_STRING).and_then(|m| {
        let parsed = parse_model_ref(&m).map_err(|e| c.error(&model_path, e)).ok()?;
        Some((parsed, m.trim().to_string()))
    });
    let api_base_path = p.path.key("api_base");
    let api_base = c
        .optional(&mut p, "api_base", &kinds::STRING)
        .and_then(|b| parse_api_base(&b).map_err(|e| c.error(&api_base_path, e)).ok());
    let api_key = c.optional(&mut p, "api_key", &kinds::SECRET);
    let rpm = c.optional(&mut p, "rpm", &kinds::NON_NEGATIVE_INT);
    let tpm = c.optional(&mut p, "tpm", &kinds::NON_NEGATIVE_INT);
    let weight = c.optional(&mut p, "weight", &kinds::POSITIVE_INT);
    let order = c.optional(&mut p, "order", &kinds::POSITIVE_U32);
    let tags = c.optional(&mut p, "tags", &kinds::STRING_LIST);
    let region_name = c.optional(&mut p, "region_name", &kinds::STRING);
    let timeout = c.optional(&mut p, "timeout", &kinds::POSITIVE_SECONDS);
    let stream_timeout = c.optional(&mut p, "stream_timeout", &kinds::POSITIVE_SECONDS);
    let max_parallel = c.optional(&mut p, "max_parallel_requests", &kinds::POSITIVE_U32);
    let cooldown_time = c.optional(&mut p, "cooldown_time", &kinds::NON_NEGATIVE_SECONDS);
    let input_cost = c.optional(&mut p, "input_cost_per_token", &kinds::NON_NEGATIVE_NUMBER);
    let output_cost = c.optional(&mut p, "output_cost_per_token", &kinds::NON_NEGATIVE_NUMBER);
    c.warn_ignored(&p);

    let (model, written) = model?;
    let api_base = match (api_base, model.provider.default_api_base()) {
        (Some(base), _) => base,
        (None, Some(default)) => default.to_string(),
        (None, None) => {
            c.error(
                api_base_path,
                format!("required for {} (a self-hosted server has no default address)", model.provider.prefix()),
            );
            return None;
        }
    };
    let mut d = Deployment::new("", "", model.provider, &model.upstream_model, &api_base);
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
    Some((d, written))
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
    /// `supports_*` for each of [`Param::ALL`], in that order.
    supports: [Option<bool>; Param::ALL.len()],
}

/// `model_info`: its `id`, the router's knobs, and everything but the id kept as JSON (with
/// `os.environ/` substituted).
fn read_model_info(
    c: &mut Checker,
    entry: &mut Fields,
) -> (Option<String>, serde_json::Map<String, serde_json::Value>, InfoKnobs) {
    let mut kept = serde_json::Map::new();
    let Some(mut info) = c.optional_map(entry, "model_info") else {
        return (None, kept, InfoKnobs::default());
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
        supports: Param::ALL.map(|p| c.optional(&mut info, p.supports_key(), &kinds::BOOL)),
    };
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
    ];
    let flags = [("blocked", knobs.blocked), ("supports_vision", knobs.supports_vision)]
        .into_iter()
        .chain(Param::ALL.into_iter().map(|p| p.supports_key()).zip(knobs.supports))
        .map(|(k, v)| (k, v.map(serde_json::Value::from)));
    for (key, value) in numbers.into_iter().chain(prices).chain(limits).chain(flags) {
        if let Some(value) = value {
            kept.insert(key.to_string(), value);
        }
    }
    (id, kept, knobs)
}
