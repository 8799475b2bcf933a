//! Request facts: what the pick reads from a request body, extracted once without building a
//! tree of the body, plus where the `model` value sits so it can be spliced on forwarding.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::Deserialize;
use serde_json::value::RawValue;
use switchyard_core::{RequestFacts, RouteKind};

/// The facts and the byte range of the `model` value (quotes included) in the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extracted {
    pub facts: RequestFacts,
    pub model_span: Range<usize>,
}

/// Why a body cannot be routed; each becomes a 400 in the OpenAI error shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FactsError {
    InvalidJson(String),
    NotAnObject,
    MissingModel,
    ModelNotString,
    StreamNotBool,
}

impl fmt::Display for FactsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FactsError::InvalidJson(why) => write!(f, "request body is not valid JSON: {why}"),
            FactsError::NotAnObject => f.write_str("request body must be a JSON object"),
            FactsError::MissingModel => f.write_str("missing required parameter: 'model'"),
            FactsError::ModelNotString => f.write_str("invalid type for 'model': expected a string"),
            FactsError::StreamNotBool => f.write_str("invalid type for 'stream': expected a boolean"),
        }
    }
}

impl FactsError {
    /// The request parameter the error is about, for the OpenAI error's `param`.
    pub fn param(&self) -> Option<&'static str> {
        match self {
            FactsError::MissingModel | FactsError::ModelNotString => Some("model"),
            FactsError::StreamNotBool => Some("stream"),
            _ => None,
        }
    }
}

/// The top-level fields the pick reads; every other field is skipped (but still validated).
#[derive(Deserialize)]
struct TopLevel<'a> {
    #[serde(borrow)]
    model: Option<&'a RawValue>,
    #[serde(borrow)]
    stream: Option<&'a RawValue>,
}

pub fn extract(route: RouteKind, body: &[u8]) -> Result<Extracted, FactsError> {
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
            Err(e) => Err(FactsError::InvalidJson(e.to_string())),
            Ok(_) => Err(FactsError::NotAnObject),
        };
    }
    let top: TopLevel<'_> = serde_json::from_slice(body).map_err(|e| FactsError::InvalidJson(e.to_string()))?;
    let raw_model = top.model.ok_or(FactsError::MissingModel)?;
    let model: Cow<'_, str> = serde_json::from_str(raw_model.get()).map_err(|_| FactsError::ModelNotString)?;
    let stream = match top.stream.map(RawValue::get) {
        None | Some("null") | Some("false") => false,
        Some("true") => true,
        Some(_) => return Err(FactsError::StreamNotBool),
    };
    let start = raw_model.get().as_ptr() as usize - body.as_ptr() as usize;
    let model_span = start..start + raw_model.get().len();
    Ok(Extracted { facts: RequestFacts { stream, ..RequestFacts::new(route, model.into_owned()) }, model_span })
}

/// Appends `body` to `out` with the bytes in `span` replaced by `model_json` (an encoded JSON string).
pub fn append_with_model(out: &mut Vec<u8>, body: &[u8], span: &Range<usize>, model_json: &[u8]) {
    out.extend_from_slice(&body[..span.start]);
    out.extend_from_slice(model_json);
    out.extend_from_slice(&body[span.end..]);
}

/// The length of the body after [`append_with_model`].
pub fn rewritten_len(body: &[u8], span: &Range<usize>, model_json: &[u8]) -> usize {
    body.len() - span.len() + model_json.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chat(body: &str) -> Result<Extracted, FactsError> {
        extract(RouteKind::ChatCompletions, body.as_bytes())
    }

    #[test]
    fn finds_model_and_stream_and_splices() {
        let body = r#"{"messages":[{"role":"user","content":"hi \"model\""}], "model" : "gpt-4o-mini","stream":true}"#;
        let ex = chat(body).unwrap();
        assert_eq!(ex.facts.model, "gpt-4o-mini");
        assert!(ex.facts.stream);
        let mut out = Vec::new();
        append_with_model(&mut out, body.as_bytes(), &ex.model_span, br#""upstream-x""#);
        let expected = body.replace(r#""gpt-4o-mini""#, r#""upstream-x""#);
        assert_eq!(String::from_utf8(out).unwrap(), expected);
        assert_eq!(rewritten_len(body.as_bytes(), &ex.model_span, br#""upstream-x""#), expected.len());
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
        assert!(matches!(extract(RouteKind::Embeddings, b"{\"model\":\"\xff\"}"), Err(FactsError::InvalidJson(_))));
    }

    #[test]
    fn null_stream_is_false() {
        assert!(!chat(r#"{"model":"x","stream":null}"#).unwrap().facts.stream);
    }
}
