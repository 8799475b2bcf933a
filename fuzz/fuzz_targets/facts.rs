//! The request-facts extractor (`gateway/src/facts.rs`) with every combination of `Needs`.
//!
//! Input: one byte (bit 0: the route, bits 1–4: the needs), then the request body. The body is
//! extracted with those needs and with all of them: the two agree on what is always read
//! (model, stream, `max_tokens`, the model's span, the error), the facts nobody asked for stay
//! empty, the span holds the model as JSON, the forwarded body (another model spliced in, the
//! top-level `tags` and `llmeu` cut) is a body with that model and neither, and an accepted body is a JSON
//! object whose `model` and `stream` say the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pointwork_core::{RequestParams, RouteKind};
use pointwork_gateway::facts::{extract_to, Extracted, FactsError, Needs};

fuzz_target!(|data: &[u8]| {
    let Some((&control, body)) = data.split_first() else { return };
    let route = if control & 1 == 0 { RouteKind::ChatCompletions } else { RouteKind::Embeddings };
    let bit = |i: u32| control & (1 << i) != 0;
    let needs = Needs { prompt: bit(1), image: bit(2), params: bit(3), metadata: bit(4) };

    let some = extract_to(route, body, needs);
    let all = extract_to(route, body, Needs::ALL);
    match (&some, &all) {
        (Ok(some), Ok(all)) => {
            let (s, a) = (&some.facts, &all.facts);
            assert_eq!((&s.model, s.stream, s.max_tokens, s.route), (&a.model, a.stream, a.max_tokens, a.route));
            assert_eq!(some.model_span, all.model_span);
            check_lean(some, needs);
            check_accepted(route, body, all);
        }
        (Err(some), Err(all)) => check_refused(body, some, all),
        _ => panic!("with {needs:?} the body is {some:?}, with every need {all:?}"),
    }
});

/// What was not asked for is not extracted.
fn check_lean(extracted: &Extracted, needs: Needs) {
    let facts = &extracted.facts;
    if !needs.prompt {
        assert_eq!(facts.estimated_prompt_tokens, 0);
    }
    if !needs.prompt && !needs.image {
        assert!(!facts.has_image);
    }
    if !needs.params {
        assert_eq!(facts.params, RequestParams::NONE);
        assert_eq!(facts.allowed_model_region, None);
    }
    if !needs.metadata {
        assert!(facts.tags.is_empty() && facts.affinity.session.is_none());
    }
}

fn check_accepted(route: RouteKind, body: &[u8], extracted: &Extracted) {
    let facts = &extracted.facts;
    if let Some(value) = json_value(body) {
        let object = value.as_object().expect("an accepted body is an object");
        assert_eq!(object.get("model").and_then(|m| m.as_str()), Some(facts.model.as_str()));
        assert_eq!(object.get("stream") == Some(&serde_json::Value::Bool(true)), facts.stream);
    }

    // The span is the model's JSON string, quotes included.
    let span = extracted.model_span.clone();
    assert!(span.start < span.end && span.end <= body.len(), "span {span:?} outside the body");
    let spanned: String = serde_json::from_slice(&body[span.clone()]).expect("the span holds a JSON string");
    assert_eq!(spanned, facts.model);

    // Forwarding splices another model in and cuts the top-level `tags`; nothing else the pick
    // reads changes.
    let replacement = br#""upstream/model-\u00e9""#;
    let mut spliced = Vec::new();
    extracted.append_forwarded(&mut spliced, body, replacement);
    assert_eq!(spliced.len(), extracted.forwarded_len(body, replacement));
    let again = extract_to(route, &spliced, Needs::ALL).expect("a forwarded body is accepted");
    assert_eq!(again.facts.model, "upstream/model-é");
    assert_eq!(again.model_span.len(), replacement.len());
    assert_eq!((again.cut_members.len(), again.llmeu.clone()), (0, None), "no tags or llmeu are forwarded");
    if let Some(value) = json_value(&spliced) {
        assert!(value.get("tags").is_none() && value.get("llmeu").is_none());
    }
    assert_eq!((again.facts.stream, again.facts.max_tokens), (facts.stream, facts.max_tokens));
    assert_eq!(again.facts.params, facts.params);
    if extracted.cut_members.is_empty() {
        assert_eq!(again.facts.tags, facts.tags);
    }
}

fn check_refused(body: &[u8], some: &FactsError, all: &FactsError) {
    assert_eq!(std::mem::discriminant(some), std::mem::discriminant(all), "{some:?} but {all:?}");
    match std::str::from_utf8(body) {
        Err(e) => assert_eq!(*all, FactsError::NotUtf8(e.valid_up_to())),
        Ok(_) => assert!(!matches!(all, FactsError::NotUtf8(_))),
    }
    if let FactsError::NotAnObject = all {
        assert!(json_value(body).is_none_or(|v| !v.is_object()), "an object refused as not one");
    }
}

/// The body as a `serde_json::Value`, or `None` where only building the tree fails: a number
/// out of `f64`'s range, a nesting past serde_json's recursion limit, or an unpaired surrogate
/// escape (`"\uDD11"`: RFC 8259's grammar allows it, §8.2). The extractor skips the values it
/// does not read (validating their syntax only) and forwards them as they are. Any other error
/// panics.
fn json_value(body: &[u8]) -> Option<serde_json::Value> {
    const TREE_ONLY: [&str; 2] = ["number out of range", "recursion limit exceeded"];
    let tree_only = |e: &serde_json::Error| TREE_ONLY.iter().any(|m| e.to_string().contains(m));
    match serde_json::from_slice(body) {
        Ok(value) => Some(value),
        Err(e) if tree_only(&e) => None,
        Err(e) => match serde_json::from_slice::<serde_json::Value>(&without_surrogate_escapes(body)) {
            Err(again) if !tree_only(&again) => panic!("the extractor read a body serde_json refuses: {e}"),
            _ => None,
        },
    }
}

/// `body` with every surrogate escape (`\uD800`–`\uDFFF`) replaced by `\u0041`, the same length.
fn without_surrogate_escapes(body: &[u8]) -> Vec<u8> {
    let mut out = body.to_vec();
    let mut i = 0;
    while i + 6 <= out.len() {
        let escape = &out[i..i + 6];
        let surrogate = matches!(escape[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F');
        if escape.starts_with(b"\\u") && matches!(escape[2], b'd' | b'D') && surrogate {
            out[i..i + 6].copy_from_slice(b"\\u0041");
            i += 6;
        } else {
            i += 1;
        }
    }
    out
}
