//! Helpers of the cluster tests (`cluster.rs`, `cluster_errors.rs`).
#![allow(dead_code)]

use pointwork_config::{load_str, ClusterSettings, ConfigErrors, Loaded, RedisServer};

/// One deployment, before the sections under test.
pub const MODELS: &str =
    "model_list:\n  - model_name: g\n    litellm_params: {model: openai/gpt-4o, api_key: sk-test-0000}\n";
pub const IGNORED: &str = "ignored: not implemented by Pointwork yet";

/// Loads [`MODELS`] and `sections` in a process environment of exactly `vars`.
pub fn load_with(sections: &str, vars: &[(&str, &str)]) -> Result<Loaded, ConfigErrors> {
    let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let env = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    load_str(&format!("{MODELS}{sections}"), &super::common::fixtures(), &env)
}

pub fn loaded(sections: &str, vars: &[(&str, &str)]) -> Loaded {
    load_with(sections, vars).unwrap_or_else(|e| panic!("{e}"))
}

/// The cluster settings (Redis must be on) and the warnings.
pub fn cluster(sections: &str, vars: &[(&str, &str)]) -> (ClusterSettings, Vec<String>) {
    let loaded = loaded(sections, vars);
    let warnings = loaded.warnings.iter().map(ToString::to_string).collect();
    (loaded.config.gateway.cluster.expect("Redis is on"), warnings)
}

/// The warnings of a config that must load without Redis.
pub fn no_cluster(sections: &str, vars: &[(&str, &str)]) -> Vec<String> {
    let loaded = loaded(sections, vars);
    assert_eq!(loaded.config.gateway.cluster, None);
    loaded.warnings.iter().map(ToString::to_string).collect()
}

/// Every error (`path: message`) of a config that must be refused.
pub fn errors(sections: &str, vars: &[(&str, &str)]) -> Vec<String> {
    match load_with(sections, vars) {
        Ok(loaded) => panic!("expected errors, got {:?}", loaded.config.gateway.cluster),
        Err(e) => e.0.iter().map(ToString::to_string).collect(),
    }
}

/// A server on `host:port` without TLS, user, password, on database 0.
pub fn plain(host: &str, port: u16) -> RedisServer {
    RedisServer { tls: false, host: host.into(), port, username: None, password: None, db: 0 }
}

/// Every variable LiteLLM's Redis client reads, each naming something else.
pub const ALL_REDIS_VARS: [(&str, &str); 7] = [
    ("REDIS_URL", "redis://env-url:7000/1"),
    ("REDIS_HOST", "env-host"),
    ("REDIS_PORT", "7001"),
    ("REDIS_PASSWORD", "env-password"),
    ("REDIS_USERNAME", "env-user"),
    ("REDIS_SSL", "true"),
    ("REDIS_DB", "4"),
];
