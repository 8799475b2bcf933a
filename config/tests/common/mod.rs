//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};

use pointwork_config::{load_str, ConfigErrors, Loaded};

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn fixture(name: &str) -> PathBuf {
    fixtures().join(name)
}

/// The process environment the tests pretend to run in.
pub fn test_env(name: &str) -> Option<String> {
    let value = match name {
        "OPENAI_API_KEY" => "sk-openai-test-key-1111",
        "OPENROUTER_API_KEY" => "sk-or-test-key-2222",
        "GROQ_API_KEY" => "gsk-from-process-9999",
        "LITELLM_MASTER_KEY" => "sk-master-secret-3333",
        // `router_settings.redis_host` of the realistic config.
        "REDIS_HOST" => "redis.internal",
        _ => return None,
    };
    Some(value.to_string())
}

/// Loads YAML text with the test environment, resolving includes in `tests/fixtures`.
pub fn load(yaml: &str) -> Result<Loaded, ConfigErrors> {
    load_str(yaml, &fixtures(), &test_env)
}

/// Loads YAML text that must fail, and returns every error as `path: message` lines.
pub fn errors(yaml: &str) -> Vec<String> {
    match load(yaml) {
        Ok(loaded) => panic!("expected errors, got a config: {:?}", loaded.config),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}
