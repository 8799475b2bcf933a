use super::*;
use sha2::{Digest, Sha256};

fn body(text: &str) -> Map<String, Value> {
    serde_json::from_str(text).unwrap()
}

fn chat(text: &str) -> String {
    derive(RouteKind::ChatCompletions, "gpt", &body(text), None).hex
}

const BASE: &str = r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0.5}"#;

#[test]
fn the_digest_is_64_lowercase_hex_digits_and_stable() {
    let hex = chat(BASE);
    assert_eq!(hex.len(), 64);
    assert!(hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)), "{hex}");
    assert_eq!(hex, chat(BASE));
}

#[test]
fn the_digest_is_sha256_of_the_material_as_documented() {
    let material = "pointwork-cache-1\n/chat/completions\n\"ns\"\n{\"a\":{\"x\":1,\"y\":[2,\"s\"]},\"model\":\"grp\"}";
    let expected = hex(&Sha256::digest(material.as_bytes()));
    let got =
        derive(RouteKind::ChatCompletions, "grp", &body(r#"{"model":"m","a":{"y":[2.0,"s"],"x":1}}"#), Some("ns"));
    assert_eq!(got.hex, expected);
}

#[test]
fn member_order_and_whitespace_do_not_change_the_key() {
    let reordered = r#"{ "temperature" : 0.5,
        "messages": [ { "content": "hi", "role": "user" } ],
        "model": "gpt" }"#;
    assert_eq!(chat(BASE), chat(reordered));
    // Escapes that spell the same string are the same string.
    assert_eq!(
        chat(BASE),
        chat(r#"{"model":"gpt","messages":[{"role":"user","content":"\u0068i"}],"temperature":0.5}"#)
    );
}

#[test]
fn numbers_are_compared_by_value() {
    let one = r#"{"model":"gpt","messages":[],"n":1,"temperature":1}"#;
    assert_eq!(chat(one), chat(r#"{"model":"gpt","messages":[],"n":1.0,"temperature":1.00}"#));
    assert_eq!(chat(one), chat(r#"{"model":"gpt","messages":[],"n":1e0,"temperature":10e-1}"#));
    assert_ne!(chat(one), chat(r#"{"model":"gpt","messages":[],"n":1,"temperature":1.5}"#));
    assert_ne!(chat(one), chat(r#"{"model":"gpt","messages":[],"n":"1","temperature":1}"#), "a string is not a number");
}

#[test]
fn every_parameter_that_can_change_the_answer_changes_the_key() {
    let base = chat(BASE);
    let changed = [
        r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0.7}"#,
        r#"{"model":"gpt","messages":[{"role":"user","content":"hi!"}],"temperature":0.5}"#,
        r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"tools":[{"type":"function","function":{"name":"f"}}]}"#,
        r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"stream":true}"#,
        r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"stream":true,"stream_options":{"include_usage":true}}"#,
        r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"user":"u1"}"#,
        r#"{"model":"gpt","messages":[{"role":"user","content":"hi"}],"temperature":0.5,"some_new_param":null}"#,
    ];
    for text in changed {
        assert_ne!(chat(text), base, "{text}");
    }
    assert_ne!(
        chat(r#"{"model":"gpt","messages":[],"stream":true}"#),
        chat(r#"{"model":"gpt","messages":[],"stream":false}"#)
    );
}

#[test]
fn the_model_group_given_is_keyed_not_the_body_model() {
    let b = body(BASE);
    let gpt = derive(RouteKind::ChatCompletions, "gpt", &b, None);
    assert_ne!(gpt, derive(RouteKind::ChatCompletions, "claude", &b, None));
    let other_name = body(&BASE.replace(r#""model":"gpt""#, r#""model":"alias-of-gpt""#));
    assert_eq!(gpt, derive(RouteKind::ChatCompletions, "gpt", &other_name, None));
    let no_model = body(r#"{"messages":[{"role":"user","content":"hi"}],"temperature":0.5}"#);
    assert_eq!(gpt, derive(RouteKind::ChatCompletions, "gpt", &no_model, None));
}

#[test]
fn the_surface_and_the_namespace_change_the_key() {
    let b = body(BASE);
    let plain = derive(RouteKind::ChatCompletions, "gpt", &b, None);
    assert_ne!(plain.hex, derive(RouteKind::Messages, "gpt", &b, None).hex);
    assert_ne!(plain.hex, derive(RouteKind::Responses, "gpt", &b, None).hex);
    let a = derive(RouteKind::ChatCompletions, "gpt", &b, Some("a"));
    let b2 = derive(RouteKind::ChatCompletions, "gpt", &b, Some("b"));
    assert_ne!(plain.hex, a.hex);
    assert_ne!(a.hex, b2.hex);
    assert_eq!(a.namespace.as_deref(), Some("a"));
    // A namespace spelled "null" is not the absence of one.
    assert_ne!(plain.hex, derive(RouteKind::ChatCompletions, "gpt", &b, Some("null")).hex);
}

#[test]
fn members_that_cannot_change_the_answer_are_not_keyed() {
    let base = chat(BASE);
    let extras = [
        r#""metadata":{"trace":"x"}"#,
        r#""litellm_metadata":{"a":1}"#,
        r#""cache":{"no-cache":true,"ttl":60}"#,
        r#""caching":false"#,
        r#""ttl":30"#,
        r#""tags":["team-a"]"#,
        r#""litellm_session_id":"s1""#,
        r#""litellm_trace_id":"t1""#,
        r#""proxy_server_request":{"url":"x"}"#,
        r#""num_retries":3,"timeout":10"#,
    ];
    for extra in extras {
        let text = BASE.replacen('{', &format!("{{{extra},"), 1);
        assert_eq!(chat(&text), base, "{text}");
    }
}

#[test]
fn storage_keys_carry_the_prefix_and_the_namespace() {
    let k = CacheKey { hex: "ab".into(), namespace: None };
    assert_eq!(k.storage_key("pw"), "pw:cache:ab");
    let k = CacheKey { hex: "ab".into(), namespace: Some("team".into()) };
    assert_eq!(k.storage_key("pw"), "pw:cache:team:ab");
}

#[test]
fn messages_are_counted_as_litellm_counts_them() {
    let count = |route, text: &str| message_count(route, &body(text));
    assert_eq!(count(RouteKind::ChatCompletions, r#"{"messages":[{},{},{}]}"#), 3);
    assert_eq!(count(RouteKind::Messages, r#"{"messages":[{"role":"user"}]}"#), 1);
    assert_eq!(count(RouteKind::ChatCompletions, r#"{"messages":"x"}"#), 0);
    assert_eq!(count(RouteKind::Responses, r#"{"input":"hello"}"#), 1);
    let items = r#"{"input":[{"role":"user","content":"a"},{"type":"file","file_id":"f"},{"type":"message"},"text"]}"#;
    assert_eq!(count(RouteKind::Responses, items), 2, "file items and non-objects are not conversation items");
    assert_eq!(count(RouteKind::Responses, r#"{}"#), 0);
    assert_eq!(count(RouteKind::Embeddings, r#"{"input":["a","b"],"messages":[{}]}"#), 0);
}

#[test]
fn strings_are_written_as_serde_writes_them_whatever_they_hold() {
    let texts = [
        String::new(),
        "plain".to_string(),
        "x".repeat(100),
        "é".repeat(40),
        format!("{}\"q\\\n\u{1}", "ü".repeat(33)),
        "日本語のテキスト".repeat(9),
    ];
    for text in &texts {
        let mut out = Vec::new();
        write_string(&mut out, text);
        assert_eq!(String::from_utf8(out).unwrap(), serde_json::to_string(text).unwrap(), "{text:?}");
    }
}
