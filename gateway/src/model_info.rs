//! `GET /model/info` (also `/v1/model/info`, `/v2/model/info`): LiteLLM's list of every
//! deployment — the config file's and the database's (`model_info.db_model`) — as
//! `{"data": [{"model_name", "litellm_params", "model_info"}]}`, with no secret in it (LiteLLM's
//! `remove_sensitive_info_from_deployment`: no api key, no credential). A key sees the
//! deployments of the model groups it may use; `?litellm_model_id=` picks one deployment.

use pointwork_config::Config;
use pointwork_core::Snapshot;
use serde_json::{json, Map, Value};

use crate::errors::typed_error;
use crate::keys::Caller;
use crate::respond::Reply;

/// One deployment as `/model/info` shows it, with what filters it.
#[derive(Clone, Debug)]
pub struct ModelInfoEntry {
    pub group: String,
    pub id: String,
    pub json: Value,
}

/// Every deployment of `config`, in its order.
pub fn model_info_entries(config: &Config) -> Vec<ModelInfoEntry> {
    config
        .deployments
        .iter()
        .zip(&config.deployment_info)
        .map(|(d, info)| {
            let mut params = Map::new();
            params.insert("model".into(), json!(info.model));
            if !d.api_base.is_empty() {
                params.insert("api_base".into(), json!(d.api_base));
            }
            let numbers = [("rpm", d.rpm), ("tpm", d.tpm), ("weight", d.weight), ("order", d.order.map(u64::from))];
            for (k, v) in numbers {
                if let Some(v) = v {
                    params.insert(k.into(), json!(v));
                }
            }
            if !d.tags.is_empty() {
                params.insert("tags".into(), json!(d.tags));
            }
            if let Some(region) = &d.region_name {
                params.insert("region_name".into(), json!(region));
            }
            let mut model_info = Map::new();
            model_info.insert("id".into(), json!(d.id));
            model_info.insert("db_model".into(), json!(info.source.stored.is_some()));
            for (k, v) in &info.model_info {
                model_info.insert(k.clone(), v.clone());
            }
            let json = json!({"model_name": d.model_name, "litellm_params": params, "model_info": model_info});
            ModelInfoEntry { group: d.model_name.clone(), id: d.id.clone(), json }
        })
        .collect()
}

/// Serves `/model/info` for `caller`; `query` without its `?`.
pub fn serve(entries: &[ModelInfoEntry], snapshot: &Snapshot, caller: &Caller, query: &str) -> Reply {
    let may_see = |e: &ModelInfoEntry| caller.virtual_key().is_none_or(|k| k.may_use(&e.group, snapshot));
    let wanted = query.split('&').find_map(|pair| pair.strip_prefix("litellm_model_id=")).filter(|v| !v.is_empty());
    let data: Vec<&Value> = match wanted {
        Some(id) => {
            let found = entries.iter().find(|e| e.id == id && may_see(e));
            match found {
                Some(e) => vec![&e.json],
                None => {
                    let message = format!("{{'error': 'Model id = {id} not found on litellm proxy'}}");
                    return Reply::json(400, typed_error(400, "invalid_request_error", &message, None));
                }
            }
        }
        None => entries.iter().filter(|e| may_see(e)).map(|e| &e.json).collect(),
    };
    Reply::json(200, json!({ "data": data }).to_string().into_bytes())
}
