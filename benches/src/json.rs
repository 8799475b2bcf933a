//! The request-facts extraction done with each JSON library DESIGN.md asks us to compare.
//!
//! Every variant does the core of [`pointwork_gateway::facts::extract`]'s job: validate the
//! whole document (syntax and UTF-8), find the top-level `model` string with the byte span of
//! its value (quotes included) and the top-level `stream` bool. The gateway's extraction also
//! walks `messages` for the filters' facts (prompt estimate, images, params, tags); the others
//! do not, so they are a lower bound for their library, not a like-for-like comparison.
//! The tests below check that all of them agree with the gateway on every bench body.

use std::ops::Range;

use pointwork_core::{RequestFacts, RouteKind};
use pointwork_gateway::facts::{self, Extracted, FactsError};
use serde::Deserialize;

/// serde_json with borrowed `RawValue` fields after a simdutf8 check of the body: what the gateway does now.
pub fn serde_json_borrowed(body: &[u8]) -> Result<Extracted, FactsError> {
    facts::extract(RouteKind::ChatCompletions, body)
}

/// The gateway's extraction when no filter reads more than `model` and `stream` (pre-call checks,
/// tags and session affinity off; no group mixing vision deployments): the common config.
pub fn serde_json_top(body: &[u8]) -> Result<Extracted, FactsError> {
    facts::extract_to(RouteKind::ChatCompletions, body, facts::Needs::NONE)
}

/// [`serde_json_borrowed`] plus a UTF-8 check of the whole body with `std::str::from_utf8`:
/// serde_json skips ignored strings without checking their UTF-8, which sonic-rs and simd-json
/// do check. This variant and the next price the difference.
pub fn serde_json_borrowed_std_utf8(body: &[u8]) -> Result<Extracted, FactsError> {
    std::str::from_utf8(body).map_err(|e| FactsError::InvalidJson(e.to_string()))?;
    serde_json_borrowed(body)
}

/// [`serde_json_borrowed`] plus a SIMD UTF-8 check of the whole body (`simdutf8`, which
/// sonic-rs and simd-json use themselves).
pub fn serde_json_borrowed_simdutf8(body: &[u8]) -> Result<Extracted, FactsError> {
    if simdutf8::basic::from_utf8(body).is_err() {
        // The slow path only to say where: the compat API gives the offset.
        let e = simdutf8::compat::from_utf8(body).expect_err("invalid UTF-8");
        return Err(FactsError::InvalidJson(e.to_string()));
    }
    serde_json_borrowed(body)
}

fn starts_with_object(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

fn stream_flag(raw: Option<&str>) -> Result<bool, FactsError> {
    match raw {
        None | Some("null") | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(_) => Err(FactsError::StreamNotBool),
    }
}

fn extracted(model: String, stream: bool, model_span: Range<usize>) -> Extracted {
    Extracted {
        facts: RequestFacts { stream, ..RequestFacts::new(RouteKind::ChatCompletions, model) },
        model_span,
        cut_members: Vec::new(),
        llmeu: None,
        previous_response_id: None,
        store: None,
    }
}

/// The offset of `inner` in `outer`, if `inner` points into it.
fn offset_in(outer: &[u8], inner: &[u8]) -> Option<usize> {
    let start = (inner.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    (start + inner.len() <= outer.len()).then_some(start)
}

#[derive(Deserialize)]
struct SonicTopLevel<'a> {
    #[serde(borrow)]
    model: Option<sonic_rs::LazyValue<'a>>,
    #[serde(borrow)]
    stream: Option<sonic_rs::LazyValue<'a>>,
}

/// sonic-rs into a struct of borrowed `LazyValue`s: skipped fields are still validated
/// (`skip_one(true)`), and `from_slice` checks the UTF-8 of the whole input first.
pub fn sonic_rs_lazy(body: &[u8]) -> Result<Extracted, FactsError> {
    if !starts_with_object(body) {
        // Not on the measured path; the gateway's answer for non-objects.
        return serde_json_borrowed(body);
    }
    let top: SonicTopLevel<'_> = sonic_rs::from_slice(body).map_err(|e| FactsError::InvalidJson(e.to_string()))?;
    let raw_model = top.model.ok_or(FactsError::MissingModel)?;
    let raw = raw_model.as_raw_str();
    if !raw.starts_with('"') {
        return Err(FactsError::ModelNotString);
    }
    // sonic-rs copies a string value with escapes out of the input, so its span is lost: such a
    // (rare) model name takes the gateway's path.
    let Some(start) = offset_in(body, raw.as_bytes()) else {
        return serde_json_borrowed(body);
    };
    let model = raw[1..raw.len() - 1].to_string();
    let stream = stream_flag(top.stream.as_ref().map(|s| s.as_raw_str()))?;
    Ok(extracted(model, stream, start..start + raw.len()))
}

/// What a shard would keep between requests for simd-json: the padded copy of the body,
/// simd-json's buffers and the tape, so that a warm extraction allocates nothing but the
/// model name.
#[derive(Default)]
pub struct SimdJsonScratch {
    input: Vec<u8>,
    buffers: simd_json::Buffers,
    tape: Option<simd_json::Tape<'static>>,
}

/// simd-json's tape (stage 1 + stage 2, so the whole document is validated), walked for the
/// top-level keys. simd-json parses in place, so the body is copied first (the gateway must
/// forward the original bytes); the copy is part of the measured time.
pub fn simd_json_tape(body: &[u8], scratch: &mut SimdJsonScratch) -> Result<Extracted, FactsError> {
    use simd_json::{Node, StaticNode};

    if !starts_with_object(body) {
        return serde_json_borrowed(body);
    }
    let SimdJsonScratch { input, buffers, tape } = scratch;
    input.clear();
    input.extend_from_slice(body);
    input.resize(body.len() + simd_json::INPUT_PADDING, 0);
    let base = input.as_ptr() as usize;
    let mut nodes = tape.take().unwrap_or_else(simd_json::Tape::null).reset();
    let parsed = simd_json::fill_tape_padded(input, body.len(), buffers, &mut nodes);
    let result = parsed.map_err(|e| FactsError::InvalidJson(e.to_string())).and_then(|()| {
        let Some(Node::Object { len, .. }) = nodes.0.first() else {
            return Err(FactsError::NotAnObject);
        };
        let mut model: Option<&str> = None;
        let mut stream: Option<Node<'_>> = None;
        let mut i = 1;
        for _ in 0..*len {
            let key = match nodes.0[i] {
                Node::String(k) => k,
                _ => return Err(FactsError::InvalidJson("object key is not a string".into())),
            };
            let value = nodes.0[i + 1];
            match key {
                "model" | "stream" if (key == "model" && model.is_some()) || (key == "stream" && stream.is_some()) => {
                    return Err(FactsError::InvalidJson(format!("duplicate field `{key}`")));
                }
                "model" => match value {
                    Node::String(s) => model = Some(s),
                    _ => return Err(FactsError::ModelNotString),
                },
                "stream" => stream = Some(value),
                _ => {}
            }
            i += 1 + node_count(value);
        }
        let model = model.ok_or(FactsError::MissingModel)?;
        let stream = match stream {
            None | Some(Node::Static(StaticNode::Null)) | Some(Node::Static(StaticNode::Bool(false))) => false,
            Some(Node::Static(StaticNode::Bool(true))) => true,
            Some(_) => return Err(FactsError::StreamNotBool),
        };
        // The decoded string starts where its raw text started (in-place unescaping); the raw
        // text ends at the first unescaped quote of the original body.
        let start = model.as_ptr() as usize - base - 1;
        let end = closing_quote(body, start + 1) + 1;
        Ok(extracted(model.to_string(), stream, start..end))
    });
    *tape = Some(nodes.reset());
    result
}

/// How many tape nodes a value takes, itself included.
fn node_count(node: simd_json::Node<'_>) -> usize {
    match node {
        simd_json::Node::Object { count, .. } | simd_json::Node::Array { count, .. } => count + 1,
        _ => 1,
    }
}

/// The index of the quote that closes the string whose text starts at `from`.
fn closing_quote(body: &[u8], from: usize) -> usize {
    let mut i = from;
    while body[i] != b'"' {
        i += if body[i] == b'\\' { 2 } else { 1 };
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::{chat_body, SIZES};

    fn all(body: &[u8]) -> [Result<Extracted, FactsError>; 3] {
        let mut scratch = SimdJsonScratch::default();
        let sonic = if cfg!(debug_assertions) && std::str::from_utf8(body).is_err() {
            // sonic-rs makes `&str`s of input it has not validated yet and reports bad UTF-8
            // only at the end; its `debug_assert!` panics on the way (a release build returns
            // the error: run these tests with `--release` to check sonic-rs on them).
            Err(FactsError::InvalidJson("skipped in a debug build".into()))
        } else {
            sonic_rs_lazy(body)
        };
        [serde_json_borrowed(body), sonic, simd_json_tape(body, &mut scratch)]
    }

    fn assert_agree(body: &[u8]) {
        let [serde, sonic, simd] = all(body);
        let shown = String::from_utf8_lossy(body);
        match &serde {
            Ok(e) => {
                // The other libraries find the model and the stream flag only (the gateway also
                // walks the messages for the filters' facts): they agree on those.
                let key = |x: &Extracted| (x.facts.model.clone(), x.facts.stream, x.model_span.clone());
                assert_eq!(sonic.as_ref().map(key), Ok(key(e)), "sonic-rs on {shown}");
                assert_eq!(simd.as_ref().map(key), Ok(key(e)), "simd-json on {shown}");
            }
            // The gateway says "not UTF-8" (with the offset) where the others say "not JSON".
            Err(FactsError::InvalidJson(_) | FactsError::NotUtf8(_)) => {
                assert!(matches!(sonic, Err(FactsError::InvalidJson(_))), "sonic-rs on {shown}: {sonic:?}");
                assert!(matches!(simd, Err(FactsError::InvalidJson(_))), "simd-json on {shown}: {simd:?}");
            }
            Err(e) => {
                assert_eq!(sonic.as_ref(), Err(e), "sonic-rs on {shown}");
                assert_eq!(simd.as_ref(), Err(e), "simd-json on {shown}");
            }
        }
    }

    #[test]
    fn every_library_agrees_with_the_gateway_on_the_bench_bodies() {
        for (_, size) in SIZES {
            let body = chat_body(size);
            let ex = serde_json_borrowed(&body).unwrap();
            assert_eq!(&body[ex.model_span.clone()], br#""gpt-4o""#);
            assert_eq!(serde_json_borrowed_std_utf8(&body).as_ref(), Ok(&ex));
            assert_eq!(serde_json_borrowed_simdutf8(&body), Ok(ex));
            assert_agree(&body);
        }
    }

    #[test]
    fn every_library_agrees_on_odd_and_bad_bodies() {
        let cases: [&[u8]; 13] = [
            br#"{"messages":[{"role":"user","content":"hi \"model\""}], "model" : "gpt-4o-mini","stream":true}"#,
            br#" {"model":"a\/b\u0041","stream":null}"#,
            br#"{"nested":{"model":"no"},"model":"yes"}"#,
            br#"{"model":"x""#,
            br#"{"model":"x",}"#,
            br#"{"messages":[]}"#,
            br#"{"model":3}"#,
            br#"{"model":"x","stream":"yes"}"#,
            br#"{"model":"x","model":"y"}"#,
            b"{\"model\":\"\xff\"}",
            br#"{"model":"x","a":[1,2,{"b":[true,false,null]}],"stream":false}"#,
            br#"{"model":"x"} trailing"#,
            b"{\"model\":\"x\",\"t\":\"tab\there\"}",
        ];
        for body in cases {
            assert_agree(body);
        }
    }

    #[test]
    fn bad_utf8_in_a_skipped_string_is_refused_by_every_variant() {
        // serde_json alone skips an ignored string without checking its UTF-8; the gateway checks
        // the whole body first (simdutf8), as sonic-rs and simd-json do.
        let body = b"{\"model\":\"x\",\"user\":\"\xc3\"}";
        let [serde, sonic, simd] = all(body);
        assert_eq!(serde, Err(FactsError::NotUtf8(21)));
        assert!(matches!(sonic, Err(FactsError::InvalidJson(_))), "{sonic:?}");
        assert!(matches!(simd, Err(FactsError::InvalidJson(_))), "{simd:?}");
        assert!(matches!(serde_json_borrowed_std_utf8(body), Err(FactsError::InvalidJson(_))));
        assert!(matches!(serde_json_borrowed_simdutf8(body), Err(FactsError::InvalidJson(_))));
    }
}
