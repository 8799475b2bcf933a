//! An OpenRouter for the walk's tests: `pointwork-mock --openrouter-telemetry DIR` with the
//! telemetry files written from a list of providers, its control endpoints, and a gateway
//! config for a managed model pointed at it.

use serde_json::{json, Value};

use super::{Client, Gateway, GatewayOptions, Mock, Response, TempDir};

/// The managed model of these tests.
pub const MODEL: &str = "z-ai/glm-5.2";
pub const CALLBACK: &str = "litellm_plugin_openrouter_pareto.plugin.openrouter_pareto_callback";

/// One provider endpoint as the telemetry reports it.
#[derive(Clone, Debug)]
pub struct Provider {
    pub slug: &'static str,
    /// Dollars per million input tokens.
    pub price_m: f64,
    pub tps: f64,
    pub headquarters: &'static str,
}

pub const fn provider(slug: &'static str, price_m: f64, tps: f64) -> Provider {
    Provider { slug, price_m, tps, headquarters: "US" }
}

/// b/fp8 wins (+20% price for +200% speed over a/fp8); c/fp8 is dominated by b but is what
/// the walk reaches without b; d/fp8 is dear. The walk's order: b, c, a, d.
pub const PROVIDERS: [Provider; 4] = [
    provider("a/fp8", 1.0, 10.0),
    provider("b/fp8", 1.2, 30.0),
    provider("c/fp8", 1.3, 25.0),
    provider("d/fp8", 5.0, 26.0),
];

pub struct OpenRouter {
    pub mock: Mock,
    pub dir: TempDir,
}

impl OpenRouter {
    pub fn start(providers: &[Provider]) -> OpenRouter {
        let dir = TempDir::new("openrouter");
        let telemetry = dir.path.join("telemetry");
        std::fs::create_dir_all(telemetry.join(MODEL)).expect("telemetry dir");
        let or = OpenRouter {
            mock: Mock::start("openrouter", &["--openrouter-telemetry", telemetry.to_str().unwrap()]),
            dir,
        };
        or.set_telemetry(providers);
        or
    }

    fn model_dir(&self) -> std::path::PathBuf {
        self.dir.path.join("telemetry").join(MODEL)
    }

    /// Writes both telemetry documents for `providers`.
    pub fn set_telemetry(&self, providers: &[Provider]) {
        let stats: Vec<Value> = providers
            .iter()
            .map(|p| {
                json!({
                    "provider_slug": p.slug,
                    "quantization": "fp8",
                    "context_length": 1_048_576,
                    "data_policy": {"training": false, "retainsPrompts": false},
                    "pricing": {"prompt": format!("{:.10}", p.price_m / 1e6), "completion": format!("{:.10}", 2.0 * p.price_m / 1e6)},
                    "provider_info": {"headquarters": p.headquarters, "datacenters": [p.headquarters]},
                    "stats": {"p50_throughput": p.tps, "request_count": 500},
                })
            })
            .collect();
        let endpoints: Vec<Value> =
            providers.iter().map(|p| json!({"tag": p.slug, "quantization": "fp8", "uptime_last_5m": 99.5})).collect();
        let dir = self.model_dir();
        // Written whole and renamed: the mock never reads half a file.
        for (name, doc) in [
            ("stats.json", json!({"data": stats})),
            ("endpoints.json", json!({"data": {"id": MODEL, "endpoints": endpoints}})),
        ] {
            let temp = dir.join(format!("{name}.tmp"));
            std::fs::write(&temp, doc.to_string()).expect("write telemetry");
            std::fs::rename(&temp, dir.join(name)).expect("rename telemetry");
        }
    }

    /// Takes the telemetry away: every poll fails (503).
    pub fn remove_telemetry(&self) {
        let _ = std::fs::remove_file(self.model_dir().join("stats.json"));
    }

    pub fn api_base(&self) -> String {
        format!("http://{}/api/v1", self.mock.addr)
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let body = if body.is_null() { Vec::new() } else { body.to_string().into_bytes() };
        let r = Client::connect(self.mock.addr).request(method, path, &[], &body);
        assert_eq!(r.status, 200, "{method} {path}: {}", r.text());
        r.json()
    }

    /// `POST /mock/openrouter/providers` (e.g. `{"b/fp8": {"status": 429, "times": 3}}`).
    pub fn providers(&self, behaviour: Value) {
        self.call("POST", "/mock/openrouter/providers", behaviour);
    }

    pub fn allow_only(&self, organisations: &[&str]) {
        self.call("POST", "/mock/openrouter/account", json!({"allowed_providers": organisations}));
    }

    /// The chat requests served: `{model, stream, provider_block, served_by, status}`.
    pub fn requests(&self) -> Vec<Value> {
        match self.call("GET", "/mock/openrouter/requests", Value::Null) {
            Value::Array(list) => list,
            other => panic!("not a list: {other}"),
        }
    }

    pub fn clear_requests(&self) {
        self.call("DELETE", "/mock/openrouter/requests", Value::Null);
    }

    /// The gateway config: one rule for [`MODEL`] (`rule` is its YAML flow map's inside),
    /// `model_list` entries given, the telemetry at this mock, the cache in `cache`.
    pub fn config(&self, model_list: &str, rule: &str, extra: &str, cache: &TempDir) -> String {
        format!(
            "model_list:\n{model_list}\
             litellm_settings:\n  num_retries: 0\n  callbacks: [\"{CALLBACK}\"]\n\
             \x20 openrouter_pareto_rules:\n    \"{MODEL}\": {{precision: [fp8], min_context: 1000000, min_stats_requests: 100, {rule}}}\n\
             \x20 openrouter_pareto_telemetry: {{base_url: \"http://{}\", cache_dir: \"{}\", poll_interval_s: 0.3, timeout_s: 5}}\n{extra}",
            self.mock.addr,
            cache.path.display()
        )
    }

    /// One wildcard deployment.
    pub fn wildcard_entry(&self) -> String {
        format!(
            "  - model_name: {MODEL}\n    litellm_params: {{model: openrouter/{MODEL}, api_base: \"{}\", api_key: sk-or}}\n    model_info: {{id: or-wildcard}}\n",
            self.api_base()
        )
    }

    /// A pinned deployment: `provider.only` of `slugs`, or (`None`) its id alone.
    pub fn pinned_entry(&self, id: &str, slugs: Option<&[&str]>) -> String {
        let extra = slugs.map_or(String::new(), |s| {
            format!(", extra_body: {{provider: {{only: [{}], quantizations: [fp8]}}}}", s.join(", "))
        });
        format!(
            "  - model_name: {MODEL}\n    litellm_params: {{model: openrouter/{MODEL}, api_base: \"{}\", api_key: sk-or{extra}}}\n    model_info: {{id: {id}}}\n",
            self.api_base()
        )
    }
}

/// Sends dry runs until `check` accepts the walk's part, or panics after the deadline (the
/// poller publishes on its own clock).
pub fn await_walk(gateway: &Gateway, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let r = gateway.post("/v1/route", &super::chat_body(MODEL, false));
        assert_eq!(r.status, 200, "{}", r.text());
        let walk = r.json()["pareto"].clone();
        if check(&walk) {
            return walk;
        }
        assert!(std::time::Instant::now() < deadline, "never saw {what}: {walk}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Waits until the poller's verdict names `winner`.
pub fn await_winner(gateway: &Gateway, winner: &str) -> Value {
    await_walk(gateway, &format!("winner {winner}"), |w| w["telemetry"]["winner"] == winner)
}

/// Waits until `/metrics` has the line `needle` (the control thread merges counts a few times
/// a second).
pub fn await_metric(gateway: &Gateway, needle: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let text = gateway.get("/metrics").text();
        if text.lines().any(|l| l == needle) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "never saw {needle} in:\n{text}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

pub fn start_gateway(yaml: &str, env: Vec<(&str, &str)>) -> Gateway {
    Gateway::start_with(yaml, GatewayOptions { shards: 2, env, ..GatewayOptions::default() })
}

/// The walk's words in a response's `x-pointwork-route`.
pub fn walk_of(r: &Response) -> String {
    let route = r.header("x-pointwork-route").unwrap_or_default();
    route.split(';').next().unwrap_or_default().to_string()
}
