use std::sync::Arc;
use std::time::Duration;

use pointwork_config::LangfuseSettings;
use pointwork_core::RouteKind;
use serde_json::{json, Value};

use super::*;
use crate::export::record::AttemptRecord;
use crate::usage::Usage;

const SECRET: &str = "sk-lf-secret-0a1b2c";
const START: u64 = 1_796_551_090_123_456_789;

fn settings(successes: bool, failures: bool) -> LangfuseSettings {
    LangfuseSettings {
        host: "http://lf.test:3000/".into(),
        public_key: "pk-lf-public".into(),
        secret_key: SECRET.into(),
        successes,
        failures,
        timeout: Duration::from_secs(20),
        environment: Some("staging".into()),
        release: None,
    }
}

fn attempt(deployment: &str, status: u16, failure: Option<&'static str>) -> AttemptRecord {
    AttemptRecord {
        span_id: [9; 8],
        start_unix_nanos: START + 1_000_000,
        end_unix_nanos: START + 41_000_000,
        deployment: deployment.into(),
        provider: "openai",
        upstream_model: "gpt-4o-mini".into(),
        server: "api.openai.test:443".into(),
        status: Some(status),
        failure,
        cause: if failure.is_some() { "fresh" } else { "fallback" },
        first_token: None,
        error: failure.map(|_| "Incorrect API key provided: sk-provider-key-123".to_string()),
    }
}

fn record(body: Value) -> RequestRecord {
    RequestRecord {
        trace_id: [0xab; 16],
        span_id: [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08],
        parent_span_id: None,
        trace_state: None,
        start_unix_nanos: START,
        end_unix_nanos: START + 50_000_000,
        route: RouteKind::ChatCompletions,
        path: "/v1/chat/completions".into(),
        status: 200,
        stream: true,
        requested_model: "gpt".into(),
        model_group: Some("gpt".into()),
        deployment: Some("dep-b".into()),
        provider: Some("openai"),
        upstream_model: Some("gpt-4o-mini".into()),
        key_alias: Some("team-a-key".into()),
        team_id: Some("team-a".into()),
        user_id: Some("u-7".into()),
        route_reason: Some("fallback gpt → dep-b".into()),
        cause: Some("fallback".into()),
        policy: None,
        attempts: vec![attempt("dep-a", 401, Some("status_401")), attempt("dep-b", 200, None)],
        usage: Some(Usage { prompt_tokens: 12, completion_tokens: 18, total_tokens: 30 }),
        cost: Some(0.03),
        first_token: Some(Duration::from_millis(20)),
        overhead: Duration::from_micros(1500),
        response_model: Some("gpt-4o-mini-2024-07-18".into()),
        finish_reasons: vec!["stop".into()],
        error: None,
        cache_hit: false,
        request_body: Some(body.to_string().into_bytes()),
        response_body: Some(b"data: {\"choices\":[{\"delta\":{\"content\":\"Hello\"}}]}\n\ndata: [DONE]\n\n".to_vec()),
    }
}

fn body() -> Value {
    json!({
        "model": "gpt", "stream": true, "temperature": 0.2, "max_tokens": 64, "user": "end-user-1",
        "messages": [{"role": "user", "content": "a secret prompt"}],
        "metadata": {
            "session_id": "s-1", "trace_user_id": "u-trace", "generation_name": "gen-x", "tags": ["prod", "eu"],
            "api_key": "sk-caller-virtual-key", "user_api_key_hash": "deadbeef", "team": "search"
        }
    })
}

/// The batch `records` encode to, parsed.
fn encoded(sink: &LangfuseSink, records: Vec<RequestRecord>) -> (Vec<Value>, String) {
    let batch: Vec<Arc<Record>> = records.into_iter().map(|r| Arc::new(Record::Request(Box::new(r)))).collect();
    let (bytes, content_type) = sink.encode(&batch);
    assert_eq!(content_type, "application/json");
    let text = String::from_utf8(bytes).unwrap();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    (parsed["batch"].as_array().unwrap().clone(), text)
}

#[test]
fn a_request_is_a_trace_and_a_generation_as_litellm_sends_them() {
    let sink = LangfuseSink::new(settings(true, true), false);
    assert_eq!(sink.url(), "http://lf.test:3000/api/public/ingestion");
    let (events, text) = encoded(&sink, vec![record(body())]);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["trace-create", "generation-create"]);
    assert_ne!(events[0]["id"], events[1]["id"], "event ids are unique");
    assert_eq!(events[0]["timestamp"], "2026-12-06T09:58:10.173456Z");
    let trace = &events[0]["body"];
    assert_eq!(trace["id"], "ab".repeat(16), "no trace id given: the OTel trace id");
    assert_eq!(trace["name"], "litellm-acompletion");
    assert_eq!((&trace["sessionId"], &trace["userId"]), (&json!("s-1"), &json!("u-trace")));
    assert_eq!(trace["tags"], json!(["prod", "eu"]));
    assert_eq!(trace["environment"], "staging");
    let g = &events[1]["body"];
    assert_eq!(g["traceId"], trace["id"]);
    assert_eq!(g["id"], "0102030405060708");
    assert_eq!(g["name"], "gen-x");
    assert_eq!(g["model"], "openai/gpt-4o-mini");
    assert_eq!(g["modelParameters"], json!({"temperature": 0.2, "max_tokens": 64, "stream": true}));
    assert_eq!(g["usage"], json!({"input": 12, "output": 18, "total": 30, "unit": "TOKENS", "totalCost": 0.03}));
    assert_eq!(g["usageDetails"], json!({"input": 12, "output": 18, "total": 30}));
    assert_eq!(g["costDetails"], json!({"total": 0.03}));
    assert_eq!(g["level"], "DEFAULT");
    assert!(g.get("statusMessage").is_none());
    assert_eq!(
        (&g["startTime"], &g["completionStartTime"], &g["endTime"]),
        (
            &json!("2026-12-06T09:58:10.123456Z"),
            &json!("2026-12-06T09:58:10.143456Z"),
            &json!("2026-12-06T09:58:10.173456Z")
        )
    );
    let m = &g["metadata"];
    assert_eq!((&m["user_api_key_alias"], &m["user_api_key_team_id"]), (&json!("team-a-key"), &json!("team-a")));
    assert_eq!(m["user_api_key_end_user_id"], "end-user-1");
    assert_eq!(m["requester_metadata"]["team"], "search");
    assert_eq!(m["pointwork"]["deployment"], "dep-b");
    assert_eq!(m["pointwork"]["model_group"], "gpt");
    assert_eq!(m["pointwork"]["route_reason"], "fallback gpt → dep-b");
    assert_eq!(m["pointwork"]["attempts"].as_array().unwrap().len(), 2);
    assert_eq!(m["pointwork"]["attempts"][0]["failure"], "status_401");
    assert_eq!(m["pointwork"]["overhead_ms"], 1.5);
    assert_eq!(m["hidden_params"]["model_id"], "dep-b");
    // Content is off: LiteLLM's stand-ins, never the prompt.
    assert_eq!(g["input"], json!({"messages": [{"role": "user", "content": "redacted-by-litellm"}]}));
    assert_eq!(g["output"], json!({"role": "assistant", "content": "redacted-by-litellm"}));
    assert!(!text.contains("a secret prompt") && !text.contains("Hello"), "{text}");
    for secret in [SECRET, "sk-caller-virtual-key", "deadbeef", "sk-provider-key-123", "user_api_key_hash"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
}

#[test]
fn content_goes_only_when_on() {
    let sink = LangfuseSink::new(settings(true, true), true);
    let (events, _) = encoded(&sink, vec![record(body())]);
    let g = &events[1]["body"];
    assert_eq!(g["input"], json!({"messages": [{"role": "user", "content": "a secret prompt"}]}));
    assert_eq!(g["output"], json!({"role": "assistant", "content": "Hello"}));
    assert_eq!(events[0]["body"]["output"], g["output"]);
    let mut masked = body();
    masked["metadata"]["mask_output"] = true.into();
    let (events, _) = encoded(&sink, vec![record(masked)]);
    assert_eq!(events[1]["body"]["output"], "redacted-by-litellm");
}

#[test]
fn a_failed_request_is_an_error_generation() {
    let mut r = record(json!({"model": "gpt", "messages": []}));
    r.status = 401;
    r.attempts.truncate(1);
    r.usage = None;
    r.cost = None;
    r.key_alias = Some("master".into());
    r.error = Some(json!({"error": {"message": "Incorrect API key provided: sk-provider-key-123"}}).to_string());
    let sink = LangfuseSink::new(settings(true, true), false);
    let (events, text) = encoded(&sink, vec![r]);
    let g = &events[1]["body"];
    assert_eq!(g["level"], "ERROR");
    assert_eq!(g["statusMessage"], "Incorrect API key provided: [redacted]");
    assert_eq!(g["output"], g["statusMessage"]);
    assert_eq!(g["name"], "litellm-acompletion", "the master key has no alias");
    assert!(g.get("usage").is_none() && g.get("costDetails").is_none() && g.get("completionStartTime").is_none());
    assert!(!text.contains("sk-provider-key-123"));
}

#[test]
fn callbacks_choose_successes_or_failures() {
    let ok = Record::Request(Box::new(record(body())));
    let mut failed = record(body());
    failed.status = 503;
    let mut refused = failed.clone();
    let failed = Record::Request(Box::new(failed));
    let only = |s, f| LangfuseSink::new(settings(s, f), false);
    assert!(only(true, false).wants(&ok) && !only(true, false).wants(&failed));
    assert!(!only(false, true).wants(&ok) && only(false, true).wants(&failed));
    assert!(only(true, true).wants(&ok) && only(true, true).wants(&failed));
    refused.status = 401;
    refused.attempts.clear();
    assert!(!only(true, true).wants(&Record::Request(Box::new(refused))), "no model was called: no generation");
}

#[test]
fn a_callers_trace_id_names_the_trace_and_an_existing_one_is_only_joined() {
    let sink = LangfuseSink::new(settings(true, true), false);
    let mut b = body();
    b["metadata"]["trace_id"] = "my-trace".into();
    b["metadata"]["generation_id"] = "my-gen".into();
    let (events, _) = encoded(&sink, vec![record(b)]);
    assert_eq!(events[0]["body"]["id"], "my-trace");
    assert_eq!((&events[1]["body"]["traceId"], &events[1]["body"]["id"]), (&json!("my-trace"), &json!("my-gen")));
    let mut b = body();
    b["metadata"]["existing_trace_id"] = "old-trace".into();
    let (events, _) = encoded(&sink, vec![record(b)]);
    assert_eq!(events.len(), 1, "no trace-create for a trace the caller continues");
    assert_eq!(events[0]["body"]["traceId"], "old-trace");
}

#[test]
fn headers_carry_basic_auth_and_nothing_is_over_langfuses_batch_size() {
    let sink = LangfuseSink::new(settings(true, true), true);
    let auth = &sink.headers().iter().find(|(k, _)| k == "authorization").unwrap().1;
    let decoded = base64::engine::general_purpose::STANDARD.decode(auth.strip_prefix("Basic ").unwrap()).unwrap();
    assert_eq!(decoded, format!("pk-lf-public:{SECRET}").into_bytes());
    // Sixteen records with a 900 KB prompt each stay under 3.5 MB, the prompt left out.
    let big = "x".repeat(900_000);
    let records: Vec<RequestRecord> = (0..sink.max_batch())
        .map(|i| {
            let mut r = record(json!({"model": "gpt", "messages": [{"role": "user", "content": big}]}));
            r.span_id = [i as u8; 8];
            r
        })
        .collect();
    let (events, text) = encoded(&sink, records);
    assert!(text.len() < 3_500_000, "{} bytes", text.len());
    assert_eq!(events.len(), 2 * sink.max_batch());
    assert!(events[1]["body"]["input"].as_str().unwrap().contains("left out"));
    // Alone, the same record fits.
    let (events, _) =
        encoded(&sink, vec![record(json!({"model": "gpt", "messages": [{"role": "user", "content": big}]}))]);
    assert_eq!(events[1]["body"]["input"]["messages"][0]["content"].as_str().unwrap().len(), 900_000);
}

#[test]
fn multi_status_answers_are_judged() {
    assert_eq!(judge(b""), Verdict::Accepted);
    assert_eq!(judge(br#"{"successes":[{"id":"a-trace","status":201}],"errors":[]}"#), Verdict::Accepted);
    let refused = br#"{"successes":[],"errors":[{"id":"0102-trace","status":400,"message":"Invalid request data"},{"id":"0102-generation","status":400},{"id":"0303-trace","status":400}]}"#;
    assert!(matches!(judge(refused), Verdict::Rejected { records: 2, why } if why.contains("Invalid request data")));
    let failing =
        br#"{"errors":[{"id":"0102-trace","status":400},{"id":"0303-trace","status":500,"message":"db down"}]}"#;
    assert!(matches!(judge(failing), Verdict::Retry(why) if why.contains("db down")));
}

#[test]
fn timestamps_are_iso_8601_in_utc() {
    assert_eq!(iso8601(0), "1970-01-01T00:00:00.000000Z");
    assert_eq!(iso8601(951_782_400_000_001_000), "2000-02-29T00:00:00.000001Z");
    assert_eq!(iso8601(4_102_444_799_999_999_999), "2099-12-31T23:59:59.999999Z");
}
