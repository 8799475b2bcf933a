//! `general_settings.master_key` over real sockets: the API needs it (401 in OpenAI's error shape
//! otherwise), health and metrics stay open, and the caller's key never goes upstream.

mod common;

use common::{chat_body, config, deployment, recorded_headers, Gateway, Mock};

#[test]
fn with_a_master_key_the_api_needs_it_and_health_stays_open() {
    let a = Mock::start("a", &[]);
    let yaml = config(
        &[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")],
        "general_settings: {master_key: sk-master-9876}\n",
    );
    let gateway = Gateway::start(&yaml);
    let body = chat_body("gpt", false);
    let call = |auth: Option<&str>, path: &str, method: &str| {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", *a)).collect();
        let payload: &[u8] = if method == "POST" { body.as_bytes() } else { b"" };
        gateway.client().request(method, path, &headers, payload)
    };
    for (auth, message) in [
        (None, "no API key passed in"),
        (Some("Bearer sk-wrong"), "invalid API key"),
        (Some("Bearer sk-master-987"), "invalid API key"),
        (Some("sk-master-9876"), "not Bearer <key>"),
    ] {
        for (path, method) in [("/v1/chat/completions", "POST"), ("/v1/embeddings", "POST"), ("/v1/models", "GET")] {
            let r = call(auth, path, method);
            assert_eq!(r.status, 401, "{auth:?} {path}: {}", r.text());
            let error = &r.json()["error"];
            assert_eq!(error["type"], "authentication_error", "{error}");
            assert!(error["message"].as_str().unwrap().contains(message), "{error}");
            assert!(!r.text().contains("sk-master"), "the key is never echoed: {}", r.text());
        }
    }
    assert_eq!(a.request_count(), 0, "nothing unauthenticated reached the provider");
    let ok = call(Some("Bearer sk-master-9876"), "/v1/chat/completions", "POST");
    assert_eq!((ok.status, ok.deployment()), (200, "dep-a"), "{}", ok.text());
    assert_eq!(call(Some("Bearer sk-master-9876"), "/v1/models", "GET").status, 200);
    // The deployment's key goes upstream, never the caller's.
    let sent = &a.requests()[0];
    assert_eq!(recorded_headers(sent, "authorization"), ["Bearer sk-dep-a"]);
    for open in ["/health/liveliness", "/health/readiness", "/metrics"] {
        assert_eq!(call(None, open, "GET").status, 200, "{open}");
    }
}

#[test]
fn without_a_master_key_the_api_is_open() {
    let a = Mock::start("a", &[]);
    let gateway = Gateway::start(&config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &a, "")], ""));
    assert_eq!(gateway.chat("gpt").status, 200);
}
