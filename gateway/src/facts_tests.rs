//! Tests of `facts.rs`: every field the pick reads, the errors, both depths, the fixtures.

use super::*;
use pointwork_core::RequestParams;

#[test]
fn without_the_prompt_estimate_the_messages_are_skipped_but_an_image_still_shows() {
    let image = br#"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"what is this"},{"type":"image_url","image_url":{"url":"data:x"}}]}]}"#;
    let top = extract_to(RouteKind::ChatCompletions, image, Needs { image: true, ..Needs::NONE }).unwrap().facts;
    assert!(top.has_image);
    assert_eq!(top.estimated_prompt_tokens, 0);
    let full = extract_to(RouteKind::ChatCompletions, image, Needs::ALL).unwrap().facts;
    assert!(full.has_image);
    assert!(full.estimated_prompt_tokens > 765);
    let text = br#"{"model":"m","messages":[{"role":"user","content":"say \"image_url\" please"}]}"#;
    assert!(
        !extract_to(RouteKind::ChatCompletions, text, Needs { image: true, ..Needs::NONE }).unwrap().facts.has_image
    );
    assert!(!extract_to(RouteKind::ChatCompletions, image, Needs::NONE).unwrap().facts.has_image);
    // Facts nobody reads are not extracted.
    let tagged = br#"{"model":"m","metadata":{"tags":["a"],"session_id":"s"},"tags":["b"],"tools":[{"type":"function"}],"allowed_model_region":"eu"}"#;
    let lean = extract_to(RouteKind::ChatCompletions, tagged, Needs::NONE).unwrap().facts;
    assert!(lean.tags.is_empty() && lean.affinity.session.is_none() && lean.params == RequestParams::NONE);
    assert_eq!(lean.allowed_model_region, None);
    let full = extract_to(RouteKind::ChatCompletions, tagged, Needs::ALL).unwrap().facts;
    assert_eq!(full.tags, ["a", "b"]);
    assert!(full.affinity.session.is_some() && full.params != RequestParams::NONE);
    // Either way the same broken bodies are refused.
    let broken = br#"{"model":"m","messages":[{"role":"user","content":"x"}"#;
    assert!(extract_to(RouteKind::ChatCompletions, broken, Needs::NONE).is_err());
}

fn chat(body: &str) -> Result<Extracted, FactsError> {
    extract(RouteKind::ChatCompletions, body.as_bytes())
}

#[test]
fn finds_model_and_stream_and_splices() {
    let body = r#"{"messages":[{"role":"user","content":"hi \"model\""}], "model" : "gpt-4o-mini","stream":true}"#;
    let ex = chat(body).unwrap();
    assert_eq!(ex.facts.model, "gpt-4o-mini");
    assert!(ex.facts.stream);
    let expected = body.replace(r#""gpt-4o-mini""#, r#""upstream-x""#);
    assert_eq!(forwarded(&ex, body, br#""upstream-x""#), expected);
}

/// What goes upstream, checking its announced length.
fn forwarded(ex: &Extracted, body: &str, model_json: &[u8]) -> String {
    let mut out = Vec::new();
    ex.append_forwarded(&mut out, body.as_bytes(), model_json);
    assert_eq!(ex.forwarded_len(body.as_bytes(), model_json), out.len());
    String::from_utf8(out).unwrap()
}

#[test]
fn top_level_tags_llmeu_and_cache_are_never_forwarded() {
    let cases = [
        (r#"{"model":"m","tags":["a"],"stream":false}"#, r#"{"model":"u","stream":false}"#),
        (r#"{"tags" : [ "a" ] , "model":"m"}"#, r#"{"model":"u"}"#),
        (r#"{"model":"m", "tags": ["a", "b"] }"#, r#"{"model":"u" }"#),
        ("{\"a\":1,\n  \"tags\":\n[\"x\"],\n  \"model\":\"m\"}", "{\"a\":1,\n  \"model\":\"u\"}"),
        (r#"{"t\u0061gs":["a"],"model":"m"}"#, r#"{"model":"u"}"#),
        (r#"{"metadata":{"tags":["a"]},"model":"m"}"#, r#"{"metadata":{"tags":["a"]},"model":"u"}"#),
        // The policy router's overrides go nowhere either, before or after the model, with tags.
        (r#"{"llmeu":{"residency":"eu-owned"},"model":"m"}"#, r#"{"model":"u"}"#),
        (r#"{"model":"m","llmeu":{"task":"coding"},"n":1}"#, r#"{"model":"u","n":1}"#),
        (r#"{"tags":["a"],"model":"m","llmeu":{},"stream":true}"#, r#"{"model":"u","stream":true}"#),
        (r#"{"llmeu":{},"tags":["a"],"model":"m"}"#, r#"{"model":"u"}"#),
        (r#"{"model":"m","tags":[],"llmeu":null}"#, r#"{"model":"u"}"#),
        (r#"{"model":"m", "llmeu": 1 , "tags": null }"#, r#"{"model":"u"}"#),
        (r#"{"tags":[],"llmeu":{},"model":"m"}"#, r#"{"model":"u"}"#),
        // LiteLLM's cache controls are the gateway's, whatever their value.
        (r#"{"model":"m","cache":{"no-cache":true},"n":1}"#, r#"{"model":"u","n":1}"#),
        (r#"{"cache":null,"tags":["a"],"model":"m"}"#, r#"{"model":"u"}"#),
    ];
    for (body, expected) in cases {
        let ex = chat(body).unwrap();
        let sent: serde_json::Value = serde_json::from_str(&forwarded(&ex, body, br#""u""#)).expect("valid JSON");
        assert_eq!(sent, serde_json::from_str::<serde_json::Value>(expected).unwrap(), "{body}");
    }
    let body = r#"{"model":"m","llmeu":{"residency":"de"}}"#;
    assert_eq!(&body[chat(body).unwrap().llmeu.unwrap()], r#"{"residency":"de"}"#);
    assert_eq!(chat(r#"{"model":"m"}"#).unwrap().llmeu, None);
    // Whitespace around the cut stays; the rest of the body is untouched byte for byte.
    let body = r#"{"model":"m", "tags": ["a"], "temperature": 0.50}"#;
    assert_eq!(forwarded(&chat(body).unwrap(), body, br#""u""#), r#"{"model":"u",  "temperature": 0.50}"#);
}

#[test]
fn escaped_model_names_are_decoded() {
    let ex = chat(r#"{"model":"a\/b\u0041"}"#).unwrap();
    assert_eq!(ex.facts.model, "a/bA");
    assert!(!ex.facts.stream);
}

#[test]
fn bad_bodies_say_what_is_wrong() {
    assert!(matches!(chat(r#"{"model":"x""#), Err(FactsError::InvalidJson(_))));
    assert!(matches!(chat("not json"), Err(FactsError::InvalidJson(_))));
    assert_eq!(chat("[1]"), Err(FactsError::NotAnObject));
    assert_eq!(chat(r#"{"messages":[]}"#), Err(FactsError::MissingModel));
    assert_eq!(chat(r#"{"model":3}"#), Err(FactsError::ModelNotString));
    assert_eq!(chat(r#"{"model":"x","stream":"yes"}"#), Err(FactsError::StreamNotBool));
    assert!(matches!(chat(r#"{"model":"x","model":"y"}"#), Err(FactsError::InvalidJson(_))));
    assert!(matches!(chat(r#"{"model":null,"model":"y"}"#), Err(FactsError::InvalidJson(_))));
    assert_eq!(chat(r#"{"model":null}"#), Err(FactsError::MissingModel));
    // The scanner leaves what it refuses to serde_json, whose words the client reads.
    assert_eq!(
        chat(r#"{"model":"x",}"#).unwrap_err().to_string(),
        "request body is not valid JSON: trailing comma at line 1 column 14"
    );
    assert_eq!(chat(r#"{"mod\u0065l":"x"}"#).unwrap().facts.model, "x");
    assert_eq!(extract(RouteKind::Embeddings, b"{\"model\":\"\xff\"}"), Err(FactsError::NotUtf8(10)));
}

#[test]
fn null_stream_is_false() {
    assert!(!chat(r#"{"model":"x","stream":null}"#).unwrap().facts.stream);
}

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_fixture_request_with_images_tools_and_max_tokens() {
    let body = fixture("openai_chat_request.json");
    let f = extract(RouteKind::ChatCompletions, &body).unwrap().facts;
    assert_eq!(f.model, "gpt-4o");
    assert!(f.has_image);
    assert_eq!(f.max_tokens, Some(300));
    let expected = [Param::Tools, Param::ToolChoice, Param::ParallelToolCalls];
    assert_eq!(f.params.iter().collect::<Vec<_>>(), expected, "response_format text is not a schema");
    assert!(f.tags.is_empty(), "metadata without tags");
    // 5 messages, 2 images, the tools' JSON: well above the text alone, well below the body.
    let images = 2 * estimate::PER_IMAGE;
    assert!(f.estimated_prompt_tokens > images + 5 * estimate::PER_MESSAGE + 100, "{}", f.estimated_prompt_tokens);
    assert!(f.estimated_prompt_tokens < images + body.len() as u64 / 2, "{}", f.estimated_prompt_tokens);
}

#[test]
fn the_fixture_stream_and_embeddings_requests() {
    let stream = fixture("openai_chat_request_stream.json");
    let embed = fixture("openai_embeddings_request.json");
    let f = extract(RouteKind::ChatCompletions, &stream).unwrap().facts;
    assert!(f.stream && !f.has_image && f.params.is_empty());
    assert_eq!(f.max_tokens, Some(256), "max_completion_tokens");
    // "You are a helpful assistant." + "Hello!" + the roles ("system", "user"), as JSON
    // with their quotes: 52 bytes -> 13, + 2 messages, + priming.
    assert_eq!(f.estimated_prompt_tokens, 13 + 2 * estimate::PER_MESSAGE + estimate::PER_PROMPT);
    let e = extract(RouteKind::Embeddings, &embed).unwrap().facts;
    assert_eq!(e.route, RouteKind::Embeddings);
    assert!(e.estimated_prompt_tokens >= 85 / 4, "{}", e.estimated_prompt_tokens);
}

#[test]
fn non_ascii_bytes_are_counted_eight_at_a_time() {
    for s in ["", "abc", "café au lait, naïve résumé", "中文中文中文", "a\u{10348}bcdefghijk"] {
        assert_eq!(non_ascii_bytes(s.as_bytes()), s.bytes().filter(|b| !b.is_ascii()).count() as u64, "{s}");
    }
}

#[test]
fn tags_region_and_params() {
    let f = chat(
        r#"{"model":"m","metadata":{"tags":["paid","!beta",3,"&eu"],"user":"x"},"allowed_model_region":"EU",
            "response_format":{"type":"json_schema","json_schema":{}},"reasoning_effort":"low",
            "tool_choice":"none","tools":[],"parallel_tool_calls":false,"max_tokens":12}"#,
    )
    .unwrap()
    .facts;
    assert_eq!(f.tags, ["paid", "!beta", "&eu"]);
    assert_eq!(f.allowed_model_region.as_deref(), Some("eu"));
    assert_eq!(f.params.iter().collect::<Vec<_>>(), [Param::ResponseSchema, Param::ReasoningEffort]);
    assert_eq!(f.max_tokens, Some(12));
    let g = chat(r#"{"model":"m","metadata":"no","max_tokens":"x","max_completion_tokens":7,"messages":{"a":1}}"#)
        .unwrap()
        .facts;
    assert!(g.tags.is_empty());
    assert_eq!((g.max_tokens, g.estimated_prompt_tokens), (Some(7), 0));
}

#[test]
fn top_level_tags_count_like_metadata_tags_and_both_add_up() {
    let tags = |body: &str| chat(body).unwrap().facts.tags;
    // Alone: the same reading as `metadata.tags` (strings kept, other items dropped).
    assert_eq!(tags(r#"{"model":"m","tags":["paid","!beta",3,null,"&eu"]}"#), ["paid", "!beta", "&eu"]);
    assert_eq!(
        tags(r#"{"model":"m","tags":["paid","!beta",3,null,"&eu"]}"#),
        tags(r#"{"model":"m","metadata":{"tags":["paid","!beta",3,null,"&eu"]}}"#)
    );
    // Both: the union, `metadata.tags` first wherever each sits (a tag in both is harmless twice).
    assert_eq!(tags(r#"{"tags":["b","a"],"model":"m","metadata":{"tags":["a"]}}"#), ["a", "b", "a"]);
    // Not a list, or null: no tags, and the body is not refused (as for `metadata.tags`).
    for body in [r#"{"model":"m","tags":"paid"}"#, r#"{"model":"m","tags":null}"#, r#"{"model":"m","tags":{"a":1}}"#] {
        assert!(tags(body).is_empty(), "{body}");
    }
    // A top-level `tags` does not stand in for `metadata`: the session id is still read there only.
    let f = chat(r#"{"model":"m","tags":["a"],"session_id":"s"}"#).unwrap().facts;
    assert!(f.affinity.session.is_none());
}

#[test]
fn the_estimate_counts_text_not_image_data_and_never_much_under() {
    let image = "A".repeat(100_000);
    let body = format!(
        r#"{{"model":"m","messages":[{{"role":"user","content":[{{"type":"text","text":"abcd"}},{{"type":"image_url","image_url":{{"url":"data:image/png;base64,{image}"}}}}]}}]}}"#
    );
    let f = chat(&body).unwrap().facts;
    assert!(f.has_image);
    // "abcd" and "user" (the role, 6 bytes of JSON): 10 bytes -> 3.
    assert_eq!(f.estimated_prompt_tokens, 3 + estimate::PER_IMAGE + estimate::PER_MESSAGE + estimate::PER_PROMPT);
    // CJK: 3 bytes a character, one token each at most.
    let cjk = "中文".repeat(300);
    let f = chat(&format!(r#"{{"model":"m","messages":[{{"role":"user","content":"{cjk}"}}]}}"#)).unwrap().facts;
    assert!(f.estimated_prompt_tokens >= 600, "{}", f.estimated_prompt_tokens);
    // Escapes are counted as written (26 bytes for 4 characters, + the role's 6): over, never under.
    let f = chat(r#"{"model":"m","messages":[{"role":"user","content":"\u0041\u0042\u0043\u0044"}]}"#).unwrap().facts;
    assert_eq!(f.estimated_prompt_tokens, 8 + estimate::PER_MESSAGE + estimate::PER_PROMPT);
}

#[test]
fn a_body_that_is_not_utf8_is_refused_with_its_offset() {
    let mut body = br#"{"model":"m","messages":[{"role":"user","content":"ok "#.to_vec();
    let at = body.len();
    body.extend_from_slice(b"\xff\xfe\"}]}");
    for needs in [Needs::NONE, Needs::ALL] {
        assert_eq!(extract_to(RouteKind::ChatCompletions, &body, needs), Err(FactsError::NotUtf8(at)));
    }
    assert_eq!(FactsError::NotUtf8(at).to_string(), format!("request body is not valid UTF-8 (at byte {at})"));
}

#[test]
fn what_the_walk_cannot_decode_is_refused_or_accepted_whatever_the_needs() {
    // Found by fuzz/fuzz_targets/facts.rs: with the prompt estimate on, `messages` was decoded
    // and a number past f64 refused the body as invalid JSON; without it, it was skipped.
    let found = b"{\n\n  \"messages\":\t2e4663\n}";
    let all_needs = (0..16).map(|bits| Needs {
        prompt: bits & 1 != 0,
        image: bits & 2 != 0,
        params: bits & 4 != 0,
        metadata: bits & 8 != 0,
    });
    for needs in all_needs.clone() {
        assert_eq!(extract_to(RouteKind::Embeddings, found, needs), Err(FactsError::MissingModel), "{needs:?}");
    }
    for body in [
        r#"{"model":"m","messages":2e4663}"#,
        r#"{"model":"m","messages":[1e999,{"role":"user","content":"hi"}]}"#,
        r#"{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"x"},-1e400]}]}"#,
        r#"{"model":"m","messages":[{"\uDD11":"x","content":[{"type":"image_url","image_url":{}}]}]}"#,
    ] {
        let walked = extract_with::<MessagesScan>(RouteKind::ChatCompletions, body.as_bytes(), Needs::ALL);
        assert!(matches!(walked, Err(FactsError::InvalidJson(_))), "{body}: the walk alone gives {walked:?}");
        for needs in all_needs.clone() {
            let facts = extract_to(RouteKind::ChatCompletions, body.as_bytes(), needs).unwrap().facts;
            assert_eq!(facts.model, "m", "{body} with {needs:?}");
            if needs.prompt {
                // The whole body, as the walk could not count it.
                assert!(facts.estimated_prompt_tokens >= body.len() as u64 / 4, "{body}");
            }
        }
    }
    let unpaired = br#"{"model":"m","messages":[{"\uDD11":"x","content":[{"type":"image_url","image_url":{}}]}]}"#;
    assert!(extract(RouteKind::ChatCompletions, unpaired).unwrap().facts.has_image);
}
