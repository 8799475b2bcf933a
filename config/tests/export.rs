//! Where traces go, read from LiteLLM's callback names and variables and from
//! `pointwork.telemetry`.

use std::path::Path;
use std::time::Duration;

use pointwork_config::{load_str, ExportSettings, Loaded};

const MODELS: &str = "model_list:\n  - model_name: m\n    litellm_params: {model: openai/gpt-4o, api_key: sk-x}\n";

fn load_with(yaml: &str, vars: &[(&str, &str)]) -> Loaded {
    let env = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string());
    match load_str(&format!("{MODELS}{yaml}"), Path::new("."), &env) {
        Ok(loaded) => loaded,
        Err(e) => panic!("refused: {e:?}"),
    }
}

fn export(yaml: &str, vars: &[(&str, &str)]) -> ExportSettings {
    load_with(yaml, vars).config.export
}

fn warnings(yaml: &str, vars: &[(&str, &str)]) -> Vec<String> {
    load_with(yaml, vars).warnings.iter().map(|w| w.to_string()).collect()
}

#[test]
fn nothing_is_exported_unless_named() {
    let e = export("", &[("OTEL_ENDPOINT", "http://c:4318"), ("LANGFUSE_PUBLIC_KEY", "pk")]);
    assert_eq!(e, ExportSettings::default());
    assert!(!e.traces());
}

#[test]
fn litellm_otel_callback_with_its_variables() {
    let vars = [
        ("OTEL_EXPORTER", "otlp_http"),
        ("OTEL_ENDPOINT", "http://collector:4318"),
        ("OTEL_HEADERS", "x-honeycomb-team=secret-team-key"),
        ("OTEL_SERVICE_NAME", "edge"),
    ];
    let e = export("litellm_settings:\n  callbacks: [\"otel\"]\n", &vars);
    let otlp = e.otlp.expect("otlp on");
    assert_eq!(otlp.endpoint, "http://collector:4318/v1/traces");
    assert_eq!(otlp.headers, [("x-honeycomb-team".to_string(), "secret-team-key".to_string())]);
    assert_eq!(otlp.service_name, "edge");
    assert_eq!(otlp.timeout, Duration::from_secs(10));
    assert!(!e.content, "content is opt-in");
}

#[test]
fn the_standard_variables_turn_otlp_on_and_off() {
    let on = export("", &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318/"), ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500")]);
    let otlp = on.otlp.expect("the standard endpoint turns it on");
    assert_eq!((otlp.endpoint.as_str(), otlp.timeout), ("http://c:4318/v1/traces", Duration::from_millis(2500)));
    assert_eq!(otlp.service_name, "pointwork");
    let exact = export("", &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:9/custom")]);
    assert_eq!(exact.otlp.unwrap().endpoint, "http://c:9/custom", "the traces endpoint is taken as given");
    let off = export(
        "litellm_settings:\n  callbacks: otel\n",
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"), ("OTEL_SDK_DISABLED", "true")],
    );
    assert_eq!(off.otlp, None);
}

#[test]
fn otel_without_an_endpoint_is_a_warning() {
    let w = warnings("litellm_settings:\n  callbacks: [otel]\n", &[]);
    assert!(w.iter().any(|w| w.contains("otel: no endpoint")), "{w:?}");
}

#[test]
fn langfuse_callbacks_say_which_requests_go() {
    let vars =
        [("LANGFUSE_PUBLIC_KEY", "pk-lf-1"), ("LANGFUSE_SECRET_KEY", "sk-lf-1"), ("LANGFUSE_HOST", "lf.internal:3000")];
    let success = export("litellm_settings:\n  success_callback: [langfuse]\n", &vars).langfuse.unwrap();
    assert_eq!((success.successes, success.failures), (true, false));
    assert_eq!(success.host, "http://lf.internal:3000", "LiteLLM prefixes http:// to a bare host");
    assert_eq!((success.timeout, success.environment.as_deref()), (Duration::from_secs(20), None));
    assert_eq!((success.public_key.as_str(), success.secret_key.as_str()), ("pk-lf-1", "sk-lf-1"));
    let both = export("litellm_settings:\n  success_callback: [langfuse]\n  failure_callback: [langfuse]\n", &vars)
        .langfuse
        .unwrap();
    assert_eq!((both.successes, both.failures), (true, true));
    let cloud = export("litellm_settings:\n  callbacks: [langfuse]\n", &vars[..2]).langfuse.unwrap();
    assert_eq!(cloud.host, "https://cloud.langfuse.com");
    let w = warnings("litellm_settings:\n  callbacks: [langfuse]\n", &[]);
    assert!(w.iter().any(|w| w.contains("LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are needed")), "{w:?}");
}

#[test]
fn langfuse_reads_the_other_variables_litellm_reads() {
    let vars = [
        ("LANGFUSE_PUBLIC_KEY", "pk-lf-1"),
        ("LANGFUSE_SECRET_KEY", "sk-lf-1"),
        ("LANGFUSE_BASE_URL", "https://eu.cloud.langfuse.com/"),
        ("LANGFUSE_TIMEOUT", "2.5"),
        ("LANGFUSE_TRACING_ENVIRONMENT", "staging"),
        ("LANGFUSE_RELEASE", "v1.2"),
    ];
    let lf = export("litellm_settings:\n  callbacks: [langfuse]\n", &vars).langfuse.unwrap();
    assert_eq!(lf.host, "https://eu.cloud.langfuse.com");
    assert_eq!(lf.timeout, Duration::from_millis(2500));
    assert_eq!((lf.environment.as_deref(), lf.release.as_deref()), (Some("staging"), Some("v1.2")));
    let mut bad = vars;
    bad[4] = ("LANGFUSE_TRACING_ENVIRONMENT", "Langfuse-Prod");
    let yaml = "litellm_settings:\n  callbacks: [langfuse]\n";
    assert_eq!(export(yaml, &bad).langfuse.unwrap().environment.as_deref(), Some("default"));
    assert!(warnings(yaml, &bad).iter().any(|w| w.contains("is not one Langfuse takes")));
}

#[test]
fn other_callbacks_are_named_in_one_warning() {
    let w = warnings(
        "litellm_settings:\n  callbacks: [prometheus, datadog]\n  success_callback: [s3, langfuse]\n",
        &[("LANGFUSE_PUBLIC_KEY", "p"), ("LANGFUSE_SECRET_KEY", "s")],
    );
    let named: Vec<&String> = w.iter().filter(|w| w.contains("not to")).collect();
    assert_eq!(named.len(), 1, "{w:?}");
    assert!(named[0].starts_with("litellm_settings.callbacks[1]: "), "{named:?}");
    assert!(named[0].ends_with("not to datadog, s3"), "{named:?}");
    assert!(!w.iter().any(|w| w.contains("success_callback") && w.contains("not implemented")), "{w:?}");
}

#[test]
fn prometheus_names_litellms_metrics() {
    assert!(export("litellm_settings:\n  callbacks: [prometheus]\n", &[]).litellm_metrics);
    assert!(export("pointwork:\n  telemetry:\n    litellm_metrics: true\n", &[]).litellm_metrics);
}

#[test]
fn content_follows_the_settings_that_name_it() {
    let on = |yaml: &str, vars: &[(&str, &str)]| export(yaml, vars).content;
    assert!(on("litellm_settings:\n  turn_off_message_logging: false\n", &[]));
    assert!(!on("litellm_settings:\n  turn_off_message_logging: true\n", &[]));
    assert!(on("", &[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")]));
    assert!(!on(
        "litellm_settings:\n  turn_off_message_logging: false\npointwork:\n  telemetry:\n    content: false\n",
        &[]
    ));
}

#[test]
fn pointwork_telemetry_section() {
    let yaml = "pointwork:\n  telemetry:\n    otlp:\n      endpoint: https://otlp.example\n      headers: {api-key: os.environ/OTLP_KEY}\n      timeout: 3\n    langfuse:\n      host: http://127.0.0.1:3000\n      public_key: pk\n      secret_key: os.environ/LF_SECRET\n    content: true\n";
    let e = export(yaml, &[("OTLP_KEY", "k-1"), ("LF_SECRET", "s-1")]);
    let otlp = e.otlp.unwrap();
    assert_eq!(otlp.endpoint, "https://otlp.example/v1/traces");
    assert_eq!(otlp.headers, [("api-key".to_string(), "k-1".to_string())]);
    assert_eq!(otlp.timeout, Duration::from_secs(3));
    let lf = e.langfuse.unwrap();
    assert_eq!(
        (lf.host.as_str(), lf.secret_key.as_str(), lf.successes, lf.failures),
        ("http://127.0.0.1:3000", "s-1", true, true)
    );
    assert!(e.content);
}

#[test]
fn unknown_telemetry_keys_are_errors_with_their_path() {
    let env = |_: &str| None;
    let yaml =
        format!("{MODELS}pointwork:\n  telemetry:\n    otlp: {{endpoint: ftp://x, secret: 1}}\n    sampler: 0.5\n");
    let errors: Vec<String> = match load_str(&yaml, Path::new("."), &env) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    };
    assert!(
        errors.iter().any(|e| e.starts_with("pointwork.telemetry.otlp.endpoint: ") && e.contains("not an http")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.starts_with("pointwork.telemetry.otlp.secret")), "{errors:?}");
    assert!(errors.iter().any(|e| e.starts_with("pointwork.telemetry.sampler")), "{errors:?}");
}
