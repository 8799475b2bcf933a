//! Every file of the corpus of real LiteLLM configs (`tests/fixtures/litellm-configs/`, sources
//! in its `SOURCES.md`) checked by the real `pointwork check --config FILE`, against the outcome
//! its manifest (`expected.txt`) gives it: `FILE loads` (exit 0, warnings allowed) or
//! `FILE refused KEY.PATH` (a non-zero exit whose errors name that key path).
//!
//! The check runs in a fixed environment, as a user who set the variables their config names
//! would run it: the process environment is cleared, then
//! - every variable the file names with `os.environ/NAME` is set to a plausible value made from
//!   its name ([`plausible_value`]): an address for `…_API_BASE`, `…_URL`, `…_HOST…`, a port
//!   for `…_PORT`, a Google credentials file (the repository's test-only service account) for
//!   `…CREDENTIALS…`, a region, project, API version, ARN or model where the name says so, else
//!   a key;
//! - the variables LiteLLM reads for its common providers without the config naming them
//!   ([`COMMON_ENV`]) are set as a user of those providers sets them.
//!
//! Nothing else is set: no cloud credentials a config does not name (AWS's default chain and
//! Google's Application Default Credentials are not faked here), no `LITELLM_ENVIRONMENT`.
//!
//! `POINTWORK_CORPUS_ACTUAL=PATH` writes every file's actual outcome there, in the manifest's
//! format (to review a change in what loads).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The variables a user of LiteLLM's common providers sets without naming them in the config
/// (LiteLLM reads them when an entry gives no key or address).
const COMMON_ENV: [(&str, &str); 6] = [
    ("OPENAI_API_KEY", "sk-test-openai"),
    ("ANTHROPIC_API_KEY", "sk-ant-test"),
    ("AZURE_API_KEY", "test-azure-key"),
    ("AZURE_API_BASE", "https://my-resource.openai.azure.com"),
    ("AZURE_API_VERSION", "2024-10-21"),
    ("GEMINI_API_KEY", "test-gemini-key"),
];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/litellm-configs")
}

/// A value a user would give `name`, judged by its name.
fn plausible_value(name: &str) -> String {
    let upper = name.to_ascii_uppercase();
    let host = upper.to_ascii_lowercase().replace('_', "-");
    let has = |part: &str| upper.contains(part);
    if upper == "DATABASE_URL" {
        "postgresql://litellm:password@db.internal:5432/litellm".into()
    } else if upper == "REDIS_HOST" {
        "redis.internal".into()
    } else if has("PORT") {
        "6379".into()
    } else if has("CREDENTIALS") && !has("KEY") {
        // A Google credentials file, as `vertex_credentials: os.environ/…` reads it.
        concat!(env!("CARGO_MANIFEST_DIR"), "/../config/tests/fixtures/test-only-service-account.json").into()
    } else if has("REGION") {
        "us-east-1".into()
    } else if has("LOCATION") {
        "us-central1".into()
    } else if has("PROJECT") && !has("KEY") && !has("SECRET") && !has("PUBLIC") {
        "my-project-123".into()
    } else if has("VERSION") {
        "2024-10-21".into()
    } else if has("ARN") {
        "arn:aws:iam::123456789012:role/litellm".into()
    } else if has("BASE") || has("URL") || has("HOST") || has("ENDPOINT") {
        format!("https://{host}.example.com")
    } else if has("MODEL") && !has("KEY") && !has("NAME") {
        "openai/gpt-4o-mini".into()
    } else {
        format!("test-{host}")
    }
}

/// The names a file reads with `os.environ/NAME`.
fn named_variables(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .split("os.environ/")
        .skip(1)
        .map(|rest| rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>())
        .filter(|n| !n.is_empty())
        .collect();
    names.sort();
    names.dedup();
    names
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Loads,
    Refused(String),
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Loads => f.write_str("loads"),
            Outcome::Refused(path) => write!(f, "refused {path}"),
        }
    }
}

/// `expected.txt`: `FILE loads` or `FILE refused KEY.PATH`, `#` starting a comment.
fn manifest() -> BTreeMap<String, Outcome> {
    let text = std::fs::read_to_string(corpus_dir().join("expected.txt")).expect("expected.txt");
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let outcome = match words[1..] {
            ["loads"] => Outcome::Loads,
            ["refused", path] => Outcome::Refused(path.to_string()),
            _ => panic!("expected.txt:{}: expected `FILE loads` or `FILE refused KEY.PATH`: {line}", n + 1),
        };
        assert!(out.insert(words[0].to_string(), outcome).is_none(), "expected.txt: {} twice", words[0]);
    }
    out
}

/// `pointwork check` on `file` in the test environment: its exit status and its output.
fn check(file: &Path) -> (bool, String) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut command = Command::new(env!("CARGO_BIN_EXE_pointwork"));
    command.args(["check", "--config"]).arg(file).current_dir(corpus_dir()).env_clear();
    command.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    command.envs(COMMON_ENV);
    for name in named_variables(&text) {
        let value = plausible_value(&name);
        command.env(name, value);
    }
    let out = command.output().expect("pointwork runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// The key path of the first error `check` printed (`model_list[2].litellm_params.api_base`).
fn first_error_path(output: &str) -> String {
    let errors = output.split_once("invalid config:\n").map_or(output, |(_, e)| e);
    let first = errors.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let path = first.split(": ").next().unwrap_or(first);
    // A YAML error names the file, line and column: keep the file's name, not where it lies.
    path.rsplit('/').next().unwrap_or(path).to_string()
}

#[test]
fn every_config_of_the_corpus_loads_or_is_refused_as_the_manifest_says() {
    let expected = manifest();
    let mut files: Vec<String> = std::fs::read_dir(corpus_dir())
        .expect("the corpus")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".yml"))
        .collect();
    files.sort();
    assert!(files.len() >= 100, "the corpus has {} files", files.len());
    let unlisted: Vec<&String> = files.iter().filter(|f| !expected.contains_key(*f)).collect();
    let missing: Vec<&String> = expected.keys().filter(|f| !files.contains(f)).collect();
    assert!(unlisted.is_empty() && missing.is_empty(), "not in expected.txt: {unlisted:?}; no such file: {missing:?}");

    let mut actual = String::new();
    let mut wrong = Vec::new();
    for file in &files {
        let (ok, output) = check(&corpus_dir().join(file));
        let outcome = if ok { Outcome::Loads } else { Outcome::Refused(first_error_path(&output)) };
        actual.push_str(&format!("{file} {outcome}\n"));
        let right = match &expected[file] {
            Outcome::Loads => ok,
            Outcome::Refused(path) => !ok && output.contains(&format!("{path}: ")),
        };
        if !right {
            wrong.push(format!("{file}: expected {}, got:\n{output}", expected[file]));
        }
    }
    if let Some(path) = std::env::var_os("POINTWORK_CORPUS_ACTUAL") {
        std::fs::write(path, &actual).expect("write the actual outcomes");
    }
    assert!(
        wrong.is_empty(),
        "{} of {} files differ from expected.txt:\n\n{}",
        wrong.len(),
        files.len(),
        wrong.join("\n")
    );
}

#[test]
fn plausible_values_follow_the_names() {
    assert_eq!(plausible_value("AZURE_API_BASE"), "https://azure-api-base.example.com");
    assert_eq!(plausible_value("REDIS_PORT"), "6379");
    assert_eq!(plausible_value("AWS_REGION_NAME"), "us-east-1");
    assert_eq!(plausible_value("OPENAI_API_KEY"), "test-openai-api-key");
    assert_eq!(plausible_value("DEFAULT_LITELLM_MODEL"), "openai/gpt-4o-mini");
    assert_eq!(plausible_value("DEFAULT_LITELLM_MODEL_API_BASE"), "https://default-litellm-model-api-base.example.com");
    assert_eq!(
        named_variables("a: os.environ/B_KEY\nb: \"os.environ/A_BASE\"\nc: os.environ/B_KEY"),
        ["A_BASE", "B_KEY"]
    );
}
