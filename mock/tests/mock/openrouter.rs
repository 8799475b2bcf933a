//! The OpenRouter emulation over real HTTP: telemetry from files that change under a running
//! mock, chats routed by the `provider` block, 429 and input-cap providers, the account's
//! allowed providers, and the `pointwork-mock --openrouter-telemetry` binary end to end.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use pointwork_mock::{MockOptions, MockServer};
use serde_json::{json, Value};

use crate::binary::{first_line, KillOnDrop, BINARY};
use crate::client::{Client, Response};
use crate::start;

const MODEL: &str = "z-ai/glm-5.2";

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name);
    fs::read(&path).unwrap_or_else(|error| panic!("fixture {}: {error}", path.display()))
}

/// A telemetry directory under the system temp dir, removed on drop.
struct TelemetryDir(PathBuf);

impl TelemetryDir {
    /// `z-ai/glm-5.2` with the glm endpoints and stats fixtures.
    fn with_glm() -> TelemetryDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let unique =
            format!("pointwork-mock-openrouter-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = TelemetryDir(std::env::temp_dir().join(unique));
        let _ = fs::remove_dir_all(&dir.0);
        dir.write(MODEL, "endpoints.json", &fixture("openrouter_endpoints_glm.json"));
        dir.write(MODEL, "stats.json", &fixture("openrouter_frontend_stats_glm_composed.json"));
        dir
    }

    fn write(&self, model: &str, file: &str, bytes: &[u8]) {
        let dir = self.0.join(model);
        fs::create_dir_all(&dir).expect("model directory");
        fs::write(dir.join(file), bytes).expect("telemetry file");
    }

    fn remove(&self, model: &str, file: &str) {
        fs::remove_file(self.0.join(model).join(file)).expect("remove telemetry file");
    }

    /// Rewrites `stats.json` keeping only the rows whose `provider_slug` is in `slugs`, in that order.
    fn keep_stats_rows(&self, slugs: &[&str]) {
        let stats: Value =
            serde_json::from_slice(&fixture("openrouter_frontend_stats_glm_composed.json")).expect("json");
        let rows = stats["data"].as_array().expect("rows");
        let kept: Vec<&Value> = slugs
            .iter()
            .map(|slug| rows.iter().find(|row| row["provider_slug"] == *slug).expect("row in the fixture"))
            .collect();
        self.write(MODEL, "stats.json", json!({ "data": kept }).to_string().as_bytes());
    }

    fn serve(&self) -> MockServer {
        start(MockOptions { name: "or".into(), openrouter_telemetry: Some(self.0.clone()), ..MockOptions::default() })
    }
}

impl Drop for TelemetryDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn chat(provider: Value, stream: bool) -> Value {
    let mut body = json!({"model": MODEL, "stream": stream, "messages": [{"role": "user", "content": "Hi"}]});
    if !provider.is_null() {
        body["provider"] = provider;
    }
    body
}

fn pinned(slug: &str) -> Value {
    json!({"only": [slug], "zdr": true, "allow_fallbacks": false})
}

fn post(client: &mut Client, path: &str, body: Value) -> Response {
    let response = client.post_json(path, &body);
    assert_eq!(response.status, 200, "{path}: {}", String::from_utf8_lossy(&response.body));
    response
}

#[test]
fn telemetry_is_served_from_files_and_reread_on_every_request() {
    let telemetry = TelemetryDir::with_glm();
    telemetry.write("moonshotai/kimi-k3", "canonical_slug.txt", b"moonshotai/kimi-k3-20260801\n");
    telemetry.write("moonshotai/kimi-k3", "stats.json", br#"{"data":[]}"#);
    let server = telemetry.serve();
    let mut client = Client::connect(server.addr());

    let models = client.get("/api/v1/models");
    assert_eq!(models.status, 200);
    assert_eq!(
        models.json(),
        json!({"data": [
            {"id": "moonshotai/kimi-k3", "canonical_slug": "moonshotai/kimi-k3-20260801", "name": "moonshotai/kimi-k3"},
            {"id": MODEL, "canonical_slug": MODEL, "name": "Z.ai: GLM 5.3 Flash"},
        ]})
    );
    let endpoints = client.get("/api/v1/models/z-ai/glm-5.2/endpoints");
    assert_eq!((endpoints.status, endpoints.body), (200, fixture("openrouter_endpoints_glm.json")));
    let stats = client.get("/api/frontend/v1/stats/endpoint?permaslug=z-ai%2Fglm-5.2&variant=standard");
    assert_eq!((stats.status, stats.body), (200, fixture("openrouter_frontend_stats_glm_composed.json")));
    let kimi = client.get("/api/frontend/v1/stats/endpoint?permaslug=moonshotai/kimi-k3-20260801");
    assert_eq!((kimi.status, kimi.json()), (200, json!({"data": []})));
    assert_eq!(
        client.get("/api/frontend/v1/stats/endpoint?permaslug=moonshotai/kimi-k3").status,
        404,
        "the id is no permaslug"
    );

    // Unknown models are 404 in OpenRouter's envelope; a missing file is an outage.
    let unknown = client.get("/api/v1/models/nobody/nothing/endpoints");
    assert_eq!((unknown.status, unknown.json()), (404, json!({"error": {"message": "Model not found", "code": 404}})));
    let missing = client.get("/api/v1/models/moonshotai/kimi-k3/endpoints");
    assert_eq!((missing.status, missing.json()["error"]["code"].clone()), (503, json!(503)));

    // Changed files are read by the next request.
    telemetry.write(MODEL, "stats.json", br#"{"data":[{"provider_slug":"fresh/fp8"}]}"#);
    let changed = client.get("/api/frontend/v1/stats/endpoint?permaslug=z-ai/glm-5.2");
    assert_eq!(changed.json()["data"][0]["provider_slug"], "fresh/fp8");
    telemetry.remove(MODEL, "stats.json");
    assert_eq!(client.get("/api/frontend/v1/stats/endpoint?permaslug=z-ai/glm-5.2").status, 503);

    let counted = client.get("/mock/openrouter/stats").json();
    assert_eq!(counted["telemetry_requests"], 9);
    assert_eq!(counted["telemetry"]["/api/frontend/v1/stats/endpoint?permaslug=z-ai/glm-5.2"], 3);
    assert_eq!(counted["telemetry"]["/api/v1/models"], 1);
    assert_eq!(client.get("/mock/stats").json()["requests"], 0, "telemetry is not a provider request");
    assert_eq!(client.get("/mock/requests").json(), json!([]));
}

#[test]
fn chats_are_served_by_the_pinned_provider_or_telemetrys_first() {
    let telemetry = TelemetryDir::with_glm();
    let server = telemetry.serve();
    let mut client = Client::connect(server.addr());

    let answer = post(&mut client, "/api/v1/chat/completions", chat(pinned("baseten/fp8"), false));
    assert_eq!(answer.header("x-mock-provider"), Some("baseten/fp8"));
    assert_eq!(answer.json()["provider"], "baseten/fp8");
    assert_eq!(answer.json()["choices"][0]["message"]["content"], "Hello from mock or");

    let unpinned = post(&mut client, "/api/v1/chat/completions", chat(Value::Null, false));
    assert_eq!(unpinned.json()["provider"], "z-ai/fp8", "the first row of stats.json");
    telemetry.keep_stats_rows(&["deepinfra/fp4", "novita/fp8"]);
    let unpinned = post(&mut client, "/api/v1/chat/completions", chat(Value::Null, false));
    assert_eq!(unpinned.header("x-mock-provider"), Some("deepinfra/fp4"), "stats.json is re-read");

    let organisation = post(&mut client, "/api/v1/chat/completions", chat(json!({"only": ["novita"]}), true));
    assert_eq!(organisation.header("x-mock-provider"), Some("novita/fp8"));
    let events = organisation.events();
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    for event in &events[..events.len() - 1] {
        let chunk: Value = serde_json::from_str(event).expect("chunk");
        assert_eq!(chunk["provider"], "novita/fp8", "{event}");
    }

    // Not served by anything telemetry lists: OpenRouter's request 404.
    let nowhere = client.post_json("/api/v1/chat/completions", &chat(pinned("nowhere/fp8"), false));
    assert_eq!((nowhere.status, nowhere.header("x-mock-provider")), (404, None));
    let message = nowhere.json()["error"]["message"].as_str().expect("message").to_owned();
    assert!(
        message.ends_with(
            "z-ai/glm-5.2: deepinfra, novita, but your request's provider.only preference permits only: nowhere/fp8."
        ),
        "{message}"
    );

    let log = client.get("/mock/openrouter/requests").json();
    let served: Vec<&Value> = log.as_array().expect("list").iter().map(|entry| &entry["served_by"]).collect();
    assert_eq!(
        served,
        [&json!("baseten/fp8"), &json!("z-ai/fp8"), &json!("deepinfra/fp4"), &json!("novita/fp8"), &Value::Null]
    );
    assert_eq!(log[0]["provider_block"], pinned("baseten/fp8"));
    assert_eq!(log[1]["provider_block"], Value::Null);
    assert_eq!(log[3]["stream"], true);
    assert_eq!(log[4]["status"], 404);
    assert_eq!(client.get("/mock/openrouter/stats").json()["chat_requests"], 5);
    assert_eq!(client.get("/mock/requests").json().as_array().map(Vec::len), Some(5), "chats are recorded too");
}

#[test]
fn input_caps_and_the_account_allow_list_refuse_like_openrouter() {
    let telemetry = TelemetryDir::with_glm();
    let server = telemetry.serve();
    let mut client = Client::connect(server.addr());
    post(&mut client, "/mock/openrouter/providers", json!({"baseten/fp8": {"input_cap_tokens": 50}}));

    let short = post(&mut client, "/api/v1/chat/completions", chat(pinned("baseten/fp8"), false));
    assert_eq!(short.header("x-mock-provider"), Some("baseten/fp8"));
    let mut long = chat(pinned("baseten/fp8"), false);
    long["messages"][0]["content"] = json!("word ".repeat(100));
    let capped = client.post_json("/api/v1/chat/completions", &long);
    assert_eq!((capped.status, capped.header("x-mock-provider")), (400, Some("baseten/fp8")));
    let message = capped.json()["error"]["message"].as_str().expect("message").to_owned();
    assert!(message.starts_with("This endpoint's maximum context length is 50 tokens."), "{message}");
    assert_eq!(capped.json()["error"]["metadata"]["provider_name"], "BaseTen");

    post(&mut client, "/mock/openrouter/account", json!({"allowed_providers": ["novita", "deepinfra"]}));
    let refused = client.post_json("/api/v1/chat/completions", &chat(pinned("baseten/fp8"), false));
    assert_eq!(refused.status, 404);
    assert_eq!(
        refused.json(),
        json!({"error": {"message": "No allowed providers are available for the selected model. Providers serving \
            z-ai/glm-5.2: z-ai, novita, baseten, deepinfra, together, parasail, siliconflow, venice, io-net, modal, but \
            your account's allowed-providers setting permits only: novita, deepinfra. To change your allowed providers, \
            visit: https://openrouter.ai/settings/privacy.", "code": 404}})
    );
    let unpinned = post(&mut client, "/api/v1/chat/completions", chat(Value::Null, false));
    assert_eq!(unpinned.header("x-mock-provider"), Some("novita/fp8"), "the first allowed row");
    assert_eq!(client.get("/mock/openrouter/account").json(), json!({"allowed_providers": ["novita", "deepinfra"]}));

    let bad = client.post_json("/mock/openrouter/providers", &json!({"novita/fp8": {"status": 200}}));
    assert_eq!(bad.status, 400);
    post(&mut client, "/mock/openrouter/reset", json!({}));
    assert_eq!(client.get("/mock/openrouter/providers").json(), json!({}));
    assert_eq!(client.get("/mock/openrouter/account").json(), json!({"allowed_providers": null}));
    assert_eq!(client.get("/mock/openrouter/requests").json(), json!([]));
    let after = post(&mut client, "/api/v1/chat/completions", chat(pinned("baseten/fp8"), false));
    assert_eq!(after.header("x-mock-provider"), Some("baseten/fp8"));
}

/// The binary: `--openrouter-telemetry DIR` re-read under a running process, and a provider
/// that 429s twice (OpenRouter's upstream rate-limit body) and then serves.
#[test]
fn the_binary_serves_changing_telemetry_and_a_429_provider() {
    let help = Command::new(BINARY).arg("--help").output().expect("run");
    assert!(String::from_utf8_lossy(&help.stdout).contains("--openrouter-telemetry DIR"));
    let telemetry = TelemetryDir::with_glm();
    let child = Command::new(BINARY)
        .args(["--name", "or-bin", "--threads", "2", "--openrouter-telemetry"])
        .arg(&telemetry.0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pointwork-mock");
    let mut child = KillOnDrop(child);
    let line = first_line(&mut child);
    let addr = line.trim_end().strip_prefix("pointwork-mock or-bin listening on http://").expect("announcement");
    let mut client = Client::connect(addr.parse().expect("address"));

    let stats_path = "/api/frontend/v1/stats/endpoint?permaslug=z-ai%2Fglm-5.2";
    assert_eq!(client.get(stats_path).json()["data"][0]["provider_slug"], "z-ai/fp8");
    telemetry.keep_stats_rows(&["novita/fp8"]);
    assert_eq!(client.get(stats_path).json()["data"].as_array().map(Vec::len), Some(1));
    telemetry.remove(MODEL, "endpoints.json");
    assert_eq!(client.get("/api/v1/models/z-ai/glm-5.2/endpoints").status, 503);
    assert_eq!(client.get("/mock/openrouter/stats").json()["telemetry_requests"], 3);

    post(&mut client, "/mock/openrouter/providers", json!({"novita/fp8": {"status": 429, "times": 2}}));
    for _ in 0..2 {
        let limited = client.post_json("/api/v1/chat/completions", &chat(pinned("novita/fp8"), false));
        assert_eq!((limited.status, limited.header("x-mock-provider")), (429, Some("novita/fp8")));
        let error = &limited.json()["error"];
        assert_eq!(error["code"], 429);
        assert_eq!(error["metadata"]["provider_name"], "Novita");
        assert_eq!(error["metadata"]["limit_source"], "upstream_provider_shared_pool");
        assert!(error["metadata"]["raw"]
            .as_str()
            .is_some_and(|raw| raw.starts_with("z-ai/glm-5.2 is temporarily rate-limited")));
    }
    let served = post(&mut client, "/api/v1/chat/completions", chat(pinned("novita/fp8"), true));
    assert_eq!(served.header("x-mock-provider"), Some("novita/fp8"));
    assert!(served.events().iter().any(|event| event.contains("\"provider\":\"novita/fp8\"")));
    let statuses: Vec<Value> = client
        .get("/mock/openrouter/requests")
        .json()
        .as_array()
        .expect("list")
        .iter()
        .map(|entry| entry["status"].clone())
        .collect();
    assert_eq!(statuses, [json!(429), json!(429), json!(200)]);
}
