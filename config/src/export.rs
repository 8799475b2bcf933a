//! Where traces and request logs go (`Config::export`), read from LiteLLM's names as LiteLLM's
//! users write them, and from Pointwork's own `pointwork.telemetry`:
//!
//! - `litellm_settings.callbacks` / `success_callback` / `failure_callback` naming `otel`,
//!   `langfuse` (or `langfuse_otel`) and `prometheus`; every other callback is named in one
//!   warning (Pointwork does not run it).
//! - OTLP: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as given), `OTEL_EXPORTER_OTLP_ENDPOINT`
//!   or LiteLLM's `OTEL_ENDPOINT` (`/v1/traces` added as LiteLLM adds it), the headers of
//!   `OTEL_EXPORTER_OTLP_HEADERS` or `OTEL_HEADERS` (`k=v,k2=v2`), `OTEL_SERVICE_NAME`. The
//!   standard endpoint variables turn the exporter on by themselves; `OTEL_SDK_DISABLED=true` or
//!   `OTEL_TRACES_EXPORTER=none` turn it off.
//! - Langfuse: `LANGFUSE_PUBLIC_KEY`, `LANGFUSE_SECRET_KEY`, `LANGFUSE_HOST` (or
//!   `LANGFUSE_BASE_URL`), `LANGFUSE_TIMEOUT`, `LANGFUSE_TRACING_ENVIRONMENT`, `LANGFUSE_RELEASE`.
//! - Content (prompts and completions) is exported only when configured:
//!   `pointwork.telemetry.content`, else `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`,
//!   else LiteLLM's `turn_off_message_logging: false` set explicitly; otherwise not.

use std::time::Duration;

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds;
use crate::node::Node;

/// What is exported, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportSettings {
    pub otlp: Option<OtlpSettings>,
    pub langfuse: Option<LangfuseSettings>,
    /// `/metrics` also carries LiteLLM's metric names (`callbacks: ["prometheus"]`).
    pub litellm_metrics: bool,
    /// Prompts and completions go with the traces.
    pub content: bool,
    /// The most records waiting per exporter (`OTEL_BSP_MAX_QUEUE_SIZE`); more are dropped.
    pub queue: usize,
    /// The most records one export carries (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`).
    pub batch: usize,
}

/// Records waiting per exporter unless `OTEL_BSP_MAX_QUEUE_SIZE` says otherwise: about ten
/// seconds of a busy instance (OTel's own default, 2048, is one second of it).
pub const DEFAULT_QUEUE: usize = 20_000;
/// Records per export unless `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` says otherwise (OTel's default).
pub const DEFAULT_BATCH: usize = 512;

impl Default for ExportSettings {
    fn default() -> ExportSettings {
        ExportSettings {
            otlp: None,
            langfuse: None,
            litellm_metrics: false,
            content: false,
            queue: DEFAULT_QUEUE,
            batch: DEFAULT_BATCH,
        }
    }
}

impl ExportSettings {
    /// Whether any request record is exported (the request path builds one only then).
    pub fn traces(&self) -> bool {
        self.otlp.is_some() || self.langfuse.is_some()
    }
}

/// An OTLP/HTTP (protobuf) trace receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct OtlpSettings {
    /// The whole URL spans are posted to (`…/v1/traces`).
    pub endpoint: String,
    /// Sent with every export (an API key of the vendor's, say): never logged.
    pub headers: Vec<(String, String)>,
    pub service_name: String,
    /// How long one export may take.
    pub timeout: Duration,
}

/// Langfuse's ingestion API.
#[derive(Clone, Debug, PartialEq)]
pub struct LangfuseSettings {
    /// `https://cloud.langfuse.com` unless `LANGFUSE_HOST` says otherwise.
    pub host: String,
    pub public_key: String,
    /// Never logged, never exported.
    pub secret_key: String,
    /// Which requests go: `callbacks` both, `success_callback` the successful ones,
    /// `failure_callback` the failed ones.
    pub successes: bool,
    pub failures: bool,
    /// How long one export may take (`LANGFUSE_TIMEOUT`, 20 s as LiteLLM's).
    pub timeout: Duration,
    /// Langfuse's environment of every trace (`LANGFUSE_TRACING_ENVIRONMENT`).
    pub environment: Option<String>,
    /// The trace's `release` (`LANGFUSE_RELEASE`).
    pub release: Option<String>,
}

/// The `litellm_settings` keys read here (the router's reader leaves them alone).
pub(crate) const LITELLM_SETTINGS_KEYS: [&str; 3] = [SUCCESS_CALLBACK, FAILURE_CALLBACK, TURN_OFF_MESSAGE_LOGGING];
/// `pointwork.telemetry`.
pub(crate) const TELEMETRY: &str = "telemetry";

const CALLBACKS: &str = "callbacks";
const SUCCESS_CALLBACK: &str = "success_callback";
const FAILURE_CALLBACK: &str = "failure_callback";
const TURN_OFF_MESSAGE_LOGGING: &str = "turn_off_message_logging";
const TELEMETRY_KEYS: [&str; 4] = ["otlp", "langfuse", "litellm_metrics", "content"];
const OTLP_KEYS: [&str; 4] = ["endpoint", "headers", "service_name", "timeout"];
const LANGFUSE_KEYS: [&str; 5] = ["host", "public_key", "secret_key", "environment", "timeout"];
/// LiteLLM's (the Langfuse SDK's) `LANGFUSE_TIMEOUT` default.
const LANGFUSE_TIMEOUT: Duration = Duration::from_secs(20);
const LANGFUSE_CLOUD: &str = "https://cloud.langfuse.com";
const DEFAULT_SERVICE_NAME: &str = "pointwork";
/// OTel's default export timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The OpenRouter walk's callback is LiteLLM's plugin, read by `pareto.rs`.
const PARETO_PACKAGE: &str = "litellm_plugin_openrouter_pareto";

/// Which exporters the callback lists name.
#[derive(Default)]
struct Named {
    /// Where `otel` is named first (a warning about it points there).
    otel: Option<KeyPath>,
    langfuse: Option<KeyPath>,
    langfuse_success: bool,
    langfuse_failure: bool,
    prometheus: bool,
    /// Every other name, with its path, for the one warning.
    others: Vec<String>,
    first_path: Option<KeyPath>,
}

/// The export settings of `litellm_settings` and `pointwork.telemetry` (each a section node and
/// its path, when present).
pub(crate) fn read_export(
    c: &mut Checker,
    litellm_settings: Option<(&Node, KeyPath)>,
    telemetry: Option<(&Node, KeyPath)>,
) -> ExportSettings {
    let mut named = Named::default();
    let mut turn_off_message_logging = None;
    if let Some((node @ Node::Map(_), path)) = litellm_settings {
        if let Some(mut fields) = c.map(node, path) {
            for (key, success, failure) in
                [(CALLBACKS, true, true), (SUCCESS_CALLBACK, true, false), (FAILURE_CALLBACK, false, true)]
            {
                read_callbacks(c, &mut fields, key, success, failure, &mut named);
            }
            turn_off_message_logging = c.optional(&mut fields, TURN_OFF_MESSAGE_LOGGING, &kinds::BOOL);
        }
    }
    if !named.others.is_empty() {
        let path = named.first_path.clone().unwrap_or_else(|| KeyPath::root(None));
        let list = named.others.join(", ");
        c.warn(path, format!("ignored: Pointwork exports to otel, langfuse and prometheus, not to {list}"));
    }
    let mut own = Telemetry::default();
    if let Some((node, path)) = telemetry {
        own = read_telemetry(c, node, path);
    }
    let otlp = otlp_settings(c, named.otel, own.otlp);
    let langfuse = langfuse_settings(c, (named.langfuse_success, named.langfuse_failure), named.langfuse, own.langfuse);
    let content = own.content.or_else(|| env_bool(c, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"));
    let positive = |c: &Checker, name: &str| env(c, name).and_then(|v| v.parse::<usize>().ok()).filter(|&n| n > 0);
    let queue = positive(c, "OTEL_BSP_MAX_QUEUE_SIZE").unwrap_or(DEFAULT_QUEUE);
    ExportSettings {
        otlp,
        langfuse,
        litellm_metrics: named.prometheus || own.litellm_metrics,
        content: content.or(turn_off_message_logging.map(|off| !off)).unwrap_or(false),
        queue,
        batch: positive(c, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE").unwrap_or(DEFAULT_BATCH).min(queue),
    }
}

fn read_callbacks(c: &mut Checker, fields: &mut Fields, key: &str, success: bool, failure: bool, named: &mut Named) {
    // `callbacks` stays for the walk's reader (`pareto.rs`), which takes it too.
    let (node, path) = if key == CALLBACKS {
        match fields.peek(key) {
            Some(node) => (node, fields.path.key(key)),
            None => return,
        }
    } else {
        match fields.take(key) {
            Some(found) => found,
            None => return,
        }
    };
    let Some(node) = c.resolved(node, &path) else { return };
    let entries: Vec<(&Node, KeyPath)> = match &*node {
        Node::Null => return,
        Node::List(items) => items.iter().enumerate().map(|(i, item)| (item, path.index(i))).collect(),
        other => vec![(other, path.clone())],
    };
    for (entry, entry_path) in entries {
        let name = match entry {
            Node::Str(name) => name.trim(),
            _ => {
                c.warn(entry_path, "ignored: a callback is named by a string");
                continue;
            }
        };
        match name {
            "otel" | "opentelemetry" => {
                named.otel.get_or_insert(entry_path);
            }
            "langfuse" | "langfuse_otel" => {
                named.langfuse.get_or_insert(entry_path);
                named.langfuse_success |= success;
                named.langfuse_failure |= failure;
            }
            "prometheus" => named.prometheus = true,
            _ if name.starts_with(PARETO_PACKAGE) => {}
            _ => {
                named.first_path.get_or_insert(entry_path);
                named.others.push(name.to_string());
            }
        }
    }
}

/// What `pointwork.telemetry` says.
#[derive(Default)]
struct Telemetry {
    otlp: Option<OtlpSettings>,
    langfuse: Option<(LangfuseOwn, KeyPath)>,
    litellm_metrics: bool,
    content: Option<bool>,
}

#[derive(Default)]
struct LangfuseOwn {
    host: Option<String>,
    public_key: Option<String>,
    secret_key: Option<String>,
    environment: Option<String>,
    timeout: Option<Duration>,
}

fn read_telemetry(c: &mut Checker, node: &Node, path: KeyPath) -> Telemetry {
    let mut own = Telemetry::default();
    if matches!(node, Node::Null) {
        return own;
    }
    let Some(mut fields) = c.map(node, path) else { return own };
    if let Some(mut otlp) = c.optional_map(&mut fields, "otlp") {
        let endpoint_path = otlp.path.key("endpoint");
        let endpoint = c.required(&mut otlp, "endpoint", &kinds::NON_EMPTY_STRING);
        let headers = otlp.take("headers").map(|(n, p)| read_headers(c, n, &p)).unwrap_or_default();
        let service_name = c.optional(&mut otlp, "service_name", &kinds::NON_EMPTY_STRING);
        let timeout = c.optional(&mut otlp, "timeout", &kinds::POSITIVE_SECONDS);
        c.refuse_unknown(&otlp, &OTLP_KEYS);
        if let Some(endpoint) = endpoint {
            match check_url(&endpoint) {
                Ok(()) => {
                    own.otlp = Some(OtlpSettings {
                        endpoint: traces_url(&endpoint),
                        headers,
                        service_name: service_name.unwrap_or_default(),
                        timeout: timeout.unwrap_or(DEFAULT_TIMEOUT),
                    })
                }
                Err(why) => c.error(endpoint_path, why),
            }
        }
    }
    if let Some(mut langfuse) = c.optional_map(&mut fields, "langfuse") {
        let path = langfuse.path.clone();
        let read = LangfuseOwn {
            host: c.optional(&mut langfuse, "host", &kinds::NON_EMPTY_STRING),
            public_key: c.optional(&mut langfuse, "public_key", &kinds::NON_EMPTY_STRING),
            secret_key: c.optional(&mut langfuse, "secret_key", &kinds::SECRET),
            environment: c.optional(&mut langfuse, "environment", &kinds::NON_EMPTY_STRING),
            timeout: c.optional(&mut langfuse, "timeout", &kinds::POSITIVE_SECONDS),
        };
        c.refuse_unknown(&langfuse, &LANGFUSE_KEYS);
        own.langfuse = Some((read, path));
    }
    own.litellm_metrics = c.optional(&mut fields, "litellm_metrics", &kinds::BOOL).unwrap_or(false);
    own.content = c.optional(&mut fields, "content", &kinds::BOOL);
    c.refuse_unknown(&fields, &TELEMETRY_KEYS);
    own
}

/// `headers: {name: value}` (a map), or OTel's `name=value,name2=value2`.
fn read_headers(c: &mut Checker, node: &Node, path: &KeyPath) -> Vec<(String, String)> {
    let Some(node) = c.resolved(node, path) else { return Vec::new() };
    match &*node {
        Node::Map(entries) => entries
            .iter()
            .filter_map(|(k, v)| match v {
                Node::Str(s) => Some((k.clone(), s.clone())),
                Node::Int(i) => Some((k.clone(), i.to_string())),
                _ => {
                    c.error(path.key(k), "expected a string");
                    None
                }
            })
            .collect(),
        Node::Str(s) => parse_headers(s),
        other => {
            c.error(path, format!("expected a map of header names to values, found {}", other.describe_kind()));
            Vec::new()
        }
    }
}

/// OTel's header list: `name=value` pairs separated by commas, values percent-decoded.
pub fn parse_headers(list: &str) -> Vec<(String, String)> {
    list.split(',')
        .filter_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            let name = name.trim();
            (!name.is_empty()).then(|| (name.to_string(), percent_decode(value.trim())))
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b))) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The traces URL of an endpoint as LiteLLM normalises `OTEL_ENDPOINT` (and as the OTel SDK
/// treats `OTEL_EXPORTER_OTLP_ENDPOINT`): `/v1/traces` added unless it is there.
pub fn traces_url(endpoint: &str) -> String {
    let endpoint = endpoint.trim().trim_end_matches('/');
    if endpoint.ends_with("/v1/traces") || endpoint.contains("/v2/trace/otlp") {
        return endpoint.to_string();
    }
    for other in ["/v1/logs", "/v1/metrics"] {
        if let Some(base) = endpoint.strip_suffix(other) {
            return format!("{base}/v1/traces");
        }
    }
    match endpoint.strip_suffix("/v1") {
        Some(base) => format!("{base}/v1/traces"),
        None => format!("{endpoint}/v1/traces"),
    }
}

fn check_url(url: &str) -> Result<(), String> {
    let url = url.trim();
    if url.starts_with("http://") || url.starts_with("https://") {
        return Ok(());
    }
    Err(format!("{url:?} is not an http:// or https:// URL"))
}

fn env(c: &Checker, name: &str) -> Option<String> {
    c.env.lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

fn env_bool(c: &Checker, name: &str) -> Option<bool> {
    match env(c, name)?.to_ascii_lowercase().as_str() {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// The OTLP exporter, when named (`callbacks: [otel]`, `pointwork.telemetry.otlp`, or the
/// standard endpoint variables) and not turned off.
fn otlp_settings(c: &mut Checker, named: Option<KeyPath>, own: Option<OtlpSettings>) -> Option<OtlpSettings> {
    let off = env_bool(c, "OTEL_SDK_DISABLED") == Some(true)
        || env(c, "OTEL_TRACES_EXPORTER").is_some_and(|e| e.eq_ignore_ascii_case("none"));
    let service_name = env(c, "OTEL_SERVICE_NAME").unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_string());
    if let Some(mut own) = own {
        if own.service_name.is_empty() {
            own.service_name = service_name;
        }
        return (!off).then_some(own);
    }
    let standard = env(c, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .or_else(|| env(c, "OTEL_EXPORTER_OTLP_ENDPOINT").map(|e| traces_url(&e)));
    let endpoint = match (standard, env(c, "OTEL_ENDPOINT")) {
        (Some(endpoint), _) => endpoint,
        (None, Some(litellm)) if named.is_some() => traces_url(&litellm),
        (None, _) => {
            if let Some(path) = named {
                let why =
                    "otel: no endpoint (set OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_ENDPOINT): no traces are exported";
                c.warn(path, why);
            }
            return None;
        }
    };
    if off {
        return None;
    }
    if let Err(why) = check_url(&endpoint) {
        c.warn("OTEL_EXPORTER_OTLP_ENDPOINT (env)", format!("{why}: no traces are exported"));
        return None;
    }
    let protocol = env(c, "OTEL_EXPORTER_OTLP_PROTOCOL").or_else(|| env(c, "OTEL_EXPORTER"));
    if let Some(p) = protocol.filter(|p| !matches!(p.as_str(), "otlp_http" | "http/protobuf" | "otlp" | "console")) {
        c.warn(
            "OTEL_EXPORTER (env)",
            format!("{p}: Pointwork exports over OTLP/HTTP with protobuf; the endpoint must take that (port 4318)"),
        );
    }
    let headers = env(c, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")
        .or_else(|| env(c, "OTEL_EXPORTER_OTLP_HEADERS"))
        .or_else(|| env(c, "OTEL_HEADERS"))
        .map(|h| parse_headers(&h))
        .unwrap_or_default();
    let timeout = env(c, "OTEL_EXPORTER_OTLP_TIMEOUT")
        .and_then(|ms| ms.parse::<u64>().ok())
        .filter(|&ms| ms > 0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    Some(OtlpSettings { endpoint, headers, service_name, timeout })
}

/// Langfuse, when named by a callback list or `pointwork.telemetry.langfuse`, with its keys from
/// there or from `LANGFUSE_*`.
fn langfuse_settings(
    c: &mut Checker,
    (successes, failures): (bool, bool),
    named: Option<KeyPath>,
    own: Option<(LangfuseOwn, KeyPath)>,
) -> Option<LangfuseSettings> {
    let (own, path, successes, failures) = match (own, named) {
        (Some((own, path)), _) => (own, path, true, true),
        (None, Some(path)) => (LangfuseOwn::default(), path, successes, failures),
        (None, None) => return None,
    };
    let public_key = own.public_key.or_else(|| env(c, "LANGFUSE_PUBLIC_KEY"));
    let secret_key = own.secret_key.or_else(|| env(c, "LANGFUSE_SECRET_KEY"));
    let host = own.host.or_else(|| env(c, "LANGFUSE_HOST")).or_else(|| env(c, "LANGFUSE_BASE_URL"));
    let host = host.unwrap_or_else(|| LANGFUSE_CLOUD.to_string());
    let (Some(public_key), Some(secret_key)) = (public_key, secret_key) else {
        c.warn(path, "langfuse: LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are needed: nothing goes to Langfuse");
        return None;
    };
    // LiteLLM accepts a host without a scheme and prefixes http.
    let host = host.trim().trim_end_matches('/');
    let host = if host.starts_with("http://") || host.starts_with("https://") {
        host.to_string()
    } else {
        format!("http://{host}")
    };
    let timeout = env(c, "LANGFUSE_TIMEOUT").and_then(|s| s.parse::<f64>().ok()).filter(|s| s.is_finite() && *s > 0.0);
    let timeout = own.timeout.or(timeout.map(Duration::from_secs_f64)).unwrap_or(LANGFUSE_TIMEOUT);
    // As LiteLLM: lowercase letters, digits, `-` and `_`, not starting with `langfuse`; else `default`.
    let environment = own.environment.or_else(|| env(c, "LANGFUSE_TRACING_ENVIRONMENT")).map(|e| {
        let fits = !e.starts_with("langfuse")
            && e.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if fits {
            return e;
        }
        c.warn(path.clone(), format!("langfuse: environment {e:?} is not one Langfuse takes: \"default\" is used"));
        "default".to_string()
    });
    let release = env(c, "LANGFUSE_RELEASE");
    Some(LangfuseSettings { host, public_key, secret_key, successes, failures, timeout, environment, release })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_become_traces_urls_as_litellm_makes_them() {
        assert_eq!(traces_url("http://c:4318"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/v1"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("http://c:4318/v1/logs"), "http://c:4318/v1/traces");
        assert_eq!(traces_url("https://ingest.x/v2/trace/otlp"), "https://ingest.x/v2/trace/otlp");
        assert_eq!(traces_url("https://lf.example/api/public/otel"), "https://lf.example/api/public/otel/v1/traces");
    }

    #[test]
    fn header_lists_are_split_and_decoded() {
        assert_eq!(
            parse_headers("x-honeycomb-team=abc=d, Authorization=Basic%20eA%3D%3D,broken"),
            [
                ("x-honeycomb-team".to_string(), "abc=d".to_string()),
                ("Authorization".to_string(), "Basic eA==".to_string())
            ]
        );
    }
}
