//! Models stored in LiteLLM's database (`general_settings.store_model_in_db`), compiled with
//! the config file's: each row is a `model_list` entry, read by the same code, its problems
//! named by its row (`LiteLLM_ProxyModelTable[model_id=…].litellm_params.model`). A row that
//! does not compile is left out with a warning: a bad row never takes the gateway down, nor
//! refuses the config file.

use std::collections::HashMap;

use crate::check::{Checker, KeyPath};
use crate::env::Env;
use crate::load::{fill_from_cost_map, grant_access_groups};
use crate::model_list::read_stored_entry;
use crate::node::Node;
use crate::{Config, ConfigWarning, EntrySource};

/// One stored model: its row's name for messages, and the row as a `model_list` entry
/// (`{"model_name", "litellm_params", "model_info"}`, secrets decrypted, `model_info.id` the
/// row's `model_id`).
#[derive(Clone, PartialEq)]
pub struct StoredModel {
    pub row: String,
    pub entry: serde_json::Value,
}

/// The row's name only: the entry holds secrets.
impl std::fmt::Debug for StoredModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredModel").field("row", &self.row).finish_non_exhaustive()
    }
}

/// What became of the stored models.
#[derive(Clone, Debug, PartialEq)]
pub struct WithStoredModels {
    /// The config file's deployments, then the stored ones that compiled.
    pub config: Config,
    /// How many stored models serve.
    pub served: usize,
    pub warnings: Vec<ConfigWarning>,
}

impl Config {
    /// This config with the stored models added (`os.environ/` read from the process).
    pub fn with_stored_models(&self, models: &[StoredModel]) -> WithStoredModels {
        let process = |name: &str| std::env::var(name).ok();
        self.with_stored_models_in(models, &process)
    }

    /// [`Config::with_stored_models`] with `os.environ/` looked up in `env`.
    pub fn with_stored_models_in(
        &self,
        models: &[StoredModel],
        env: &dyn Fn(&str) -> Option<String>,
    ) -> WithStoredModels {
        let mut config = self.clone();
        let mut warnings = Vec::new();
        let mut ids: HashMap<String, EntrySource> = config
            .deployments
            .iter()
            .zip(&config.deployment_info)
            .map(|(d, i)| (d.id.clone(), i.source.clone()))
            .collect();
        let mut served = 0;
        for (index, model) in models.iter().enumerate() {
            let mut c = Checker::new(Env::new(env));
            let source = EntrySource { file: None, index, stored: Some(model.row.clone()) };
            let path = KeyPath::root(None).key(&model.row);
            let entry = read_stored_entry(&mut c, &Node::from(&model.entry), path, source.clone());
            let entry = entry.filter(|_| c.error_count() == 0).map(|mut e| {
                fill_from_cost_map(&mut c, &self.gateway.model_cost_map, None, std::slice::from_mut(&mut e));
                e
            });
            let (errors, said) = c.finish();
            warnings.extend(said);
            let left_out = "the stored model is left out; the rest serve without it";
            warnings.extend(
                errors
                    .into_iter()
                    .map(|e| ConfigWarning { path: e.path, message: format!("{}; {left_out}", e.message) }),
            );
            let Some(entry) = entry else { continue };
            if let Some(first) = ids.get(&entry.deployment.id) {
                warnings.push(ConfigWarning {
                    path: source.key_path("model_info.id"),
                    message: format!(
                        "duplicate deployment id {:?} (first used by {first}); {left_out}",
                        entry.deployment.id
                    ),
                });
                continue;
            }
            ids.insert(entry.deployment.id.clone(), source);
            config.deployments.push(entry.deployment);
            config.deployment_info.push(entry.info);
            served += 1;
        }
        grant_access_groups(&mut config.auth, &config.deployments, &config.deployment_info);
        WithStoredModels { config, served, warnings }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Config {
        let yaml = "model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/gpt-4o, api_base: http://127.0.0.1:9/v1}\n    model_info: {id: file-1}\n";
        crate::load_str(yaml, std::path::Path::new("."), &|_| None).unwrap().config
    }

    fn stored(id: &str, entry: serde_json::Value) -> StoredModel {
        StoredModel { row: format!("LiteLLM_ProxyModelTable[model_id={id}]"), entry }
    }

    #[test]
    fn good_rows_serve_and_bad_rows_are_left_out_with_their_row_named() {
        let env = |name: &str| (name == "UP_KEY").then(|| "sk-env".to_string());
        let rows = [
            stored(
                "m-1",
                json!({"model_name": "db-gpt", "litellm_params": {"model": "openai/gpt-4o-mini",
                "api_key": "os.environ/UP_KEY", "api_base": "http://127.0.0.1:10/v1"}, "model_info": {"id": "m-1", "db_model": true}}),
            ),
            stored(
                "m-2",
                json!({"model_name": "bad", "litellm_params": {"api_base": "http://x/v1"}, "model_info": {"id": "m-2"}}),
            ),
            stored(
                "file-1",
                json!({"model_name": "gpt", "litellm_params": {"model": "openai/gpt-4o"}, "model_info": {"id": "file-1"}}),
            ),
        ];
        let out = base().with_stored_models_in(&rows, &env);
        assert_eq!(out.served, 1);
        let ids: Vec<&str> = out.config.deployments.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["file-1", "m-1"]);
        let d = &out.config.deployments[1];
        assert_eq!((d.model_name.as_str(), d.api_key.as_deref()), ("db-gpt", Some("sk-env")));
        assert_eq!(out.config.deployment_info[1].source.to_string(), "LiteLLM_ProxyModelTable[model_id=m-1]");
        let said: Vec<String> = out.warnings.iter().map(ToString::to_string).collect();
        assert!(
            said.iter().any(|w| w.starts_with("LiteLLM_ProxyModelTable[model_id=m-2].litellm_params.model: ")
                && w.ends_with("the stored model is left out; the rest serve without it")),
            "{said:#?}"
        );
        assert!(
            said.iter()
                .any(|w| w
                    .starts_with("LiteLLM_ProxyModelTable[model_id=file-1].model_info.id: duplicate deployment id")),
            "{said:#?}"
        );
        assert!(out.config.snapshot().is_ok());
    }

    #[test]
    fn with_models_in_the_database_the_file_may_have_none() {
        let dir = std::path::Path::new(".");
        let yaml = "general_settings:\n  database_url: postgresql://h/db\n  store_model_in_db: true\n";
        let loaded = crate::load_str(yaml, dir, &|_| None).unwrap();
        assert!(loaded.config.deployments.is_empty());
        assert!(loaded.config.database.as_ref().unwrap().store_model_in_db);
        let yaml = "general_settings:\n  database_url: postgresql://h/db\n";
        let env = |n: &str| (n == "STORE_MODEL_IN_DB").then(|| "True".to_string());
        assert!(
            crate::load_str(yaml, dir, &env).unwrap().config.database.unwrap().store_model_in_db,
            "LiteLLM's env switch"
        );
        assert!(crate::load_str(yaml, dir, &|_| None).is_err(), "without it, a deployment is required");
    }

    #[test]
    fn the_stored_models_are_read_again_as_often_as_litellm_polls() {
        let dir = std::path::Path::new(".");
        let poll = |yaml: &str, env: &dyn Fn(&str) -> Option<String>| {
            crate::load_str(yaml, dir, env).unwrap().config.database.unwrap().models_poll_interval.as_secs()
        };
        let yaml = "general_settings:\n  database_url: postgresql://h/db\n  store_model_in_db: true\n";
        assert_eq!(poll(yaml, &|_| None), 30);
        let env = |n: &str| (n == "PROXY_CONFIG_RELOAD_INTERVAL_SECONDS").then(|| "7".to_string());
        assert_eq!(poll(yaml, &env), 7);
        let yaml = format!("{yaml}  proxy_config_reload_interval_seconds: 2\n");
        assert_eq!(poll(&yaml, &env), 2, "the config's key wins");
    }

    #[test]
    fn secrets_are_written_as_the_encryption_algorithm_says() {
        let dir = std::path::Path::new(".");
        let gcm = |extra: &str| {
            let yaml =
                format!("general_settings:\n  database_url: postgresql://h/db\n  store_model_in_db: true\n{extra}");
            let loaded = crate::load_str(&yaml, dir, &|_| None).unwrap();
            (loaded.config.database.unwrap().encrypt_with_aes_gcm, loaded.warnings.len())
        };
        assert_eq!(gcm(""), (false, 0));
        assert_eq!(gcm("  encryption_algorithm: AES-256-GCM\n"), (true, 0));
        assert_eq!(gcm("  encryption_algorithm: xsalsa20-poly1305\n"), (false, 0));
        assert_eq!(gcm("  encryption_algorithm: rot13\n"), (false, 1), "an unknown one is LiteLLM's default, said");
    }

    #[test]
    fn a_fallback_may_name_a_model_only_the_database_has() {
        let dir = std::path::Path::new(".");
        let yaml = "model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/gpt-4o}\n\
                    router_settings:\n  fallbacks: [{gpt: [db-only]}]\n\
                    general_settings:\n  database_url: postgresql://h/db\n  store_model_in_db: true\n";
        let loaded = crate::load_str(yaml, dir, &|_| None).unwrap();
        let said: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
        assert!(said.iter().any(|w| w.contains("\"db-only\" is not in the config file's model list")), "{said:?}");
        assert_eq!(loaded.config.router.fallbacks.generic.for_group("gpt"), ["db-only"], "the rule stays");
        let without = yaml.replace("  store_model_in_db: true\n", "");
        assert!(crate::load_str(&without, dir, &|_| None).is_err(), "without stored models it names nothing");
    }
}
