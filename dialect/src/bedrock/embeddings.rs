//! OpenAI embeddings ⇄ Bedrock InvokeModel bodies of Titan text and Cohere embedding models.

use crate::json_bytes;
use serde_json::{json, Map, Value};

use super::super::{no_equivalent, parse_request, Untranslatable};

const INVOKE: &str = "Bedrock embeddings models";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Titan text v1 and G1: `inputText` only.
    TitanV1,
    /// Titan text v2: `inputText`, `dimensions`, `normalize`.
    TitanV2,
    /// Cohere embed v3: `texts`, `input_type`, `truncate`.
    Cohere,
    /// Cohere embed v4: also `output_dimension`.
    CohereV4,
}

fn family(model_id: &str) -> Option<Family> {
    if model_id.contains("amazon.titan-embed-text-v2") {
        Some(Family::TitanV2)
    } else if model_id.contains("amazon.titan-embed-text-v1") || model_id.contains("amazon.titan-embed-g1-text") {
        Some(Family::TitanV1)
    } else if model_id.contains("cohere.embed-v4") {
        Some(Family::CohereV4)
    } else if model_id.contains("cohere.embed-") {
        Some(Family::Cohere)
    } else {
        None
    }
}

fn unknown_model(model_id: &str) -> String {
    format!("`{model_id}` is not a Bedrock embeddings model the gateway can call: Titan text (amazon.titan-embed-text-v1, -v2:0) and Cohere embed (cohere.embed-english-v3, -multilingual-v3, -v4:0) are")
}

/// Translates an OpenAI embeddings body into the InvokeModel body for `model_id` (a Bedrock
/// model id, inference profile or ARN), or names the first field that cannot be expressed.
pub fn embeddings_request_to_bedrock(body: &[u8], model_id: &str) -> Result<Vec<u8>, Untranslatable> {
    let request = parse_request(body)?;
    let Some(family) = family(model_id) else {
        return Err(Untranslatable::new("model", unknown_model(model_id)));
    };
    let cohere = matches!(family, Family::Cohere | Family::CohereV4);
    let mut out = Map::new();
    let mut input = None;
    for (key, value) in request {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "model" | "user" => {}
            "input" => input = Some(value),
            "encoding_format" if matches!(value.as_str(), Some("float" | "base64")) => {}
            "dimensions" => match family {
                Family::TitanV2 => {
                    out.insert("dimensions".into(), value);
                }
                Family::CohereV4 => {
                    out.insert("output_dimension".into(), value);
                }
                _ => {
                    let message = format!("`{model_id}` makes embeddings of one size only; remove `dimensions`");
                    return Err(Untranslatable::new(key, message));
                }
            },
            // Cohere's own fields, which LiteLLM passes through.
            "input_type" | "truncate" if cohere => {
                out.insert(key, value);
            }
            _ => return Err(no_equivalent(key, INVOKE)),
        }
    }
    let texts = match input {
        Some(Value::String(text)) => vec![Value::String(text)],
        Some(Value::Array(items)) if !items.is_empty() => {
            if let Some(j) = items.iter().position(|item| !item.is_string()) {
                let message = "Bedrock embeddings models take text, not token arrays";
                return Err(Untranslatable::new(format!("input[{j}]"), message));
            }
            items
        }
        _ => return Err(Untranslatable::new("input", "`input` must be a string or a non-empty array of strings")),
    };
    if cohere {
        out.entry("input_type").or_insert_with(|| "search_document".into());
        out.insert("texts".into(), Value::Array(texts));
    } else {
        if texts.len() > 1 {
            let message = format!("Titan embeds one text per call and the gateway makes one call per request: send the {} inputs as separate requests", texts.len());
            return Err(Untranslatable::new("input", message));
        }
        out.insert("inputText".into(), texts.into_iter().next().unwrap_or_default());
    }
    Ok(json_bytes(&Value::Object(out)))
}

/// Translates an InvokeModel embeddings answer into an OpenAI embeddings answer that names
/// `model` (what the client asked for), embeddings as float arrays.
pub fn bedrock_embeddings_to_openai(body: &[u8], model: &str, model_id: &str) -> Result<Vec<u8>, String> {
    bedrock_embeddings_to_openai_with(body, model, model_id, false, None)
}

/// The same with the embeddings as OpenAI's base64 (little-endian f32) when the client asked for
/// `encoding_format: base64`, and the prompt token count from Bedrock's
/// `x-amzn-bedrock-input-token-count` header when known (Cohere's body has none; it wins over a
/// body's count).
pub fn bedrock_embeddings_to_openai_with(
    body: &[u8],
    model: &str,
    model_id: &str,
    base64: bool,
    header_tokens: Option<u64>,
) -> Result<Vec<u8>, String> {
    let family = family(model_id).ok_or_else(|| unknown_model(model_id))?;
    let mut response: Value =
        serde_json::from_slice(body).map_err(|e| format!("the upstream answer is not valid JSON: {e}"))?;
    let (vectors, body_tokens) = match family {
        Family::TitanV1 | Family::TitanV2 => {
            let vector = match response.get_mut("embedding").map(Value::take) {
                Some(vector @ Value::Array(_)) => vector,
                _ => response.pointer_mut("/embeddingsByType/float").map(Value::take).unwrap_or(Value::Null),
            };
            (vec![vector], response.get("inputTextTokenCount").and_then(Value::as_u64))
        }
        Family::Cohere | Family::CohereV4 => {
            let list = match response.get_mut("embeddings").map(Value::take) {
                Some(Value::Object(mut by_type)) => by_type.remove("float").unwrap_or(Value::Null),
                Some(list) => list,
                None => Value::Null,
            };
            let Value::Array(list) = list else {
                return Err("the upstream answer has no float embeddings".to_string());
            };
            (list, None)
        }
    };
    let mut data = Vec::with_capacity(vectors.len());
    for (index, vector) in vectors.into_iter().enumerate() {
        let Value::Array(numbers) = vector else {
            return Err("the upstream answer has no float embedding".to_string());
        };
        let embedding = if base64 { crate::embedding_base64(&numbers)? } else { Value::Array(numbers) };
        data.push(json!({"object": "embedding", "index": index, "embedding": embedding}));
    }
    let tokens = header_tokens.or(body_tokens).unwrap_or(0);
    let out = json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    });
    Ok(json_bytes(&out))
}

#[cfg(test)]
#[path = "embeddings_tests.rs"]
mod tests;
