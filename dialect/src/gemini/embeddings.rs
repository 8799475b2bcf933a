//! OpenAI embeddings ⇄ the Gemini API's `batchEmbedContents`.

use crate::json_bytes;
use serde_json::{json, Value};

use super::super::{no_equivalent, parse_request, Untranslatable};
use super::mapping::GEMINI;

/// Translates an OpenAI embeddings request into a `models/{model}:batchEmbedContents` body, one
/// request per input text, or names the field Gemini cannot take. `model` is the upstream model
/// (`models/` is added unless it is there).
pub fn embeddings_request_to_gemini(body: &[u8], model: &str) -> Result<Vec<u8>, Untranslatable> {
    let request = parse_request(body)?;
    let mut texts = Vec::new();
    let mut dimensions = None;
    for (key, value) in request {
        if value.is_null() {
            continue;
        }
        match key.as_str() {
            "model" | "user" => {}
            "input" => texts = input_texts(value)?,
            "dimensions" if value.is_u64() => dimensions = Some(value),
            "dimensions" => return Err(Untranslatable::new(key, "`dimensions` must be a positive integer")),
            "encoding_format" if value == "float" || value == "base64" => {}
            _ => return Err(no_equivalent(key, GEMINI)),
        }
    }
    if texts.is_empty() {
        return Err(Untranslatable::new("input", "`input` must be a string or a non-empty list of strings"));
    }
    let model = if model.starts_with("models/") { model.to_string() } else { format!("models/{model}") };
    let requests: Vec<Value> = texts
        .into_iter()
        .map(|text| {
            let mut request = json!({"model": model, "content": {"parts": [{"text": text}]}});
            if let Some(dimensions) = &dimensions {
                request["outputDimensionality"] = dimensions.clone();
            }
            request
        })
        .collect();
    Ok(json_bytes(&json!({"requests": requests})))
}

/// `input` as texts: a string or a list of strings. Token arrays have no Gemini equivalent.
fn input_texts(input: Value) -> Result<Vec<Value>, Untranslatable> {
    match input {
        text @ Value::String(_) => Ok(vec![text]),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if !item.is_string() {
                    let message = "Gemini embeds text only: token arrays cannot be translated; send the text";
                    return Err(Untranslatable::new(format!("input[{i}]"), message));
                }
            }
            Ok(items)
        }
        _ => Err(Untranslatable::new("input", "`input` must be a string or a list of strings")),
    }
}

/// Translates a `batchEmbedContents` answer into OpenAI's embeddings list naming `model`. Gemini
/// counts no tokens for embeddings unless it sends `usageMetadata`: `usage` is its
/// `promptTokenCount` / `totalTokenCount` when present, else zeros.
pub fn gemini_embeddings_to_openai(body: &[u8], model: &str) -> Result<Vec<u8>, String> {
    gemini_embeddings_to_openai_with(body, model, false)
}

/// The same with the embeddings as OpenAI's base64 (little-endian f32) when the client asked for
/// `encoding_format: base64` (the `openai` SDK's default).
pub fn gemini_embeddings_to_openai_with(body: &[u8], model: &str, base64: bool) -> Result<Vec<u8>, String> {
    let response: Value =
        serde_json::from_slice(body).map_err(|e| format!("the upstream answer is not valid JSON: {e}"))?;
    let Some(embeddings) = response.get("embeddings").and_then(Value::as_array) else {
        return Err("the upstream answer has no embeddings".to_string());
    };
    let mut data = Vec::with_capacity(embeddings.len());
    for (i, embedding) in embeddings.iter().enumerate() {
        let Some(values) = embedding.get("values").filter(|v| v.is_array()) else {
            return Err(format!("the upstream embedding {i} has no values"));
        };
        let values = match (base64, values.as_array()) {
            (true, Some(numbers)) => crate::embedding_base64(numbers)?,
            _ => values.clone(),
        };
        data.push(json!({"object": "embedding", "index": i, "embedding": values}));
    }
    let meta = response.get("usageMetadata");
    let prompt = meta.and_then(|m| m.get("promptTokenCount")).and_then(Value::as_u64).unwrap_or(0);
    let total = meta.and_then(|m| m.get("totalTokenCount")).and_then(Value::as_u64).unwrap_or(prompt);
    let out = json!({
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": prompt, "total_tokens": total},
    });
    Ok(json_bytes(&out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemini(request: Value, model: &str) -> Value {
        let bytes = embeddings_request_to_gemini(request.to_string().as_bytes(), model).unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    fn refused(request: Value) -> String {
        embeddings_request_to_gemini(request.to_string().as_bytes(), "m").unwrap_err().field
    }

    #[test]
    fn a_string_or_a_list_of_strings() {
        let out =
            gemini(json!({"model": "text-embedding-3-small", "input": "hello", "user": "u"}), "gemini-embedding-001");
        assert_eq!(
            out,
            json!({"requests": [{"model": "models/gemini-embedding-001", "content": {"parts": [{"text": "hello"}]}}]})
        );
        let out = gemini(
            json!({"input": ["a", "b"], "dimensions": 768, "encoding_format": "float"}),
            "models/text-embedding-004",
        );
        let requests = out["requests"].as_array().unwrap();
        assert_eq!(requests.len(), 2);
        assert_eq!(requests[1]["content"]["parts"][0]["text"], "b");
        assert_eq!(requests[1]["model"], "models/text-embedding-004");
        assert_eq!(requests[0]["outputDimensionality"], 768);
    }

    #[test]
    fn refusals_name_their_field() {
        assert_eq!(refused(json!({"input": [1, 2, 3]})), "input[0]");
        assert_eq!(refused(json!({"input": [[1, 2]]})), "input[0]");
        assert_eq!(refused(json!({"input": ["a", 5]})), "input[1]");
        assert_eq!(refused(json!({"input": []})), "input");
        assert_eq!(refused(json!({"input": 7})), "input");
        assert_eq!(refused(json!({"dimensions": 10})), "input");
        assert_eq!(refused(json!({"input": "a", "encoding_format": "int8"})), "encoding_format");
        assert_eq!(refused(json!({"input": "a", "dimensions": "big"})), "dimensions");
        assert_eq!(refused(json!({"input": "a", "task_type": "x"})), "task_type");
        assert_eq!(embeddings_request_to_gemini(b"[]", "m").unwrap_err().field, "body");
    }

    #[test]
    fn answers_become_an_openai_list() {
        let body = br#"{"embeddings":[{"values":[0.1,-0.2]},{"values":[0.3,0.4]}]}"#;
        let out: Value = serde_json::from_slice(&gemini_embeddings_to_openai(body, "emb").unwrap()).unwrap();
        assert_eq!(
            out,
            json!({"object": "list", "model": "emb", "usage": {"prompt_tokens": 0, "total_tokens": 0}, "data": [
                {"object": "embedding", "index": 0, "embedding": [0.1, -0.2]},
                {"object": "embedding", "index": 1, "embedding": [0.3, 0.4]}]})
        );
        let counted =
            br#"{"embeddings":[{"values":[1.0]}],"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4}}"#;
        let out: Value = serde_json::from_slice(&gemini_embeddings_to_openai(counted, "emb").unwrap()).unwrap();
        assert_eq!(out["usage"], json!({"prompt_tokens": 4, "total_tokens": 4}));
        assert!(gemini_embeddings_to_openai(b"{}", "m").is_err());
        assert!(gemini_embeddings_to_openai(br#"{"embeddings":[{}]}"#, "m").is_err());
        assert!(gemini_embeddings_to_openai(b"nope", "m").is_err());
    }
}
