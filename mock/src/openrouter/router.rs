//! The OpenRouter emulation: `POST /api/v1/chat/completions` routed to a provider the way
//! OpenRouter routes a `provider` block (see [`select`]), per-provider failures and input caps,
//! the account's allowed providers, the telemetry of [`openrouter_telemetry`], and the
//! `/mock/openrouter/*` endpoints that steer and observe it.
//!
//! [`select`]: crate::openrouter::select::select
//! [`openrouter_telemetry`]: crate::openrouter::telemetry

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::openrouter::control::{apply_account, apply_providers, Control};
use crate::openrouter::errors;
use crate::openrouter::select::{select, Preferences, Selection};
use crate::openrouter::telemetry::TelemetryDir;
use crate::options::MockOptions;
use crate::wire::head::Method;

/// The fields of an OpenRouter chat the emulation reads.
#[derive(Debug, Deserialize)]
struct RouterRequest {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    provider: Option<Value>,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    max_completion_tokens: Option<u64>,
}

/// One chat as `GET /mock/openrouter/requests` lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct ChatRecord {
    pub model: Option<String>,
    pub stream: bool,
    /// The request's `provider` object as received (`null` when absent).
    pub provider_block: Value,
    /// The provider the chat was routed to (`null`: refused before one was chosen).
    pub served_by: Option<String>,
    /// The status answered.
    pub status: u16,
}

/// What the emulation decided for one chat.
#[derive(Debug, PartialEq)]
pub(crate) struct Routed {
    /// The provider the chat went to: named in `x-mock-provider` and in the answer's `provider`.
    pub provider: Option<String>,
    /// OpenRouter answers this status and body instead of a completion.
    pub refusal: Option<(u16, Vec<u8>)>,
    record: ChatRecord,
}

#[derive(Debug, Default)]
struct Counts {
    telemetry: BTreeMap<String, u64>,
    chats: u64,
}

/// The emulation's state, shared by all serving threads.
#[derive(Debug)]
pub(crate) struct OpenRouter {
    pub telemetry: TelemetryDir,
    control: Mutex<Control>,
    /// The newest chats, oldest first; `None` when recording is off.
    log: Option<Mutex<VecDeque<ChatRecord>>>,
    log_limit: usize,
    counts: Mutex<Counts>,
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Every update leaves the state whole: a panic elsewhere does not make it unusable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl OpenRouter {
    pub(crate) fn new(options: &MockOptions) -> Self {
        OpenRouter {
            telemetry: TelemetryDir { root: options.openrouter_telemetry.clone() },
            control: Mutex::new(Control::default()),
            log: options.record.then(|| Mutex::new(VecDeque::new())),
            log_limit: options.record_limit,
            counts: Mutex::new(Counts::default()),
        }
    }

    /// Answers a telemetry request for `target` (path and query as received): status and body.
    pub(crate) fn telemetry_request(&self, method: Method, target: &str) -> (u16, Vec<u8>) {
        let answer = self.telemetry.answer(target);
        *locked(&self.counts).telemetry.entry(answer.counted_as).or_default() += 1;
        if method != Method::Get {
            return (405, errors::error_body("Method not allowed", 405));
        }
        (answer.status, answer.body)
    }

    /// Routes a chat `body`. An unreadable body is routed nowhere and left to the ordinary chat
    /// handling (its 400).
    pub(crate) fn route(&self, body: &[u8]) -> Routed {
        let Ok(request) = serde_json::from_slice::<RouterRequest>(body) else {
            let record =
                ChatRecord { model: None, stream: false, provider_block: Value::Null, served_by: None, status: 400 };
            return Routed { provider: None, refusal: None, record };
        };
        let mut record = ChatRecord {
            model: request.model.clone(),
            stream: request.stream == Some(true),
            provider_block: request.provider.clone().unwrap_or(Value::Null),
            served_by: None,
            status: 0,
        };
        let Some(model) = request.model.as_deref() else {
            return Routed { provider: None, refusal: None, record };
        };
        let preferences = match Preferences::read(request.provider.as_ref()) {
            Ok(preferences) => preferences,
            Err(message) => {
                return Routed { provider: None, refusal: Some((400, errors::error_body(&message, 400))), record }
            }
        };
        let rows = self.telemetry.stats_rows(model);
        let mut control = locked(&self.control);
        let refusal = |status, body| Some((status, body));
        let row = match select(rows.as_deref(), &preferences, &control) {
            Selection::Serve(row) => row,
            Selection::Account { serving } => {
                let permitted = control.allowed_providers.clone().unwrap_or_default();
                let body = errors::no_allowed_providers_account(model, &serving, &permitted);
                return Routed { provider: None, refusal: refusal(404, body), record };
            }
            Selection::Request { serving, requested } => {
                let body = errors::no_allowed_providers_request(model, &serving, &requested);
                return Routed { provider: None, refusal: refusal(404, body), record };
            }
            Selection::NoEndpoints => {
                return Routed { provider: None, refusal: refusal(404, errors::no_endpoints(model)), record }
            }
        };
        record.served_by = Some(row.slug.clone());
        let behaviour = control.behaviour_key(&row.slug).map(|key| (key.to_owned(), control.providers[key].clone()));
        let refused = behaviour.and_then(|(key, behaviour)| {
            if let Some(status) = behaviour.status {
                control.spend_failure(&key);
                let body = match status {
                    429 => errors::rate_limited(model, &row.name),
                    _ => errors::provider_error(
                        status,
                        &row.name,
                        &format!("mock provider {} answered {status}", row.slug),
                    ),
                };
                return Some((status, body));
            }
            let input_tokens = body.len() as u64 / 4;
            let cap = behaviour.input_cap_tokens.filter(|&cap| input_tokens > cap)?;
            let output_tokens = request.max_completion_tokens.or(request.max_tokens).unwrap_or(0);
            Some((400, errors::context_length(cap, input_tokens, output_tokens, &row.name)))
        });
        Routed { provider: Some(row.slug), refusal: refused, record }
    }

    /// Logs a routed chat with the status it was answered with.
    pub(crate) fn record(&self, routed: Routed, status: u16) {
        locked(&self.counts).chats += 1;
        let Some(log) = &self.log else {
            return;
        };
        if self.log_limit == 0 {
            return;
        }
        let mut log = locked(log);
        while log.len() >= self.log_limit {
            log.pop_front();
        }
        log.push_back(ChatRecord { status, ..routed.record });
    }

    /// Answers `/mock/openrouter/{providers,account,requests,stats,reset}`: the JSON body, or
    /// the status and message of a refusal.
    pub(crate) fn control_request(&self, method: Method, path: &str, body: &[u8]) -> Result<Vec<u8>, (u16, String)> {
        let path = path.split_once('?').map_or(path, |(path, _query)| path);
        let refused = |message: String| (400, message);
        match (path.strip_prefix("/mock/openrouter/").unwrap_or(""), method) {
            ("providers", Method::Get) => Ok(locked(&self.control).providers_json()),
            ("providers", Method::Post) => {
                let mut control = locked(&self.control);
                apply_providers(&mut control, body).map_err(refused)?;
                Ok(control.providers_json())
            }
            ("account", Method::Get) => Ok(locked(&self.control).account_json()),
            ("account", Method::Post) => {
                let mut control = locked(&self.control);
                apply_account(&mut control, body).map_err(refused)?;
                Ok(control.account_json())
            }
            ("requests", Method::Get) => {
                let log = self.log.as_ref().map(|log| locked(log).iter().cloned().collect::<Vec<_>>());
                Ok(serde_json::to_vec(&log.unwrap_or_default()).unwrap_or_else(|_| b"[]".to_vec()))
            }
            ("requests", Method::Delete) => {
                let cleared = self.log.as_ref().map_or(0, |log| std::mem::take(&mut *locked(log)).len());
                Ok(format!("{{\"cleared\":{cleared}}}").into_bytes())
            }
            ("stats", Method::Get) => Ok(self.stats_json()),
            ("reset", Method::Post) => {
                *locked(&self.control) = Control::default();
                *locked(&self.counts) = Counts::default();
                if let Some(log) = &self.log {
                    locked(log).clear();
                }
                Ok(b"{\"reset\":true}".to_vec())
            }
            ("providers" | "account" | "requests" | "stats" | "reset", _) => {
                Err((405, "method not allowed on this endpoint".to_owned()))
            }
            _ => Err((404, "no such endpoint".to_owned())),
        }
    }

    /// `{"telemetry_requests": n, "telemetry": {path: n, …}, "chat_requests": m}`.
    fn stats_json(&self) -> Vec<u8> {
        let counts = locked(&self.counts);
        serde_json::json!({
            "telemetry_requests": counts.telemetry.values().sum::<u64>(),
            "telemetry": counts.telemetry,
            "chat_requests": counts.chats,
        })
        .to_string()
        .into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn router() -> OpenRouter {
        OpenRouter::new(&MockOptions::default())
    }

    fn control(router: &OpenRouter, path: &str, body: serde_json::Value) -> Value {
        let answer = router.control_request(Method::Post, path, body.to_string().as_bytes()).expect("accepted");
        serde_json::from_slice(&answer).expect("json")
    }

    fn chat(only: &[&str]) -> Vec<u8> {
        json!({"model": "z-ai/glm-5.2", "messages": [], "provider": {"only": only, "zdr": true}})
            .to_string()
            .into_bytes()
    }

    #[test]
    fn without_telemetry_the_pinned_provider_serves_and_is_recorded() {
        let router = router();
        let routed = router.route(&chat(&["novita/fp8"]));
        assert_eq!(routed.provider.as_deref(), Some("novita/fp8"));
        assert_eq!(routed.refusal, None);
        router.record(routed, 200);
        let log: Value =
            serde_json::from_slice(&router.control_request(Method::Get, "/mock/openrouter/requests", b"").expect("ok"))
                .expect("json");
        assert_eq!(
            log,
            json!([{"model": "z-ai/glm-5.2", "stream": false, "provider_block": {"only": ["novita/fp8"], "zdr": true}, "served_by": "novita/fp8", "status": 200}])
        );
        assert_eq!(router.route(br#"{"model": "m"}"#).provider.as_deref(), Some("openrouter-default"));
    }

    #[test]
    fn a_429_provider_fails_its_times_then_serves() {
        let router = router();
        control(&router, "/mock/openrouter/providers", json!({"novita/fp8": {"status": 429, "times": 2}}));
        for _ in 0..2 {
            let routed = router.route(&chat(&["novita/fp8"]));
            let (status, body) = routed.refusal.expect("429");
            assert_eq!(status, 429);
            let body: Value = serde_json::from_slice(&body).expect("json");
            assert_eq!(body["error"]["metadata"]["provider_name"], "novita/fp8");
            assert_eq!(routed.provider.as_deref(), Some("novita/fp8"));
        }
        assert_eq!(router.route(&chat(&["novita/fp8"])).refusal, None);
        assert_eq!(router.control_request(Method::Get, "/mock/openrouter/providers", b""), Ok(b"{}".to_vec()));
    }

    #[test]
    fn an_input_cap_refuses_only_longer_inputs() {
        let router = router();
        control(&router, "/mock/openrouter/providers", json!({"baseten": {"input_cap_tokens": 100}}));
        assert_eq!(router.route(&chat(&["baseten/fp8"])).refusal, None);
        let mut long = json!({"model": "z-ai/glm-5.2", "max_tokens": 7, "provider": {"only": ["baseten/fp8"]}});
        long["messages"] = json!([{"role": "user", "content": "x".repeat(800)}]);
        let body = long.to_string().into_bytes();
        let (status, answer) = router.route(&body).refusal.expect("400");
        assert_eq!(status, 400);
        let answer: Value = serde_json::from_slice(&answer).expect("json");
        let expected =
            format!("maximum context length is 100 tokens. However, you requested about {} tokens", body.len() / 4 + 7);
        assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains(&expected)), "{answer}");
    }

    #[test]
    fn the_account_list_gives_the_account_404() {
        let router = router();
        control(&router, "/mock/openrouter/account", json!({"allowed_providers": ["novita", "deepinfra"]}));
        let routed = router.route(&chat(&["baseten/fp8"]));
        let (status, body) = routed.refusal.expect("404");
        assert_eq!((status, routed.provider), (404, None));
        let message =
            serde_json::from_slice::<Value>(&body).expect("json")["error"]["message"].as_str().expect("m").to_owned();
        assert!(message.contains("Providers serving z-ai/glm-5.2: baseten, but your account's allowed-providers setting permits only: novita, deepinfra. To change"), "{message}");
        assert_eq!(router.route(&chat(&["baseten/fp8", "deepinfra/fp4"])).provider.as_deref(), Some("deepinfra/fp4"));
    }

    #[test]
    fn reset_clears_control_log_and_counts() {
        let router = router();
        control(&router, "/mock/openrouter/providers", json!({"a/b": {"status": 500}}));
        router.telemetry_request(Method::Get, "/api/v1/models");
        router.record(router.route(&chat(&["a/b"])), 500);
        let stats: Value = serde_json::from_slice(&router.stats_json()).expect("json");
        assert_eq!(stats, json!({"telemetry_requests": 1, "telemetry": {"/api/v1/models": 1}, "chat_requests": 1}));
        control(&router, "/mock/openrouter/reset", json!({}));
        assert_eq!(router.control_request(Method::Get, "/mock/openrouter/providers", b""), Ok(b"{}".to_vec()));
        assert_eq!(router.control_request(Method::Get, "/mock/openrouter/requests", b""), Ok(b"[]".to_vec()));
        let stats: Value = serde_json::from_slice(&router.stats_json()).expect("json");
        assert_eq!(stats["telemetry_requests"], 0);
        assert_eq!(router.control_request(Method::Get, "/mock/openrouter/nope", b"").map_err(|e| e.0), Err(404));
        assert_eq!(router.control_request(Method::Delete, "/mock/openrouter/reset", b"").map_err(|e| e.0), Err(405));
    }
}
